//! `rdq-envelope dedupe`: one copy per `id`.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, ValueEnum};

use rdq_envelope::io::SpillFile;
use rdq_envelope::ops::{DedupeOp, DedupeScan};
use rdq_envelope::pipeline::{self, Outputs, PipelineOptions};
use rdq_envelope::EnvelopeRules;

use super::run::{self, sources};
use super::{InputArgs, Outcome, OutputArgs};

#[derive(Args, Debug)]
pub struct DedupeArgs {
    #[command(flatten)]
    input: InputArgs,

    #[command(flatten)]
    output: OutputArgs,

    /// Which copy of an ID to keep: the one with the most history (greatest redrive_count, then
    /// most attempts, then latest last finished_at, then the later line), or the first.
    #[arg(long, value_enum, default_value = "newest", value_name = "WHICH")]
    keep: Keep,

    /// Write the dropped copies to FILE.
    #[arg(long, value_name = "FILE")]
    dropped: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Keep {
    Newest,
    First,
}

pub fn run(mut args: DedupeArgs) -> anyhow::Result<Outcome> {
    let options = args.input.rule_options();
    let rules = || EnvelopeRules::new(options.clone());
    match args.keep {
        Keep::First => write(DedupeOp::keep_first(rules()?), &args),
        Keep::Newest => {
            // Standard input is read twice, so it is kept in a file the first time (removed at
            // the end, or by the signal handler).
            let spill = spill_stdin(&mut args.input)?;
            let scan = DedupeScan::new(rules()?, args.input.max_line_bytes);
            let mut options = PipelineOptions::default();
            options.jobs = args.input.jobs()?;
            options.max_line_bytes = args.input.max_line_bytes;
            let none = Outputs {
                primary: None,
                secondary: None,
                rejects: None,
                messages: None,
            };
            pipeline::run(sources(&args.input.files), &scan, options, none, None)?;
            let op = DedupeOp::keep_chosen(rules()?, scan.kept());
            let done = write(op, &args);
            drop(spill);
            done
        }
    }
}

/// The second pass (or the only one): kept copies out, dropped ones to `--dropped`.
fn write(mut op: DedupeOp, args: &DedupeArgs) -> anyhow::Result<Outcome> {
    op.write_dropped = args.dropped.is_some();
    op.write_rejects = args.output.rejects.is_some();
    op.max_line_bytes = args.input.max_line_bytes;
    let dropped = args.dropped.as_deref().map(|p| ("--dropped", p));
    run::run(&op, &args.input, &args.output, dropped, false)
}

/// Copies standard input, when it is among the inputs, to a temporary file that replaces it.
fn spill_stdin(input: &mut InputArgs) -> anyhow::Result<Option<SpillFile>> {
    let is_stdin = |p: &PathBuf| p.as_os_str() == "-";
    if !input.files.is_empty() && !input.files.iter().any(is_stdin) {
        return Ok(None);
    }
    let mut spill =
        SpillFile::create().context("cannot create a temporary file for standard input")?;
    std::io::copy(&mut std::io::stdin().lock(), spill.file()).with_context(|| {
        let path = spill.path().display();
        format!("cannot copy standard input to the temporary file {path} (TMPDIR)")
    })?;
    if input.files.is_empty() {
        input.files.push(spill.path().to_path_buf());
    }
    for path in input.files.iter_mut().filter(|p| is_stdin(p)) {
        *path = spill.path().to_path_buf();
    }
    Ok(Some(spill))
}
