//! The proto mapping held against a real client (docs/proto.md#held-against-python): Python's
//! protobuf, with the `.proto` files compiled by `grpc_tools.protoc` (grpcio-tools from PyPI),
//! reads what `convert --to proto` writes, field by field as the mapping says, over the valid
//! compliance fixtures and `gen` corpora of both versions; and the tool reads what Python
//! writes: every message Python decoded and encoded again, and messages Python built itself
//! (tri-states, year 0000 and 9999, unknown members at every level, a key's own spelling).
//! Skipped without python3, grpcio-tools or protobuf outside CI; .ci/run installs them.

use std::fs;
use std::path::Path;
use std::process::Command;

use rdq_envelope::envelope::Envelope;

use crate::common::{self, gen_lines, run, scratch, stderr};

fn python_with_protobuf() -> bool {
    let found = Command::new("python3")
        .args(["-c", "import grpc_tools.protoc, google.protobuf"])
        // Its traceback is kept, not printed: the skip line says what is missing.
        .output()
        .is_ok_and(|o| o.status.success())
        .then_some(())
        .ok_or_else(|| {
            "python3 cannot import grpc_tools and google.protobuf (pip install grpcio-tools protobuf)"
                .to_owned()
        });
    common::need_or_skip(found, "the proto mapping's Python cross-test").is_some()
}

/// The canonical lines of the valid compliance fixtures (one envelope each).
fn compliance_canonical() -> Vec<u8> {
    let mut out = Vec::new();
    for path in common::compliance_case_paths() {
        let bytes = fs::read(&path).unwrap();
        let line = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
        if line.contains(&b'\n') {
            continue;
        }
        if let Ok(envelope) = Envelope::from_json(line) {
            envelope.write_vec(&mut out);
        }
    }
    out
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn python_reads_what_the_tool_writes_and_the_tool_reads_what_python_writes() {
    if common::tool_or_skip(&["python3"], "the proto mapping's Python cross-test").is_none()
        || !python_with_protobuf()
    {
        return;
    }
    let dir = scratch("proto-python");
    let mut corpus = compliance_canonical();
    let fixtures = corpus.iter().filter(|&&b| b == b'\n').count();
    assert!(fixtures >= 70, "{fixtures}");
    corpus.extend(gen_lines(500, 21, Some(1), 0.0));
    corpus.extend(gen_lines(500, 22, Some(2), 0.0));
    let jsonl = dir.join("in.jsonl");
    fs::write(&jsonl, &corpus).unwrap();
    let stream = dir.join("in.pb");
    let out = run(
        &[
            "convert",
            "--to",
            "proto",
            "-q",
            path(&jsonl),
            "-o",
            path(&stream),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let work = dir.join("python");
    fs::create_dir_all(&work).unwrap();
    let (echo, own, own_jsonl) = (
        dir.join("echo.pb"),
        dir.join("own.pb"),
        dir.join("own.jsonl"),
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/proto_check.py");
    let proto_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("proto");
    let checked = Command::new("python3")
        .arg(script)
        .args([&proto_dir, &work, &stream, &jsonl, &echo, &own, &own_jsonl].map(|p| path(p)))
        .output()
        .unwrap();
    assert!(checked.status.success(), "{}", stderr(&checked));
    let report: serde_json::Value = serde_json::from_slice(&checked.stdout).unwrap();
    assert_eq!(report["messages"], fixtures + 1000, "{report}");
    eprintln!("proto cross-test: {report}");

    // Python's encodings (its own field order: 19 and 20 after 18) give back the same lines.
    let back = run(&["convert", "--from", "proto", "-q", path(&echo)], b"");
    assert_eq!(back.status.code(), Some(0), "{}", stderr(&back));
    assert!(
        back.stdout == corpus,
        "Python's re-encoding did not give back the lines"
    );

    // Messages Python built: the lines it says they stand for.
    let back = run(&["convert", "--from", "proto", "-q", path(&own)], b"");
    assert_eq!(back.status.code(), Some(0), "{}", stderr(&back));
    assert_eq!(
        String::from_utf8(back.stdout).unwrap(),
        fs::read_to_string(&own_jsonl).unwrap()
    );
}
