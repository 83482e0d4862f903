//! `CMD -h` reads from what matters to what is shared: the command's own flags (what it selects
//! or does) under "Options" first, then "Input and limits", then "Output", for every command.

use crate::common::{bin, stdout};

/// Every command that reads envelopes: each shares the input and output flags.
const READERS: [&str; 9] = [
    "validate", "migrate", "filter", "stats", "export", "dedupe", "sample", "redrive", "show",
];

/// The headings of `-h` in order, each with the flags (long names) listed under it.
fn sections(command: &str) -> Vec<(String, Vec<String>)> {
    let out = bin()
        .args([command, "-h"])
        .output()
        .expect("the binary runs");
    assert_eq!(out.status.code(), Some(0), "{command} -h");
    let mut sections: Vec<(String, Vec<String>)> = Vec::new();
    for line in stdout(&out).lines() {
        if let Some(heading) = line.strip_suffix(':').filter(|h| !h.starts_with(' ')) {
            sections.push((heading.to_owned(), Vec::new()));
        } else if let (Some(section), Some(flag)) = (
            sections.last_mut(),
            line.split_whitespace()
                .find(|word| word.starts_with("--"))
                .map(|word| word.trim_end_matches(',')),
        ) {
            // The first long name on a line that lists a flag (not one named in a description:
            // flag lines start with the flag).
            if line.trim_start().starts_with('-') {
                section.1.push(flag.to_owned());
            }
        }
    }
    sections
}

fn heading_of<'a>(sections: &'a [(String, Vec<String>)], flag: &str) -> &'a str {
    sections
        .iter()
        .find(|(_, flags)| flags.iter().any(|f| f == flag))
        .map(|(heading, _)| heading.as_str())
        .unwrap_or_else(|| panic!("{flag} is in no section of {sections:?}"))
}

#[test]
fn every_reader_lists_its_own_flags_then_inputs_then_outputs() {
    for command in READERS {
        let sections = sections(command);
        // The examples close every page (`every_command_ends_its_help_with_examples_that_run`).
        let headings: Vec<&str> = sections
            .iter()
            .map(|(h, _)| h.as_str())
            .filter(|h| *h != "Examples")
            .collect();
        let expected = ["Arguments", "Options", "Input and limits", "Output"];
        assert_eq!(
            headings,
            expected
                .iter()
                .skip(usize::from(!headings.contains(&"Arguments")))
                .copied()
                .collect::<Vec<_>>(),
            "{command} -h"
        );
        for flag in [
            "--max-envelope-bytes",
            "--queue-limit",
            "--max-line-bytes",
            "--jobs",
        ] {
            assert_eq!(
                heading_of(&sections, flag),
                "Input and limits",
                "{command} {flag}"
            );
        }
        for flag in ["--quiet", "--color"] {
            assert_eq!(heading_of(&sections, flag), "Output", "{command} {flag}");
        }
        if command != "show" {
            for flag in [
                "--output",
                "--rejects",
                "--summary",
                "--compress",
                "--progress",
            ] {
                assert_eq!(heading_of(&sections, flag), "Output", "{command} {flag}");
            }
        }
        assert_eq!(heading_of(&sections, "--help"), "Options", "{command}");
    }
}

#[test]
fn what_a_command_selects_or_does_comes_first() {
    let own = [
        (
            "filter",
            &[
                "--queue", "--status", "--where", "--limit", "--invert", "--count",
            ][..],
        ),
        ("validate", &["--submit", "--require-version", "--warnings"]),
        ("migrate", &["--to", "--from", "--chokaq-table"]),
        ("stats", &["--by", "--top"]),
        ("export", &["--fields", "--neutralize-formulas"]),
        ("dedupe", &["--keep"]),
        ("sample", &["--seed", "--by"]),
        ("redrive", &["--at", "--now", "--rate", "--dry-run"]),
        ("show", &["--payload", "--all"]),
        ("gen", &["--count", "--size", "--seed", "--format"]),
    ];
    for (command, flags) in own {
        let sections = sections(command);
        for flag in flags {
            assert_eq!(heading_of(&sections, flag), "Options", "{command} {flag}");
        }
    }
    // The other outputs a command writes sit with -o, not among what it selects.
    let outputs = [
        ("validate", "--format"),
        ("validate", "--valid-out"),
        ("migrate", "--warnings-out"),
        ("stats", "--format"),
        ("export", "--format"),
        ("dedupe", "--dropped"),
        ("gen", "--output"),
        ("schema", "--output"),
    ];
    for (command, flag) in outputs {
        assert_eq!(
            heading_of(&sections(command), flag),
            "Output",
            "{command} {flag}"
        );
    }
}

/// Help and man pages cite docs/NAME.md; every page says where those are for a pip user too.
#[test]
fn every_help_page_and_man_page_says_where_the_documents_are() {
    let note = "share/doc/rdq-envelope/";
    let top = bin().arg("--help").output().unwrap();
    assert!(stdout(&top).contains(note), "{}", stdout(&top));
    for command in READERS
        .iter()
        .chain(&["gen", "schema", "explain", "batch", "man"])
    {
        for flag in ["-h", "--help"] {
            let out = bin().args([command, flag]).output().unwrap();
            assert!(stdout(&out).contains(note), "{command} {flag}");
        }
    }
    let out = bin().args(["batch", "filter", "-h"]).output().unwrap();
    assert!(stdout(&out).contains(note), "batch filter -h");
    let pages =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/wheel/data/share/man/man1");
    for page in [
        "rdq-envelope.1",
        "rdq-envelope-validate.1",
        "rdq-envelope-batch-filter.1",
    ] {
        let text = std::fs::read_to_string(pages.join(page)).unwrap();
        assert!(text.contains("share/doc/rdq\\-envelope/"), "{page}");
    }
}

/// The subcommands `--help` lists under "Commands:" (clap's `help` left out).
fn subcommands(path: &[&str]) -> Vec<String> {
    let out = bin().args(path).arg("--help").output().unwrap();
    let text = stdout(&out);
    let Some(listed) = text.split("\nCommands:\n").nth(1) else {
        return Vec::new();
    };
    listed
        .lines()
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// Every command's `--help` ends with two or three real examples, and each runs: in order, in
/// a folder holding the bundled sample under `samples/`, the binary under test first on PATH,
/// ending with status 0 or 1 (the man pages show the same examples).
#[test]
fn every_command_ends_its_help_with_examples_that_run() {
    let (dir, path) = crate::common::folder_with_the_sample("help-examples");
    let mut paths: Vec<Vec<String>> = vec![Vec::new()];
    for name in subcommands(&[]) {
        for nested in subcommands(&[name.as_str()]) {
            paths.push(vec![name.clone(), nested]);
        }
        paths.push(vec![name]);
    }
    assert!(paths.len() > 20, "{paths:?}");
    for command in &paths {
        let args: Vec<&str> = command.iter().map(String::as_str).collect();
        let out = bin().args(&args).arg("--help").output().unwrap();
        let help = stdout(&out);
        let (_, examples) = help
            .rsplit_once("\nExamples:\n")
            .unwrap_or_else(|| panic!("{args:?}: no examples at the end of --help"));
        let examples: Vec<&str> = examples.lines().collect();
        assert!((2..=3).contains(&examples.len()), "{args:?}: {examples:?}");
        for example in examples {
            let line = example
                .strip_prefix("  $ ")
                .unwrap_or_else(|| panic!("{args:?}: {example:?}"));
            let run = std::process::Command::new("sh")
                .args(["-c", line])
                .current_dir(&dir)
                .env("PATH", &path)
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap();
            assert!(
                matches!(run.status.code(), Some(0 | 1)),
                "{args:?}: `{line}` ended with {:?}: {}",
                run.status.code(),
                crate::common::stderr(&run)
            );
        }
    }
    // Every man page has them in a section of its own.
    let pages = dir.join("man-pages");
    let out = bin().args(["man", "--dir"]).arg(&pages).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let mut count = 0;
    for page in std::fs::read_dir(&pages).unwrap() {
        let page = page.unwrap().path();
        let text = std::fs::read_to_string(&page).unwrap();
        assert!(
            text.contains("\n.SH EXAMPLES\n.nf\n\\&$ "),
            "{}",
            page.display()
        );
        count += 1;
    }
    assert_eq!(count, paths.len());
}
