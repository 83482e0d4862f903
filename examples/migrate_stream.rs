//! Migrates a stream of envelopes to another version, standard input to standard output, one
//! line at a time with a [`Migrator`]: every byte the migration does not change is kept. A line
//! that is invalid, or that the target version cannot hold, is left out and said why on
//! standard error; the exit status is then 1.
//!
//! ```text
//! cargo run --example migrate_stream -- 2 < v1.jsonl > v2.jsonl
//! ```
//!
//! The command line's `migrate` does the same on every core, in input order, with
//! [`rdq_envelope::ops::MigrateOp`] and [`rdq_envelope::pipeline::run`].

use std::io::{self, Write};
use std::process::ExitCode;

use rdq_envelope::framing::{LineKind, LineReader};
use rdq_envelope::migrate::{Migration, Migrator};
use rdq_envelope::{Diagnostic, EnvelopeRules, JsonParser, RuleOptions, Verdict};

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(error) => {
            eprintln!("migrate_stream: {error}");
            ExitCode::from(2)
        }
    }
}

/// Whether every line was migrated.
fn run() -> Result<bool, Box<dyn std::error::Error>> {
    let to: u32 = match std::env::args().nth(1) {
        Some(version) => version.parse()?,
        None => rdq_envelope::envelope::NEWEST_VERSION,
    };
    if !rdq_envelope::envelope::SUPPORTED_VERSIONS.contains(&to) {
        let supported = rdq_envelope::envelope::supported_versions();
        return Err(format!("version {to} is not supported ({supported})").into());
    }
    let (_compression, input) = rdq_envelope::io::decompressed(io::stdin().lock())?;
    let mut lines = LineReader::new(input);
    let max_line_bytes = lines.max_line_bytes();
    let mut out = io::BufWriter::new(io::stdout().lock());

    let rules = EnvelopeRules::new(RuleOptions::default())?;
    let (mut parser, mut verdict) = (JsonParser::new(), Verdict::default());
    let (mut migrator, mut migrated) = (Migrator::new(), Vec::new());
    let mut all_migrated = true;

    while let Some(line) = lines.next_line()? {
        let doc = match line.kind {
            LineKind::Blank => continue,
            LineKind::TooLong => {
                verdict.clear();
                let too_long = Diagnostic::line_too_long(line.len, max_line_bytes);
                verdict.errors.push(too_long);
                None
            }
            LineKind::Content => rules.check_line(&mut parser, line.content, &mut verdict),
        };
        // Only a valid envelope migrates: its version is known then.
        if let (Some(doc), Some(from), true) = (doc, verdict.version, verdict.is_valid()) {
            migrated.clear();
            let done = migrator.migrate(
                line.content,
                &doc,
                from,
                to,
                &mut migrated,
                &mut verdict.errors,
            )?;
            let queue = doc.root().get("queue").and_then(|q| q.as_str());
            // A migration may grow a line past its queue's size limit.
            if let Some(too_large) = rules.size_error(queue, migrated.len()) {
                verdict.errors.push(too_large);
            }
            if done == Migration::Written && verdict.is_valid() {
                out.write_all(&migrated)?;
                out.write_all(b"\n")?;
                continue;
            }
        }
        all_migrated = false;
        for d in &verdict.errors {
            eprintln!(
                "line {}: {}: {}: {}",
                line.number,
                d.path,
                d.code.as_str(),
                d.message
            );
        }
    }
    out.flush()?;
    Ok(all_migrated)
}
