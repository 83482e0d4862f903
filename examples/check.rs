//! The library end to end, until the `validate` command lands: frames each input (files or
//! standard input, zstd/gzip detected), judges every line, and prints one row per broken rule
//! as `SOURCE:LINE: POINTER: CODE: message`, then the counts on standard error.
//! Exit status: 0 when no line was rejected, 1 when some were, 2 when an input failed.
//!
//! ```text
//! cargo run --release --example check -- samples/dlq-sample.jsonl.zst
//! ```

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use rdq_envelope::framing::{LineKind, LineReader};
use rdq_envelope::{Diagnostic, EnvelopeRules, JsonParser, RuleOptions, Verdict};

#[derive(Default)]
struct Counts {
    lines: u64,
    blank: u64,
    valid: u64,
    rejected: u64,
}

fn main() -> ExitCode {
    let mut paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        paths.push("-".into());
    }
    let rules = EnvelopeRules::new(RuleOptions::default()).expect("default options are valid");
    let mut parser = JsonParser::new();
    let mut verdict = Verdict::default();
    let mut counts = Counts::default();
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    for path in &paths {
        let (source, input): (&str, Box<dyn io::Read>) = if path == "-" {
            ("<stdin>", Box::new(io::stdin().lock()))
        } else {
            match std::fs::File::open(path) {
                Ok(f) => (path.as_str(), Box::new(f)),
                Err(e) => {
                    eprintln!("rdq-envelope: {path}: {e}");
                    return ExitCode::from(2);
                }
            }
        };
        let result = rdq_envelope::io::decompressed(input).and_then(|(_, input)| {
            let mut reader = LineReader::new(input);
            let cap = reader.max_line_bytes();
            loop {
                let line = match reader.next_line() {
                    Ok(Some(line)) => line,
                    Ok(None) => return Ok(()),
                    Err(e) => {
                        let at = reader.offset();
                        return Err(io::Error::new(e.kind(), format!("{e} (after byte {at})")));
                    }
                };
                counts.lines += 1;
                match line.kind {
                    LineKind::Blank => {
                        counts.blank += 1;
                        continue;
                    }
                    LineKind::TooLong => {
                        verdict.clear();
                        let d = Diagnostic::line_too_long(line.len, cap);
                        verdict.errors.push(d);
                    }
                    LineKind::Content => {
                        rules.check_line(&mut parser, line.content, &mut verdict);
                    }
                }
                if verdict.is_valid() {
                    counts.valid += 1;
                    continue;
                }
                counts.rejected += 1;
                for d in &verdict.errors {
                    let pointer = if d.path.is_empty() { "<line>" } else { &d.path };
                    writeln!(
                        out,
                        "{source}:{}: {pointer}: {}: {}",
                        line.number, d.code, d.message
                    )?;
                }
            }
        });
        if let Err(e) = result.and_then(|()| out.flush()) {
            if e.kind() == io::ErrorKind::BrokenPipe {
                return ExitCode::SUCCESS;
            }
            eprintln!("rdq-envelope: {source}: {e}");
            return ExitCode::from(2);
        }
    }
    eprintln!(
        "{} lines: {} valid, {} rejected, {} blank",
        counts.lines, counts.valid, counts.rejected, counts.blank
    );
    ExitCode::from(u8::from(counts.rejected > 0))
}
