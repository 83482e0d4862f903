//! Between programs (docs/cli.md#latency): a slow producer's lines come out while its pipe is
//! still open, without `--line-buffered`. A producer writes a line every 200 ms and keeps the
//! pipe open; each line's output (the line, its rewrite, its row, its diagnostic) must appear
//! within [`BOUND`]. Before the linger nothing came out until the input ended.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::common::{self, gen_lines, run, scratch, spawn};

/// The most a line's output may take to appear: the linger is 50 ms, and a line takes a few
/// more to judge and write; the rest is room for a loaded machine. Without the linger the
/// output never comes while the pipe is open.
const BOUND: Duration = Duration::from_secs(2);

/// The producer's pace.
const PACE: Duration = Duration::from_millis(200);

/// What a trickled run gave: each line's latency, everything written on standard output, and
/// how it ended.
struct Trickled {
    latencies: Vec<Duration>,
    stdout: Vec<u8>,
    status: ExitStatus,
}

/// Writes `lines` into `sink` (the child's input, a pipe kept open) one every [`PACE`], and
/// after each waits until `out(i, lines so far)` says line `i`'s output is among the lines
/// the child wrote on standard output; fails when it takes more than [`BOUND`]. Then closes
/// the input and lets the child end.
fn trickle(
    child: Child,
    sink: Box<dyn Write>,
    lines: &[&[u8]],
    out: impl Fn(usize, &[Vec<u8>]) -> bool,
) -> Trickled {
    trickle_through(child, sink, lines, out, |stdout| Box::new(stdout))
}

/// [`trickle`], reading the child's standard output through `decode`.
fn trickle_through(
    mut child: Child,
    mut sink: Box<dyn Write>,
    lines: &[&[u8]],
    out: impl Fn(usize, &[Vec<u8>]) -> bool,
    decode: fn(std::process::ChildStdout) -> Box<dyn std::io::Read + Send>,
) -> Trickled {
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        // Here, not before the input is fed: a gzip decoder reads the header as it is made.
        let mut stdout = BufReader::new(decode(stdout));
        loop {
            let mut line = Vec::new();
            match stdout.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    if tx.send((Instant::now(), line)).is_err() {
                        return;
                    }
                }
            }
        }
    });
    let mut seen = Vec::new();
    let mut latencies = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let written = Instant::now();
        sink.write_all(line).unwrap();
        sink.flush().unwrap();
        let mut arrived = None;
        while !out(i, &seen) {
            let left = (written + BOUND).saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok((at, got)) => {
                    seen.push(got);
                    arrived = Some(at);
                }
                Err(_) => {
                    let _ = child.kill();
                    panic!(
                        "line {} of {}: its output did not appear within {BOUND:?} while the \
                         input was open (latencies so far {latencies:?}; {} output lines)",
                        i + 1,
                        lines.len(),
                        seen.len()
                    );
                }
            }
        }
        latencies.push(arrived.map_or(Duration::ZERO, |at| at.saturating_duration_since(written)));
        std::thread::sleep(PACE.saturating_sub(written.elapsed()));
    }
    drop(sink);
    let status = child.wait().unwrap();
    reader.join().unwrap();
    seen.extend(rx.try_iter().map(|(_, line)| line));
    Trickled {
        latencies,
        stdout: seen.concat(),
        status,
    }
}

/// `input`'s lines, each with its LF.
fn lines_of(input: &[u8]) -> Vec<&[u8]> {
    input.split_inclusive(|&b| b == b'\n').collect()
}

/// Feeds `input`'s lines to `args` on standard input, each output line answering one input
/// line in order (plus `extra` lines first, a header); then checks the output against a run
/// over the whole input at once.
fn each_line_comes_out(args: &[&str], input: &[u8], extra: usize) {
    let lines = lines_of(input);
    let mut child = spawn(args);
    let stdin = child.stdin.take().unwrap();
    let got = trickle(child, Box::new(stdin), &lines, |i, seen| {
        seen.len() > i + extra
    });
    assert!(
        got.status.code().is_some_and(|c| c < 2),
        "{args:?}: {:?}",
        got.status
    );
    let whole = run(args, input);
    assert_eq!(
        got.stdout, whole.stdout,
        "{args:?}: the bytes of one run over the input"
    );
    eprintln!("{args:?}: latencies {:?}", got.latencies);
}

/// Valid version 2 lines, then `DEAD` ones only for `redrive`.
fn valid(count: usize) -> Vec<u8> {
    let input = gen_lines(count, 7, None, 0.0);
    assert_eq!(lines_of(&input).len(), count);
    input
}

#[test]
fn filter_writes_each_line_while_the_input_is_open() {
    each_line_comes_out(&["filter", "-q"], &valid(5), 0);
}

#[test]
fn filter_on_two_jobs_writes_each_line_while_the_input_is_open() {
    each_line_comes_out(&["filter", "-q", "-j2", "--queue", "*"], &valid(4), 0);
}

#[test]
fn migrate_writes_each_line_while_the_input_is_open() {
    let input = gen_lines(5, 7, Some(1), 0.0);
    each_line_comes_out(&["migrate", "-q", "--to", "2"], &input, 0);
}

#[test]
fn redrive_writes_each_task_while_the_input_is_open() {
    let dead = run(&["filter", "-q", "--status", "DEAD"], &valid(40)).stdout;
    let dead: Vec<u8> = lines_of(&dead)[..4].concat();
    let at = "--at=2026-05-01T12:00:00.000Z";
    each_line_comes_out(&["redrive", "-q", at, "--rate", "10/s"], &dead, 0);
}

#[test]
fn export_writes_each_row_while_the_input_is_open() {
    // The header comes with the first row.
    each_line_comes_out(&["export", "-q"], &valid(4), 1);
}

#[test]
fn dedupe_keep_first_writes_each_first_copy_while_the_input_is_open() {
    each_line_comes_out(&["dedupe", "-q", "--keep", "first"], &valid(4), 0);
}

/// `validate -o -`: every line answers on standard output, a bad line with its diagnostic and a
/// good one as itself (`--valid-out /dev/stdout`): both outputs are flushed.
#[test]
fn validate_writes_each_diagnostic_and_valid_line_while_the_input_is_open() {
    let input = gen_lines(6, 3, None, 0.5);
    let lines = lines_of(&input);
    let args = [
        "validate",
        "-q",
        "-o",
        "-",
        "--format",
        "json",
        "--valid-out",
        "/dev/stdout",
    ];
    let mut child = spawn(&args);
    let stdin = child.stdin.take().unwrap();
    let answers = |i: usize, seen: &[Vec<u8>]| {
        let diagnostic = format!("{{\"source\":\"<stdin>\",\"line\":{},", i + 1);
        seen.iter()
            .any(|out| out == lines[i] || out.starts_with(diagnostic.as_bytes()))
    };
    let got = trickle(child, Box::new(stdin), &lines, answers);
    assert_eq!(got.status.code(), Some(1), "some lines are bad");
    let rejected = got.stdout.windows(10).any(|w| w == b"\"errors\":[");
    assert!(rejected, "a bad line was among them");
    let whole = run(&args, &input);
    let sorted = |bytes: &[u8]| {
        let mut lines = lines_of(bytes)
            .into_iter()
            .map(<[u8]>::to_vec)
            .collect::<Vec<_>>();
        lines.sort();
        lines
    };
    // Two outputs on one stream: each in input order, interleaved as they were flushed.
    assert_eq!(sorted(&got.stdout), sorted(&whole.stdout));
}

/// A FIFO named as the input, and compressed input over a pipe: the quiet is the pipe's.
#[test]
fn a_fifo_input_is_not_held() {
    let dir = scratch("latency-fifo");
    let fifo = dir.join("in.fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let input = valid(4);
    let child = common::bin()
        .args(["filter", "-q", fifo.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Opening a FIFO to write waits for its reader: the run opens it.
    let writer = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    let got = trickle(child, Box::new(writer), &lines_of(&input), |i, seen| {
        seen.len() > i
    });
    assert_eq!(got.status.code(), Some(0));
    assert_eq!(got.stdout, input);
}

#[test]
fn a_gzip_stream_flushed_line_by_line_is_not_held() {
    let input = valid(4);
    let mut child = spawn(&["filter", "-q"]);
    let stdin = child.stdin.take().unwrap();
    // Each flush ends a deflate block at a byte boundary: the line can be decoded at once.
    let gzip = flate2::write::GzEncoder::new(stdin, flate2::Compression::default());
    let got = trickle(child, Box::new(gzip), &lines_of(&input), |i, seen| {
        seen.len() > i
    });
    assert_eq!(got.status.code(), Some(0));
    assert_eq!(got.stdout, input);
}

/// A file's lines are written out before a standard input that stays silent is read.
#[test]
fn a_file_before_a_silent_standard_input_is_written_out() {
    let dir = scratch("latency-file-then-stdin");
    let file = dir.join("first.jsonl");
    let input = valid(3);
    std::fs::write(&file, &input).unwrap();
    let args = ["filter", "-q", file.to_str().unwrap(), "-"];
    let mut child = spawn(&args);
    let stdin = child.stdin.take().unwrap();
    // No line is fed at all: the file's three must come out while standard input is open.
    let got = trickle(child, Box::new(stdin), &[b"" as &[u8]], |_, seen| {
        seen.len() >= 3
    });
    assert_eq!(got.status.code(), Some(0));
    assert_eq!(got.stdout, input);
}

/// A compressed standard output is flushed too: each zstd or gzip block ends where the input
/// went quiet, so a reader decoding the stream as it comes gets every line while the input is
/// open.
#[test]
fn a_compressed_output_ends_a_block_when_the_input_goes_quiet() {
    let input = valid(3);
    let lines = lines_of(&input);
    let zstd: fn(_) -> Box<dyn std::io::Read + Send> =
        |stdout| Box::new(zstd::stream::read::Decoder::new(stdout).unwrap());
    let gzip: fn(_) -> Box<dyn std::io::Read + Send> =
        |stdout| Box::new(flate2::read::MultiGzDecoder::new(stdout));
    for (kind, decode) in [("zstd", zstd), ("gzip", gzip)] {
        for jobs in ["-j1", "-j2"] {
            let mut child = spawn(&["filter", "-q", jobs, "--compress", kind]);
            let stdin = child.stdin.take().unwrap();
            let got = trickle_through(
                child,
                Box::new(stdin),
                &lines,
                |i, seen| seen.len() > i,
                decode,
            );
            assert_eq!(got.status.code(), Some(0), "{kind} {jobs}");
            assert_eq!(got.stdout, input, "{kind} {jobs}");
        }
    }
}
