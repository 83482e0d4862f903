//! What is refused before any command runs: a value of `RDQ_ENVELOPE_SIMD` that names no
//! classifier, a global flag that would do nothing for the command, and an output that is the
//! file standard error is open on.

use clap::parser::ValueSource;
use clap::ArgMatches;

use super::{command, run};

/// Refuses an output file (given with `flag`; standard output without one) that is the file
/// standard error is open on: its rename would take the messages' file away (`gen -o f 2>f`).
pub fn check_against_stderr(flag: &str, output: Option<&std::path::Path>) -> anyhow::Result<()> {
    use rdq_envelope::io::{Named, Stream};
    let primary = match output {
        Some(path) => Named::path(flag, path, true),
        None => Named::new("the primary output", Stream::Stdout),
    };
    let messages = Named::new("the run's messages", Stream::Stderr);
    run::check_streams(&[], &[primary, messages])
}

/// `RDQ_ENVELOPE_SIMD`, when set and not empty, names a classifier: a typo would otherwise
/// pass unseen (the results are the same, only the speed is not what was asked for).
pub fn simd_variable_is_known() -> anyhow::Result<()> {
    let Some(value) = std::env::var_os("RDQ_ENVELOPE_SIMD").filter(|v| !v.is_empty()) else {
        return Ok(());
    };
    let names = rdq_envelope::json::SIMD_NAMES;
    match value.to_str().is_some_and(|v| names.contains(&v)) {
        true => Ok(()),
        false => anyhow::bail!(
            "RDQ_ENVELOPE_SIMD={}: expected one of {} (unset or empty: the fastest this CPU runs)",
            value.to_string_lossy(),
            names.join(", ")
        ),
    }
}

/// Refuses `-q` or `-j` on the command line (before the subcommand or after it) for a command
/// that has no use for it (`rdq-envelope -j 4 gen`): clap accepts a global flag everywhere,
/// and a flag that would do nothing is a usage error (docs/guarantees.md#flags).
/// `RDQ_ENVELOPE_JOBS` is only a default, so it never counts; nor does `--color`, a taste
/// that an alias may set for every command.
pub fn globals_do_something(matches: &ArgMatches) -> anyhow::Result<()> {
    // The definitions before clap's build: a command's own arguments, not yet the globals
    // clap copies into every subcommand.
    let mut command = command();
    let mut path = Vec::new();
    let mut at = matches;
    while let Some((name, sub)) = at.subcommand() {
        let Some(next) = command.find_subcommand(name) else {
            return Ok(());
        };
        command = next.clone();
        path.push(name.to_owned());
        at = sub;
    }
    for (id, flag) in [("quiet", "-q/--quiet"), ("jobs", "-j/--jobs")] {
        let given = matches!(at.try_contains_id(id), Ok(true))
            && at.value_source(id) == Some(ValueSource::CommandLine);
        if given && !command.get_arguments().any(|a| a.get_id() == id) {
            anyhow::bail!(
                "{flag} does nothing for `{}`: it belongs to the commands that read envelopes",
                path.join(" ")
            );
        }
    }
    Ok(())
}
