//! zstd outputs in the seekable format (docs/cli.md#compression): every `.zst` output (`-o`,
//! `--rejects`, `--valid-out`, `--compress zstd` to standard output, `batch` shards, `s3://`
//! objects) is independent frames of at most `--zstd-frame` of input and a seek table at the
//! end; `zstd -t`, `zstd -dc` and `pzstd -d` read it as the plain output, and so does the tool.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{bin, gen_lines, run, scratch, stderr, tool_or_skip};
use crate::hostile::outputs::names;

/// The seekable format's magic, at the very end of a file.
const SEEKABLE_MAGIC: u32 = 0x8F92_EAB1;
/// The skippable frame magic the seek table's frame starts with.
const SEEK_TABLE_FRAME_MAGIC: u32 = 0x184D_2A5E;

fn le32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

/// The frames a seekable file's table lists (compressed size, decompressed size), after checking
/// the table: its footer, its skippable frame, and that the frames it lists fill the file up to
/// it exactly, each a zstd frame.
fn seek_table(bytes: &[u8], what: &str) -> Vec<(u32, u32)> {
    assert!(bytes.len() >= 17, "{what}: {} bytes", bytes.len());
    let footer = bytes.len() - 9;
    assert_eq!(
        le32(bytes, footer + 5),
        SEEKABLE_MAGIC,
        "{what}: no seekable magic"
    );
    let frames = le32(bytes, footer) as usize;
    let descriptor = bytes[footer + 4];
    assert_eq!(descriptor & 0x7F, 0, "{what}: reserved bits set");
    let entry = if descriptor & 0x80 != 0 { 12 } else { 8 };
    let table_len = 8 + frames * entry + 9;
    let table = bytes.len() - table_len;
    assert_eq!(
        le32(bytes, table),
        SEEK_TABLE_FRAME_MAGIC,
        "{what}: no skippable frame"
    );
    assert_eq!(
        le32(bytes, table + 4) as usize,
        table_len - 8,
        "{what}: frame size"
    );
    let mut at = 0;
    let listed: Vec<(u32, u32)> = (0..frames)
        .map(|i| {
            let e = table + 8 + i * entry;
            let (c, d) = (le32(bytes, e), le32(bytes, e + 4));
            assert_eq!(&bytes[at..at + 4], b"\x28\xb5\x2f\xfd", "{what}: frame {i}");
            at += c as usize;
            (c, d)
        })
        .collect();
    assert_eq!(at, table, "{what}: the frames do not reach the table");
    listed
}

/// `bytes` checked by every zstd reader there is: `zstd -t`, `zstd -dc` and `pzstd -dc` give
/// `plain`, and the file is seekable with frames of at most `frame` bytes of input.
fn readers_agree(dir: &Path, name: &str, bytes: &[u8], plain: &[u8], frame: u32) {
    let frames = seek_table(bytes, name);
    let total: u64 = frames.iter().map(|&(_, d)| u64::from(d)).sum();
    assert_eq!(total, plain.len() as u64, "{name}");
    assert!(
        frames.iter().all(|&(_, d)| d <= frame),
        "{name}: {frames:?}"
    );
    if plain.len() > frame as usize {
        assert!(frames.len() > 1, "{name}: {} frames", frames.len());
    }
    assert_eq!(zstd::decode_all(bytes).unwrap(), plain, "{name}");
    let path = dir.join(format!("check-{name}"));
    fs::write(&path, bytes).unwrap();
    if let Some(zstd) = tool_or_skip(&["zstd"], "reading seekable outputs with the zstd command") {
        let tested = Command::new(&zstd).arg("-qt").arg(&path).output().unwrap();
        assert!(tested.status.success(), "{name}: {}", stderr(&tested));
        let decoded = Command::new(&zstd).arg("-qdc").arg(&path).output().unwrap();
        assert!(decoded.status.success(), "{name}: {}", stderr(&decoded));
        assert!(decoded.stdout == plain, "{name}: zstd -dc differs");
    }
    if let Some(pzstd) = tool_or_skip(&["pzstd"], "reading seekable outputs with pzstd") {
        let decoded = Command::new(&pzstd)
            .args(["-d", "-c", "-q", "-p", "2"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(decoded.status.success(), "{name}: {}", stderr(&decoded));
        assert!(decoded.stdout == plain, "{name}: pzstd -d differs");
    }
    fs::remove_file(&path).unwrap();
}

/// About 1.3 MB of lines, a tenth of them rejected: more than a frame of 64 KiB in every
/// output.
fn corpus() -> Vec<u8> {
    gen_lines(400, 43, None, 0.1)
}

fn runs(args: &[&str], dir: &Path) -> std::process::Output {
    bin()
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn every_zst_output_is_seekable_and_read_by_zstd_pzstd_and_the_tool() {
    let dir = scratch("seekable-outputs");
    fs::write(dir.join("in.jsonl"), corpus()).unwrap();
    let plain = runs(
        &[
            "validate",
            "-q",
            "in.jsonl",
            "-o",
            "d.jsonl",
            "--rejects",
            "r.jsonl",
        ],
        &dir,
    );
    assert_eq!(plain.status.code(), Some(1), "{}", stderr(&plain));
    let plain_valid = runs(
        &[
            "validate",
            "-q",
            "in.jsonl",
            "--valid-out",
            "-",
            "-o",
            "/dev/null",
        ],
        &dir,
    );
    let zst = runs(
        &[
            "validate",
            "-q",
            "in.jsonl",
            "--zstd-frame",
            "64KiB",
            "-o",
            "d.jsonl.zst",
            "--rejects",
            "r.jsonl.zst",
            "--valid-out",
            "v.jsonl.zst",
            "--summary",
            "s.json.zst",
        ],
        &dir,
    );
    assert_eq!(zst.status.code(), Some(1), "{}", stderr(&zst));
    for (zst, plain) in [
        ("d.jsonl.zst", fs::read(dir.join("d.jsonl")).unwrap()),
        ("r.jsonl.zst", fs::read(dir.join("r.jsonl")).unwrap()),
        ("v.jsonl.zst", plain_valid.stdout.clone()),
    ] {
        readers_agree(
            &dir,
            zst,
            &fs::read(dir.join(zst)).unwrap(),
            &plain,
            64 << 10,
        );
    }
    // A summary is smaller than a frame: one frame, and its table.
    let summary = fs::read(dir.join("s.json.zst")).unwrap();
    assert_eq!(seek_table(&summary, "summary").len(), 1);
    // `--compress zstd` to standard output, and `migrate` with its `--warnings-out`.
    let piped = runs(
        &[
            "validate",
            "-q",
            "in.jsonl",
            "--compress",
            "zstd",
            "--zstd-frame",
            "65536",
        ],
        &dir,
    );
    // (Diagnostics on standard output are text, by default.)
    let text = runs(&["validate", "-q", "in.jsonl"], &dir);
    readers_agree(&dir, "stdout", &piped.stdout, &text.stdout, 64 << 10);
    let migrated = runs(
        &[
            "migrate",
            "-q",
            "v.jsonl.zst",
            "--zstd-frame",
            "64KiB",
            "-o",
            "m.jsonl.zst",
        ],
        &dir,
    );
    assert_eq!(migrated.status.code(), Some(0), "{}", stderr(&migrated));
    let migrated_plain = runs(&["migrate", "-q", "v.jsonl.zst"], &dir);
    readers_agree(
        &dir,
        "m",
        &fs::read(dir.join("m.jsonl.zst")).unwrap(),
        &migrated_plain.stdout,
        64 << 10,
    );

    // The tool reads its own seekable outputs, the table skipped, for every command that reads
    // envelopes: the same output as from the plain file.
    fs::write(dir.join("v.jsonl"), &plain_valid.stdout).unwrap();
    let valid = String::from_utf8(plain_valid.stdout.clone()).unwrap();
    let id_at = valid.find(r#""id":""#).unwrap() + 6;
    let id = &valid[id_at..id_at + 26];
    let commands: [&[&str]; 9] = [
        &["validate", "-q", "--valid-out", "-", "-o", "/dev/null"],
        &["migrate", "-q"],
        &["filter", "-q", "--limit", "50"],
        &["redrive", "-q", "--at", "2025-01-01T00:00:00.000Z"],
        &["dedupe", "-q"],
        &["sample", "-q", "--seed", "3", "20"],
        &["stats", "-q", "--format", "json"],
        &["export", "-q", "--format", "csv"],
        &["show", id],
    ];
    for command in commands {
        let from = |input: &str| {
            let mut args = command.to_vec();
            args.push(input);
            runs(&args, &dir)
        };
        let (zst, plain) = (from("v.jsonl.zst"), from("v.jsonl"));
        assert_eq!(
            zst.status.code(),
            plain.status.code(),
            "{command:?}: {}",
            stderr(&zst)
        );
        assert!(
            zst.stdout == plain.stdout,
            "{command:?}: the outputs differ"
        );
        assert!(!plain.stdout.is_empty(), "{command:?}");
    }
}

#[test]
fn gen_writes_a_seekable_zst() {
    let dir = scratch("seekable-gen");
    let args = [
        "gen",
        "-q",
        "--count",
        "400",
        "--seed",
        "43",
        "--invalid-rate",
        "0.1",
    ];
    let plain = runs(&args, &dir);
    let mut zst = args.to_vec();
    zst.extend(["--zstd-frame", "64KiB", "-o", "g.jsonl.zst"]);
    let written = runs(&zst, &dir);
    assert_eq!(written.status.code(), Some(0), "{}", stderr(&written));
    let bytes = fs::read(dir.join("g.jsonl.zst")).unwrap();
    readers_agree(&dir, "gen", &bytes, &plain.stdout, 64 << 10);
    zst.truncate(zst.len() - 4);
    zst.extend(["--zstd-frame", "0", "-o", "g.jsonl.zst"]);
    let refused = runs(&zst, &dir);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains("--zstd-frame"),
        "{}",
        stderr(&refused)
    );
}

#[test]
fn the_bytes_are_the_same_for_any_job_count() {
    let dir = scratch("seekable-jobs");
    fs::write(dir.join("in.jsonl"), corpus()).unwrap();
    let written = |jobs: &str| {
        let out = runs(
            &[
                "validate",
                "-q",
                "-j",
                jobs,
                "in.jsonl",
                "--zstd-frame",
                "64KiB",
                "-o",
                "/dev/null",
                "--valid-out",
                "v.zst",
            ],
            &dir,
        );
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        fs::read(dir.join("v.zst")).unwrap()
    };
    let one = written("1");
    assert!(seek_table(&one, "-j1").len() > 2);
    assert!(written("2") == one);
    assert!(written("7") == one);
}

#[test]
fn batch_shards_are_seekable() {
    let dir = scratch("seekable-batch");
    let input = dir.join("in");
    fs::create_dir_all(&input).unwrap();
    let lines = corpus();
    let (a, b) = lines.split_at(lines.len() / 2);
    let cut = a.iter().rposition(|&c| c == b'\n').unwrap() + 1;
    fs::write(input.join("a.jsonl"), &lines[..cut]).unwrap();
    fs::write(input.join("b.jsonl"), &lines[cut..]).unwrap();
    let _ = b;
    let out = runs(
        &[
            "batch",
            "validate",
            "-q",
            "--compress",
            "zstd",
            "--zstd-frame",
            "64KiB",
            "in",
            "--out",
            "out",
        ],
        &dir,
    );
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
    let mut shards: Vec<_> = fs::read_dir(dir.join("out"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".zst"))
        .collect();
    shards.sort();
    assert!(shards.len() >= 4, "{shards:?}");
    let mut several = false;
    for shard in &shards {
        let bytes = fs::read(shard).unwrap();
        let plain = zstd::decode_all(&bytes[..]).unwrap();
        several |= seek_table(&bytes, "shard").len() > 1;
        let name = shard.file_name().unwrap().to_str().unwrap();
        readers_agree(&dir, name, &bytes, &plain, 64 << 10);
    }
    assert!(several, "no shard output of several frames");
}

#[test]
fn an_empty_output_is_a_seek_table_of_no_frame_that_every_reader_takes() {
    let dir = scratch("seekable-empty");
    fs::write(dir.join("empty.jsonl"), b"").unwrap();
    let out = runs(
        &[
            "validate",
            "-q",
            "empty.jsonl",
            "-o",
            "d.zst",
            "--valid-out",
            "v.zst",
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for name in ["d.zst", "v.zst"] {
        let bytes = fs::read(dir.join(name)).unwrap();
        assert_eq!(bytes.len(), 17, "{name}");
        assert!(seek_table(&bytes, name).is_empty());
        readers_agree(&dir, name, &bytes, b"", 4 << 20);
    }
    for command in ["validate", "migrate", "filter", "stats"] {
        let read = runs(&[command, "-q", "v.zst"], &dir);
        assert_eq!(read.status.code(), Some(0), "{command}: {}", stderr(&read));
    }
    let read = runs(&["validate", "v.zst"], &dir);
    assert!(stderr(&read).contains("0 lines"), "{}", stderr(&read));
}

#[test]
fn zstd_frame_values_at_their_edges() {
    for bad in [
        "0",
        "-1",
        "1",
        "65535",
        "63KiB",
        "1GiB1",
        "1073741825",
        "2GiB",
        "1e30",
        "NaN",
        "inf",
        "",
        "4 MB MB",
        "18446744073709551616",
        "-4MiB",
        "4XB",
    ] {
        let out = run(
            &["validate", "-q", "--zstd-frame", bad, "-o", "/dev/null"],
            b"",
        );
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(
            stderr(&out).contains("--zstd-frame"),
            "{bad:?}: {}",
            stderr(&out)
        );
    }
    for good in [
        "64KiB",
        "65536",
        "1MB",
        "1.5MiB",
        "4mib",
        "1GiB",
        "1073741824",
    ] {
        let out = run(
            &["validate", "-q", "--zstd-frame", good, "--compress", "zstd"],
            b"",
        );
        assert_eq!(out.status.code(), Some(0), "{good:?}: {}", stderr(&out));
        assert_eq!(out.stdout.len(), 17, "{good:?}");
    }
}

#[test]
fn a_failing_zst_output_is_exit_2_and_leaves_every_output_as_it_was() {
    let dir = scratch("seekable-full");
    fs::write(dir.join("in.jsonl"), corpus()).unwrap();
    std::os::unix::fs::symlink("/dev/full", dir.join("full.zst")).unwrap();
    fs::write(dir.join("d.zst"), "previous\n").unwrap();
    for flag in ["--rejects", "--valid-out", "-o"] {
        let mut args = vec!["validate", "-q", "in.jsonl", "--zstd-frame", "64KiB"];
        if flag != "-o" {
            args.extend(["-o", "d.zst"]);
        }
        args.extend([flag, "full.zst"]);
        let out = runs(&args, &dir);
        assert_eq!(out.status.code(), Some(2), "{flag}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("full.zst: write failed"),
            "{flag}: {}",
            stderr(&out)
        );
        assert_eq!(
            fs::read(dir.join("d.zst")).unwrap(),
            b"previous\n",
            "{flag}"
        );
        assert_eq!(names(&dir), ["d.zst", "full.zst", "in.jsonl"], "{flag}");
    }
}

#[test]
fn a_signal_while_frames_are_compressed_leaves_no_temporary_file() {
    let dir = scratch("seekable-signal");
    fs::write(dir.join("v.zst"), "previous\n").unwrap();
    let mut child = bin()
        .current_dir(&dir)
        .args([
            "validate",
            "-q",
            "-j2",
            "--zstd-frame",
            "64KiB",
            "-o",
            "/dev/null",
            "--valid-out",
            "v.zst",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // Several frames handed to the compressing threads, the input still open.
    std::io::Write::write_all(&mut stdin, &corpus()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while names(&dir).len() < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(200));
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = child.wait().unwrap();
    drop(stdin);
    assert_eq!(status.code(), Some(143));
    assert_eq!(names(&dir), ["v.zst"]);
    assert_eq!(fs::read(dir.join("v.zst")).unwrap(), b"previous\n");
}

#[cfg(feature = "s3")]
#[test]
fn s3_outputs_are_seekable() {
    let Some(s3) = crate::common::s3::server() else {
        return;
    };
    let bucket = s3.bucket("seekable");
    let dir = scratch("seekable-s3");
    fs::write(dir.join("in.jsonl"), corpus()).unwrap();
    let remote = format!("s3://{bucket}/v.jsonl.zst");
    let out = s3
        .bin()
        .current_dir(&dir)
        .args([
            "validate",
            "-q",
            "in.jsonl",
            "--zstd-frame",
            "64KiB",
            "-o",
            "/dev/null",
            "--valid-out",
            &remote,
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let plain = runs(
        &[
            "validate",
            "-q",
            "in.jsonl",
            "--valid-out",
            "-",
            "-o",
            "/dev/null",
        ],
        &dir,
    );
    let object = s3.get(&bucket, "v.jsonl.zst").unwrap();
    readers_agree(&dir, "s3", &object, &plain.stdout, 64 << 10);
    // And read back from the store by the tool.
    let back = s3
        .bin()
        .args([
            "validate",
            "-q",
            &remote,
            "--valid-out",
            "-",
            "-o",
            "/dev/null",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(back.status.code(), Some(0), "{}", stderr(&back));
    assert!(back.stdout == plain.stdout);
}
