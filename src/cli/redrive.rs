//! `rdq-envelope redrive`: DEAD envelopes turned into resubmittable ones, when, where and how
//! many at a time the operator says.

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context};
use clap::Args;

use rdq_envelope::ops::{Pacing, RedriveOp, RedriveReport};
use rdq_envelope::pipeline::Summary;
use rdq_envelope::report::noun;
use rdq_envelope::EnvelopeRules;

use super::args::Written;
use super::run::Run;
use super::time::{self, envelope_form};
use super::{InputArgs, Outcome, OutputArgs};

#[derive(Args, Debug)]
pub struct RedriveArgs {
    /// When the redriven tasks are due again (next_attempt_at), or with --rate or --spread the
    /// first may be: 2024-05-01T12:00:00.000Z, 2024-05-01 (midnight UTC), RFC 3339 with any
    /// offset, or 2h, 3d, 90m (before now).
    #[arg(long, value_name = "TS", conflicts_with = "now")]
    at: Option<String>,

    /// They are due now: the time the run starts (the default).
    #[arg(long)]
    now: bool,

    /// Send the redriven tasks to this queue (its size limit applies).
    #[arg(long, value_name = "NAME")]
    queue: Option<String>,

    /// At most N tasks due per second, minute or hour (N/s, N/m, N/h), in input order.
    #[arg(long, value_name = "N/UNIT", conflicts_with = "spread")]
    rate: Option<String>,

    /// Spread the due times over this long (90s, 30m, 2h, 1d), each task's from its ID.
    #[arg(long, value_name = "DURATION")]
    spread: Option<String>,

    /// Reject with REDRIVE_LIMIT a task already redriven N times or more.
    #[arg(long, value_name = "N")]
    max_redrives: Option<u64>,

    /// Write nothing: print what would be redriven (per queue, when) and rejected.
    #[arg(long)]
    dry_run: bool,

    #[command(flatten)]
    pub input: InputArgs,

    #[command(flatten)]
    output: OutputArgs,
}

pub fn run(mut args: RedriveArgs) -> anyhow::Result<Outcome> {
    // A dry run writes what a redrive would do, not the tasks.
    args.output.written = match args.dry_run {
        true => Written::Report,
        false => Written::Tasks,
    };
    let at = match &args.at {
        Some(at) => envelope_form(time::parse("--at", at, jiff::Timestamp::now())?),
        None => {
            let ms = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64);
            envelope_form(ms)
        }
    };
    if args.dry_run && args.output.rejects.is_some() {
        bail!("--dry-run writes no rejects: its report counts them by reason");
    }
    let options = args.input.rule_options();
    let mut op = RedriveOp::new(EnvelopeRules::new(options)?, &at)
        .map_err(|invalid| anyhow::anyhow!("--at {invalid}"))?;
    if let Some(queue) = &args.queue {
        op = op.to_queue(queue).context("--queue")?;
    }
    if let Some(rate) = &args.rate {
        op.pacing = parse_rate(rate).with_context(|| format!("--rate {rate:?}"))?;
    }
    if let Some(spread) = &args.spread {
        let window_ms = time::duration_ms("--spread", spread)?;
        op.pacing = Pacing::Spread { window_ms };
    }
    op.max_redrives = args.max_redrives;
    op.dry_run = args.dry_run;
    op.write_rejects = args.output.rejects.is_some();
    op.max_line_bytes = args.input.max_line_bytes;
    if !args.dry_run {
        return Run::new(&op, &args.input, &args.output).execute();
    }
    let to = args.queue.as_deref();
    Run::new(&op, &args.input, &args.output)
        .then(|summary, total, out| write_dry_run(summary, total.report(), to, out))
        .execute()
}

/// `N/s`, `N/m` or `N/h`, N a positive integer.
fn parse_rate(text: &str) -> anyhow::Result<Pacing> {
    let (count, unit) = text
        .split_once('/')
        .context("expected N/s, N/m or N/h, such as 50/s")?;
    let per_ms = match unit {
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => bail!("the unit is s, m or h (per second, minute or hour), not {unit:?}"),
    };
    match count.parse::<u64>() {
        Ok(count) if count > 0 => Ok(Pacing::Rate { count, per_ms }),
        _ => bail!("the count is a positive whole number, not {count:?}"),
    }
}

/// The dry run's report: what would be redriven, by queue, and when; what would be rejected.
fn write_dry_run(
    summary: &Summary,
    report: &RedriveReport,
    to: Option<&str>,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    writeln!(out, "dry run: nothing was written")?;
    let tasks = summary.emitted;
    writeln!(out, "would redrive {tasks} {}", noun(tasks, "task"))?;
    let width = report.by_queue.keys().map(String::len).max().unwrap_or(0);
    for (queue, count) in &report.by_queue {
        match to {
            Some(to) => writeln!(out, "  {queue:<width$} -> {to}  {count}")?,
            None => writeln!(out, "  {queue:<width$}  {count}")?,
        }
    }
    if let Some((first, last)) = report.due {
        let (first, last) = (envelope_form(first), envelope_form(last));
        writeln!(out, "due from {first} to {last}")?;
    }
    let lines = summary.rejected;
    writeln!(out, "would reject {lines} {}", noun(lines, "line"))?;
    let width = summary
        .by_code
        .keys()
        .map(|code| code.len())
        .max()
        .unwrap_or(0);
    for (code, count) in &summary.by_code {
        writeln!(out, "  {code:<width$}  {count}")?;
    }
    Ok(())
}
