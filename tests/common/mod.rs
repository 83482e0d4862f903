//! Helpers for the golden CLI tests: spawn the real binary, feed it, read what it wrote.
// Each test crate uses its own subset of these.
#![allow(dead_code)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

/// The binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rdq-envelope"))
}

/// A fresh scratch folder for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rdq-cli-{}-{name}", std::process::id()));
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
