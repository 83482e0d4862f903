//! Golden tests of `rdq-envelope show`: the envelope pretty and lossless, payloads by content
//! type, `--all`, invalid lines skipped, exit statuses, and reading that stops at the first
//! match.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use base64_simd::STANDARD as BASE64;

use crate::common;
use common::{run, spawn, stderr, stdout};

const ID: &str = "01HWWSVG9K5147QHW8JGCGTH9V";
const OTHER: &str = "01HWWSVG9K5147QHW8JGCGTH9W";

/// A valid v1 envelope with `id`, payload bytes and content type.
fn envelope(id: &str, payload: &[u8], content_type: &str) -> String {
    let line = std::fs::read_to_string("tests/compliance/cases/valid_v1_empty_payload.line")
        .unwrap()
        .trim_end()
        .to_owned();
    line.replace(ID, id)
        .replace(
            "\"payload\":\"\"",
            &format!("\"payload\":\"{}\"", BASE64.encode_to_string(payload)),
        )
        .replace("application/octet-stream", content_type)
}

/// Removes the white space between tokens: what `show` added.
fn squeeze(pretty: &str) -> String {
    let mut out = Vec::new();
    rdq_envelope::json::compact(pretty.as_bytes(), &mut out);
    String::from_utf8(out).unwrap()
}

#[test]
fn the_envelope_is_pretty_and_only_white_space_changes() {
    let unusual =
        std::fs::read_to_string("tests/compliance/cases/valid_v1_escapes_in_keys_and_values.line")
            .unwrap();
    let unusual_id = serde_json::from_str::<serde_json::Value>(&unusual).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let input = format!(
        "{}\n{}\n{unusual}",
        envelope(OTHER, b"x", "text/plain"),
        envelope(ID, b"{}", "application/json")
    );
    let out = run(&["show", ID], input.as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("{\n  \"envelope_version\": 1,\n  \"id\": \""),
        "{text}"
    );
    assert!(text.contains("\n  \"attempts\": []\n}\n"), "{text}");
    assert_eq!(squeeze(&text), envelope(ID, b"{}", "application/json"));
    assert!(stderr(&out).is_empty());

    let out = run(&["show", &unusual_id], input.as_bytes());
    assert_eq!(
        squeeze(&stdout(&out)),
        unusual.trim_end(),
        "escapes and numbers kept"
    );
}

#[test]
fn payloads_show_by_content_type() {
    let cases: [(&[u8], &str, &str); 4] = [
        (
            b"{\"order\":7,\"items\":[1.50]}",
            "application/json; charset=utf-8",
            "--- payload: application/json; charset=utf-8, 26 bytes ---\n{\n  \"order\": 7,\n  \"items\": [\n    1.50\n  ]\n}\n",
        ),
        (
            b"plain words\n",
            "text/plain",
            "--- payload: text/plain, 12 bytes ---\nplain words\n",
        ),
        (
            b"not {json",
            "application/json",
            "--- payload: application/json, 9 bytes ---\nnot {json\n",
        ),
        (
            b"\x89PNG\r\n",
            "image/png",
            "--- payload: image/png, 6 bytes ---\n00000000  89 50 4e 47 0d 0a                                 |.PNG..|\n00000006\n",
        ),
    ];
    for (payload, content_type, want) in cases {
        let input = envelope(ID, payload, content_type);
        let out = run(&["show", ID, "--payload"], input.as_bytes());
        assert_eq!(out.status.code(), Some(0));
        let text = stdout(&out);
        let payload_part = &text[text.find("--- payload").unwrap()..];
        assert_eq!(payload_part, want, "{content_type}");

        let only = run(&["show", ID, "--payload-only"], input.as_bytes());
        assert_eq!(
            only.stdout, payload,
            "--payload-only gives the bytes as they are"
        );
    }
}

#[test]
fn a_claim_check_payload_is_named_not_decoded() {
    let line =
        std::fs::read_to_string("tests/compliance/cases/valid_v2_in_flight_payload_ref.line")
            .unwrap();
    let out = run(
        &["show", "01J1YC3S0CAKHCP02101YHB6A2", "--payload"],
        line.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).ends_with(
        "--- no inline payload: payload_ref s3://rdq-claims/archive/2024/07/04/tenant-acme/batch-0007.tar.zst ---\n"
    ));
}

#[test]
fn the_first_copy_unless_all_and_invalid_lines_are_skipped() {
    let first = envelope(ID, b"first", "text/plain");
    let second = envelope(ID, b"second", "text/plain");
    let invalid = envelope(ID, b"bad", "text/plain").replace("\"PENDING\"", "\"LOST\"");
    // Filler between the copies so that they fall in different chunks at -j2.
    let filler: String = (0..400)
        .map(|_| envelope(OTHER, &[b'f'; 3000], "text/plain") + "\n")
        .collect();
    let input = format!("{invalid}\n{filler}{first}\n{filler}\n{second}\n");
    for jobs in ["1", "2"] {
        let out = run(
            &["show", ID, "--payload-only", "-j", jobs],
            input.as_bytes(),
        );
        assert_eq!(out.stdout, b"first", "-j {jobs}");
        let out = run(
            &["show", ID, "--payload-only", "--all", "-j", jobs],
            input.as_bytes(),
        );
        assert_eq!(out.stdout, b"firstsecond", "-j {jobs}");
    }
    let out = run(&["show", ID], format!("{invalid}\n").as_bytes());
    assert_eq!(out.status.code(), Some(1), "an invalid line does not count");
    assert!(out.stdout.is_empty());
    assert_eq!(
        stderr(&out),
        format!("rdq-envelope: no valid envelope has the ID {ID}\n")
    );
}

#[test]
fn an_id_spelled_with_escapes_is_found() {
    let escaped_id = format!("\\u0030{}", &ID[1..]);
    let line = envelope(ID, b"e", "text/plain").replace(ID, &escaped_id);
    let out = run(&["show", ID, "--payload-only"], line.as_bytes());
    assert_eq!(out.stdout, b"e");
}

#[test]
fn usage_errors_exit_2() {
    let out = run(&["show", "01hwwsvg9k5147qhw8jgcgth9v"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("IDs are upper-case: 01HWWSVG9K5147QHW8JGCGTH9V"));
    let out = run(&["show", "not-a-ulid"], b"");
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["show", ID, "--payload", "--payload-only"], b"");
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["show", ID, "/no/such/file"], b"");
    assert_eq!(out.status.code(), Some(2));
    // A file that cannot be opened says so, with no line or offset it never had.
    assert_eq!(
        stderr(&out),
        "rdq-envelope: /no/such/file: cannot open: No such file or directory (os error 2)\n"
    );
}

/// `show FILE ID`, the arguments swapped: the message says which is which and the right order.
#[test]
fn an_id_and_a_file_swapped_get_a_hint() {
    let dir = common::scratch("show-swapped");
    let file = dir.join("dlq.jsonl");
    std::fs::write(&file, envelope(ID, b"e", "text/plain") + "\n").unwrap();
    let file = file.to_str().unwrap();
    let out = run(&["show", file, ID], b"");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        format!(
            "rdq-envelope: {file:?} is not a canonical ULID, so no valid envelope has it; \
             {file:?} is a file and \"{ID}\" looks like an ID: the ID comes first \
             (rdq-envelope show {ID} {file})\n"
        )
    );
    // Without an ID among the files, the order alone.
    let out = run(&["show", file], b"");
    assert!(
        stderr(&out).contains(&format!("{file:?} is a file: the ID comes first")),
        "{}",
        stderr(&out)
    );
    // The right order finds it.
    let out = run(&["show", ID, file], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// The envelope first, then a stream that never ends: `show` must stop reading and exit on
/// its own. Without `--all` it does not wait for the end of the input.
#[test]
fn reading_stops_at_the_first_match() {
    let mut child = spawn(&["show", ID, "--payload-only"]);
    let mut input = child.stdin.take().unwrap();
    let target = envelope(ID, b"found", "text/plain") + "\n";
    let filler = envelope(OTHER, &[b'f'; 3000], "text/plain") + "\n";
    let writer = std::thread::spawn(move || {
        input.write_all(target.as_bytes()).ok()?;
        // Far more than any chunk or pipe buffer: reading on would never end.
        loop {
            input.write_all(filler.as_bytes()).ok()?;
        }
        #[allow(unreachable_code)]
        Some(())
    });
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert_eq!(status.code(), Some(0));
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "show kept reading after its match"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.stdout, b"found");
    // The writer ends on the closed pipe.
    writer.join().unwrap();
}

/// Regression (issue 16): `--payload-only` of a claim-check envelope printed nothing and exited
/// 0, which passes for an empty payload.
#[test]
fn payload_only_of_a_claim_check_envelope_says_why_on_stderr_and_exits_1() {
    let line =
        std::fs::read_to_string("tests/compliance/cases/valid_v2_in_flight_payload_ref.line")
            .unwrap();
    let out = run(
        &["show", "01J1YC3S0CAKHCP02101YHB6A2", "--payload-only"],
        line.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        stderr(&out),
        "rdq-envelope: <stdin>:1: the envelope 01J1YC3S0CAKHCP02101YHB6A2 has no inline payload \
         to print: its payload is by reference, at \
         s3://rdq-claims/archive/2024/07/04/tenant-acme/batch-0007.tar.zst (payload_ref)\n"
    );
}

const CONTROLS: &[u8] = b"red \x1b[31mRED\x1b[0m, bell \x07, tab\t, CR\r\n\xc2\x9b[2J";

/// Into a pipe (or a file), a text payload's bytes pass as they are.
#[test]
fn payload_control_characters_pass_as_they_are_into_a_pipe() {
    let line = envelope(ID, CONTROLS, "text/plain");
    let out = run(&["show", ID, "--payload"], line.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.ends_with(&[CONTROLS, b"\n"].concat()));
}

/// Regression (issue 16): `show --payload` wrote a payload's escape sequences to the
/// terminal, which acts on them. On a terminal (a pty, under `script`), they are made visible.
#[test]
fn payload_control_characters_are_escaped_on_a_terminal() {
    if common::tool_or_skip(&["script"], "a terminal made by `script`").is_none() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("rdq-cli-{}-tty", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("controls.jsonl");
    std::fs::write(&input, envelope(ID, CONTROLS, "text/plain")).unwrap();
    let command = format!(
        "{} show {ID} --payload {}",
        env!("CARGO_BIN_EXE_rdq-envelope"),
        input.display()
    );
    let out = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The terminal turns each LF into CR LF.
    let text = String::from_utf8(out.stdout).unwrap().replace("\r\n", "\n");
    assert!(
        text.ends_with("red \\x1b[31mRED\\x1b[0m, bell \\x07, tab\t, CR\\x0d\n\\u{9b}[2J\n"),
        "{text:?}"
    );
    assert!(!text.bytes().any(|b| b == 0x1b || b == 0x07));
    let _ = std::fs::remove_dir_all(&dir);
}
