//! `rdq-envelope migrate`: every valid line written as the target envelope_version.

use anyhow::bail;
use clap::Args;

use rdq_envelope::envelope::{NEWEST_VERSION, SUPPORTED_VERSIONS};
use rdq_envelope::ops::MigrateOp;
use rdq_envelope::{EnvelopeRules, RuleOptions};

use super::{run, InputArgs, Outcome, OutputArgs};

#[derive(Args, Debug)]
pub struct MigrateArgs {
    #[command(flatten)]
    input: InputArgs,

    #[command(flatten)]
    output: OutputArgs,

    /// The envelope_version to write (default: the newest supported).
    #[arg(long, value_name = "N", default_value_t = NEWEST_VERSION)]
    to: u32,

    /// Print the warnings of the lines written (ID_TIME_MISMATCH, CREATED_AFTER_START) on
    /// standard error, in the human form of validate.
    #[arg(long)]
    warnings: bool,

    /// Write the warnings of the lines written as JSON Lines, one record per line that has
    /// warnings (the record of validate --format json, with "errors": []).
    #[arg(long, value_name = "FILE")]
    warnings_out: Option<std::path::PathBuf>,
}

pub fn run(args: MigrateArgs) -> anyhow::Result<Outcome> {
    if !SUPPORTED_VERSIONS.contains(&args.to) {
        bail!("--to {}: supported versions are 1 and 2", args.to);
    }
    let options = RuleOptions {
        max_envelope_bytes: args.input.max_envelope_bytes,
        queue_limits: args.input.queue_limit.iter().cloned().collect(),
        ..RuleOptions::default()
    };
    let op = MigrateOp {
        rules: EnvelopeRules::new(options)?,
        to: args.to,
        report_warnings: args.warnings,
        warnings_out: args.warnings_out.is_some(),
        write_rejects: args.output.rejects.is_some(),
        max_line_bytes: args.input.max_line_bytes,
    };
    run::run(
        &op,
        &args.input,
        &args.output,
        args.warnings_out.as_deref(),
        args.warnings,
    )
}
