//! `rdq-envelope redrive`: DEAD envelopes turned into resubmittable ones.

use std::time::{SystemTime, UNIX_EPOCH};

use clap::Args;

use rdq_envelope::ops::RedriveOp;
use rdq_envelope::EnvelopeRules;

use super::time::{self, envelope_form};
use super::{run, InputArgs, Outcome, OutputArgs};

#[derive(Args, Debug)]
pub struct RedriveArgs {
    #[command(flatten)]
    input: InputArgs,

    #[command(flatten)]
    output: OutputArgs,

    /// When the redriven tasks are due again (next_attempt_at): 2024-05-01T12:00:00.000Z,
    /// 2024-05-01 (midnight UTC), RFC 3339 with any offset, or 2h, 3d, 90m (before now).
    #[arg(long, value_name = "TS", conflicts_with = "now")]
    at: Option<String>,

    /// They are due now: the time the run starts (the default).
    #[arg(long)]
    now: bool,
}

pub fn run(args: RedriveArgs) -> anyhow::Result<Outcome> {
    let at = match &args.at {
        Some(at) => envelope_form(time::parse("--at", at, jiff::Timestamp::now())?),
        None => {
            let ms = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64);
            envelope_form(ms)
        }
    };
    let options = args.input.rule_options();
    let mut op = RedriveOp::new(EnvelopeRules::new(options)?, &at)
        .map_err(|invalid| anyhow::anyhow!("--at {invalid}"))?;
    op.write_rejects = args.output.rejects.is_some();
    op.max_line_bytes = args.input.max_line_bytes;
    run::run(&op, &args.input, &args.output, None, false)
}
