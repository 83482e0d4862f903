//! Replays every fuzz corpus file (`fuzz/corpus/<target>/`) and every compliance fixture
//! through the fuzz targets' checks, so CI covers them without nightly or cargo-fuzz.

use std::path::{Path, PathBuf};

#[allow(dead_code)]
mod checks {
    include!("../fuzz/checks.rs");
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
fn chokaq_corpus() {
    let seeds = files(&root().join("fuzz/corpus/chokaq"));
    assert!(!seeds.is_empty());
    for path in seeds {
        checks::check_chokaq(&std::fs::read(&path).expect("readable seed"));
    }
}
