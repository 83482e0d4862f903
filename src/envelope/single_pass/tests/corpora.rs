//! Corpora: every compliance fixture (`tests/compliance/cases/*.line`, under its own options and
//! the defaults) and every file of JSONTestSuite's `test_parsing`, each as a line by itself and
//! as the value of an unknown member of a valid version 1 and version 2 envelope; and stage 1's
//! index against simd-json's on all of them and on gen lines.

use std::path::{Path, PathBuf};

use super::{gen_lines, Tally};
use crate::catalogue::{VALID_V1, VALID_V2};
use crate::envelope::RuleOptions;
use crate::json::stage1::against_simd_json::same_as_simd_json;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The files of `dir` named `*{suffix}`, sorted, with their bytes.
fn files(dir: &Path, suffix: &str) -> Option<Vec<(String, Vec<u8>)>> {
    let entries = std::fs::read_dir(dir).ok()?;
    let mut files: Vec<_> = entries
        .map(|e| e.expect("readable folder").path())
        .filter(|p| p.is_file() && p.to_string_lossy().ends_with(suffix))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).expect("readable file"))
        })
        .collect();
    files.sort();
    Some(files)
}

/// `content` as the value of an unknown member, first and last, of the valid envelopes.
fn embedded(content: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for valid in [VALID_V1, VALID_V2] {
        let valid = valid.as_bytes();
        out.push([b"{\"x_extra\":", content, b",", &valid[1..]].concat());
        out.push([&valid[..valid.len() - 1], b",\"x_extra\":", content, b"}"].concat());
    }
    out
}

/// A compliance case's options (the same reading as `tests/it/compliance.rs`).
fn case_options(expect: &serde_json::Value) -> RuleOptions {
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
    options
}

#[test]
fn compliance_fixtures() {
    let dir = root().join("tests/compliance/cases");
    let cases = files(&dir, ".line").expect("tests/compliance/cases exists");
    assert!(cases.len() >= 100, "only {} cases", cases.len());
    let mut defaults = Tally::new(&RuleOptions::default());
    let mut own = 0;
    for (name, line) in &cases {
        defaults.add(line);
        let expect = dir.join(name.replace(".line", ".expect.json"));
        let expect: serde_json::Value =
            serde_json::from_slice(&std::fs::read(expect).expect("an expectation")).unwrap();
        let options = case_options(&expect);
        if options != RuleOptions::default() {
            Tally::new(&options).add(line);
            own += 1;
        }
        if line.len() < 70_000 {
            for embedded in embedded(line) {
                defaults.add(&embedded);
                same_as_simd_json(&embedded);
            }
        }
        same_as_simd_json(line);
    }
    assert!(own > 10, "only {own} cases with options of their own");
    defaults.assert_share("compliance fixtures, alone and embedded", 100, 0.8);
}

#[test]
fn json_test_suite() {
    let dir = root().join("../shared/testdata/JSONTestSuite/test_parsing");
    // Under CI the corpus is always laid beside the project (as for tests/it/json_test_suite.rs).
    let found = files(&dir, ".json").ok_or_else(|| format!("{} is absent", dir.display()));
    let Some(files) = crate::test_support::need_or_skip(found, "the JSONTestSuite corpus") else {
        return;
    };
    assert!(files.len() > 200, "only {} files", files.len());
    let mut tally = Tally::new(&RuleOptions::default());
    let mut compared = 0;
    for (_, content) in &files {
        let mut lines = vec![content.clone()];
        lines.extend(embedded(content));
        for line in &lines {
            tally.add(line);
            compared += usize::from(same_as_simd_json(line));
        }
    }
    assert!(compared > 300, "simd-json parsed only {compared} lines");
    // The y_ files embedded are clean envelopes (but for duplicate keys and lone surrogates).
    tally.assert_share("JSONTestSuite, alone and embedded", 300, 0.8);
}

#[test]
fn gen_lines_index_as_simd_json_does() {
    let mut compared = 0;
    for version in [1, 2] {
        for line in gen_lines(41, version, 0.3, 400) {
            compared += usize::from(same_as_simd_json(&line));
        }
    }
    assert!(compared > 500, "{compared}");
}
