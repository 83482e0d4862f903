//! Golden tests of `rdq-envelope convert` (docs/proto.md#convert): they spawn the real binary.
//! JSON → proto → JSON over `gen` corpora and the compliance fixtures, then the hostile walk
//! (docs: /work's HOSTILE list): streams cut short, lengths that lie, garbage, an empty stream,
//! a full disk, an output that is the input, signals.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common;
use crate::hostile::outputs::temporaries;
use common::{bin, gen_lines, run, scratch, stderr};

fn to_proto(json: &[u8], extra: &[&str]) -> std::process::Output {
    let mut args = vec!["convert", "--to", "proto", "-q"];
    args.extend_from_slice(extra);
    run(&args, json)
}

fn from_proto(stream: &[u8], extra: &[&str]) -> std::process::Output {
    let mut args = vec!["convert", "--from", "proto", "-q"];
    args.extend_from_slice(extra);
    run(&args, stream)
}

fn records(path: &Path) -> Vec<serde_json::Value> {
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn gen_corpora_of_both_versions_come_back_byte_for_byte_for_any_jobs() {
    for version in [1, 2] {
        let json = gen_lines(3000, 11, Some(version), 0.0);
        let one = to_proto(&json, &["-j1"]);
        assert_eq!(one.status.code(), Some(0), "{}", stderr(&one));
        let two = to_proto(&json, &["-j2"]);
        assert!(
            one.stdout == two.stdout,
            "v{version}: -j changes the stream"
        );
        let back = from_proto(&one.stdout, &["-j2"]);
        assert_eq!(back.status.code(), Some(0), "{}", stderr(&back));
        assert!(back.stdout == json, "v{version}: not the same lines");
        assert!(back.stdout == from_proto(&one.stdout, &["-j1"]).stdout);
    }
}

/// The compliance fixtures' valid lines: each comes back as the same JSON value, and a line
/// the canonical writer wrote comes back byte for byte.
#[test]
fn compliance_fixtures_keep_their_value_and_canonical_lines_their_bytes() {
    let mut input = Vec::new();
    for path in &common::compliance_case_paths() {
        let bytes = fs::read(path).unwrap();
        // One line each; the framing fixtures (CR LF, BOM, several lines) are the framing's.
        if bytes.iter().filter(|&&b| b == b'\n').count() > 1 || bytes.contains(&b'\r') {
            continue;
        }
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
        // A blank line is valid input but no envelope.
        if bytes.iter().all(|b| b" \t\n".contains(b)) {
            continue;
        }
        let valid = run(&["validate", "-q"], bytes).status.code() == Some(0);
        if valid {
            input.extend_from_slice(bytes.strip_suffix(b"\n").unwrap_or(bytes));
            input.push(b'\n');
        }
    }
    let lines: Vec<&[u8]> = input
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    assert!(lines.len() >= 70, "{}", lines.len());
    let stream = to_proto(&input, &[]);
    assert_eq!(stream.status.code(), Some(0), "{}", stderr(&stream));
    let canonical = from_proto(&stream.stdout, &[]);
    assert_eq!(canonical.status.code(), Some(0), "{}", stderr(&canonical));
    let out: Vec<&[u8]> = canonical
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(out.len(), lines.len());
    for (line, back) in lines.iter().zip(&out) {
        // Members in any order, strings unescaped, numbers exactly (1e400 included).
        assert!(
            crate::codec::same_value(line, back),
            "{}\n{}",
            String::from_utf8_lossy(line),
            String::from_utf8_lossy(back)
        );
    }
    // Canonical lines: the same bytes again.
    let again = from_proto(&to_proto(&canonical.stdout, &[]).stdout, &[]);
    assert!(again.stdout == canonical.stdout);
}

#[test]
fn invalid_lines_are_rejected_and_the_books_balance() {
    let dir = scratch("convert-rejects");
    let json = gen_lines(500, 3, None, 0.1);
    let path = |name: &str| dir.join(name).to_str().unwrap().to_owned();
    let (x, r, s) = (path("x.pb"), path("r.jsonl"), path("s.json"));
    let args = [
        "convert",
        "--to",
        "proto",
        "-o",
        &x,
        "--rejects",
        &r,
        "--summary",
        &s,
    ];
    let out = run(&args, &json);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let summary: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("s.json")).unwrap()).unwrap();
    let (valid, rejected) = (
        summary["valid"].as_u64().unwrap(),
        summary["rejected"].as_u64().unwrap(),
    );
    assert_eq!(valid + rejected, 500, "{summary}");
    assert_eq!(records(&dir.join("r.jsonl")).len() as u64, rejected);
    let back = from_proto(&fs::read(dir.join("x.pb")).unwrap(), &[]);
    assert_eq!(
        back.stdout.iter().filter(|&&b| b == b'\n').count() as u64,
        valid
    );
}

/// A stream cut inside its last message: every message before it is written, the rest is one
/// reject naming the message's index and offset.
#[test]
fn a_truncated_stream_is_one_reject_after_the_messages_before_it() {
    let dir = scratch("convert-cut");
    let json = gen_lines(20, 5, Some(2), 0.0);
    let stream = to_proto(&json, &[]).stdout;
    let cut = &stream[..stream.len() - 10];
    let rejects = dir.join("r.jsonl");
    let out = from_proto(cut, &["--rejects", rejects.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let lines: Vec<&[u8]> = json
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(
        out.stdout,
        [lines[..19].join(&b'\n'), b"\n".to_vec()].concat()
    );
    let records = records(&rejects);
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["message"], 19);
    let message = records[0]["errors"][0]["message"].as_str().unwrap();
    assert!(message.contains("the stream ends after"), "{message}");
    let offset = records[0]["offset"].as_u64().unwrap();
    // The offset is where message 19's length prefix starts.
    let mut reader = rdq_envelope::proto::DelimitedReader::new(&stream[..]);
    let mut last = 0;
    while let Some(frame) = reader.next_message().unwrap() {
        last = frame.offset;
    }
    assert_eq!(offset, last);
}

#[test]
fn a_huge_length_prefix_is_refused_before_anything_is_allocated() {
    let dir = scratch("convert-huge");
    // 2^63 - 1, then a few bytes: refused at once, not read.
    let stream = b"\xff\xff\xff\xff\xff\xff\xff\xff\x7fabc";
    let rejects = dir.join("r.jsonl");
    let out = from_proto(stream, &["--rejects", rejects.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    let records = records(&rejects);
    assert_eq!(records.len(), 1);
    let message = records[0]["errors"][0]["message"].as_str().unwrap();
    assert!(message.contains("is over the limit"), "{message}");
}

#[test]
fn garbage_and_text_are_rejects_never_a_crash() {
    let mut garbage = Vec::new();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..100_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        garbage.push(x as u8);
    }
    for input in [
        &garbage[..],
        &gen_lines(20, 1, None, 0.0)[..],
        b"\x00\x00\x00",
    ] {
        let out = from_proto(input, &[]);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
        assert!(!stderr(&out).contains("panick"), "{}", stderr(&out));
    }
    // JSON Lines given to --from proto: a reject, and a JSON line read as a stream is not
    // quietly turned into envelopes.
    let out = from_proto(&gen_lines(3, 1, None, 0.0), &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
}

#[test]
fn an_empty_stream_is_no_envelope_and_success() {
    let out = from_proto(b"", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    let out = to_proto(b"", &[]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    // Zero-length messages: each is a message with no field, refused (no status).
    let out = from_proto(b"\x00\x00", &[]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_full_disk_fails_the_run_and_leaves_no_output() {
    let json = gen_lines(50, 2, None, 0.0);
    let out = run(&["convert", "--to", "proto", "-o", "/dev/full"], &json);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("/dev/full"), "{}", stderr(&out));
    let stream = to_proto(&json, &[]).stdout;
    let out = run(&["convert", "--from", "proto", "-o", "/dev/full"], &stream);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn outputs_that_are_the_input_or_name_the_other_format_are_refused() {
    let dir = scratch("convert-alias");
    let json_path = dir.join("in.jsonl");
    fs::write(&json_path, gen_lines(10, 2, None, 0.0)).unwrap();
    let p = json_path.to_str().unwrap();
    let out = run(&["convert", "--to", "proto", p, "-o", p], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("says JSON"), "{}", stderr(&out));
    let bin_path = dir.join("in.bin");
    fs::write(
        &bin_path,
        to_proto(&fs::read(&json_path).unwrap(), &[]).stdout,
    )
    .unwrap();
    let b = bin_path.to_str().unwrap();
    let out = run(&["convert", "--from", "proto", b, "-o", b], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("input file is output file"),
        "{}",
        stderr(&out)
    );
    let before = fs::read(&bin_path).unwrap();
    assert_eq!(fs::read(&bin_path).unwrap(), before);
    let pb = dir.join("out.pb");
    let out = run(
        &["convert", "--from", "proto", b, "-o", pb.to_str().unwrap()],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("says protobuf"), "{}", stderr(&out));
    // Neither direction, or both: usage errors.
    for args in [
        &["convert"][..],
        &["convert", "--to", "json"],
        &["convert", "--from", "proto", "--to", "proto"],
    ] {
        let out = run(args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn compressed_outputs_and_inputs_follow_their_names_and_magic() {
    let dir = scratch("convert-zst");
    let json = gen_lines(200, 8, None, 0.0);
    for name in ["x.pb.zst", "x.pb.gz"] {
        let path = dir.join(name);
        let out = to_proto(&json, &["-o", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let back = run(
            &["convert", "--from", "proto", "-q", path.to_str().unwrap()],
            b"",
        );
        assert_eq!(back.status.code(), Some(0), "{}", stderr(&back));
        assert!(back.stdout == json, "{name}");
    }
    let out = dir.join("back.jsonl.zst");
    let stream = to_proto(&json, &[]).stdout;
    let back = from_proto(&stream, &["-o", out.to_str().unwrap()]);
    assert_eq!(back.status.code(), Some(0));
    let plain = run(
        &[
            "validate",
            "-q",
            "--valid-out",
            "/dev/stdout",
            "-o",
            "/dev/null",
            out.to_str().unwrap(),
        ],
        b"",
    );
    assert!(plain.stdout == json);
}

#[test]
fn binary_to_a_terminal_is_refused() {
    let Some(script) = common::tool_or_skip(&["script"], "a terminal for standard output") else {
        return;
    };
    let command = format!(
        "{} convert --to proto </dev/null",
        env!("CARGO_BIN_EXE_rdq-envelope")
    );
    let out = std::process::Command::new(script)
        .args(["-qec", &command, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("writes binary"), "{text}");
    assert_eq!(out.status.code(), Some(2), "{text}");
}

/// SIGTERM while a stream is still arriving: status 143, no temporary file, the previous
/// output as it was; both directions.
#[test]
fn a_signal_mid_run_leaves_the_outputs_as_they_were() {
    let dir = scratch("convert-signal");
    let json = gen_lines(200, 4, None, 0.0);
    let stream = to_proto(&json, &[]).stdout;
    for (direction, input) in [("--to", &json), ("--from", &stream)] {
        fs::write(dir.join("out"), "previous\n").unwrap();
        let mut child = bin()
            .current_dir(&dir)
            .args([
                "convert",
                direction,
                "proto",
                "-o",
                "out",
                "--rejects",
                "r.jsonl",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(input).unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while temporaries(&dir).len() < 2 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(temporaries(&dir).len(), 2, "{direction}");
        let sent = std::process::Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let status = child.wait().unwrap();
        drop(stdin);
        assert_eq!(status.code(), Some(143), "{direction}");
        assert!(temporaries(&dir).is_empty(), "{direction}");
        assert_eq!(fs::read_to_string(dir.join("out")).unwrap(), "previous\n");
        assert!(!dir.join("r.jsonl").exists());
    }
}
