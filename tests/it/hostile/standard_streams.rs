//! Hostile cases: standard error is an output like the others. An output that is the file
//! standard error is open on (`--summary f 2>f`) is refused, for every command and flag; an
//! output named as a standard stream (`/dev/stderr`, `/proc/self/fd/2`, `/dev/stdout`) is
//! written through that stream, in order, so that nothing written there overwrites anything
//! else. Light cases: the debug binary.

use std::fs::{self, File};
use std::path::Path;
use std::process::{Output, Stdio};

use super::common::{bin, scratch, stderr};

/// gen lines, some invalid (diagnostics, rejects and valid lines alike), in `dir/in.jsonl`.
fn input(dir: &Path) {
    let out = bin()
        .args([
            "gen",
            "--count",
            "60",
            "--seed",
            "5",
            "--invalid-rate",
            "0.3",
        ])
        .output()
        .unwrap();
    fs::write(dir.join("in.jsonl"), out.stdout).unwrap();
}

/// Runs `args` in `dir` with standard output and error on the files named (piped if `None`).
fn run_to(dir: &Path, args: &[&str], out: Option<&str>, err: Option<&str>) -> Output {
    let file = |name: Option<&str>| match name {
        Some(name) => Stdio::from(File::create(dir.join(name)).unwrap()),
        None => Stdio::piped(),
    };
    bin()
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(file(out))
        .stderr(file(err))
        .output()
        .unwrap()
}

#[test]
fn an_output_on_the_file_of_standard_error_is_refused_for_every_command() {
    // `validate x --summary f 2>f`: the summary's rename took the file standard error wrote
    // to away, and the closing line with it (or, named /dev/stderr, overwrote the summary).
    let dir = scratch("stderr-alias");
    input(&dir);
    fs::create_dir_all(dir.join("man")).unwrap();
    fs::create_dir_all(dir.join("shards")).unwrap();
    fs::copy(dir.join("in.jsonl"), dir.join("shards/a.jsonl")).unwrap();
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &["validate", "in.jsonl", "--summary", "err"],
            "err",
            "--summary",
        ),
        (
            &["validate", "in.jsonl", "--rejects", "err"],
            "err",
            "--rejects",
        ),
        (&["validate", "in.jsonl", "-o", "./err"], "./err", "-o"),
        (
            &["validate", "in.jsonl", "--valid-out", "err"],
            "err",
            "--valid-out",
        ),
        (
            &["migrate", "in.jsonl", "--to", "1", "--warnings-out", "err"],
            "err",
            "--warnings-out",
        ),
        (
            &["migrate", "in.jsonl", "--to", "1", "-o", "err"],
            "err",
            "-o",
        ),
        (&["filter", "in.jsonl", "-o", "err"], "err", "-o"),
        (
            &["redrive", "in.jsonl", "--at", "2h", "-o", "err"],
            "err",
            "-o",
        ),
        (
            &["dedupe", "in.jsonl", "--dropped", "err"],
            "err",
            "--dropped",
        ),
        (
            &["dedupe", "in.jsonl", "--keep", "first", "-o", "err"],
            "err",
            "-o",
        ),
        (&["sample", "5", "in.jsonl", "-o", "err"], "err", "-o"),
        (&["stats", "in.jsonl", "-o", "err"], "err", "-o"),
        (&["export", "in.jsonl", "-o", "err"], "err", "-o"),
        (&["gen", "--count", "3", "-o", "err"], "err", "-o"),
        (&["schema", "-o", "err"], "err", "-o"),
    ];
    for &(args, name, flag) in cases {
        let out = run_to(&dir, args, None, Some("err"));
        let said = fs::read_to_string(dir.join("err")).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {said}");
        let expected = format!(
            "two outputs are the same file: {name} ({flag}) and standard error (the run's messages)"
        );
        assert!(said.contains(&expected), "{args:?}: {said}");
    }
    // A man page, and the files of a batch (the standard streams are its messages and
    // records), and a shard.
    let out = run_to(
        &dir,
        &["man", "--dir", "man"],
        None,
        Some("man/rdq-envelope.1"),
    );
    assert_eq!(out.status.code(), Some(2));
    let said = fs::read_to_string(dir.join("man/rdq-envelope.1")).unwrap();
    assert!(
        said.contains("man/rdq-envelope.1 (--dir) and standard error"),
        "{said}"
    );
    let batch = ["batch", "validate", "shards", "--out", "out"];
    assert_eq!(run_to(&dir, &batch, None, None).status.code(), Some(1));
    for (stdout, stderr_file, expected) in [
        (
            None,
            Some("out/manifest.json"),
            "out/manifest.json (--out) and standard error",
        ),
        (
            Some("out/a.summary.json"),
            None,
            "out/a.summary.json (--out) and standard output",
        ),
    ] {
        let out = run_to(&dir, &batch, stdout, stderr_file);
        assert_eq!(out.status.code(), Some(2));
        let said = match stderr_file {
            Some(name) => fs::read_to_string(dir.join(name)).unwrap(),
            None => stderr(&out),
        };
        assert!(said.contains(expected), "{said}");
    }
    // Standard error appended to a shard, or to show's input, is an input that is an output.
    let appended =
        |path: &str| Stdio::from(File::options().append(true).open(dir.join(path)).unwrap());
    let shard = bin()
        .current_dir(&dir)
        .args(batch)
        .stderr(appended("shards/a.jsonl"))
        .output()
        .unwrap();
    assert_eq!(shard.status.code(), Some(2));
    let show = bin()
        .current_dir(&dir)
        .args(["show", "01HWT0D8JCQ7NR0W22MHTM8Z6G", "in.jsonl"])
        .stderr(appended("in.jsonl"))
        .output()
        .unwrap();
    assert_eq!(show.status.code(), Some(2));
    let said = String::from_utf8_lossy(&fs::read(dir.join("in.jsonl")).unwrap()).into_owned();
    assert!(said.contains("in.jsonl (input) and standard error (the run's messages)"));
}

/// Lines of `text`: JSON objects first, then the closing line, each whole.
fn objects_then_closing_line(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let (last, objects) = lines.split_last().expect("a closing line");
    assert!(last.starts_with("rdq-envelope: 60 lines: "), "{text}");
    for line in objects {
        serde_json::from_str::<serde_json::Value>(line).expect("a whole JSON line");
    }
    objects.len()
}

#[test]
fn an_output_named_as_a_standard_stream_is_written_through_it_in_order() {
    // `--summary /dev/stderr 2>err.txt` opened the file a second time, at its own position:
    // the closing line overwrote the start of the summary. `--valid-out /dev/stdout > all.txt`
    // lost the diagnostics the same way.
    let dir = scratch("stderr-named");
    input(&dir);
    let out = run_to(
        &dir,
        &["validate", "in.jsonl", "--summary", "/dev/stderr"],
        None,
        Some("err.txt"),
    );
    assert_eq!(out.status.code(), Some(1));
    let said = fs::read_to_string(dir.join("err.txt")).unwrap();
    assert_eq!(objects_then_closing_line(&said), 1, "the summary, whole");
    let rejected = run_to(
        &dir,
        &[
            "validate",
            "in.jsonl",
            "-o",
            "/dev/null",
            "--rejects",
            "/proc/self/fd/2",
        ],
        None,
        Some("err.txt"),
    );
    assert_eq!(rejected.status.code(), Some(1));
    let said = fs::read_to_string(dir.join("err.txt")).unwrap();
    let summary: serde_json::Value = {
        let args = [
            "validate",
            "in.jsonl",
            "-q",
            "-o",
            "/dev/null",
            "--summary",
            "-",
        ];
        serde_json::from_slice(&run_to(&dir, &args, None, None).stdout).unwrap()
    };
    assert_eq!(
        objects_then_closing_line(&said) as u64,
        summary["rejected"].as_u64().unwrap()
    );
    // Standard output named again, on a file a shell truncated (not appended to).
    let args = ["validate", "in.jsonl", "-q"];
    let diagnostics = run_to(&dir, &args, None, None).stdout;
    let args = [
        "validate",
        "in.jsonl",
        "-q",
        "-o",
        "/dev/null",
        "--valid-out",
        "-",
    ];
    let valid = run_to(&dir, &args, None, None).stdout;
    let args = ["validate", "in.jsonl", "-q", "--valid-out", "/dev/stdout"];
    let both = run_to(&dir, &args, Some("all.txt"), None);
    assert_eq!(both.status.code(), Some(1), "{}", stderr(&both));
    let all = fs::read(dir.join("all.txt")).unwrap();
    assert_eq!(all.len(), diagnostics.len() + valid.len());
    // Standard output and error on one file stays ordinary, with an output named as either.
    let log = File::create(dir.join("log.txt")).unwrap();
    let status = bin()
        .current_dir(&dir)
        .args([
            "validate",
            "in.jsonl",
            "--summary",
            "/dev/stderr",
            "--rejects",
            "/dev/stdout",
        ])
        .stdout(Stdio::from(log.try_clone().unwrap()))
        .stderr(Stdio::from(log))
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1));
    let log = fs::read_to_string(dir.join("log.txt")).unwrap();
    assert!(
        log.lines()
            .last()
            .unwrap()
            .starts_with("rdq-envelope: 60 lines"),
        "{log}"
    );
    let first = String::from_utf8_lossy(&diagnostics)
        .lines()
        .next()
        .unwrap()
        .to_owned();
    assert!(log.contains(&first), "{log}");
}
