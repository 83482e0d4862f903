//! Golden tests of `rdq-envelope redrive` (docs/cli.md#redrive): DEAD lines spliced into
//! resubmittable ones, everything else rejected with its reason.

use serde_json::Value;

mod common;
use common::{run, stderr, stdout};

/// A valid DEAD v1 line, without its terminator.
const DEAD: &str = include_str!("data/dlq_line.json");

const AT: &str = "2026-05-01T12:00:00.000Z";

fn dead() -> String {
    DEAD.trim_end().to_owned()
}

#[test]
fn a_dead_line_becomes_pending_and_nothing_else_changes() {
    let out = run(
        &["redrive", "-q", "--at", AT],
        format!("{}\n", dead()).as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let want = dead().replacen(
        r#""status":"DEAD","attempt_count":3,"redrive_count":0,"next_attempt_at":null,"lease_expires_at":null"#,
        &format!(r#""status":"PENDING","attempt_count":0,"redrive_count":1,"next_attempt_at":"{AT}","lease_expires_at":null"#),
        1,
    );
    assert_ne!(want, dead());
    assert_eq!(stdout(&out), format!("{want}\n"));
    let checked = run(&["validate", "-q"], &out.stdout);
    assert_eq!(checked.status.code(), Some(0), "{}", stdout(&checked));
}

#[test]
fn lines_that_cannot_be_redriven_are_rejected_with_their_reason() {
    let pending = {
        let out = run(&["redrive", "-q", "--at", AT], dead().as_bytes());
        stdout(&out).trim_end().to_owned()
    };
    let exhausted = dead().replacen(r#""redrive_count":0"#, r#""redrive_count":4294967295"#, 1);
    let invalid = dead().replacen(r#""queue":"billing.invoices""#, r#""queue":"Billing""#, 1);
    let input = format!("{pending}\n{exhausted}\n{invalid}\n");
    let out = run(
        &["redrive", "-q", "--at", AT, "--rejects", "/dev/stdout"],
        input.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1));
    let records: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let first = |r: &Value| {
        (
            r["errors"][0]["code"].as_str().unwrap().to_owned(),
            r["errors"][0]["path"].as_str().unwrap().to_owned(),
        )
    };
    let found: Vec<_> = records.iter().map(first).collect();
    assert_eq!(
        found,
        [
            ("NOT_DEAD".to_owned(), "/status".to_owned()),
            ("OUT_OF_RANGE".to_owned(), "/redrive_count".to_owned()),
            ("INVALID_NAME".to_owned(), "/queue".to_owned()),
        ]
    );
}

#[test]
fn now_is_the_default_and_at_must_be_a_timestamp() {
    let out = run(&["redrive", "-q"], dead().as_bytes());
    assert_eq!(out.status.code(), Some(0));
    let line: Value = serde_json::from_str(stdout(&out).trim_end()).unwrap();
    let next = line["next_attempt_at"].as_str().unwrap();
    assert!(
        next.starts_with("20") && next.ends_with('Z') && next.len() == 24,
        "{next}"
    );
    for bad in [
        &["redrive", "--at", "2026-05-32"][..],
        &["redrive", "--at", "2026-05-01T12:00:00"],
        &["redrive", "--at", "soon"],
        &["redrive", "--at", AT, "--now"],
    ] {
        let out = run(bad, b"");
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(!stderr(&out).is_empty());
    }
}

#[test]
fn at_takes_a_date_rfc_3339_and_a_duration_before_now() {
    for (at, want) in [
        ("2026-05-01", "2026-05-01T00:00:00.000Z"),
        ("2026-05-01T14:00:00+02:00", "2026-05-01T12:00:00.000Z"),
        ("2026-05-01T12:00:00.5Z", "2026-05-01T12:00:00.500Z"),
    ] {
        let out = run(&["redrive", "-q", "--at", at], dead().as_bytes());
        let line: Value = serde_json::from_str(stdout(&out).trim_end()).unwrap();
        assert_eq!(line["next_attempt_at"], want, "--at {at}");
    }
    let out = run(&["redrive", "-q", "--at", "3d"], dead().as_bytes());
    let line: Value = serde_json::from_str(stdout(&out).trim_end()).unwrap();
    let next = line["next_attempt_at"].as_str().unwrap();
    assert!(next.starts_with("20") && next.len() == 24, "{next}");
}

#[test]
fn every_job_count_redrives_the_same_bytes() {
    let input = run(
        &[
            "gen",
            "--count",
            "800",
            "--seed",
            "6",
            "--invalid-rate",
            "0.1",
        ],
        b"",
    )
    .stdout;
    let one = run(&["redrive", "-q", "-j1", "--at", AT], &input);
    let two = run(&["redrive", "-q", "-j2", "--at", AT], &input);
    assert_eq!(one.status.code(), Some(1));
    assert!(one.stdout == two.stdout && !one.stdout.is_empty());
    let checked = run(&["validate", "-q"], &one.stdout);
    assert_eq!(checked.status.code(), Some(0), "{}", stdout(&checked));
}
