//! Runs the language-neutral compliance fixtures of `tests/compliance/cases/` (format in
//! `tests/compliance/README.md`): each `.line` is framed as a one-line stream and judged with
//! the case's options; errors and warnings must equal the expected multisets of (code, path).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use rdq_envelope::framing::{LineKind, LineReader};
use rdq_envelope::{Diagnostic, EnvelopeRules, ErrorCode, JsonParser, RuleOptions, Verdict};
use serde_json::Value;

fn cases_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/compliance/cases")
}

struct Case {
    name: String,
    expect: Value,
    line: Vec<u8>,
}

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for entry in std::fs::read_dir(cases_dir()).expect("tests/compliance/cases exists") {
        let path = entry.expect("readable entry").path();
        let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".expect.json"))
        else {
            continue;
        };
        let expect: Value = serde_json::from_slice(&std::fs::read(&path).expect("readable"))
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let line_path = path.with_file_name(format!("{name}.line"));
        let line =
            std::fs::read(&line_path).unwrap_or_else(|e| panic!("{}: {e}", line_path.display()));
        cases.push(Case {
            name: name.to_owned(),
            expect,
            line,
        });
    }
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    cases
}

fn options(expect: &Value) -> (RuleOptions, usize) {
    let o = &expect["options"];
    let mut options = RuleOptions::default();
    if let Some(submit) = o["submit"].as_bool() {
        options.submit = submit;
    }
    if let Some(v) = o["require_version"].as_u64() {
        options.require_version = Some(v as u32);
    }
    if let Some(n) = o["max_envelope_bytes"].as_u64() {
        options.max_envelope_bytes = n;
    }
    if let Some(limits) = o["queue_limits"].as_object() {
        for (queue, n) in limits {
            options
                .queue_limits
                .insert(queue.clone(), n.as_u64().expect("a byte count"));
        }
    }
    let cap = o["max_line_bytes"]
        .as_u64()
        .map_or(rdq_envelope::framing::DEFAULT_MAX_LINE_BYTES, |n| {
            n as usize
        });
    (options, cap)
}

type Multiset = BTreeMap<(String, String), usize>;

fn expected(list: &Value) -> Multiset {
    let mut set = Multiset::new();
    for d in list.as_array().map(Vec::as_slice).unwrap_or_default() {
        let key = (
            d["code"].as_str().expect("code").to_owned(),
            d["path"].as_str().expect("path").to_owned(),
        );
        *set.entry(key).or_default() += 1;
    }
    set
}

fn found(list: &[Diagnostic]) -> Multiset {
    let mut set = Multiset::new();
    for d in list {
        *set.entry((d.code.as_str().to_owned(), d.path.clone()))
            .or_default() += 1;
    }
    set
}

/// Frames `line` as a one-line stream and judges it, as a validator of any language would.
fn judge(line: &[u8], options: RuleOptions, cap: usize) -> Verdict {
    let rules = EnvelopeRules::new(options).expect("the case's options are consistent");
    let mut parser = JsonParser::new();
    let mut verdict = Verdict::default();
    let mut reader = LineReader::with_max_line_bytes(line, cap);
    let framed = reader.next_line().expect("reading a slice cannot fail");
    match framed {
        Some(l) if l.kind == LineKind::TooLong => {
            verdict.errors.push(Diagnostic::line_too_long(l.len, cap));
        }
        Some(l) if l.kind == LineKind::Content => {
            rules.check_line(&mut parser, l.content, &mut verdict);
        }
        _ => {}
    }
    verdict
}

#[test]
fn compliance_fixtures() {
    let cases = cases();
    assert!(cases.len() >= 100, "only {} compliance cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        assert!(
            !case.line.contains(&b'\n'),
            "{}: a .line holds one line",
            case.name
        );
        let (options, cap) = options(&case.expect);
        let verdict = judge(&case.line, options, cap);
        let want_errors = expected(&case.expect["errors"]);
        let want_warnings = expected(&case.expect["warnings"]);
        let valid = case.expect["valid"].as_bool().expect("valid is a boolean");
        assert_eq!(
            valid,
            want_errors.is_empty(),
            "{}: valid disagrees with errors",
            case.name
        );
        let (got_errors, got_warnings) = (found(&verdict.errors), found(&verdict.warnings));
        if got_errors != want_errors || got_warnings != want_warnings {
            failures.push(format!(
                "{}:\n  expected errors {want_errors:?} warnings {want_warnings:?}\n  found    errors {got_errors:?} warnings {got_warnings:?}\n  messages {:?}",
                case.name,
                verdict.errors.iter().map(|d| &d.message).collect::<Vec<_>>()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases fail:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn every_line_level_code_has_an_invalid_fixture() {
    // Migration, redrive and import codes belong to other commands' fixtures.
    let elsewhere = [
        ErrorCode::CannotDowngrade,
        ErrorCode::MigrationConflict,
        ErrorCode::NotDead,
        ErrorCode::RedriveLimit,
        ErrorCode::ChokaqLimit,
    ];
    let covered: BTreeSet<String> = cases()
        .iter()
        .flat_map(|c| {
            let mut codes: Vec<String> = expected(&c.expect["errors"])
                .into_keys()
                .map(|k| k.0)
                .collect();
            codes.extend(expected(&c.expect["warnings"]).into_keys().map(|k| k.0));
            codes
        })
        .collect();
    for code in ErrorCode::ALL.iter().filter(|c| !elsewhere.contains(c)) {
        assert!(covered.contains(code.as_str()), "no fixture expects {code}");
    }
}

#[test]
fn every_version_and_status_has_a_valid_fixture() {
    let mut seen = BTreeSet::new();
    for case in cases().iter().filter(|c| c.expect["valid"] == true) {
        // Our own parser: fixtures hold numbers such as 1e400 that serde_json refuses.
        let mut parser = JsonParser::new();
        let Some(doc) = parser.parse(&case.line, &mut Vec::new()) else {
            continue;
        };
        let root = doc.root();
        let version = root.get("envelope_version").and_then(|v| v.as_integer());
        let status = root.get("status").and_then(|v| v.as_str());
        if let (Some(version), Some(status)) = (version, status) {
            seen.insert((version as u64, status.to_owned()));
        }
    }
    for (version, statuses) in [
        (1, &["PENDING", "IN_FLIGHT", "SUCCEEDED", "DEAD"][..]),
        (
            2,
            &["PENDING", "IN_FLIGHT", "SUCCEEDED", "DEAD", "CANCELLED"][..],
        ),
    ] {
        for status in statuses {
            assert!(
                seen.contains(&(version, (*status).to_owned())),
                "no valid v{version} {status} fixture"
            );
        }
    }
}
