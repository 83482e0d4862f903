//! `rdq-envelope stats`: a DLQ export at a glance, as aligned tables with bar charts or as JSON.

use std::io::IsTerminal;

use anyhow::bail;
use clap::{Args, ValueEnum};

use rdq_envelope::ops::{GroupBy, StatsOp};
use rdq_envelope::report::html::{made_at, write_html, Context};
use rdq_envelope::EnvelopeRules;

use super::args::{Written, OUTPUT_HEADING};
use super::colour::ColorArg;
use super::run::Run;
use super::stats_table::{write_tables, Style};
use super::{InputArgs, Outcome, OutputArgs};

#[derive(Args, Debug)]
pub struct StatsArgs {
    /// What to count the envelopes by. error_type and outcome are the last attempt's;
    /// fingerprint is the last error's, with each group's type, template, times and IDs.
    #[arg(long, value_enum, default_value_t = ByArg::Queue)]
    by: ByArg,

    /// How many error types (and, in the HTML report, fingerprints) to list.
    #[arg(long, value_name = "N", default_value_t = 10)]
    top: usize,

    #[command(flatten)]
    pub input: InputArgs,

    /// table: aligned tables with bar charts, for people; json: one object, stable for scripts;
    /// html: a self-contained triage report with charts (queues, statuses and fingerprints
    /// beside --by), to mail or attach to an incident (default: from the -o name, .txt, .json,
    /// .html or .htm, else table; another ending needs --format).
    #[arg(long, value_enum, help_heading = OUTPUT_HEADING)]
    format: Option<FormatArg>,

    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ByArg {
    Queue,
    Handler,
    Status,
    #[value(name = "error_type", alias = "error-type")]
    ErrorType,
    Outcome,
    Day,
    /// The last error's fingerprint (docs/cli.md#fingerprints).
    Fingerprint,
}

impl From<ByArg> for GroupBy {
    fn from(by: ByArg) -> Self {
        match by {
            ByArg::Queue => GroupBy::Queue,
            ByArg::Handler => GroupBy::Handler,
            ByArg::Status => GroupBy::Status,
            ByArg::ErrorType => GroupBy::ErrorType,
            ByArg::Outcome => GroupBy::Outcome,
            ByArg::Day => GroupBy::Day,
            ByArg::Fingerprint => GroupBy::Fingerprint,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum FormatArg {
    Table,
    Json,
    Html,
}

pub fn run(mut args: StatsArgs, color: ColorArg) -> anyhow::Result<Outcome> {
    args.output.written = Written::Report;
    if args.output.line_buffered {
        bail!("--line-buffered does not go with stats: the report is written once, at the end");
    }
    let format = super::format_name::pick(
        "stats",
        args.output.output.as_deref(),
        args.format,
        FormatArg::Table,
        &[
            ("txt", FormatArg::Table),
            ("json", FormatArg::Json),
            ("html", FormatArg::Html),
            ("htm", FormatArg::Html),
        ],
    )?;
    // Read before the run, so that a malformed value is refused before any input is.
    let made_at = match format {
        FormatArg::Html => report_time()?,
        FormatArg::Table | FormatArg::Json => String::new(),
    };
    let options = args.input.rule_options();
    let mut op = StatsOp::new(EnvelopeRules::new(options)?, args.by.into());
    if format == FormatArg::Html {
        // The report shows these whatever --by is, all counted in the one pass.
        op = op.with_overview(&[GroupBy::Status, GroupBy::Queue, GroupBy::Fingerprint]);
    }
    op.write_rejects = args.output.rejects.is_some();
    op.max_line_bytes = args.input.max_line_bytes;
    let colour = color.colour(args.output.output.is_none() && args.output.compress.is_none());
    // Bars fit the terminal; elsewhere (a file, a pipe) the lines stay within 100 columns.
    let width = match console::Term::stdout().size_checked() {
        Some((_, columns)) if colour || std::io::stdout().is_terminal() => usize::from(columns),
        _ => 100,
    };
    let inputs: Vec<String> = args
        .input
        .files
        .iter()
        .map(|f| f.to_string_lossy().into_owned())
        .collect();
    Run::new(&op, &args.input, &args.output)
        .then(|books, total, out| {
            if format == FormatArg::Html {
                let context = Context {
                    inputs: &inputs,
                    top: args.top,
                    made_at: &made_at,
                };
                write_html(&op.overview(&total, args.top, books), books, &context, out)?;
                return Ok(());
            }
            let report = op.report(&total, args.top, books);
            match format {
                FormatArg::Json => {
                    serde_json::to_writer(&mut *out, &report)?;
                    writeln!(out)?;
                }
                FormatArg::Table | FormatArg::Html => {
                    write_tables(&report, &Style::new(colour), width, out)?
                }
            }
            Ok(())
        })
        .execute()
}

/// When the HTML report is made: `SOURCE_DATE_EPOCH` when it is set and not empty (the
/// reproducible-builds convention, whole seconds since 1970 in UTC), so that a build or a
/// golden test can pin the page; else now.
fn report_time() -> anyhow::Result<String> {
    let pinned = std::env::var_os("SOURCE_DATE_EPOCH").filter(|v| !v.is_empty());
    let seconds = match pinned {
        Some(value) => value
            .to_str()
            .and_then(|text| text.parse::<u64>().ok())
            .filter(|&seconds| made_at(seconds).is_some())
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "SOURCE_DATE_EPOCH={}: not a time; it is whole seconds since \
                     1970-01-01T00:00:00Z (UTC), as `date +%s` prints them",
                    value.to_string_lossy()
                )
            })?,
        // A clock before 1970 is wrong; the report still says when, as 1970.
        None => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_secs()),
    };
    made_at(seconds).ok_or_else(|| anyhow::anyhow!("the clock reads past the year 9999"))
}
