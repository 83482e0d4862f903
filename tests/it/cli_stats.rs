//! Golden tests of `rdq-envelope stats`: the JSON report against figures computed here with
//! serde_json from the lines `validate` keeps, for every `--by`; the same report for any `-j`;
//! the table form; the books and the exit status.

use std::collections::{BTreeMap, HashMap};

use rdq_envelope::json::{JsonParser, Value as JsonValue};
use serde_json::{json, Value};

use crate::common;
use common::{gen_lines, run, stderr, stdout};

/// 800 `gen` lines of both versions, a few invalid, and blank lines.
fn input() -> Vec<u8> {
    let mut all = Vec::new();
    for (version, seed) in [(1, 31), (2, 32)] {
        all.extend_from_slice(&gen_lines(400, seed, Some(version), 0.05));
        all.extend_from_slice(b"\n  \n");
    }
    all
}

/// The members stats reads of each valid line, as serde_json values (the lines themselves hold
/// numbers such as 1e400 in unknown members, which serde_json refuses).
fn valid_envelopes(input: &[u8]) -> Vec<Value> {
    let mut parser = JsonParser::new();
    let mut scratch = Vec::new();
    common::valid_lines(input)
        .iter()
        .map(|line| {
            let doc = parser.parse(line.as_bytes(), &mut scratch).unwrap();
            let root = doc.root();
            let text = |v: Option<JsonValue<'_>>| v.and_then(|v| v.as_str()).map(str::to_owned);
            let attempts: Vec<Value> = root
                .get("attempts")
                .unwrap()
                .elements()
                .map(|a| {
                    let error_type = text(a.get("error").and_then(|e| e.get("type")));
                    json!({"outcome": text(a.get("outcome")), "error": {"type": error_type}})
                })
                .collect();
            json!({
                "queue": text(root.get("queue")),
                "handler_ref": text(root.get("handler_ref")),
                "status": text(root.get("status")),
                "created_at": text(root.get("created_at")),
                "redrive_count": root.get("redrive_count").unwrap().as_integer().unwrap() as u64,
                "attempts": attempts,
            })
        })
        .collect()
}

fn stats_json(args: &[&str], input: &[u8]) -> Value {
    let mut all = vec!["stats", "--format", "json", "-q"];
    all.extend_from_slice(args);
    let out = run(&all, input);
    assert_eq!(out.status.code(), Some(1), "some lines are invalid");
    serde_json::from_slice(&out.stdout).unwrap()
}

fn last_attempt(envelope: &Value) -> Option<&Value> {
    envelope["attempts"].as_array().and_then(|a| a.last())
}

/// The group of an envelope, as `--by` names it (docs/cli.md#stats); `None` (a null key) for no
/// error type.
fn group(envelope: &Value, by: &str) -> Option<String> {
    let text = |v: &Value| v.as_str().map(str::to_owned);
    let found = match by {
        "queue" => text(&envelope["queue"]),
        "handler" => text(&envelope["handler_ref"]),
        "status" => text(&envelope["status"]),
        "error_type" => return last_attempt(envelope).and_then(|a| text(&a["error"]["type"])),
        "outcome" => Some(match last_attempt(envelope) {
            None => "(no attempts)".into(),
            Some(a) => text(&a["outcome"]).unwrap_or_else(|| "(in flight)".into()),
        }),
        "day" => envelope["created_at"].as_str().map(|t| t[..10].to_owned()),
        _ => unreachable!(),
    };
    Some(found.unwrap())
}

/// Counts sorted as the report sorts them: largest first, then by key.
fn ranked<K: Ord>(counts: HashMap<K, u64>) -> Vec<(K, u64)> {
    let mut ranked: Vec<_> = counts.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    ranked
}

#[test]
fn every_figure_matches_one_computed_independently() {
    let input = input();
    let valid = valid_envelopes(&input);
    assert!(valid.len() > 700, "most gen lines are valid");
    let lines = input.split(|&b| b == b'\n').count() as u64 - 1;

    for by in ["queue", "handler", "status", "error_type", "outcome", "day"] {
        let report = stats_json(&["--by", by, "--top", "5"], &input);
        let mut groups = HashMap::new();
        for envelope in &valid {
            *groups.entry(group(envelope, by)).or_insert(0u64) += 1;
        }
        let groups: Vec<Value> = ranked(groups)
            .into_iter()
            .map(|(key, count)| json!({"key": key, "count": count}))
            .collect();
        assert_eq!(report["groups"], Value::Array(groups), "--by {by}");
        assert_eq!(report["by"], by);
        assert_eq!(report["envelopes"], valid.len() as u64);
        assert_eq!(report["lines"], lines);
        assert_eq!(report["blank"], 4);
        assert_eq!(
            report["rejected"].as_u64().unwrap() + valid.len() as u64 + 4,
            lines
        );
    }

    let report = stats_json(&[], &input);
    let histogram = |values: Vec<u64>| -> Value {
        let mut counts = BTreeMap::new();
        for v in values {
            *counts.entry(v).or_insert(0u64) += 1;
        }
        counts
            .into_iter()
            .map(|(value, count)| json!({"value": value, "count": count}))
            .collect()
    };
    let attempts = valid
        .iter()
        .map(|e| e["attempts"].as_array().unwrap().len() as u64);
    assert_eq!(report["attempts"], histogram(attempts.collect()));
    let redrives = valid.iter().map(|e| e["redrive_count"].as_u64().unwrap());
    assert_eq!(report["redrives"], histogram(redrives.collect()));

    // Timestamps of the strict profile sort as text.
    let created: Vec<&str> = valid
        .iter()
        .map(|e| e["created_at"].as_str().unwrap())
        .collect();
    assert_eq!(
        report["created_at"],
        json!({"first": created.iter().min().unwrap(), "last": created.iter().max().unwrap()})
    );
    let mut days = BTreeMap::new();
    for c in &created {
        *days.entry(&c[..10]).or_insert(0u64) += 1;
    }
    let days: Vec<Value> = days
        .into_iter()
        .map(|(day, count)| json!({"day": day, "count": count}))
        .collect();
    assert_eq!(report["arrivals_per_day"], Value::Array(days));

    let mut errors: HashMap<String, (u64, u64)> = HashMap::new();
    for envelope in &valid {
        let attempts = envelope["attempts"].as_array().unwrap();
        for (i, attempt) in attempts.iter().enumerate() {
            if let Some(kind) = attempt["error"]["type"].as_str() {
                let entry = errors.entry(kind.to_owned()).or_default();
                entry.0 += 1;
                entry.1 += u64::from(i + 1 == attempts.len());
            }
        }
    }
    let distinct = errors.len() as u64;
    let mut errors: Vec<_> = errors.into_iter().collect();
    errors.sort_by(|a, b| (b.1 .0, b.1 .1).cmp(&(a.1 .0, a.1 .1)).then(a.0.cmp(&b.0)));
    let top: Vec<Value> = errors
        .iter()
        .take(10)
        .map(|(kind, (attempts, last))| {
            json!({"type": kind, "attempts": attempts, "last_attempt": last})
        })
        .collect();
    assert_eq!(report["top_error_types"], Value::Array(top));
    assert_eq!(report["distinct_error_types"], distinct);
    assert_eq!(report["groups_other"], 0);
    assert_eq!(report["error_types_other"], 0);
    for other in ["attempts_other", "redrives_other", "arrivals_other"] {
        assert_eq!(report[other], 0, "{other}");
    }
}

#[test]
fn the_report_is_the_same_for_any_worker_count() {
    let input = input();
    let one = run(&["stats", "--format", "json", "-q", "-j1"], &input);
    for jobs in ["2", "3", "8"] {
        let many = run(&["stats", "--format", "json", "-q", "-j", jobs], &input);
        assert_eq!(one.stdout, many.stdout, "-j {jobs}");
        let table_one = run(&["stats", "-q", "-j1", "--by", "day"], &input);
        let table_many = run(&["stats", "-q", "-j", jobs, "--by", "day"], &input);
        assert_eq!(table_one.stdout, table_many.stdout, "-j {jobs}");
    }
}

#[test]
fn the_table_form_draws_aligned_tables_with_bars_and_no_colour_in_a_pipe() {
    let sample = std::fs::read("samples/dlq-sample.jsonl.zst").unwrap();
    let out = run(&["stats", "--by", "status"], &sample);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        !text.contains('\x1b'),
        "no colour when not a terminal:\n{text}"
    );
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("293 envelopes in 300 lines (7 rejected, 0 blank)")
    );
    assert!(lines.next().unwrap().starts_with("created_at 2024-05-01T"));
    for heading in [
        "status",
        "attempts  envelopes",
        "redrives  envelopes",
        "error type",
        "arrivals per day  envelopes",
    ] {
        assert!(
            text.lines().any(|l| l.starts_with(heading)),
            "{heading:?} in\n{text}"
        );
    }
    // Every row of a table is as wide as its heading up to the bar: columns line up.
    let status_table: Vec<&str> = text
        .split("\n\n")
        .find(|t| t.starts_with("status"))
        .unwrap()
        .lines()
        .collect();
    let heading_width = status_table[0].chars().count();
    for row in &status_table[1..] {
        let before_bar = row.trim_end_matches(|c: char| c == ' ' || ('█'..='▏').contains(&c));
        assert_eq!(before_bar.chars().count(), heading_width, "{row:?}");
        assert!(row.contains('█') || row.contains('▏'), "{row:?} has a bar");
    }
    assert!(stderr(&out).contains("300 lines"));
}

#[test]
fn books_balance_and_rejects_are_written() {
    let dir = common::scratch("stats-books");
    let summary = dir.join("summary.json");
    let rejects = dir.join("rejects.jsonl");
    let input = input();
    let out = run(
        &[
            "stats",
            "-q",
            "-o",
            "/dev/null",
            "--summary",
            summary.to_str().unwrap(),
            "--rejects",
            rejects.to_str().unwrap(),
        ],
        &input,
    );
    assert_eq!(out.status.code(), Some(1));
    let books: Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    let n = |k: &str| books[k].as_u64().unwrap();
    assert_eq!(
        n("lines"),
        n("blank") + n("emitted") + n("rejected") + n("filtered_out")
    );
    assert_eq!(n("emitted"), valid_envelopes(&input).len() as u64);
    let rejected = std::fs::read_to_string(&rejects).unwrap().lines().count() as u64;
    assert_eq!(rejected, n("rejected"));
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["stats", "--by", "colour"][..],
        &["stats", "--format", "yaml"],
        &["stats", "--top", "-1"],
    ] {
        let out = run(args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!stderr(&out).is_empty());
    }
    let out = run(&["stats", "-q", "--format", "json"], b"");
    assert_eq!(out.status.code(), Some(0), "an empty input is clean");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["envelopes"], 0);
    assert_eq!(report["created_at"], Value::Null);
}

/// What `--by fingerprint` should say of one group, computed line by line.
#[derive(Default)]
struct Expected {
    count: u64,
    kind: Option<String>,
    template: Option<String>,
    seen: Option<(String, String)>,
    queues: HashMap<String, u64>,
    ids: Vec<String>,
    statuses: HashMap<String, u64>,
}

#[test]
fn fingerprint_groups_match_a_per_line_computation_for_any_worker_count() {
    use rdq_envelope::ops::{normalise, Fingerprint};
    // Several pipeline chunks, so that the workers' tallies are merged.
    let args = [
        "gen",
        "--count",
        "3000",
        "--seed",
        "19",
        "--invalid-rate",
        "0.02",
    ];
    let input = run(&args, b"").stdout;
    let mut parser = JsonParser::new();
    let mut scratch = Vec::new();
    let mut groups: BTreeMap<Option<String>, Expected> = BTreeMap::new();
    for line in common::valid_lines(&input) {
        let doc = parser.parse(line.as_bytes(), &mut scratch).unwrap();
        let root = doc.root();
        let text = |v: Option<JsonValue<'_>>| v.and_then(|v| v.as_str()).map(str::to_owned);
        let last = root
            .get("attempts")
            .unwrap()
            .elements()
            .filter(|a| a.get("error").and_then(|e| e.get("type")).is_some())
            .last();
        let mut template = String::new();
        let (key, kind, seen) = match last {
            None => (None, None, None),
            Some(a) => {
                let error = a.get("error").unwrap();
                let kind = text(error.get("type")).unwrap();
                normalise(&text(error.get("message")).unwrap(), &mut template);
                let seen = text(a.get("finished_at")).or_else(|| text(a.get("started_at")));
                let key = Fingerprint::of_template(&kind, &template).to_string();
                (Some(key), Some(kind), seen)
            }
        };
        let g = groups.entry(key).or_default();
        g.count += 1;
        g.kind = kind;
        // The report cuts a template past 256 bytes, as it cuts every key.
        if template.len() > 256 {
            let mut cut = 256;
            while !template.is_char_boundary(cut) {
                cut -= 1;
            }
            template = format!("{}…(+{} bytes)", &template[..cut], template.len() - cut);
        }
        g.template = g.kind.as_ref().map(|_| template);
        if let Some(seen) = seen {
            g.seen = Some(match g.seen.take() {
                None => (seen.clone(), seen),
                Some((first, last)) => (first.min(seen.clone()), last.max(seen)),
            });
        }
        *g.queues
            .entry(text(root.get("queue")).unwrap())
            .or_default() += 1;
        if g.ids.len() < 3 {
            g.ids.push(text(root.get("id")).unwrap());
        }
        *g.statuses
            .entry(text(root.get("status")).unwrap())
            .or_default() += 1;
    }
    assert!(groups.len() > 10 && groups.contains_key(&None));
    let mut first = None;
    for jobs in ["1", "2", "3", "8"] {
        let report = stats_json(&["--by", "fingerprint", "-j", jobs], &input);
        let got = report["groups"].as_array().unwrap();
        assert_eq!(got.len(), groups.len(), "-j {jobs}");
        for pair in got.windows(2) {
            assert!(pair[0]["count"].as_u64() >= pair[1]["count"].as_u64());
        }
        for group in got {
            let key = group["key"].as_str().map(str::to_owned);
            let want = &groups[&key];
            let mut queues: Vec<(String, u64)> = ranked(want.queues.clone());
            queues.truncate(3);
            let queues: Vec<Value> = queues
                .into_iter()
                .map(|(queue, count)| json!({"queue": queue, "count": count}))
                .collect();
            let expected = json!({
                "key": key,
                "count": want.count,
                "type": want.kind,
                "template": want.template,
                "first_seen": want.seen.as_ref().map(|s| &s.0),
                "last_seen": want.seen.as_ref().map(|s| &s.1),
                "top_queues": queues,
                "sample_ids": want.ids,
                "statuses": ranked(want.statuses.clone())
                    .into_iter()
                    .map(|(status, count)| json!({"status": status, "count": count}))
                    .collect::<Vec<Value>>(),
            });
            assert_eq!(group, &expected, "-j {jobs}");
        }
        match &first {
            None => first = Some(report),
            Some(one) => assert_eq!(one, &report, "-j {jobs}"),
        }
    }
    // The table: each group's count, fingerprint, type and template.
    let out = run(&["stats", "-q", "--by", "fingerprint"], &input);
    let table = stdout(&out);
    let (key, biggest) = groups
        .iter()
        .filter(|(k, _)| k.is_some())
        .max_by_key(|(_, g)| g.count)
        .unwrap();
    assert!(table.contains(key.as_deref().unwrap()), "{table}");
    assert!(table.contains(biggest.kind.as_deref().unwrap()), "{table}");
}

/// `-o`'s name picks the format (.txt, .json, .html, .htm, before any .zst or .gz); a
/// different --format is status 2, as is an ending that names no format without --format; no
/// ending and `-` follow --format or the default, the table.
#[test]
fn the_output_name_picks_the_format_or_is_refused() {
    let lines = gen_lines(30, 4, None, 0.0);
    let dir = common::scratch("stats-format-names");
    let kind = |bytes: &[u8]| match bytes.first() {
        Some(b'{') => "json",
        Some(b'<') => "html",
        _ => "table",
    };
    for (name, format, expected) in [
        ("r.json", None, "json"),
        ("r.JSON", Some("json"), "json"),
        ("r.html", None, "html"),
        ("r.htm", None, "html"),
        ("r.txt", None, "table"),
        ("report", None, "table"),
        ("report2", Some("json"), "json"),
        ("r.out", Some("html"), "html"),
    ] {
        let path = dir.join(name);
        let mut args = vec!["stats", "-q", "-o", path.to_str().unwrap()];
        args.extend(format.iter().flat_map(|f| ["--format", f]));
        let out = run(&args, &lines);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        assert_eq!(kind(&std::fs::read(&path).unwrap()), expected, "{name}");
    }
    // Standard output: --format or the table.
    let out = run(&["stats", "-q", "-o", "-"], &lines);
    assert_eq!(kind(&out.stdout), "table");
    let out = run(&["stats", "-q", "-o", "-", "--format", "json"], &lines);
    assert_eq!(kind(&out.stdout), "json");
    // Compressed: the ending before .zst or .gz (the file is compressed, so only refusals and
    // success are told apart here).
    let zst = dir.join("r.json.zst");
    let out = run(&["stats", "-q", "-o", zst.to_str().unwrap()], &lines);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let read_back = run(&["stats", "-q", "-o", "-", "--format", "json"], &lines);
    assert_eq!(kind(&read_back.stdout), "json");

    for (name, format, says) in [
        ("bad.html", Some("json"), "--format json does not go with the name's .html"),
        ("r.json.gz", Some("table"), "--format table does not go with the name's .json"),
        ("r.txt.zst", Some("html"), "--format html does not go with the name's .txt"),
        (
            "r.xlsx",
            None,
            "r.xlsx: stats writes table, json or html: name the file .txt/.json/.html/.htm or give --format",
        ),
        ("r.csv.gz", None, "stats writes table, json or html"),
    ] {
        let path = dir.join(name);
        let mut args = vec!["stats", "-q", "-o", path.to_str().unwrap()];
        args.extend(format.iter().flat_map(|f| ["--format", f]));
        let out = run(&args, &lines);
        assert_eq!(out.status.code(), Some(2), "{name}");
        assert!(stderr(&out).contains(says), "{name}: {}", stderr(&out));
        assert!(!path.exists(), "{name} was written");
    }
}
