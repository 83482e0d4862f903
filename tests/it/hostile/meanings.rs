//! Hostile cases: meanings (see the parent module for the helpers). Each promise holds at its
//! edges: the caps of `stats`, the groups it names, what each `filter` predicate reads, and
//! flags that would do nothing.

use super::*;

/// `YYYY-MM-DD` of a day number (days since 1970-01-01).
fn civil(days: i64) -> String {
    let mut text = Vec::new();
    rdq_envelope::envelope::formats::push_timestamp(&mut text, days * 86_400_000);
    String::from_utf8(text[..10].to_vec()).unwrap()
}

/// A valid DEAD envelope whose queue, redrive count, creation day and error type are all
/// `i`'s own.
fn keyed_line(i: u64) -> String {
    let day = civil(10_957 + i as i64);
    format!(
        r#"{{"envelope_version":1,"id":"01HWT0D7G0Q8V9W2R4T6Y8A0B2","queue":"q{i}","handler_ref":"h","payload":"","payload_content_type":"text/plain","headers":{{}},"status":"DEAD","attempt_count":1,"redrive_count":{i},"next_attempt_at":null,"lease_expires_at":null,"created_at":"{day}T00:00:00.000Z","attempts":[{{"attempt_no":1,"started_at":"{day}T00:00:01.000Z","finished_at":"{day}T00:00:02.000Z","outcome":"PERMANENT_FAILURE","error":{{"type":"e{i}","message":"m"}}}}]}}"#
    )
}

/// Runs the release binary on a file and returns its standard output as JSON.
fn stats_json(args: &[&str]) -> Value {
    let out = release().args(args).output().unwrap();
    assert!(
        matches!(out.status.code(), Some(0)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn stats_keeps_exactly_the_first_100000_keys_in_input_order_whatever_the_jobs() {
    const CAP: u64 = 100_000;
    const LATE: u64 = 3_000;
    let dir = scratch("meanings-cap");
    let input = dir.join("keys.jsonl");
    // 100,000 distinct keys, then new keys (counted as other) interleaved with repeats of
    // kept keys (still counted as themselves), in every capped map at once.
    let mut text = String::with_capacity(50 << 20);
    for i in 0..CAP {
        text.push_str(&keyed_line(i));
        text.push('\n');
    }
    for i in 0..LATE {
        text.push_str(&keyed_line(CAP + i));
        text.push('\n');
        text.push_str(&keyed_line(i * 7));
        text.push('\n');
    }
    std::fs::write(&input, text).unwrap();
    let path = input.to_str().unwrap();
    let count = |i: u64| {
        if i.is_multiple_of(7) && i / 7 < LATE {
            2
        } else {
            1
        }
    };

    let mut reports = Vec::new();
    for (by, jobs) in [
        ("queue", "-j1"),
        ("queue", "-j2"),
        ("queue", "-j1"),
        ("error_type", "-j2"),
    ] {
        let report = stats_json(&[
            "stats", "-q", "--format", "json", "--top", "200000", "--by", by, jobs, path,
        ]);
        let prefix = if by == "queue" { "q" } else { "e" };
        let groups = report["groups"].as_array().unwrap();
        assert_eq!(groups.len() as u64, CAP, "--by {by} {jobs}");
        assert_eq!(report["groups_other"], LATE, "--by {by} {jobs}");
        for group in groups {
            let key = group["key"].as_str().unwrap();
            let i: u64 = key.strip_prefix(prefix).unwrap().parse().unwrap();
            assert!(i < CAP, "--by {by} {jobs}: {key} was kept");
            assert_eq!(group["count"], count(i), "--by {by} {jobs}: {key}");
        }
        let errors = report["top_error_types"].as_array().unwrap();
        assert_eq!(errors.len() as u64, CAP);
        assert_eq!(report["error_types_other"], LATE);
        for error in errors {
            let i: u64 = error["type"].as_str().unwrap()[1..].parse().unwrap();
            assert!(i < CAP, "{jobs}: error type e{i} was kept");
            assert_eq!(error["attempts"], count(i));
        }
        let redrives = report["redrives"].as_array().unwrap();
        assert_eq!(redrives.len() as u64, CAP);
        assert_eq!(report["redrives_other"], LATE);
        for bucket in redrives {
            let i = bucket["value"].as_u64().unwrap();
            assert!(i < CAP, "{jobs}: redrive count {i} was kept");
            assert_eq!(bucket["count"], count(i));
        }
        let days = report["arrivals_per_day"].as_array().unwrap();
        assert_eq!(days.len() as u64, CAP);
        assert_eq!(report["arrivals_other"], LATE);
        assert_eq!(days[0]["day"], "2000-01-01");
        assert_eq!(
            days[CAP as usize - 1]["day"],
            civil(10_957 + CAP as i64 - 1)
        );
        if by == "queue" {
            reports.push(report);
        }
    }
    assert!(reports.windows(2).all(|w| w[0] == w[1]), "the same report");
}

/// Runs the release binary with `args` on `stdin`.
fn rdq(args: &[&str], stdin: &str) -> Output {
    let mut child = spawn(args);
    let mut input = child.stdin.take().unwrap();
    let bytes = stdin.as_bytes().to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&bytes);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

const ID: &str = "01HWT0D7G0Q8V9W2R4T6Y8A0B2";

/// A valid v1 envelope: `status` and `attempts` as given, with the fields they need.
fn envelope(rest: &str) -> String {
    format!(
        r#"{{"envelope_version":1,"id":"{ID}","queue":"q","handler_ref":"h","payload":"","payload_content_type":"text/plain","headers":{{}},"attempt_count":0,"redrive_count":0,"created_at":"2024-05-01T12:00:00.000Z",{rest}}}"#
    )
}

const PENDING: &str = r#""status":"PENDING","next_attempt_at":"2024-05-01T12:00:00.000Z","lease_expires_at":null,"attempts":[]"#;
const IN_FLIGHT: &str = r#""status":"IN_FLIGHT","next_attempt_at":null,"lease_expires_at":"2024-05-01T12:10:00.000Z","attempts":[{"attempt_no":1,"started_at":"2024-05-01T12:00:01.000Z","finished_at":null,"outcome":null}]"#;

fn dead(error_type: &str) -> String {
    format!(
        r#""status":"DEAD","next_attempt_at":null,"lease_expires_at":null,"attempts":[{{"attempt_no":1,"started_at":"2024-05-01T12:00:01.000Z","finished_at":"2024-05-01T12:00:02.000Z","outcome":"PERMANENT_FAILURE","error":{{"type":"{error_type}","message":"m"}}}}]"#
    )
}

/// `stats --format json` of `input`'s lines, each of which must be valid.
fn stats_of(by: &str, input: &[String]) -> Value {
    let out = rdq(
        &["stats", "-q", "--format", "json", "--by", by],
        &(input.join("\n") + "\n"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The groups of a report as (key, count), keys as JSON.
fn groups(report: &Value) -> Vec<(Value, u64)> {
    let mut groups: Vec<(Value, u64)> = report["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["key"].clone(), g["count"].as_u64().unwrap()))
        .collect();
    groups.sort_by_key(|(key, _)| key.to_string());
    groups
}

#[test]
fn stats_by_outcome_tells_an_attempt_in_flight_from_no_attempt() {
    let report = stats_of(
        "outcome",
        &[envelope(IN_FLIGHT), envelope(PENDING), envelope(&dead("x"))],
    );
    assert_eq!(
        groups(&report),
        [
            (Value::from("(in flight)"), 1),
            (Value::from("(no attempts)"), 1),
            (Value::from("PERMANENT_FAILURE"), 1),
        ]
    );
}

#[test]
fn stats_by_error_type_tells_no_error_from_an_error_type_named_none() {
    let input = [
        envelope(&dead("(none)")),
        envelope(PENDING),
        envelope(IN_FLIGHT),
        envelope(&dead("(other)")),
    ];
    let report = stats_of("error_type", &input);
    assert_eq!(
        groups(&report),
        [
            (Value::from("(none)"), 1),
            (Value::from("(other)"), 1),
            (Value::Null, 2),
        ]
    );
    // The table too: the real types are quoted, no error is (none).
    let out = rdq(
        &["stats", "-q", "--by", "error_type"],
        &(input.join("\n") + "\n"),
    );
    let table = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<&str> = table
        .lines()
        .filter_map(|row| row.split("  ").next())
        .collect();
    assert!(rows.contains(&"(none)"), "{table}");
    assert!(rows.contains(&"\"(none)\""), "{table}");
    assert!(rows.contains(&"\"(other)\""), "{table}");
}

/// `filter ARGS` of `input`: exit status and the lines emitted.
fn filter(args: &[&str], input: &[String]) -> (Option<i32>, String, String) {
    let mut all = vec!["filter", "-q"];
    all.extend_from_slice(args);
    let out = rdq(&all, &(input.join("\n") + "\n"));
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn filter_header_reads_origin_only_in_version_2() {
    // v1: `origin` is an unknown field, not the moved headers.
    let v1_origin = envelope(PENDING).replacen(
        r#""headers":{}"#,
        r#""headers":{},"origin":{"source":"api"}"#,
        1,
    );
    let v1_header =
        envelope(PENDING).replacen(r#""headers":{}"#, r#""headers":{"rdq.source":"api"}"#, 1);
    let migrated = rdq(&["migrate", "-q", "--to", "2"], &(v1_header.clone() + "\n"));
    assert_eq!(migrated.status.code(), Some(0));
    let v2 = String::from_utf8(migrated.stdout)
        .unwrap()
        .trim_end()
        .to_owned();
    assert!(v2.contains(r#""origin":{"source":"api"}"#), "{v2}");
    let input = [v1_origin, v1_header.clone(), v2.clone()];
    let (code, out, err) = filter(&["--header", "rdq.source=api"], &input);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, format!("{v1_header}\n{v2}\n"));
}

#[test]
fn filter_payload_contains_never_matches_a_claim_checked_envelope() {
    let claim_checked = format!(
        r#"{{"envelope_version":2,"id":"{ID}","queue":"q","handler_ref":"h","payload_content_type":"text/plain","payload_ref":{{"uri":"s3://bucket/key","sha256":"{}","size":5}},"headers":{{}},"origin":{{}},"status":"PENDING","attempt_count":0,"redrive_count":0,"next_attempt_at":"2024-05-01T12:00:00.000Z","lease_expires_at":null,"created_at":"2024-05-01T12:00:00.000Z","attempts":[]}}"#,
        "0".repeat(64)
    );
    let empty_payload = envelope(PENDING);
    let input = [claim_checked, empty_payload.clone()];
    let (code, out, err) = filter(&["--payload-contains", ""], &input);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, format!("{empty_payload}\n"));
}

#[test]
fn filter_predicates_that_no_valid_envelope_can_match_are_usage_errors() {
    let dir = scratch("meanings-never");
    let output = dir.join("out.jsonl");
    let o = output.to_str().unwrap();
    let lower = ID.to_ascii_lowercase();
    let cases: [(&[&str], &str); 12] = [
        (
            &["--id", &lower],
            "IDs are upper-case: 01HWT0D7G0Q8V9W2R4T6Y8A0B2",
        ),
        (
            &["--id", "01HWT0D7G0Q8V9W2R4T6Y8A0B"],
            "not a canonical ULID",
        ),
        (
            &["--id", "81HWT0D7G0Q8V9W2R4T6Y8A0B2"],
            "not a canonical ULID",
        ),
        (&["--queue", "Billing.*"], "names are lower-case: billing.*"),
        (&["--handler", "a b"], "' '"),
        (&["--queue", ""], "--queue"),
        (&["--error-type", ""], "--error-type"),
        (&["--last-error-type", ""], "--last-error-type"),
        (&["--header", "=x"], "KEY is empty"),
        (
            &[
                "--since",
                "2024-05-02T00:00:00.000Z",
                "--until",
                "2024-05-02T00:00:00.000Z",
            ],
            "not before --until",
        ),
        (
            &["--min-attempts", "3", "--max-attempts", "2"],
            "--min-attempts 3",
        ),
        (&["--min-redrives", "4294967296"], "at most 4294967295"),
    ];
    for (args, message) in cases {
        let mut all = vec!["-o", o];
        all.extend_from_slice(args);
        let (code, _, err) = filter(&all, &[envelope(PENDING)]);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains(message), "{args:?}: {err}");
        assert!(!output.exists(), "{args:?}: no output is created");
    }
    // The edges that can match still run.
    let (code, out, err) = filter(
        &[
            "--id",
            ID,
            "--queue",
            "q*",
            "--min-redrives",
            "4294967295",
            "--invert",
        ],
        &[envelope(PENDING)],
    );
    assert_eq!((code, out.lines().count()), (Some(0), 1), "{err}");
}

#[test]
fn flags_that_would_do_nothing_are_usage_errors_before_any_output() {
    let dir = scratch("meanings-inert");
    let output = dir.join("out");
    let o = output.to_str().unwrap();
    let cases: [(&[&str], &str); 11] = [
        (
            &["validate", "-q", "--progress"],
            "--progress and --quiet: --quiet hides the progress bar",
        ),
        (
            &["filter", "--queue-limit", "a=1", "--queue-limit", "a=2"],
            "--queue-limit a=...: given twice for the same queue",
        ),
        (
            &["migrate", "--chokaq-zombie-timeout", "60"],
            "--chokaq-zombie-timeout goes with --from chokaq",
        ),
        (
            &[
                "migrate",
                "--from",
                "rdq",
                "--chokaq-max-payload-bytes",
                "10",
            ],
            "--chokaq-max-payload-bytes goes with --from chokaq",
        ),
        (
            &["migrate", "--chokaq-table", "dlq"],
            "--chokaq-table goes with --from chokaq",
        ),
        (
            &[
                "gen",
                "--count",
                "1",
                "--format",
                "chokaq",
                "--version",
                "1",
            ],
            "--version goes with --format rdq",
        ),
        (
            &[
                "gen",
                "--count",
                "1",
                "--format",
                "chokaq",
                "--version",
                "2",
            ],
            "--version goes with --format rdq",
        ),
        (
            &[
                "gen",
                "--count",
                "1",
                "--format",
                "chokaq",
                "--invalid-rate",
                "0.5",
            ],
            "--invalid-rate goes with --format rdq",
        ),
        (
            &["validate", "--submit", "--warnings"],
            "--warnings does not go with --submit",
        ),
        (
            &["stats", "--line-buffered"],
            "--line-buffered does not go with stats",
        ),
        (
            &["filter", "--count", "--line-buffered"],
            "--line-buffered does not go with --count",
        ),
    ];
    for (args, message) in cases {
        let mut all = args.to_vec();
        all.extend_from_slice(&["-o", o]);
        let out = rdq(&all, &(envelope(PENDING) + "\n"));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
        assert!(!output.exists(), "{args:?}: no output is created");
    }
    // The same flags where they do something still run, their defaults included.
    for args in [
        &["gen", "--count", "1", "--format", "chokaq"][..],
        &[
            "gen",
            "--count",
            "1",
            "--version",
            "1",
            "--invalid-rate",
            "0",
        ],
        &["validate", "--submit"],
        &["filter", "--line-buffered"],
    ] {
        let mut all = args.to_vec();
        if all[0] != "gen" {
            all.push("-q");
        }
        let out = rdq(&all, "");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    }
    let rows = rdq(&["gen", "--count", "3", "--format", "chokaq"], "");
    let defaults = rdq(
        &["migrate", "-q", "--from", "chokaq"],
        &String::from_utf8(rows.stdout.clone()).unwrap(),
    );
    let explicit = rdq(
        &[
            "migrate",
            "-q",
            "--from",
            "chokaq",
            "--chokaq-zombie-timeout",
            "600",
            "--chokaq-max-payload-bytes",
            "1000000",
        ],
        &String::from_utf8(rows.stdout).unwrap(),
    );
    assert!(
        matches!(defaults.status.code(), Some(0 | 1)),
        "{}",
        stderr(&defaults)
    );
    assert_eq!(defaults.status.code(), explicit.status.code());
    assert!(!defaults.stdout.is_empty());
    assert_eq!(defaults.stdout, explicit.stdout);
}

/// The summary counts a warning on every valid line: `filter` once counted only the lines it
/// kept, so `--invert` (or any predicate) hid the warnings of the lines it left out.
#[test]
fn filter_counts_the_warnings_of_the_lines_it_filters_out() {
    // The ID's time and created_at differ: ID_TIME_MISMATCH on a valid line.
    let warned = VALID.trim_end().replace(
        r#""created_at":"2024-05-01T12:00:00.000Z""#,
        r#""created_at":"2024-05-01T12:00:05.000Z""#,
    );
    let input = format!("{warned}\n{warned}\n");
    let dir = scratch("meanings-filter-warnings");
    let summary = dir.join("s.json");
    for (args, emitted) in [
        (&["--status", "DEAD"][..], 2),
        (&["--invert", "--status", "DEAD"], 0),
    ] {
        let mut all = vec![
            "filter",
            "-q",
            "-o",
            "/dev/null",
            "--summary",
            summary.to_str().unwrap(),
        ];
        all.extend_from_slice(args);
        let out = rdq(&all, &input);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let books: Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
        assert_eq!(books["emitted"], emitted, "{args:?}");
        assert_eq!(
            books["warnings_by_code"]["ID_TIME_MISMATCH"], 2,
            "{args:?}: {books}"
        );
    }
}
