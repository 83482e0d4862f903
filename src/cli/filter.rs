//! `rdq-envelope filter`: the valid lines that match, byte-identical.

use anyhow::bail;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Args;

use rdq_envelope::batch::{Command, FilterConfig};
use std::sync::Arc;
use std::time::Duration;

use rdq_envelope::ops::{EvalWatch, FilterOp, FilterTotal};
use rdq_envelope::EnvelopeRules;

use super::args::Written;
use super::run::{self, Run};
use super::time::envelope_form;
use super::{where_guard, InputArgs, Outcome, OutputArgs};

/// The predicates from their flags, each checked so that none matches nothing unsaid.
mod predicates;
use predicates::{predicates, times};

#[derive(Args, Debug)]
pub struct FilterArgs {
    /// The queue matches GLOB (repeatable).
    #[arg(long, value_name = "GLOB")]
    queue: Vec<String>,

    /// handler_ref matches GLOB (repeatable).
    #[arg(long, value_name = "GLOB")]
    handler: Vec<String>,

    /// The status is S: PENDING, IN_FLIGHT, SUCCEEDED, DEAD or CANCELLED, in any letter case
    /// (repeatable).
    #[arg(long, value_name = "S", ignore_case = true, value_parser = upper_case(STATUSES))]
    status: Vec<String>,

    /// Some attempt's error.type matches GLOB (repeatable).
    #[arg(long, value_name = "GLOB")]
    error_type: Vec<String>,

    /// The last attempt's error.type matches GLOB (repeatable).
    #[arg(long, value_name = "GLOB")]
    last_error_type: Vec<String>,

    /// The last attempt's outcome is O: SUCCESS, RETRYABLE_FAILURE, PERMANENT_FAILURE or
    /// LEASE_EXPIRED, in any letter case (repeatable).
    #[arg(long, value_name = "O", ignore_case = true, value_parser = upper_case(OUTCOMES))]
    outcome: Vec<String>,

    /// created_at is at or after TS: 2024-05-01T12:00:00.000Z, 2024-05-01 (midnight UTC),
    /// RFC 3339 with any offset, or 2h, 3d, 90m (that long before now).
    #[arg(long, value_name = "TS")]
    since: Option<String>,

    /// created_at is before TS (any form --since takes).
    #[arg(long, value_name = "TS")]
    until: Option<String>,

    /// The last attempt's finished_at is at or after TS (any form --since takes).
    #[arg(long, value_name = "TS")]
    failed_since: Option<String>,

    /// The last attempt's finished_at is before TS.
    #[arg(long, value_name = "TS")]
    failed_until: Option<String>,

    /// The last error's fingerprint (stats --by fingerprint) is HEX (repeatable).
    #[arg(long, value_name = "HEX")]
    fingerprint: Vec<String>,

    /// Some attempt's error.message matches REGEX, unanchored, like grep -E (repeatable).
    #[arg(long, value_name = "REGEX")]
    error_message: Vec<String>,

    /// A jq expression: keep the envelope when it outputs a value other than false and null
    /// before any error, as jq 'select(EXPR)' does. Runs only on the lines the other
    /// predicates kept.
    #[arg(long = "where", value_name = "EXPR", allow_hyphen_values = true)]
    where_expr: Option<String>,

    /// With --where: end the run (status 2) when one line has been evaluated for longer than
    /// this many seconds [default: 10]; 0 turns the limit off.
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    where_timeout: Option<f64>,

    /// With --where: end the run (status 2) when the process holds more than this much
    /// memory, in MiB [default: 4096]; 0 turns the limit off.
    #[arg(long, value_name = "MIB")]
    where_max_memory: Option<u64>,

    /// Stop after N matching lines (the rest of the input is not read).
    #[arg(long, value_name = "N")]
    limit: Option<u64>,

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

    #[command(flatten)]
    pub input: InputArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

const STATUSES: [&str; 5] = ["PENDING", "IN_FLIGHT", "SUCCEEDED", "DEAD", "CANCELLED"];
const OUTCOMES: [&str; 4] = [
    "SUCCESS",
    "RETRYABLE_FAILURE",
    "PERMANENT_FAILURE",
    "LEASE_EXPIRED",
];

/// One of `values` in any letter case (with the flag's `ignore_case`), as the envelope spells
/// it: the flag forgives, the rules it matches against stay strict.
fn upper_case<const N: usize>(values: [&'static str; N]) -> impl TypedValueParser<Value = String> {
    PossibleValuesParser::new(values).map(|value| value.to_ascii_uppercase())
}

pub fn run(mut args: FilterArgs) -> anyhow::Result<Outcome> {
    args.output.written = match args.count {
        true => Written::Count,
        false => Written::Lines,
    };
    if args.count && args.output.line_buffered {
        bail!("--line-buffered does not go with --count: only the count is written, at the end");
    }
    let op = op(&args)?;
    let count = args.count;
    let settle = |books: &mut rdq_envelope::pipeline::Summary, total: &FilterTotal| {
        let notes = op.settle(total, books);
        let mut human = String::new();
        if let Some(n) = notes.where_errors.filter(|&n| n > 0) {
            human.push_str(&format!(", --where failed on {n}"));
        }
        if notes.limit_reached == Some(true) {
            let limit = op.limit.unwrap_or_default();
            human.push_str(&format!(
                ", --limit {limit} reached (later lines left out, reading stopped early)"
            ));
        }
        run::Notes {
            json: serde_json::to_value(notes).ok(),
            human,
        }
    };
    let limit = op.limit;
    Run::new(&op, &args.input, &args.output)
        .settled(limit, settle)
        .then(|books, _, out| match count {
            true => Ok(writeln!(out, "{}", books.emitted)?),
            false => Ok(()),
        })
        .execute()
}

/// What `batch filter` runs on every shard: the matching lines are its output, with rejects.
pub fn shard_op(args: &FilterArgs) -> anyhow::Result<FilterOp> {
    if args.count {
        bail!("batch filter: --count: each shard's summary counts its matches (emitted)");
    }
    if args.limit.is_some() {
        bail!("batch filter: --limit: a shard cannot know the matches of the shards before it");
    }
    let mut op = op(args)?;
    op.write_rejects = true;
    Ok(op)
}

/// What `batch filter` records of these arguments: the predicates, each repeatable one as a
/// set (its order and repeats change nothing), and `--invert`. Times are recorded as the
/// instants they named when the batch started (`2h` would mean another time on a resume).
pub fn shard_config(args: &FilterArgs) -> Command {
    let set = |values: &[String]| values.iter().cloned().collect();
    // Checked by `shard_op` before this is called.
    let [since, until, failed_since, failed_until] = times(args)
        .unwrap_or_default()
        .map(|t| t.map(envelope_form));
    Command::Filter(Box::new(FilterConfig {
        queue: set(&args.queue),
        handler: set(&args.handler),
        status: set(&args.status),
        error_type: set(&args.error_type),
        last_error_type: set(&args.last_error_type),
        outcome: set(&args.outcome),
        since,
        until,
        failed_since,
        failed_until,
        fingerprint: args
            .fingerprint
            .iter()
            .map(|f| f.to_ascii_lowercase())
            .collect(),
        error_message: set(&args.error_message),
        where_expr: args.where_expr.clone(),
        id: set(&args.id),
        header: set(&args.header),
        min_attempts: args.min_attempts,
        max_attempts: args.max_attempts,
        min_redrives: args.min_redrives,
        payload_contains: set(&args.payload_contains),
        invert: args.invert,
    }))
}

fn op(args: &FilterArgs) -> anyhow::Result<FilterOp> {
    // Predicates are checked before any input is read: a bad one is a usage error.
    let predicates = predicates(args)?;
    let options = args.input.rule_options();
    let mut op = FilterOp::new(EnvelopeRules::new(options)?, predicates);
    op.invert = args.invert;
    op.count_only = args.count;
    op.write_rejects = args.output.rejects.is_some();
    op.max_line_bytes = args.input.max_line_bytes;
    op.limit = args.limit;
    match (
        &op.predicates.where_expr,
        args.where_timeout,
        args.where_max_memory,
    ) {
        (Some(_), _, _) => op.watch = guard_where(args)?,
        (None, Some(_), _) => bail!("--where-timeout does nothing without --where"),
        (None, _, Some(_)) => bail!("--where-max-memory does nothing without --where"),
        (None, None, None) => {}
    }
    Ok(op)
}

/// `--where-timeout`'s default, in seconds: far longer than any expression takes on one
/// envelope that is not running away.
const DEFAULT_WHERE_TIMEOUT: f64 = 10.0;

/// `--where-max-memory`'s default, in MiB.
const DEFAULT_WHERE_MAX_MEMORY_MIB: u64 = 4096;

/// Keeps `--where` from ending, aborting or hanging the run (`where_guard.rs`): a stack
/// overflow turned into status 2, and a watchdog over the workers' evaluations, whose watch
/// it returns (none when both limits are off: then nothing is noted per line).
fn guard_where(args: &FilterArgs) -> anyhow::Result<Option<Arc<EvalWatch>>> {
    let timeout = match args.where_timeout.unwrap_or(DEFAULT_WHERE_TIMEOUT) {
        0.0 => None,
        t if t.is_finite() && t > 0.0 && t <= 1e9 => Some(Duration::from_secs_f64(t)),
        t => bail!("--where-timeout {t}: expected a number of seconds from 0 (no limit) to 1e9"),
    };
    let limits = where_guard::Limits {
        timeout,
        max_memory_mib: Some(
            args.where_max_memory
                .unwrap_or(DEFAULT_WHERE_MAX_MEMORY_MIB),
        )
        .filter(|&m| m > 0),
    };
    where_guard::catch_stack_overflow();
    if limits.timeout.is_none() && limits.max_memory_mib.is_none() {
        return Ok(None);
    }
    let watch = Arc::new(EvalWatch::default());
    where_guard::watch(Arc::clone(&watch), limits);
    Ok(Some(watch))
}
