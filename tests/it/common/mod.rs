//! Helpers for the golden CLI tests: spawn the real binary, feed it, read what it wrote.
// Each test crate uses its own subset of these.
#![allow(dead_code)]

use std::io::Write;

#[cfg(feature = "s3")]
pub mod s3;
#[cfg(feature = "s3")]
pub mod unruly;
pub mod writers;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The rule for a tool a test needs (absent: skipped outside CI, a failure under CI), and the
/// one definition of "under CI", are the library's test hooks.
pub use rdq_envelope::test_support::{need_or_skip, tool_or_skip};

/// The compliance fixtures' lines (`tests/compliance/cases/*.line`), in name order.
pub fn compliance_case_paths() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/compliance/cases");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "line"))
        .collect();
    paths.sort();
    paths
}

/// The binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rdq-envelope"))
}

/// Why the JSONTestSuite corpus is absent, and how to get it (the README's Testing table).
pub fn json_test_suite_missing(dir: &Path) -> String {
    format!(
        "no JSONTestSuite corpus at {} (git clone https://github.com/nst/JSONTestSuite, \
         a folder beside the project's, as ../shared/testdata/JSONTestSuite)",
        dir.display()
    )
}

/// A scratch folder holding only `samples/dlq-sample.jsonl.zst`, as a newcomer's checkout has
/// the bundled sample, and the PATH that finds the binary under test first: where the README's
/// and the help's examples run as typed.
pub fn folder_with_the_sample(name: &str) -> (PathBuf, String) {
    let dir = scratch(name);
    std::fs::create_dir_all(dir.join("samples")).unwrap();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/dlq-sample.jsonl.zst");
    std::fs::copy(sample, dir.join("samples/dlq-sample.jsonl.zst")).unwrap();
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_rdq-envelope"))
        .parent()
        .unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    (dir, path)
}

/// A fresh scratch folder for one test. All the tests share one process, and two of them may
/// pick the same name: a number per call keeps their folders apart.
pub fn scratch(name: &str) -> PathBuf {
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("rdq-cli-{}-{call}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The binary started with `args`, its standard input, output and error piped.
pub fn spawn(args: &[&str]) -> Child {
    spawn_with(bin(), args)
}

/// `command` (a binary under test) started with `args`, its standard streams piped.
pub fn spawn_with(mut command: Command, args: &[&str]) -> Child {
    command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs")
}

/// Runs the binary with `args` on `stdin` to its end.
pub fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = spawn(args);
    let mut input = child.stdin.take().unwrap();
    let bytes = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&bytes);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// The text with every `"seconds": NUMBER` set to 0: wall-clock time, the one field of a
/// summary that differs from run to run.
pub fn without_seconds(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes).into_owned();
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("\"seconds\":") {
        let (head, tail) = rest.split_at(at + "\"seconds\":".len());
        out.push_str(head);
        let tail = tail.trim_start();
        out.push('0');
        rest = &tail[tail.find([',', '}', '\n']).unwrap_or(tail.len())..];
    }
    out.push_str(rest);
    out
}

/// The lines `validate` keeps of `input`, as they are.
pub fn valid_lines(input: &[u8]) -> Vec<String> {
    let args = [
        "validate",
        "-q",
        "--valid-out",
        "/dev/stdout",
        "-o",
        "/dev/null",
    ];
    stdout(&run(&args, input))
        .lines()
        .map(str::to_owned)
        .collect()
}

/// One line (with its LF) from a child's output, read byte by byte so that nothing after it
/// is waited for.
pub fn read_line(out: &mut impl std::io::Read) -> Vec<u8> {
    let mut line = Vec::new();
    let mut byte = [0u8];
    while !line.ends_with(b"\n") {
        assert_eq!(out.read(&mut byte).unwrap(), 1, "output ended early");
        line.push(byte[0]);
    }
    line
}

/// What `gen --count COUNT --seed SEED [--version V] --invalid-rate RATE` writes: the test
/// inputs of `gen` lines, a share of them carrying one defect each.
pub fn gen_lines(count: usize, seed: u64, version: Option<u8>, invalid_rate: f64) -> Vec<u8> {
    let (count, seed, rate) = (
        count.to_string(),
        seed.to_string(),
        invalid_rate.to_string(),
    );
    let mut args = vec![
        "gen",
        "--count",
        &count,
        "--seed",
        &seed,
        "--invalid-rate",
        &rate,
    ];
    let version = version.map(|v| v.to_string());
    if let Some(version) = &version {
        args.extend(["--version", version]);
    }
    let out = run(&args, b"");
    assert!(out.status.success(), "{}", stderr(&out));
    out.stdout
}

/// The closing line's timing, which no two runs share.
pub fn without_timings(text: &str) -> String {
    text.lines()
        .map(|line| match (line.find(" MB in "), line.rfind(" MB/s)")) {
            (Some(at), Some(_)) if line.starts_with("rdq-envelope: ") => {
                format!("{} MB in (time))", &line[..at])
            }
            _ => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}
