//! Runs the parallel pipeline with an operation of your own: for each queue, how many valid
//! envelopes it holds and their mean `attempt_count`. The input is a file or standard input
//! (plain, gzip or zstd); the lines are judged on every core and added up in input order.
//!
//! ```text
//! cargo run --example custom_operation -- FILE
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use rdq_envelope::framing::LineKind;
use rdq_envelope::json::Document;
use rdq_envelope::pipeline::{
    self, Action, ChunkOutput, LineOperation, Outputs, PipelineOptions, Source, SourceLine,
};
use rdq_envelope::{Diagnostic, EnvelopeRules, JsonParser, RuleOptions, Verdict};

/// Envelopes and the sum of their `attempt_count`, by queue.
type ByQueue = BTreeMap<String, (u64, u64)>;

/// The operation: shared by every worker, so it holds only what they read.
struct QueueAttempts {
    rules: EnvelopeRules,
    /// The pipeline's reader cap: a line over it is `LINE_TOO_LONG`.
    max_line_bytes: usize,
    /// The run's total, which the pipeline's writer adds each chunk's tally to.
    total: Mutex<ByQueue>,
}

/// What a valid envelope tells this operation: its queue and its `attempt_count`.
fn queue_and_attempts<'d>(doc: &'d Document<'_>) -> Option<(&'d str, u64)> {
    let root = doc.root();
    let queue = root.get("queue")?.as_str()?;
    let attempts = u64::try_from(root.get("attempt_count")?.as_integer()?).ok()?;
    Some((queue, attempts))
}

impl LineOperation for QueueAttempts {
    /// Each worker thread parses and judges with its own parser and verdict.
    type Worker = (JsonParser, Verdict);
    /// What one chunk of lines adds up to.
    type Tally = ByQueue;

    fn worker(&self) -> Self::Worker {
        (JsonParser::new(), Verdict::default())
    }

    fn apply(
        &self,
        (parser, verdict): &mut Self::Worker,
        line: SourceLine<'_>,
        out: &mut ChunkOutput<ByQueue>,
    ) -> Action {
        let line = line.line;
        let doc = if line.kind == LineKind::TooLong {
            verdict.clear();
            let too_long = Diagnostic::line_too_long(line.len, self.max_line_bytes);
            verdict.errors.push(too_long);
            None
        } else {
            self.rules.check_line(parser, line.content, verdict)
        };
        match doc
            .as_ref()
            .filter(|_| verdict.is_valid())
            .and_then(queue_and_attempts)
        {
            Some((queue, attempts)) => {
                let entry = out.tally.entry(queue.to_owned()).or_default();
                entry.0 += 1;
                entry.1 += attempts;
                Action::Emit
            }
            None => {
                // The run's books count the codes of the rejected lines.
                out.summary.tally_errors(&verdict.errors);
                Action::Reject
            }
        }
    }

    fn merge_tally(&self, tally: &mut ByQueue) {
        let mut total = self
            .total
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        for (queue, (envelopes, attempts)) in std::mem::take(tally) {
            let entry = total.entry(queue).or_default();
            entry.0 += envelopes;
            entry.1 += attempts;
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let source = match std::env::args_os().nth(1) {
        Some(path) => Source::Path(PathBuf::from(path)),
        None => Source::Stdin,
    };
    let options = PipelineOptions::default();
    let op = QueueAttempts {
        rules: EnvelopeRules::new(RuleOptions::default())?,
        max_line_bytes: options.max_line_bytes,
        total: Mutex::default(),
    };
    let outputs = Outputs {
        primary: None,
        secondary: None,
        rejects: None,
        messages: None,
    };
    let books = pipeline::run(vec![source], &op, options, outputs, None)?;

    let total = op
        .total
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    for (queue, (envelopes, attempts)) in &total {
        let mean = *attempts as f64 / *envelopes as f64;
        println!("{queue}\t{envelopes} envelopes\tmean attempt_count {mean:.2}");
    }
    println!(
        "{} lines, {} valid, {} rejected",
        books.lines, books.emitted, books.rejected
    );
    for (code, n) in &books.by_code {
        println!("  {code}: {n}");
    }
    Ok(())
}
