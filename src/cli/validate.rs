//! `rdq-envelope validate`: every line against docs/envelope.md, every broken rule reported.

use anyhow::bail;
use clap::{Args, ValueEnum};

use rdq_envelope::batch::{Command, ValidateConfig};
use rdq_envelope::ops::{ReportFormat, ValidateOp};
use rdq_envelope::EnvelopeRules;

use super::args::{Written, OUTPUT_HEADING};
use super::colour::ColorArg;
use super::run::Run;
use super::{InputArgs, Outcome, OutputArgs};

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// Judge lines as the submit subset: what a client sends before the server assigns
    /// identity and state (docs/envelope.md#the-submit-subset).
    #[arg(long)]
    submit: bool,

    /// Reject lines of any other envelope_version (UNSUPPORTED_VERSION). Not with --submit.
    #[arg(long, value_name = "N")]
    require_version: Option<u32>,

    /// Also report the warnings (ID_TIME_MISMATCH, CREATED_AFTER_START), valid lines included.
    #[arg(long)]
    warnings: bool,

    #[command(flatten)]
    pub input: InputArgs,

    /// How diagnostics are written: `SOURCE:LINE: POINTER: CODE: message` rows, or one JSON
    /// object per invalid line (default: from the -o name, .txt, .log, .json, .jsonl or
    /// .ndjson, else human; another ending needs --format).
    #[arg(long, value_enum, help_heading = OUTPUT_HEADING)]
    format: Option<Format>,

    /// Also write the valid lines, byte-identical to the input.
    #[arg(long, value_name = "FILE", help_heading = OUTPUT_HEADING)]
    valid_out: Option<std::path::PathBuf>,

    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Human,
    Json,
}

pub fn run(mut args: ValidateArgs, color: ColorArg) -> anyhow::Result<Outcome> {
    args.output.written = Written::Diagnostics;
    let mut op = op(&args)?;
    let to_stdout = args.output.output.is_none() && args.output.compress.is_none();
    op.colour = op.format == ReportFormat::Human && color.colour(to_stdout);
    Run::new(&op, &args.input, &args.output)
        .secondary(args.valid_out.as_deref().map(|p| ("--valid-out", p)))
        .codes_on_a_terminal()
        .execute()
}

/// What `batch validate` runs on every shard: the valid lines are the shard's output (the
/// secondary output of the op) and the rejects hold every diagnostic, so the rows of the
/// primary output are not written anywhere.
pub fn shard_op(args: &ValidateArgs) -> anyhow::Result<ValidateOp> {
    if args.valid_out.is_some() {
        bail!("batch validate: --valid-out: the valid lines of each shard are its output already");
    }
    if args.warnings {
        bail!("batch validate: --warnings: diagnostics are in each shard's rejects file");
    }
    let mut op = op(args)?;
    op.keep_valid = true;
    op.write_rejects = true;
    Ok(op)
}

/// What `batch validate` records of these arguments: the options that decide a shard's outputs
/// (`--format` writes only the primary output, which a shard does not have).
pub fn shard_config(args: &ValidateArgs) -> Command {
    Command::Validate(ValidateConfig {
        submit: args.submit,
        require_version: args.require_version,
    })
}

fn op(args: &ValidateArgs) -> anyhow::Result<ValidateOp> {
    if args.submit && args.require_version.is_some() {
        bail!(
            "--require-version does not go with --submit: a submitted line has no envelope_version"
        );
    }
    if args.submit && args.warnings {
        // Both warnings read fields the server assigns, which a submit line may not carry.
        bail!("--warnings does not go with --submit: a submit line has no id, created_at or attempts to warn about");
    }
    let mut options = args.input.rule_options();
    options.submit = args.submit;
    options.require_version = args.require_version;
    options.warnings = true;
    let mut op = ValidateOp::new(EnvelopeRules::new(options)?);
    let format = super::format_name::pick(
        "validate",
        args.output.output.as_deref(),
        args.format,
        Format::Human,
        &[
            ("txt", Format::Human),
            ("log", Format::Human),
            ("json", Format::Json),
            ("jsonl", Format::Json),
            ("ndjson", Format::Json),
        ],
    )?;
    op.format = match format {
        Format::Human => ReportFormat::Human,
        Format::Json => ReportFormat::Json,
    };
    op.report_warnings = args.warnings;
    op.keep_valid = args.valid_out.is_some();
    op.write_rejects = args.output.rejects.is_some();
    op.max_line_bytes = args.input.max_line_bytes;
    Ok(op)
}
