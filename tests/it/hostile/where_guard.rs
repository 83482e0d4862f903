//! Nothing inside a `--where` expression ends, aborts or hangs the run (docs/guarantees.md,
//! "An embedded jq expression"): builtins that act beyond one envelope are refused before any
//! input is read; expressions nested as deep as jq runs them work, deeper ones are refused; a
//! runaway one is ended by its limits, by a stack overflow turned into status 2, or by
//! Ctrl-C, each with every output as it was and no temporary file left. These run the release
//! binary: a debug build recurses several times more slowly.

use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use super::common::{scratch, stderr};
use super::{release, VALID};

/// A folder with `in.jsonl` (three valid lines) and an `out.jsonl` from an earlier run.
pub(crate) fn folder(name: &str) -> std::path::PathBuf {
    let dir = scratch(name);
    fs::write(dir.join("in.jsonl"), format!("{VALID}\n{VALID}\n{VALID}\n")).unwrap();
    fs::write(dir.join("out.jsonl"), "previous\n").unwrap();
    dir
}

pub(crate) fn filter(dir: &Path, args: &[&str]) -> Command {
    let mut command = release();
    command
        .current_dir(dir)
        .args([
            "filter",
            "-q",
            "-o",
            "out.jsonl",
            "--rejects",
            "rejects.jsonl",
        ])
        .args(args)
        .arg("in.jsonl")
        .stdin(Stdio::null());
    command
}

/// The run's outputs were left as they were: `out.jsonl` from before, no rejects, no
/// temporary file.
pub(crate) fn untouched(dir: &Path, what: &str) {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["in.jsonl", "out.jsonl"], "{what}");
    assert_eq!(
        fs::read_to_string(dir.join("out.jsonl")).unwrap(),
        "previous\n",
        "{what}"
    );
}

pub(crate) fn refused(out: &Output, words: &[&str], what: &str) {
    assert_eq!(out.status.code(), Some(2), "{what}: {}", stderr(out));
    let err = stderr(out);
    for word in words {
        assert!(err.contains(word), "{what}: {err}");
    }
}

#[test]
fn a_runaway_expression_is_ended_by_its_limits_with_every_output_as_it_was() {
    let dir = folder("where-runaway");
    for (expr, limit, words) in [
        (
            "def f: f; f",
            ["--where-timeout", "0.5"],
            &["has run for over 0.5 seconds on line 1 of in.jsonl"][..],
        ),
        (
            "[.queue | repeat(.)] | length > 0",
            ["--where-max-memory", "300"],
            &["over --where-max-memory 300 MiB", "line 1 of in.jsonl"],
        ),
        (
            "[range(1e9)] | length > 0",
            ["--where-max-memory", "300"],
            &["over --where-max-memory 300 MiB"],
        ),
    ] {
        let mut args = vec!["--where", expr];
        args.extend(limit);
        let out = filter(&dir, &args).output().unwrap();
        refused(&out, words, expr);
        untouched(&dir, expr);
    }
    // Recursion past a worker's stack: status 2 with a message, never an abort.
    let expr = "def f: 1 + f; f";
    let out = filter(
        &dir,
        &[
            "--where",
            expr,
            "--where-timeout",
            "0",
            "--where-max-memory",
            "0",
        ],
    )
    .output()
    .unwrap();
    refused(
        &out,
        &["recursed deeper than a worker's stack of 256 MiB"],
        "overflow",
    );
    untouched(&dir, "overflow");
    // The limits are usage errors without --where, or out of range.
    for args in [
        &["--where-timeout", "1"][..],
        &["--where-max-memory", "10"],
        &["--where", ".", "--where-timeout", "-1"],
        &["--where", ".", "--where-timeout", "NaN"],
    ] {
        let out = filter(&dir, args).output().unwrap();
        refused(&out, &["--where"], &format!("{args:?}"));
    }
}

#[test]
fn ctrl_c_ends_a_runaway_expression_with_every_output_as_it_was() {
    let dir = folder("where-ctrl-c");
    let child = filter(&dir, &["--where", "def f: f; f", "--where-timeout", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    untouched(&dir, "SIGINT");
}
