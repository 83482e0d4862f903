//! `rdq-envelope filter`: the valid lines that match, byte-identical.

use anyhow::bail;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Args;

use rdq_envelope::batch::{Command, FilterConfig};
use rdq_envelope::envelope::formats::ulid_time_ms;
use std::sync::Arc;
use std::time::Duration;

use rdq_envelope::ops::{EvalWatch, FilterOp, FilterTotal, Fingerprint, Glob, Predicates, Where};
use rdq_envelope::EnvelopeRules;

use super::time::{envelope_form, parse_opt};
use super::{run, where_guard, InputArgs, Outcome, OutputArgs};

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

/// A `--queue` or `--handler` glob that some valid name can match.
fn name_glob(flag: &str, glob: &str) -> anyhow::Result<()> {
    let name_char = |c: char| matches!(c, 'a'..='z' | '0'..='9' | '.' | '_' | '-' | '*' | '?');
    if glob.is_empty() {
        bail!("{flag} \"\": names are 1 to 240 characters, so no envelope would match");
    }
    if let Some(bad) = glob.chars().find(|&c| !name_char(c)) {
        let lower = glob.to_lowercase();
        let hint = if lower.chars().all(name_char) {
            format!(" (names are lower-case: {lower})")
        } else {
            String::new()
        };
        bail!(
            "{flag} {glob:?}: {bad:?} is not in a queue or handler name (a-z, 0-9, '.', '_', '-'), so no envelope would match{hint}"
        );
    }
    Ok(())
}

fn predicates(args: &FilterArgs) -> anyhow::Result<Predicates> {
    // Queue and handler names are 1-240 characters of [a-z0-9._-]: a glob with any other
    // character, or an empty one, matches no valid envelope.
    for (flag, globs) in [("--queue", &args.queue), ("--handler", &args.handler)] {
        for glob in globs {
            name_glob(flag, glob)?;
        }
    }
    // An error type is a non-empty string.
    for (flag, globs) in [
        ("--error-type", &args.error_type),
        ("--last-error-type", &args.last_error_type),
    ] {
        if globs.iter().any(String::is_empty) {
            bail!("{flag} \"\": an error type is never empty, so no envelope would match");
        }
    }
    for id in &args.id {
        // No valid envelope has any other ID: say so rather than match nothing.
        if ulid_time_ms(id).is_none() {
            let upper = id.to_ascii_uppercase();
            let hint = match ulid_time_ms(&upper) {
                Some(_) => format!(" (IDs are upper-case: {upper})"),
                None => String::new(),
            };
            bail!("--id {id:?} is not a canonical ULID, so no valid envelope has it{hint}");
        }
    }
    let mut header = Vec::new();
    for pair in &args.header {
        let Some((key, glob)) = pair.split_once('=') else {
            bail!("--header {pair:?}: expected KEY=GLOB");
        };
        if key.is_empty() {
            bail!("--header {pair:?}: the KEY is empty, and no valid envelope has an empty header key");
        }
        header.push((key.to_owned(), Glob::new(glob)));
    }
    let [since, until, failed_since, failed_until] = times(args)?;
    for (flags, from, to) in [
        (("--since", "--until"), since, until),
        (
            ("--failed-since", "--failed-until"),
            failed_since,
            failed_until,
        ),
    ] {
        if let (Some(from), Some(to)) = (from, to) {
            if from >= to {
                bail!(
                    "{} {} is not before {} {} (the range is half-open), so no envelope would match",
                    flags.0,
                    envelope_form(from),
                    flags.1,
                    envelope_form(to)
                );
            }
        }
    }
    let mut fingerprint = Vec::new();
    for hex in &args.fingerprint {
        match Fingerprint::parse(hex) {
            Some(f) => fingerprint.push(f),
            None => bail!("--fingerprint {hex:?}: expected 12 hex digits, as stats --by fingerprint shows them"),
        }
    }
    let mut error_message = Vec::new();
    for pattern in &args.error_message {
        match regex::Regex::new(pattern) {
            Ok(r) => error_message.push(r),
            Err(e) => bail!("--error-message {pattern:?}: {e}"),
        }
    }
    let where_expr = args.where_expr.as_deref().map(Where::new).transpose()?;
    if let (Some(min), Some(max)) = (args.min_attempts, args.max_attempts) {
        if min > max {
            bail!("--min-attempts {min} is over --max-attempts {max}, so no envelope would match");
        }
    }
    if let Some(min) = args.min_redrives.filter(|&n| n > u64::from(u32::MAX)) {
        bail!(
            "--min-redrives {min}: redrive_count is at most 4294967295, so no envelope would match"
        );
    }
    let globs = |list: &[String]| list.iter().map(|g| Glob::new(g)).collect::<Vec<_>>();
    let mut p = Predicates::default();
    p.queue = globs(&args.queue);
    p.handler = globs(&args.handler);
    p.status = args.status.clone();
    p.error_type = globs(&args.error_type);
    p.last_error_type = globs(&args.last_error_type);
    p.outcome = args.outcome.clone();
    p.since = since;
    p.until = until;
    p.id = args.id.clone();
    p.header = header;
    p.min_attempts = args.min_attempts;
    p.max_attempts = args.max_attempts;
    p.min_redrives = args.min_redrives;
    p.payload_contains = args.payload_contains.clone();
    p.fingerprint = fingerprint;
    p.error_message = error_message;
    p.failed_since = failed_since;
    p.failed_until = failed_until;
    p.where_expr = where_expr;
    Ok(p)
}

/// `--since`, `--until`, `--failed-since` and `--failed-until`, in milliseconds.
fn times(args: &FilterArgs) -> anyhow::Result<[Option<i64>; 4]> {
    Ok([
        parse_opt("--since", &args.since)?,
        parse_opt("--until", &args.until)?,
        parse_opt("--failed-since", &args.failed_since)?,
        parse_opt("--failed-until", &args.failed_until)?,
    ])
}

pub fn run(args: FilterArgs) -> anyhow::Result<Outcome> {
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
    run::run_settled(
        &op,
        &args.input,
        &args.output,
        limit,
        settle,
        |books, _, out| match count {
            true => Ok(writeln!(out, "{}", books.emitted)?),
            false => Ok(()),
        },
    )
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
