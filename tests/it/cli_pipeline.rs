//! Golden tests of what the parallel pipeline brings to every command (docs/cli.md): `-j`,
//! compressed outputs, `--line-buffered`, the progress bar, bounded memory, write errors.

use std::io::{Read, Write};
use std::time::Duration;

use crate::common;
use common::{bin, run, scratch, spawn, stderr};

fn gen(count: &str, rate: &str) -> Vec<u8> {
    let out = run(
        &[
            "gen",
            "--count",
            count,
            "--seed",
            "5",
            "--invalid-rate",
            rate,
        ],
        b"",
    );
    assert!(out.status.success());
    out.stdout
}

#[test]
fn every_job_count_writes_the_same_bytes() {
    let input = gen("3000", "0.1");
    let dir = scratch("jobs");
    let mut seen: Option<Vec<Vec<u8>>> = None;
    for jobs in ["1", "2", "5"] {
        let valid = dir.join(format!("valid-{jobs}.jsonl"));
        let rejects = dir.join(format!("rejects-{jobs}.jsonl"));
        let out = run(
            &[
                "validate",
                "-q",
                "-j",
                jobs,
                "--format",
                "json",
                "--valid-out",
                valid.to_str().unwrap(),
                "--rejects",
                rejects.to_str().unwrap(),
            ],
            &input,
        );
        assert_eq!(out.status.code(), Some(1));
        let files = vec![
            out.stdout,
            std::fs::read(&valid).unwrap(),
            std::fs::read(&rejects).unwrap(),
        ];
        match &seen {
            None => seen = Some(files),
            Some(first) => assert!(first == &files, "-j{jobs} differs from -j1"),
        }
    }
    let valid = &seen.unwrap()[1];
    assert!(
        input.starts_with(&valid[..valid.iter().position(|&b| b == b'\n').unwrap()])
            || !valid.is_empty()
    );
}

#[test]
fn jobs_must_be_a_positive_count() {
    for bad in ["0", "-1", "many"] {
        let out = run(&["validate", "-j", bad], b"");
        assert_eq!(out.status.code(), Some(2), "-j {bad}");
    }
}

#[test]
fn outputs_are_compressed_by_name_or_by_flag() {
    let input = gen("300", "0.05");
    let dir = scratch("compress");
    let valid_zst = dir.join("valid.jsonl.zst");
    let rejects_gz = dir.join("rejects.jsonl.gz");
    let out = run(
        &[
            "validate",
            "-q",
            "--valid-out",
            valid_zst.to_str().unwrap(),
            "--rejects",
            rejects_gz.to_str().unwrap(),
        ],
        &input,
    );
    assert_eq!(out.status.code(), Some(1));
    let valid = zstd::decode_all(&std::fs::read(&valid_zst).unwrap()[..]).unwrap();
    let mut rejects = String::new();
    flate2::read::MultiGzDecoder::new(&std::fs::read(&rejects_gz).unwrap()[..])
        .read_to_string(&mut rejects)
        .unwrap();
    let plain = run(
        &[
            "validate",
            "-q",
            "--valid-out",
            "/dev/stdout",
            "-o",
            "/dev/null",
        ],
        &input,
    );
    assert_eq!(plain.status.code(), Some(1), "{}", stderr(&plain));
    assert!(valid == plain.stdout, "the compressed valid lines differ");
    assert!(rejects.lines().count() > 5);

    // The primary output: by name, and --compress over the name.
    let diagnostics = dir.join("diagnostics.txt.zst");
    let forced_gz = dir.join("diagnostics.txt");
    let plain_despite_name = dir.join("plain.zst");
    for (path, flag) in [
        (&diagnostics, None),
        (&forced_gz, Some("gzip")),
        (&plain_despite_name, Some("none")),
    ] {
        let mut args = vec!["validate", "-q", "-o", path.to_str().unwrap()];
        if let Some(kind) = flag {
            args.extend(["--compress", kind]);
        }
        assert_eq!(run(&args, &input).status.code(), Some(1));
    }
    let expected = run(&["validate", "-q"], &input).stdout;
    let unpacked = zstd::decode_all(&std::fs::read(&diagnostics).unwrap()[..]).unwrap();
    assert!(unpacked == expected, "diagnostics.txt.zst differs");
    let mut text = Vec::new();
    flate2::read::MultiGzDecoder::new(&std::fs::read(&forced_gz).unwrap()[..])
        .read_to_end(&mut text)
        .unwrap();
    assert!(text == expected, "--compress gzip differs");
    assert!(
        std::fs::read(&plain_despite_name).unwrap() == expected,
        "--compress none"
    );
    // Compressed outputs to standard output, for pipelines.
    let piped = run(&["validate", "-q", "--compress", "zstd"], &input);
    assert!(
        zstd::decode_all(&piped.stdout[..]).unwrap() == expected,
        "zstd to stdout"
    );
}

#[test]
fn a_full_disk_is_exit_2_and_a_compressed_output_is_left_out() {
    let input = gen("200", "0.5");
    let out = run(&["validate", "-o", "/dev/full"], &input);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("/dev/full"), "{}", stderr(&out));

    let dir = scratch("full");
    let valid = dir.join("valid.jsonl.zst");
    let out = run(
        &[
            "validate",
            "--valid-out",
            valid.to_str().unwrap(),
            "-o",
            "/dev/full",
        ],
        &input,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(!valid.exists());
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "no temporary file left"
    );
}

/// Feeds `input` slowly (a pause longer than the bar's quiet start), so a bar would be drawn.
fn slow_run(args: &[&str], input: &[u8]) -> std::process::Output {
    let mut child = spawn(args);
    let mut stdin = child.stdin.take().unwrap();
    let (head, tail) = input.split_at(input.len() / 2);
    stdin.write_all(head).unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    stdin.write_all(tail).unwrap();
    drop(stdin);
    child.wait_with_output().unwrap()
}

#[test]
fn the_progress_bar_is_off_unless_stderr_is_a_terminal_or_it_is_asked_for() {
    let input = gen("100", "0");
    let quiet = slow_run(&["validate", "-j2"], &input);
    assert_eq!(quiet.status.code(), Some(0));
    let text = stderr(&quiet);
    assert_eq!(text.lines().count(), 1, "only the summary line: {text:?}");
    assert!(text.starts_with("rdq-envelope: 100 lines"));

    let forced = slow_run(&["validate", "--progress"], &input);
    assert!(stderr(&forced).contains("lines/s"), "{:?}", stderr(&forced));
    assert_eq!(forced.stdout, quiet.stdout);

    // --quiet would hide the bar --progress asks for: a usage error, not a silent choice.
    let both = run(&["validate", "--progress", "--quiet"], &input);
    assert_eq!(both.status.code(), Some(2));
    assert!(
        stderr(&both).contains("--progress and --quiet"),
        "{}",
        stderr(&both)
    );
}

#[test]
fn line_buffered_output_arrives_line_by_line() {
    let input = gen("20", "1");
    let mut child = spawn(&["validate", "-q", "--line-buffered", "--format", "json"]);
    let mut stdin = child.stdin.take().unwrap();
    let first_line = input.split_inclusive(|&b| b == b'\n').next().unwrap();
    stdin.write_all(first_line).unwrap();
    stdin.flush().unwrap();
    // The diagnostic of the first line comes while the input is still open.
    let mut stdout = child.stdout.take().unwrap();
    let got = common::read_line(&mut stdout);
    assert!(got.starts_with(b"{\"source\":\"<stdin>\",\"line\":1,"));
    drop(stdin);
    let mut rest = Vec::new();
    stdout.read_to_end(&mut rest).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(1));
}

/// The peak resident set of a running process, from /proc (Linux).
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn memory_stays_flat_however_long_the_piped_input() {
    if !std::path::Path::new("/proc/self/status").exists() {
        eprintln!("skipped: no /proc to read peak memory from");
        return;
    }
    // 4 MB of varied lines, sent 24 times: 96 MB through a pipe.
    let block = gen("1200", "0.1");
    let mut child = spawn(&[
        "validate",
        "-q",
        "-j2",
        "--format",
        "json",
        "-o",
        "/dev/null",
    ]);
    let mut stdin = child.stdin.take().unwrap();
    let mut peaks = Vec::new();
    for round in 0..24 {
        stdin.write_all(&block).unwrap();
        if round == 3 || round == 23 {
            // Let the workers catch up, so the peak includes what they hold.
            std::thread::sleep(Duration::from_millis(300));
            peaks.push(peak_rss_kib(child.id()).unwrap());
        }
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let (early, late) = (peaks[0], peaks[1]);
    // Generous margins: chunks and buffers are a few MiB; the input is 96 MB.
    assert!(late < 64 * 1024, "peak RSS {late} KiB after 96 MB");
    assert!(
        late < early + 16 * 1024,
        "peak RSS grew from {early} to {late} KiB"
    );
}

#[test]
fn memory_on_hostile_input_is_bounded_by_the_largest_line_let_through() {
    if !std::path::Path::new("/proc/self/status").exists() {
        eprintln!("skipped: no /proc to read peak memory from");
        return;
    }
    // 48 lines of 4 MiB: within the 16 MiB reader cap, so each is held whole, but over the
    // envelope size limit, so none is parsed; each goes whole into its rejects record.
    const LINE: usize = 4 << 20;
    let mut line = br#"{"envelope_version":1,"pad":""#.to_vec();
    line.resize(LINE, b'a');
    line.extend_from_slice(b"\"}\n");
    let mut child = spawn(&[
        "validate",
        "-q",
        "-j2",
        "--rejects",
        "/dev/null",
        "-o",
        "/dev/null",
    ]);
    let mut stdin = child.stdin.take().unwrap();
    for _ in 0..48 {
        stdin.write_all(&line).unwrap();
    }
    std::thread::sleep(Duration::from_millis(300));
    let peak = peak_rss_kib(child.id()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // docs/performance.md "Memory": about (2 x jobs + 2) chunks, each holding up to a chunk plus one line
    // and that line's rejects record, plus the reader's buffer: 6 x 9 + 8 MiB here. The input
    // is 192 MiB.
    assert!(
        peak < 120 * 1024,
        "peak RSS {peak} KiB for 192 MiB of 4 MiB lines"
    );
}

/// Formats follow the output's name, or the run refuses: an output of JSON Lines (or the
/// summary's JSON) named for another format is status 2 before anything is read or written,
/// on every command and output flag; a name with another ending, or none, is only a name.
#[test]
fn json_lines_outputs_named_for_another_format_are_refused() {
    let dir = common::scratch("json-lines-names");
    let sample = std::fs::canonicalize("samples/dlq-sample.jsonl.zst").unwrap();
    let sample = sample.to_str().unwrap();
    let refused = [
        (
            vec!["filter", sample, "-o", "dead.csv"],
            "dead.csv: -o writes JSON Lines",
        ),
        (
            vec!["migrate", "--to", "2", sample, "-o", "v2.PARQUET.zst"],
            "v2.PARQUET.zst: -o",
        ),
        (
            vec!["dedupe", sample, "-o", "d.html"],
            "stats --format html",
        ),
        (
            vec!["sample", "3", sample, "-o", "s.xlsx"],
            "s.xlsx: -o writes JSON Lines",
        ),
        (
            vec!["redrive", "--now", sample, "-o", "t.tsv"],
            "for rows, rdq-envelope export",
        ),
        (
            vec!["validate", sample, "--rejects", "r.csv"],
            "r.csv: --rejects writes",
        ),
        (
            vec!["validate", sample, "--valid-out", "v.yaml"],
            "v.yaml: --valid-out writes",
        ),
        (
            vec!["migrate", "--to", "2", sample, "--warnings-out", "w.xml"],
            "--warnings-out",
        ),
        (
            vec!["dedupe", sample, "--dropped", "x.parquet"],
            "x.parquet: --dropped",
        ),
        (
            vec!["stats", sample, "--summary", "s.csv"],
            "s.csv: --summary writes JSON,",
        ),
        (
            vec!["gen", "--count", "3", "-o", "g.csv.gz"],
            "g.csv.gz: -o writes JSON Lines",
        ),
    ];
    for (args, says) in refused {
        let out = bin().args(&args).current_dir(&dir).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "{args:?} wrote a file"
        );
    }
    for args in [
        vec![
            "filter",
            "-q",
            sample,
            "-o",
            "dead.jsonl",
            "--rejects",
            "r.ndjson",
        ],
        vec![
            "filter",
            "-q",
            sample,
            "-o",
            "dead.json.zst",
            "--summary",
            "s.json",
        ],
        vec![
            "filter",
            "-q",
            sample,
            "-o",
            "part-0001",
            "--rejects",
            "r.dat",
        ],
        vec!["gen", "-q", "--count", "3", "-o", "g.jsonl"],
    ] {
        let out = bin().args(&args).current_dir(&dir).output().unwrap();
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}
