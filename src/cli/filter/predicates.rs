//! `filter`'s predicates from its flags: each checked before any input is read, so that a
//! flag no valid envelope could match is a usage error that says why, not an empty output.

use anyhow::bail;

use rdq_envelope::envelope::formats::ulid_time_ms;
use rdq_envelope::ops::{Fingerprint, Glob, Predicates, Where};

use super::FilterArgs;
use crate::cli::time::{envelope_form, parse_opt};

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

/// The predicates of `args`; a flag that no valid envelope could match is a usage error.
pub(super) fn predicates(args: &FilterArgs) -> anyhow::Result<Predicates> {
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
pub(super) fn times(args: &FilterArgs) -> anyhow::Result<[Option<i64>; 4]> {
    Ok([
        parse_opt("--since", &args.since)?,
        parse_opt("--until", &args.until)?,
        parse_opt("--failed-since", &args.failed_since)?,
        parse_opt("--failed-until", &args.failed_until)?,
    ])
}
