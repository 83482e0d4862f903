//! Judges every line of an export with a `Checker` (the single pass, else the tape, as the
//! commands do) and reads each valid envelope's fields in place through its `EnvelopeRef`;
//! prints each invalid line's diagnostics. (docs/library.md)
//!
//! ```text
//! cargo run --example read_in_place -- samples/dlq-sample.jsonl.zst
//! ```

use rdq_envelope::envelope::Checker;
use rdq_envelope::framing::{LineKind, LineReader};
use rdq_envelope::{EnvelopeRules, RuleOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let input = std::fs::File::open(std::env::args_os().nth(1).ok_or("name an export to read")?)?;
    let (_, input) = rdq_envelope::io::decompressed(input)?;
    let mut reader = LineReader::new(input);
    let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    while let Some(line) = reader.next_line()? {
        if line.kind == LineKind::Blank {
            continue;
        }
        let checked = checker.check_line(&line);
        match checked.envelope() {
            Some(envelope) => println!(
                "{} {} {}",
                envelope.id(),
                envelope.queue(),
                envelope.status()
            ),
            None => {
                for d in &checked.verdict().errors {
                    println!("{}: {} {} {}", line.number, d.path, d.code, d.message);
                }
            }
        }
    }
    Ok(())
}
