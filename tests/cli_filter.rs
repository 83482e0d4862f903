//! Golden tests of `rdq-envelope filter`: each predicate against an expectation computed here,
//! line by line, from the same valid lines; `--invert`, `--count`, usage errors, and the same
//! bytes for any `-j`.

use rdq_envelope::json::{JsonParser, Value};

mod common;
use common::{run, stderr, valid_lines};

/// 600 `gen` lines of both versions, a few of them invalid.
fn input() -> Vec<u8> {
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
fn expected(valid: &[String], keep: impl Fn(Value<'_>) -> bool) -> String {
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

fn text<'a>(v: Value<'a>, key: &str) -> &'a str {
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
        (&["filter", "--until", "2024-05-01"], "--until"),
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
