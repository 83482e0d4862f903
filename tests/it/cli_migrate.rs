//! Golden tests of `rdq-envelope migrate`: they spawn the real binary (docs/cli.md#migrate,
//! docs/migrations.md).

use std::io::Read;

use serde_json::Value;

use crate::common;
use common::{run, scratch, stderr, stdout};

/// A valid v1 DLQ line (three attempts, `rdq.source` among its headers).
const V1: &str = include_str!("../data/dlq_line.json");

fn v1_with(from: &str, to: &str) -> String {
    assert!(V1.contains(from), "{from}");
    V1.trim_end().replacen(from, to, 1)
}

fn records(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).expect("a JSON record"))
        .collect()
}

fn codes(record: &Value) -> Vec<(String, String)> {
    record["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["code"].as_str().unwrap().to_owned(),
                e["path"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn up_by_default_and_back_down() {
    let input = run(
        &["gen", "--count", "50", "--seed", "3", "--version", "1"],
        b"",
    )
    .stdout;
    let up = run(&["migrate", "-q"], &input);
    assert_eq!(up.status.code(), Some(0), "{}", stderr(&up));
    assert_eq!(stdout(&up).lines().count(), 50);
    let checked = run(&["validate", "-q", "--require-version", "2"], &up.stdout);
    assert_eq!(checked.status.code(), Some(0), "{}", stdout(&checked));

    let down = run(&["migrate", "-q", "--to", "1"], &up.stdout);
    assert_eq!(down.status.code(), Some(0));
    let checked = run(&["validate", "-q", "--require-version", "1"], &down.stdout);
    assert_eq!(checked.status.code(), Some(0));
    // Already at the target: byte for byte.
    let same = run(&["migrate", "-q", "--to", "2"], &up.stdout);
    assert!(same.stdout == up.stdout);
}

#[test]
fn every_rejection_reason_has_its_code_in_the_rejects() {
    let cancelled = {
        let up = run(&["migrate", "-q"], V1.as_bytes());
        stdout(&up)
            .trim_end()
            .replacen(r#""status":"DEAD""#, r#""status":"CANCELLED""#, 1)
    };
    let conflict = v1_with(r#""status":"DEAD""#, r#""origin":"legacy","status":"DEAD""#);
    let bad_queue = v1_with(r#""queue":"billing.invoices""#, r#""queue":"Billing""#);
    let version_3 = v1_with(r#""envelope_version":1"#, r#""envelope_version":3"#);
    let lines = [
        (V1.trim_end().to_owned(), "2", vec![]),
        (conflict, "2", vec![("MIGRATION_CONFLICT", "/origin")]),
        (bad_queue, "2", vec![("INVALID_NAME", "/queue")]),
        (
            version_3,
            "2",
            vec![("UNSUPPORTED_VERSION", "/envelope_version")],
        ),
        (cancelled, "1", vec![("CANNOT_DOWNGRADE", "/status")]),
    ];
    let dir = scratch("migrate-rejects");
    for (line, to, want) in lines {
        let rejects = dir.join("rejects.jsonl");
        let out = run(
            &[
                "migrate",
                "-q",
                "--to",
                to,
                "--rejects",
                rejects.to_str().unwrap(),
            ],
            format!("{line}\n").as_bytes(),
        );
        let found = records(&std::fs::read_to_string(&rejects).unwrap());
        if want.is_empty() {
            assert_eq!(out.status.code(), Some(0));
            assert!(found.is_empty());
            continue;
        }
        assert_eq!(out.status.code(), Some(1), "{want:?}");
        assert!(out.stdout.is_empty(), "a rejected line is not written");
        assert_eq!(found.len(), 1);
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(c, p)| (c.to_string(), p.to_string()))
            .collect();
        assert_eq!(codes(&found[0]), want);
        assert_eq!(found[0]["raw"], line.as_str());
    }
}

#[test]
fn an_output_over_the_size_limit_is_rejected() {
    // 1 -> 2 adds `"origin":{...}` and three durations: about 90 bytes.
    let limit = (V1.trim_end().len() + 20).to_string();
    let dir = scratch("migrate-size");
    let summary = dir.join("summary.json");
    let out = run(
        &[
            "migrate",
            "-q",
            "--max-envelope-bytes",
            &limit,
            "--summary",
            summary.to_str().unwrap(),
            "--rejects",
            "/dev/stdout",
        ],
        V1.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1));
    let found = records(&stdout(&out));
    assert_eq!(
        codes(&found[0]),
        [("PAYLOAD_TOO_LARGE".to_owned(), String::new())]
    );
    let books: Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    assert_eq!(
        (&books["lines"], &books["rejected"], &books["emitted"]),
        (&Value::from(1), &Value::from(1), &Value::from(0))
    );
    assert_eq!(books["by_code"]["PAYLOAD_TOO_LARGE"], 1);
}

#[test]
fn warnings_go_to_stderr_or_to_a_file_and_are_counted() {
    let skewed = v1_with(
        r#""created_at":"2024-05-01T12:00:00.000Z""#,
        r#""created_at":"2024-05-01T12:00:05.000Z""#,
    );
    let dir = scratch("migrate-warnings");
    let (warnings, summary) = (dir.join("w.jsonl"), dir.join("s.json"));
    let out = run(
        &[
            "migrate",
            "--warnings",
            "--warnings-out",
            warnings.to_str().unwrap(),
            "--summary",
            summary.to_str().unwrap(),
        ],
        format!("{skewed}\n").as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(stderr(&out).starts_with(
        "<stdin>:1: /id: warning: ID_TIME_MISMATCH: the ULID's time and created_at differ by 5000 ms\n"
    ));
    let found = records(&std::fs::read_to_string(&warnings).unwrap());
    assert_eq!(found[0]["errors"], serde_json::json!([]));
    assert_eq!(found[0]["id"], "01HWT0D7G0Q8V9W2R4T6Y8A0B2");
    assert_eq!(found[0]["warnings"][0]["code"], "ID_TIME_MISMATCH");
    let books: Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    assert_eq!(books["warnings_by_code"]["ID_TIME_MISMATCH"], 1);
    assert_eq!(books["warnings_by_code"]["CREATED_AFTER_START"], 1);

    let quiet = run(&["migrate", "-q"], format!("{skewed}\n").as_bytes());
    assert!(quiet.stderr.is_empty());
}

#[test]
fn compressed_in_and_out() {
    let input = run(
        &["gen", "--count", "100", "--seed", "8", "--version", "1"],
        b"",
    )
    .stdout;
    let dir = scratch("migrate-compressed");
    let zst = dir.join("in.jsonl.zst");
    std::fs::write(&zst, zstd::encode_all(&input[..], 3).unwrap()).unwrap();
    let gz = dir.join("out.jsonl.gz");
    let out = run(
        &[
            "migrate",
            "-q",
            zst.to_str().unwrap(),
            "-o",
            gz.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut text = Vec::new();
    flate2::read::MultiGzDecoder::new(&std::fs::read(&gz).unwrap()[..])
        .read_to_end(&mut text)
        .unwrap();
    let plain = run(&["migrate", "-q"], &input);
    assert!(text == plain.stdout, "the gzip output differs");
}

#[test]
fn usage_errors_are_exit_2() {
    for args in [
        &["migrate", "--to", "3"][..],
        &["migrate", "--to", "x"],
        &["migrate", "--from"],
    ] {
        let out = run(args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!stderr(&out).is_empty());
    }
}

#[test]
fn chokaq_rows_import_through_the_chain() {
    let rows = run(
        &["gen", "--format", "chokaq", "--count", "200", "--seed", "4"],
        b"",
    )
    .stdout;
    let up = run(&["migrate", "-q", "--from", "chokaq"], &rows);
    assert_eq!(up.status.code(), Some(0), "{}", stderr(&up));
    assert_eq!(stdout(&up).lines().count(), 200);
    let checked = run(&["validate", "-q", "--require-version", "2"], &up.stdout);
    assert_eq!(checked.status.code(), Some(0), "{}", stdout(&checked));
    let v1 = run(&["migrate", "-q", "--from", "chokaq", "--to", "1"], &rows);
    let checked = run(&["validate", "-q", "--require-version", "1"], &v1.stdout);
    assert_eq!(checked.status.code(), Some(0));
    let v1_up = run(&["migrate", "-q", "--to", "2"], &v1.stdout);
    assert!(
        v1_up.stdout == up.stdout,
        "importing to 2 is importing to 1, then 1 -> 2"
    );
}

#[test]
fn chokaq_rows_that_cannot_be_imported_are_rejected_and_counted() {
    let good = r#"{"Id":"g","Queue":"q","Type":"T","FailureReason":0,"AttemptCount":1,"CreatedAtUtc":"2026-04-30T14:32:07","FailedAtUtc":"2026-04-30T14:32:07","Tags":"TAGS"}"#
        .replace("TAGS", &"t".repeat(1001));
    let no_table = r#"{"Id":"x","Queue":"q","Type":"T","AttemptCount":1,"CreatedAtUtc":"2026-04-30T14:32:07"}"#;
    let dir = scratch("chokaq-rejects");
    let (rejects, warnings, summary) =
        (dir.join("r.jsonl"), dir.join("w.jsonl"), dir.join("s.json"));
    let out = run(
        &[
            "migrate",
            "-q",
            "--from",
            "chokaq",
            "--rejects",
            rejects.to_str().unwrap(),
            "--warnings-out",
            warnings.to_str().unwrap(),
            "--summary",
            summary.to_str().unwrap(),
        ],
        format!("{good}\n{no_table}\nnot json\n").as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1));
    let found = records(&std::fs::read_to_string(&rejects).unwrap());
    assert_eq!(
        codes(&found[0]),
        [("MISSING_FIELD".to_owned(), String::new())]
    );
    assert_eq!(found[0]["raw"], no_table);
    assert_eq!(
        codes(&found[1]),
        [("MALFORMED_JSON".to_owned(), String::new())]
    );
    let w = records(&std::fs::read_to_string(&warnings).unwrap());
    assert_eq!(w[0]["warnings"][0]["code"], "CHOKAQ_LIMIT");
    assert_eq!(w[0]["warnings"][0]["path"], "/Tags");
    let imported: Value = serde_json::from_str(stdout(&out).lines().next().unwrap()).unwrap();
    assert_eq!(w[0]["id"], imported["id"]);
    let books: Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    assert_eq!(
        (&books["emitted"], &books["rejected"]),
        (&Value::from(1), &Value::from(2))
    );
    assert_eq!(books["warnings_by_code"]["CHOKAQ_LIMIT"], 1);

    let usage = run(&["migrate", "--chokaq-table", "dlq"], b"");
    assert_eq!(usage.status.code(), Some(2));
}
