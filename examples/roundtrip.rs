//! Reads JSON Lines on standard input and writes each valid line back through the owned
//! `Envelope` on standard output (in the canonical form: a canonical line comes out byte for
//! byte); each invalid line's codes go to standard error with its line number. Exits with 1
//! when a line was invalid, 2 when the input cannot be read.
//!
//! ```text
//! rdq-envelope gen -n 1000 | cargo run --example roundtrip > same.jsonl
//! ```

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use rdq_envelope::envelope::Checker;
use rdq_envelope::framing::{LineKind, LineReader};
use rdq_envelope::{EnvelopeRules, RuleOptions};

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("roundtrip: {e}");
            ExitCode::from(2)
        }
    }
}

fn run() -> io::Result<bool> {
    let rules = EnvelopeRules::new(RuleOptions::default()).map_err(io::Error::other)?;
    let mut checker = Checker::new(rules);
    let mut lines = LineReader::new(io::stdin().lock());
    let mut out = BufWriter::new(io::stdout().lock());
    let mut errors = io::stderr().lock();
    let mut written = Vec::new();
    let mut all_valid = true;
    while let Some(line) = lines.next_line()? {
        if line.kind == LineKind::Blank {
            continue;
        }
        let checked = checker.check_line(&line);
        match checked.envelope() {
            Some(view) => {
                written.clear();
                view.to_owned().write_vec(&mut written);
                out.write_all(&written)?;
            }
            None => {
                all_valid = false;
                let codes: Vec<&str> = checked
                    .verdict()
                    .errors
                    .iter()
                    .map(|d| d.code.as_str())
                    .collect();
                writeln!(errors, "{}: {}", line.number, codes.join(" "))?;
            }
        }
    }
    out.flush()?;
    Ok(all_valid)
}
