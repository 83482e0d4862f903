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
fn folder(name: &str) -> std::path::PathBuf {
    let dir = scratch(name);
    fs::write(dir.join("in.jsonl"), format!("{VALID}\n{VALID}\n{VALID}\n")).unwrap();
    fs::write(dir.join("out.jsonl"), "previous\n").unwrap();
    dir
}

fn filter(dir: &Path, args: &[&str]) -> Command {
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
fn untouched(dir: &Path, what: &str) {
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

fn refused(out: &Output, words: &[&str], what: &str) {
    assert_eq!(out.status.code(), Some(2), "{what}: {}", stderr(out));
    let err = stderr(out);
    for word in words {
        assert!(err.contains(word), "{what}: {err}");
    }
}

#[test]
fn builtins_that_act_beyond_one_envelope_are_refused_before_any_input_is_read() {
    let dir = folder("where-refused");
    for name in [
        "halt",
        "halt_error",
        "halt_error(1)",
        "input",
        "[inputs]",
        "debug",
        "debug(\"x\")",
        "stderr",
        "input_filename",
        "input_line_number",
        "get_search_list",
        "modulemeta",
    ] {
        for expr in [
            name.to_owned(),
            format!(".queue == \"x\" or ({name} | true)"),
        ] {
            let out = filter(&dir, &["--where", &expr]).output().unwrap();
            let bare = name
                .trim_start_matches('[')
                .split(['(', ']'])
                .next()
                .unwrap();
            refused(
                &out,
                &[&format!("`{bare}` is not supported in --where")],
                &expr,
            );
            untouched(&dir, &expr);
        }
    }
    // A definition of the same name is the user's own, and works.
    let out = filter(&dir, &["--where", "def halt: .queue != null; halt"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        fs::read_to_string(dir.join("out.jsonl"))
            .unwrap()
            .lines()
            .count(),
        3
    );
}

#[test]
fn expressions_as_deep_as_jq_runs_them_work_and_deeper_ones_are_refused() {
    let dir = folder("where-deep");
    // jq 1.6 parses brackets nested up to about 5,000 deep and runs a recursion 10,000 deep.
    let nested = |n: usize| format!("{}.queue{} | length > 0", "[".repeat(n), "]".repeat(n));
    // Short terms: one argument may hold at most 128 KiB.
    let chain = |n: usize| format!(".a{}", " or .b".repeat(n));
    for expr in [
        nested(9_000),
        chain(9_000),
        "def f: if . == 0 then 0 else 1 + (. - 1 | f) end; (10000 | f) == 10000".to_owned(),
    ] {
        let out = filter(&dir, &["--where", &expr]).output().unwrap();
        assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
    }
    fs::remove_file(dir.join("rejects.jsonl")).unwrap();
    fs::write(dir.join("out.jsonl"), "previous\n").unwrap();
    for expr in [nested(10_001), chain(10_001)] {
        let out = filter(&dir, &["--where", &expr]).output().unwrap();
        refused(
            &out,
            &["levels deep; at most 10000 are supported"],
            "too deep",
        );
        untouched(&dir, "too deep");
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
