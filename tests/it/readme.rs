//! The README's walk-through stays true: every `$ command` in the "Working through a DLQ
//! export" section runs (through `sh`, with the binary under test first on PATH, in a scratch
//! folder holding the bundled sample) and prints what the README shows. Timings in the summary
//! lines (`in 0.00 s, 239 MB/s`) are the only text allowed to differ.

use std::process::Command;

use crate::common;
use common::{tool_or_skip, without_timings};

const SECTION: &str = "## Working through a DLQ export";

/// The (command, expected output) pairs of the section's `text` blocks.
fn examples(readme: &str) -> Vec<(String, String)> {
    let start = readme.find(SECTION).expect("the walk-through section");
    let rest = &readme[start + SECTION.len()..];
    let section = &rest[..rest.find("\n## ").unwrap_or(rest.len())];
    let mut examples: Vec<(String, String)> = Vec::new();
    let mut in_block = false;
    for line in section.lines() {
        match (in_block, line) {
            (false, "```text") => in_block = true,
            (true, "```") => in_block = false,
            (true, _) => match line.strip_prefix("$ ") {
                Some(command) => examples.push((command.to_owned(), String::new())),
                None => {
                    let (_, output) = examples.last_mut().expect("output after a command");
                    output.push_str(line);
                    output.push('\n');
                }
            },
            _ => {}
        }
    }
    examples
}

#[test]
fn the_walk_through_prints_what_the_readme_shows() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let examples = examples(&readme);
    assert!(examples.len() >= 8, "found {} examples", examples.len());

    let (dir, path) = common::folder_with_the_sample("readme");
    // Under CI jq is installed (.ci/run): its absence is a failure, not a silent skip.
    let has_jq = tool_or_skip(&["jq"], "the README's jq examples").is_some();
    for (command, expected) in examples {
        if command.contains("| jq") && !has_jq {
            eprintln!("skipped (no jq): {command}");
            continue;
        }
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("exec 2>&1; {command}"))
            .current_dir(&dir)
            .env("PATH", &path)
            .env_remove("NO_COLOR")
            .output()
            .unwrap();
        let printed = String::from_utf8(out.stdout).unwrap();
        assert_eq!(
            without_timings(&printed),
            without_timings(&expected),
            "$ {command}"
        );
    }
}
