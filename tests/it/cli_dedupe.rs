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
pub(crate) fn input() -> Vec<u8> {
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
    if common::tool_or_skip(&["jq"], "dedupe compared with jq").is_none() {
        return;
    }
    let input = input();
    for (keep, newest) in [("newest", true), ("first", false)] {
        let (kept, dropped) = expected(&input, newest).expect("jq runs");
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

/// The `.rdq-tmp.` files left in `dir`.
pub(crate) fn temporaries(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".rdq-tmp."))
        .collect()
}
