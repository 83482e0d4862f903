//! One test per fixed bug, named after the bug (what it did, in the past tense). The
//! CHANGELOG's "Fixed" entries point here; a test that covers a feature as a whole stays in
//! its command's module.

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::cli_batch::{states, three_shards};
use crate::cli_conventions::{has_ansi, output, output_within, plain, with_env, SAMPLE};
use crate::cli_dedupe;
use crate::cli_filter::{self, envelope_at, stdout_text};
use crate::common::{self, bin, run, scratch, stderr, stdout, valid_lines};
use crate::hostile::where_guard::{filter, folder, refused, untouched};
use crate::pipeline::{awkward_stream, op, parallel, sequential, CAP};
use rdq_envelope::ops::ReportFormat;
use rdq_envelope::pipeline::PipelineOptions;

#[test]
fn simd_env_junk_value_was_silently_the_default() {
    let with = |value: &str, args: &[&str]| with_env(&[("RDQ_ENVELOPE_SIMD", value)], args);
    let reference = output(plain(), &["validate", "-q", SAMPLE]);
    // Every name, on any CPU (one it lacks is passed over), and empty, give the same bytes.
    for name in ["", "portable", "sse4.2", "avx2", "neon"] {
        let out = with(name, &["validate", "-q", SAMPLE]);
        assert_eq!(out.status.code(), Some(1), "{name:?}: {}", stderr(&out));
        assert_eq!(out.stdout, reference.stdout, "{name:?}");
    }
    // A typo is named before any input is opened, for every command.
    for bad in ["junk", "AVX2", "neon ", "sse42"] {
        for args in [
            &["validate", "-q", "/nonexistent/input.jsonl"][..],
            &["gen", "--count", "1"],
        ] {
            let out = with(bad, args);
            assert_eq!(out.status.code(), Some(2), "{bad:?}");
            let err = stderr(&out);
            assert!(
                err.contains(&format!(
                    "RDQ_ENVELOPE_SIMD={bad}: expected one of portable, sse4.2, avx2, neon"
                )),
                "{err}"
            );
            assert!(
                out.stdout.is_empty() && !err.contains("nonexistent"),
                "{err}"
            );
        }
    }
}

/// Every documented value of the colour variables, and set-but-empty, into a pipe with a
/// cleared environment (docs/cli.md#environment): only `CLICOLOR_FORCE` set to something other
/// than empty or `0` colours, unless `NO_COLOR` is set and not empty; `--color` wins over both.
/// Each surface is checked: validate's diagnostics, the stats tables, clap's usage errors
/// (standard error) and help (standard output).
#[test]
fn clicolor_force_0_forced_colour() {
    // (variables, coloured into a pipe under --color auto)
    type Row = (&'static [(&'static str, &'static str)], bool);
    let table: &[Row] = &[
        (&[], false),
        (&[("NO_COLOR", "1")], false),
        (&[("NO_COLOR", "")], false),
        (&[("NO_COLOR", "0")], false),
        (&[("CLICOLOR", "0")], false),
        (&[("CLICOLOR", "1")], false),
        (&[("CLICOLOR", "")], false),
        (&[("CLICOLOR", "junk")], false),
        (&[("CLICOLOR_FORCE", "1")], true),
        (&[("CLICOLOR_FORCE", "yes")], true),
        (&[("CLICOLOR_FORCE", "0")], false),
        (&[("CLICOLOR_FORCE", "")], false),
        (&[("CLICOLOR_FORCE", "1"), ("CLICOLOR", "0")], true),
        (&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")], false),
        (&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "0")], false),
        (&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "")], true),
        (
            &[("CLICOLOR_FORCE", "0"), ("TERM", "xterm-256color")],
            false,
        ),
    ];
    // (arguments, whether the surface is standard error)
    let surfaces: [(&[&str], bool); 4] = [
        (&["validate", "-q", SAMPLE], false),
        (&["stats", "-q", SAMPLE], false),
        (&["filter", "--no-such-flag"], true),
        (&["filter", "--help"], false),
    ];
    for &(vars, coloured) in table {
        for (flag, want) in [
            (None, coloured),
            (Some("always"), true),
            (Some("never"), false),
        ] {
            for &(args, on_stderr) in &surfaces {
                let mut command = bin();
                command.env_clear().envs(vars.iter().copied());
                let mut all: Vec<&str> = flag.map_or(vec![], |f| vec!["--color", f]);
                all.extend_from_slice(args);
                let out = output(command, &all);
                let stream = if on_stderr { &out.stderr } else { &out.stdout };
                assert_eq!(
                    has_ansi(stream),
                    want,
                    "{vars:?} {all:?}: {}",
                    String::from_utf8_lossy(stream)
                );
            }
        }
    }
}

/// Every time flag takes every instant an envelope can hold, in every form, up to
/// 9999-12-31T23:59:59.999Z (jiff's own timestamps end at 9999-12-30T22:00Z), and an instant
/// equal to an envelope's timestamp compares as that timestamp; a time outside the range, an
/// offset crossing the first or the last day included, is a usage error naming the range.
#[test]
fn time_flags_refused_the_last_day_of_9999_and_took_a_long_duration_for_a_date() {
    let lines = [
        envelope_at('0', "0000-01-01T00:00:00.000Z"),
        envelope_at('1', "0000-01-01T00:00:00.001Z"),
        envelope_at('2', "9999-12-31T23:59:59.998Z"),
        envelope_at('3', "9999-12-31T23:59:59.999Z"),
    ];
    let input = lines.iter().map(|l| format!("{l}\n")).collect::<String>();
    let kept = |which: &[usize]| {
        which
            .iter()
            .map(|&i| format!("{}\n", lines[i]))
            .collect::<String>()
    };
    for (since_flag, until_flag) in [("--since", "--until"), ("--failed-since", "--failed-until")] {
        for (flag, time, want) in [
            (since_flag, "9999-12-31T23:59:59.999Z", kept(&[3])),
            (since_flag, "9999-12-31T23:59:59.999+00:00", kept(&[3])),
            (since_flag, "9999-12-31T23:59:59.999-00:00", kept(&[3])),
            (since_flag, "9999-12-31T23:59:59.9985Z", kept(&[3])),
            (since_flag, "9999-12-31T23:59:59.998Z", kept(&[2, 3])),
            (since_flag, "10000-01-01T00:59:59.998+01:00", String::new()),
            (since_flag, "9999-12-31", kept(&[2, 3])),
            (since_flag, "0000-01-01", kept(&[0, 1, 2, 3])),
            (
                since_flag,
                "0000-01-01T01:00:00.001+01:00",
                kept(&[1, 2, 3]),
            ),
            (until_flag, "9999-12-31T23:59:59.999Z", kept(&[0, 1, 2])),
            (
                until_flag,
                "9999-12-31T22:59:59.999-01:00",
                kept(&[0, 1, 2]),
            ),
            (until_flag, "0000-01-01T00:00:00.001Z", kept(&[0])),
            (until_flag, "0000-01-01T01:00:00.001+01:00", kept(&[0])),
            (until_flag, "0000-01-01T00:00:00.0005Z", kept(&[0])),
            (until_flag, "0000-01-01", String::new()),
        ] {
            let out = run(&["filter", "-q", flag, time], input.as_bytes());
            if want.is_empty() && time.starts_with("10000") {
                // A five-digit year is no form a flag takes; the message names the range.
                assert_eq!(out.status.code(), Some(2), "{flag} {time}");
                assert!(
                    stderr(&out).contains("to 9999-12-31T23:59:59.999Z"),
                    "{}",
                    stderr(&out)
                );
                continue;
            }
            assert_eq!(
                out.status.code(),
                Some(0),
                "{flag} {time}: {}",
                stderr(&out)
            );
            assert_eq!(stdout_text(&out), want, "{flag} {time}");
        }
        for outside in [
            "9999-12-31T23:59:59.999-01:00",
            "9999-12-31T23:59:59.9991Z",
            "0000-01-01T00:30:00+01:00",
            "0000-01-01T00:59:59.999+01:00",
            "100000000h",
        ] {
            for flag in [since_flag, until_flag] {
                let out = run(&["filter", flag, outside, "/nonexistent/input.jsonl"], b"");
                assert_eq!(out.status.code(), Some(2), "{flag} {outside}");
                assert!(
                    stderr(&out).contains(&format!(
                        "{flag} {outside:?}: outside the times an envelope can hold, \
                         0000-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z"
                    )),
                    "{}",
                    stderr(&out)
                );
            }
        }
    }
}

/// Every list a user supplies is read in linear (or n log n) time: a queue-limits file of
/// 200,000 queues in TOML and in JSON, and as many repeated flags as the system's argument
/// limit takes (50,000 of each), where a quadratic reading would take minutes. No timing is
/// asserted: the run completes, and the last entry was read (a duplicate there is named).
#[test]
fn queue_limits_took_quadratic_time() {
    const QUEUES: usize = 200_000;
    let limit = Duration::from_secs(120);
    let dir = scratch("conventions-big-lists");
    let toml = dir.join("limits.toml");
    let json = dir.join("limits.json");
    let mut toml_text: String = (0..QUEUES).map(|i| format!("\"q{i}\" = {i}\n")).collect();
    let json_text = format!(
        "{{{}}}",
        (0..QUEUES)
            .map(|i| format!("\"q{i}\": {i}"))
            .collect::<Vec<_>>()
            .join(",\n")
    );
    std::fs::write(&toml, &toml_text).unwrap();
    std::fs::write(&json, &json_text).unwrap();
    for file in [&toml, &json] {
        let args = [
            "validate",
            "-q",
            "--queue-limits",
            file.to_str().unwrap(),
            SAMPLE,
        ];
        let out = output_within(plain(), &args, &dir, limit);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    }
    // The same queue again on the last line: found, with its line.
    toml_text.push_str("\"q0\" = 1\n");
    std::fs::write(&toml, &toml_text).unwrap();
    let json_text = format!("{},\n\"q0\": 1}}", json_text.trim_end_matches('}'));
    std::fs::write(&json, &json_text).unwrap();
    for file in [&toml, &json] {
        let path = file.to_str().unwrap();
        let args = ["validate", "--queue-limits", path, SAMPLE];
        let out = output_within(plain(), &args, &dir, limit);
        assert_eq!(out.status.code(), Some(2));
        let line = QUEUES + 1;
        assert!(
            stderr(&out).contains(&format!("{path}:{line}:")),
            "{}",
            stderr(&out)
        );
    }

    const FLAGS: usize = 50_000;
    let many = |make: &dyn Fn(usize) -> String| (0..FLAGS).map(make).collect::<Vec<_>>();
    let repeated: [(&str, Vec<String>); 7] = [
        ("validate", many(&|i| format!("--queue-limit=q{i}={i}"))),
        ("filter", many(&|i| format!("--queue=q{i}"))),
        ("filter", many(&|i| format!("--handler=h{i}"))),
        ("filter", many(&|_| "--status=dead".to_owned())),
        ("filter", many(&|i| format!("--header=k{i}=v"))),
        (
            "filter",
            many(&|_| "--id=01HWT0D7G0Q8V9W2R4T6Y8A0B2".to_owned()),
        ),
        ("filter", many(&|i| format!("--error-type=e{i}"))),
    ];
    for (command, flags) in &repeated {
        let mut all = vec![*command, "-q"];
        all.extend(flags.iter().map(String::as_str));
        all.push(SAMPLE);
        let out = output_within(plain(), &all, &dir, limit);
        assert_eq!(out.status.code(), Some(1), "{}: {}", flags[0], stderr(&out));
    }
    // The same queue's limit at both ends of 50,000 flags: found.
    let mut flags = many(&|i| format!("--queue-limit=q{i}={i}"));
    flags.push("--queue-limit=q0=1".to_owned());
    let mut all = vec!["validate"];
    all.extend(flags.iter().map(String::as_str));
    all.push(SAMPLE);
    let out = output_within(plain(), &all, &dir, limit);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--queue-limit q0=...: given twice"),
        "{}",
        stderr(&out)
    );
}

/// A queue name that no envelope can carry is refused in the file exactly as on the command
/// line: status 2 before any input, naming the file and the line (or the flag), and the same
/// problem.
#[test]
fn queue_limits_took_a_queue_name_no_envelope_can_carry() {
    let dir = scratch("conventions-queue-names");
    let long = "q".repeat(241);
    for (queue, problem) in [
        ("Billing", "'B' is not in a queue name"),
        ("billing invoices", "' ' is not in a queue name"),
        ("bill/ing", "'/' is not in a queue name"),
        ("café", "'é' is not in a queue name"),
        (long.as_str(), "over 240 bytes"),
        ("", "the queue name is empty"),
    ] {
        let quoted = serde_json::to_string(queue).unwrap();
        let flag = format!("{queue}=5");
        let toml_file = dir.join("names.toml");
        let json_file = dir.join("names.json");
        std::fs::write(&toml_file, format!("mail = 5\n# next\n{quoted} = 5\n")).unwrap();
        std::fs::write(&json_file, format!("{{\"mail\": 5,\n{quoted}: 5}}")).unwrap();
        let (toml_path, json_path) = (toml_file.to_str().unwrap(), json_file.to_str().unwrap());
        for (args, place) in [
            (["--queue-limit", flag.as_str()], "--queue-limit".to_owned()),
            (["--queue-limits", toml_path], format!("{toml_path}:3: ")),
            (["--queue-limits", json_path], format!("{json_path}:2: ")),
        ] {
            let mut all = vec!["validate"];
            all.extend_from_slice(&args);
            all.push("/nonexistent/input.jsonl");
            let out = output(plain(), &all);
            assert_eq!(out.status.code(), Some(2), "{queue:?} {place}");
            let err = stderr(&out);
            assert!(err.contains(&place), "{queue:?}: {err}");
            assert!(
                err.contains(problem) && err.contains("so no envelope is in that queue"),
                "{queue:?}: {err}"
            );
            assert!(!err.contains("input.jsonl"), "{err}");
        }
    }
}

/// `dedupe --keep newest -` keeps standard input in a file of the temporary folder: a `TMPDIR`
/// that is missing, not a folder or not writable is an error (status 2) naming the folder; an
/// empty one counts as unset (not as the current folder).
#[test]
fn an_unusable_tmpdir_was_not_named() {
    let dir = common::scratch("dedupe-tmpdir");
    let file = dir.join("a-file");
    std::fs::write(&file, "").unwrap();
    let input = run(&["gen", "--count", "5", "--seed", "3"], b"").stdout;
    let dedupe = |tmpdir: &str, cwd: &std::path::Path| {
        let mut command = common::bin();
        command.env("TMPDIR", tmpdir).current_dir(cwd);
        let mut child = common::spawn_with(command, &["dedupe", "-q", "--keep", "newest", "-"]);
        child.stdin.take().unwrap().write_all(&input).unwrap();
        child.wait_with_output().unwrap()
    };
    let missing = dir.join("missing");
    let mut unusable = vec![missing.to_str().unwrap(), file.to_str().unwrap()];
    // Not writable even by root: sysfs refuses new files.
    if cfg!(target_os = "linux") && std::path::Path::new("/sys/kernel").is_dir() {
        unusable.push("/sys");
    }
    for tmpdir in unusable {
        let out = dedupe(tmpdir, &dir);
        assert_eq!(out.status.code(), Some(2), "{tmpdir}");
        let err = stderr(&out);
        assert!(
            err.contains(&format!("temporary folder {tmpdir} (TMPDIR): ")),
            "{tmpdir}: {err}"
        );
        assert!(out.stdout.is_empty(), "{tmpdir}");
    }
    // Empty is unset: the system's folder, and nothing left in the current one.
    let cwd = dir.join("cwd");
    std::fs::create_dir(&cwd).unwrap();
    for tmpdir in ["", dir.to_str().unwrap()] {
        let out = dedupe(tmpdir, &cwd);
        assert_eq!(out.status.code(), Some(0), "{tmpdir:?}: {}", stderr(&out));
        assert_eq!(out.stdout, input, "{tmpdir:?}");
        assert_eq!(std::fs::read_dir(&cwd).unwrap().count(), 0, "{tmpdir:?}");
    }
    // Nothing of the run is left in the folder it used.
    let mut left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    assert_eq!(left, ["a-file", "cwd"]);
}

#[test]
fn dedupe_newest_read_a_pipe_or_fifo_twice() {
    // Each was read twice: the second read found nothing (0 lines, status 0), or a FIFO's
    // second open waited forever for a writer.
    let input = cli_dedupe::input();
    let dir = common::scratch("dedupe-streams");
    let file = dir.join("in.jsonl");
    std::fs::write(&file, &input).unwrap();
    let rejects = |out: &std::process::Output| -> Vec<String> {
        stdout(out)
            .lines()
            .filter(|l| l.contains("\"errors\""))
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["source"].to_string())
            .collect()
    };
    let dedupe = |files: &[&str]| {
        let mut command = common::bin();
        command.env("TMPDIR", &dir);
        let mut args = vec!["dedupe", "-q", "--rejects", "/dev/stdout"];
        args.extend_from_slice(files);
        command.args(args);
        command
    };
    let expected = dedupe(&[file.to_str().unwrap()]).output().unwrap();
    assert_eq!(expected.status.code(), Some(1));
    assert_eq!(
        rejects(&expected),
        [format!("{:?}", file.to_str().unwrap())]
    );
    let from_file = String::from_utf8(expected.stdout.clone()).unwrap();
    let named = |out: &std::process::Output, name: &str| {
        assert_eq!(out.status.code(), Some(1), "{name}: {}", stderr(out));
        assert_eq!(
            stdout(out).replace(&format!("{name:?}"), "FILE"),
            from_file.replace(&format!("{:?}", file.to_str().unwrap()), "FILE"),
            "{name}"
        );
        // Named as given, not as the temporary file.
        assert_eq!(rejects(out), [format!("{name:?}")], "{name}");
    };

    // `/dev/stdin` on a pipe, and `-`.
    for name in ["/dev/stdin", "-"] {
        let mut child = dedupe(&[name])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&input).unwrap();
        let out = child.wait_with_output().unwrap();
        named(&out, if name == "-" { "<stdin>" } else { name });
    }

    // A FIFO.
    let fifo = dir.join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let child = dedupe(&[fifo.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let bytes = input.clone();
    let writer_path = fifo.clone();
    // Opening a FIFO to write waits for its reader; the run opens it once, so this returns.
    let writer = std::thread::spawn(move || {
        std::fs::OpenOptions::new()
            .write(true)
            .open(writer_path)
            .unwrap()
            .write_all(&bytes)
            .unwrap();
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    named(&out, fifo.to_str().unwrap());

    // A process substitution (`/dev/fd/63`, a pipe), by bash.
    let bin = env!("CARGO_BIN_EXE_rdq-envelope");
    let script = format!(
        "exec {bin:?} dedupe -q --rejects /dev/stdout <(cat {:?})",
        file.to_str().unwrap()
    );
    let out = Command::new("bash")
        .args(["-c", &script])
        .env("TMPDIR", &dir)
        .output()
        .unwrap();
    let name: String = rejects(&out)
        .first()
        .map(|n| serde_json::from_str(n).unwrap())
        .unwrap_or_default();
    assert!(name.starts_with("/dev/fd/"), "{name}: {}", stderr(&out));
    named(&out, &name);

    assert_eq!(cli_dedupe::temporaries(&dir), Vec::<String>::new());
}

#[test]
fn dedupe_newest_lost_what_changed_between_its_two_reads() {
    // A line appended between the reads (an ID the first read never saw) was dropped
    // silently, with status 0.
    let input = cli_dedupe::input();
    let dir = common::scratch("dedupe-changed");
    let file = dir.join("in.jsonl");
    let more = run(&["gen", "--count", "1", "--seed", "99"], b"").stdout;
    std::fs::write(dir.join("more.jsonl"), &more).unwrap();
    std::fs::write(dir.join("other.jsonl"), &input).unwrap();
    let out = dir.join("out.jsonl");
    // The test hook runs the command between the two reads (debug builds only).
    for (change, what) in [
        ("cat more.jsonl >> \"$1\"", "bytes, then"),
        (
            "cp other.jsonl new.jsonl && mv new.jsonl \"$1\"",
            "replaced",
        ),
        ("touch -d 2001-01-01 \"$1\"", "modified"),
    ] {
        std::fs::write(&file, &input).unwrap();
        let run = common::bin()
            .current_dir(&dir)
            .env("RDQ_ENVELOPE_TEST_BETWEEN_READS", change)
            .args(["dedupe", "in.jsonl", "-o", "out.jsonl"])
            .output()
            .unwrap();
        assert_eq!(run.status.code(), Some(2), "{change}: {}", stderr(&run));
        assert!(
            stderr(&run).contains("in.jsonl: changed while it was read twice")
                && stderr(&run).contains(what),
            "{change}: {}",
            stderr(&run)
        );
        assert!(!out.exists(), "{change}: nothing written");
    }
    // Unchanged, the same run writes its output.
    std::fs::write(&file, &input).unwrap();
    let run = common::bin()
        .current_dir(&dir)
        .env("RDQ_ENVELOPE_TEST_BETWEEN_READS", "true")
        .args(["dedupe", "-q", "in.jsonl", "-o", "out.jsonl"])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    assert!(out.exists());
}

#[test]
fn batch_recorded_done_a_shard_rewritten_between_its_hashing_and_its_reading() {
    // The shard was hashed for the manifest, then read: rewritten in between with bytes of
    // the same size, it was recorded done with the first bytes' hash and outputs made from the
    // second, and a rerun on the first bytes kept those outputs.
    let (dir, input, out) = three_shards("rewritten");
    let b = fs::read(input.join("b.jsonl")).unwrap();
    // The same size, one letter of the first queue name changed.
    let mut other = b.clone();
    let at = String::from_utf8_lossy(&b).find("\"queue\":\"").unwrap() + "\"queue\":\"".len();
    other[at] = if other[at] == b'x' { b'y' } else { b'x' };
    assert_ne!(other, b);
    fs::write(dir.join("other"), &other).unwrap();
    // The test hook runs the command between the hashing and the reading (debug builds only).
    let rewrite = format!(
        "case \"$1\" in */b.jsonl) cat {:?} > \"$1\";; esac",
        dir.join("other").to_str().unwrap()
    );
    for only in [false, true] {
        let _ = fs::remove_dir_all(&out);
        fs::write(input.join("b.jsonl"), &b).unwrap();
        let mut command = bin();
        command
            .env("RDQ_ENVELOPE_TEST_BETWEEN_READS", &rewrite)
            .args(["batch", "validate"])
            .arg(&input)
            .arg("--out")
            .arg(&out);
        if only {
            command.args(["--only", "b.jsonl"]);
        }
        let o = command.output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("b.jsonl: changed between its hashing and its reading"),
            "{}",
            stderr(&o)
        );
        assert!(!out.join("b.jsonl").exists(), "no output for it");
        if !only {
            let s = states(&out);
            assert_eq!(s[1], ("b.jsonl".to_owned(), "failed".to_owned()));
        }
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_output_on_the_file_of_standard_error_overwrote_it() {
    // `validate x --summary f 2>f`: the summary's rename took the file standard error wrote
    // to away, and the closing line with it (or, named /dev/stderr, overwrote the summary).
    let dir = scratch("stderr-alias");
    gen_input_in(&dir);
    fs::create_dir_all(dir.join("man")).unwrap();
    fs::create_dir_all(dir.join("shards")).unwrap();
    fs::copy(dir.join("in.jsonl"), dir.join("shards/a.jsonl")).unwrap();
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &["validate", "in.jsonl", "--summary", "err"],
            "err",
            "--summary",
        ),
        (
            &["validate", "in.jsonl", "--rejects", "err"],
            "err",
            "--rejects",
        ),
        (&["validate", "in.jsonl", "-o", "./err"], "./err", "-o"),
        (
            &["validate", "in.jsonl", "--valid-out", "err"],
            "err",
            "--valid-out",
        ),
        (
            &["migrate", "in.jsonl", "--to", "1", "--warnings-out", "err"],
            "err",
            "--warnings-out",
        ),
        (
            &["migrate", "in.jsonl", "--to", "1", "-o", "err"],
            "err",
            "-o",
        ),
        (&["filter", "in.jsonl", "-o", "err"], "err", "-o"),
        (
            &["redrive", "in.jsonl", "--at", "2h", "-o", "err"],
            "err",
            "-o",
        ),
        (
            &["dedupe", "in.jsonl", "--dropped", "err"],
            "err",
            "--dropped",
        ),
        (
            &["dedupe", "in.jsonl", "--keep", "first", "-o", "err"],
            "err",
            "-o",
        ),
        (&["sample", "5", "in.jsonl", "-o", "err"], "err", "-o"),
        (&["stats", "in.jsonl", "-o", "err"], "err", "-o"),
        (&["export", "in.jsonl", "-o", "err"], "err", "-o"),
        (&["gen", "--count", "3", "-o", "err"], "err", "-o"),
        (&["schema", "-o", "err"], "err", "-o"),
    ];
    for &(args, name, flag) in cases {
        let out = run_to(&dir, args, None, Some("err"));
        let said = fs::read_to_string(dir.join("err")).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {said}");
        let expected = format!(
            "two outputs are the same file: {name} ({flag}) and standard error (the run's messages)"
        );
        assert!(said.contains(&expected), "{args:?}: {said}");
    }
    // A man page, and the files of a batch (the standard streams are its messages and
    // records), and a shard.
    let out = run_to(
        &dir,
        &["man", "--dir", "man"],
        None,
        Some("man/rdq-envelope.1"),
    );
    assert_eq!(out.status.code(), Some(2));
    let said = fs::read_to_string(dir.join("man/rdq-envelope.1")).unwrap();
    assert!(
        said.contains("man/rdq-envelope.1 (--dir) and standard error"),
        "{said}"
    );
    let batch = ["batch", "validate", "shards", "--out", "out"];
    assert_eq!(run_to(&dir, &batch, None, None).status.code(), Some(1));
    for (stdout, stderr_file, expected) in [
        (
            None,
            Some("out/manifest.json"),
            "out/manifest.json (--out) and standard error",
        ),
        (
            Some("out/a.summary.json"),
            None,
            "out/a.summary.json (--out) and standard output",
        ),
    ] {
        let out = run_to(&dir, &batch, stdout, stderr_file);
        assert_eq!(out.status.code(), Some(2));
        let said = match stderr_file {
            Some(name) => fs::read_to_string(dir.join(name)).unwrap(),
            None => stderr(&out),
        };
        assert!(said.contains(expected), "{said}");
    }
    // Standard error appended to a shard, or to show's input, is an input that is an output.
    let appended =
        |path: &str| Stdio::from(File::options().append(true).open(dir.join(path)).unwrap());
    let shard = bin()
        .current_dir(&dir)
        .args(batch)
        .stderr(appended("shards/a.jsonl"))
        .output()
        .unwrap();
    assert_eq!(shard.status.code(), Some(2));
    let show = bin()
        .current_dir(&dir)
        .args(["show", "01HWT0D8JCQ7NR0W22MHTM8Z6G", "in.jsonl"])
        .stderr(appended("in.jsonl"))
        .output()
        .unwrap();
    assert_eq!(show.status.code(), Some(2));
    let said = String::from_utf8_lossy(&fs::read(dir.join("in.jsonl")).unwrap()).into_owned();
    assert!(said.contains("in.jsonl (input) and standard error (the run's messages)"));
}

#[test]
fn an_output_named_dev_stderr_or_dev_stdout_overwrote_the_stream() {
    // `--summary /dev/stderr 2>err.txt` opened the file a second time, at its own position:
    // the closing line overwrote the start of the summary. `--valid-out /dev/stdout > all.txt`
    // lost the diagnostics the same way.
    let dir = scratch("stderr-named");
    gen_input_in(&dir);
    let out = run_to(
        &dir,
        &["validate", "in.jsonl", "--summary", "/dev/stderr"],
        None,
        Some("err.txt"),
    );
    assert_eq!(out.status.code(), Some(1));
    let said = fs::read_to_string(dir.join("err.txt")).unwrap();
    assert_eq!(objects_then_closing_line(&said), 1, "the summary, whole");
    let rejected = run_to(
        &dir,
        &[
            "validate",
            "in.jsonl",
            "-o",
            "/dev/null",
            "--rejects",
            "/proc/self/fd/2",
        ],
        None,
        Some("err.txt"),
    );
    assert_eq!(rejected.status.code(), Some(1));
    let said = fs::read_to_string(dir.join("err.txt")).unwrap();
    let summary: serde_json::Value = {
        let args = [
            "validate",
            "in.jsonl",
            "-q",
            "-o",
            "/dev/null",
            "--summary",
            "-",
        ];
        serde_json::from_slice(&run_to(&dir, &args, None, None).stdout).unwrap()
    };
    assert_eq!(
        objects_then_closing_line(&said) as u64,
        summary["rejected"].as_u64().unwrap()
    );
    // Standard output named again, on a file a shell truncated (not appended to).
    let args = ["validate", "in.jsonl", "-q"];
    let diagnostics = run_to(&dir, &args, None, None).stdout;
    let args = [
        "validate",
        "in.jsonl",
        "-q",
        "-o",
        "/dev/null",
        "--valid-out",
        "-",
    ];
    let valid = run_to(&dir, &args, None, None).stdout;
    let args = ["validate", "in.jsonl", "-q", "--valid-out", "/dev/stdout"];
    let both = run_to(&dir, &args, Some("all.txt"), None);
    assert_eq!(both.status.code(), Some(1), "{}", stderr(&both));
    let all = fs::read(dir.join("all.txt")).unwrap();
    assert_eq!(all.len(), diagnostics.len() + valid.len());
    // Standard output and error on one file stays ordinary, with an output named as either.
    let log = File::create(dir.join("log.txt")).unwrap();
    let status = bin()
        .current_dir(&dir)
        .args([
            "validate",
            "in.jsonl",
            "--summary",
            "/dev/stderr",
            "--rejects",
            "/dev/stdout",
        ])
        .stdout(Stdio::from(log.try_clone().unwrap()))
        .stderr(Stdio::from(log))
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1));
    let log = fs::read_to_string(dir.join("log.txt")).unwrap();
    assert!(
        log.lines()
            .last()
            .unwrap()
            .starts_with("rdq-envelope: 60 lines"),
        "{log}"
    );
    let first = String::from_utf8_lossy(&diagnostics)
        .lines()
        .next()
        .unwrap()
        .to_owned();
    assert!(log.contains(&first), "{log}");
}

#[test]
fn where_halt_ended_the_process_with_status_0() {
    let dir = folder("where-refused");
    for name in [
        "halt",
        "halt_error",
        "halt_error(1)",
        "input",
        "[inputs]",
        "debug",
        "debug(\"x\")",
        "stderr",
        "input_filename",
        "input_line_number",
        "get_search_list",
        "modulemeta",
    ] {
        for expr in [
            name.to_owned(),
            format!(".queue == \"x\" or ({name} | true)"),
        ] {
            let out = filter(&dir, &["--where", &expr]).output().unwrap();
            let bare = name
                .trim_start_matches('[')
                .split(['(', ']'])
                .next()
                .unwrap();
            refused(
                &out,
                &[&format!("`{bare}` is not supported in --where")],
                &expr,
            );
            untouched(&dir, &expr);
        }
    }
    // A definition of the same name is the user's own, and works.
    let out = filter(&dir, &["--where", "def halt: .queue != null; halt"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        fs::read_to_string(dir.join("out.jsonl"))
            .unwrap()
            .lines()
            .count(),
        3
    );
}

#[test]
fn where_nested_a_few_thousand_levels_overflowed_the_stack() {
    let dir = folder("where-deep");
    // jq 1.6 parses brackets nested up to about 5,000 deep and runs a recursion 10,000 deep.
    let nested = |n: usize| format!("{}.queue{} | length > 0", "[".repeat(n), "]".repeat(n));
    // Short terms: one argument may hold at most 128 KiB.
    let chain = |n: usize| format!(".a{}", " or .b".repeat(n));
    for expr in [
        nested(9_000),
        chain(9_000),
        "def f: if . == 0 then 0 else 1 + (. - 1 | f) end; (10000 | f) == 10000".to_owned(),
    ] {
        let out = filter(&dir, &["--where", &expr]).output().unwrap();
        assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
    }
    fs::remove_file(dir.join("rejects.jsonl")).unwrap();
    fs::write(dir.join("out.jsonl"), "previous\n").unwrap();
    for expr in [nested(10_001), chain(10_001)] {
        let out = filter(&dir, &["--where", &expr]).output().unwrap();
        refused(
            &out,
            &["levels deep; at most 10000 are supported"],
            "too deep",
        );
        untouched(&dir, "too deep");
    }
}

/// For the standard streams' tests: gen lines, some invalid (diagnostics, rejects and valid lines alike), in `dir/in.jsonl`.
fn gen_input_in(dir: &Path) {
    let out = bin()
        .args([
            "gen",
            "--count",
            "60",
            "--seed",
            "5",
            "--invalid-rate",
            "0.3",
        ])
        .output()
        .unwrap();
    fs::write(dir.join("in.jsonl"), out.stdout).unwrap();
}

/// Runs `args` in `dir` with standard output and error on the files named (piped if `None`).
fn run_to(dir: &Path, args: &[&str], out: Option<&str>, err: Option<&str>) -> Output {
    let file = |name: Option<&str>| match name {
        Some(name) => Stdio::from(File::create(dir.join(name)).unwrap()),
        None => Stdio::piped(),
    };
    bin()
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(file(out))
        .stderr(file(err))
        .output()
        .unwrap()
}

/// Lines of `text`: JSON objects first, then the closing line, each whole.
fn objects_then_closing_line(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let (last, objects) = lines.split_last().expect("a closing line");
    assert!(last.starts_with("rdq-envelope: 60 lines: "), "{text}");
    for line in objects {
        serde_json::from_str::<serde_json::Value>(line).expect("a whole JSON line");
    }
    objects.len()
}

/// What `filter --where EXPR` keeps of valid `lines` (written as they are).
fn kept_by_where(expr: &str, lines: &[String]) -> String {
    let input = lines.join("\n").into_bytes();
    let out = run(&["filter", "-q", "--where", expr], &input);
    assert_eq!(out.status.code(), Some(0), "{expr}: {}", stderr(&out));
    stdout(&out)
}

/// `filter --where`'s shortcut, which builds only the members an expression reads, took
/// `select(...)` as the end of the envelope: `select(.status == "DEAD").queue` built `status`
/// alone, its `.queue` was null, and no line was kept.
#[test]
fn where_select_then_a_member_built_only_the_members_select_read() {
    let valid = valid_lines(&cli_filter::input());
    let dead = cli_filter::expected(&valid, |v| cli_filter::text(v, "status") == "DEAD");
    assert!(dead.lines().count() > 20, "{dead}");
    for expr in [
        r#"select(.status == "DEAD").queue"#,
        r#"first(select(.status == "DEAD")) | .id"#,
        r#"try (select(.status == "DEAD") | .handler_ref) catch false"#,
    ] {
        assert_eq!(kept_by_where(expr, &valid), dead, "{expr}");
    }
}

/// `filter --where` kept an envelope only when the expression's first output was true; jq's
/// `select` keeps it when any output is true, up to the first error.
#[test]
fn where_kept_an_envelope_only_when_its_first_output_was_true() {
    let valid = valid_lines(&cli_filter::input());
    let dead = cli_filter::expected(&valid, |v| cli_filter::text(v, "status") == "DEAD");
    for expr in [
        r#"false, .status == "DEAD""#,
        r#"(.status == "DEAD"), error("after")"#,
    ] {
        assert_eq!(kept_by_where(expr, &valid), dead, "{expr}");
    }
}

/// `filter --where -.x ...`: an expression that begins with `-` was taken for a flag.
#[test]
fn where_expression_beginning_with_a_minus_was_taken_for_a_flag() {
    let valid = valid_lines(&cli_filter::input());
    let retried = cli_filter::expected(&valid, |v| {
        v.get("attempt_count").and_then(|n| n.as_integer()) > Some(2)
    });
    assert!(!retried.is_empty());
    assert_eq!(kept_by_where("-.attempt_count < -2", &valid), retried);
}

/// `PipelineOptions::chunk_bytes = usize::MAX` (one unbounded chunk) made the reader allocate
/// that much up front and abort (capacity overflow); reads are now at most 64 MiB.
#[test]
fn one_unbounded_chunk_made_the_reader_allocate_it_up_front() {
    let data = awkward_stream(5, 200);
    let sources = [("a.jsonl", &data[..])];
    let op = op(ReportFormat::Json);
    let want = sequential(&sources, &op);
    for jobs in [1, 2] {
        let mut options = PipelineOptions::default();
        options.jobs = jobs;
        options.chunk_bytes = usize::MAX;
        options.max_line_bytes = CAP;
        assert!(parallel(&sources, &op, options) == want, "{jobs} jobs");
    }
}

/// The reader, pinned as the pipeline runs it: a BOM, then a first line longer than the
/// reader's buffer, handed the pipeline an empty chunk (found by the reader's property test in
/// `src/framing/line_reader.rs`, whose shrunk case is kept in `proptest-regressions/`). The
/// empty chunk left no mark on the outputs (this test passes with the fix undone): the unit
/// test `framing::line_reader::tests::pinned_mode_frames_like_next_line` is the one that
/// fails; this one holds the pipeline to the same bytes on that input.
#[test]
fn a_bom_then_a_first_line_longer_than_the_buffer_gave_the_pipeline_an_empty_chunk() {
    let mut data = b"\xEF\xBB\xBF".to_vec();
    // The pipeline's reads are of at least 64 KiB: a first line longer than that.
    data.extend(std::iter::repeat_n(b'x', 200 << 10));
    data.push(b'\n');
    data.extend(common::gen_lines(50, 3, None, 0.2));
    let sources = [("bom.jsonl", &data[..])];
    let op = op(ReportFormat::Human);
    let want = sequential(&sources, &op);
    for chunk_bytes in [1, 64 << 10, 1 << 20] {
        for jobs in [1, 2] {
            let mut options = PipelineOptions::default();
            options.jobs = jobs;
            options.chunk_bytes = chunk_bytes;
            options.max_line_bytes = CAP;
            let got = parallel(&sources, &op, options);
            assert!(got == want, "{jobs} jobs, {chunk_bytes}-byte chunks");
        }
    }
}

/// `RDQ_ENVELOPE_SIMD=sse42 rdq-envelope --version` said avx2 and exited 0, while every real
/// command refused that value (issue 40, point 7). The version report refuses what commands
/// refuse, with their message, and says what they do with a name this CPU lacks.
#[test]
fn version_reported_a_simd_value_every_command_refuses() {
    let with = |value: &str, args: &[&str]| with_env(&[("RDQ_ENVELOPE_SIMD", value)], args);
    for bad in ["sse42", "junk", "AVX2", "neon "] {
        let refused = with(bad, &["gen", "--count", "1"]);
        assert_eq!(refused.status.code(), Some(2), "{bad:?}");
        for flag in ["--version", "-V"] {
            let out = with(bad, &[flag]);
            assert_eq!(out.status.code(), Some(2), "{bad:?} {flag}");
            assert!(out.stdout.is_empty(), "{bad:?} {flag}: {}", stdout(&out));
            assert_eq!(stderr(&out), stderr(&refused), "{bad:?} {flag}");
        }
    }
    // A name this CPU lacks: every command passes it over for the fastest it has; the report
    // names that one, and says why the one asked for is not used.
    let paths = rdq_envelope::json::simd_paths();
    let fastest = paths[0].name;
    for name in ["portable", "sse4.2", "avx2", "neon"] {
        let out = with(name, &["--version"]);
        assert_eq!(out.status.code(), Some(0), "{name}");
        let text = stdout(&out);
        let simd = text.lines().nth(3).unwrap();
        match paths.iter().any(|p| p.name == name) {
            true => assert!(simd.starts_with(&format!("simd: {name}")), "{simd}"),
            false => {
                assert!(simd.starts_with(&format!("simd: {fastest}")), "{simd}");
                assert!(
                    simd.contains(&format!("RDQ_ENVELOPE_SIMD={name}: not on this CPU")),
                    "{simd}"
                );
                let ran = with(name, &["validate", "-q", SAMPLE]);
                assert_eq!(ran.status.code(), Some(1), "{name}: {}", stderr(&ran));
            }
        }
    }
}

/// `man > /dev/full` and `completions bash > /dev/full` said only "No space left on device"
/// (issue 40, point 7): they wrote standard output past the outputs that name themselves.
/// `tests/it/cli_stdout.rs` holds every command to it.
#[test]
fn man_and_completions_did_not_name_a_full_standard_output() {
    for args in [&["man"][..], &["completions", "bash"]] {
        let full = File::options().write(true).open("/dev/full").unwrap();
        let out = bin().args(args).stdout(full).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&out).contains("<stdout>: write failed: No space left on device"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}

/// `man --dir s3://bucket/man/` wrote its pages to the store and made an empty local tree
/// `./s3:/bucket/man`; `-o gs://b/k` wrote `./gs:/b/k` (issue 40, point 3). A URL is never a
/// local path: `tests/it/cli_places.rs` holds every place of every command to it.
#[test]
fn a_url_became_a_local_path() {
    let dir = scratch("url-local-path");
    for args in [
        &["man", "--dir", "gs://bkt/man/"][..],
        &["man", "--dir", "https://example.invalid/man/"],
        &["gen", "--count", "1", "-o", "gs://bkt/x.jsonl"],
        &["schema", "-o", "file:///tmp/schema.json"],
    ] {
        let out = bin().args(args).current_dir(&dir).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 0, "{args:?}");
    }
}

/// `-o r.json.ZST`, `r.csv.GZ` and `x.parquet.ZST` chose the format by the ending but wrote
/// plain bytes (issue 40, point 5): the compression ending was read in lower case only.
/// `tests/it/cli_names.rs` holds every output to the one rule.
#[test]
fn upper_case_compression_endings_wrote_plain_bytes() {
    let dir = scratch("upper-case-endings");
    let out = bin()
        .args(["stats", "-q", SAMPLE, "-o"])
        .arg(dir.join("r.json.ZST"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let json = zstd::decode_all(File::open(dir.join("r.json.ZST")).unwrap()).unwrap();
    assert!(json.starts_with(b"{"));
    let out = bin()
        .args(["export", "-q", SAMPLE, "-o"])
        .arg(dir.join("r.csv.GZ"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(fs::read(dir.join("r.csv.GZ"))
        .unwrap()
        .starts_with(&[0x1F, 0x8B]));
    let out = bin()
        .args(["export", "-q", SAMPLE, "-o"])
        .arg(dir.join("x.parquet.ZST"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!dir.join("x.parquet.ZST").exists());
}

/// A UTF-16 file with a byte-order mark (PowerShell's default) and a binary file were told
/// they "look like CSV" (issue 40, point 6). `tests/it/cli_input_kinds.rs` holds every kind.
#[test]
fn utf16_and_binary_inputs_were_told_they_looked_like_csv() {
    let mut utf16 = vec![0xFF, 0xFE];
    for unit in "{\"id\":\"x\",\"queue\":\"q\"}\r\n".encode_utf16() {
        utf16.extend_from_slice(&unit.to_le_bytes());
    }
    let out = run(&["validate"], &utf16);
    let err = stderr(&out);
    assert!(!err.contains("CSV"), "{err}");
    assert!(
        err.contains("<stdin> looks like UTF-16 text (little-endian, with a byte-order mark)")
            && err.contains("try: iconv -f UTF-16 -t UTF-8 | rdq-envelope validate"),
        "{err}"
    );
    let out = run(&["validate"], b"\x01\x02,\x03\x04,\x00\x05\x06\n");
    let err = stderr(&out);
    assert!(!err.contains("CSV"), "{err}");
    assert!(err.contains("looks like binary data, not text"), "{err}");
}
