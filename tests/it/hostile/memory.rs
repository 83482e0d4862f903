//! Hostile cases: memory (see the parent module for the helpers). Issue 16, class 5: memory is
//! bounded by the input's size limits on every path, and one line under the default limits
//! never takes more than 256 MiB.

use super::*;

/// The promise for any single line under the default limits.
const LINE_PEAK_KIB: u64 = 256 * 1024;

/// Runs the release binary with `args` on `input`, keeping its standard input open until
/// `until` shows in its standard output, then reads its peak resident set while it still
/// waits for more: a peak sampled before it exits, whatever its speed. Returns the standard
/// output, the exit status and the peak (KiB; 0 where /proc is missing).
fn peak_until(args: &[&str], input: Vec<u8>, until: &'static str) -> (String, Option<i32>, u64) {
    let mut child = spawn(args);
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let (seen_tx, seen_rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let (mut all, mut block, mut told) = (Vec::new(), vec![0u8; 1 << 16], false);
        loop {
            let from = all.len().saturating_sub(until.len());
            match stdout.read(&mut block) {
                Ok(0) | Err(_) => break,
                Ok(n) => all.extend_from_slice(&block[..n]),
            }
            // Only the new bytes (and a cue cut by the previous read) are searched.
            if !told && memchr::memmem::find(&all[from..], until.as_bytes()).is_some() {
                told = true;
                let _ = seen_tx.send(());
            }
        }
        all
    });
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
        stdin
    });
    let seen = seen_rx.recv_timeout(Duration::from_secs(60)).is_ok();
    let peak = peak_rss_kib(pid).unwrap_or(0);
    drop(writer.join().unwrap());
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    assert!(seen, "{until:?} never came: {}", stderr(&out));
    (text, out.status.code(), peak)
}

/// A line that is not an object, so that `validate` reports it (at line 2) once `line` is done.
const MARKER: &str = "\n1\n";

fn rows(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|r| r.starts_with("<stdin>:1:"))
        .collect()
}

/// `{"<long key>":{"a":1,"a":1,...}}` of about `len` bytes.
fn duplicates_under_a_long_key(len: usize) -> String {
    let key = "k".repeat(len / 2);
    let members = vec![r#""a":1"#; len / 2 / 6].join(",");
    format!(r#"{{"{key}":{{{members}}}}}"#)
}

/// Regression: every diagnostic repeated the long pointer, so a 160 KB line took 2 GB and a
/// 480 KB one aborted on allocation.
#[test]
fn duplicate_keys_under_a_long_key_are_100_cut_diagnostics_and_a_summary_in_bounded_memory() {
    let line = duplicates_under_a_long_key(480_000);
    let repeats = 480_000 / 2 / 6 - 1;
    let input = format!("{line}{MARKER}").into_bytes();
    let (text, code, peak) =
        peak_until(&["validate", "-q", "--line-buffered"], input, "<stdin>:2:");
    assert_eq!(code, Some(1));
    assert!(peak < LINE_PEAK_KIB, "peak RSS {peak} KiB");
    let rows = rows(&text);
    assert_eq!(rows.len(), 101, "{}", &text[..text.len().min(2000)]);
    let cut = format!(
        "<stdin>:1: /{}…(+{} bytes): DUPLICATE_KEY: ",
        "k".repeat(255),
        240_003 - 256
    );
    assert!(
        rows[..100].iter().all(|r| r.starts_with(&cut)),
        "{}",
        rows[0]
    );
    assert_eq!(
        rows[100],
        format!(
            "<stdin>:1: <line>: DUPLICATE_KEY: ... and {} more diagnostics on this line",
            repeats - 100
        )
    );
}

/// The strict scanner's path (a line simd-json refuses: a number it cannot hold, unpaired
/// surrogates) keeps the same cap, and the summary's `by_code` still names every code.
#[test]
fn the_cold_path_caps_surrogates_and_duplicates_and_by_code_counts_both() {
    let key = "k".repeat(100_000);
    let surrogates = vec![r#""\ud800""#; 20_000].join(",");
    let duplicates = vec![r#""a":1"#; 20_000].join(",");
    let line = format!(r#"{{"n":1e400,"{key}":[{surrogates}],"d":{{{duplicates}}}}}"#);
    let (out, books) = validate(&["-q", "--format", "json"], bytes(line.into_bytes()));
    assert_eq!(out.status.code(), Some(1));
    let record: Value = serde_json::from_slice(&out.stdout).unwrap();
    let errors = record["errors"].as_array().unwrap();
    assert_eq!(
        errors.len(),
        102,
        "100, the first DUPLICATE_KEY, the summary"
    );
    let cut = format!("/{}…(+997", "k".repeat(255));
    assert!(errors[..100]
        .iter()
        .all(|e| e["code"] == "INVALID_UTF8" && e["path"].as_str().unwrap().starts_with(&cut)));
    assert_eq!(errors[100]["code"], "DUPLICATE_KEY");
    assert_eq!(errors[100]["path"], "/d/a");
    assert_eq!(
        errors[101],
        serde_json::json!({"code": "INVALID_UTF8", "path": "",
            "message": format!("... and {} more diagnostics on this line", 19_900 + 19_998)})
    );
    assert!(balanced(&books));
    assert_eq!(books["by_code"]["INVALID_UTF8"], 1);
    assert_eq!(books["by_code"]["DUPLICATE_KEY"], 1);
}

/// The rules' diagnostics (one per bad header here) and the reject record are capped too, and
/// the values a message quotes are cut.
#[test]
fn many_bad_headers_are_capped_in_the_output_and_the_reject_record() {
    let headers: Vec<String> = (0..3_000)
        .map(|i| format!(r#""h{i:04}{}":1"#, "x".repeat(250)))
        .collect();
    let line = VALID.trim_end().replacen(
        r#""tenant":"acme-eu"}"#,
        &format!(r#""tenant":"acme-eu",{}}}"#, headers.join(",")),
        1,
    );
    let line = line.replacen(
        r#""status":"DEAD""#,
        &format!(r#""status":"{}""#, "Z".repeat(5000)),
        1,
    );
    let dir = scratch("many-headers");
    let rejects = dir.join("rejects.jsonl");
    let (out, books) = validate(
        &["-q", "--rejects", rejects.to_str().unwrap()],
        bytes(line.into_bytes()),
    );
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows.len(), 102, "{}", &text[..text.len().min(2000)]);
    assert!(rows[0].starts_with("<stdin>:1: /headers/h0000xxx"));
    assert!(rows[0].contains("…(+8 bytes): WRONG_TYPE: expected"));
    assert!(
        rows[100].contains(": UNKNOWN_STATUS: \"ZZZZ"),
        "{}",
        rows[100]
    );
    assert!(
        rows[100].contains("\"…(+4936 bytes) is not a status"),
        "{}",
        rows[100]
    );
    assert_eq!(
        rows[101],
        "<stdin>:1: <line>: WRONG_TYPE: ... and 2900 more diagnostics on this line"
    );
    let record: Value =
        serde_json::from_str(std::fs::read_to_string(&rejects).unwrap().trim_end()).unwrap();
    assert_eq!(record["errors"].as_array().unwrap().len(), 102);
    assert!(balanced(&books) && books["by_code"]["UNKNOWN_STATUS"] == 1);
}

/// Migrations' refusals: one per attempt (`MIGRATION_CONFLICT`) or per `origin` member
/// (`CANNOT_DOWNGRADE`, under keys of any length).
#[test]
fn migration_refusals_are_capped() {
    let attempt = r#"{"attempt_no":N,"started_at":"2024-05-01T12:00:01.000Z","finished_at":"2024-05-01T12:00:02.000Z","outcome":"RETRYABLE_FAILURE","error":{"type":"t","message":"m"},"duration_ms":1}"#;
    let attempts: Vec<String> = (1..=1000)
        .map(|n| attempt.replace('N', &n.to_string()))
        .collect();
    let v1 = VALID
        .trim_end()
        .replacen(r#""attempt_count":3"#, r#""attempt_count":1000"#, 1);
    let (head, _) = v1.split_once(r#""attempts":["#).unwrap();
    let v1 = format!(r#"{head}"attempts":[{}],"x":1}}"#, attempts.join(","));
    let dir = scratch("migration-refusals");
    let rejects = dir.join("rejects.jsonl");
    let out = release()
        .args([
            "migrate",
            "-q",
            "--to",
            "2",
            "--rejects",
            rejects.to_str().unwrap(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            child.stdin.take().unwrap().write_all(v1.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let record: Value =
        serde_json::from_str(std::fs::read_to_string(&rejects).unwrap().trim_end()).unwrap();
    let errors = record["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 101, "{record}");
    assert!(errors[..100]
        .iter()
        .all(|e| e["code"] == "MIGRATION_CONFLICT"));
    assert_eq!(
        errors[100]["message"],
        "... and 900 more diagnostics on this line"
    );
}

/// Regression: a row with a huge `AttemptCount` under a huge `--max-envelope-bytes` tried to
/// rebuild billions of attempts (hundreds of GB). The reader cap bounds the envelope too.
#[test]
fn a_chokaq_row_of_four_billion_attempts_is_payload_too_large_under_any_size_limit() {
    let row = r#"{"Id":"j","Queue":"q","Type":"T","FailureReason":0,"AttemptCount":4294967295,"CreatedAtUtc":"2026-04-30T14:32:07","FailedAtUtc":"2026-04-30T14:32:07"}"#;
    // A good row after it: its envelope on the output is the cue.
    let good = row.replace("4294967295", "1");
    let input = format!("{row}\n{good}\n").into_bytes();
    let dir = scratch("chokaq-attempts");
    let rejects = dir.join("rejects.jsonl");
    let (_, code, peak) = peak_until(
        &[
            "migrate",
            "--from",
            "chokaq",
            "-q",
            "--max-envelope-bytes",
            "1000000000000000",
            "--line-buffered",
            "--rejects",
            rejects.to_str().unwrap(),
        ],
        input,
        "envelope_version",
    );
    assert_eq!(code, Some(1));
    assert!(peak < LINE_PEAK_KIB, "peak RSS {peak} KiB");
    let records = std::fs::read_to_string(&rejects).unwrap();
    let first: Value = serde_json::from_str(records.lines().next().unwrap()).unwrap();
    assert_eq!(first["errors"][0]["code"], "PAYLOAD_TOO_LARGE");
    let message = first["errors"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("over the reader cap of 16777216 bytes"),
        "{message}"
    );
}

/// Regression: `show --payload` of a JSON payload nested 27,000 deep took 1.4 GB (indentation
/// quadratic in the depth); it now stops growing at 32 levels.
#[test]
fn show_of_a_deeply_nested_json_payload_stays_small() {
    use base64_simd::STANDARD as BASE64;
    let depth = 27_000;
    let payload = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let line = VALID.trim_end().replace(
        VALID
            .split(r#""payload":""#)
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap(),
        &BASE64.encode_to_string(payload.as_bytes()),
    );
    // Enough other lines after it for its chunk to go to the workers while the input is
    // still open, then the end of the payload is the cue.
    let filler = format!(
        "{}\n",
        VALID
            .trim_end()
            .replace("01HWT0D7G0Q8V9W2R4T6Y8A0B2", "01HWT0D7G0Q8V9W2R4T6Y8A0B3")
    );
    let mut input = format!("{line}\n").into_bytes();
    while input.len() < 3 << 20 {
        input.extend_from_slice(filler.as_bytes());
    }
    let (text, code, peak) = peak_until(
        &[
            "show",
            "01HWT0D7G0Q8V9W2R4T6Y8A0B2",
            "--payload",
            "--all",
            "-j2",
        ],
        input,
        "\n]\n",
    );
    assert_eq!(code, Some(0));
    assert!(peak < 64 * 1024, "peak RSS {peak} KiB");
    assert!(text.len() < 2 * depth * 70, "{} bytes", text.len());
    let too_deep = " ".repeat(65);
    assert!(!text.lines().any(|l| l.starts_with(&too_deep)));
}

/// Many lines of a hundred capped diagnostics each: a chunk's output is written once it holds
/// 8 times the chunk's input, and the rest of the chunk worked on after, so the pool of chunks
/// never holds tens of times its input (this input took 147 MB before, 62 MB after).
#[test]
fn many_lines_of_a_hundred_diagnostics_each_stay_in_bounded_memory() {
    let line = format!("{{{}}}\n", vec![r#""a":1"#; 150].join(","));
    let mut input = line.repeat(12_000).into_bytes();
    input.extend_from_slice(MARKER.as_bytes());
    // Enough lines after the marker that its chunk is full and its row is flushed while the
    // input is still open (output goes out in large blocks).
    input.extend_from_slice(line.repeat(3_000).as_bytes());
    let dir = scratch("many-capped-lines");
    let rejects = dir.join("rejects.jsonl");
    let args = [
        "validate",
        "-q",
        "-j2",
        "--rejects",
        rejects.to_str().unwrap(),
    ];
    let (text, status, peak) = peak_until(&args, input, "<stdin>:12002:");
    assert_eq!(status, Some(1));
    // 100 kept, one summary per line; the marker's one.
    assert_eq!(text.lines().count(), 15_000 * 101 + 1);
    assert!(peak < 100 * 1024, "peak RSS {peak} KiB");
}

/// An error type has no length rule of its own: a stats table keeps at most 256 bytes of each
/// key (cut with a marker), so 100,000 distinct long types cannot hold 100,000 long strings.
#[test]
fn stats_keys_are_cut_to_256_bytes() {
    let long = "E".repeat(10_000);
    let line = VALID
        .trim_end()
        .replace("com.acme.billing.TemplateMissingException", &long);
    let out = {
        let mut child = spawn(&["stats", "-q", "--by", "error_type", "--format", "json"]);
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        drop(stdin);
        child.wait_with_output().unwrap()
    };
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cut = format!("{}…(+9744 bytes)", "E".repeat(256));
    assert_eq!(report["groups"][0]["key"], cut.as_str(), "{report}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !text.contains(&"E".repeat(257)),
        "no key longer than the cap"
    );
}
