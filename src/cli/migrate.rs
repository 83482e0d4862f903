//! `rdq-envelope migrate`: every valid line written as the target envelope_version.

use anyhow::bail;
use clap::Args;

use rdq_envelope::batch::{Command, MigrateConfig, MigrateFrom};
use rdq_envelope::chokaq::{ChokaqOptions, Table};
use rdq_envelope::envelope::{NEWEST_VERSION, SUPPORTED_VERSIONS};
use rdq_envelope::ops::{MigrateOp, MigrateSource};
use rdq_envelope::EnvelopeRules;

use super::args::{Written, OUTPUT_HEADING};
use super::run::Run;
use super::{InputArgs, Outcome, OutputArgs, TableArg};

#[derive(Args, Debug)]
pub struct MigrateArgs {
    /// The envelope_version to write (default: the newest supported).
    #[arg(long, value_name = "N", default_value_t = NEWEST_VERSION)]
    to: u32,

    /// What the input lines are: rdq envelopes, or ChokaQ table rows (one JSON object per
    /// row, keyed by column name; docs/chokaq.md).
    #[arg(long, value_enum, value_name = "KIND", default_value_t = From::Rdq)]
    from: From,

    /// The ChokaQ table of every row (default: told per row from FailureReason,
    /// FinishedAtUtc or Status).
    #[arg(long, value_enum, value_name = "TABLE")]
    chokaq_table: Option<TableArg>,

    /// Seconds after a running ChokaQ job's last heartbeat at which its lease expires (default
    /// with --from chokaq: 600).
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_if("from", "chokaq", "600")
    )]
    chokaq_zombie_timeout: Option<u32>,

    /// ChokaQ's payload limit in UTF-8 bytes: a payload over it gets the CHOKAQ_LIMIT warning
    /// (default with --from chokaq: 1000000).
    #[arg(long, value_name = "N", default_value_if("from", "chokaq", "1000000"))]
    chokaq_max_payload_bytes: Option<u64>,

    /// Print the warnings of the lines written (ID_TIME_MISMATCH, CREATED_AFTER_START) on
    /// standard error, in the human form of validate.
    #[arg(long)]
    warnings: bool,

    #[command(flatten)]
    pub input: InputArgs,

    /// Write the warnings of the lines written as JSON Lines, one record per line that has
    /// warnings (the record of validate --format json, with "errors": []).
    #[arg(long, value_name = "FILE", help_heading = OUTPUT_HEADING)]
    warnings_out: Option<std::path::PathBuf>,

    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum From {
    Rdq,
    Chokaq,
}

pub fn run(mut args: MigrateArgs) -> anyhow::Result<Outcome> {
    args.output.written = Written::Envelopes;
    let op = op(&args)?;
    Run::new(&op, &args.input, &args.output)
        .secondary(args.warnings_out.as_deref().map(|p| ("--warnings-out", p)))
        .messages(args.warnings)
        .execute()
}

/// What `batch migrate` runs on every shard: the migrated lines are its output, with rejects.
pub fn shard_op(args: &MigrateArgs) -> anyhow::Result<MigrateOp> {
    if args.warnings || args.warnings_out.is_some() {
        bail!("batch migrate: --warnings and --warnings-out are not per shard (the warnings are counted in each shard's summary)");
    }
    let mut op = op(args)?;
    op.write_rejects = true;
    Ok(op)
}

/// What `batch migrate` records of these arguments: the target and the source kind, with the
/// ChokaQ options as they apply (defaults included).
pub fn shard_config(args: &MigrateArgs) -> Command {
    let defaults = ChokaqOptions::default();
    Command::Migrate(MigrateConfig {
        to: args.to,
        from: match args.from {
            From::Rdq => MigrateFrom::Rdq,
            From::Chokaq => MigrateFrom::Chokaq {
                chokaq_table: args.chokaq_table.map(Table::from),
                chokaq_zombie_timeout: args
                    .chokaq_zombie_timeout
                    .unwrap_or(defaults.zombie_timeout_s),
                chokaq_max_payload_bytes: args
                    .chokaq_max_payload_bytes
                    .unwrap_or(defaults.max_payload_bytes),
            },
        },
    })
}

fn op(args: &MigrateArgs) -> anyhow::Result<MigrateOp> {
    if !SUPPORTED_VERSIONS.contains(&args.to) {
        bail!(
            "--to {}: supported versions are {}",
            args.to,
            rdq_envelope::envelope::supported_versions()
        );
    }
    let options = args.input.rule_options();
    let source = match args.from {
        From::Rdq => {
            // A flag that would do nothing is a usage error. The ChokaQ flags have their
            // defaults only with --from chokaq, so here they are set exactly when given.
            for (flag, given) in [
                ("--chokaq-table", args.chokaq_table.is_some()),
                (
                    "--chokaq-zombie-timeout",
                    args.chokaq_zombie_timeout.is_some(),
                ),
                (
                    "--chokaq-max-payload-bytes",
                    args.chokaq_max_payload_bytes.is_some(),
                ),
            ] {
                if given {
                    bail!("{flag} goes with --from chokaq");
                }
            }
            MigrateSource::Rdq
        }
        From::Chokaq => {
            let defaults = ChokaqOptions::default();
            MigrateSource::Chokaq({
                let mut o = ChokaqOptions::default();
                o.table = args.chokaq_table.map(Table::from);
                o.zombie_timeout_s = args
                    .chokaq_zombie_timeout
                    .unwrap_or(defaults.zombie_timeout_s);
                o.max_payload_bytes = args
                    .chokaq_max_payload_bytes
                    .unwrap_or(defaults.max_payload_bytes);
                o.max_line_bytes = args.input.max_line_bytes;
                o
            })
        }
    };
    let mut op = MigrateOp::new(EnvelopeRules::new(options)?, source, args.to)?;
    op.report_warnings = args.warnings;
    op.warnings_out = args.warnings_out.is_some();
    op.write_rejects = args.output.rejects.is_some();
    op.max_line_bytes = args.input.max_line_bytes;
    Ok(op)
}
