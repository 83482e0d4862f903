//! Golden tests of `rdq-envelope sample` (docs/cli.md#sample).

use std::collections::HashMap;

use crate::common;
use common::{gen_lines, run, stderr, stdout};

fn input() -> Vec<u8> {
    gen_lines(600, 21, None, 0.05)
}

fn queue(line: &str) -> &str {
    let from = line.find("\"queue\":\"").unwrap() + 9;
    &line[from..from + line[from..].find('"').unwrap()]
}

#[test]
fn a_seed_gives_one_sample_of_valid_lines_in_input_order_for_any_job_count() {
    let input = input();
    let valid = stdout(&run(&["filter", "-q"], &input));
    let valid: Vec<&str> = valid.lines().collect();
    let runs: Vec<_> = ["1", "2", "3", "8"]
        .iter()
        .map(|jobs| run(&["sample", "25", "--seed", "4", "-q", "-j", jobs], &input))
        .collect();
    assert_eq!(runs[0].status.code(), Some(1), "some lines are invalid");
    assert!(runs.windows(2).all(|w| w[0].stdout == w[1].stdout));
    let picked = stdout(&runs[0]);
    let picked: Vec<&str> = picked.lines().collect();
    assert_eq!(picked.len(), 25);
    // A subsequence of the valid lines.
    let mut at = valid.iter();
    for line in &picked {
        assert!(at.any(|v| v == line), "in input order, and valid");
    }
    let other = run(&["sample", "25", "--seed", "5", "-q"], &input);
    assert_ne!(other.stdout, runs[0].stdout, "another seed, another sample");
}

#[test]
fn by_queue_samples_n_of_every_queue_and_the_books_balance() {
    let input = input();
    let valid = stdout(&run(&["filter", "-q"], &input));
    let mut per_queue: HashMap<&str, usize> = HashMap::new();
    for line in valid.lines() {
        *per_queue.entry(queue(line)).or_default() += 1;
    }
    let summary = common::scratch("sample").join("summary.json");
    let out = run(
        &[
            "sample",
            "30",
            "--by",
            "queue",
            "--seed",
            "1",
            "-q",
            "--summary",
            summary.to_str().unwrap(),
        ],
        &input,
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let mut got: HashMap<&str, usize> = HashMap::new();
    let text = stdout(&out);
    for line in text.lines() {
        *got.entry(queue(line)).or_default() += 1;
    }
    let want: HashMap<&str, usize> = per_queue.iter().map(|(q, n)| (*q, (*n).min(30))).collect();
    assert_eq!(got, want);
    let books: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    let n = |k: &str| books[k].as_u64().unwrap() as usize;
    let sampled: usize = want.values().sum();
    assert_eq!(
        (n("emitted"), n("filtered_out")),
        (sampled, valid.lines().count() - sampled)
    );
    assert_eq!(
        n("lines"),
        n("emitted") + n("filtered_out") + n("rejected") + n("blank")
    );
}

#[test]
fn without_a_seed_the_drawn_one_is_printed_and_repeats_the_sample() {
    let input = input();
    let out = run(&["sample", "5"], &input);
    let said = stderr(&out);
    let seed = said
        .split("--seed ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_else(|| panic!("no seed in {said}"));
    let again = run(&["sample", "5", "-q", "--seed", seed], &input);
    assert_eq!(again.stdout, out.stdout);
    for bad in [
        &["sample", "0"][..],
        &["sample"],
        &["sample", "5", "--by", "status"],
    ] {
        assert_eq!(run(bad, b"").status.code(), Some(2), "{bad:?}");
    }
}
