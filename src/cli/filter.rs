//! `rdq-envelope filter`: the valid lines that match, byte-identical.

use anyhow::bail;
use clap::Args;

use rdq_envelope::envelope::formats::parse_timestamp;
use rdq_envelope::ops::{FilterOp, Glob, Predicates};
use rdq_envelope::EnvelopeRules;

use super::{run, InputArgs, Outcome, OutputArgs};

#[derive(Args, Debug)]
pub struct FilterArgs {
    #[command(flatten)]
    pub input: InputArgs,

    #[command(flatten)]
    pub output: OutputArgs,

    /// The queue matches GLOB (repeatable).
    #[arg(long, value_name = "GLOB")]
    queue: Vec<String>,

    /// handler_ref matches GLOB (repeatable).
    #[arg(long, value_name = "GLOB")]
    handler: Vec<String>,

    /// The status is S: PENDING, IN_FLIGHT, SUCCEEDED, DEAD or CANCELLED (repeatable).
    #[arg(long, value_name = "S")]
    status: Vec<String>,

    /// Some attempt's error.type matches GLOB (repeatable).
    #[arg(long, value_name = "GLOB")]
    error_type: Vec<String>,

    /// The last attempt's error.type matches GLOB (repeatable).
    #[arg(long, value_name = "GLOB")]
    last_error_type: Vec<String>,

    /// The last attempt's outcome is O: SUCCESS, RETRYABLE_FAILURE, PERMANENT_FAILURE or
    /// LEASE_EXPIRED (repeatable).
    #[arg(long, value_name = "O")]
    outcome: Vec<String>,

    /// created_at is at or after TS (YYYY-MM-DDTHH:MM:SS.mmmZ).
    #[arg(long, value_name = "TS")]
    since: Option<String>,

    /// created_at is before TS.
    #[arg(long, value_name = "TS")]
    until: Option<String>,

    /// The id is exactly ID (repeatable).
    #[arg(long, value_name = "ID")]
    id: Vec<String>,

    /// Header KEY's value matches GLOB; rdq.source and rdq.submitted_by also match a v2
    /// origin (repeatable; each must hold).
    #[arg(long, value_name = "KEY=GLOB")]
    header: Vec<String>,

    /// At least N attempt records (the whole history across redrives).
    #[arg(long, value_name = "N")]
    min_attempts: Option<u64>,

    /// At most N attempt records.
    #[arg(long, value_name = "N")]
    max_attempts: Option<u64>,

    /// At least N redrives.
    #[arg(long, value_name = "N")]
    min_redrives: Option<u64>,

    /// The decoded payload contains TEXT (repeatable).
    #[arg(long, value_name = "TEXT")]
    payload_contains: Vec<String>,

    /// Emit the valid lines that do not match instead.
    #[arg(long)]
    invert: bool,

    /// Print only the number of matching lines.
    #[arg(long)]
    count: bool,
}

const STATUSES: [&str; 5] = ["PENDING", "IN_FLIGHT", "SUCCEEDED", "DEAD", "CANCELLED"];
const OUTCOMES: [&str; 4] = [
    "SUCCESS",
    "RETRYABLE_FAILURE",
    "PERMANENT_FAILURE",
    "LEASE_EXPIRED",
];

fn time(flag: &str, value: &Option<String>) -> anyhow::Result<Option<i64>> {
    match value {
        None => Ok(None),
        Some(text) => match parse_timestamp(text) {
            Some(ms) => Ok(Some(ms)),
            None => {
                bail!("{flag} {text:?}: expected a UTC timestamp such as 2026-05-01T12:00:00.000Z")
            }
        },
    }
}

fn predicates(args: &FilterArgs) -> anyhow::Result<Predicates> {
    for status in &args.status {
        if !STATUSES.contains(&status.as_str()) {
            bail!(
                "--status {status:?}: expected one of {}",
                STATUSES.join(", ")
            );
        }
    }
    for outcome in &args.outcome {
        if !OUTCOMES.contains(&outcome.as_str()) {
            bail!(
                "--outcome {outcome:?}: expected one of {}",
                OUTCOMES.join(", ")
            );
        }
    }
    let mut header = Vec::new();
    for pair in &args.header {
        let Some((key, glob)) = pair.split_once('=') else {
            bail!("--header {pair:?}: expected KEY=GLOB");
        };
        header.push((key.to_owned(), Glob::new(glob)));
    }
    let globs = |list: &[String]| list.iter().map(|g| Glob::new(g)).collect::<Vec<_>>();
    Ok(Predicates {
        queue: globs(&args.queue),
        handler: globs(&args.handler),
        status: args.status.clone(),
        error_type: globs(&args.error_type),
        last_error_type: globs(&args.last_error_type),
        outcome: args.outcome.clone(),
        since: time("--since", &args.since)?,
        until: time("--until", &args.until)?,
        id: args.id.clone(),
        header,
        min_attempts: args.min_attempts,
        max_attempts: args.max_attempts,
        min_redrives: args.min_redrives,
        payload_contains: args.payload_contains.clone(),
    })
}

pub fn run(args: FilterArgs) -> anyhow::Result<Outcome> {
    let op = op(&args)?;
    if !args.count {
        return run::run(&op, &args.input, &args.output, None, false);
    }
    run::run_then(&op, &args.input, &args.output, None, false, |books, out| {
        Ok(writeln!(out, "{}", books.emitted)?)
    })
}

/// What `batch filter` runs on every shard: the matching lines are its output, with rejects.
pub fn shard_op(args: &FilterArgs) -> anyhow::Result<FilterOp> {
    if args.count {
        bail!("batch filter: --count: each shard's summary counts its matches (emitted)");
    }
    let mut op = op(args)?;
    op.write_rejects = true;
    Ok(op)
}

fn op(args: &FilterArgs) -> anyhow::Result<FilterOp> {
    // Predicates are checked before any input is read: a bad one is a usage error.
    let predicates = predicates(args)?;
    let options = args.input.rule_options();
    Ok(FilterOp {
        rules: EnvelopeRules::new(options)?,
        predicates,
        invert: args.invert,
        count_only: args.count,
        write_rejects: args.output.rejects.is_some(),
        max_line_bytes: args.input.max_line_bytes,
    })
}
