//! `filter --where` held to the jq binary: an envelope is kept exactly when `jq -c
//! 'select(EXPR)'` outputs it, for each expression of `where_table.txt` (every builtin family,
//! paths, `..`, `reduce`/`foreach`, `try`/`catch`, `label`/`break`, definitions and recursion)
//! and for generated ones, over `gen` output of both versions with invalid lines mixed in
//! (which `filter` rejects, and which jq is not given). And the shortcut that builds only the
//! members an expression reads never changes a verdict.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use proptest::prelude::*;
use rdq_envelope::ops::Where;

use crate::common;
use common::tool_or_skip;

/// The expressions, without the comment and blank lines.
fn table() -> Vec<&'static str> {
    include_str!("where_table.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .collect()
}

struct Corpus {
    /// Valid and invalid lines, as `filter` is given them.
    mixed: PathBuf,
    /// The valid ones, as jq is given them.
    valid: PathBuf,
    valid_lines: Vec<String>,
}

fn corpus() -> &'static Corpus {
    static CORPUS: OnceLock<Corpus> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let dir = common::scratch("where-jq");
        let mut mixed = Vec::new();
        for (version, count, seed) in [("2", "1500", "41"), ("1", "500", "42")] {
            let args = [
                "gen",
                "--count",
                count,
                "--seed",
                seed,
                "--version",
                version,
            ];
            let out = common::run(&[&args[..], &["--invalid-rate", "0.04"]].concat(), b"");
            assert!(out.status.success(), "{}", common::stderr(&out));
            mixed.extend_from_slice(&out.stdout);
        }
        let valid_lines = common::valid_lines(&mixed);
        let (m, v) = (dir.join("mixed.jsonl"), dir.join("valid.jsonl"));
        std::fs::write(&m, &mixed).unwrap();
        std::fs::write(
            &v,
            valid_lines
                .iter()
                .map(|l| format!("{l}\n"))
                .collect::<String>(),
        )
        .unwrap();
        assert!(valid_lines.len() > 1800 && valid_lines.len() < 2000);
        Corpus {
            mixed: m,
            valid: v,
            valid_lines,
        }
    })
}

/// Whether jq can be run; under CI it must be (`.ci/run` installs it).
fn have_jq() -> bool {
    tool_or_skip(&["jq"], "--where against jq").is_some()
}

/// The ids `filter --where expr` keeps, in order; `Err` with its message when it refuses.
fn ours(expr: &str) -> Result<Vec<String>, String> {
    let c = corpus();
    let out = common::bin()
        .args(["filter", "-q", "--where", expr])
        .arg(&c.mixed)
        .output()
        .unwrap();
    match out.status.code() {
        Some(0 | 1) => Ok(ids(&out.stdout)),
        _ => Err(common::stderr(&out)),
    }
}

/// The ids `jq -c 'select(expr)'` outputs, in order, each once (`select` outputs an
/// envelope once for each true value). A jq that runs past two minutes fails the test.
fn theirs(expr: &str) -> Vec<String> {
    let out = Command::new("timeout")
        .args(["120", "jq", "-c"])
        .arg(format!("select({expr}) | .id"))
        .arg(&corpus().valid)
        .output()
        .unwrap();
    assert_ne!(
        out.status.code(),
        Some(124),
        "jq ran for two minutes: {expr}"
    );
    let mut ids: Vec<String> = Vec::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let id: String = serde_json::from_str(line).unwrap();
        if ids.last() != Some(&id) {
            ids.push(id);
        }
    }
    ids
}

/// The ids of `filter`'s output lines (read with the crate's parser: `gen` writes numbers
/// beyond what serde_json takes, in unknown fields).
fn ids(lines: &[u8]) -> Vec<String> {
    let mut parser = rdq_envelope::json::JsonParser::new();
    lines
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            let doc = parser.parse(l, &mut Vec::new()).unwrap();
            let id = doc
                .root()
                .get("id")
                .and_then(|v| v.as_str().map(str::to_owned));
            id.unwrap()
        })
        .collect()
}

/// What differs between the two for `expr`, if anything.
fn difference(expr: &str) -> Option<String> {
    let ours = match ours(expr) {
        Ok(ours) => ours,
        Err(message) => return Some(format!("{expr}: refused: {message}")),
    };
    let theirs = theirs(expr);
    (ours != theirs).then(|| {
        let only_ours = ours.iter().filter(|i| !theirs.contains(i)).count();
        let only_theirs = theirs.iter().filter(|i| !ours.contains(i)).count();
        format!(
            "{expr}: kept {} (jq {}): {only_ours} only here, {only_theirs} only by jq",
            ours.len(),
            theirs.len()
        )
    })
}

/// Every table expression, two at a time (the machine's cores).
#[test]
fn where_keeps_exactly_what_jq_select_keeps() {
    if !have_jq() {
        return;
    }
    let table = table();
    assert!(table.len() >= 200, "{}", table.len());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let differences = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                while let Some(expr) =
                    table.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                {
                    if let Some(d) = difference(expr) {
                        differences.lock().unwrap().push(d);
                    }
                }
            });
        }
    });
    let differences = differences.into_inner().unwrap();
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// The shortcut that builds only the members an expression reads gives each line the verdict
/// the whole envelope gives, for every table expression; and it is taken where it is proven.
#[test]
fn the_members_shortcut_never_changes_a_verdict() {
    let lines = &corpus().valid_lines;
    let mut proven = 0;
    for expr in table() {
        let w = Where::new(expr).unwrap_or_else(|e| panic!("{e}"));
        if w.members_read().is_none() {
            continue;
        }
        proven += 1;
        for line in lines {
            assert_eq!(
                w.eval(line.as_bytes()),
                w.eval_whole(line.as_bytes()),
                "{expr} on {line}"
            );
        }
    }
    // The common forms take it: member paths, select, first, if, try, reduce over a member.
    assert!(proven > 120, "{proven}");
    for expr in [
        r#"select(.status == "DEAD").queue | startswith("pay")"#,
        r#"first(.attempts[] | .outcome) == "TIMEOUT""#,
        r#"try error(.) catch .queue == "x""#,
        r#". as {$status} | $status == "DEAD""#,
    ] {
        assert!(Where::new(expr).unwrap().members_read().is_some(), "{expr}");
    }
    for expr in [
        "keys | length > 3",
        "try error(.) catch keys",
        ". as $e | [$e] | length",
    ] {
        assert!(Where::new(expr).unwrap().members_read().is_none(), "{expr}");
    }
}

/// What an envelope's field gives, in generated expressions.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(".queue".to_owned()),
        Just(".status".to_owned()),
        Just(".attempt_count".to_owned()),
        Just(".redrive_count".to_owned()),
        Just(".headers.tenant".to_owned()),
        Just(".attempts[0].outcome".to_owned()),
        Just(".attempts[-1].error.type".to_owned()),
        Just("(.attempts | length)".to_owned()),
        Just(".origin.source".to_owned()),
        Just(".payload_ref".to_owned()),
        Just(".nope".to_owned()),
        Just(r#""DEAD""#.to_owned()),
        Just("2".to_owned()),
        Just("null".to_owned()),
    ]
}

/// Generated conditions: comparisons, logic, and the forms that pass the envelope on.
fn condition() -> impl Strategy<Value = String> {
    let leaf = (value(), value(), 0..4usize).prop_map(|(a, b, op)| {
        let op = ["==", "!=", "<", ">="][op];
        format!("({a} {op} {b})")
    });
    leaf.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} and {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} or {b})")),
            inner.clone().prop_map(|a| format!("({a} | not)")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("(select({a}) | {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("first({a}, {b})")),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(a, b, c)| format!("(if {a} then {b} else {c} end)")),
            // One output per attempt: jq 1.6's `any` is false when the condition outputs true
            // twice (`any(1; true, true)`), a bug jq 1.7 fixed and jaq does not have.
            inner.clone().prop_map(|a| {
                format!("any(.attempts[]; first(.outcome == \"TIMEOUT\" or {a}))")
            }),
            inner.clone().prop_map(|a| format!("(. as $e | $e | {a})")),
            inner
                .clone()
                .prop_map(|a| format!("(try ({a} and error(.)) catch (.queue != null))")),
            (inner.clone(), value())
                .prop_map(|(a, v)| format!("(({v} | tostring | length > 3), {a})")),
            inner
                .clone()
                .prop_map(|a| format!("(reduce .attempts[] as $x (.; .) | {a})")),
            inner.prop_map(|a| format!("(label $l | ({a}, break $l))")),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn generated_expressions_keep_exactly_what_jq_keeps(expr in condition()) {
        if have_jq() {
            prop_assert_eq!(difference(&expr), None);
        }
    }
}

/// Syntax jq has and jaq does not, and an empty expression, are refused before any input is
/// read.
#[test]
fn syntax_jaq_refuses_is_a_usage_error() {
    for expr in [
        ". as [$x] ?// $x | true",
        "[1] | builtins",
        "import \"m\" as m; true",
        "include \"m\"; true",
        "",
        "  ",
    ] {
        let out = common::bin()
            .args(["filter", "--where", expr, "no-such-input.jsonl"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{expr}");
        let err = common::stderr(&out);
        assert!(
            err.contains("--where") && !err.contains("no-such-input"),
            "{expr}: {err}"
        );
    }
}
