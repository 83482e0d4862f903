//! Validates the envelopes of any reader (a file, or standard input; plain, gzip or zstd) and
//! prints each diagnostic with its line number and JSON pointer. Exits with 1 when a line is
//! invalid, 2 when the input cannot be read.
//!
//! ```text
//! cargo run --example validate_reader -- FILE
//! zstd -dc dlq.jsonl.zst | cargo run --example validate_reader
//! ```

use std::io::{self, Read, Write};
use std::process::ExitCode;

use rdq_envelope::framing::{LineKind, LineReader};
use rdq_envelope::{Diagnostic, EnvelopeRules, JsonParser, RuleOptions, Verdict};

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(error) => {
            eprintln!("validate_reader: {error}");
            ExitCode::from(2)
        }
    }
}

/// Whether every line of the input is valid.
fn run() -> Result<bool, Box<dyn std::error::Error>> {
    let input: Box<dyn Read> = match std::env::args_os().nth(1) {
        Some(path) => Box::new(std::fs::File::open(path)?),
        None => Box::new(io::stdin().lock()),
    };
    // Compression is told from the first bytes, never from a file name.
    let (_compression, input) = rdq_envelope::io::decompressed(input)?;
    let mut lines = LineReader::new(input);
    let max_line_bytes = lines.max_line_bytes();

    // Built once; the parser and the verdict are reused from line to line.
    let rules = EnvelopeRules::new(RuleOptions::default())?;
    let (mut parser, mut verdict) = (JsonParser::new(), Verdict::default());
    let mut out = io::BufWriter::new(io::stdout().lock());
    let mut all_valid = true;

    while let Some(line) = lines.next_line()? {
        match line.kind {
            LineKind::Blank => continue,
            // The reader kept only the start of a line over its cap: judged without parsing.
            LineKind::TooLong => {
                verdict.clear();
                let too_long = Diagnostic::line_too_long(line.len, max_line_bytes);
                verdict.errors.push(too_long);
            }
            LineKind::Content => {
                rules.check_line(&mut parser, line.content, &mut verdict);
            }
        }
        all_valid &= verdict.is_valid();
        for (severity, d) in verdict
            .errors
            .iter()
            .map(|d| ("error", d))
            .chain(verdict.warnings.iter().map(|d| ("warning", d)))
        {
            // An empty pointer names the whole line.
            let pointer = if d.path.is_empty() { "<line>" } else { &d.path };
            writeln!(
                out,
                "{}: {pointer}: {severity}: {}: {}",
                line.number,
                d.code.as_str(),
                d.message
            )?;
        }
    }
    out.flush()?;
    Ok(all_valid)
}
