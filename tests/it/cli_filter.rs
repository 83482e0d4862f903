//! Golden tests of `rdq-envelope filter`: each predicate against an expectation computed here,
//! line by line, from the same valid lines; `--invert`, `--count`, usage errors, and the same
//! bytes for any `-j`.

use rdq_envelope::json::{JsonParser, Value};

use crate::common;
#[path = "cli_filter/where_jq.rs"]
mod where_jq;
use common::{run, stderr, tool_or_skip, valid_lines};

/// 600 `gen` lines of both versions, a few of them invalid.
pub(crate) fn input() -> Vec<u8> {
    let mut all = Vec::new();
    for version in ["1", "2"] {
        let out = run(
            &[
                "gen",
                "--count",
                "300",
                "--seed",
                "12",
                "--version",
                version,
                "--invalid-rate",
                "0.05",
            ],
            b"",
        );
        all.extend_from_slice(&out.stdout);
    }
    all
}

/// The lines of `valid` for which `keep` holds, as filter should write them.
pub(crate) fn expected(valid: &[String], keep: impl Fn(Value<'_>) -> bool) -> String {
    let mut parser = JsonParser::new();
    let mut out = String::new();
    for line in valid {
        let doc = parser.parse(line.as_bytes(), &mut Vec::new()).unwrap();
        if keep(doc.root()) {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

pub(crate) fn text<'a>(v: Value<'a>, key: &str) -> &'a str {
    v.get(key).and_then(|x| x.as_str()).unwrap_or("")
}

fn error_types(v: Value<'_>) -> Vec<String> {
    v.get("attempts")
        .map(|a| {
            a.elements()
                .filter_map(|x| x.get("error")?.get("type")?.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn every_predicate_selects_what_it_says() {
    let input = input();
    let valid = valid_lines(&input);
    assert!(valid.len() > 500);
    type Keep = Box<dyn Fn(Value<'_>) -> bool>;
    let cases: Vec<(Vec<&str>, Keep)> = vec![
        (
            vec!["--queue", "billing.*"],
            Box::new(|v| text(v, "queue").starts_with("billing.")),
        ),
        (
            vec!["--handler", "*.send", "--handler", "order.shi?"],
            Box::new(|v| {
                let h = text(v, "handler_ref");
                h.ends_with(".send") || h == "order.ship"
            }),
        ),
        (
            vec!["--status", "PENDING", "--status", "SUCCEEDED"],
            Box::new(|v| matches!(text(v, "status"), "PENDING" | "SUCCEEDED")),
        ),
        (
            vec!["--error-type", "java.net.*"],
            Box::new(|v| error_types(v).iter().any(|t| t.starts_with("java.net."))),
        ),
        (
            vec!["--last-error-type", "rdq.LeaseExpired"],
            Box::new(|v| {
                let last = v.get("attempts").and_then(|a| a.last_element());
                last.and_then(|a| a.get("error")?.get("type")?.as_str()) == Some("rdq.LeaseExpired")
            }),
        ),
        (
            vec!["--outcome", "PERMANENT_FAILURE"],
            Box::new(|v| {
                let last = v.get("attempts").and_then(|a| a.last_element());
                last.and_then(|a| a.get("outcome")?.as_str()) == Some("PERMANENT_FAILURE")
            }),
        ),
        (
            vec![
                "--since",
                "2024-05-01T12:10:00.000Z",
                "--until",
                "2024-05-01T12:20:00.000Z",
            ],
            Box::new(|v| {
                let c = text(v, "created_at");
                ("2024-05-01T12:10:00.000Z"..="2024-05-01T12:19:59.999Z").contains(&c)
            }),
        ),
        (
            vec![
                "--header",
                "rdq.source=checkout-*",
                "--header",
                "tenant=acme-*",
            ],
            Box::new(|v| {
                let source = v
                    .get("headers")
                    .and_then(|h| h.get("rdq.source"))
                    .or_else(|| v.get("origin").and_then(|o| o.get("source")))
                    .and_then(|s| s.as_str())
                    .unwrap_or("");
                let tenant = v
                    .get("headers")
                    .and_then(|h| h.get("tenant"))
                    .and_then(|s| s.as_str())
                    .unwrap_or("");
                source.starts_with("checkout-") && tenant.starts_with("acme-")
            }),
        ),
        (
            vec!["--min-attempts", "3", "--max-attempts", "4"],
            Box::new(|v| (3..=4).contains(&v.get("attempts").map_or(0, |a| a.len()))),
        ),
        (
            vec!["--min-redrives", "1"],
            Box::new(|v| {
                v.get("redrive_count")
                    .and_then(|r| r.as_integer())
                    .unwrap_or(0)
                    >= 1
            }),
        ),
        (
            vec!["--payload-contains", "Köln"],
            Box::new(|v| {
                let decoded = base64_simd::STANDARD
                    .decode_to_vec(text(v, "payload"))
                    .unwrap_or_default();
                String::from_utf8_lossy(&decoded).contains("Köln")
            }),
        ),
        (
            vec!["--status", "DEAD", "--invert"],
            Box::new(|v| text(v, "status") != "DEAD"),
        ),
    ];
    for (args, keep) in cases {
        let want = expected(&valid, keep);
        assert!(
            !want.is_empty(),
            "{args:?} selects nothing: a test that cannot fail"
        );
        let mut all = vec!["filter", "-q"];
        all.extend(&args);
        let out = run(&all, &input);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{args:?}: invalid lines were rejected"
        );
        assert!(String::from_utf8(out.stdout).unwrap() == want, "{args:?}");

        all.push("--count");
        let counted = run(&all, &input);
        assert_eq!(
            String::from_utf8(counted.stdout).unwrap(),
            format!("{}\n", want.lines().count()),
            "{args:?} --count"
        );
    }
    let id = valid[7].split("\"id\":\"").nth(1).unwrap()[..26].to_owned();
    let out = run(&["filter", "-q", "--id", &id], &input);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("{}\n", valid[7])
    );
}

#[test]
fn the_books_count_what_was_filtered_out() {
    let input = input();
    let out = run(
        &[
            "filter",
            "-q",
            "--status",
            "DEAD",
            "--summary",
            "/dev/stderr",
            "-o",
            "/dev/null",
        ],
        &input,
    );
    let books: serde_json::Value = serde_json::from_str(stderr(&out).trim()).unwrap();
    let n = |k: &str| books[k].as_u64().unwrap();
    assert_eq!(n("lines"), 600);
    assert!(n("filtered_out") > 0 && n("emitted") > 0 && n("rejected") > 0);
    assert_eq!(n("valid"), n("emitted") + n("filtered_out"));
    assert_eq!(
        n("lines"),
        n("blank") + n("emitted") + n("rejected") + n("filtered_out")
    );
}

#[test]
fn bad_predicates_are_usage_errors_before_any_input_is_read() {
    for (args, flag) in [
        (&["filter", "--status", "dying"][..], "--status"),
        (&["filter", "--outcome", "TIMEOUT"], "--outcome"),
        (&["filter", "--since", "yesterday"], "--since"),
        (&["filter", "--until", "2024-05-32"], "--until"),
        (&["filter", "--failed-since", "last week"], "--failed-since"),
        (
            &["filter", "--failed-until", "2024-05-01T12:00:00"],
            "--failed-until",
        ),
        (
            &["filter", "--fingerprint", "0123456789ag"],
            "--fingerprint",
        ),
        (&["filter", "--error-message", "("], "--error-message"),
        (&["filter", "--where", ".queue =="], "--where"),
        (&["filter", "--where", "no_such_function(1)"], "--where"),
        (&["filter", "--limit", "many"], "--limit"),
        (&["filter", "--header", "no-equals"], "--header"),
        (&["filter", "--min-attempts", "many"], "--min-attempts"),
    ] {
        // A path that does not exist: the predicate must fail first.
        let mut all = args.to_vec();
        all.push("/nonexistent/input.jsonl");
        let out = run(&all, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(flag), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn every_job_count_filters_the_same_bytes() {
    let input = input();
    let one = run(&["filter", "-q", "-j1", "--queue", "*.*"], &input);
    let two = run(&["filter", "-q", "-j2", "--queue", "*.*"], &input);
    assert!(one.stdout == two.stdout && !one.stdout.is_empty());
}

/// An interactive tail: a matching line comes out while the input is still open.
#[test]
fn line_buffered_matches_arrive_while_the_input_is_open() {
    use std::io::Write;
    let valid = valid_lines(&input());
    let mut child = common::spawn(&["filter", "-q", "--line-buffered", "--queue", "*"]);
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{}", valid[0]).unwrap();
    stdin.flush().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let got = common::read_line(&mut stdout);
    assert_eq!(got, format!("{}\n", valid[0]).into_bytes());
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

/// `n` `gen` lines of version 1 (several pipeline chunks), a few of them invalid.
fn big_input(n: &str) -> Vec<u8> {
    let args = [
        "gen",
        "--count",
        n,
        "--seed",
        "19",
        "--invalid-rate",
        "0.02",
    ];
    run(&args, b"").stdout
}

/// The last attempt that has an error: its type, message and the attempt.
fn last_error(v: Value<'_>) -> Option<(String, String)> {
    let attempts = v.get("attempts")?;
    let last = attempts
        .elements()
        .filter(|a| a.get("error").and_then(|e| e.get("type")).is_some())
        .last()?;
    let error = last.get("error")?;
    Some((
        text(error, "type").to_owned(),
        text(error, "message").to_owned(),
    ))
}

fn ms(text: &str) -> i64 {
    rdq_envelope::envelope::formats::parse_timestamp(text).unwrap()
}

/// The last attempt's `finished_at`, in milliseconds.
fn last_finished(v: Value<'_>) -> Option<i64> {
    let last = v.get("attempts")?.elements().last()?;
    Some(ms(last.get("finished_at")?.as_str()?))
}

#[test]
fn the_triage_predicates_select_what_they_say() {
    use rdq_envelope::ops::Fingerprint;
    let input = input();
    let valid = valid_lines(&input);
    let fingerprint = |v: Value<'_>| last_error(v).map(|(t, m)| Fingerprint::of(&t, &m));
    let mut parser = JsonParser::new();
    let some = fingerprint(
        parser
            .parse(valid[3].as_bytes(), &mut Vec::new())
            .unwrap()
            .root(),
    )
    .expect("the fourth line has an error");
    let other = Fingerprint::of("java.lang.NullPointerException", "");
    let wanted = [some, other];
    let lease = regex::Regex::new(r"heartbeat \(worker w-1[0-9]\)").unwrap();
    let messages = move |v: Value<'_>| -> Vec<String> {
        v.get("attempts")
            .map(|a| {
                a.elements()
                    .filter_map(|x| x.get("error")?.get("message")?.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (since, until) = (
        ms("2024-05-03T00:00:00.000Z"),
        ms("2024-05-03T12:00:00.000Z"),
    );
    let (some_hex, other_hex) = (some.to_string(), other.to_string().to_uppercase());
    type Keep = Box<dyn Fn(Value<'_>) -> bool>;
    let cases: Vec<(Vec<&str>, Keep)> = vec![
        (
            vec!["--fingerprint", &some_hex, "--fingerprint", &other_hex],
            Box::new(move |v| fingerprint(v).is_some_and(|f| wanted.contains(&f))),
        ),
        (
            vec!["--error-message", r"heartbeat \(worker w-1[0-9]\)"],
            Box::new(move |v| messages(v).iter().any(|m| lease.is_match(m))),
        ),
        (
            vec!["--error-message", "^Cannot", "--error-message", "東京"],
            Box::new(move |v| {
                messages(v)
                    .iter()
                    .any(|m| m.starts_with("Cannot") || m.contains("東京"))
            }),
        ),
        (
            vec![
                "--failed-since",
                "2024-05-03",
                "--failed-until",
                "2024-05-03T14:00:00+02:00",
            ],
            Box::new(move |v| last_finished(v).is_some_and(|f| since <= f && f < until)),
        ),
        (
            vec!["--failed-since", "2024-05-03T00:00:00.000Z"],
            Box::new(move |v| last_finished(v).is_some_and(|f| since <= f)),
        ),
        (
            vec!["--since", "2024-05-01T13:00:00+01:00"],
            Box::new(|v| ms(text(v, "created_at")) >= ms("2024-05-01T12:00:00.000Z")),
        ),
        (
            vec!["--where", r#".queue == "notify.email""#, "--status", "DEAD"],
            Box::new(|v| text(v, "queue") == "notify.email" && text(v, "status") == "DEAD"),
        ),
    ];
    for (args, keep) in cases {
        let want = expected(&valid, keep);
        assert!(!want.is_empty(), "{args:?} selects something");
        let mut all = vec!["filter", "-q"];
        all.extend_from_slice(&args);
        let out = run(&all, &input);
        assert_eq!(String::from_utf8(out.stdout).unwrap(), want, "{args:?}");
    }
}

/// jq, when it is installed (CI has it; elsewhere the test says it is skipped).
fn jq() -> bool {
    tool_or_skip(&["jq"], "--where compared with jq").is_some()
}

/// The IDs of the envelopes `jq 'select(EXPR)'` keeps of `lines`.
fn jq_select(expr: &str, lines: &[u8]) -> Vec<String> {
    use std::io::Write;
    let mut child = std::process::Command::new("jq")
        .args(["-r", &format!("select({expr}) | .id")])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let bytes = lines.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&bytes));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn ids(lines: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(lines)
        .lines()
        .map(|l| l.split("\"id\":\"").nth(1).unwrap()[..26].to_owned())
        .collect()
}

#[test]
fn where_keeps_what_jq_select_keeps() {
    if !jq() {
        return;
    }
    let input = input();
    let valid = valid_lines(&input).join("\n").into_bytes();
    let expressions = [
        r#".queue == "notify.email""#,
        r#".status == "DEAD" and .redrive_count > 0"#,
        "(.attempts | length) >= 3",
        r#".attempts[-1].error.type == "java.net.SocketTimeoutException""#,
        r#"any(.attempts[]; .outcome == "LEASE_EXPIRED")"#,
        ".headers.tenant",
        r#".headers | has("traceparent")"#,
        r#".attempts | map(.error.message // "") | join(" ") | test("timed out")"#,
        r#".created_at >= "2024-05-01T12:10:00.000Z""#,
        r#"[.attempts[] | select(.error != null)] | length > 1"#,
        r#".queue | startswith("billing.")"#,
        ".payload | length > 1200",
        r#".attempts[0].error.type | ascii_downcase | contains("timeout")"#,
        "(.attempt_count + .redrive_count) % 2 == 0",
    ];
    for expr in expressions {
        let want = jq_select(expr, &valid);
        let out = run(&["filter", "-q", "--where", expr], &input);
        assert_eq!(ids(&out.stdout), want, "{expr}");
        assert!(
            !want.is_empty() && want.len() < 600,
            "{expr}: {}",
            want.len()
        );
    }
    // A type error on some envelopes (no error to lower-case): counted, not kept.
    let expr = ".attempts[0].error.type | ascii_downcase";
    let out = run(
        &["filter", "-q", "--where", expr, "--summary", "/dev/stderr"],
        &input,
    );
    let books: serde_json::Value = serde_json::from_str(stderr(&out).trim()).unwrap();
    assert_eq!(ids(&out.stdout), jq_select(expr, &valid));
    assert!(books["where_errors"].as_u64().unwrap() > 0, "{books}");
}

#[test]
fn limit_keeps_the_first_matches_for_any_job_count() {
    let input = big_input("3000");
    let all = run(&["filter", "-q", "--status", "DEAD"], &input).stdout;
    let matches = all.split_inclusive(|&b| b == b'\n').count();
    assert!(matches > 600, "{matches}");
    for limit in [1, 7, 500, matches, matches + 5] {
        let want: Vec<u8> = all
            .split_inclusive(|&b| b == b'\n')
            .take(limit)
            .flatten()
            .copied()
            .collect();
        for jobs in ["1", "2", "3", "8"] {
            let n = limit.to_string();
            let args = [
                "filter",
                "-q",
                "--status",
                "DEAD",
                "--limit",
                &n,
                "-j",
                jobs,
                "--summary",
                "/dev/stderr",
            ];
            let out = run(&args, &input);
            assert_eq!(out.stdout, want, "--limit {limit} -j {jobs}");
            let books: serde_json::Value = serde_json::from_str(stderr(&out).trim()).unwrap();
            let n = |k: &str| books[k].as_u64().unwrap();
            assert_eq!(n("emitted"), limit.min(matches) as u64);
            assert_eq!(n("valid"), n("emitted") + n("filtered_out"));
            assert_eq!(
                n("lines"),
                n("blank") + n("emitted") + n("rejected") + n("filtered_out")
            );
            assert_eq!(
                books["limit_reached"],
                limit < matches,
                "--limit {limit} -j {jobs}"
            );
            let counted = run(
                &[
                    "filter",
                    "-q",
                    "--status",
                    "DEAD",
                    "--count",
                    "--limit",
                    &limit.to_string(),
                    "-j",
                    jobs,
                ],
                &input,
            );
            assert_eq!(stdout_text(&counted), format!("{}\n", limit.min(matches)));
        }
    }
    // Cut early: far fewer lines read than the input has.
    let out = run(
        &[
            "filter",
            "-q",
            "--limit",
            "1",
            "--summary",
            "/dev/stderr",
            "-j1",
        ],
        &input,
    );
    let books: serde_json::Value = serde_json::from_str(stderr(&out).trim()).unwrap();
    assert!(books["lines"].as_u64().unwrap() < 1500, "{books}");
}

pub(crate) fn stdout_text(out: &std::process::Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// A valid DEAD envelope whose timestamps (created_at, its one attempt's start and end) are all
/// `at`, with the ID ending in `tail`.
pub(crate) fn envelope_at(tail: char, at: &str) -> String {
    format!(
        r#"{{"envelope_version":1,"id":"01HWT0D7G0Q8V9W2R4T6Y8A0B{tail}","queue":"billing.invoices","handler_ref":"invoice.render","payload":"eyJuIjoxfQ==","payload_content_type":"application/json","headers":{{}},"status":"DEAD","attempt_count":1,"redrive_count":0,"next_attempt_at":null,"lease_expires_at":null,"created_at":"{at}","attempts":[{{"attempt_no":1,"started_at":"{at}","finished_at":"{at}","outcome":"PERMANENT_FAILURE","error":{{"type":"E","message":"boom"}}}}]}}"#
    )
}
