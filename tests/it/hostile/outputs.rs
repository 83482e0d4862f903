//! Hostile cases: the outputs. Aliases, failed writes on any output (standard error
//! included), all-or-nothing commits, signals, resource limits, every output following its
//! name, and inputs in formats the tool cannot read.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use super::common::{scratch, stderr};
use super::{release, VALID};

/// A rejected line, then a valid one.
fn two_lines() -> String {
    format!(
        "{}\n{}\n",
        VALID.trim_end().replace("billing.invoices", "Billing"),
        VALID.trim_end()
    )
}

/// Runs the release binary in `dir` with `args`, `input` on standard input, standard output
/// and error as given (piped when `None`).
fn run_in(
    dir: &Path,
    args: &[&str],
    input: &[u8],
    stdout: Option<Stdio>,
    stderr: Option<Stdio>,
) -> Output {
    let mut child = release()
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(stdout.unwrap_or_else(Stdio::piped))
        .stderr(stderr.unwrap_or_else(Stdio::piped))
        .spawn()
        .expect("the binary runs");
    let mut stdin = child.stdin.take().unwrap();
    let bytes = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&bytes);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn append_to(path: &Path) -> Stdio {
    Stdio::from(File::options().append(true).open(path).unwrap())
}

fn full() -> Stdio {
    Stdio::from(File::options().write(true).open("/dev/full").unwrap())
}

/// The names in `dir`, sorted (`endings.rs` too).
pub(crate) fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The temporary files of outputs in `dir`.
pub(crate) fn temporaries(dir: &Path) -> Vec<String> {
    names(dir)
        .into_iter()
        .filter(|n| n.contains(".rdq-tmp."))
        .collect()
}

// 1. Outputs that alias each other or an input.

#[test]
fn an_output_that_is_an_input_is_refused_before_anything_is_written() {
    let dir = scratch("alias-input");
    let input = two_lines();
    fs::write(dir.join("x.jsonl"), &input).unwrap();
    fs::hard_link(dir.join("x.jsonl"), dir.join("hard.jsonl")).unwrap();
    std::os::unix::fs::symlink("x.jsonl", dir.join("soft.jsonl")).unwrap();
    // `filter x.jsonl >> x.jsonl` looped until the disk was full.
    for command in ["validate", "filter", "migrate", "redrive", "stats"] {
        let out = run_in(
            &dir,
            &[command, "x.jsonl"],
            b"",
            Some(append_to(&dir.join("x.jsonl"))),
            None,
        );
        assert_eq!(out.status.code(), Some(2), "{command}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("input file is output file: x.jsonl (input) and standard output"),
            "{command}: {}",
            stderr(&out)
        );
    }
    let show = run_in(
        &dir,
        &["show", "01HWT0ZNGCFXWKCPQ0THKX1R98", "x.jsonl"],
        b"",
        Some(append_to(&dir.join("x.jsonl"))),
        None,
    );
    assert_eq!(show.status.code(), Some(2), "{}", stderr(&show));
    // Standard input that is the output file.
    let child = release()
        .current_dir(&dir)
        .args(["validate", "--valid-out", "hard.jsonl"])
        .stdin(File::open(dir.join("x.jsonl")).unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("standard input (input) and hard.jsonl (--valid-out)"));
    // An output flag naming the input through ./, a symlink or a hard link.
    for (flag, name) in [
        ("-o", "./x.jsonl"),
        ("--rejects", "soft.jsonl"),
        ("--summary", "hard.jsonl"),
        ("--valid-out", "x.jsonl"),
    ] {
        let out = run_in(&dir, &["validate", "x.jsonl", flag, name], b"", None, None);
        assert_eq!(out.status.code(), Some(2), "{flag} {name}");
        let expected = format!("input file is output file: x.jsonl (input) and {name} ({flag})");
        assert!(stderr(&out).contains(&expected), "{}", stderr(&out));
    }
    let warnings = run_in(
        &dir,
        &[
            "migrate",
            "x.jsonl",
            "--to",
            "1",
            "--warnings-out",
            "hard.jsonl",
        ],
        b"",
        None,
        None,
    );
    assert_eq!(warnings.status.code(), Some(2));
    assert_eq!(fs::read_to_string(dir.join("x.jsonl")).unwrap(), input);
    assert_eq!(names(&dir), ["hard.jsonl", "soft.jsonl", "x.jsonl"]);
}

#[test]
fn two_outputs_naming_one_file_are_refused_and_devices_are_not() {
    let dir = scratch("alias-outputs");
    fs::write(dir.join("old.jsonl"), "old\n").unwrap();
    fs::hard_link(dir.join("old.jsonl"), dir.join("link.jsonl")).unwrap();
    let cases: [&[&str]; 4] = [
        &["validate", "-o", "new.jsonl", "--rejects", "./new.jsonl"],
        &["validate", "-o", "old.jsonl", "--summary", "link.jsonl"],
        &["filter", "--rejects", "r.jsonl", "--summary", "r.jsonl"],
        &["validate", "--valid-out", "v.jsonl", "-o", "./v.jsonl"],
    ];
    for args in cases {
        let out = run_in(&dir, args, two_lines().as_bytes(), None, None);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&out).contains("two outputs are the same file"),
            "{}",
            stderr(&out)
        );
    }
    assert_eq!(names(&dir), ["link.jsonl", "old.jsonl"]);
    assert_eq!(fs::read_to_string(dir.join("old.jsonl")).unwrap(), "old\n");
    // A device may be named any number of times.
    let args = [
        "validate",
        "-o",
        "/dev/null",
        "--rejects",
        "/dev/null",
        "--summary",
        "/dev/null",
    ];
    let out = run_in(&dir, &args, two_lines().as_bytes(), None, None);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

// 2. A write that fails on any output or on standard error.

#[test]
fn a_full_or_closed_standard_error_is_exit_2_and_never_a_panic() {
    let dir = scratch("stderr-full");
    fs::write(dir.join("out.jsonl"), "previous\n").unwrap();
    fs::write(dir.join("summary.json"), "{}\n").unwrap();
    let input = two_lines();
    // A line with warnings (its ID's time and created_at differ), for --warnings.
    let warned = VALID.trim_end().replace(
        r#""created_at":"2024-05-01T12:00:00.000Z""#,
        r#""created_at":"2024-05-01T12:00:05.000Z""#,
    );
    let input = format!("{input}{warned}\n");
    let runs: [&[&str]; 4] = [
        // The closing summary line.
        &["validate", "-o", "out.jsonl", "--summary", "summary.json"],
        // --warnings, during the run.
        &["migrate", "--warnings", "-q", "-o", "out.jsonl"],
        // The one line of show when nothing matched.
        &["show", "01HWT0ZNGCFXWKCPQ0THKX1R99"],
        &["stats", "-o", "out.jsonl"],
    ];
    for args in runs {
        let out = run_in(&dir, args, input.as_bytes(), None, Some(full()));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
    // A usage error's message on a full standard error is still status 2, not a panic.
    let out = run_in(
        &dir,
        &["validate", "--no-such-flag"],
        b"",
        None,
        Some(full()),
    );
    assert_eq!(out.status.code(), Some(2));
    // A closed one (the reading end of its pipe gone).
    let mut child = release()
        .current_dir(&dir)
        .args(["validate", "-o", "out.jsonl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(2));
    assert_eq!(
        fs::read_to_string(dir.join("out.jsonl")).unwrap(),
        "previous\n"
    );
    assert_eq!(
        fs::read_to_string(dir.join("summary.json")).unwrap(),
        "{}\n"
    );
    assert!(temporaries(&dir).is_empty());
}

#[test]
fn a_full_device_on_any_output_is_exit_2_naming_it() {
    let dir = scratch("full-any");
    let input = two_lines();
    for flag in ["--rejects", "--summary", "--valid-out"] {
        let out = run_in(
            &dir,
            &["validate", "-q", "-o", "/dev/null", flag, "/dev/full"],
            input.as_bytes(),
            None,
            None,
        );
        assert_eq!(out.status.code(), Some(2), "{flag}");
        assert!(
            stderr(&out).contains("/dev/full: write failed"),
            "{}",
            stderr(&out)
        );
    }
    let warned = VALID.trim_end().replace(
        r#""created_at":"2024-05-01T12:00:00.000Z""#,
        r#""created_at":"2024-05-01T12:00:05.000Z""#,
    );
    let migrate = ["migrate", "-o", "/dev/null", "--warnings-out", "/dev/full"];
    let out = run_in(&dir, &migrate, warned.as_bytes(), None, None);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let to_stdout: [&[&str]; 6] = [
        &["gen", "--count", "10"],
        &["schema"],
        &["man"],
        &["completions", "bash"],
        &["--help"],
        &["--version"],
    ];
    for args in to_stdout {
        let out = run_in(&dir, args, b"", Some(full()), None);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    }
    for args in [
        &["gen", "--count", "10", "-o", "/dev/full"][..],
        &["schema", "-o", "/dev/full"],
    ] {
        let out = run_in(&dir, args, b"", None, None);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn a_fifo_output_whose_reader_goes_away_is_exit_2_unlike_standard_output() {
    let dir = scratch("fifo");
    let fifo = dir.join("out.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    // The reader takes a few bytes, then closes its end.
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut f = File::open(fifo).unwrap();
            let mut first = [0u8; 16];
            f.read_exact(&mut first).unwrap();
        })
    };
    let input = two_lines().repeat(5_000);
    let out = run_in(
        &dir,
        &["validate", "-q", "--rejects", fifo.to_str().unwrap()],
        input.as_bytes(),
        Some(Stdio::null()),
        None,
    );
    reader.join().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("out.fifo: write failed"),
        "{}",
        stderr(&out)
    );
}

// 3. All or nothing across outputs.

#[test]
fn a_run_that_fails_late_leaves_every_output_as_it_was() {
    let dir = scratch("all-or-nothing");
    let before = [
        ("out.jsonl", "old out\n"),
        ("rejects.jsonl", "old rejects\n"),
        ("valid.jsonl", "old valid\n"),
    ];
    for (name, text) in before {
        fs::write(dir.join(name), text).unwrap();
    }
    let outputs = [
        "-o",
        "out.jsonl",
        "--rejects",
        "rejects.jsonl",
        "--valid-out",
        "valid.jsonl",
    ];
    // The summary (the last output) fails, after the others are complete.
    let mut args = vec!["validate"];
    args.extend(outputs);
    args.extend(["--summary", "/dev/full"]);
    let out = run_in(&dir, &args, two_lines().as_bytes(), None, None);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // The closing line on standard error fails, after every output is complete.
    args.truncate(args.len() - 2);
    let out = run_in(&dir, &args, two_lines().as_bytes(), None, Some(full()));
    assert_eq!(out.status.code(), Some(2));
    for (name, text) in before {
        assert_eq!(fs::read_to_string(dir.join(name)).unwrap(), text, "{name}");
    }
    assert!(temporaries(&dir).is_empty(), "{:?}", names(&dir));
    // And a run that completes replaces them all.
    let out = run_in(&dir, &args, two_lines().as_bytes(), None, None);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        fs::read_to_string(dir.join("valid.jsonl")).unwrap(),
        format!("{}\n", VALID.trim_end())
    );
}

// 4. Signals.

/// Starts `validate` into `dir` on a standard input kept open, waits until its temporary files
/// are there, and sends it `signal`; returns its exit status.
fn interrupted(dir: &Path, signal: &str) -> Option<i32> {
    let mut child = release()
        .current_dir(dir)
        .args([
            "validate",
            "-o",
            "out.txt",
            "--rejects",
            "rejects.jsonl",
            "--valid-out",
            "new.jsonl",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for _ in 0..500 {
        stdin.write_all(two_lines().as_bytes()).unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while temporaries(dir).len() < 3 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(temporaries(dir).len(), 3, "{:?}", names(dir));
    let sent = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = child.wait().unwrap();
    drop(stdin);
    status.code()
}

#[test]
fn signals_remove_the_temporary_files_and_exit_128_plus_the_signal() {
    let dir = scratch("signals");
    for (signal, code) in [("-INT", 130), ("-TERM", 143), ("-HUP", 129), ("-PIPE", 141)] {
        fs::write(dir.join("out.txt"), "previous out\n").unwrap();
        fs::write(dir.join("rejects.jsonl"), "previous rejects\n").unwrap();
        assert_eq!(interrupted(&dir, signal), Some(code), "{signal}");
        assert_eq!(names(&dir), ["out.txt", "rejects.jsonl"], "{signal}");
        assert_eq!(
            fs::read_to_string(dir.join("out.txt")).unwrap(),
            "previous out\n"
        );
        assert_eq!(
            fs::read_to_string(dir.join("rejects.jsonl")).unwrap(),
            "previous rejects\n"
        );
    }
}

#[test]
fn the_temporary_files_of_a_killed_run_are_removed_by_the_next_run_in_that_folder() {
    let dir = scratch("stale");
    assert_eq!(interrupted(&dir, "-KILL"), None);
    assert_eq!(temporaries(&dir).len(), 3);
    // The temporary file of a live process (PID 1 always runs), or of another host (a folder
    // shared by a cluster's executors), is not touched.
    let host: String = fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(32)
        .collect();
    let live = format!(".rdq-tmp.{host}.1.0");
    let elsewhere = ".rdq-tmp.another-host.4294967295.0".to_owned();
    fs::write(dir.join(&live), "in flight").unwrap();
    fs::write(dir.join(&elsewhere), "in flight").unwrap();
    let out = run_in(
        &dir,
        &["validate", "-q", "-o", "other.txt"],
        b"",
        None,
        None,
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(names(&dir), [elsewhere, live, "other.txt".to_owned()]);
}

// 6. Resource limits the CLI accepts must never abort.

#[test]
fn a_huge_job_count_is_a_usage_error_and_the_largest_allowed_runs() {
    let dir = scratch("jobs");
    for args in [
        &["validate", "-j", "40000"][..],
        &["validate", "-j", "257"],
        &["validate", "-j", "0"],
        &[
            "batch",
            "validate",
            ".",
            "--out",
            "o",
            "--shards-at-once",
            "100000",
        ],
    ] {
        let out = run_in(&dir, args, b"", None, None);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&out).contains("is not from 1 to 256"),
            "{}",
            stderr(&out)
        );
    }
    let input = two_lines().repeat(200);
    let out = run_in(
        &dir,
        &["validate", "-q", "-j", "256"],
        input.as_bytes(),
        None,
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

// 9. Every output file follows its name.

#[test]
fn gen_schema_and_man_outputs_follow_their_names() {
    let dir = scratch("names");
    let run = |args: &[&str]| {
        let out = run_in(&dir, args, b"", None, None);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    };
    run(&["gen", "--count", "3", "-o", "g.jsonl.zst"]);
    run(&["gen", "--count", "3", "-o", "g.jsonl.gz"]);
    run(&["schema", "-o", "s.json.gz"]);
    run(&["schema", "-o", "s.json.zst"]);
    let zst = fs::read(dir.join("g.jsonl.zst")).unwrap();
    assert_eq!(&zst[..4], b"\x28\xb5\x2f\xfd");
    let lines = zstd::stream::decode_all(&zst[..]).unwrap();
    assert_eq!(lines.iter().filter(|&&b| b == b'\n').count(), 3);
    for gz in ["g.jsonl.gz", "s.json.gz"] {
        assert_eq!(&fs::read(dir.join(gz)).unwrap()[..2], b"\x1f\x8b", "{gz}");
    }
    let schema = zstd::stream::decode_all(&fs::read(dir.join("s.json.zst")).unwrap()[..]).unwrap();
    assert!(schema.starts_with(b"{"));
    // The manual pages appear all at once, with no temporary file left.
    run(&["man", "--dir", "man"]);
    let pages = names(&dir.join("man"));
    assert!(
        pages.contains(&"rdq-envelope-validate.1".to_owned()),
        "{pages:?}"
    );
    assert!(pages.iter().all(|p| p.ends_with(".1")), "{pages:?}");
}

// 10. Input formats it cannot read are named, not judged.

#[test]
fn xz_bzip2_and_lz4_inputs_are_named_and_refused() {
    let dir = scratch("formats");
    let cases: [(&str, &[u8]); 4] = [
        ("xz", b"\xFD7zXZ\x00\x00\x04\xE6\xD6\xB4\x46"),
        ("bzip2", b"BZh91AY&SY\x00\x01"),
        ("lz4", b"\x04\x22\x4D\x18\x64\x40\xA7"),
        ("lz4", b"\x02\x21\x4C\x18\x00\x00"),
    ];
    for (format, bytes) in cases {
        fs::write(dir.join("in"), bytes).unwrap();
        let out = run_in(
            &dir,
            &["validate", "in", "--rejects", "rejects.jsonl"],
            b"",
            None,
            None,
        );
        assert_eq!(out.status.code(), Some(2), "{format}");
        let expected = format!("{format} input is not supported; decompress it first");
        assert!(stderr(&out).contains(&expected), "{}", stderr(&out));
        assert!(!dir.join("rejects.jsonl").exists());
        // Through standard input too.
        let out = run_in(&dir, &["validate"], bytes, None, None);
        assert_eq!(out.status.code(), Some(2), "{format} on stdin");
    }
    // Text that merely starts like one is judged as text.
    let out = run_in(&dir, &["validate", "-q"], b"BZh\n", None, None);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_bad_zstd_checksum_says_where_the_decoder_was() {
    let dir = scratch("checksum");
    let mut encoder = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
    encoder.include_checksum(true).unwrap();
    encoder
        .write_all(two_lines().repeat(100).as_bytes())
        .unwrap();
    let mut frame = encoder.finish().unwrap();
    let last = frame.len() - 1;
    frame[last] ^= 0xFF;
    fs::write(dir.join("in.zst"), &frame).unwrap();
    let out = run_in(&dir, &["validate", "-q", "in.zst"], b"", None, None);
    assert_eq!(out.status.code(), Some(2));
    // The checksum is checked at the frame's end: the decoder had read the whole frame, and
    // decoded more than the lines framed so far.
    let err = stderr(&out);
    assert!(
        err.contains("corrupt zstd stream: Restored data doesn't match checksum"),
        "{err}"
    );
    let expected = format!("bytes from {} compressed bytes read)", frame.len());
    assert!(
        err.contains("(the decoder had decoded ") && err.contains(&expected),
        "{err}"
    );
}

// 11. Small things a careful tool gets right.

#[test]
fn an_output_name_of_255_bytes_is_written() {
    let dir = scratch("long-name");
    let name: String = "o".repeat(249) + ".jsonl";
    assert_eq!(name.len(), 255);
    let out = run_in(
        &dir,
        &["validate", "-q", "--valid-out", &name],
        two_lines().as_bytes(),
        None,
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        fs::read_to_string(dir.join(&name)).unwrap(),
        format!("{}\n", VALID.trim_end())
    );
}

#[test]
fn replacing_an_output_keeps_its_owner_group_and_mode() {
    let dir = scratch("owner");
    let path: PathBuf = dir.join("out.jsonl");
    fs::write(&path, "old\n").unwrap();
    fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o640)).unwrap();
    let root = fs::metadata(&dir).unwrap().uid() == 0;
    if root {
        std::os::unix::fs::chown(&path, Some(4321), Some(4322)).unwrap();
    }
    let out = run_in(
        &dir,
        &["validate", "-q", "--valid-out", "out.jsonl"],
        two_lines().as_bytes(),
        None,
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let meta = fs::metadata(&path).unwrap();
    assert_eq!(meta.mode() & 0o777, 0o640);
    if root {
        assert_eq!((meta.uid(), meta.gid()), (4321, 4322));
    }
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        format!("{}\n", VALID.trim_end())
    );
}

// 12. A panic anywhere is an error, never a quiet loss.

#[test]
fn a_panicking_worker_ends_the_run_with_status_2_and_every_output_as_it_was() {
    // The debug binary panics on a line holding the marker (a hook of test builds only).
    let dir = scratch("panic");
    fs::write(dir.join("out.jsonl"), "old\n").unwrap();
    let mut input = two_lines().repeat(300);
    input.push_str("{\"boom-marker\":1}\n");
    input.push_str(&two_lines().repeat(300));
    for jobs in ["1", "2"] {
        let out = super::common::bin()
            .current_dir(&dir)
            .env("RDQ_ENVELOPE_TEST_PANIC_ON", "boom-marker")
            .args([
                "validate",
                "-j",
                jobs,
                "--valid-out",
                "out.jsonl",
                "--rejects",
                "r.jsonl",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                child.stdin.take().unwrap().write_all(input.as_bytes())?;
                child.wait_with_output()
            })
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "-j{jobs}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("rdq-envelope: <stdin>: the lines from line")
                && err.contains(
                    "internal error (a bug, please report it): the test's panic on line 601"
                ),
            "{err}"
        );
        assert_eq!(names(&dir), ["out.jsonl"]);
        assert_eq!(fs::read_to_string(dir.join("out.jsonl")).unwrap(), "old\n");
    }
}
