//! `--max-errors N`: a run stops right after its Nth rejected line, in input order, with status
//! 1 and the books of the lines up to it, whatever the workers, for every command that judges
//! lines; its outputs are whole files of the lines before the cut.

use serde_json::Value;

use crate::common::{bin, folder_with_the_sample, stderr, stdout};

/// The bundled sample, as `folder_with_the_sample` places it.
const SAMPLE: &str = "samples/dlq-sample.jsonl.zst";

/// The sample's rejected lines, in order.
const SAMPLE_REJECTS: [u64; 7] = [21, 55, 56, 127, 160, 206, 226];

#[test]
fn validate_stops_right_after_the_nth_rejected_line() {
    let (dir, _) = folder_with_the_sample("max-errors");
    for n in [1, 3, 7, 8] {
        for jobs in ["1", "2", "3"] {
            let out = bin()
                .args([
                    "validate",
                    "-j",
                    jobs,
                    "--summary",
                    "books.json",
                    "--max-errors",
                ])
                .arg(n.to_string())
                .arg(SAMPLE)
                .current_dir(&dir)
                .output()
                .unwrap();
            let at = format!("--max-errors {n} -j{jobs}");
            assert_eq!(out.status.code(), Some(1), "{at}");
            let rows: Vec<String> = stdout(&out).lines().map(str::to_owned).collect();
            let expected = SAMPLE_REJECTS.len().min(n);
            assert_eq!(rows.len(), expected, "{at}");
            for (row, line) in rows.iter().zip(SAMPLE_REJECTS) {
                assert!(row.contains(&format!(":{line}: ")), "{at}: {row}");
            }
            let books: Value =
                serde_json::from_slice(&std::fs::read(dir.join("books.json")).unwrap()).unwrap();
            let (lines, reached) = match SAMPLE_REJECTS.get(n - 1) {
                Some(&line) => (line, true),
                None => (300, false),
            };
            assert_eq!(books["lines"], lines, "{at}");
            assert_eq!(books["rejected"], expected as u64, "{at}");
            assert_eq!(books["valid"], lines - expected as u64, "{at}");
            assert_eq!(books.get("max_errors_reached").is_some(), reached, "{at}");
            let closing = stderr(&out);
            assert_eq!(
                closing.contains(&format!("stopped after {n} rejected line")),
                reached,
                "{at}: {closing}"
            );
        }
    }
}

#[test]
fn the_outputs_hold_the_lines_before_the_cut() {
    let (dir, _) = folder_with_the_sample("max-errors-outputs");
    // Rejected line 2 is line 55: the 53 valid lines before it are migrated.
    let out = bin()
        .args([
            "migrate",
            "--to",
            "2",
            "-j2",
            "--max-errors",
            "2",
            "-o",
            "out.jsonl",
        ])
        .args(["--rejects", "rejects.jsonl", SAMPLE])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let migrated = std::fs::read_to_string(dir.join("out.jsonl")).unwrap();
    assert_eq!(migrated.lines().count(), 53);
    let rejects = std::fs::read_to_string(dir.join("rejects.jsonl")).unwrap();
    assert_eq!(rejects.lines().count(), 2);
    // filter: the matching lines before the cut, as standard output.
    let out = bin()
        .args(["filter", "--max-errors", "1", SAMPLE])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out).lines().count(), 20);
    assert!(
        stderr(&out).contains("21 lines: 20 valid, 1 rejected"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn zero_or_a_batch_is_refused() {
    let (dir, _) = folder_with_the_sample("max-errors-refused");
    let out = bin()
        .args(["validate", "--max-errors", "0", SAMPLE])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("give 1 or more"), "{}", stderr(&out));
    let out = bin()
        .args([
            "batch",
            "validate",
            "--max-errors",
            "1",
            ".",
            "--out",
            "out",
        ])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("batch: --max-errors"),
        "{}",
        stderr(&out)
    );
    // Nor --stats: each shard's summary counts its codes.
    let out = bin()
        .args(["batch", "validate", "--stats", ".", "--out", "out"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--stats are for single runs"),
        "{}",
        stderr(&out)
    );
}

/// From a producer that keeps its pipe open, the run ends at the Nth rejected line, without
/// waiting for the input to end.
#[test]
fn a_pipe_left_open_does_not_keep_the_run_waiting() {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = bin()
        .args(["validate", "--max-errors", "2"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"x\n\n{}\n").unwrap();
    stdin.flush().unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "the run waited for the pipe to close"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(status.code(), Some(1));
    assert_eq!(stdout(&out).lines().count(), 2);
    assert!(
        stderr(&out).contains("3 lines: 0 valid, 2 rejected, 1 blank"),
        "{}",
        stderr(&out)
    );
}
