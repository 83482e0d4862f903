//! `rdq-envelope compliance`: the kit against stores that lose data on purpose
//! (`tests/data/broken_plugin.py`), each report checked to the pointer, and the kit's own
//! hostile walk (time limits, signals, outputs, flags).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;

use crate::common::{bin, scratch, stderr, stdout, tool_or_skip};
use crate::hostile::outputs::names;

const KNOWN_TOP: &[&str] = &[
    "envelope_version",
    "id",
    "queue",
    "handler_ref",
    "handler_version",
    "payload",
    "payload_content_type",
    "payload_ref",
    "headers",
    "origin",
    "status",
    "attempt_count",
    "redrive_count",
    "next_attempt_at",
    "lease_expires_at",
    "created_at",
    "attempts",
];

fn plugin_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/broken_plugin.py")
}

/// The command line of the broken plugin in `mode` doing `action` (`write` or `read`).
fn plugin_command(python: &Path, mode: &str, action: &str) -> String {
    format!(
        "'{}' '{}' {mode} {action}",
        python.display(),
        plugin_script().display()
    )
}

/// `compliance run` against the broken plugin in `mode`, with `extra` flags.
fn kit(mode: &str, extra: &[&str]) -> Option<Output> {
    let python = tool_or_skip(&["python3"], "the compliance kit's broken plugins")?;
    let command = |action: &str| plugin_command(&python, mode, action);
    let (write, read) = (command("write"), command("read"));
    let mut args = vec!["compliance", "run", "--write", &write, "--read", &read];
    args.extend_from_slice(extra);
    Some(bin().args(&args).output().unwrap())
}

/// The JSON report of `compliance run --format json` against `mode`.
fn report(mode: &str, extra: &[&str]) -> Option<(Output, Value)> {
    let mut flags = vec!["--format", "json"];
    flags.extend_from_slice(extra);
    let out = kit(mode, &flags)?;
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&out), stderr(&out)));
    Some((out, report))
}

/// The fixture set as `compliance fixtures` writes it: each line, its id and its top-level
/// member names (the values left as text: serde_json would refuse `1e400`, and the deepest
/// fixtures pass its recursion limit).
fn fixture_set() -> Vec<(String, Fixture)> {
    let dir = scratch("fixtures");
    let out = bin()
        .args(["compliance", "fixtures", "-o"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = std::fs::read_to_string(dir.join("fixtures.jsonl")).unwrap();
    text.lines()
        .map(|line| {
            let mut de = serde_json::Deserializer::from_str(line);
            de.disable_recursion_limit();
            let members = Members::deserialize(&mut de).unwrap();
            let id = serde_json::from_str(members["id"].get()).unwrap();
            let names = members.keys().cloned().collect();
            (line.to_string(), Fixture { id, names })
        })
        .collect()
}

type Members = std::collections::BTreeMap<String, Box<serde_json::value::RawValue>>;

struct Fixture {
    id: String,
    /// Its top-level member names.
    names: Vec<String>,
}

/// `(id, pointer)` of each difference of `class`.
fn differences(report: &Value, class: &str) -> BTreeSet<(String, String)> {
    report["differences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["class"] == class)
        .map(|d| {
            (
                d["id"].as_str().unwrap().to_string(),
                d["pointer"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn classes(report: &Value) -> BTreeSet<String> {
    report["by_class"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

#[test]
fn a_faithful_store_passes_under_both_equalities() {
    let set = fixture_set();
    assert!(set.len() >= 20, "the fixture set is there");
    for exact in [false, true] {
        let flags: &[&str] = if exact { &["--exact"] } else { &[] };
        let Some(out) = kit("faithful", flags) else {
            return;
        };
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}{}",
            stdout(&out),
            stderr(&out)
        );
        let n = set.len();
        let equality = if exact { "exact" } else { "value" };
        assert_eq!(
            stdout(&out),
            format!("PASS: {n} of {n} fixtures round-trip ({equality} equality)\n")
        );
    }
}

#[test]
fn a_store_that_respells_passes_the_contract_and_fails_exact_with_spellings_only() {
    let Some((out, report)) = report("reformat", &[]) else {
        return;
    };
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(report["passed"], true);
    let Some((out, report)) = report_exact("reformat") else {
        return;
    };
    assert_eq!(out.status.code(), Some(1));
    let found = classes(&report);
    assert!(found.contains("member_order_changed"), "{found:?}");
    assert!(found.contains("white_space_changed") || found.contains("member_order_changed"));
    assert!(
        found.iter().all(|c| c.ends_with("spelling_changed")
            || c == "member_order_changed"
            || c == "white_space_changed"),
        "only spellings differ: {found:?}"
    );
}

fn report_exact(mode: &str) -> Option<(Output, Value)> {
    report(mode, &["--exact"])
}

#[test]
fn a_store_that_drops_unknown_members_is_caught_at_each_one() {
    let Some((out, report)) = report("drop-unknown", &[]) else {
        return;
    };
    assert_eq!(out.status.code(), Some(1));
    // Exactly the top-level members the contract does not name, in every fixture that has one.
    let mut expected = BTreeSet::new();
    for (_, fixture) in fixture_set() {
        let id = fixture.id;
        for name in &fixture.names {
            if !KNOWN_TOP.contains(&name.as_str()) {
                let token = name.replace('~', "~0").replace('/', "~1");
                expected.insert((id.clone(), format!("/{token}")));
            }
        }
    }
    assert!(!expected.is_empty(), "the fixtures carry unknown members");
    assert_eq!(differences(&report, "unknown_member_lost"), expected);
    assert_eq!(
        classes(&report),
        BTreeSet::from(["unknown_member_lost".to_string()])
    );
    assert_eq!(report["differences_left_out"], 0);
}

#[test]
fn a_store_that_reads_numbers_as_doubles_is_caught() {
    let Some((out, report)) = report("round-numbers", &[]) else {
        return;
    };
    assert_eq!(out.status.code(), Some(1));
    let changed: Vec<&Value> = report["differences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["class"] == "number_changed")
        .collect();
    assert!(
        changed
            .iter()
            .any(|d| d["sent"] == "9007199254740993" && d["found"] == "9007199254740992"),
        "2^53+1 comes back as 2^53: {changed:#?}"
    );
    // Nothing else is lost: only numbers change (and `1e400` becomes Infinity, not JSON).
    for class in classes(&report) {
        assert!(
            // A rounded number may also break a rule (a size past 2^64-1).
            [
                "number_changed",
                "invalid_envelope",
                "unreadable_line",
                "envelope_missing"
            ]
            .contains(&class.as_str()),
            "{class}"
        );
    }
}

#[test]
fn a_store_that_loses_an_envelope_is_caught() {
    let Some((out, report)) = report("lose-one", &[]) else {
        return;
    };
    assert_eq!(out.status.code(), Some(1));
    let set = fixture_set();
    let third = set[2].1.id.clone();
    assert_eq!(
        differences(&report, "envelope_missing"),
        BTreeSet::from([(third, String::new())])
    );
    assert_eq!(report["failed"], 1);
    assert_eq!(
        classes(&report),
        BTreeSet::from(["envelope_missing".to_string()])
    );
}

#[test]
fn a_store_that_gives_an_envelope_back_twice_is_caught() {
    let Some((out, report)) = report("duplicate", &[]) else {
        return;
    };
    assert_eq!(out.status.code(), Some(1));
    let strays = report["strays"].as_array().unwrap();
    assert_eq!(strays.len(), 1, "{strays:?}");
    assert_eq!(strays[0]["class"], "duplicate");
    assert_eq!(strays[0]["line"], fixture_set().len() + 1);
    assert_eq!(report["failed"], 0);
}

#[test]
fn a_read_command_that_prints_a_log_line_is_caught() {
    let Some(out) = kit("garbage", &[]) else {
        return;
    };
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.starts_with("read output line 1: -: unreadable line: MALFORMED_JSON"),
        "{text}"
    );
    assert!(text.contains("INFO connected to the store"), "{text}");
}

#[test]
fn a_store_that_crashes_is_reported_with_its_standard_error() {
    let Some(out) = kit("crash", &[]) else {
        return;
    };
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.contains("broken_plugin.py' crash write) exited with status 1"),
        "{text}"
    );
    assert!(
        text.contains("  | RuntimeError: the store went away"),
        "{text}"
    );
    assert!(text.contains("envelope missing"), "{text}");
}

/// Whether the process `pid` is gone (or a zombie waiting for a parent that never reaps).
fn is_gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// After the hanging plugin's run: no process whose pid it wrote to `pids` is left running,
/// and no run folder is left in `dir` (its TMPDIR).
fn assert_nothing_left(dir: &Path, pids: &Path) {
    std::thread::sleep(Duration::from_millis(200));
    for pid in std::fs::read_to_string(pids).unwrap().split_whitespace() {
        assert!(is_gone(pid), "process {pid} was left running");
    }
    let left: Vec<String> = names(dir)
        .into_iter()
        .filter(|n| n.starts_with("rdq-compliance"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_store_that_hangs_is_killed_with_everything_it_started() {
    let dir = scratch("hang");
    let pids = dir.join("pids");
    let started = Instant::now();
    let Some(python) = tool_or_skip(&["python3"], "the compliance kit's broken plugins") else {
        return;
    };
    let write = plugin_command(&python, "hang", "write");
    let out = bin()
        .args([
            "compliance",
            "run",
            "--timeout",
            "2",
            "--write",
            &write,
            "--read",
            "true",
        ])
        .env("BROKEN_PLUGIN_PIDS", &pids)
        .env("TMPDIR", &dir)
        .output()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.contains("did not finish within 2 s (--timeout) and was killed"),
        "{text}"
    );
    // Its standard error is quoted, its terminal escape made harmless.
    assert!(text.contains("\u{fffd}[31mwaiting for the store"), "{text}");
    assert!(!text.contains('\u{1b}'));
    assert_nothing_left(&dir, &pids);
}

#[test]
fn a_signal_ends_the_kit_and_the_store_it_waits_for() {
    let dir = scratch("signal");
    let pids = dir.join("pids");
    let Some(python) = tool_or_skip(&["python3"], "the compliance kit's broken plugins") else {
        return;
    };
    let write = plugin_command(&python, "hang", "write");
    let child = bin()
        .args(["compliance", "run", "--write", &write, "--read", "true"])
        .env("BROKEN_PLUGIN_PIDS", &pids)
        .env("TMPDIR", &dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::fs::read_to_string(&pids).map_or(true, |p| p.split_whitespace().count() < 2) {
        assert!(Instant::now() < deadline, "the plugin did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    assert_nothing_left(&dir, &pids);
}

#[test]
fn the_reports_for_ci_are_well_formed() {
    let dir = scratch("junit");
    let junit = dir.join("report.xml");
    let json = dir.join("report.json");
    let Some(out) = kit(
        "lose-one",
        &[
            "--format",
            "json",
            "-o",
            json.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
        ],
    ) else {
        return;
    };
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(report["passed"], false);
    let n = fixture_set().len();
    // Parsed by Python's XML parser: well formed, a test case per fixture and command.
    let check = format!(
        "import xml.etree.ElementTree as E; r = E.parse('{}').getroot(); s = r.find('testsuite'); \
         cases = s.findall('testcase'); \
         print(len(cases), s.get('failures'), s.get('errors'), len([c for c in cases if c.find('failure') is not None]))",
        junit.display()
    );
    let parsed = std::process::Command::new("python3")
        .args(["-c", &check])
        .output()
        .unwrap();
    assert_eq!(
        stdout(&parsed),
        format!("{} 1 0 1\n", n + 3),
        "{}",
        stderr(&parsed)
    );
}

#[test]
fn bad_flags_and_outputs_are_refused_before_any_command_runs() {
    let dir = scratch("flags");
    let marker = dir.join("ran");
    let write = format!("touch '{}'", marker.display());
    let same = dir.join("same");
    let same = same.to_str().unwrap();
    for (flags, says) in [
        (vec!["--timeout", "0"], "--timeout 0"),
        (vec!["--timeout", "-1"], "--timeout -1"),
        (vec!["--timeout", "NaN"], "--timeout NaN"),
        (
            vec!["--timeout", "1e30"],
            "--timeout 1000000000000000000000000000000",
        ),
        (vec!["-o", same, "--junit", same], "same"),
    ] {
        let out = bin()
            .args(["compliance", "run", "--write", &write, "--read", "true"])
            .args(&flags)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        assert!(stderr(&out).contains(says), "{flags:?}: {}", stderr(&out));
        assert!(!marker.exists(), "{flags:?}: the write command ran");
    }
    let out = bin()
        .args(["compliance", "run", "--write", " ", "--read", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--write: the command is empty"));
    let out = bin()
        .args(["compliance", "run", "--write", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "--read is required");
}

#[test]
fn a_report_that_cannot_be_written_is_status_2() {
    let out = bin()
        .args([
            "compliance",
            "run",
            "--write",
            "cat >/dev/null",
            "--read",
            "true",
            "-o",
            "/dev/full",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("/dev/full"), "{}", stderr(&out));
}

#[test]
fn the_fixture_set_is_written_valid_and_described() {
    let dir = scratch("fixtures-out").join("new/folder");
    let out = bin()
        .args(["compliance", "fixtures", "-o"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = std::fs::read(dir.join("fixtures.jsonl")).unwrap();
    let validate = bin()
        .args(["validate", "-q"])
        .arg(dir.join("fixtures.jsonl"))
        .output()
        .unwrap();
    assert_eq!(validate.status.code(), Some(0), "{}", stdout(&validate));
    let table = std::fs::read_to_string(dir.join("fixtures.md")).unwrap();
    let rows = table.lines().filter(|l| l.starts_with("| `")).count();
    assert_eq!(
        rows,
        lines
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .count()
    );
    // A URL is not a folder.
    let out = bin()
        .args(["compliance", "fixtures", "-o", "s3://bucket/fixtures"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_write_command_that_stops_reading_is_named() {
    let out = bin()
        .args([
            "compliance",
            "run",
            "--write",
            "head -c 10 >/dev/null",
            "--read",
            "true",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.contains("exited with status 0 but stopped reading its standard input after"),
        "{text}"
    );
}

#[test]
fn a_temporary_folder_that_cannot_hold_the_run_folder_is_status_2() {
    let out = bin()
        .args(["compliance", "run", "--write", "true", "--read", "true"])
        .env("TMPDIR", "/nonexistent/rdq-compliance-tmp")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot create the run's folder"),
        "{}",
        stderr(&out)
    );
}
