//! Every command's closing line says what it read, then what it wrote and where (lines, rows,
//! tasks, the report), with the counts as people read them: thousands separators.

use crate::common::{bin, scratch, stderr};

/// `n` with thousands separators, as the closing line writes counts.
fn thousands(n: usize) -> String {
    rdq_envelope::report::thousands(n as u64)
}

fn lines_of(path: &std::path::Path) -> usize {
    std::fs::read(path)
        .unwrap()
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

#[test]
fn each_closing_line_names_what_was_written_where() {
    let dir = scratch("closing-lines");
    let input = dir.join("in.jsonl");
    let out = bin()
        .args([
            "gen",
            "-q",
            "--count",
            "2500",
            "--invalid-rate",
            "0.01",
            "-o",
        ])
        .arg(&input)
        .output()
        .unwrap();
    assert!(out.status.success());
    let closing = |args: &[&str]| {
        let out = bin().args(args).current_dir(&dir).output().unwrap();
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{args:?}: {}",
            stderr(&out)
        );
        let err = stderr(&out);
        let line = err.lines().last().unwrap_or_default().to_owned();
        assert!(
            line.starts_with("rdq-envelope: 2,500 lines: "),
            "{args:?}: {line}"
        );
        line
    };
    let o = |name: &str| dir.join(name);

    let line = closing(&[
        "validate",
        "in.jsonl",
        "--valid-out",
        "v.jsonl",
        "--rejects",
        "r.jsonl",
        "-o",
        "d.txt",
    ]);
    let (valid, rejected) = (lines_of(&o("v.jsonl")), lines_of(&o("r.jsonl")));
    assert!(rejected > 0 && valid + rejected == 2500);
    let expected = format!(
        "; wrote the diagnostics of {rejected} lines to d.txt, {} valid lines to v.jsonl, {rejected} rejects to r.jsonl (",
        thousands(valid)
    );
    assert!(line.contains(&expected), "{line}\n{expected}");

    for (args, written, noun) in [
        (
            &["migrate", "--to", "1", "in.jsonl", "-o", "m.jsonl"][..],
            "m.jsonl",
            "envelopes",
        ),
        (
            &["filter", "--status", "DEAD", "in.jsonl", "-o", "f.jsonl"],
            "f.jsonl",
            "lines",
        ),
        (&["dedupe", "in.jsonl", "-o", "u.jsonl"], "u.jsonl", "lines"),
        (
            &["sample", "1200", "--seed", "3", "in.jsonl", "-o", "s.jsonl"],
            "s.jsonl",
            "lines",
        ),
        (
            &["redrive", "--now", "in.jsonl", "-o", "t.jsonl"],
            "t.jsonl",
            "tasks",
        ),
    ] {
        let line = closing(args);
        let n = lines_of(&o(written));
        let expected = format!("; wrote {} {noun} to {written} (", thousands(n));
        assert!(line.contains(&expected), "{line}\n{expected}");
    }
    let line = closing(&["export", "in.jsonl", "-o", "x.csv"]);
    // A row per valid envelope (a CSV row may span lines, so they are not counted here).
    let expected = format!("; wrote {} rows to x.csv (", thousands(valid));
    assert!(line.contains(&expected), "{line}");
    let line = closing(&["stats", "in.jsonl", "-o", "s.html"]);
    assert!(line.contains("; wrote the report to s.html ("), "{line}");
    let line = closing(&["filter", "--count", "--status", "DEAD", "in.jsonl"]);
    assert!(
        line.contains("; wrote the count to standard output ("),
        "{line}"
    );
    // What the run read is said with separators too.
    assert!(
        line.contains(" valid, ") && !line.contains("2500"),
        "{line}"
    );
}
