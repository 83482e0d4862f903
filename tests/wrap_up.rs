//! The end of `cargo test`: the library's doc tests, then one block of every suite the run
//! skipped, and why.
//!
//! Cargo runs a package's test binaries in name order (`it`, `no_alloc`, `wrap_up`) and its
//! doc tests after them all; so that the block is the last thing a run prints, the library's
//! doc tests are left out of `cargo test` itself (`doctest = false` in Cargo.toml) and run
//! here, as `cargo test --doc` with this build's features, before the block. (`cargo test
//! --doc` alone runs them as ever.) Each test binary notes its skips in a record
//! (`rdq_envelope::test_support::skipped`); the block reads this run's records.

use std::path::Path;
use std::process::{Command, ExitCode};
use std::time::{Duration, SystemTime};

use rdq_envelope::test_support::skipped;

/// The package's features as this build has them: the doc tests are built with the same, so
/// that they reuse the library the other tests were built with (`default` too: it is a `cfg`
/// of its own, and a build without it is another build).
const FEATURES: [(&str, bool); 12] = [
    ("default", cfg!(feature = "default")),
    ("stream", cfg!(feature = "stream")),
    ("parquet", cfg!(feature = "parquet")),
    ("compression", cfg!(feature = "compression")),
    ("filter", cfg!(feature = "filter")),
    ("batch", cfg!(feature = "batch")),
    ("generate", cfg!(feature = "generate")),
    ("sample", cfg!(feature = "sample")),
    ("s3", cfg!(feature = "s3")),
    ("serde", cfg!(feature = "serde")),
    ("proto", cfg!(feature = "proto")),
    ("cli", cfg!(feature = "cli")),
];

fn main() -> ExitCode {
    // What cargo passed on to every test binary (a filter, `--quiet`), passed on again.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let doc_tests = run_doc_tests(&args);
    print_skipped_suites();
    doc_tests
}

fn run_doc_tests(args: &[String]) -> ExitCode {
    let features: Vec<&str> = FEATURES
        .iter()
        .filter(|(_, on)| *on)
        .map(|(name, _)| *name)
        .collect();
    let mut cargo = Command::new(env!("CARGO"));
    cargo.args(["test", "--doc", "--locked", "--no-default-features"]);
    if !features.is_empty() {
        cargo.args(["--features", &features.join(",")]);
    }
    if !cfg!(debug_assertions) {
        cargo.arg("--release");
    }
    println!("\nwrap_up: the library's doc tests (cargo test --doc), then the suites skipped");
    let status = cargo
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("--")
        .args(args)
        .status();
    match status {
        Ok(status) if status.success() => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("wrap_up: cannot run cargo for the doc tests: {error}");
            ExitCode::FAILURE
        }
    }
}

/// The block: every suite this run skipped, each with what it needs, or one line saying none
/// was. Then this run's records go, and any an earlier run left over an hour ago.
fn print_skipped_suites() {
    let (Some(folder), Some(prefix)) = (skipped::folder(), skipped::run_prefix()) else {
        return;
    };
    let mut lines: Vec<String> = Vec::new();
    for path in records(&folder) {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name.starts_with(&prefix) {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            lines.extend(text.lines().map(str::to_owned));
            let _ = std::fs::remove_file(&path);
        } else if older_than(&path, Duration::from_secs(3600)) {
            let _ = std::fs::remove_file(&path);
        }
    }
    lines.dedup();
    match lines.len() {
        0 => println!("\nEvery suite ran: none was skipped for want of a tool.\n"),
        n => {
            println!(
                "\n{n} suite{} skipped in this run, for want of a tool (CI runs every one; the \
                 README's Testing table says how to install what they need):",
                if n == 1 { " was" } else { "s were" }
            );
            for line in lines {
                println!("  {line}");
            }
            println!();
        }
    }
}

/// The records in `folder`, in name order (the binaries' order).
fn records(folder: &Path) -> Vec<std::path::PathBuf> {
    let mut paths: Vec<_> = std::fs::read_dir(folder)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .collect();
    paths.sort();
    paths
}

fn older_than(path: &Path, age: Duration) -> bool {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|modified| SystemTime::now().duration_since(modified).ok())
        .is_some_and(|elapsed| elapsed > age)
}
