//! The catalogue cannot drift: every example, run through the binary with the command and
//! options its entry records, gets exactly its code at exactly its pointers (a warning's line
//! is otherwise valid); and the docs have a section for every code that holds its summary.

use std::collections::BTreeSet;

use rdq_envelope::catalogue::{self, CATALOGUE};
use rdq_envelope::ErrorCode;
use serde_json::Value;

use crate::common;

/// (code, pointer) pairs.
type Reported = BTreeSet<(String, String)>;

/// The codes and pointers the binary reports for one example: (errors, warnings), each a set of
/// (code, pointer); and the exit status.
fn run_example(entry: &catalogue::Entry) -> (Reported, Reported, i32) {
    let dir = common::scratch(&format!("explain-{}", entry.code));
    let path = |name: &str| dir.join(name).to_str().unwrap().to_owned();
    let (rejects, summary, out) = (path("rejects"), path("summary"), path("out"));
    let mut args: Vec<&str> = entry.example.args.to_vec();
    args.extend([
        "-q",
        "--rejects",
        &rejects,
        "--summary",
        &summary,
        "-o",
        &out,
    ]);
    let is_migrate = args[0] == "migrate";
    let warnings_out = path("warnings");
    if is_migrate {
        args.extend(["--warnings-out", &warnings_out]);
    }
    let is_validate_with_warnings = args[0] == "validate" && args.contains(&"--warnings");
    if is_validate_with_warnings {
        args.extend(["--format", "json"]);
    }
    let mut input = entry.example.line().into_bytes();
    input.push(b'\n');
    let output = common::run(&args, &input);
    assert!(
        output.stderr.is_empty(),
        "{}: {}",
        entry.code,
        common::stderr(&output)
    );

    let summary: Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    assert_eq!(summary["lines"], 1, "{}", entry.code);
    let mut errors = BTreeSet::new();
    for record in std::fs::read_to_string(&rejects).unwrap().lines() {
        let record: Value = serde_json::from_str(record).unwrap();
        for e in record["errors"].as_array().unwrap() {
            errors.insert(pair(e));
        }
    }
    let by_code: BTreeSet<String> = summary["by_code"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let error_codes: BTreeSet<String> = errors.iter().map(|(c, _)| c.clone()).collect();
    assert_eq!(by_code, error_codes, "{}", entry.code);

    let mut warnings = BTreeSet::new();
    let warning_records = if is_migrate {
        std::fs::read_to_string(&warnings_out).unwrap()
    } else if is_validate_with_warnings {
        std::fs::read_to_string(&out).unwrap()
    } else {
        String::new()
    };
    for record in warning_records.lines() {
        let record: Value = serde_json::from_str(record).unwrap();
        for w in record["warnings"].as_array().unwrap() {
            warnings.insert(pair(w));
        }
    }
    let counted: BTreeSet<String> = summary["warnings_by_code"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let warning_codes: BTreeSet<String> = warnings.iter().map(|(c, _)| c.clone()).collect();
    assert_eq!(counted, warning_codes, "{}", entry.code);
    let _ = std::fs::remove_dir_all(&dir);
    (errors, warnings, output.status.code().unwrap())
}

fn pair(d: &Value) -> (String, String) {
    let text = |key: &str| d[key].as_str().unwrap().to_owned();
    (text("code"), text("path"))
}

#[test]
fn every_example_gets_exactly_its_code_at_its_pointers() {
    for entry in CATALOGUE {
        let code = entry.code.as_str().to_owned();
        let expected: BTreeSet<(String, String)> = entry
            .example
            .pointers
            .iter()
            .map(|p| (code.clone(), (*p).to_owned()))
            .collect();
        let (errors, warnings, status) = run_example(entry);
        if entry.code.is_warning() {
            assert_eq!(
                errors,
                BTreeSet::new(),
                "{code}: the line is otherwise valid"
            );
            assert_eq!(warnings, expected, "{code}");
            assert_eq!(status, 0, "{code}");
        } else {
            assert_eq!(errors, expected, "{code}");
            assert_eq!(status, 1, "{code}");
        }
    }
}

/// A heading's anchor as GitHub makes it: lower case, punctuation but `-` and `_` dropped,
/// spaces as `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim_start_matches('#')
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The section of `doc` under the heading whose anchor is `name`, up to the next heading of
/// any level; its markdown links reduced to their text and its lines joined.
fn section(doc: &str, name: &str) -> Option<String> {
    let mut lines = doc
        .lines()
        .skip_while(|l| !(l.starts_with('#') && anchor(l) == name));
    lines.next()?;
    let text: Vec<&str> = lines.take_while(|l| !l.starts_with('#')).collect();
    let mut text = text.join(" ");
    // [text](target) → text
    while let Some(open) = text.find("](") {
        let close = open + text[open..].find(')').unwrap();
        text.replace_range(open..=close, "");
        let start = text[..open].rfind('[').unwrap();
        text.remove(start);
    }
    Some(text)
}

#[test]
fn the_docs_have_a_section_for_every_code_with_its_summary() {
    let mut missing = Vec::new();
    for entry in CATALOGUE {
        let code = entry.code;
        assert_eq!(
            entry.docs[0],
            format!("envelope.md#{}", code.as_str().to_lowercase())
        );
        for link in entry.docs {
            let (file, name) = link.split_once('#').unwrap();
            let doc = std::fs::read_to_string(format!("docs/{file}")).unwrap();
            let text = section(&doc, name).unwrap_or_else(|| panic!("{code}: no section {link}"));
            let own = name == code.as_str().to_lowercase() && file == "envelope.md";
            if own && !text.contains(entry.summary) {
                missing.push(format!("{code}: {:?}\n  {text}", entry.summary));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "summaries the docs do not hold:\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_code_the_tool_reports_is_in_the_catalogue() {
    for &code in ErrorCode::ALL {
        assert!(catalogue::entry(code).is_some(), "{code}");
    }
}
