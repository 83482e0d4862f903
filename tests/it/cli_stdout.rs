//! Standard output, for every command (docs/guarantees.md#outputs): a write to it that fails
//! (`> /dev/full`) is status 2 with a message that names it (`<stdout>: write failed: ...`), as
//! every other output is named; a standard output closed before anything is written (`| head
//! -c0`) ends the run quietly, status 0.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use crate::common::{bin, scratch, stderr};

/// A folder with what the commands below read: `in.jsonl` (valid lines and rejected ones, so
/// that validate writes diagnostics), `shards/a.jsonl`, and `done/`, a batch run over them.
fn inputs() -> PathBuf {
    let dir = scratch("stdout");
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/dlq-sample.jsonl.zst");
    let out = bin()
        .args([
            "filter",
            "-q",
            "--rejects",
            "/dev/null",
            "-o",
            "valid.jsonl",
        ])
        .arg(&sample)
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let mut lines = std::fs::read(dir.join("valid.jsonl")).unwrap();
    lines.extend_from_slice(b"{\"id\":\"not an envelope\"}\n");
    std::fs::write(dir.join("in.jsonl"), &lines).unwrap();
    std::fs::create_dir_all(dir.join("shards")).unwrap();
    std::fs::write(dir.join("shards/a.jsonl"), &lines).unwrap();
    let out = bin()
        .args(["batch", "validate", "-q", "shards", "--out", "done"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    dir
}

/// The ID of the first line of `in.jsonl`.
fn first_id(dir: &Path) -> String {
    let text = std::fs::read_to_string(dir.join("in.jsonl")).unwrap();
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    first["id"].as_str().unwrap().to_owned()
}

/// Every command, and each of its ways of writing to standard output.
fn every_command(id: &str) -> Vec<Vec<String>> {
    let rows: &[&[&str]] = &[
        &["validate", "in.jsonl"],
        &["validate", "--format", "json", "in.jsonl"],
        &["validate", "in.jsonl", "-o", "-"],
        &[
            "validate",
            "in.jsonl",
            "-o",
            "/dev/null",
            "--valid-out",
            "-",
        ],
        &["migrate", "--to", "2", "in.jsonl"],
        &["redrive", "--at", "2030-01-01T00:00:00.000Z", "in.jsonl"],
        &["redrive", "--dry-run", "in.jsonl"],
        &["dedupe", "in.jsonl"],
        &["dedupe", "--keep", "first", "in.jsonl"],
        &["sample", "3", "--seed", "1", "in.jsonl"],
        &["filter", "in.jsonl"],
        &["filter", "--count", "in.jsonl"],
        &["export", "in.jsonl"],
        &["export", "--format", "tsv", "in.jsonl"],
        &["export", "--format", "parquet", "in.jsonl"],
        &["stats", "in.jsonl"],
        &["stats", "--format", "json", "in.jsonl"],
        &["stats", "--format", "html", "in.jsonl"],
        &["show", "{id}", "in.jsonl"],
        &["show", "--payload", "{id}", "in.jsonl"],
        &["gen", "--count", "3"],
        &["schema"],
        &["explain", "BAD_ATTEMPT"],
        &["explain", "--list"],
        &["completions", "bash"],
        &["completions", "zsh"],
        &["completions", "fish"],
        &["completions", "elvish"],
        &["completions", "powershell"],
        &["man"],
        &["batch", "validate", "shards", "--list"],
        &["batch", "--status", "done"],
        &[
            "batch", "validate", "shards", "--out", "only", "--only", "a.jsonl",
        ],
        &["--help"],
        &["-h"],
        &["--version"],
        &["-V"],
        &["validate", "--help"],
        &["batch", "validate", "--help"],
    ];
    rows.iter()
        .map(|row| row.iter().map(|a| a.replace("{id}", id)).collect())
        .collect()
}

fn run(dir: &Path, args: &[String], stdout: Stdio) -> Output {
    let mut command = bin();
    command.env_remove("RDQ_ENVELOPE_SIMD");
    command
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn every_command_names_a_full_standard_output() {
    let dir = inputs();
    let id = first_id(&dir);
    for args in every_command(&id) {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = run(&dir, &args, Stdio::from(full));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("<stdout>: write failed: No space left on device"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn every_command_ends_quietly_on_a_closed_standard_output() {
    let dir = inputs();
    let id = first_id(&dir);
    for args in every_command(&id) {
        // The reading end closed before the command starts: its first write meets EPIPE.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = run(&dir, &args, Stdio::from(writer));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(
            !err.contains("write failed")
                && !err.contains("Broken pipe")
                && !err.contains("<stdout>"),
            "{args:?}: {err}"
        );
    }
}

/// What a closed standard output must not hide: a command still checks its arguments.
#[test]
fn a_closed_standard_output_does_not_hide_a_usage_error() {
    let dir = inputs();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = run(
        &dir,
        &["completions".to_owned(), "tcsh".to_owned()],
        Stdio::from(writer),
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}
