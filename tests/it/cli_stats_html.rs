//! `rdq-envelope stats --format html`: the triage report holds `stats --format json`'s figures
//! (and the books of `--summary`) wherever it shows them, marked with `data-stat`; it is the
//! same for any `-j`; strings from the data cannot inject markup; it loads nothing from
//! elsewhere. In headless Chromium (when installed; CI installs it and requires it) it renders
//! without a console message or script error, its DOM holds the same figures, and a screenshot
//! is saved under `target/` for a person to look at.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::Value;

use crate::common;
use common::{bin, gen_lines, run, scratch, stderr, tool_or_skip};

/// The rows a breakdown lists (`BREAKDOWN_ROWS` in src/report/html/mod.rs); histogram bars
/// likewise.
const BREAKDOWN_ROWS: usize = 25;
const HISTOGRAM_BARS: usize = 40;

/// 800 `gen` lines of both versions, a few invalid, and blank lines.
fn gen_input() -> Vec<u8> {
    let mut all = Vec::new();
    for (version, seed) in [(1, 41), (2, 42)] {
        all.extend_from_slice(&gen_lines(400, seed, Some(version), 0.05));
        all.extend_from_slice(b"\n  \n");
    }
    all
}

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/dlq-sample.jsonl.zst")
}

/// Runs the binary on files, expecting exit status 0 or 1 (some lines rejected).
fn ok(args: &[&str]) -> Vec<u8> {
    let out = bin().args(args).output().unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {:?} {}",
        out.status,
        stderr(&out)
    );
    out.stdout
}

/// The HTML report of `file` with `--top top` at `-j jobs`.
fn report(file: &Path, top: usize, jobs: usize) -> String {
    let top = top.to_string();
    let jobs = jobs.to_string();
    let file = file.to_str().unwrap();
    let args = [
        "-j", &jobs, "stats", "-q", "--format", "html", "--top", &top, file,
    ];
    // A pinned time, so that two runs make the same page.
    let out = bin()
        .args(args)
        .env("SOURCE_DATE_EPOCH", "1796320800")
        .output()
        .unwrap();
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
    String::from_utf8(out.stdout).unwrap()
}

/// What the report must show: `stats --format json` by status, queue and fingerprint, and the
/// books of `--summary`.
struct Expected {
    by: BTreeMap<&'static str, Value>,
    books: Value,
    top: usize,
    /// The first 3 rejected lines of each code, as `validate --format json` reports them.
    examples: BTreeMap<String, Vec<(String, u64)>>,
}

fn expected(file: &Path, top: usize, dir: &Path) -> Expected {
    let top_text = top.to_string();
    let name = file.to_str().unwrap();
    let mut by = BTreeMap::new();
    for grouping in ["status", "queue", "fingerprint"] {
        let args = [
            "stats", "-q", "--format", "json", "--by", grouping, "--top", &top_text, name,
        ];
        by.insert(grouping, serde_json::from_slice(&ok(&args)).unwrap());
    }
    let summary = dir.join("summary.json");
    let args = [
        "stats",
        "-q",
        "--format",
        "json",
        "--summary",
        summary.to_str().unwrap(),
        "-o",
        "/dev/null",
        name,
    ];
    ok(&args);
    let books = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    let mut examples: BTreeMap<String, Vec<(String, u64)>> = BTreeMap::new();
    let reports = ok(&["validate", "-q", "--format", "json", name]);
    for report in String::from_utf8(reports).unwrap().lines() {
        let report: Value = serde_json::from_str(report).unwrap();
        let mut codes: Vec<&str> = report["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["code"].as_str().unwrap())
            .collect();
        codes.sort_unstable();
        codes.dedup();
        for code in codes {
            let lines = examples.entry(code.to_owned()).or_default();
            if lines.len() < 3 {
                let source = report["source"].as_str().unwrap().to_owned();
                lines.push((source, n(&report["line"])));
            }
        }
    }
    Expected {
        by,
        books,
        top,
        examples,
    }
}

/// An element with a `data-stat` marker (or `data-sample-id`): its attributes and its text
/// (up to the next tag).
#[derive(Debug)]
struct Marked {
    attributes: BTreeMap<String, String>,
    text: String,
}

impl Marked {
    fn get(&self, name: &str) -> Option<&str> {
        self.attributes.get(name).map(String::as_str)
    }

    fn stat(&self) -> &str {
        self.get("data-stat").unwrap_or("")
    }

    /// The number shown: the text without thousands separators, or `data-count` for an
    /// SVG bar.
    fn number(&self) -> u64 {
        let text = match self.get("data-count") {
            Some(count) => count.to_owned(),
            None => self.text.replace(',', ""),
        };
        text.parse()
            .unwrap_or_else(|_| panic!("a number in {self:?}"))
    }
}

/// `&amp;` and the other references HTML serializers write, decoded.
fn decode(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let end = rest.find(';').expect("a character reference ends with ;");
        let name = &rest[1..end];
        let c = match name {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            "nbsp" => '\u{a0}',
            _ if name.starts_with("#x") => {
                char::from_u32(u32::from_str_radix(&name[2..], 16).unwrap()).unwrap()
            }
            _ if name.starts_with('#') => char::from_u32(name[1..].parse().unwrap()).unwrap(),
            _ => panic!("unknown reference &{name};"),
        };
        out.push(c);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

/// Every marked element of an HTML text, in document order: a small tag reader for our own
/// markup and Chromium's serialization of it (attribute values quoted).
fn marked(html: &str) -> Vec<Marked> {
    let mut found = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        rest = &rest[at + 1..];
        if rest.starts_with(['/', '!']) {
            continue;
        }
        // The tag's name, then its attributes up to `>`.
        let name_end = rest
            .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
            .unwrap();
        let mut tag = &rest[name_end..];
        let mut attributes = BTreeMap::new();
        loop {
            tag = tag.trim_start();
            if tag.starts_with('>') || tag.starts_with("/>") {
                break;
            }
            let end = tag
                .find(|c: char| c.is_whitespace() || c == '=' || c == '>' || c == '/')
                .unwrap();
            let name = tag[..end].to_owned();
            tag = &tag[end..];
            let mut value = String::new();
            if let Some(after) = tag.strip_prefix('=') {
                let quote = after.chars().next().unwrap();
                assert!(
                    quote == '"' || quote == '\'',
                    "quoted attribute values: {after:.40}"
                );
                let close = after[1..].find(quote).unwrap();
                value = decode(&after[1..1 + close]);
                tag = &after[close + 2..];
            }
            attributes.insert(name, value);
        }
        let after_tag = &tag[tag.find('>').unwrap() + 1..];
        rest = after_tag;
        if attributes.contains_key("data-stat") || attributes.contains_key("data-sample-id") {
            let text = &after_tag[..after_tag.find('<').unwrap_or(after_tag.len())];
            found.push(Marked {
                attributes,
                text: decode(text.trim()),
            });
        }
    }
    found
}

fn n(value: &Value) -> u64 {
    value.as_u64().unwrap_or_else(|| panic!("a count: {value}"))
}

/// Holds every marked figure of `html` to the JSON, and checks that the JSON's figures are all
/// there (as far as the report lists them).
fn check_figures(html: &str, want: &Expected) {
    let marks = marked(html);
    let of = |stat: &'static str| marks.iter().filter(move |m| m.stat() == stat);
    let one = |stat: &'static str| {
        let all: Vec<&Marked> = of(stat).collect();
        assert_eq!(all.len(), 1, "one {stat}");
        all[0]
    };
    let json = &want.by["queue"];
    for stat in ["lines", "envelopes", "rejected", "blank"] {
        assert_eq!(one(stat).number(), n(&json[stat]), "{stat}");
    }
    assert_eq!(n(&want.books["valid"]), n(&json["envelopes"]));
    match &json["created_at"] {
        Value::Null => assert_eq!(of("created_at.first").count(), 0),
        range => {
            assert_eq!(
                one("created_at.first").text,
                range["first"].as_str().unwrap()
            );
            assert_eq!(one("created_at.last").text, range["last"].as_str().unwrap());
        }
    }

    // The books by code: every code, none more.
    for (stat, member) in [
        ("by_code", "by_code"),
        ("warnings_by_code", "warnings_by_code"),
    ] {
        let shown: BTreeMap<String, u64> = of(stat)
            .map(|m| (m.get("data-key").unwrap().to_owned(), m.number()))
            .collect();
        let books: BTreeMap<String, u64> = want.books[member]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), n(v)))
            .collect();
        assert_eq!(shown, books, "{stat}");
    }

    // The breakdowns: the first groups in the JSON's order, the rest summed.
    for (by, json) in &want.by {
        let limit = if *by == "fingerprint" {
            want.top
        } else {
            BREAKDOWN_ROWS
        };
        let shown: Vec<(Option<String>, u64)> = of("group")
            .filter(|m| m.get("data-by") == Some(by))
            .map(|m| (m.get("data-key").map(str::to_owned), m.number()))
            .collect();
        let groups = json["groups"].as_array().unwrap();
        let listed: Vec<(Option<String>, u64)> = groups
            .iter()
            .take(limit)
            .map(|g| (g["key"].as_str().map(str::to_owned), n(&g["count"])))
            .collect();
        assert_eq!(shown, listed, "--by {by}");
        let rest = &groups[groups.len().min(limit)..];
        let rest_shown: Vec<u64> = ["groups_rest", "groups_rest_envelopes"]
            .iter()
            .flat_map(|stat| of(stat).filter(|m| m.get("data-by") == Some(by)))
            .map(Marked::number)
            .collect();
        if rest.is_empty() {
            assert!(rest_shown.is_empty(), "--by {by}: no rest");
        } else {
            let envelopes: u64 = rest.iter().map(|g| n(&g["count"])).sum();
            assert_eq!(
                rest_shown,
                [rest.len() as u64, envelopes],
                "--by {by}: the rest"
            );
        }
        let other: Vec<u64> = of("groups_other")
            .filter(|m| m.get("data-by") == Some(by))
            .map(Marked::number)
            .collect();
        assert_eq!(other.iter().sum::<u64>(), n(&json["groups_other"]));
    }

    // Each fingerprint group's sample IDs and top queues.
    for group in want.by["fingerprint"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .take(want.top)
    {
        let key = group["key"].as_str();
        let ids: Vec<&str> = marks
            .iter()
            .filter(|m| m.attributes.contains_key("data-sample-id") && m.get("data-key") == key)
            .map(|m| m.text.as_str())
            .collect();
        let want_ids: Vec<&str> = group["sample_ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(ids, want_ids, "sample IDs of {key:?}");
        let queues: Vec<(String, u64)> = of("top_queue")
            .filter(|m| m.get("data-key") == key)
            .map(|m| (m.get("data-queue").unwrap().to_owned(), m.number()))
            .collect();
        let want_queues: Vec<(String, u64)> = group["top_queues"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| (q["queue"].as_str().unwrap().to_owned(), n(&q["count"])))
            .collect();
        assert_eq!(queues, want_queues, "top queues of {key:?}");
        let statuses: Vec<(String, u64)> = of("fp_status")
            .filter(|m| m.get("data-key") == key)
            .map(|m| (m.get("data-status").unwrap().to_owned(), m.number()))
            .collect();
        let want_statuses: Vec<(String, u64)> = group["statuses"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["status"].as_str().unwrap().to_owned(), n(&s["count"])))
            .collect();
        assert_eq!(statuses, want_statuses, "statuses of {key:?}");
        assert_eq!(
            want_statuses.iter().map(|s| s.1).sum::<u64>(),
            n(&group["count"]),
            "the statuses of {key:?} add up to its count"
        );
    }

    // The first lines of each rejected code, in input order, in its row; no more.
    let mut examples: BTreeMap<String, Vec<(String, u64)>> = BTreeMap::new();
    for m in of("reject_example") {
        let line = m.get("data-line").unwrap().parse().unwrap();
        let shown = m.text.clone();
        let name = shown.strip_suffix(&format!(":{line}")).unwrap();
        assert!(m.get("data-source").unwrap().ends_with(name), "{shown}");
        examples
            .entry(m.get("data-key").unwrap().to_owned())
            .or_default()
            .push((m.get("data-source").unwrap().to_owned(), line));
    }
    assert_eq!(examples, want.examples, "rejected lines' examples");

    // The histograms: every bucket counted (the first HISTOGRAM_BARS).
    for stat in ["attempts", "redrives"] {
        let shown: Vec<(u64, u64)> = of(stat)
            .map(|m| (m.get("data-value").unwrap().parse().unwrap(), m.number()))
            .collect();
        let buckets: Vec<(u64, u64)> = json[stat]
            .as_array()
            .unwrap()
            .iter()
            .take(HISTOGRAM_BARS)
            .map(|b| (n(&b["value"]), n(&b["count"])))
            .collect();
        assert_eq!(shown, buckets, "{stat}");
    }

    // The top error types.
    let errors = json["top_error_types"].as_array().unwrap();
    for (stat, member) in [
        ("error_attempts", "attempts"),
        ("error_last_attempt", "last_attempt"),
    ] {
        let shown: Vec<(String, u64)> = of(stat)
            .map(|m| (m.get("data-key").unwrap().to_owned(), m.number()))
            .collect();
        let listed: Vec<(String, u64)> = errors
            .iter()
            .map(|e| (e["type"].as_str().unwrap().to_owned(), n(&e[member])))
            .collect();
        assert_eq!(shown, listed, "{stat}");
    }

    // Arrivals: every envelope in a bucket; nested in the days of arrivals_per_day.
    let buckets: Vec<(String, u64)> = of("arrivals")
        .map(|m| (m.get("data-start").unwrap().to_owned(), m.number()))
        .collect();
    let total: u64 = buckets.iter().map(|(_, c)| c).sum();
    assert_eq!(total, n(&json["envelopes"]), "arrivals");
    if !buckets.is_empty() {
        assert_eq!(one("arrivals_total").number(), total);
    }
    let width = of("arrivals_width").next().map(|m| m.text.clone());
    if matches!(width.as_deref(), Some(w) if w.contains("minute") || w.contains("hour") || w == "day")
    {
        let mut per_day: BTreeMap<String, u64> = BTreeMap::new();
        for (start, count) in &buckets {
            if *count > 0 {
                *per_day.entry(start[..10].to_owned()).or_default() += count;
            }
        }
        let days: BTreeMap<String, u64> = json["arrivals_per_day"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| (d["day"].as_str().unwrap().to_owned(), n(&d["count"])))
            .collect();
        assert_eq!(
            per_day, days,
            "arrivals per {width:?} add up to arrivals per day"
        );
    }
}

/// Nothing loaded from elsewhere: no link, no external script, style, font, image or frame. (Text
/// from the data may say `src=` or `https://`: it is escaped, so it is no tag; only tags and the
/// style and script blocks are looked at.)
fn check_self_contained(html: &str) {
    let lower = html.to_lowercase();
    let block = |open: &str, close: &str| {
        let from = lower.find(open).unwrap_or_else(|| panic!("{open}")) + open.len();
        lower[from..from + lower[from..].find(close).unwrap()].to_owned()
    };
    let style = block("<style>", "</style>");
    let script = block("<script>", "</script>");
    for banned in ["url(", "@import", "@font-face", "http:", "https:"] {
        assert!(!style.contains(banned), "{banned} in the style");
    }
    for banned in [
        "http:",
        "https:",
        "fetch(",
        "xmlhttprequest",
        "import(",
        "src",
    ] {
        assert!(!script.contains(banned), "{banned} in the script");
    }
    // Every tag outside the style and script blocks.
    let outside = lower.replace(&style, "").replace(&script, "");
    for tag in outside
        .split('<')
        .skip(1)
        .map(|t| &t[..t.find('>').unwrap()])
    {
        let name = tag.split_whitespace().next().unwrap_or("");
        assert!(
            !["link", "iframe", "img", "image", "object", "embed", "use", "frame", "base"]
                .contains(&name),
            "<{tag}>"
        );
        for banned in ["src=", "href=", "http:", "https:", "url("] {
            assert!(!tag.contains(banned), "{banned} in <{tag}>");
        }
    }
    assert_eq!(lower.matches("<script").count(), 1, "one script, inline");
    assert!(lower.contains("content-security-policy"));
}

#[test]
fn the_report_holds_the_figures_of_stats_json() {
    let dir = scratch("html-figures");
    let input = dir.join("gen.jsonl");
    std::fs::write(&input, gen_input()).unwrap();
    for (file, top) in [(input.as_path(), 10), (sample().as_path(), 4)] {
        let html = report(file, top, 1);
        check_self_contained(&html);
        check_figures(&html, &expected(file, top, &dir));
        assert_eq!(report(file, top, 3), html, "the same report for any -j");
    }
    // The command lines that select a group name the input.
    let html = report(&sample(), 10, 2);
    assert!(html.contains("rdq-envelope filter --fingerprint 455ff875f6f1 "));
}

#[test]
fn no_envelopes_at_all() {
    for input in [&b""[..], b"\n\n", b"{\"not\":\"an envelope\"}\n"] {
        let out = run(&["stats", "-q", "--format", "html"], input);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
        let html = String::from_utf8(out.stdout).unwrap();
        check_self_contained(&html);
        assert!(html.contains("No valid envelopes"));
        let marks = marked(&html);
        let envelopes = marks.iter().find(|m| m.stat() == "envelopes").unwrap();
        assert_eq!(envelopes.number(), 0);
    }
}

/// One envelope, and envelopes three hours apart: every count agrees with its noun, and a
/// bucket width takes the article it calls for ("1 bucket of a minute", "an hour", "of 3
/// hours"), in the report and in the closing line.
#[test]
fn counts_and_widths_read_as_english() {
    let line = std::fs::read_to_string("tests/data/dlq_line.json").unwrap();
    let line = line.trim_end();
    let out = run(
        &["stats", "--format", "html"],
        format!("{line}\n").as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let html = String::from_utf8(out.stdout.clone()).unwrap();
    assert!(
        html.contains("</span> of 1 envelope in 1 bucket of a minute.</p>"),
        "{html}"
    );
    assert!(html.contains("2024-05-01 12:00: 1 envelope<"), "tooltip");
    assert!(!html.contains(" 1 envelopes") && !html.contains(" 1 buckets"));
    assert!(stderr(&out).starts_with("rdq-envelope: 1 line: 1 valid"));
    // Created 100 hours apart: buckets of an hour; 450 hours apart: of 3 hours.
    for (hours, width) in [(100, "of an hour."), (450, "of 3 hours.")] {
        let lines: String = [0, hours]
            .iter()
            .map(|h| {
                let at = format!("2024-04-{:02}T{:02}:00:00.000Z", 1 + h / 24, h % 24);
                line.replace(
                    "\"created_at\":\"2024-05-01T12:00:00.000Z\"",
                    &format!("\"created_at\":\"{at}\""),
                ) + "\n"
            })
            .collect();
        let out = run(&["stats", "-q", "--format", "html"], lines.as_bytes());
        let html = String::from_utf8(out.stdout).unwrap();
        let note = html
            .lines()
            .find(|l| l.contains("arrivals_total"))
            .unwrap_or_default();
        assert!(
            note.contains("of 2 envelopes in ") && note.ends_with(&format!("{width}</p>")),
            "{note}"
        );
    }
}

#[test]
fn strings_from_the_data_cannot_inject_markup() {
    let dir = scratch("html-escape");
    let gen = run(
        &[
            "gen",
            "--count",
            "30",
            "--seed",
            "7",
            "--version",
            "1",
            "--invalid-rate",
            "0",
        ],
        b"",
    );
    let text = String::from_utf8(gen.stdout).unwrap();
    let kind = r#"<script>alert("type")</script> & 'Ünï' 東京"#;
    let message = r#"</pre><img src=x onerror=alert(1)> "quoted" & <b>bold</b> Zoë"#;
    let json = |s: &str| serde_json::to_string(s).unwrap();
    let needle = "\"type\":\"javax.net.ssl.SSLHandshakeException\",\"message\":\"";
    assert!(text.contains(needle), "gen makes SSL failures");
    let text = text.replace(
        needle,
        &format!(
            "\"type\":{},\"message\":{}",
            json(kind),
            &json(message)[..json(message).len() - 1]
        ),
    );
    // A file name that needs escaping too.
    let input = dir.join("dlq <\"&'>.jsonl");
    std::fs::write(&input, &text).unwrap();
    let name = input.to_str().unwrap();
    let status = bin()
        .args(["validate", "-q", "-o", "/dev/null", name])
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0), "the crafted lines are valid");
    let html = String::from_utf8(ok(&[
        "stats",
        "-q",
        "--format",
        "html",
        "--by",
        "error_type",
        "--top",
        "50",
        name,
    ]))
    .unwrap();
    check_self_contained(&html);
    for raw in [
        "<script>alert",
        "<img",
        "<b>",
        "\"quoted\"",
        "'Ünï'",
        "dlq <",
    ] {
        assert!(!html.contains(raw), "{raw} unescaped");
    }
    assert!(html
        .contains("&lt;script&gt;alert(&quot;type&quot;)&lt;/script&gt; &amp; &#39;Ünï&#39; 東京"));
    assert!(html.contains(
        "&lt;/pre&gt;&lt;img src=x onerror=alert(&lt;n&gt;)&gt; &quot;quoted&quot; &amp;"
    ));
    // (The message shows as its fingerprint's template: numbers are `<n>` there.)
    // The figures still match, the crafted type among the keys.
    let marks = marked(&html);
    assert!(marks
        .iter()
        .any(|m| m.stat() == "error_attempts" && m.get("data-key") == Some(kind)));
    assert!(marks.iter().any(|m| m.stat() == "group"
        && m.get("data-by") == Some("error_type")
        && m.get("data-key") == Some(kind)));
    // The command line quotes the file name for a shell.
    assert!(html.contains(&format!(
        " &#39;{}&#39;",
        name.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
            .replace('\'', "&#39;\\&#39;&#39;")
    )));
}

#[test]
fn the_output_file_is_written_whole_or_not_at_all() {
    let dir = scratch("html-output");
    let out = dir.join("report.html");
    std::fs::write(&out, "old").unwrap();
    // An input that cannot be read: the old file stays.
    let missing = dir.join("missing.jsonl");
    let status = bin()
        .args(["stats", "-q", "--format", "html", "-o"])
        .args([&out, &missing])
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "old");
    ok(&[
        "stats",
        "-q",
        "--format",
        "html",
        "-o",
        out.to_str().unwrap(),
        sample().to_str().unwrap(),
    ]);
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</html>\n"));
}

/// The heading says when the report was made, `SOURCE_DATE_EPOCH` if set (a malformed one is
/// status 2, before anything is written), and names every input in full.
#[test]
fn the_heading_says_when_and_names_every_input_in_full() {
    let dir = scratch("html-heading");
    let long = format!(
        "{} it's \"quoted\".jsonl",
        "a long name with spaces ".repeat(8)
    );
    let input = dir.join(&long);
    std::fs::write(&input, gen_lines(20, 5, Some(2), 0.0)).unwrap();
    let name = input.to_str().unwrap();
    let stats = |epoch: Option<&str>| {
        let mut command = bin();
        command.args(["stats", "-q", "--format", "html", name, name]);
        command.env_remove("SOURCE_DATE_EPOCH");
        if let Some(epoch) = epoch {
            command.env("SOURCE_DATE_EPOCH", epoch);
        }
        command.output().unwrap()
    };
    let made = |out: &std::process::Output| {
        let html = String::from_utf8(out.stdout.clone()).unwrap();
        let marks = marked(&html);
        let made = marks.iter().find(|m| m.stat() == "made_at").unwrap();
        assert_eq!(made.get("datetime"), Some(made.text.as_str()));
        (made.text.clone(), html)
    };
    let out = stats(Some("1796320800"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (at, html) = made(&out);
    assert_eq!(at, "2026-12-03T18:00:00Z");
    // Each input in full, escaped, twice as given twice.
    let escaped = long.replace('\'', "&#39;").replace('"', "&quot;");
    let listed = format!(
        "<li><code data-input>{}/{escaped}</code></li>",
        dir.display()
    );
    assert_eq!(html.matches(&listed).count(), 2, "{html:.2000}");
    assert!(html.contains("from 2 inputs:"));
    // The same seconds, the same page.
    assert_eq!(stats(Some("1796320800")).stdout, out.stdout);
    // Unset (or empty): now, to the second.
    for epoch in [None, Some("")] {
        let before = std::time::SystemTime::now();
        let (at, _) = made(&stats(epoch));
        let seconds =
            |t: std::time::SystemTime| t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
        let after = seconds(std::time::SystemTime::now());
        let before = seconds(before);
        let shown: Vec<String> = (before..=after)
            .map(|s| {
                let out = stats(Some(&s.to_string()));
                made(&out).0
            })
            .collect();
        assert!(shown.contains(&at), "{at} not in {shown:?}");
    }
    // Not a count of seconds: status 2, saying what it wants, and no page.
    for bad in ["yesterday", "-5", "1.5", "99999999999999999999"] {
        let out = stats(Some(bad));
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let message = stderr(&out);
        assert!(
            message.contains(&format!("SOURCE_DATE_EPOCH={bad}: not a time"))
                && message.contains("whole seconds since"),
            "{message}"
        );
        assert!(out.stdout.is_empty(), "{bad}");
    }
    // The table and JSON do not read it.
    let mut json = bin();
    json.args(["stats", "-q", "--format", "json", name]);
    json.env("SOURCE_DATE_EPOCH", "yesterday");
    assert_eq!(json.output().unwrap().status.code(), Some(0));
}

/// The `<pre data-redrive>` command lines of a page, as their text (what Copy copies).
fn redrive_commands(html: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find("<pre class=\"cmd\" data-redrive") {
        rest = &rest[at..];
        let tag_end = rest.find('>').unwrap();
        let tag = &rest[..tag_end];
        let key = &tag[tag.find("data-key=\"").unwrap() + 10..];
        let key = key[..key.find('"').unwrap()].to_owned();
        let text = &rest[tag_end + 1..];
        let text = decode(&text[..text.find("</pre>").unwrap()]);
        found.push((key, text));
        rest = &rest[tag_end..];
    }
    found
}

/// The build's `target/` folder (where the screenshots go).
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // target/<profile>/deps/<test binary>
    exe.ancestors().nth(3).unwrap().to_path_buf()
}

#[test]
fn chromium_renders_it_with_the_same_figures() {
    // Chromium, as Debian names it.
    let Some(chromium) = tool_or_skip(
        &["chromium", "chromium-browser"],
        "the HTML report in Chromium (apt-get install chromium)",
    ) else {
        return;
    };
    let dir = scratch("html-chromium");
    let gen = dir.join("gen.jsonl");
    std::fs::write(&gen, gen_input()).unwrap();
    let target = target_dir();
    // Rejected lines, and a name a shell must have quoted, long enough to wrap.
    let awkward = dir.join(format!(
        "{}it's a \"DLQ\" $HOME `export`.jsonl",
        "a long file name with spaces that wraps ".repeat(4)
    ));
    std::fs::write(&awkward, gen_lines(600, 43, Some(2), 0.1)).unwrap();
    for (file, top, png) in [
        (gen.as_path(), 10, "report-gen.png"),
        (sample().as_path(), 10, "report.png"),
        (awkward.as_path(), 5, "report-rejects.png"),
    ] {
        let html_path = dir.join(png.replace(".png", ".html"));
        std::fs::write(&html_path, report(file, top, 2)).unwrap();
        let screenshot = target.join(png);
        let _ = std::fs::remove_file(&screenshot);
        let started = Instant::now();
        let out = Command::new(&chromium)
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--no-first-run",
                "--enable-logging=stderr",
                "--v=0",
                "--window-size=1366,2400",
                "--dump-dom",
            ])
            // A profile of its own: a second launch on one profile can hand its work to the
            // first (still closing) and write nothing.
            .arg(format!(
                "--user-data-dir={}",
                dir.join(format!("profile-{png}")).display()
            ))
            .arg(format!("--screenshot={}", screenshot.display()))
            .arg(format!("file://{}", html_path.display()))
            .output()
            .unwrap();
        let log = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "chromium failed: {log}");
        eprintln!(
            "chromium: {} in {:.1} s; screenshot {}",
            html_path.display(),
            started.elapsed().as_secs_f64(),
            screenshot.display()
        );
        // Every console message (an error, a refused load, a script exception) is logged as
        // CONSOLE; the page writes none.
        let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
        assert!(console.is_empty(), "console messages: {console:#?}");
        let dom = String::from_utf8(out.stdout).unwrap();
        assert!(
            dom.contains("data-rendered=\"yes\""),
            "the script ran to its end"
        );
        assert!(!dom.contains("data-script-error=\""), "no script error");
        assert!(dom.contains("class=\"copy\""), "the copy buttons are there");
        let want = expected(file, top, &dir);
        check_figures(&dom, &want);
        let marks = marked(&dom);
        assert!(
            marks.iter().any(|m| m.stat() == "made_at"),
            "when it was made"
        );
        assert!(
            dom.contains(&format!(
                "<code data-input=\"\">{}</code>",
                file.to_str()
                    .unwrap()
                    .replace('&', "&amp;")
                    .replace('<', "&lt;")
                    .replace('>', "&gt;")
            )),
            "the input named in full"
        );
        if file == awkward {
            assert!(!want.examples.is_empty(), "rejected lines");
            check_redrive_commands(&dom, &want, &dir);
        }
        let png_bytes = std::fs::read(&screenshot).expect("a screenshot");
        assert!(png_bytes.starts_with(b"\x89PNG") && png_bytes.len() > 10_000);
    }
}

/// Each fingerprint's redrive command, as Copy copies it from the rendered page and run by a
/// shell, redrives exactly that fingerprint's DEAD tasks: as many as the report says, all
/// PENDING now, each of that fingerprint.
fn check_redrive_commands(dom: &str, want: &Expected, dir: &Path) {
    let commands = redrive_commands(dom);
    let groups = want.by["fingerprint"]["groups"].as_array().unwrap();
    let dead_of = |key: &str| {
        let group = groups.iter().find(|g| g["key"] == key).unwrap();
        group["statuses"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["status"] == "DEAD")
            .map_or(0, |s| n(&s["count"]))
    };
    let listed: Vec<&str> = groups
        .iter()
        .take(want.top)
        .filter_map(|g| g["key"].as_str())
        .filter(|key| dead_of(key) > 0)
        .collect();
    let keys: Vec<&str> = commands.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys, listed,
        "a redrive command for each listed group with DEAD tasks"
    );
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_rdq-envelope"));
    let path = format!(
        "{}:{}",
        exe.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let work = dir.join("redrive-here");
    std::fs::create_dir_all(&work).unwrap();
    for (key, command) in &commands {
        assert!(
            command.contains("--status DEAD") && command.contains(key),
            "{command}"
        );
        let out = Command::new("sh")
            .args(["-c", command])
            .current_dir(&work)
            .env("PATH", &path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{command}: {}", stderr(&out));
        let batch = std::fs::read_to_string(work.join(format!("redrive-{key}.jsonl"))).unwrap();
        assert_eq!(batch.lines().count() as u64, dead_of(key), "{command}");
        let batch_path = work.join(format!("redrive-{key}.jsonl"));
        let batch_name = batch_path.to_str().unwrap();
        let statuses = ok(&[
            "stats", "-q", "--by", "status", "--format", "json", batch_name,
        ]);
        let statuses: Value = serde_json::from_slice(&statuses).unwrap();
        assert_eq!(
            statuses["groups"],
            serde_json::json!([{"key": "PENDING", "count": dead_of(key)}]),
            "{command}"
        );
        let fingerprints = ok(&[
            "stats",
            "-q",
            "--by",
            "fingerprint",
            "--format",
            "json",
            batch_name,
        ]);
        let fingerprints: Value = serde_json::from_slice(&fingerprints).unwrap();
        assert_eq!(fingerprints["groups"][0]["key"], key.as_str(), "{command}");
        assert_eq!(
            fingerprints["groups"].as_array().unwrap().len(),
            1,
            "{command}"
        );
    }
}
