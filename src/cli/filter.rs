//! `rdq-envelope filter`: the valid lines that match, byte-identical.

use anyhow::bail;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Args;

use rdq_envelope::batch::{Command, FilterConfig};
use rdq_envelope::envelope::formats::{parse_timestamp, ulid_time_ms};
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

/// One of `values` in any letter case (with the flag's `ignore_case`), as the envelope spells
/// it: the flag forgives, the rules it matches against stay strict.
fn upper_case<const N: usize>(values: [&'static str; N]) -> impl TypedValueParser<Value = String> {
    PossibleValuesParser::new(values).map(|value| value.to_ascii_uppercase())
}

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
    let since = time("--since", &args.since)?;
    let until = time("--until", &args.until)?;
    if let (Some(since), Some(until)) = (since, until) {
        if since >= until {
            bail!(
                "--since {} is not before --until {} (the range is half-open), so no envelope would match",
                args.since.as_deref().unwrap_or_default(),
                args.until.as_deref().unwrap_or_default()
            );
        }
    }
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
    Ok(p)
}

pub fn run(args: FilterArgs) -> anyhow::Result<Outcome> {
    if args.count && args.output.line_buffered {
        bail!("--line-buffered does not go with --count: only the count is written, at the end");
    }
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

/// What `batch filter` records of these arguments: the predicates, each repeatable one as a
/// set (its order and repeats change nothing), and `--invert`.
pub fn shard_config(args: &FilterArgs) -> Command {
    let set = |values: &[String]| values.iter().cloned().collect();
    Command::Filter(Box::new(FilterConfig {
        queue: set(&args.queue),
        handler: set(&args.handler),
        status: set(&args.status),
        error_type: set(&args.error_type),
        last_error_type: set(&args.last_error_type),
        outcome: set(&args.outcome),
        since: args.since.clone(),
        until: args.until.clone(),
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
    Ok(op)
}
