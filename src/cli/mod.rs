//! Arguments, the subcommands, and the exit status.

mod args;
mod batch;
mod closing;
mod colour;
mod compliance;
mod convert;
mod dedupe;
mod ending;
mod examples;
mod explain;
mod export;
mod filter;
mod flag_hint;
mod format_name;
mod gen;
mod input_hint;
mod inputs;
mod manual;
mod migrate;
#[cfg(debug_assertions)]
mod panic_hook;
mod preflight;
mod progress;
mod queue_limits;
mod redrive;
mod run;
mod sample;
mod schema;
mod show;
mod signals;
mod stats;
mod stats_table;
pub mod time;
mod validate;
mod version;
mod where_guard;

use std::ffi::OsString;
use std::process::ExitCode;
use std::sync::OnceLock;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

pub use args::{jobs_in_range, CompressArg, GlobalArgs, InputArgs, OutputArgs, TableArg};
pub use preflight::check_against_stderr;

/// Where a reader finds the documents the help cites as `docs/NAME.md`: the help is often all a
/// pip user has, and the wheel installs the documents beside its `bin/`.
const DOCS_NOTE: &str = "Documents cited as docs/NAME.md: docs/ in the source tree, or \
share/doc/rdq-envelope/ under the prefix a pip install put bin/rdq-envelope in (the \
environment's `python3 -c 'import sys; print(sys.prefix)'`).";

/// The command line as clap knows it: the derive's, every page ending with [`DOCS_NOTE`] and
/// then its examples (`examples.rs`).
fn command() -> clap::Command {
    command_with(true)
}

/// [`command`], with the examples at the end of each page's help or without them (the man
/// pages give them a section of their own).
fn command_with(examples: bool) -> clap::Command {
    fn finish(command: clap::Command, path: String, examples: bool) -> clap::Command {
        let help = match examples::help_text(&path).filter(|_| examples) {
            Some(text) => format!("{DOCS_NOTE}\n\n{text}"),
            None => DOCS_NOTE.to_owned(),
        };
        let names: Vec<String> = command
            .get_subcommands()
            .map(|sub| sub.get_name().to_owned())
            .collect();
        let mut command = command.after_help(help);
        for name in names {
            let sub_path = match path.is_empty() {
                true => name.clone(),
                false => format!("{path} {name}"),
            };
            command = command.mut_subcommand(&name, |sub| finish(sub, sub_path, examples));
        }
        command
    }
    finish(Cli::command(), String::new(), examples)
}

/// Validate, version-migrate and re-emit rdq task envelopes (JSON Lines), losslessly.
#[derive(Parser)]
#[command(name = "rdq-envelope", version, about)]
struct Cli {
    #[command(flatten)]
    global: GlobalArgs,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check every line against the envelope rules (docs/envelope.md) and report each broken rule.
    ///
    /// Writes one diagnostic row per error (or one JSON object per invalid line) to standard
    /// output or -o. Exit status: 0 when every line is valid, 1 when some line was rejected,
    /// 2 when the run could not complete (bad usage, unreadable input, unwritable output).
    Validate(validate::ValidateArgs),

    /// Write deterministic synthetic envelopes, DLQ-shaped, for benchmarks and pipeline tests.
    ///
    /// The same --seed and options give the same bytes on every machine. With --invalid-rate,
    /// that share of the lines carries one realistic defect each (a cut-off line, Latin-1
    /// bytes, a duplicate key, a lower-case ID, ...).
    Gen(gen::GenArgs),

    /// Write every valid line as another envelope_version (docs/migrations.md), losslessly.
    ///
    /// Each line is validated against its own version first; invalid lines, and lines the
    /// target cannot hold (CANNOT_DOWNGRADE) or would overwrite (MIGRATION_CONFLICT), go to
    /// --rejects with their codes. A line already at the target version passes unchanged.
    /// Exit status: 0 when every line was written, 1 when some line was rejected, 2 when the
    /// run could not complete.
    Migrate(migrate::MigrateArgs),

    /// Turn DEAD envelopes into resubmittable ones: status PENDING, attempt_count 0,
    /// redrive_count + 1, next_attempt_at the time given, lease_expires_at null, attempts kept.
    ///
    /// Every other byte stays as it was. A line that is not DEAD is rejected with NOT_DEAD, and
    /// invalid lines with their codes. Exit status: 0 when every line was redriven, 1 when
    /// some line was rejected, 2 when the run could not complete.
    Redrive(redrive::RedriveArgs),

    /// Keep one copy per id, byte-identical and in input order; count the dropped copies.
    ///
    /// --keep newest (the default) keeps the copy with the most history (greatest
    /// redrive_count, then most attempts, then latest last finished_at, then the later line)
    /// and reads the input twice (standard input, a pipe or a FIFO is kept in a temporary
    /// file; a file that changes between the reads is an error); --keep first
    /// keeps the first copy and streams. Dropped copies are filtered out in the summary and
    /// written to --dropped. Exit status: 0 when no line was rejected, 1 when some line was,
    /// 2 when the run could not complete.
    Dedupe(dedupe::DedupeArgs),

    /// Keep a uniform random sample of N valid lines (N per queue with --by queue), in input
    /// order.
    ///
    /// Reservoir sampling: every valid line has the same chance, memory holds N lines, and the
    /// same --seed gives the same sample for any -j. The other valid lines are filtered out in
    /// the summary; invalid lines go to --rejects. Exit status: 0 when no line was rejected, 1
    /// when some line was, 2 when the run could not complete.
    Sample(sample::SampleArgs),

    /// Write the valid lines that match every predicate, byte-identical to the input.
    ///
    /// Each repeatable flag is an OR within itself; all flags must hold. A GLOB knows `*` and
    /// `?`, is case-sensitive and matches the whole value. Invalid lines go to --rejects.
    /// Exit status: 0 when no line was rejected, 1 when some line was, 2 when the run could
    /// not complete.
    Filter(Box<filter::FilterArgs>),

    /// Write one row per valid envelope, with the columns chosen, as CSV, TSV or Parquet.
    ///
    /// --fields picks the columns (docs/cli.md#export lists them and their types); values are
    /// the envelope's, JSON escapes decoded, and null or absent members are empty fields in
    /// CSV and nulls in Parquet. The format comes from --format or the -o name (.csv, .tsv,
    /// .parquet), else CSV. Invalid lines go to --rejects. Exit status: 0 when no line was
    /// rejected, 1 when some line was, 2 when the run could not complete.
    Export(export::ExportArgs),

    /// Count the valid envelopes per group, with attempt and redrive histograms, the
    /// created_at range, the top error types and the arrivals per day.
    ///
    /// --format table draws aligned tables with bar charts (coloured only on a terminal and
    /// without NO_COLOR); --format json prints one object, stable for scripts. Invalid lines
    /// go to --rejects. Exit status: 0 when no line was rejected, 1 when some line was, 2 when
    /// the run could not complete.
    Stats(stats::StatsArgs),

    /// Print the envelope with an ID, pretty (only white space changes), and with --payload
    /// its decoded payload.
    ///
    /// Reading stops at the first match unless --all prints every copy. Invalid lines are
    /// skipped silently. Exit status: 0 when an envelope had the ID, 1 when none had, 2 when
    /// the run could not complete.
    Show(show::ShowArgs),

    /// Print the JSON Schema (draft 2020-12) of an envelope version (default: the newest).
    ///
    /// Every valid envelope passes the schema of its version; the schema's description lists
    /// the rules a JSON Schema cannot express (duplicate keys, byte limits, the rules across
    /// attempts, ...), which only validate checks. Exit status: 0, or 2 for an unsupported
    /// --version or an unwritable output.
    Schema(schema::SchemaArgs),

    /// The storage plugins' round-trip kit: run a plugin's write and read commands over the
    /// fixtures and report every difference (run), or write the fixture set (fixtures).
    ///
    /// A store may take envelopes apart, but what it reads back must be the envelope it was
    /// given, unknown members included (docs/plugins.md). Exit status of run: 0 when every
    /// fixture round-trips, 1 when not, 2 when the kit could not run.
    Compliance(compliance::ComplianceArgs),

    /// Print the shell completion script for SHELL.
    ///
    /// bash: `rdq-envelope completions bash > ~/.local/share/bash-completion/completions/rdq-envelope`;
    /// zsh: into a folder on $fpath as `_rdq-envelope`; fish: into
    /// ~/.config/fish/completions/rdq-envelope.fish.
    Completions(manual::CompletionsArgs),

    /// Print the manual page (roff): `rdq-envelope man | man -l -`.
    Man(manual::ManArgs),

    /// Convert envelopes between JSON Lines and protobuf (docs/proto.md): --to proto writes each
    /// valid line as its rdq.envelope.v1/v2 message, --from proto each message as its
    /// canonical JSON line.
    ///
    /// The stream is length-delimited: each message after its length as a varint (Java's
    /// writeDelimitedTo, Go's protodelim). Every message read is checked against every rule;
    /// invalid lines and messages go to --rejects (a message with its index and byte offset),
    /// as does the rest of a stream that cannot be framed on (cut short, a length over the
    /// limit). Exit status: 0 when every envelope was converted, 1 when some was rejected, 2
    /// when the run could not complete.
    Convert(convert::ConvertArgs),

    /// Run validate, migrate or filter over every shard of a folder into another, resumably.
    ///
    /// `batch migrate --to 2 IN_DIR --out OUT_DIR`: the shards are IN_DIR's files named
    /// *.jsonl, *.jsonl.zst or *.jsonl.gz (hidden files and subfolders left out), in name
    /// order. Each gets its lines, rejects and summary in OUT_DIR, named from it;
    /// OUT_DIR/manifest.json records every shard's input (size, BLAKE3), outputs, summary and
    /// state after each shard, and a rerun redoes only what is not done on the same input.
    /// OUT_DIR/summary.json merges the books when every shard is done. `batch --status
    /// OUT_DIR` reads the manifest alone. Exit status: as the command's over every shard (0,
    /// 1), and 2 when some shard is not done.
    Batch(batch::BatchArgs),

    /// Explain an error or warning code: the rule, where it is reported, a line that gets it
    /// and how to fix it (as `rustc --explain` does); --list lists every code.
    ///
    /// The code may be in any letter case (`explain bad_attempt`). Exit status: 0, or 2 for an
    /// unknown code (with the closest one suggested).
    Explain(explain::ExplainArgs),
}

/// What a completed run says about its input.
pub enum Outcome {
    /// Every line passed.
    Clean,
    /// Some line was rejected.
    Rejected,
}

/// Writes `rdq-envelope: MESSAGE` on standard error. Unlike `eprintln!`, a standard error that
/// is closed or full is an error (and never a panic): the run then ends with status 2.
pub fn say(message: std::fmt::Arguments<'_>) -> std::io::Result<()> {
    say_block(&format!("rdq-envelope: {message}\n"))
}

/// Writes `block` (lines for people, each ended) on standard error as it is, with the errors
/// of [`say`].
pub fn say_block(block: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut stderr = std::io::stderr().lock();
    stderr
        .write_all(block.as_bytes())
        .and_then(|()| stderr.flush())
        .map_err(|e| std::io::Error::other(format!("<stderr>: write failed: {e}")))
}

/// The arguments of the run, the program's name first: those of the process for the binary,
/// `sys.argv` for the Python module's command (whose process is `python3`). Set once, by
/// [`main_with_args`].
static ARGS: OnceLock<Vec<OsString>> = OnceLock::new();

/// The run's arguments after the program's name ([`ARGS`]; the process's before [`main_with_args`]).
pub(crate) fn args_after_name() -> Vec<OsString> {
    ARGS.get()
        .cloned()
        .unwrap_or_else(|| std::env::args_os().collect())
        .into_iter()
        .skip(1)
        .collect()
}

/// The run's subcommand, as typed (the first argument that is not a global flag or its value).
pub(crate) fn subcommand() -> String {
    let mut args = args_after_name().into_iter();
    while let Some(arg) = args.next() {
        let arg = arg.to_string_lossy().into_owned();
        match arg.as_str() {
            // The global flags that take their value as the next argument.
            "-j" | "--jobs" | "--color" => {
                args.next();
            }
            flag if flag.starts_with('-') => {}
            _ => return arg,
        }
    }
    "COMMAND".to_owned()
}

/// Runs the command line on the process's arguments and maps the outcome to the exit status.
pub fn main() -> ExitCode {
    ExitCode::from(main_with_args(std::env::args_os().collect()))
}

/// Runs the command line on `args` (the program's name first) and returns the exit status
/// (docs/cli.md#exit-status). Once per process: it installs the signal handlers and ends the
/// process itself on a signal, as the binary does.
pub fn main_with_args(args: Vec<OsString>) -> u8 {
    let args = ARGS.get_or_init(|| args).clone();
    signals::install();
    // The version is made here, not in the derive: the commit and the SIMD paths would
    // otherwise also land in the man pages and completions, which are kept in the repository.
    let command = command()
        .version(version::short())
        .long_version(version::long());
    let color = colour::ColorArg::from_raw_args(args.iter().cloned());
    let matches = match command.try_get_matches_from(&args) {
        Ok(matches) => matches,
        // The version report says what a command would do: a value of RDQ_ENVELOPE_SIMD that
        // every command refuses is refused here too, not reported over.
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayVersion => {
            if let Err(refused) = preflight::simd_variable_is_known() {
                let _ = say(format_args!("{refused}"));
                return 2;
            }
            return usage(&e, color);
        }
        Err(e) => return usage(&e, color),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => return usage(&e, color),
    };
    if let Err(e) = preflight::simd_variable_is_known() {
        let _ = say(format_args!("{e}"));
        return 2;
    }
    if let Err(e) = preflight::globals_do_something(&matches) {
        let _ = say(format_args!("{e}"));
        return 2;
    }
    // A panic is a bug, but still a run that did not complete: status 2, never 101, and the
    // outputs' temporary files removed as the stack unwinds.
    let result = on_a_deep_stack(move || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dispatch(cli)))
            .unwrap_or_else(|_| Err(anyhow::anyhow!("internal error (a bug, please report it)")))
    });
    // An error from any thread, a failed commit or a panic: the run's values have cleaned up
    // as they unwound, and the one way out (`ending.rs`) removes what none of them held.
    let _released = result.is_err().then(rdq_envelope::io::release_everything);
    match result {
        Ok(Outcome::Clean) => 0,
        Ok(Outcome::Rejected) => 1,
        Err(e) if is_broken_pipe(&e) => {
            // A closed standard output (`| head`) ends the run quietly. Every other output
            // turns a closed pipe into a plain write error (`OutputFile`), so this is stdout.
            0
        }
        Err(e) => {
            let _ = say(format_args!("{e:#}"));
            2
        }
    }
}

/// Runs `command` on a thread with the stack a `--where` expression may need
/// ([`rdq_envelope::ops::EVAL_STACK_BYTES`]): the thread that runs a pipeline also applies
/// its operation at times. The stack is reserved, not used, until a deep expression goes
/// there. Where such a thread cannot be had, on this one.
fn on_a_deep_stack(
    command: impl FnOnce() -> anyhow::Result<Outcome> + Send,
) -> anyhow::Result<Outcome> {
    let mut command = Some(command);
    let spawned = std::thread::scope(|scope| {
        let command = &mut command;
        std::thread::Builder::new()
            .name("rdq-main".into())
            .stack_size(rdq_envelope::ops::EVAL_STACK_BYTES)
            .spawn_scoped(scope, move || {
                // Where the process is not Rust's own (the Python module's command), the
                // thread has no alternate signal stack for where_guard's handler: given here.
                let _alt = crate::pipeline::AltStack::install();
                command.take().map(|c| c())
            })
            .ok()
            .map(|thread| thread.join())
    });
    match spawned {
        Some(Ok(Some(result))) => result,
        Some(_) => Err(anyhow::anyhow!("internal error (a bug, please report it)")),
        None => (command.take().expect("not taken: the thread did not start"))(),
    }
}

fn dispatch(mut cli: Cli) -> anyhow::Result<Outcome> {
    let color = cli.global.color;
    if let Some(input) = cli.command.envelope_inputs() {
        input.skipped = rdq_envelope::io::expand_folders(&mut input.files)?;
    }
    match cli.command {
        Command::Validate(args) => validate::run(args, color),
        Command::Gen(args) => gen::run(args),
        Command::Migrate(args) => migrate::run(args),
        Command::Convert(args) => convert::run(args),
        Command::Redrive(args) => redrive::run(args),
        Command::Dedupe(args) => dedupe::run(args),
        Command::Sample(args) => sample::run(args),
        Command::Filter(args) => filter::run(*args),
        Command::Export(args) => export::run(args),
        Command::Stats(args) => stats::run(args, color),
        Command::Show(args) => show::run(args),
        Command::Completions(args) => manual::completions(args),
        Command::Man(args) => manual::man(args),
        Command::Schema(args) => schema::run(args),
        Command::Compliance(args) => compliance::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Batch(args) => batch::run(args),
    }
}

impl Command {
    /// The inputs of a command that reads JSON Lines of envelopes, where a folder stands for
    /// the files in it (`batch` takes its one folder as a folder of shards, and `convert
    /// --from proto` reads protobuf).
    fn envelope_inputs(&mut self) -> Option<&mut InputArgs> {
        match self {
            Command::Validate(args) => Some(&mut args.input),
            Command::Migrate(args) => Some(&mut args.input),
            Command::Convert(args) if args.reads_json_lines() => Some(&mut args.input),
            Command::Redrive(args) => Some(&mut args.input),
            Command::Dedupe(args) => Some(&mut args.input),
            Command::Sample(args) => Some(&mut args.input),
            Command::Filter(args) => Some(&mut args.input),
            Command::Export(args) => Some(&mut args.input),
            Command::Stats(args) => Some(&mut args.input),
            Command::Show(args) => Some(&mut args.input),
            _ => None,
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Help, the version, or a usage error: clap's own text, and its status (0 or 2), unless the
/// text could not be written: a full or failing standard output is status 2 (a closed one is
/// still quiet). Coloured as `--color` (`color`, when given) and the environment say, as our
/// own text is: clap's `print` would read `CLICOLOR_FORCE=0` as forcing colour.
fn usage(e: &clap::Error, color: Option<colour::ColorArg>) -> u8 {
    use std::io::Write;
    let text = e.render();
    let to_stderr = e.use_stderr();
    let text = match colour::ColorArg::colour_stream(color, to_stderr) {
        true => text.ansi().to_string(),
        false => text.to_string(),
    };
    let written = match to_stderr {
        true => std::io::stderr().lock().write_all(text.as_bytes()),
        false => {
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.flush())
        }
    };
    match written {
        Err(io) if io.kind() != std::io::ErrorKind::BrokenPipe => {
            let _ = say(format_args!("<stdout>: write failed: {io}"));
            2
        }
        _ => u8::try_from(e.exit_code()).unwrap_or(2),
    }
}

#[cfg(test)]
mod tests {

    /// clap checks the argument definitions only when they are used in a debug build; check
    /// every subcommand at once (a `--version` of `gen` once clashed with clap's own).
    #[test]
    fn the_command_line_is_well_formed() {
        super::command().debug_assert();
    }
}
