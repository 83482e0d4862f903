//! Replays every fuzz corpus file (`fuzz/corpus/<target>/`) and every compliance fixture
//! through the fuzz targets' checks, so CI covers them without nightly or cargo-fuzz.

use std::path::{Path, PathBuf};

#[allow(dead_code)]
mod checks {
    include!("../../fuzz/checks.rs");
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<_> = std::fs::read_dir(dir)
        .map(|entries| entries.map(|e| e.expect("readable entry").path()).collect())
        .unwrap_or_default();
    found.retain(|p| p.is_file());
    found.sort();
    found
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn seeds(target: &str) -> Vec<PathBuf> {
    let mut all = files(&root().join("fuzz/corpus").join(target));
    all.extend(
        files(&root().join("tests/compliance/cases"))
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "line")),
    );
    all
}

#[test]
fn line_corpus() {
    let seeds = seeds("line");
    assert!(!seeds.is_empty());
    for path in seeds {
        checks::check_line(&std::fs::read(&path).expect("readable seed"));
    }
}

#[test]
fn reader_corpus() {
    let seeds = seeds("reader");
    assert!(!seeds.is_empty());
    for path in seeds {
        checks::check_reader(&std::fs::read(&path).expect("readable seed"));
    }
}

#[test]
fn migrate_corpus() {
    let seeds = seeds("migrate");
    assert!(!seeds.is_empty());
    for path in seeds {
        checks::check_migrate(&std::fs::read(&path).expect("readable seed"));
    }
}

#[test]
fn pipeline_corpus() {
    let seeds = seeds("pipeline");
    assert!(!seeds.is_empty());
    for path in seeds {
        checks::check_pipeline(&std::fs::read(&path).expect("readable seed"));
    }
}

#[test]
fn envelope_corpus() {
    let seeds = files(&root().join("fuzz/corpus/envelope"));
    assert!(!seeds.is_empty());
    for path in seeds {
        checks::check_envelope(&std::fs::read(&path).expect("readable seed"));
    }
}

#[test]
fn lifecycle_corpus() {
    let seeds = files(&root().join("fuzz/corpus/lifecycle"));
    assert!(seeds.len() >= 8);
    for path in seeds {
        checks::check_lifecycle(&std::fs::read(&path).expect("readable seed"));
    }
}

#[test]
fn chokaq_corpus() {
    let seeds = files(&root().join("fuzz/corpus/chokaq"));
    assert!(!seeds.is_empty());
    for path in seeds {
        checks::check_chokaq(&std::fs::read(&path).expect("readable seed"));
    }
}

#[test]
fn compare_corpus() {
    let seeds = files(&root().join("fuzz/corpus/compare"));
    assert!(seeds.len() >= 8);
    for path in seeds {
        checks::check_compare(&std::fs::read(&path).expect("readable seed"));
    }
}

#[test]
fn proto_corpus() {
    let seeds = files(&root().join("fuzz/corpus/proto"));
    assert!(seeds.len() >= 8);
    for path in seeds {
        checks::check_proto(&std::fs::read(&path).expect("readable seed"));
    }
}

#[test]
fn single_pass_corpus() {
    let seeds = seeds("single_pass");
    assert!(seeds.len() > 20);
    for path in seeds {
        checks::check_single_pass(&std::fs::read(&path).expect("readable seed"));
    }
}

/// The structured mode of the `single_pass` target builds mostly valid envelopes, which the
/// single pass mostly accepts: the fuzzer works near the line between accept and decline.
#[test]
fn single_pass_cases_are_nearly_valid() {
    let mut state = 1u64;
    let mut next = move || {
        // splitmix64
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) as u8
    };
    let (mut clean, mut accepted) = (0, 0);
    let cases = 600;
    for _ in 0..cases {
        let bytes: Vec<u8> = (0..40).map(|_| next()).collect();
        let case = <checks::SinglePassCase as arbitrary::Arbitrary>::arbitrary_take_rest(
            arbitrary::Unstructured::new(&bytes),
        )
        .expect("any bytes make a case");
        let line = case.line();
        let found =
            rdq_envelope::test_support::single_pass_agrees(&case.options(line.len()), &line);
        clean += usize::from(found.tape_clean);
        accepted += usize::from(found.accepted);
    }
    eprintln!("{cases} structured cases: {clean} clean, {accepted} accepted");
    assert!(clean * 5 > cases, "only {clean} of {cases} cases are clean");
    assert!(
        accepted * 2 > clean,
        "only {accepted} of {clean} clean cases accepted"
    );
}
