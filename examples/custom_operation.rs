//! Runs the parallel pipeline with an operation of your own: for each queue, how many valid
//! envelopes it holds and their mean `attempt_count`. The input is a file or standard input
//! (plain, gzip or zstd); the lines are judged on every core and added up in input order.
//!
//! ```text
//! cargo run --example custom_operation -- FILE
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;

use rdq_envelope::envelope::Checker;
use rdq_envelope::pipeline::{
    self, Action, ChunkOutput, LineOperation, Outputs, PipelineOptions, Source, SourceLine,
};
use rdq_envelope::{EnvelopeRules, RuleOptions};

/// Envelopes and the sum of their `attempt_count`, by queue.
type ByQueue = BTreeMap<String, (u64, u64)>;

/// The operation: shared by every worker, so it holds only what they read.
struct QueueAttempts {
    rules: EnvelopeRules,
    /// The pipeline's reader cap: a line over it is `LINE_TOO_LONG`.
    max_line_bytes: usize,
}

impl LineOperation for QueueAttempts {
    /// The outputs it writes (a buffer each in `ChunkOutput`, a sink each in `Outputs`): none,
    /// what it adds up is its result. An operation that writes lines declares 1 and writes
    /// them into `out.buffer(0)`.
    const OUTPUTS: usize = 0;
    /// Each worker thread judges lines with its own checker.
    type Worker = Checker;
    /// What one chunk of lines adds up to.
    type Tally = ByQueue;
    /// What the whole run adds up to: the writer's thread owns it, so it needs no lock.
    type Total = ByQueue;

    fn total(&self) -> ByQueue {
        ByQueue::new()
    }

    fn worker(&self) -> Checker {
        Checker::new(self.rules.clone()).with_max_line_bytes(self.max_line_bytes)
    }

    fn apply(
        &self,
        checker: &mut Checker,
        line: SourceLine<'_>,
        out: &mut ChunkOutput<ByQueue>,
    ) -> Action {
        let checked = checker.check_line(&line.line);
        let Some(envelope) = checked.envelope() else {
            // The run's books count the codes of the rejected lines.
            out.summary.tally_errors(&checked.verdict().errors);
            return Action::Reject;
        };
        // The queue is read in place; it is copied only the first time a chunk sees it.
        let queue = envelope.queue();
        let entry = match out.tally.get_mut(queue) {
            Some(entry) => entry,
            None => out.tally.entry(queue.to_owned()).or_default(),
        };
        entry.0 += 1;
        entry.1 += envelope.attempt_count();
        Action::Emit
    }

    /// Adds a chunk's tally to the run's total, on the writer's thread, in input order.
    fn merge(&self, total: &mut ByQueue, tally: &mut ByQueue) {
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
    };
    let outputs = Outputs::none();
    let (books, total) = pipeline::run(vec![source], &op, options, outputs, None)?;

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
