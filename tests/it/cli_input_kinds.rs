//! The wrong kind of input gets one hint, not only a diagnostic per line: a JSON array (pretty
//! or on one line), a pretty-printed document, CSV. The hint's command line, pasted into a
//! shell, reads the file as meant.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::{bin, scratch, stderr, stdout, tool_or_skip};

/// Valid envelopes, one per line.
fn envelopes(count: &str) -> Vec<u8> {
    let out = bin()
        .args(["gen", "-q", "--count", count])
        .output()
        .unwrap();
    assert!(out.status.success());
    out.stdout
}

/// `lines` as one JSON array, pretty (a line per element, `[` alone first) or on one line.
/// Made from the bytes: the generated lines hold numbers no f64 holds.
fn array(lines: &[u8], pretty: bool) -> Vec<u8> {
    let elements: Vec<&[u8]> = lines
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let (open, between, close): (&[u8], &[u8], &[u8]) = match pretty {
        true => (b"[\n  ", b",\n  ", b"\n]\n"),
        false => (b"[", b",", b"]\n"),
    };
    let mut out = open.to_vec();
    out.extend_from_slice(&elements.join(between));
    out.extend_from_slice(close);
    out
}

fn hints(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("not JSON Lines"))
        .collect()
}

/// Runs the hint's suggested command line (after `try: `) in `dir` with sh.
fn run_suggestion(hint: &str, dir: &Path) -> std::process::Output {
    let (_, command) = hint.split_once("try: ").expect("a command line");
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_rdq-envelope"))
        .parent()
        .unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    Command::new("sh")
        .args(["-c", command])
        .current_dir(dir)
        .env("PATH", path)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn an_array_or_a_document_gets_one_hint_whose_command_reads_it() {
    let Some(_jq) = tool_or_skip(&["jq"], "the input-kind hint test") else {
        return;
    };
    let dir = scratch("input-kinds");
    let lines = envelopes("40");
    let one = lines.split(|&b| b == b'\n').next().unwrap();
    let document =
        serde_json::to_vec_pretty(&serde_json::from_slice::<serde_json::Value>(one).unwrap())
            .unwrap();
    let cases: [(&str, Vec<u8>, &str); 4] = [
        (
            "pretty array.json",
            array(&lines, true),
            "jq -c '.[]' 'pretty array.json' | ",
        ),
        (
            "-one-line.json",
            array(&lines, false),
            "jq -c '.[]' ./-one-line.json | ",
        ),
        ("doc.json", document, "jq -c . doc.json | "),
        (
            "it's.json",
            array(&lines, true),
            r"jq -c '.[]' 'it'\''s.json' | ",
        ),
    ];
    for (name, bytes, jq) in cases {
        std::fs::write(dir.join(name), &bytes).unwrap();
        for command in ["validate", "stats", "filter"] {
            let out = bin()
                .args([command, "--", name])
                .current_dir(&dir)
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(1), "{command} {name}");
            let err = stderr(&out);
            let said = hints(&err);
            assert_eq!(said.len(), 1, "{command} {name}: {err}");
            assert!(said[0].contains(jq), "{command} {name}: {}", said[0]);
            assert!(
                said[0].ends_with(&format!("| rdq-envelope {command} -- -")),
                "{}",
                said[0]
            );
            // The usual diagnostics are still there (validate writes one per line).
            if command == "validate" {
                assert!(stdout(&out).lines().count() >= 1);
            }
            // A pretty array's last element (no comma after it) is a valid line and counts.
            if command == "stats" && !name.contains("pretty") && !name.starts_with("it") {
                assert!(
                    stdout(&out).contains("Nothing counted: every line"),
                    "{}",
                    stdout(&out)
                );
            }
            let fixed = run_suggestion(said[0], &dir);
            assert_eq!(
                fixed.status.code(),
                Some(0),
                "{}: {}",
                said[0],
                stderr(&fixed)
            );
            assert!(hints(&stderr(&fixed)).is_empty());
            if command == "stats" {
                let envelopes = if name == "doc.json" {
                    "1 envelope in"
                } else {
                    "40 envelopes in"
                };
                assert!(stdout(&fixed).starts_with(envelopes), "{}", stdout(&fixed));
            }
        }
        // Quiet means quiet.
        let out = bin()
            .args(["validate", "-q", "--", name])
            .current_dir(&dir)
            .output()
            .unwrap();
        assert_eq!(stderr(&out), "");
    }

    // Among other inputs: only that one is named, and the command keeps the others.
    std::fs::write(dir.join("good.jsonl"), &lines).unwrap();
    let out = bin()
        .args(["validate", "good.jsonl", "doc.json", "good.jsonl"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(hints(&err).len(), 1, "{err}");
    assert!(
        hints(&err)[0].ends_with("| rdq-envelope validate good.jsonl - good.jsonl"),
        "{err}"
    );
    assert_eq!(run_suggestion(hints(&err)[0], &dir).status.code(), Some(0));

    // Standard input: jq reads it too.
    let out = crate::common::run(&["filter", "--status", "DEAD"], &array(&lines, true));
    let err = stderr(&out);
    assert_eq!(hints(&err).len(), 1, "{err}");
    assert!(
        hints(&err)[0].starts_with("rdq-envelope: <stdin> looks like a JSON array")
            && hints(&err)[0].ends_with("try: jq -c '.[]' | rdq-envelope filter --status DEAD"),
        "{err}"
    );
}

/// A stream given by name (`/dev/stdin`, `<(...)`) cannot be read again by that name: the hint
/// puts jq after what made it.
#[test]
fn a_stream_named_as_a_file_is_piped_through_jq() {
    let out = crate::common::run(&["validate", "/dev/stdin"], &array(&envelopes("5"), false));
    let err = stderr(&out);
    assert_eq!(hints(&err).len(), 1, "{err}");
    assert!(
        hints(&err)[0]
            .ends_with("try: (what made /dev/stdin) | jq -c '.[]' | rdq-envelope validate -"),
        "{err}"
    );
}

#[test]
fn csv_gets_one_hint_and_json_lines_get_none() {
    let dir = scratch("input-kinds-csv");
    let lines = envelopes("25");
    std::fs::write(dir.join("good.jsonl"), &lines).unwrap();
    let out = bin()
        .args(["export", "-q", "good.jsonl", "-o", "rows.csv"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let out = bin()
        .args(["validate", "rows.csv"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(hints(&err).len(), 1, "{err}");
    assert!(hints(&err)[0].contains("rows.csv looks like CSV"), "{err}");
    assert!(
        hints(&err)[0].contains("read the JSON Lines they came from"),
        "{err}"
    );

    // JSON Lines, valid, broken, or with blank lines first: the diagnostics say enough.
    let mut broken = b"\n\n{\"id\": 1,\n\"just a string, with a comma\"\n42\n".to_vec();
    broken.extend_from_slice(&lines);
    for (name, bytes) in [("good.jsonl", lines.clone()), ("broken.jsonl", broken)] {
        std::fs::write(dir.join(name), &bytes).unwrap();
        let out = bin()
            .args(["validate", name])
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(hints(&stderr(&out)).is_empty(), "{name}: {}", stderr(&out));
    }
    // A blank first line does not hide an array after it.
    let mut late = b"\n\n".to_vec();
    late.extend_from_slice(&array(&lines, true));
    std::fs::write(dir.join("late.json"), late).unwrap();
    let out = bin()
        .args(["validate", "-j1", "late.json"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(hints(&stderr(&out)).len(), 1, "{}", stderr(&out));
}
