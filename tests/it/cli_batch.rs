//! Golden tests of `rdq-envelope batch`: they spawn the real binary over folders of shards.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common;
use common::{bin, run, scratch, stderr, stdout, without_seconds};

/// `gen` lines: `count` envelopes of version 1, with that share of realistic defects.
fn gen(count: u32, seed: u32, invalid_rate: &str) -> Vec<u8> {
    let out = run(
        &[
            "gen",
            "--count",
            &count.to_string(),
            "--seed",
            &seed.to_string(),
            "--version",
            "1",
            "--invalid-rate",
            invalid_rate,
        ],
        b"",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    out.stdout
}

fn zstd(bytes: &[u8]) -> Vec<u8> {
    zstd::encode_all(bytes, 3).unwrap()
}

/// Runs the binary in `dir` with `args`.
fn run_in(dir: &Path, args: &[&str]) -> Output {
    bin().current_dir(dir).args(args).output().unwrap()
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

/// Shard names and states from the manifest.
pub(crate) fn states(out: &Path) -> Vec<(String, String)> {
    json(&out.join("manifest.json"))["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_owned(),
                e["state"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// The shards a run reported on standard error.
fn ran(o: &Output) -> Vec<String> {
    stderr(o)
        .lines()
        .filter_map(|l| l.strip_prefix("rdq-envelope: "))
        .filter(|l| !l.starts_with("batch "))
        .filter_map(|l| l.split_once(": "))
        .filter(|(_, said)| said.contains(" lines: ") || said.starts_with("failed: "))
        .map(|(name, _)| name.to_owned())
        .collect()
}

/// A folder of three shards (two zstd, one plain) with defects, and its output folder.
pub(crate) fn three_shards(name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let dir = scratch(name);
    let input = dir.join("in");
    fs::create_dir_all(&input).unwrap();
    fs::write(input.join("a.jsonl.zst"), zstd(&gen(120, 1, "0.1"))).unwrap();
    fs::write(input.join("b.jsonl"), gen(100, 2, "0.1")).unwrap();
    fs::write(input.join("c.jsonl.zst"), zstd(&gen(80, 3, "0.1"))).unwrap();
    // Not shards: hidden, another kind, a folder.
    fs::write(input.join(".hidden.jsonl"), b"not json\n").unwrap();
    fs::write(input.join("notes.txt"), b"not json\n").unwrap();
    fs::create_dir_all(input.join("sub.jsonl")).unwrap();
    let out = dir.join("out");
    (dir, input, out)
}

fn batch(args: &[&str], input: &Path, out: &Path) -> Output {
    bin()
        .arg("batch")
        .args(args)
        .arg(input)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

#[test]
fn each_shard_gets_the_single_run_outputs_and_the_books_add_up() {
    let (dir, input, out) = three_shards("books");
    // Two shards at once, on one worker each: they end in any order.
    let o = batch(
        &["migrate", "--to", "2", "-j2", "--shards-at-once", "2"],
        &input,
        &out,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let mut shards_run = ran(&o);
    shards_run.sort();
    assert_eq!(shards_run, ["a.jsonl.zst", "b.jsonl", "c.jsonl.zst"]);

    let mut names: Vec<_> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "a.jsonl.zst",
            "a.rejects.jsonl.zst",
            "a.summary.json",
            "b.jsonl",
            "b.rejects.jsonl",
            "b.summary.json",
            "c.jsonl.zst",
            "c.rejects.jsonl.zst",
            "c.summary.json",
            "manifest.json",
            "summary.json"
        ]
    );

    // Each shard's outputs are those of a single run on it, byte for byte (compressed too).
    let single = dir.join("single");
    fs::create_dir_all(&single).unwrap();
    // (c's outputs are written by the zstd encoders that a's used, reset.)
    for (shard, lines, rejects) in [
        ("a.jsonl.zst", "a.jsonl.zst", "a.rejects.jsonl.zst"),
        ("b.jsonl", "b.jsonl", "b.rejects.jsonl"),
        ("c.jsonl.zst", "c.jsonl.zst", "c.rejects.jsonl.zst"),
    ] {
        let o = run_in(
            &input,
            &[
                "migrate",
                "-q",
                "-j1",
                shard,
                "-o",
                single.join(lines).to_str().unwrap(),
                "--rejects",
                single.join(rejects).to_str().unwrap(),
            ],
        );
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        for name in [lines, rejects] {
            assert!(
                fs::read(single.join(name)).unwrap() == fs::read(out.join(name)).unwrap(),
                "{name}"
            );
        }
    }

    // The merged books balance and equal a single run over every shard.
    let all = run_in(
        &input,
        &[
            "migrate",
            "-q",
            "a.jsonl.zst",
            "b.jsonl",
            "c.jsonl.zst",
            "-o",
            "/dev/null",
            "--summary",
            single.join("all.json").to_str().unwrap(),
        ],
    );
    assert_eq!(all.status.code(), Some(1));
    let mut merged = json(&out.join("summary.json"));
    let mut whole = json(&single.join("all.json"));
    let n = |v: &Value, k: &str| v[k].as_u64().unwrap();
    assert_eq!(
        n(&merged, "lines"),
        n(&merged, "blank")
            + n(&merged, "emitted")
            + n(&merged, "rejected")
            + n(&merged, "filtered_out")
    );
    assert!(n(&merged, "rejected") > 0);
    merged["seconds"] = 0.into();
    whole["seconds"] = 0.into();
    assert_eq!(merged, whole);
    // The manifest holds every shard done, with its summary: the same as its summary file.
    let manifest = json(&out.join("manifest.json"));
    for entry in manifest["shards"].as_array().unwrap() {
        assert_eq!(entry["state"], "done");
        assert_eq!(entry["blake3"].as_str().unwrap().len(), 64);
        let stem = entry["name"].as_str().unwrap().split('.').next().unwrap();
        assert_eq!(
            entry["summary"],
            json(&out.join(format!("{stem}.summary.json")))
        );
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_killed_run_is_resumed_by_redoing_only_the_shard_it_was_in() {
    let dir = scratch("killed");
    let input = dir.join("in");
    fs::create_dir_all(&input).unwrap();
    fs::write(input.join("a.jsonl"), gen(50, 1, "0")).unwrap();
    fs::write(input.join("b.jsonl"), gen(50, 2, "0")).unwrap();
    // Big enough to be caught in flight (a few seconds in a debug build).
    fs::write(input.join("z.jsonl"), gen(6000, 3, "0")).unwrap();
    let out = dir.join("out");

    let mut child = bin()
        .args(["batch", "migrate", "-q", "-j1", "--shards-at-once", "1"])
        .arg(&input)
        .arg("--out")
        .arg(&out)
        .spawn()
        .unwrap();
    // Shards run in name order: wait until a and b are recorded and z is being written.
    let s = |name: &str, state: &str| (name.to_owned(), state.to_owned());
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let in_flight = fs::read_dir(&out).into_iter().flatten().any(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.starts_with(".rdq-tmp.")
        });
        if in_flight
            && out.join("manifest.json").exists()
            && states(&out)[..2] == [s("a.jsonl", "done"), s("b.jsonl", "done")]
        {
            break;
        }
        assert!(Instant::now() < deadline, "z never started");
        assert!(child.try_wait().unwrap().is_none(), "the run ended first");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    assert_eq!(
        states(&out),
        [
            s("a.jsonl", "done"),
            s("b.jsonl", "done"),
            s("z.jsonl", "pending")
        ],
        "killed while z ran"
    );
    assert!(
        !out.join("z.jsonl").exists(),
        "no partial output is visible"
    );
    assert!(!out.join("summary.json").exists());
    let status = bin()
        .args(["batch", "--status"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        stdout(&status).contains("shards: 2/3 done, 0 failed, 1 pending"),
        "{}",
        stdout(&status)
    );

    let rerun = batch(&["migrate", "-j1"], &input, &out);
    assert_eq!(rerun.status.code(), Some(0), "{}", stderr(&rerun));
    assert_eq!(ran(&rerun), ["z.jsonl"], "{}", stderr(&rerun));
    assert!(stderr(&rerun).contains("removed"), "{}", stderr(&rerun));
    assert_eq!(
        states(&out),
        [
            s("a.jsonl", "done"),
            s("b.jsonl", "done"),
            s("z.jsonl", "done")
        ]
    );
    let left: Vec<_> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains("rdq-tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(json(&out.join("summary.json"))["lines"], 6100);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_changed_shard_is_redone_a_new_one_run_and_a_removed_one_cleared() {
    let (dir, input, out) = three_shards("changed");
    let first = batch(&["migrate", "-q"], &input, &out);
    assert_eq!(first.status.code(), Some(1), "{}", stderr(&first));
    let a_before = fs::read(out.join("a.jsonl.zst")).unwrap();

    // Same size, other bytes: only the hash tells.
    let b = fs::read(input.join("b.jsonl")).unwrap();
    let text = String::from_utf8(b.clone()).unwrap();
    let changed = text.replacen("\"status\":\"DEAD\"", "\"status\":\"DEAF\"", 1);
    assert_ne!(changed, text);
    assert_eq!(changed.len(), b.len());
    fs::write(input.join("b.jsonl"), changed).unwrap();
    fs::write(input.join("d.jsonl"), gen(10, 4, "0")).unwrap();
    fs::remove_file(input.join("c.jsonl.zst")).unwrap();

    let again = batch(&["migrate"], &input, &out);
    assert_eq!(again.status.code(), Some(1), "{}", stderr(&again));
    assert_eq!(ran(&again), ["b.jsonl", "d.jsonl"], "{}", stderr(&again));
    assert!(stderr(&again).contains("c.jsonl.zst: no longer in"));
    assert!(!out.join("c.jsonl.zst").exists());
    assert!(!out.join("c.summary.json").exists());
    assert!(fs::read(out.join("a.jsonl.zst")).unwrap() == a_before);
    let b_summary = json(&out.join("b.summary.json"));
    assert!(b_summary["by_code"]["UNKNOWN_STATUS"].as_u64().unwrap() >= 1);
    let merged = json(&out.join("summary.json"));
    assert_eq!(merged["lines"], 120 + 100 + 10);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_rerun_with_other_flags_is_refused_and_touches_nothing() {
    let (dir, input, out) = three_shards("flags");
    let first = batch(&["migrate", "-q", "--to", "2", "-j2"], &input, &out);
    assert_eq!(first.status.code(), Some(1));
    let manifest = fs::read(out.join("manifest.json")).unwrap();
    // The same flags spelled otherwise (the default, another -j) are the same run.
    let same = batch(&["migrate", "-j1"], &input, &out);
    assert_eq!(same.status.code(), Some(1));
    assert!(ran(&same).is_empty(), "{}", stderr(&same));

    let other = batch(&["migrate", "--to", "1"], &input, &out);
    assert_eq!(other.status.code(), Some(2));
    assert!(
        stderr(&other).contains("--to: 2 there, 1 now"),
        "{}",
        stderr(&other)
    );
    let other = batch(&["filter", "--status", "DEAD"], &input, &out);
    assert_eq!(other.status.code(), Some(2));
    assert!(stderr(&other).contains("batch migrate there, batch filter now"));
    assert!(fs::read(out.join("manifest.json")).unwrap() == manifest);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_rerun_with_the_same_sets_in_another_order_is_the_same_run() {
    let (dir, input, out) = three_shards("flag-sets");
    let first = batch(
        &[
            "filter",
            "-q",
            "--status",
            "DEAD",
            "--status",
            "PENDING",
            "--queue-limit",
            "q=10",
            "--queue-limit",
            "r=2000000",
        ],
        &input,
        &out,
    );
    assert_eq!(first.status.code(), Some(1), "{}", stderr(&first));
    let manifest = fs::read(out.join("manifest.json")).unwrap();
    // A set in another order, with a repeat; a map of one limit per queue in another order.
    let same = batch(
        &[
            "filter",
            "--status",
            "PENDING",
            "--status",
            "DEAD",
            "--status",
            "DEAD",
            "--queue-limit",
            "r=2000000",
            "--queue-limit",
            "q=10",
        ],
        &input,
        &out,
    );
    assert_eq!(same.status.code(), Some(1), "{}", stderr(&same));
    assert!(ran(&same).is_empty(), "{}", stderr(&same));
    // A queue's limit given twice is a usage error: only the last would count.
    let twice = batch(
        &[
            "filter",
            "--queue-limit",
            "q=2000000",
            "--queue-limit",
            "q=10",
        ],
        &input,
        &out,
    );
    assert_eq!(twice.status.code(), Some(2), "{}", stderr(&twice));
    assert!(stderr(&twice).contains("given twice"), "{}", stderr(&twice));
    // Another limit is another run.
    let other = batch(&["filter", "--queue-limit", "q=11"], &input, &out);
    assert_eq!(other.status.code(), Some(2), "{}", stderr(&other));
    assert!(
        stderr(&other).contains("--queue-limit"),
        "{}",
        stderr(&other)
    );
    assert!(fs::read(out.join("manifest.json")).unwrap() == manifest);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_manifest_of_an_older_format_is_refused_and_touches_nothing() {
    let (dir, input, out) = three_shards("format-1");
    fs::create_dir_all(&out).unwrap();
    // What rdq-envelope wrote before the manifest recorded its configuration: clap's flags.
    let old = "{\"format\":1,\"command\":\"migrate\",\"flags\":{\"to\":[\"2\"]},\"shards\":[\n]}\n";
    fs::write(out.join("manifest.json"), old).unwrap();
    let want = "this folder's manifest was written by an older rdq-envelope (format 1): \
                remove the folder or use another --out";
    let o = batch(&["migrate"], &input, &out);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(want), "{}", stderr(&o));
    let status = bin()
        .args(["batch", "--status"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(2));
    assert!(stderr(&status).contains(want), "{}", stderr(&status));
    assert_eq!(fs::read_to_string(out.join("manifest.json")).unwrap(), old);
    assert!(!out.join("a.jsonl.zst").exists());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_manifest_records_the_configuration() {
    let (dir, input, out) = three_shards("config");
    let o = batch(
        &[
            "filter", "-q", "--status", "DEAD", "--status", "DEAD", "--invert",
        ],
        &input,
        &out,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let manifest = json(&out.join("manifest.json"));
    assert_eq!(manifest["format_version"], 2);
    assert_eq!(manifest["config"]["command"], "filter");
    assert_eq!(manifest["config"]["status"], serde_json::json!(["DEAD"]));
    assert_eq!(manifest["config"]["invert"], true);
    assert!(manifest["config"].get("jobs").is_none());
    let status = bin()
        .args(["batch", "--status"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        stdout(&status).starts_with("filter --invert --max-envelope-bytes="),
        "{}",
        stdout(&status)
    );
    assert!(
        stdout(&status).contains(" --status=DEAD\n"),
        "{}",
        stdout(&status)
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn status_reads_the_manifest_alone() {
    let (dir, input, out) = three_shards("status");
    let o = batch(&["validate", "-q"], &input, &out);
    assert_eq!(o.status.code(), Some(1));
    fs::remove_dir_all(&input).unwrap();
    let status = bin()
        .args(["batch", "--status"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(0), "{}", stderr(&status));
    let text = stdout(&status);
    assert!(text.starts_with("validate "), "{text}");
    assert!(
        text.contains("shards: 3/3 done, 0 failed, 0 pending"),
        "{text}"
    );
    let merged = json(&out.join("summary.json"));
    assert!(
        text.contains(&format!("lines: {} (", merged["lines"])),
        "{text}"
    );
    assert!(text.contains(&format!("{} rejected", merged["rejected"])));
    let none = bin()
        .args(["batch", "--status"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(none.status.code(), Some(2));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn validate_and_filter_write_the_lines_they_keep() {
    let (dir, input, out) = three_shards("kinds");
    let o = batch(&["validate", "-q"], &input, &out);
    assert_eq!(o.status.code(), Some(1));
    let valid = run_in(&input, &["validate", "-q", "b.jsonl", "--valid-out", "-"]);
    // validate writes its diagnostics to standard output too: take the valid lines alone.
    let kept = fs::read(out.join("b.jsonl")).unwrap();
    let summary = json(&out.join("b.summary.json"));
    assert_eq!(
        kept.iter().filter(|&&b| b == b'\n').count() as u64,
        summary["valid"].as_u64().unwrap()
    );
    assert!(valid.stdout.windows(kept.len()).any(|w| w == kept));

    let fout = dir.join("filtered");
    let o = batch(&["filter", "-q", "--status", "DEAD"], &input, &fout);
    assert_eq!(o.status.code(), Some(1));
    let single = run_in(&input, &["filter", "-q", "--status", "DEAD", "b.jsonl"]);
    assert!(single.stdout == fs::read(fout.join("b.jsonl")).unwrap());
    let merged = json(&fout.join("summary.json"));
    assert!(merged["filtered_out"].as_u64().unwrap() > 0);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_shard_that_fails_is_recorded_and_the_others_are_done() {
    let (dir, input, out) = three_shards("failing");
    let mut broken = zstd(&gen(50, 5, "0"));
    broken.truncate(broken.len() / 2);
    fs::write(input.join("broken.jsonl.zst"), broken).unwrap();
    std::os::unix::fs::symlink("nowhere", input.join("dangling.jsonl")).unwrap();
    let o = batch(&["migrate"], &input, &out);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    for name in ["broken.jsonl.zst", "dangling.jsonl"] {
        assert!(
            stderr(&o).contains(&format!("{name}: failed: ")),
            "{}",
            stderr(&o)
        );
    }
    assert!(stderr(&o).contains("2 of 5 shards not done (broken.jsonl.zst, dangling.jsonl)"));
    let s = states(&out);
    assert_eq!(s.iter().filter(|(_, st)| st == "done").count(), 3);
    assert_eq!(s[2], ("broken.jsonl.zst".to_owned(), "failed".to_owned()));
    assert_eq!(s[4], ("dangling.jsonl".to_owned(), "failed".to_owned()));
    for name in ["broken.jsonl.zst", "broken.summary.json", "summary.json"] {
        assert!(!out.join(name).exists(), "{name}");
    }
    let status = bin()
        .args(["batch", "--status"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(stdout(&status).contains("failed: broken.jsonl.zst: "));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn only_and_assemble_write_what_a_local_run_writes() {
    let (dir, input, out) = three_shards("assemble");
    let local = batch(&["migrate", "-q"], &input, &out);
    assert_eq!(local.status.code(), Some(1));

    let split = dir.join("split");
    let list = batch(&["migrate", "--list"], &input, &split);
    assert_eq!(stdout(&list), "a.jsonl.zst\nb.jsonl\nc.jsonl.zst\n");
    let mut entries = String::new();
    for shard in stdout(&list).lines() {
        let o = batch(&["migrate", "-q", "-j1", "--only", shard], &input, &split);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(!split.join("manifest.json").exists());
        entries.push_str(&stdout(&o));
    }
    let entries_file = dir.join("entries.jsonl");
    fs::write(&entries_file, &entries).unwrap();
    let o = batch(
        &[
            "migrate",
            "-q",
            "--assemble",
            entries_file.to_str().unwrap(),
        ],
        &input,
        &split,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    for entry in fs::read_dir(&out).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.starts_with('.') {
            continue;
        }
        let (a, b) = (
            fs::read(out.join(&name)).unwrap(),
            fs::read(split.join(&name)).unwrap(),
        );
        assert_eq!(without_seconds(&a), without_seconds(&b), "{name}");
    }
    // A done shard is not run again by --only.
    let again = batch(&["migrate", "--only", "b.jsonl"], &input, &split);
    assert!(ran(&again).is_empty(), "{}", stderr(&again));
    assert!(stdout(&again).contains("\"state\":\"done\""));
    fs::remove_dir_all(&dir).unwrap();
}

/// A runner records its progress while other shards run (`--assemble --in-flight`): their
/// temporary files stay, the recorded shards are done and kept by the next run, the rest
/// pending.
#[test]
fn an_in_flight_assembly_records_progress_and_a_rerun_keeps_it() {
    let (dir, input, out) = three_shards("in-flight");
    let first = batch(
        &["migrate", "-q", "-j1", "--only", "a.jsonl.zst"],
        &input,
        &out,
    );
    assert_eq!(first.status.code(), Some(1), "{}", stderr(&first));
    // A shard still being written by another task.
    let temp = out.join(".b.jsonl.rdq-tmp.999.0");
    fs::write(&temp, b"half a shard").unwrap();
    let entries = dir.join("entries.jsonl");
    fs::write(&entries, first.stdout).unwrap();
    let assemble = |extra: &[&str]| {
        let mut args = vec!["migrate", "-q", "--assemble", entries.to_str().unwrap()];
        args.extend_from_slice(extra);
        batch(&args, &input, &out)
    };
    let o = assemble(&["--in-flight"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "not every shard is done: {}",
        stderr(&o)
    );
    assert!(temp.exists(), "an in-flight shard's temporary file stays");
    assert_eq!(
        states(&out),
        [
            ("a.jsonl.zst".to_owned(), "done".to_owned()),
            ("b.jsonl".to_owned(), "pending".to_owned()),
            ("c.jsonl.zst".to_owned(), "pending".to_owned()),
        ]
    );
    assert!(!out.join("summary.json").exists());

    // The driver died here. The rerun does the two others, not the recorded one.
    let rerun = batch(&["migrate"], &input, &out);
    assert_eq!(rerun.status.code(), Some(1), "{}", stderr(&rerun));
    assert_eq!(ran(&rerun), ["b.jsonl", "c.jsonl.zst"]);
    assert!(!temp.exists(), "a run of its own cleans up");
    assert!(out.join("summary.json").exists());

    let o = batch(&["migrate", "--in-flight"], &input, &out);
    assert_eq!(
        o.status.code(),
        Some(2),
        "--in-flight goes only with --assemble"
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn usage_errors_touch_nothing() {
    let (dir, input, out) = three_shards("usage");
    let cases: &[(&[&str], &str)] = &[
        (&["migrate", "-o", "x.jsonl"], "-o: each shard's outputs"),
        (&["migrate", "--rejects", "r"], "--rejects"),
        (&["validate", "--valid-out", "v"], "--valid-out"),
        (&["filter", "--count"], "--count"),
        (&["migrate", "--to", "3"], "--to 3"),
    ];
    for (args, message) in cases {
        let o = batch(args, &input, &out);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(message), "{args:?}: {}", stderr(&o));
    }
    assert!(!out.exists());
    let same = batch(&["migrate"], &input, &input);
    assert!(stderr(&same).contains("must not be the input folder"));
    fs::write(input.join("a.jsonl"), b"").unwrap();
    let clash = batch(&["migrate"], &input, &out);
    assert_eq!(clash.status.code(), Some(2));
    assert!(
        stderr(&clash).contains("would both write a.summary.json"),
        "{}",
        stderr(&clash)
    );
    let empty = dir.join("empty");
    fs::create_dir_all(&empty).unwrap();
    let none = batch(&["migrate"], &empty, &out);
    assert!(stderr(&none).contains("no shards"));
    let no_out = Command::new(env!("CARGO_BIN_EXE_rdq-envelope"))
        .args(["batch", "migrate"])
        .arg(&input)
        .output()
        .unwrap();
    assert!(stderr(&no_out).contains("--out DIR"));
    assert!(!out.exists());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn many_small_shards_are_all_recorded() {
    // The manifest is then rewritten after every few shards, not after each: the last write
    // still records every one.
    let dir = scratch("many");
    let input = dir.join("in");
    fs::create_dir_all(&input).unwrap();
    let lines = gen(300, 7, "0");
    for (i, line) in lines.split_inclusive(|&b| b == b'\n').enumerate() {
        fs::write(input.join(format!("s-{i:04}.jsonl")), line).unwrap();
    }
    let out = dir.join("out");
    let o = batch(&["migrate", "-q"], &input, &out);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s = states(&out);
    assert_eq!(s.len(), 300);
    assert!(s.iter().all(|(_, state)| state == "done"));
    assert_eq!(json(&out.join("summary.json"))["lines"], 300);
    fs::remove_dir_all(&dir).unwrap();
}
