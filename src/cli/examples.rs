//! Real examples for every command's `--help` and man page (an EXAMPLES section): the README's
//! walk-through commands, run on the bundled sample. `tests/it/cli_help.rs` runs each, in
//! order, in a folder holding only `samples/`, and holds it to exit 0 or 1.

/// The examples of each command, by its path of names (`""` for the top, `"batch"`,
/// `"compliance fixtures"`), in the order they run: a later one may read what an earlier one
/// of the same command wrote.
pub const EXAMPLES: &[(&str, &[&str])] = &[
    (
        "",
        &[
            "rdq-envelope validate samples/dlq-sample.jsonl.zst",
            "rdq-envelope stats --top 5 samples/dlq-sample.jsonl.zst",
            "rdq-envelope filter --status DEAD --last-error-type 'java.net.*' --count samples/dlq-sample.jsonl.zst",
        ],
    ),
    (
        "validate",
        &[
            "rdq-envelope validate samples/dlq-sample.jsonl.zst",
            "rdq-envelope validate samples/dlq-sample.jsonl.zst -o /dev/null --rejects rejects.jsonl",
            "rdq-envelope validate --format json --valid-out valid.jsonl samples/dlq-sample.jsonl.zst",
        ],
    ),
    (
        "gen",
        &[
            "rdq-envelope gen --count 1000 --seed 1 -o corpus.jsonl",
            "rdq-envelope gen --size 10MB --invalid-rate 0.01 --version 1 -o defects-v1.jsonl.zst",
        ],
    ),
    (
        "migrate",
        &[
            "rdq-envelope migrate --to 2 samples/dlq-sample.jsonl.zst -o dlq-v2.jsonl.zst",
            "rdq-envelope migrate --to 1 samples/dlq-sample.jsonl.zst -o dlq-v1.jsonl --rejects rejects.jsonl",
        ],
    ),
    (
        "redrive",
        &[
            "rdq-envelope filter -q --status DEAD --last-error-type 'java.net.*' samples/dlq-sample.jsonl.zst | rdq-envelope redrive --at 2026-12-03T18:00:00.000Z -o redrive-batch.jsonl",
            "rdq-envelope filter -q --status DEAD samples/dlq-sample.jsonl.zst | rdq-envelope redrive --dry-run --at 2026-12-03T18:00:00.000Z --queue recovery --rate 10/m --max-redrives 1",
        ],
    ),
    (
        "dedupe",
        &[
            "rdq-envelope dedupe samples/dlq-sample.jsonl.zst samples/dlq-sample.jsonl.zst -o unique.jsonl --dropped copies.jsonl",
            "rdq-envelope dedupe --keep first --summary books.json samples/dlq-sample.jsonl.zst -o first.jsonl",
        ],
    ),
    (
        "sample",
        &[
            "rdq-envelope sample 2 --seed 7 samples/dlq-sample.jsonl.zst",
            "rdq-envelope sample 3 --by queue samples/dlq-sample.jsonl.zst -o per-queue.jsonl",
        ],
    ),
    (
        "filter",
        &[
            "rdq-envelope filter --status DEAD --last-error-type 'java.net.*' --count samples/dlq-sample.jsonl.zst",
            "rdq-envelope filter --error-message 'certification path' --where '(.attempts | length) >= 5' samples/dlq-sample.jsonl.zst -o long.jsonl",
            "rdq-envelope filter --status DEAD --fingerprint 455ff875f6f1 samples/dlq-sample.jsonl.zst | rdq-envelope stats -q",
        ],
    ),
    (
        "export",
        &[
            "rdq-envelope export --fields id,queue,attempt_count,last.error.type,fingerprint samples/dlq-sample.jsonl.zst",
            "rdq-envelope export samples/dlq-sample.jsonl.zst -o dlq.parquet --rejects rejects.jsonl",
        ],
    ),
    (
        "stats",
        &[
            "rdq-envelope stats --top 5 samples/dlq-sample.jsonl.zst",
            "rdq-envelope stats --by fingerprint --format json samples/dlq-sample.jsonl.zst",
            "rdq-envelope stats --format html --top 5 -o report.html samples/dlq-sample.jsonl.zst",
        ],
    ),
    (
        "show",
        &[
            "rdq-envelope show 01HWT0DZKCQ7J900G1BS222Z6A samples/dlq-sample.jsonl.zst",
            "rdq-envelope show 01HWT0DZKCQ7J900G1BS222Z6A --payload samples/dlq-sample.jsonl.zst",
        ],
    ),
    (
        "schema",
        &[
            "rdq-envelope schema -o envelope-v2.schema.json",
            "rdq-envelope schema --version 1",
        ],
    ),
    (
        "compliance",
        &[
            "rdq-envelope compliance fixtures -o fixtures/",
            "rdq-envelope compliance run --write 'cat > \"$RDQ_COMPLIANCE_DIR/store.jsonl\"' --read 'cat \"$RDQ_COMPLIANCE_DIR/store.jsonl\"'",
        ],
    ),
    (
        "compliance fixtures",
        &[
            "rdq-envelope compliance fixtures -o fixtures/",
            "rdq-envelope compliance fixtures -o fixtures-again/ && wc -l fixtures-again/fixtures.jsonl",
        ],
    ),
    (
        "compliance run",
        &[
            "rdq-envelope compliance run --write 'cat > \"$RDQ_COMPLIANCE_DIR/store.jsonl\"' --read 'cat \"$RDQ_COMPLIANCE_DIR/store.jsonl\"'",
            "rdq-envelope compliance run --format json --write 'cat > \"$RDQ_COMPLIANCE_DIR/s\"' --read 'cat \"$RDQ_COMPLIANCE_DIR/s\"' -o report.json",
        ],
    ),
    (
        "completions",
        &[
            "rdq-envelope completions zsh > _rdq-envelope",
            "rdq-envelope completions fish > rdq-envelope.fish",
        ],
    ),
    (
        "man",
        &[
            "rdq-envelope man > rdq-envelope.1",
            "rdq-envelope man --dir man/",
        ],
    ),
    (
        "convert",
        &[
            "rdq-envelope convert --to proto samples/dlq-sample.jsonl.zst -o dlq.pb",
            "rdq-envelope convert --from proto dlq.pb -o back.jsonl",
        ],
    ),
    (
        "batch",
        &[
            "mkdir -p archive && rdq-envelope gen -q --count 3000 --seed 1 --version 1 -o archive/part-0001.jsonl.zst",
            "rdq-envelope batch migrate --to 2 archive/ --out archive-v2/",
            "rdq-envelope batch --status archive-v2/",
        ],
    ),
    (
        "batch validate",
        &[
            "rdq-envelope batch validate samples/ --out checked/",
            "rdq-envelope batch --status checked/",
        ],
    ),
    (
        "batch migrate",
        &[
            "rdq-envelope batch migrate --to 1 samples/ --out samples-v1/",
            "rdq-envelope batch migrate --to 1 samples/ --out samples-v1/",
        ],
    ),
    (
        "batch filter",
        &[
            "rdq-envelope batch filter --status DEAD samples/ --out dead/",
            "rdq-envelope batch filter --where '.attempt_count > 3' samples/ --out retried/",
        ],
    ),
    (
        "explain",
        &["rdq-envelope explain INVALID_ID", "rdq-envelope explain --list"],
    ),
];

/// The examples of the command at `path` (`""`, `"batch migrate"`).
pub fn of(path: &str) -> &'static [&'static str] {
    EXAMPLES
        .iter()
        .find(|(name, _)| *name == path)
        .map_or(&[], |(_, examples)| *examples)
}

/// The examples as the end of a `--help` page.
pub fn help_text(path: &str) -> Option<String> {
    let examples = of(path);
    if examples.is_empty() {
        return None;
    }
    let mut text = String::from("Examples:\n");
    for example in examples {
        text.push_str("  $ ");
        text.push_str(example);
        text.push('\n');
    }
    Some(text.trim_end().to_owned())
}

/// The EXAMPLES section of a man page, in roff: each example as literal text.
pub fn roff(path: &str) -> Option<String> {
    let examples = of(path);
    if examples.is_empty() {
        return None;
    }
    let mut text = String::from(".SH EXAMPLES\n.nf\n");
    for example in examples {
        // roff reads a backslash as an escape and a leading dot or quote as a request.
        let line = example.replace('\\', "\\e");
        text.push_str("\\&$ ");
        text.push_str(&line);
        text.push('\n');
    }
    text.push_str(".fi\n");
    Some(text)
}
