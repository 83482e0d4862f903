//! Golden tests of `rdq-envelope dedupe` (docs/cli.md#dedupe) against a reference computed from
//! jq's reading of every line.

use std::collections::HashMap;
use std::io::Write;
use std::process::{Command, Stdio};

use crate::common;
use common::{run, stderr, stdout};

/// Input with many duplicates: gen lines, their redriven copies (one more redrive), and
/// repeats of the first ones (identical copies: the later line must win), shuffled by a
/// fixed rule, plus an invalid line.
fn input() -> Vec<u8> {
    let gen = run(&["gen", "--count", "400", "--seed", "12"], b"").stdout;
    let redriven = run(&["redrive", "-q", "--at", "2026-05-01T12:00:00.000Z"], &gen).stdout;
    let gen = String::from_utf8(gen).unwrap();
    let redriven = String::from_utf8(redriven).unwrap();
    let mut lines: Vec<&str> = gen.lines().chain(redriven.lines()).collect();
    lines.extend(gen.lines().take(150));
    // Interleave: every third line moves to the back.
    let (mut front, mut back) = (Vec::new(), Vec::new());
    for (i, line) in lines.into_iter().enumerate() {
        if i % 3 == 0 {
            back.push(line)
        } else {
            front.push(line)
        }
    }
    front.extend(back);
    front.insert(17, "{\"not\":\"an envelope\"}");
    (front.join("\n") + "\n").into_bytes()
}

/// id, redrive_count, attempts, last finished_at.
type Key = (String, u64, u64, String);

/// jq's view of each line: id, redrive_count, the number of attempts, the last finished_at
/// (an empty string when in flight or without attempts), or nothing for an invalid line.
fn keys(input: &[u8]) -> Option<Vec<Option<Key>>> {
    let filter = r#"if has("id") then [.id, .redrive_count, (.attempts|length), (.attempts[-1].finished_at // "")] else null end"#;
    let mut jq = Command::new("jq")
        .args(["-c", filter])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .ok()?;
    let mut stdin = jq.stdin.take().unwrap();
    let data = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&data));
    let out = jq.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success());
    Some(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                (!v.is_null()).then(|| {
                    (
                        v[0].as_str().unwrap().to_owned(),
                        v[1].as_u64().unwrap(),
                        v[2].as_u64().unwrap(),
                        v[3].as_str().unwrap().to_owned(),
                    )
                })
            })
            .collect(),
    )
}

/// The lines `--keep newest` and `--keep first` keep, in input order, by the rule.
fn expected(input: &[u8], newest: bool) -> Option<(Vec<String>, Vec<String>)> {
    let keys = keys(input)?;
    let lines: Vec<&str> = std::str::from_utf8(input).unwrap().lines().collect();
    let mut best: HashMap<&str, usize> = HashMap::new();
    for (i, key) in keys.iter().enumerate() {
        let Some((id, redrives, attempts, finished)) = key else {
            continue;
        };
        // Timestamps of one form compare as text; "" (none) comes first.
        let rank = |k: &Key, i: usize| (k.1, k.2, k.3.clone(), i);
        best.entry(id)
            .and_modify(|b| {
                let current = keys[*b].as_ref().unwrap();
                if !newest {
                    return;
                }
                if rank(&(id.clone(), *redrives, *attempts, finished.clone()), i)
                    > rank(current, *b)
                {
                    *b = i;
                }
            })
            .or_insert(i);
    }
    let (mut kept, mut dropped) = (Vec::new(), Vec::new());
    for (i, key) in keys.iter().enumerate() {
        let Some((id, ..)) = key else { continue };
        let line = lines[i].to_owned();
        if best[id.as_str()] == i {
            kept.push(line)
        } else {
            dropped.push(line)
        }
    }
    Some((kept, dropped))
}

#[test]
fn dedupe_keeps_the_copy_the_rule_names_for_any_job_count() {
    let input = input();
    for (keep, newest) in [("newest", true), ("first", false)] {
        let Some((kept, dropped)) = expected(&input, newest) else {
            eprintln!("skipped: no jq");
            return;
        };
        assert!(dropped.len() > 400, "many duplicates: {}", dropped.len());
        let dir = common::scratch(&format!("dedupe-{keep}"));
        let dropped_path = dir.join("dropped.jsonl");
        let summary = dir.join("summary.json");
        let mut outputs = Vec::new();
        for jobs in ["1", "2", "3", "8"] {
            let out = run(
                &[
                    "dedupe",
                    "-q",
                    "-j",
                    jobs,
                    "--keep",
                    keep,
                    "--dropped",
                    dropped_path.to_str().unwrap(),
                    "--summary",
                    summary.to_str().unwrap(),
                ],
                &input,
            );
            assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
            let got: Vec<String> = stdout(&out).lines().map(str::to_owned).collect();
            assert_eq!(got, kept, "--keep {keep} -j {jobs}");
            let got_dropped = std::fs::read_to_string(&dropped_path).unwrap();
            let got_dropped: Vec<&str> = got_dropped.lines().collect();
            assert_eq!(got_dropped, dropped, "--keep {keep} -j {jobs}: --dropped");
            let books: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
            let n = |k: &str| books[k].as_u64().unwrap() as usize;
            assert_eq!(
                (n("emitted"), n("filtered_out"), n("rejected"), n("lines")),
                (kept.len(), dropped.len(), 1, kept.len() + dropped.len() + 1),
                "the books balance"
            );
            outputs.push(out.stdout);
        }
    }
}

#[test]
fn newest_reads_standard_input_twice_through_a_temporary_file() {
    let input = input();
    let from_stdin = run(&["dedupe", "-q"], &input);
    let file = common::scratch("dedupe-stdin").join("in.jsonl");
    std::fs::write(&file, &input).unwrap();
    let from_file = run(&["dedupe", "-q", file.to_str().unwrap()], b"");
    assert_eq!(from_stdin.status.code(), Some(1));
    assert_eq!(from_stdin.stdout, from_file.stdout);
    // `-` among files is standard input too.
    let mixed = run(&["dedupe", "-q", "-", file.to_str().unwrap()], &input);
    let twice = [&from_file.stdout[..]].concat();
    assert_eq!(
        mixed.stdout, twice,
        "the second file's copies are all duplicates"
    );
}

/// `dedupe --keep newest -` keeps standard input in a file of the temporary folder: a `TMPDIR`
/// that is missing, not a folder or not writable is an error (status 2) naming the folder; an
/// empty one counts as unset (not as the current folder).
#[test]
fn an_unusable_tmpdir_is_an_error_naming_the_folder() {
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

/// The `.rdq-tmp.` files left in `dir`.
fn temporaries(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".rdq-tmp."))
        .collect()
}

#[test]
fn newest_reads_a_fifo_dev_stdin_and_a_process_substitution_through_a_temporary_file() {
    // Each was read twice: the second read found nothing (0 lines, status 0), or a FIFO's
    // second open waited forever for a writer.
    let input = input();
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

    assert_eq!(temporaries(&dir), Vec::<String>::new());
}

#[test]
fn newest_refuses_a_file_that_changes_between_its_two_reads() {
    // A line appended between the reads (an ID the first read never saw) was dropped
    // silently, with status 0.
    let input = input();
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
