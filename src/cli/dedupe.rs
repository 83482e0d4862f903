//! `rdq-envelope dedupe`: one copy per `id`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use rdq_envelope::io::Rereadable;
use rdq_envelope::ops::{DedupeOp, DedupeScan};
use rdq_envelope::pipeline::{self, Outputs};
use rdq_envelope::EnvelopeRules;

use super::args::OUTPUT_HEADING;
use super::inputs::{self, sources};
use super::run::{self, Run};
use super::{InputArgs, Outcome, OutputArgs};

#[derive(Args, Debug)]
pub struct DedupeArgs {
    /// Which copy of an ID to keep: the one with the most history (greatest redrive_count, then
    /// most attempts, then latest last finished_at, then the later line), or the first.
    #[arg(long, value_enum, default_value = "newest", value_name = "WHICH")]
    keep: Keep,

    #[command(flatten)]
    pub input: InputArgs,

    /// Write the dropped copies to FILE.
    #[arg(long, value_name = "FILE", help_heading = OUTPUT_HEADING)]
    dropped: Option<PathBuf>,

    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Keep {
    Newest,
    First,
}

pub fn run(args: DedupeArgs) -> anyhow::Result<Outcome> {
    let options = args.input.rule_options();
    let rules = || EnvelopeRules::new(options.clone());
    match args.keep {
        Keep::First => write(DedupeOp::keep_first(rules()?), &args),
        Keep::Newest => {
            // The input is read twice: what cannot be (standard input, a pipe, a FIFO, a
            // device) is kept in a temporary file the first time, removed at the end or by the
            // signal handler; a regular file that changes between the reads is refused.
            let dropped = args.dropped.as_deref().map(|p| ("--dropped", p));
            run::check_usage(&args.input, &args.output, dropped)?;
            inputs::say_if_reading_a_terminal(&args.input.files, args.output.quiet);
            let inputs = Rereadable::new(sources(&args.input.files))?;
            let scan = DedupeScan::new(rules()?, args.input.max_line_bytes);
            let options = args.input.pipeline_options()?;
            let none = Outputs::none();
            let (_, chosen) = pipeline::run(inputs.sources()?, &scan, options, none, None)?;
            for path in inputs.regular_files() {
                rdq_envelope::io::between_reads(path);
            }
            let mut op = DedupeOp::keep_chosen(rules()?, chosen.kept());
            configure(&mut op, &args);
            // Checked before any output is committed: the choice of the first read does
            // not hold for another file.
            Run::new(&op, &args.input, &args.output)
                .reading(inputs.sources()?)
                .secondary(dropped)
                .then(|_, _, _| Ok(inputs.check_unchanged()?))
                .execute()
        }
    }
}

/// The only pass of `--keep first`: kept copies out, dropped ones to `--dropped`.
fn write(mut op: DedupeOp, args: &DedupeArgs) -> anyhow::Result<Outcome> {
    configure(&mut op, args);
    let dropped = args.dropped.as_deref().map(|p| ("--dropped", p));
    Run::new(&op, &args.input, &args.output)
        .secondary(dropped)
        .execute()
}

fn configure(op: &mut DedupeOp, args: &DedupeArgs) {
    op.write_dropped = args.dropped.is_some();
    op.write_rejects = args.output.rejects.is_some();
    op.max_line_bytes = args.input.max_line_bytes;
}
