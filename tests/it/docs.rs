//! The documentation stays true to the binary and to itself: every subcommand `--help` lists has
//! a section in docs/cli.md whose synopsis opens with the usage line `--help` prints, reached
//! from the page's index of commands; and every relative link in the README, ARCHITECTURE.md
//! and docs/ leads to a file that exists and, for a `#fragment` into a Markdown page, to a
//! heading of that page.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::common::{bin, stdout};

/// The subcommands a `--help` page lists under "Commands:", `help` left out.
fn subcommands(args: &[&str]) -> Vec<String> {
    let help = stdout(&bin().args(args).arg("--help").output().unwrap());
    help.lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// The usage line of `rdq-envelope ARGS --help`, without its `Usage: `.
fn usage(args: &[&str]) -> String {
    let out = bin().args(args).arg("--help").output().unwrap();
    let help = stdout(&out);
    let line = help
        .lines()
        .find_map(|line| line.strip_prefix("Usage: "))
        .unwrap_or_else(|| panic!("no Usage: line in `{} --help`", args.join(" ")));
    line.to_owned()
}

/// The text of each fenced block, in order.
fn fenced_blocks(markdown: &str) -> Vec<String> {
    let (mut blocks, mut current): (Vec<String>, Option<String>) = (Vec::new(), None);
    for line in markdown.lines() {
        match (current.as_mut(), line.trim_start().starts_with("```")) {
            (None, true) => current = Some(String::new()),
            (Some(_), true) => blocks.extend(current.take()),
            (Some(block), false) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, false) => {}
        }
    }
    blocks
}

/// The `## ` section of cli.md whose heading names the command (`## completions and man` names
/// two), with its heading.
fn section<'a>(cli: &'a str, command: &str) -> Option<(&'a str, &'a str)> {
    let mut rest = cli;
    while let Some(at) = rest.find("\n## ") {
        rest = &rest[at + 1..];
        let heading = &rest[3..rest.find('\n').unwrap_or(rest.len())];
        let names = heading.split(" and ").flat_map(|part| part.split(", "));
        if names
            .map(|name| name.trim_matches('`'))
            .any(|name| name == command)
        {
            let end = rest[1..].find("\n## ").map_or(rest.len(), |end| end + 1);
            return Some((heading, &rest[..end]));
        }
    }
    None
}

#[test]
fn every_subcommand_has_a_section_in_cli_md_opening_with_its_usage_line() {
    let cli = std::fs::read_to_string("docs/cli.md").unwrap();
    let index = &cli[..cli.find("\n## ").unwrap()];
    let commands = subcommands(&[]);
    assert!(commands.len() >= 15, "found {commands:?}");
    let mut nested: Vec<(String, Vec<String>)> = Vec::new();
    for command in &commands {
        let subs = subcommands(&[command]);
        nested.push((command.clone(), vec![command.clone()]));
        for sub in subs {
            nested.push((command.clone(), vec![command.clone(), sub]));
        }
    }
    for (command, args) in nested {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (heading, text) = section(&cli, &command)
            .unwrap_or_else(|| panic!("docs/cli.md has no `## {command}` section"));
        let synopsis = fenced_blocks(text).into_iter().next().unwrap_or_default();
        let wanted = format!(
            "rdq-envelope {}",
            usage(&args).trim_start_matches("rdq-envelope ")
        );
        assert!(
            synopsis.lines().any(|line| line == wanted),
            "docs/cli.md `## {heading}`: its synopsis lacks `{wanted}` (the usage line of \
             `rdq-envelope {} --help`):\n{synopsis}",
            args.join(" ")
        );
        let anchor = format!("](#{})", slug(heading));
        assert!(
            index.contains(&anchor),
            "docs/cli.md's index of commands does not link `## {heading}` ({anchor})"
        );
    }
}

/// GitHub's anchor of a heading: lower case, only letters, digits, `-` and `_` kept, each
/// space a `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown page's headings (outside fenced blocks), `-1`, `-2` for repeats.
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut in_block = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        if in_block || !heading.trim_start_matches('#').starts_with(' ') {
            continue;
        }
        let base = slug(heading.trim_start_matches('#'));
        let mut anchor = base.clone();
        let mut repeat = 0;
        while found.contains(&anchor) {
            repeat += 1;
            anchor = format!("{base}-{repeat}");
        }
        found.insert(anchor);
    }
    found
}

/// The targets of a page's Markdown links `[text](target)` outside fenced blocks.
fn link_targets(markdown: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut in_block = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if in_block {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            targets.push(after[..end].to_owned());
            rest = &after[end..];
        }
    }
    targets
}

#[test]
fn every_relative_link_in_the_readme_and_docs_resolves() {
    let mut pages: Vec<PathBuf> = vec!["README.md".into(), "ARCHITECTURE.md".into()];
    let mut docs: Vec<PathBuf> = std::fs::read_dir("docs")
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, fragment) = match target.split_once('#') {
                Some((path, fragment)) => (path, Some(fragment)),
                None => (target.as_str(), None),
            };
            let file = match path {
                "" => page.clone(),
                _ => page.parent().unwrap_or(Path::new("")).join(path),
            };
            if !file.exists() {
                broken.push(format!("{}: {target}: no such file", page.display()));
                continue;
            }
            let is_markdown = file.extension().is_some_and(|ext| ext == "md");
            if let (Some(fragment), true) = (fragment, is_markdown) {
                let headings = anchors(&std::fs::read_to_string(&file).unwrap());
                if !headings.contains(fragment) {
                    broken.push(format!("{}: {target}: no such heading", page.display()));
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} links found");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The wheel installs every document under share/doc/rdq-envelope/ through a link per page in
/// contrib/wheel/data (maturin copies what a file link points to): a new page needs its link,
/// and the help's closing line promises the pages are there.
#[test]
fn the_wheel_links_every_document() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let installed = root.join("contrib/wheel/data/share/doc/rdq-envelope");
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.push(root.join("ARCHITECTURE.md"));
    for page in pages {
        let link = installed.join(page.file_name().unwrap());
        let same = std::fs::read(&link).ok() == Some(std::fs::read(&page).unwrap());
        assert!(
            same,
            "{} has no link in {}",
            page.display(),
            installed.display()
        );
    }
}

/// The `src/` folders and files of each row of ARCHITECTURE.md's table of layers, in its order.
fn layers(architecture: &str) -> Vec<Vec<String>> {
    architecture
        .lines()
        .skip_while(|line| !line.starts_with("| layer | where |"))
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .map(|row| {
            let place = row.split('|').nth(2).unwrap_or("");
            place
                .split('`')
                .skip(1)
                .step_by(2)
                .filter(|path| path.starts_with("src/"))
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

/// The `.rs` files under `path` (a file or a folder), unit tests left out: a `tests.rs`, a
/// `tests/` folder.
fn sources(path: &Path, into: &mut Vec<PathBuf>) {
    if path.is_file() {
        into.push(path.to_owned());
        return;
    }
    for entry in std::fs::read_dir(path).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap_or_default();
        if path.is_dir() && name != "tests" {
            sources(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") && name != "tests.rs" {
            into.push(path);
        }
    }
}

/// ARCHITECTURE.md: "each layer uses only the ones above it in this list (unit tests aside)".
/// Every `crate::MODULE` path in a layer's code (comments and the `#[cfg(test)]` tail of a file
/// left out) names its own layer, one above it, or a module the table does not place
/// (`generate`, `catalogue`, ...). The report reading `ops`' types was the one arrow back up
/// (issue 41).
#[test]
fn every_layer_imports_only_the_layers_above_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let table = layers(&std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap());
    // The module a table path is: `src/io/` is `io`, `src/diagnostic.rs` is `diagnostic`.
    let module = |path: &str| {
        let rest = path.trim_start_matches("src/");
        let first = rest.split('/').next().unwrap_or(rest);
        first.trim_end_matches(".rs").to_owned()
    };
    let rank: Vec<(String, usize)> = table
        .iter()
        .enumerate()
        .flat_map(|(i, paths)| paths.iter().map(move |p| (module(p), i)))
        .collect();
    let rank_of = |name: &str| rank.iter().find(|(m, _)| m == name).map(|&(_, i)| i);
    assert!(
        [
            "diagnostic",
            "io",
            "envelope",
            "pipeline",
            "report",
            "ops",
            "cli"
        ]
        .iter()
        .all(|m| rank_of(m).is_some()),
        "the table of layers was not read: {rank:?}"
    );
    let mut upward = Vec::new();
    for (i, paths) in table.iter().enumerate() {
        let mut files = Vec::new();
        for path in paths {
            sources(&root.join(path), &mut files);
        }
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
                for prefix in ["crate::", "rdq_envelope::"] {
                    for (at, _) in line.match_indices(prefix) {
                        let name: String = line[at + prefix.len()..]
                            .chars()
                            .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                            .collect();
                        if rank_of(&name).is_some_and(|r| r > i) {
                            upward.push(format!("{}: {}", file.display(), line.trim()));
                        }
                    }
                }
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports of a layer below:\n{}",
        upward.join("\n")
    );
}
