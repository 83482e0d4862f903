//! `rdq-envelope sample`: a uniform random sample of valid lines.

use clap::{Args, ValueEnum};

use rdq_envelope::ops::SampleOp;
use rdq_envelope::EnvelopeRules;

use super::run::Run;
use super::{InputArgs, Outcome, OutputArgs};

#[derive(Args, Debug)]
pub struct SampleArgs {
    /// How many lines to keep (per queue with --by queue).
    #[arg(value_name = "N", value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    size: u64,

    /// The seed of the random choice: the same seed and input give the same sample, for any
    /// -j. Without it, a seed is drawn and printed on standard error.
    #[arg(long, value_name = "S")]
    seed: Option<u64>,

    /// Sample N lines of every queue rather than N in all.
    #[arg(long, value_enum, value_name = "FIELD")]
    by: Option<SampleBy>,

    #[command(flatten)]
    pub input: InputArgs,

    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SampleBy {
    Queue,
}

pub fn run(args: SampleArgs) -> anyhow::Result<Outcome> {
    let seed = match args.seed {
        Some(seed) => seed,
        None => {
            let seed = drawn_seed();
            if !args.output.quiet {
                super::say(format_args!(
                    "sample seed {seed} (--seed {seed} repeats this sample)"
                ))?;
            }
            seed
        }
    };
    let rules = EnvelopeRules::new(args.input.rule_options())?;
    let size = usize::try_from(args.size)?;
    let mut op = SampleOp::new(rules, size, args.by.is_some(), seed);
    op.write_rejects = args.output.rejects.is_some();
    op.max_line_bytes = args.input.max_line_bytes;
    Run::new(&op, &args.input, &args.output)
        .then(|_, total, out| {
            // Written when the whole input is read: only then is the sample known.
            for line in total.into_sample() {
                out.write_all(&line)?;
                out.write_all(b"\n")?;
            }
            Ok(())
        })
        .execute()
}

/// A seed from the clock and the process, for a run without --seed.
fn drawn_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    nanos ^ u64::from(std::process::id()).rotate_left(32)
}
