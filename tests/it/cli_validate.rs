//! Golden tests of `rdq-envelope validate`: they spawn the real binary (docs/cli.md#validate is the
//! contract).

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use serde_json::Value;

const VALID: &str = include_str!("../data/dlq_line.json");

use crate::common;
use common::{bin, run, scratch, stderr, stdout};

/// The valid sample line with `from` replaced by `to` (once).
fn with(from: &str, to: &str) -> String {
    assert!(VALID.contains(from), "{from}");
    VALID.replacen(from, to, 1)
}

fn bad_queue() -> String {
    with(r#""queue":"billing.invoices""#, r#""queue":"Billing""#)
}

fn json_lines(s: &str) -> Vec<Value> {
    s.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn exit_0_when_every_line_is_valid() {
    let out = run(&["validate"], format!("{VALID}\n{VALID}\n").as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    assert!(stderr(&out).starts_with("rdq-envelope: 2 lines: 2 valid, 0 rejected, 0 blank"));
}

#[test]
fn human_diagnostics_name_source_line_pointer_and_code() {
    let input = format!("{VALID}\n\n{}\n{{\"a\":\n", bad_queue());
    let out = run(&["validate", "-q"], input.as_bytes());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        "<stdin>:3: /queue: INVALID_NAME: \"Billing\" is not 1-240 characters of a-z 0-9 . _ -\n\
         <stdin>:4: <line>: MALFORMED_JSON: not JSON: the line ends where a value was expected\n"
    );
    assert_eq!(stderr(&out), "", "--quiet prints nothing but errors");
}

#[test]
fn json_diagnostics_carry_offset_and_id() {
    let input = format!("{VALID}\n{}\n[1]\n", bad_queue());
    let out = run(&["validate", "--format", "json", "-q"], input.as_bytes());
    assert_eq!(out.status.code(), Some(1));
    let records = json_lines(&stdout(&out));
    assert_eq!(records.len(), 2);
    assert_eq!(records[0]["source"], "<stdin>");
    assert_eq!(records[0]["line"], 2);
    assert_eq!(records[0]["offset"], VALID.len() + 1);
    assert_eq!(records[0]["id"], "01HWT0D7G0Q8V9W2R4T6Y8A0B2");
    assert_eq!(records[0]["errors"][0]["code"], "INVALID_NAME");
    assert_eq!(records[0]["errors"][0]["path"], "/queue");
    assert_eq!(records[0]["warnings"], serde_json::json!([]));
    assert_eq!(records[1]["id"], Value::Null);
    assert_eq!(records[1]["errors"][0]["code"], "NOT_AN_OBJECT");
}

#[test]
fn warnings_are_reported_only_when_asked() {
    let skewed = with(
        r#""created_at":"2024-05-01T12:00:00.000Z""#,
        r#""created_at":"2024-05-01T12:00:05.000Z""#,
    );
    let out = run(&["validate", "-q"], skewed.as_bytes());
    assert_eq!((out.status.code(), stdout(&out).as_str()), (Some(0), ""));
    let out = run(&["validate", "-q", "--warnings"], skewed.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout(&out),
        "<stdin>:1: /id: warning: ID_TIME_MISMATCH: the ULID's time and created_at differ by 5000 ms\n\
         <stdin>:1: /created_at: warning: CREATED_AFTER_START: created_at is 4000 ms after the first attempt started\n"
    );
    let out = run(
        &["validate", "-q", "--warnings", "--format", "json"],
        skewed.as_bytes(),
    );
    let r = &json_lines(&stdout(&out))[0];
    assert_eq!(r["errors"], serde_json::json!([]));
    assert_eq!(r["warnings"][0]["code"], "ID_TIME_MISMATCH");
}

#[test]
fn valid_out_rejects_and_summary() {
    let dir = scratch("outputs");
    // CRLF, a BOM, a blank line, a non-UTF-8 line: the valid lines come out byte-identical
    // (escapes and number spellings kept), with LF terminators.
    let odd_valid = with(r#""batch":17"#, r#""batch":1.0e+400,"s":"\u00e9\n""#);
    let input = format!("\u{feff}{VALID}\r\n   \r\n{odd_valid}\n{}\n", bad_queue());
    let mut input = input.into_bytes();
    input.extend_from_slice(b"{\"a\":\"\xff\"}\n");
    let (valid, rejects, summary) = (
        dir.join("valid.jsonl"),
        dir.join("rejects.jsonl"),
        dir.join("summary.json"),
    );
    let out = run(
        &[
            "validate",
            "-q",
            "--valid-out",
            valid.to_str().unwrap(),
            "--rejects",
            rejects.to_str().unwrap(),
            "--summary",
            summary.to_str().unwrap(),
        ],
        &input,
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&valid).unwrap(),
        format!("{VALID}\n{odd_valid}\n")
    );
    let records = json_lines(&std::fs::read_to_string(&rejects).unwrap());
    assert_eq!(records.len(), 2);
    assert_eq!(records[0]["line"], 4);
    assert_eq!(records[0]["raw"], bad_queue());
    assert_eq!(records[0]["errors"][0]["code"], "INVALID_NAME");
    assert!(records[0].get("raw_base64").is_none());
    assert_eq!(records[1]["line"], 5);
    assert_eq!(records[1]["errors"][0]["code"], "INVALID_UTF8");
    assert_eq!(records[1]["raw_base64"], "eyJhIjoi/yJ9");
    assert!(records[1].get("raw").is_none());
    let s: Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    assert_eq!(s["lines"], 5);
    assert_eq!(s["blank"], 1);
    assert_eq!(s["valid"], 2);
    assert_eq!(s["emitted"], 2);
    assert_eq!(s["rejected"], 2);
    assert_eq!(s["filtered_out"], 0);
    assert_eq!(
        s["by_code"],
        serde_json::json!({"INVALID_NAME": 1, "INVALID_UTF8": 1})
    );
    assert_eq!(s["bytes_in"], input.len());
    assert!(s["seconds"].as_f64().unwrap() >= 0.0);
}

#[test]
fn several_files_in_order_each_framed_on_its_own() {
    let dir = scratch("files");
    let a = dir.join("a.jsonl");
    let b = dir.join("b.jsonl");
    std::fs::write(&a, format!("{VALID}\n{}", bad_queue())).unwrap(); // no final LF
    std::fs::write(&b, format!("\u{feff}{}\n", bad_queue())).unwrap();
    let summary = dir.join("s.json");
    let out = run(
        &[
            "validate",
            "--format",
            "json",
            "--summary",
            summary.to_str().unwrap(),
            a.to_str().unwrap(),
            "-",
            b.to_str().unwrap(),
        ],
        format!("{}\n", bad_queue()).as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1));
    let got: Vec<_> = json_lines(&stdout(&out))
        .iter()
        .map(|r| {
            (
                r["source"].as_str().unwrap().to_owned(),
                r["line"].as_u64().unwrap(),
                r["offset"].as_u64().unwrap(),
            )
        })
        .collect();
    let (a, b) = (
        a.to_str().unwrap().to_owned(),
        b.to_str().unwrap().to_owned(),
    );
    assert_eq!(
        got,
        [
            (a, 2, VALID.len() as u64 + 1),
            ("<stdin>".to_owned(), 1, 0),
            (b, 1, 3)
        ]
    );
    let s: Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    assert_eq!(
        (s["lines"].as_u64(), s["rejected"].as_u64()),
        (Some(4), Some(3))
    );
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

#[test]
fn compressed_inputs_are_detected_from_their_bytes() {
    let dir = scratch("compressed");
    let text = format!("{VALID}\n{}\n", bad_queue());
    // Two concatenated frames / members each, and names that say nothing.
    let mut zst = zstd::encode_all(text.as_bytes(), 3).unwrap();
    zst.extend(zstd::encode_all(text.as_bytes(), 3).unwrap());
    let mut gz = gzip(text.as_bytes());
    gz.extend(gzip(text.as_bytes()));
    for (name, bytes) in [("input.data", zst), ("other.txt", gz)] {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        let out = run(&["validate", "-q", path.to_str().unwrap()], b"");
        assert_eq!(out.status.code(), Some(1), "{name}: {}", stderr(&out));
        let rows: Vec<_> = stdout(&out)
            .lines()
            .map(|l| l.split(": ").next().unwrap().to_owned())
            .collect();
        let p = path.to_str().unwrap();
        assert_eq!(rows, [format!("{p}:2"), format!("{p}:4")]);
    }
}

/// A gzip file padded with zero bytes after its last member (a tape's or a device's blocks)
/// is read as `gzip -d` reads it; other bytes after a member are named as trailing garbage,
/// not as a broken or truncated header.
#[test]
fn gzip_zero_padding_is_accepted_and_trailing_garbage_is_named() {
    let dir = scratch("gzip-padding");
    let text = format!("{VALID}\n");
    let padded = dir.join("padded.gz");
    std::fs::write(&padded, [gzip(text.as_bytes()), vec![0; 4096]].concat()).unwrap();
    let out = run(&["validate", padded.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("1 line: 1 valid"), "{}", stderr(&out));
    for (name, tail) in [("junk.gz", &b"junk\n"[..]), ("zeros-junk.gz", b"\0\0junk")] {
        let path = dir.join(name);
        std::fs::write(&path, [gzip(text.as_bytes()), tail.to_vec()].concat()).unwrap();
        let out = run(&["validate", "-q", path.to_str().unwrap()], b"");
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = stderr(&out);
        assert!(
            err.contains(": input failed after line 1, at byte offset ")
                && err.contains("corrupt gzip stream: trailing garbage after the last member")
                && !err.contains("header")
                && !err.contains("truncated"),
            "{name}: {err}"
        );
    }
}

#[test]
fn a_truncated_compressed_input_is_exit_2_and_leaves_no_output_file() {
    let dir = scratch("truncated");
    let text: String = (0..200).map(|_| format!("{VALID}\n")).collect();
    let zst = zstd::encode_all(text.as_bytes(), 3).unwrap();
    let path = dir.join("cut.zst");
    std::fs::write(&path, &zst[..zst.len() / 2]).unwrap();
    let valid = dir.join("valid.jsonl");
    std::fs::write(&valid, "previous\n").unwrap();
    let fresh = dir.join("fresh.jsonl");
    let out = run(
        &[
            "validate",
            path.to_str().unwrap(),
            "--valid-out",
            valid.to_str().unwrap(),
            "--rejects",
            fresh.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains(path.to_str().unwrap())
            && err.contains("byte offset")
            && err.contains("truncated zstd"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&valid).unwrap(),
        "previous\n",
        "the old file is untouched"
    );
    assert!(!fresh.exists(), "no partial file");
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        2,
        "no temporary file left"
    );
}

#[test]
fn device_outputs_are_written_directly() {
    let input = format!("{}\n", bad_queue());
    let out = run(
        &[
            "validate",
            "-q",
            "-o",
            "/dev/null",
            "--rejects",
            "/dev/null",
        ],
        input.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(Path::new("/dev/null").exists());
    let out = run(&["validate", "-q", "-o", "/dev/full"], input.as_bytes());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("/dev/full: write failed"),
        "{}",
        stderr(&out)
    );
    // Standard output on /dev/full.
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = bin()
        .args(["validate", "-q"])
        .stdin(Stdio::piped())
        .stdout(full)
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin.take().unwrap().write_all(input.as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("write failed"));
}

#[test]
fn a_closed_stdout_ends_the_run_quietly() {
    let dir = scratch("pipe");
    let big: String = (0..20_000).map(|_| format!("{}\n", bad_queue())).collect();
    let path = dir.join("big.jsonl");
    std::fs::write(&path, big).unwrap();
    let rejects = dir.join("rejects.jsonl");
    let mut child = bin()
        .args([
            "validate",
            path.to_str().unwrap(),
            "--rejects",
            rejects.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut first).unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stderr(&out), "", "not even the summary line");
    assert!(
        !rejects.exists(),
        "atomic outputs are not renamed into place"
    );
}

#[test]
fn limits_and_the_reader_cap() {
    let dir = scratch("limits");
    let rejects = dir.join("r.jsonl");
    let n = VALID.len();
    let long = format!("{}é{}", "x".repeat(65_535), "y".repeat(100));
    let input = format!("{VALID}\n{long}\n{VALID}\n");
    let out = run(
        &[
            "validate",
            "--format",
            "json",
            "-q",
            "--max-envelope-bytes",
            &(n - 1).to_string(),
            "--queue-limit",
            &format!("billing.invoices={n}"),
            "--max-line-bytes",
            "70000",
            "--rejects",
            rejects.to_str().unwrap(),
        ],
        input.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let records = json_lines(&std::fs::read_to_string(&rejects).unwrap());
    assert_eq!(
        records.len(),
        1,
        "the queue's own limit admits the envelope"
    );
    assert_eq!(records[0]["line"], 2);
    assert_eq!(records[0]["errors"][0]["code"], "PAYLOAD_TOO_LARGE");
    let out = run(
        &[
            "validate",
            "-q",
            "--max-line-bytes",
            "1000",
            "--rejects",
            rejects.to_str().unwrap(),
        ],
        input.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1));
    let records = json_lines(&std::fs::read_to_string(&rejects).unwrap());
    let codes: Vec<_> = records
        .iter()
        .map(|r| r["errors"][0]["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["LINE_TOO_LONG"; 3]);
    // "é" straddles the 65,536-byte cut: the raw moves back one byte.
    assert_eq!(records[1]["raw"].as_str().unwrap(), "x".repeat(65_535));
    assert_eq!(records[1]["raw_truncated"], true);
    assert!(
        records[0].get("raw_truncated").is_none(),
        "a 3 KB line is kept whole"
    );
}

#[test]
fn submit_and_require_version() {
    let submit =
        r#"{"queue":"mail","handler_ref":"send","payload":"","payload_content_type":"text/plain"}"#;
    let out = run(&["validate", "-q", "--submit"], submit.as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let out = run(
        &["validate", "-q", "--require-version", "2"],
        VALID.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        "<stdin>:1: /envelope_version: UNSUPPORTED_VERSION: version 1; --require-version 2\n"
    );
}

#[test]
fn usage_errors_are_exit_2() {
    for args in [
        &["validate", "--bogus"][..],
        &["validate", "--require-version", "3"],
        &["validate", "--require-version", "1", "--submit"],
        &["validate", "--queue-limit", "noequals"],
        &["validate", "--format", "xml"],
        &["nosuchcommand"],
    ] {
        let out = run(args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!stderr(&out).is_empty());
    }
}

#[test]
fn unreadable_inputs_are_exit_2() {
    let dir = scratch("unreadable");
    let link = dir.join("dangling");
    std::os::unix::fs::symlink(dir.join("missing"), &link).unwrap();
    for path in [dir.clone(), link] {
        let out = run(&["validate", path.to_str().unwrap()], b"");
        assert_eq!(out.status.code(), Some(2));
        assert!(
            stderr(&out).contains(path.to_str().unwrap()),
            "{}",
            stderr(&out)
        );
    }
}

#[test]
fn empty_input_and_a_lone_bom_have_no_lines() {
    for input in [&b""[..], b"\xEF\xBB\xBF"] {
        let out = run(&["validate"], input);
        assert_eq!(out.status.code(), Some(0));
        assert!(stderr(&out).contains("0 lines"));
    }
}

/// Regression: `--valid-out /dev/stdout` failed with "No such file or directory" when standard
/// output was a pipe (the symlink was resolved to `pipe:[N]`), and replaced the file by a
/// rename when standard output was redirected to one.
#[test]
fn dev_stdout_is_written_directly_whatever_stdout_is() {
    let input = format!("{VALID}\n");
    let piped = run(
        &["validate", "-q", "--valid-out", "/dev/stdout"],
        input.as_bytes(),
    );
    assert_eq!(piped.status.code(), Some(0), "{}", stderr(&piped));
    assert_eq!(stdout(&piped), input);

    let dir = scratch("dev-stdout");
    let path = dir.join("appended.jsonl");
    std::fs::write(&path, "kept\n").unwrap();
    let file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    let status = bin()
        .args(["validate", "-q", "--valid-out", "/dev/stdout"])
        .stdin(Stdio::piped())
        .stdout(file)
        .spawn()
        .and_then(|mut child| {
            child.stdin.take().unwrap().write_all(input.as_bytes())?;
            child.wait()
        })
        .unwrap();
    assert_eq!(status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        format!("kept\n{input}")
    );
}

/// Issue 33: with no input named and a terminal on standard input, the run says what it waits
/// for and how to end it, before it waits (a silent command on a terminal looks hung); not with
/// `-q`, and not when a file is named. The terminal is a pty made by `script`.
#[test]
fn a_terminal_on_standard_input_is_told_how_to_end_it() {
    use std::io::{Read, Write};
    use std::process::{Command, Stdio};
    if crate::common::tool_or_skip(&["script"], "a terminal made by `script`").is_none() {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_rdq-envelope");
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/dlq-sample.jsonl.zst");
    let hint = "reading envelopes from standard input (a terminal)";
    for (args, told) in [
        ("validate -o /dev/null", true),
        ("validate -q -o /dev/null", false),
        ("validate -o /dev/null -", true),
        (&*format!("validate -o /dev/null {sample}") as &str, false),
    ] {
        let mut child = Command::new("script")
            .args(["-qec", &format!("{bin} {args}"), "/dev/null"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut all = Vec::new();
            let _ = stdout.read_to_end(&mut all);
            all
        });
        // Time for the command to start and (maybe) speak, then standard input ends: `script`
        // ends the terminal's input when its own ends.
        std::thread::sleep(std::time::Duration::from_millis(700));
        let _ = stdin.write_all(b"\x04");
        drop(stdin);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                panic!("{args}: still waiting after Ctrl-D");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let text = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
        assert!(matches!(status.code(), Some(0 | 1)), "{args}: {text}");
        assert_eq!(text.contains(hint), told, "{args}: {text:?}");
        if told {
            assert!(text.contains("end with Ctrl-D"), "{text:?}");
        }
    }
}

/// `-o`'s name picks the diagnostics' format (.txt/.log: human rows; .json/.jsonl/.ndjson: JSON
/// objects; before any .zst or .gz); a different --format is status 2, as is an ending that
/// names neither without --format; no ending and `-` follow --format or human rows.
#[test]
fn the_output_name_picks_the_format_or_is_refused() {
    let sample = "samples/dlq-sample.jsonl.zst";
    let dir = scratch("validate-format-names");
    let kind = |bytes: &[u8]| match bytes.first() {
        Some(b'{') => "json",
        Some(b's') => "human",
        _ => "other",
    };
    for (name, format, expected) in [
        ("e.json", None, "json"),
        ("e.JSONL", None, "json"),
        ("e.ndjson", Some("json"), "json"),
        ("e.log", None, "human"),
        ("e.txt", Some("human"), "human"),
        ("errors", None, "human"),
        ("errors2", Some("json"), "json"),
        ("e.out", Some("json"), "json"),
    ] {
        let path = dir.join(name);
        let mut args = vec!["validate", "-q", sample, "-o", path.to_str().unwrap()];
        args.extend(format.iter().flat_map(|f| ["--format", f]));
        let out = bin().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{name}: {}", stderr(&out));
        assert_eq!(kind(&std::fs::read(&path).unwrap()), expected, "{name}");
    }
    let out = bin()
        .args(["validate", "-q", sample, "-o", "-"])
        .output()
        .unwrap();
    assert_eq!(kind(&out.stdout), "human");
    let zst = dir.join("e.json.zst");
    let out = bin()
        .args(["validate", "-q", sample, "-o", zst.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let plain = zstd::decode_all(std::fs::File::open(&zst).unwrap()).unwrap();
    assert_eq!(kind(&plain), "json");

    for (name, format, says) in [
        ("e.json", Some("human"), "--format human does not go with the name's .json"),
        ("e.log.gz", Some("json"), "--format json does not go with the name's .log"),
        (
            "e.out",
            None,
            "e.out: validate writes human or json: name the file .txt/.log/.json/.jsonl/.ndjson or give --format",
        ),
        ("e.csv", None, "give --format"),
    ] {
        let path = dir.join(name);
        let _ = std::fs::remove_file(&path);
        let mut args = vec!["validate", "-q", sample, "-o", path.to_str().unwrap()];
        args.extend(format.iter().flat_map(|f| ["--format", f]));
        let out = bin().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{name}");
        assert!(stderr(&out).contains(says), "{name}: {}", stderr(&out));
        assert!(!path.exists(), "{name} was written");
    }
}

/// The rejected lines counted by code, most first, follow the closing line: unasked on a
/// terminal (a pty made by `script`), with `--stats` anywhere (and with `-q`, alone); never
/// unasked into a pipe, or on a terminal when nothing was rejected.
#[test]
fn the_rejected_lines_by_code_follow_the_closing_line() {
    use std::process::Command;
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/dlq-sample.jsonl.zst");
    let heading = "rejected lines by code (rdq-envelope explain CODE says what one means):";
    let out = bin()
        .args(["validate", "--stats", "-o", "/dev/null", sample])
        .output()
        .unwrap();
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert!(
        lines[0].starts_with("rdq-envelope: 300 lines: 293 valid"),
        "{err}"
    );
    assert_eq!(lines[1], heading);
    assert_eq!(lines[2], "      1  BAD_ATTEMPT");
    assert_eq!(lines.len(), 9, "{err}");
    let out = bin()
        .args(["validate", "-q", "--stats", "-o", "/dev/null", sample])
        .output()
        .unwrap();
    assert!(stderr(&out).starts_with(heading), "{}", stderr(&out));
    let out = bin()
        .args(["validate", "-o", "/dev/null", sample])
        .output()
        .unwrap();
    assert!(!stderr(&out).contains(heading));
    // A standard error that cannot take the block fails the run, every output as it was.
    let diagnostics = scratch("codes-to-a-full-stderr").join("diagnostics.txt");
    let status = bin()
        .args([
            "validate",
            "-q",
            "--stats",
            "-o",
            diagnostics.to_str().unwrap(),
            sample,
        ])
        .stderr(
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap(),
        )
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(2));
    assert!(!diagnostics.exists());
    if crate::common::tool_or_skip(&["script"], "a terminal made by `script`").is_none() {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_rdq-envelope");
    let valid = scratch("codes-on-a-terminal").join("valid.jsonl");
    let out = crate::common::run(
        &[
            "validate",
            "-q",
            "--valid-out",
            valid.to_str().unwrap(),
            sample,
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    for (args, shown) in [
        (format!("{bin} validate -o /dev/null {sample}"), true),
        (format!("{bin} validate -q -o /dev/null {sample}"), false),
        (
            format!("{bin} validate -o /dev/null {}", valid.display()),
            false,
        ),
    ] {
        let out = Command::new("script")
            .args(["-qec", &args, "/dev/null"])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(text.contains(heading), shown, "{args}: {text}");
        if shown {
            let closing = text.find("300 lines").unwrap();
            assert!(text.find(heading).unwrap() > closing, "{text}");
            assert!(text.contains("      1  UNKNOWN_OUTCOME"), "{text}");
        }
    }
}
