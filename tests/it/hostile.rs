//! Hostile input, at the command line: whatever arrives, the tool must not crash, hang, blow up
//! memory, or lose or corrupt a line. Each case checks the exact exit status, the diagnostic,
//! and that the books balance. The heavy cases run the release binary (`cargo run --release`'s,
//! built once if it is not there).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use crate::common;
use common::{scratch, stderr};

/// A valid DLQ line, without its terminator.
const VALID: &str = include_str!("../data/dlq_line.json");

/// The variable that names a release binary already built for these tests: CI builds the
/// wheel's binary first (with zig, for manylinux2014) and runs these cases on it, what ships,
/// rather than build a second release binary.
const PREBUILT: &str = "RDQ_ENVELOPE_TEST_RELEASE_BIN";

/// The release binary: the one `RDQ_ENVELOPE_TEST_RELEASE_BIN` names, else the one `cargo run
/// --release` builds (default features, cargo's own target folder), built on first use if it
/// is not there or not fresh. So a newcomer who ran the README's first command has it already,
/// and one who runs the tests first has built what that command runs. The build takes its own
/// lock (`target/release`), not the one `cargo test` holds (`target/debug`).
fn release() -> Command {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    let bin = BIN.get_or_init(|| {
        if let Some(prebuilt) = std::env::var_os(PREBUILT).filter(|v| !v.is_empty()) {
            let prebuilt = PathBuf::from(prebuilt);
            assert!(
                prebuilt.is_file(),
                "{PREBUILT}={}: no such file",
                prebuilt.display()
            );
            return prebuilt;
        }
        // A cold release build takes minutes: say what it is first, and let cargo's own lines
        // show it going.
        {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "hostile tests: building the release binary, as `cargo run --release` does (their \
                 inputs are too large for a debug build; several minutes when cold, seconds when \
                 that command ran before; {PREBUILT}=PATH uses one already built)"
            );
        }
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let out = Command::new(env!("CARGO"))
            .args(["build", "--release", "--bin", "rdq-envelope"])
            .args(["--message-format", "json-render-diagnostics"])
            .current_dir(root)
            .stderr(Stdio::inherit())
            .output()
            .expect("cargo runs");
        assert!(out.status.success(), "the release build failed");
        // Where cargo put it (CARGO_TARGET_DIR and config alike): its artifact message says.
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "rdq-envelope")
            .find_map(|m| m["executable"].as_str().map(PathBuf::from))
            .expect("cargo names the binary it built")
    });
    Command::new(bin)
}

fn spawn(args: &[&str]) -> Child {
    common::spawn_with(release(), args)
}

/// Runs `validate` with `args` on what `feed` writes to its standard input, with a summary;
/// returns the output and the summary.
fn validate(args: &[&str], feed: impl FnOnce(&mut dyn Write) + Send + 'static) -> (Output, Value) {
    let dir = scratch(&format!(
        "hostile-{}",
        std::thread::current().name().unwrap_or("x")
    ));
    let summary = dir.join("summary.json");
    let mut all = vec!["validate", "--summary", summary.to_str().unwrap()];
    all.extend_from_slice(args);
    let mut child = spawn(&all);
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || feed(&mut stdin));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let books = std::fs::read(&summary)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null);
    (out, books)
}

fn bytes(data: Vec<u8>) -> impl FnOnce(&mut dyn Write) + Send + 'static {
    move |w| {
        let _ = w.write_all(&data);
    }
}

fn balanced(books: &Value) -> bool {
    let n = |k: &str| books[k].as_u64().unwrap();
    n("lines") == n("blank") + n("emitted") + n("rejected") + n("filtered_out")
        && n("valid") == n("emitted") + n("filtered_out")
}

/// Every row's code, from the human diagnostics.
fn codes(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|row| row.split(": ").nth(2).unwrap_or("").to_owned())
        .collect()
}

#[test]
fn hundred_thousand_nested_arrays() {
    let line = format!("{{\"a\":{}{}}}\n", "[".repeat(100_000), "]".repeat(100_000));
    let (out, books) = validate(&["-q"], bytes(line.into_bytes()));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(codes(&out), ["NESTING_TOO_DEEP"]);
    assert!(balanced(&books) && books["rejected"] == 1);
}

/// The peak resident set of a running process, from /proc (Linux).
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn a_200_mb_line_is_line_too_long_in_bounded_memory_and_the_run_goes_on() {
    let dir = scratch("huge-line");
    let rejects = dir.join("rejects.jsonl");
    let mut child = spawn(&[
        "validate",
        "-q",
        "-j2",
        "--rejects",
        rejects.to_str().unwrap(),
    ]);
    let mut stdin = child.stdin.take().unwrap();
    let block = vec![b'x'; 1 << 20];
    for _ in 0..200 {
        stdin.write_all(&block).unwrap();
    }
    stdin.write_all(b"\n").unwrap();
    stdin.write_all(VALID.trim_end().as_bytes()).unwrap();
    stdin.write_all(b"\n").unwrap();
    // A second one, without a final LF.
    for _ in 0..200 {
        stdin.write_all(&block).unwrap();
    }
    std::thread::sleep(Duration::from_millis(300));
    let peak = peak_rss_kib(child.id());
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    if let Some(peak) = peak {
        assert!(peak < 200 * 1024, "peak RSS {peak} KiB");
    }
    let rows = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        rows.lines()
            .map(|r| r.split(": ").nth(2).unwrap())
            .collect::<Vec<_>>(),
        ["LINE_TOO_LONG", "LINE_TOO_LONG"]
    );
    assert!(rows.starts_with("<stdin>:1: <line>: ") && rows.contains("\n<stdin>:3: "));
    let records = std::fs::read_to_string(&rejects).unwrap();
    for record in records.lines() {
        let r: Value = serde_json::from_str(record).unwrap();
        assert_eq!(r["raw"].as_str().unwrap().len(), 65_536);
        assert_eq!(r["raw_truncated"], true);
    }
}

#[test]
fn invalid_utf8_in_keys_and_values_and_nul_bytes() {
    let lines: [&[u8]; 4] = [
        b"{\"k\xff\":1}",
        b"{\"k\":\"caf\xe9\"}",
        b"{\"k\":\"a\0b\"}",
        b"{\"k\":1}\0",
    ];
    let data = lines.join(&b'\n');
    let (out, books) = validate(&["-q"], bytes(data));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        codes(&out),
        [
            "INVALID_UTF8",
            "INVALID_UTF8",
            "MALFORMED_JSON",
            "MALFORMED_JSON"
        ]
    );
    assert!(balanced(&books) && books["rejected"] == 4);
}

#[test]
fn truncated_compressed_streams_are_exit_2_with_the_offset_and_no_partial_output() {
    let text: String = (0..300).map(|_| VALID.to_owned()).collect();
    let zst = zstd::encode_all(text.as_bytes(), 3).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    for (name, data) in [("cut.zst", &zst), ("cut.gz", &gz)] {
        let dir = scratch(&format!("truncated-{name}"));
        let (input, output) = (dir.join(name), dir.join("out.jsonl"));
        std::fs::write(&input, &data[..data.len() * 2 / 3]).unwrap();
        let out = release()
            .args(["validate", "-q", input.to_str().unwrap()])
            .args(["--valid-out", output.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = stderr(&out);
        assert!(
            err.contains(name) && err.contains("at byte offset"),
            "{err}"
        );
        assert!(!output.exists());
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "no litter");
    }
}

#[test]
fn a_small_zstd_stream_of_2_gb_of_blank_lines_stays_in_bounded_memory() {
    // 2 GiB of 1 KiB blank lines, compressed to a few KB: the reader's books and the chunks'
    // line lists must not grow with them. Regression: a chunk closed only on its bytes, and
    // blank lines copy none, so 50 MB of LF once took 2.3 GB (a chunk now also closes on its
    // number of lines).
    let mut line = vec![b' '; 1023];
    line.push(b'\n');
    let block: Vec<u8> = line.repeat(1024);
    let mut encoder = zstd::Encoder::new(Vec::new(), 19).unwrap();
    for _ in 0..2048 {
        encoder.write_all(&block).unwrap();
    }
    let bomb = encoder.finish().unwrap();
    assert!(bomb.len() < 1 << 20, "{} bytes", bomb.len());
    let mut child = spawn(&["validate", "-j2"]);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&bomb).unwrap();
    drop(stdin);
    let pid = child.id();
    let watcher = std::thread::spawn(move || {
        let mut peak = 0;
        while let Some(now) = peak_rss_kib(pid) {
            peak = peak.max(now);
            std::thread::sleep(Duration::from_millis(50));
        }
        peak
    });
    let out = child.wait_with_output().unwrap();
    let peak = watcher.join().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out)
            .starts_with("rdq-envelope: 2,097,152 lines: 0 valid, 0 rejected, 2,097,152 blank"),
        "{}",
        stderr(&out)
    );
    assert!(peak < 100 * 1024, "peak RSS {peak} KiB");
}

#[test]
fn a_full_device_is_exit_2_through_stdout_and_through_o() {
    let input = format!("{}\n{VALID}", VALID.replace("billing.invoices", "Billing"));
    for through_o in [false, true] {
        let mut command = release();
        command.args(["validate", "-q"]);
        if through_o {
            command.args(["-o", "/dev/full"]);
        } else {
            command.stdout(std::fs::File::create("/dev/full").unwrap());
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = stderr(&out);
        let name = if through_o { "/dev/full" } else { "<stdout>" };
        assert!(err.contains(name) && err.contains("No space left"), "{err}");
    }
    assert!(
        Path::new("/dev/full").exists(),
        "the device is left as it was"
    );
}

#[test]
fn stdout_closed_early_is_quiet_and_exit_0() {
    let bad = format!(
        "{}\n",
        VALID.trim_end().replace("billing.invoices", "Billing")
    );
    let mut child = spawn(&["validate", "--format", "json"]);
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        for _ in 0..100_000 {
            if stdin.write_all(bad.as_bytes()).is_err() {
                break;
            }
        }
    });
    let mut first = [0u8; 64];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
}

#[test]
fn empty_bom_and_cr_only_inputs() {
    let cases: [(&[u8], u64, u64); 4] = [
        (b"", 0, 0),
        (b"\xEF\xBB\xBF", 0, 0),
        (b"\r\r\n\r\n\r", 3, 3),
        (b"\r", 1, 1),
    ];
    for (input, lines, blank) in cases {
        let (out, books) = validate(&["-q"], bytes(input.to_vec()));
        assert_eq!(out.status.code(), Some(0), "{input:?}");
        assert_eq!(
            (books["lines"].as_u64(), books["blank"].as_u64()),
            (Some(lines), Some(blank))
        );
        assert!(balanced(&books));
    }
}

#[test]
fn a_directory_and_a_dangling_symlink_are_exit_2() {
    let dir = scratch("not-files");
    let link = dir.join("dangling");
    std::os::unix::fs::symlink(dir.join("missing"), &link).unwrap();
    for path in [&dir, &link] {
        let out = release()
            .args(["validate", path.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(
            stderr(&out).contains(path.to_str().unwrap()),
            "{}",
            stderr(&out)
        );
    }
}

#[test]
fn duplicate_keys_behind_escapes() {
    let line = VALID.replacen(
        r#""status":"DEAD""#,
        r#""status":"DEAD","st\u0061tus":"DEAD""#,
        1,
    );
    let (out, books) = validate(&["-q"], bytes(line.into_bytes()));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim_end(),
        "<stdin>:1: /status: DUPLICATE_KEY: this key appears more than once in its object"
    );
    assert!(balanced(&books) && books["by_code"]["DUPLICATE_KEY"] == 1);
}

#[test]
fn numbers_of_ten_thousand_digits() {
    let digits = "7".repeat(10_000);
    let unknown = VALID
        .trim_end()
        .replacen('{', &format!("{{\"x\":{digits}.5e-{digits},"), 1);
    let count = VALID.replacen(
        r#""attempt_count":3"#,
        &format!(r#""attempt_count":{digits}"#),
        1,
    );
    let (out, books) = validate(&["-q"], bytes(format!("{unknown}\n{count}").into_bytes()));
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(codes(&out), ["OUT_OF_RANGE", "INCONSISTENT_STATE"]);
    assert!(balanced(&books) && books["valid"] == 1);
}

#[test]
fn a_million_keys_in_one_object() {
    let mut line = String::from("{");
    for i in 0..1_000_000 {
        line.push_str(&format!("\"k{i}\":{i},"));
    }
    line.push_str("\"k17\":0}\n");
    let started = std::time::Instant::now();
    let (out, books) = validate(
        &[
            "-q",
            "--max-envelope-bytes",
            "100000000",
            "--max-line-bytes",
            "100000000",
        ],
        bytes(line.into_bytes()),
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().next(),
        Some("<stdin>:1: /k17: DUPLICATE_KEY: this key appears more than once in its object")
    );
    assert!(balanced(&books));
    assert!(started.elapsed() < Duration::from_secs(60), "quadratic?");
}

/// Crash safety: a run killed with SIGKILL leaves each output path as it was (the previous
/// complete file, or nothing), never a partial file.
#[test]
fn a_killed_run_leaves_no_partial_output() {
    let dir = scratch("killed");
    let (out, rejects, fresh) = (
        dir.join("out.txt"),
        dir.join("rejects.jsonl"),
        dir.join("new.jsonl"),
    );
    std::fs::write(&out, "previous out\n").unwrap();
    std::fs::write(&rejects, "previous rejects\n").unwrap();
    let mut child = spawn(&[
        "validate",
        "-o",
        out.to_str().unwrap(),
        "--rejects",
        rejects.to_str().unwrap(),
        "--valid-out",
        fresh.to_str().unwrap(),
    ]);
    let mut stdin = child.stdin.take().unwrap();
    let bad = format!(
        "{}\n{}\n",
        VALID.trim_end().replace("billing.invoices", "Billing"),
        VALID.trim_end()
    );
    // Enough for the temporary files to hold several chunks, then a pause mid-run.
    for _ in 0..3_000 {
        stdin.write_all(bad.as_bytes()).unwrap();
    }
    let temps = || {
        std::fs::read_dir(&dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .contains(".rdq-tmp.")
            })
            .count()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while temps() < 3 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    drop(stdin);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "previous out\n");
    assert_eq!(
        std::fs::read_to_string(&rejects).unwrap(),
        "previous rejects\n"
    );
    assert!(!fresh.exists());
}

// The promises of issue "every promise at every edge", one module per class of failure.
#[path = "hostile/meanings.rs"]
mod meanings;
#[path = "hostile/memory.rs"]
mod memory;
#[path = "hostile/outputs.rs"]
pub(crate) mod outputs;
#[cfg(feature = "s3")]
#[path = "hostile/store.rs"]
mod store;
#[path = "hostile/where_guard.rs"]
pub(crate) mod where_guard;
