//! Conformance of the JSON layer (docs/envelope.md#the-json-layer) against the public JSONTestSuite
//! corpus in `../shared/testdata/JSONTestSuite/test_parsing`, each file fed as one line.

use std::path::PathBuf;

use rdq_envelope::{ErrorCode, JsonParser};

use crate::common::need_or_skip;

fn corpus() -> Option<Vec<(String, Vec<u8>)>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/testdata/JSONTestSuite/test_parsing");
    // Under CI the corpus is always laid beside the project: its absence is a failure, not a
    // test that passes by checking nothing.
    let found = std::fs::read_dir(&dir).map_err(|_| crate::common::json_test_suite_missing(&dir));
    let entries = need_or_skip(found, "the JSONTestSuite conformance test")?;
    let mut files: Vec<_> = entries
        .map(|e| {
            let e = e.expect("readable corpus folder");
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).expect("readable corpus file"))
        })
        .collect();
    files.sort();
    Some(files)
}

fn is_blank(bytes: &[u8]) -> bool {
    bytes.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'))
}

#[test]
fn json_test_suite() {
    let Some(files) = corpus() else {
        return;
    };
    let mut parser = JsonParser::new();
    let mut errors = Vec::new();
    let (mut checked, mut skipped) = (0, 0);
    let mut failures = Vec::new();
    for (name, bytes) in &files {
        // A line break would make the file more than one line of JSON Lines.
        if bytes.contains(&b'\n') {
            skipped += 1;
            continue;
        }
        checked += 1;
        errors.clear();
        let passed = parser.parse(bytes, &mut errors).is_some();
        let codes: Vec<ErrorCode> = errors.iter().map(|d| d.code).collect();
        let root_is_object = bytes
            .iter()
            .find(|b| !matches!(b, b' ' | b'\t' | b'\r'))
            .is_some_and(|&b| b == b'{');
        let ok = if name.starts_with("y_") {
            if root_is_object {
                passed || codes.iter().all(|&c| c == ErrorCode::DuplicateKey)
            } else {
                codes.contains(&ErrorCode::NotAnObject)
            }
        } else if name.starts_with("n_") {
            is_blank(bytes)
                || (!passed
                    && !codes.is_empty()
                    && codes.iter().all(|c| {
                        matches!(
                            c,
                            ErrorCode::MalformedJson
                                | ErrorCode::InvalidUtf8
                                | ErrorCode::NestingTooDeep
                        )
                    }))
        } else {
            // i_ files may go either way; reaching here without a panic is the test.
            true
        };
        if !ok {
            failures.push(format!("{name}: passed={passed} codes={codes:?}"));
        }
    }
    eprintln!("JSONTestSuite: {checked} files checked, {skipped} with a line break left out");
    assert!(checked > 250, "only {checked} files checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
