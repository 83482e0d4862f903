//! Arguments, the subcommands, and the exit status.

mod batch;
mod explain;
mod filter;
mod gen;
mod manual;
mod migrate;
mod progress;
mod redrive;
mod run;
mod schema;
mod show;
mod signals;
mod stats;
mod validate;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};

use rdq_envelope::envelope::DEFAULT_MAX_ENVELOPE_BYTES;
use rdq_envelope::framing::DEFAULT_MAX_LINE_BYTES;

/// Validate, version-migrate and re-emit rdq task envelopes (JSON Lines), losslessly.
#[derive(Parser)]
#[command(name = "rdq-envelope", version, about)]
struct Cli {
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

    /// Write the valid lines that match every predicate, byte-identical to the input.
    ///
    /// Each repeatable flag is an OR within itself; all flags must hold. A GLOB knows `*` and
    /// `?`, is case-sensitive and matches the whole value. Invalid lines go to --rejects.
    /// Exit status: 0 when no line was rejected, 1 when some line was, 2 when the run could
    /// not complete.
    Filter(Box<filter::FilterArgs>),

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

    /// Print the shell completion script for SHELL.
    ///
    /// bash: `rdq-envelope completions bash > ~/.local/share/bash-completion/completions/rdq-envelope`;
    /// zsh: into a folder on $fpath as `_rdq-envelope`; fish: into
    /// ~/.config/fish/completions/rdq-envelope.fish.
    Completions(manual::CompletionsArgs),

    /// Print the manual page (roff): `rdq-envelope man | man -l -`.
    Man(manual::ManArgs),

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

/// Inputs and the limits every command that reads envelopes shares (docs/cli.md#inputs).
#[derive(Args, Debug)]
pub struct InputArgs {
    /// Input files, read in order, each framed on its own; none, or `-`, reads standard input.
    /// zstd and gzip inputs are detected from their first bytes and decompressed.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// The envelope size limit in bytes for queues without a limit of their own
    /// (PAYLOAD_TOO_LARGE).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_ENVELOPE_BYTES)]
    pub max_envelope_bytes: u64,

    /// A queue's own size limit in bytes, replacing --max-envelope-bytes for it (repeatable).
    #[arg(long, value_name = "QUEUE=N", value_parser = parse_queue_limit)]
    pub queue_limit: Vec<(String, u64)>,

    /// The reader cap: a line longer than this many bytes is LINE_TOO_LONG and never held in
    /// memory whole.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_LINE_BYTES)]
    pub max_line_bytes: usize,

    /// Worker threads, at most 256 (default: the machine's available parallelism). Output is
    /// the same, byte for byte, whatever the number.
    #[arg(short, long, value_name = "N", value_parser = jobs_in_range)]
    pub jobs: Option<u16>,
}

impl InputArgs {
    /// Refuses a combination in which a flag would do nothing: a queue's limit given twice
    /// (only the last would count).
    pub fn check(&self) -> anyhow::Result<()> {
        for (i, (queue, _)) in self.queue_limit.iter().enumerate() {
            if self.queue_limit[..i].iter().any(|(q, _)| q == queue) {
                anyhow::bail!("--queue-limit {queue}=...: given twice for the same queue");
            }
        }
        Ok(())
    }

    /// The size limits of these arguments (`--max-envelope-bytes`, `--queue-limit`), every
    /// other rule option at its default.
    pub fn rule_options(&self) -> rdq_envelope::RuleOptions {
        rdq_envelope::RuleOptions {
            max_envelope_bytes: self.max_envelope_bytes,
            queue_limits: self.queue_limit.iter().cloned().collect(),
            ..rdq_envelope::RuleOptions::default()
        }
    }
}

/// Outputs every command shares (docs/cli.md#outputs).
#[derive(Args, Debug)]
pub struct OutputArgs {
    /// The primary output (default: standard output). Regular files are written atomically.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Write every rejected line as a JSON record with its errors and raw bytes.
    #[arg(long, value_name = "FILE")]
    pub rejects: Option<PathBuf>,

    /// Write the run's counts as a JSON object.
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,

    /// Print nothing on standard error but errors (no summary line, no progress bar).
    #[arg(short, long)]
    pub quiet: bool,

    /// Compress -o this way, whatever its name says (by default a name ending in .zst or .gz
    /// is compressed accordingly).
    #[arg(long, value_enum, value_name = "KIND")]
    pub compress: Option<CompressArg>,

    /// Flush every output line as soon as it is judged, for interactive tails (slower);
    /// otherwise output is written in large blocks.
    #[arg(long)]
    pub line_buffered: bool,

    /// Draw the progress bar even when standard error is not a terminal (not with --quiet).
    #[arg(long)]
    pub progress: bool,
}

impl OutputArgs {
    /// Refuses a combination in which a flag would do nothing: `--progress` with `--quiet`.
    pub fn check(&self) -> anyhow::Result<()> {
        if self.quiet && self.progress {
            anyhow::bail!("--progress and --quiet: --quiet hides the progress bar");
        }
        Ok(())
    }
}

/// A ChokaQ table on the command line (`--table`, `--chokaq-table`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TableArg {
    /// JobsHot: active jobs.
    Hot,
    /// JobsArchive: jobs that succeeded.
    Archive,
    /// JobsDLQ: dead letters.
    Dlq,
}

impl From<TableArg> for rdq_envelope::chokaq::Table {
    fn from(table: TableArg) -> Self {
        match table {
            TableArg::Hot => Self::Hot,
            TableArg::Archive => Self::Archive,
            TableArg::Dlq => Self::Dlq,
        }
    }
}

/// `--compress`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CompressArg {
    /// zstd, multi-threaded.
    Zstd,
    /// gzip.
    Gzip,
    /// Plain bytes, whatever the name.
    None,
}

/// `-j N` (and `batch --shards-at-once K`): from 1 to [`pipeline::MAX_JOBS`], so that a typo
/// cannot ask for more threads than a system can start.
///
/// [`pipeline::MAX_JOBS`]: rdq_envelope::pipeline::MAX_JOBS
pub fn jobs_in_range(s: &str) -> Result<u16, String> {
    let max = rdq_envelope::pipeline::MAX_JOBS;
    match s.parse::<u64>() {
        Ok(n) if (1..=max as u64).contains(&n) => Ok(n as u16),
        Ok(_) => Err(format!("{s} is not from 1 to {max}")),
        Err(_) => Err(format!("{s:?} is not a number")),
    }
}

fn parse_queue_limit(s: &str) -> Result<(String, u64), String> {
    let (queue, n) = s
        .split_once('=')
        .ok_or_else(|| format!("expected QUEUE=N, found {s:?}"))?;
    if queue.is_empty() {
        return Err("the queue name is empty".into());
    }
    let n = n
        .parse()
        .map_err(|_| format!("{n:?} is not a byte count"))?;
    Ok((queue.to_owned(), n))
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
    use std::io::Write;
    let mut stderr = std::io::stderr().lock();
    writeln!(stderr, "rdq-envelope: {message}")
        .and_then(|()| stderr.flush())
        .map_err(|e| std::io::Error::other(format!("<stderr>: write failed: {e}")))
}

/// Runs the command line and maps the outcome to the exit status.
pub fn main() -> ExitCode {
    signals::install();
    let matches = match Cli::command().try_get_matches() {
        Ok(matches) => matches,
        Err(e) => return usage(&e),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => return usage(&e),
    };
    // A panic is a bug, but still a run that did not complete: status 2, never 101, and the
    // outputs' temporary files removed as the stack unwinds.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dispatch(cli)))
        .unwrap_or_else(|_| Err(anyhow::anyhow!("internal error (a bug, please report it)")));
    match result {
        Ok(Outcome::Clean) => ExitCode::SUCCESS,
        Ok(Outcome::Rejected) => ExitCode::from(1),
        Err(e) if is_broken_pipe(&e) => {
            // A closed standard output (`| head`) ends the run quietly. Every other output
            // turns a closed pipe into a plain write error (`OutputFile`), so this is stdout.
            ExitCode::SUCCESS
        }
        Err(e) => {
            let _ = say(format_args!("{e:#}"));
            ExitCode::from(2)
        }
    }
}

fn dispatch(cli: Cli) -> anyhow::Result<Outcome> {
    match cli.command {
        Command::Validate(args) => validate::run(args),
        Command::Gen(args) => gen::run(args),
        Command::Migrate(args) => migrate::run(args),
        Command::Redrive(args) => redrive::run(args),
        Command::Filter(args) => filter::run(*args),
        Command::Stats(args) => stats::run(args),
        Command::Show(args) => show::run(args),
        Command::Completions(args) => manual::completions(args),
        Command::Man(args) => manual::man(args),
        Command::Schema(args) => schema::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Batch(args) => batch::run(args),
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
/// still quiet).
fn usage(e: &clap::Error) -> ExitCode {
    match e.print() {
        Err(io) if io.kind() != std::io::ErrorKind::BrokenPipe => {
            let _ = say(format_args!("<stdout>: write failed: {io}"));
            ExitCode::from(2)
        }
        _ => ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2)),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// clap checks the argument definitions only when they are used in a debug build; check
    /// every subcommand at once (a `--version` of `gen` once clashed with clap's own).
    #[test]
    fn the_command_line_is_well_formed() {
        super::Cli::command().debug_assert();
    }
}
