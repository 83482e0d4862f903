//! Golden tests of `rdq-envelope redrive` (docs/cli.md#redrive): DEAD lines spliced into
//! resubmittable ones, everything else rejected with its reason.

use serde_json::Value;

use crate::common;
use common::{run, stderr, stdout};

/// A valid DEAD v1 line, without its terminator.
const DEAD: &str = include_str!("../data/dlq_line.json");

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

/// `--at` takes every instant an envelope can hold, in every form, up to the last millisecond
/// of year 9999, and refuses one past either end naming the range.
#[test]
fn at_reaches_both_ends_of_the_envelopes_range() {
    for (at, want) in [
        ("9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"),
        ("9999-12-31T23:59:59.999+00:00", "9999-12-31T23:59:59.999Z"),
        ("9999-12-31T23:59:59.999+01:00", "9999-12-31T22:59:59.999Z"),
        ("9999-12-31", "9999-12-31T00:00:00.000Z"),
        ("0000-01-01", "0000-01-01T00:00:00.000Z"),
        ("0000-01-01T01:30:00+01:00", "0000-01-01T00:30:00.000Z"),
    ] {
        let out = run(&["redrive", "-q", "--at", at], dead().as_bytes());
        assert_eq!(out.status.code(), Some(0), "{at}: {}", stderr(&out));
        let line: Value = serde_json::from_str(stdout(&out).trim_end()).unwrap();
        assert_eq!(line["next_attempt_at"], want, "{at}");
    }
    for at in [
        "9999-12-31T23:59:59.999-01:00",
        "0000-01-01T00:30:00+01:00",
        "9999-12-31T23:59:59.9999Z",
    ] {
        let out = run(&["redrive", "--at", at], dead().as_bytes());
        assert_eq!(out.status.code(), Some(2), "{at}");
        assert!(
            stderr(&out).contains("0000-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z"),
            "{at}: {}",
            stderr(&out)
        );
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

/// `count` DEAD lines that differ only in the random part of their ULID (the time part, and so
/// everything the rules compare, stays), drawn from a fixed-seed generator.
fn dead_lines(count: usize) -> Vec<String> {
    const CROCKFORD: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let template = dead();
    let id = "01HWT0D7G0Q8V9W2R4T6Y8A0B2";
    (0..count)
        .map(|_| {
            let random: String = (0..16)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    CROCKFORD[(state >> 59) as usize] as char
                })
                .collect();
            template.replacen(id, &format!("{}{random}", &id[..10]), 1)
        })
        .collect()
}

/// Milliseconds after midnight of a timestamp on 2026-05-01.
fn ms_of_day(stamp: &str) -> u64 {
    let time = stamp
        .strip_prefix("2026-05-01T")
        .and_then(|t| t.strip_suffix('Z'))
        .unwrap_or_else(|| panic!("{stamp} is not on 2026-05-01"));
    let part = |range: std::ops::Range<usize>| time[range].parse::<u64>().unwrap();
    part(0..2) * 3_600_000 + part(3..5) * 60_000 + part(6..8) * 1000 + part(9..12)
}

/// The text of the string member `key` of a line (gen lines hold numbers like 1e400, which
/// serde_json does not read).
fn text_of<'a>(line: &'a str, key: &str) -> &'a str {
    let from = line.find(&format!("\"{key}\":\"")).unwrap() + key.len() + 4;
    &line[from..from + line[from..].find('"').unwrap()]
}

fn lines_of(out: &std::process::Output) -> Vec<Value> {
    stdout(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn rate_makes_the_ith_task_due_at_i_periods_over_n_for_any_job_count() {
    let input = run(
        &[
            "gen",
            "--count",
            "2500",
            "--seed",
            "4",
            "--invalid-rate",
            "0.1",
        ],
        b"",
    )
    .stdout;
    let dead = stdout(&run(&["filter", "-q", "--status", "DEAD"], &input));
    let dead: Vec<&str> = dead.lines().collect();
    for (rate, per_ms, count) in [
        ("7/m", 60_000, 7),
        ("3/s", 1000, 3),
        ("400/h", 3_600_000, 400),
    ] {
        let start = "2026-05-01T00:00:00.000Z";
        let mut outputs = Vec::new();
        for jobs in ["1", "2", "3", "8"] {
            let out = run(
                &["redrive", "-q", "-j", jobs, "--at", start, "--rate", rate],
                &input,
            );
            assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
            outputs.push(out.stdout);
        }
        assert!(
            outputs.windows(2).all(|w| w[0] == w[1]),
            "{rate}: -j changes the output"
        );
        let redriven = String::from_utf8(outputs.pop().unwrap()).unwrap();
        let redriven: Vec<&str> = redriven.lines().collect();
        assert_eq!(redriven.len(), dead.len());
        for (i, (line, was)) in redriven.iter().zip(&dead).enumerate() {
            let due = ms_of_day(text_of(line, "next_attempt_at"));
            assert_eq!(due, i as u64 * per_ms / count, "{rate}: task {i}");
            assert_eq!(text_of(line, "id"), text_of(was, "id"));
            assert_eq!(text_of(line, "status"), "PENDING");
        }
    }
}

#[test]
fn spread_puts_each_task_at_its_ids_place_in_the_window_uniformly() {
    let lines = dead_lines(10_000);
    let input = lines.join("\n") + "\n";
    let start = "2026-05-01T00:00:00.000Z";
    let window = 2 * 3_600_000u64;
    let runs: Vec<_> = ["1", "2", "3", "8", "2"]
        .iter()
        .map(|jobs| {
            run(
                &["redrive", "-q", "-j", jobs, "--at", start, "--spread", "2h"],
                input.as_bytes(),
            )
        })
        .collect();
    assert_eq!(runs[0].status.code(), Some(0), "{}", stderr(&runs[0]));
    assert!(
        runs.windows(2).all(|w| w[0].stdout == w[1].stdout),
        "reruns and -j agree"
    );
    let fnv = |bytes: &[u8]| {
        bytes.iter().fold(0xcbf29ce484222325u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
        })
    };
    let mut buckets = [0u64; 10];
    for line in lines_of(&runs[0]) {
        let due = ms_of_day(line["next_attempt_at"].as_str().unwrap());
        let id = line["id"].as_str().unwrap();
        assert_eq!(due, fnv(id.as_bytes()) % window, "{id}");
        buckets[(due * 10 / window) as usize] += 1;
    }
    // Chi-square with 9 degrees of freedom; 27.9 is the 0.1% point.
    let chi: f64 = buckets
        .iter()
        .map(|&n| (n as f64 - 1000.0).powi(2) / 1000.0)
        .sum();
    assert!(chi < 27.9, "not uniform: {buckets:?} (chi-square {chi:.1})");
}

#[test]
fn max_redrives_rejects_tasks_at_the_limit_with_redrive_limit() {
    let at_two = dead().replacen(r#""redrive_count":0"#, r#""redrive_count":2"#, 1);
    let input = format!("{}\n{at_two}\n", dead());
    let out = run(
        &[
            "redrive",
            "-q",
            "--at",
            AT,
            "--max-redrives",
            "2",
            "--rejects",
            "/dev/stderr",
        ],
        input.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(lines_of(&out).len(), 1, "the task redriven 0 times goes");
    let record: Value = serde_json::from_str(stderr(&out).lines().next().unwrap()).unwrap();
    assert_eq!(record["line"], 2);
    assert_eq!(record["errors"][0]["code"], "REDRIVE_LIMIT");
    assert_eq!(record["errors"][0]["path"], "/redrive_count");
    // Below the limit, both go.
    let out = run(
        &["redrive", "-q", "--at", AT, "--max-redrives", "3"],
        input.as_bytes(),
    );
    assert_eq!((out.status.code(), lines_of(&out).len()), (Some(0), 2));
}

#[test]
fn queue_sends_tasks_elsewhere_under_the_new_queues_size_limit() {
    let out = run(
        &["redrive", "-q", "--at", AT, "--queue", "recovery"],
        dead().as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let want = run(&["redrive", "-q", "--at", AT], dead().as_bytes()).stdout;
    let want = String::from_utf8(want).unwrap().replacen(
        r#""queue":"billing.invoices""#,
        r#""queue":"recovery""#,
        1,
    );
    assert_eq!(stdout(&out), want);
    // The new queue's limit applies, not the old one's.
    let limit = format!("recovery={}", dead().len() - 10);
    let out = run(
        &[
            "redrive",
            "-q",
            "--at",
            AT,
            "--queue",
            "recovery",
            "--queue-limit",
            &limit,
            "--rejects",
            "/dev/stdout",
        ],
        dead().as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("PAYLOAD_TOO_LARGE"),
        "{}",
        stdout(&out)
    );
    let out = run(
        &["redrive", "-q", "--at", AT, "--queue-limit", &limit],
        dead().as_bytes(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "the old queue has no such limit"
    );
    for bad in ["Recovery", "", "a b", "caf\u{e9}"] {
        let flag = format!("--queue={bad}");
        let out = run(&["redrive", "--at", AT, &flag], dead().as_bytes());
        assert_eq!(out.status.code(), Some(2), "--queue {bad:?}");
        assert!(stderr(&out).contains("--queue"), "{}", stderr(&out));
    }
}

#[test]
fn dry_run_writes_only_its_report_and_the_summary() {
    let pending =
        String::from_utf8(run(&["redrive", "-q", "--at", AT], dead().as_bytes()).stdout).unwrap();
    let input = format!("{}\n{}{}\n", dead(), pending, dead());
    let summary = common::scratch("dry-run").join("summary.json");
    let out = run(
        &[
            "redrive",
            "--dry-run",
            "--at",
            AT,
            "--rate",
            "1/s",
            "--queue",
            "recovery",
            "--summary",
            summary.to_str().unwrap(),
        ],
        input.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        "dry run: nothing was written\n\
         would redrive 2 tasks\n\
         \x20 billing.invoices -> recovery  2\n\
         due from 2026-05-01T12:00:00.000Z to 2026-05-01T12:00:01.000Z\n\
         would reject 1 line\n\
         \x20 NOT_DEAD  1\n"
    );
    let books: Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    assert_eq!(
        (books["emitted"].as_u64(), books["rejected"].as_u64()),
        (Some(2), Some(1))
    );
    let out = run(&["redrive", "--dry-run", "--rejects", "/dev/null"], b"");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn rate_and_spread_values_are_checked_before_any_input() {
    for bad in [
        &["--rate", "0/s"][..],
        &["--rate", "5"],
        &["--rate", "5/d"],
        &["--rate", "-1/s"],
        &["--spread", "0m"],
        &["--spread", "2x"],
        &["--spread", "-1h"],
        &["--spread", "h"],
        &["--rate", "1/s", "--spread", "1h"],
    ] {
        let args: Vec<&str> = ["redrive", "--at", AT].iter().chain(bad).copied().collect();
        let out = run(&args, dead().as_bytes());
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(out.stdout.is_empty(), "{bad:?}");
    }
}
