//! Golden tests of `rdq-envelope gen`, and of the bundled sample that `gen` made.

use crate::common;
use common::{bin, run, scratch, stderr, stdout};
use rdq_envelope::JsonParser;

#[test]
fn gen_is_deterministic_and_validates() {
    let args = ["gen", "--count", "200", "--seed", "9", "--version", "1"];
    let first = run(&args, b"");
    assert!(first.status.success(), "{}", stderr(&first));
    assert_eq!(stdout(&first).lines().count(), 200);
    assert!(stdout(&first).ends_with('\n'));
    assert_eq!(first.stdout, run(&args, b"").stdout);

    let checked = run(&["validate", "-q"], &first.stdout);
    assert_eq!(checked.status.code(), Some(0), "{}", stdout(&checked));
}

#[test]
fn gen_defects_are_rejected() {
    let generated = run(
        &[
            "gen",
            "--count",
            "400",
            "--seed",
            "3",
            "--invalid-rate",
            "0.5",
        ],
        b"",
    );
    assert!(generated.status.success());
    let dir = scratch("gen-defects");
    let summary = dir.join("summary.json");
    let checked = run(
        &["validate", "-q", "--summary", summary.to_str().unwrap()],
        &generated.stdout,
    );
    assert_eq!(checked.status.code(), Some(1));
    let counts: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    assert_eq!(counts["lines"], 400);
    let rejected = counts["rejected"].as_u64().unwrap();
    assert!((150..250).contains(&rejected), "{rejected} of 400 rejected");
}

#[test]
fn gen_writes_output_files_atomically_and_refuses_bad_flags() {
    let dir = scratch("gen-output");
    let path = dir.join("out.jsonl");
    let written = run(&["gen", "--count", "5", "-o", path.to_str().unwrap()], b"");
    assert!(written.status.success(), "{}", stderr(&written));
    assert!(written.stdout.is_empty());
    assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 5);
    // Nothing but the output is left in the folder.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);

    for bad in [
        &["gen"][..],
        &["gen", "--count", "1", "--version", "3"],
        &["gen", "--count", "1", "--invalid-rate", "1.5"],
        &["gen", "--count", "-4"],
    ] {
        let out = run(bad, b"");
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(!stderr(&out).is_empty(), "{bad:?}");
    }
}

/// `--stack-bytes N`: every failure's stack is N bytes or a frame short of it (the limit counts
/// unescaped UTF-8 bytes), the lines still validate, up to the stack limit itself.
#[test]
fn gen_stack_bytes_pads_every_failure_stack() {
    for (stack_bytes, seed) in [("4096", "4"), ("65536", "5")] {
        let args = [
            "gen",
            "--count",
            "40",
            "--seed",
            seed,
            "--stack-bytes",
            stack_bytes,
        ];
        let generated = run(&args, b"");
        assert!(generated.status.success(), "{}", stderr(&generated));
        assert_eq!(generated.stdout, run(&args, b"").stdout);
        let checked = run(&["validate", "-q"], &generated.stdout);
        assert_eq!(checked.status.code(), Some(0), "{}", stdout(&checked));

        let target: usize = stack_bytes.parse().unwrap();
        // The crate's parser, not serde_json: gen's unknown members hold numbers like 1e400.
        let mut parser = JsonParser::new();
        let mut stacks = 0;
        for line in stdout(&generated).lines() {
            let envelope = parser.parse(line.as_bytes(), &mut Vec::new()).unwrap();
            for attempt in envelope.root().get("attempts").unwrap().elements() {
                let outcome = attempt.get("outcome").and_then(|o| o.as_str());
                if !matches!(outcome, Some("RETRYABLE_FAILURE" | "PERMANENT_FAILURE")) {
                    continue;
                }
                let error = attempt.get("error").unwrap();
                let stack = error
                    .get("stack")
                    .and_then(|s| s.as_str())
                    .expect("a stack");
                // Short of the target by less than the longest frame.
                assert!(
                    (target - 200..=target).contains(&stack.len()),
                    "{} bytes for {target}",
                    stack.len()
                );
                assert!(stack.contains("\n\tat org.springframework.aop."));
                stacks += 1;
            }
        }
        assert!(stacks >= 40, "{stacks} stacks in 40 lines");
    }

    for bad in [
        &["gen", "--count", "1", "--stack-bytes", "1000"][..],
        &["gen", "--count", "1", "--stack-bytes", "65537"],
        &[
            "gen",
            "--count",
            "1",
            "--stack-bytes",
            "4096",
            "--format",
            "chokaq",
        ],
    ] {
        let out = run(bad, b"");
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(stderr(&out).contains("--stack-bytes"), "{bad:?}");
    }
}

#[test]
fn gen_into_a_closed_pipe_ends_quietly() {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = bin()
        .args(["gen", "--count", "1000000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 4096];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The README's first command reads `samples/dlq-sample.jsonl.zst`; `samples/make-sample.sh`
/// says how it was made. Hold the committed file to that recipe, so the two cannot drift.
#[test]
fn the_bundled_sample_is_the_recipes_gen_output() {
    let sample =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/dlq-sample.jsonl.zst");
    let compressed = std::fs::read(&sample).unwrap();
    let lines = zstd::decode_all(&compressed[..]).unwrap();
    let recipe = run(
        &[
            "gen",
            "--count",
            "300",
            "--seed",
            "2",
            "--version",
            "1",
            "--invalid-rate",
            "0.025",
        ],
        b"",
    );
    assert!(
        lines == recipe.stdout,
        "samples/dlq-sample.jsonl.zst is stale: run samples/make-sample.sh"
    );

    let checked = bin().arg("validate").arg(&sample).output().unwrap();
    assert_eq!(checked.status.code(), Some(1));
    assert_eq!(stdout(&checked).lines().count(), 7);
    assert!(stderr(&checked).contains("300 lines: 293 valid, 7 rejected"));
}

/// `--size`: whole lines coming to within 10% of the size (decimal and binary units), the
/// same bytes for the same seed, and the closing line on standard error (none with -q).
#[test]
fn gen_size_writes_about_that_many_bytes() {
    let args = ["gen", "--size", "2MB", "--seed", "5"];
    let first = run(&args, b"");
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let len = first.stdout.len() as f64;
    assert!((len - 2e6).abs() <= 2e5, "{len} bytes for 2MB");
    assert!(first.stdout.ends_with(b"\n"));
    let second = run(&args, b"");
    assert!(
        first.stdout == second.stdout,
        "--size 2MB differs between runs"
    );
    let lines = stdout(&first).lines().count();
    let closing = stderr(&first);
    assert_eq!(
        closing,
        format!(
            "rdq-envelope: wrote {} envelopes ({:.1} MB) to standard output\n",
            rdq_envelope::report::thousands(lines as u64),
            len / 1e6
        )
    );
    let checked = run(&["validate", "-q"], &first.stdout);
    assert_eq!(checked.status.code(), Some(0), "{}", stdout(&checked));

    for (size, bytes) in [("1MiB", 1048576.0), ("300000", 3e5), ("0.5 MB", 5e5)] {
        let out = run(&["gen", "--size", size, "-q", "--format", "chokaq"], b"");
        assert_eq!(out.status.code(), Some(0), "{size}: {}", stderr(&out));
        assert!(out.stderr.is_empty(), "-q: {}", stderr(&out));
        let len = out.stdout.len() as f64;
        assert!(
            (len - bytes).abs() <= bytes / 10.0,
            "{len} bytes for {size}"
        );
    }

    // A size under one line still writes one, and a file is named in the closing line.
    let dir = scratch("gen-size");
    let path = dir.join("one.jsonl");
    let out = run(&["gen", "--size", "1", "-o", path.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 1);
    assert!(
        stderr(&out).starts_with("rdq-envelope: wrote 1 envelope (")
            && stderr(&out).ends_with(&format!(") to {}\n", path.display())),
        "{}",
        stderr(&out)
    );
}

#[test]
fn gen_refuses_bad_sizes() {
    for bad in [
        "0",
        "0KB",
        "0.0001",
        "-1",
        "-1MB",
        "NaN",
        "inf",
        "1e9",
        "",
        ".",
        "1.2.3",
        "12XB",
        "MB",
        "1 G B",
        "20000000000000000000",
        "19000000TB",
        "99999999999999999999999999999999999999999",
    ] {
        let out = run(&["gen", "--size", bad], b"");
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(stderr(&out).contains("--size"), "{bad:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{bad:?}");
    }
    let out = run(&["gen", "--size", "1MB", "--count", "3"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--count"), "{}", stderr(&out));
}
