//! The arguments every command shares: inputs and their limits, outputs, and the value types
//! of a few flags.

use std::path::PathBuf;

use clap::Args;

use rdq_envelope::envelope::DEFAULT_MAX_ENVELOPE_BYTES;
use rdq_envelope::framing::DEFAULT_MAX_LINE_BYTES;

use super::colour::ColorArg;
use super::queue_limits::{self, QueueLimitsFile};

/// The help heading of the flags that say what a command reads and the limits it reads under.
/// A command's own flags, what it selects or does, come first under clap's "Options"; these
/// headings follow in this order (docs/cli.md#reading-help), tested by tests/it/cli_help.rs.
pub const INPUT_HEADING: &str = "Input and limits";

/// The help heading of the flags that say where and how a command writes.
pub const OUTPUT_HEADING: &str = "Output";

/// The environment variable that gives `-j` its default.
pub const JOBS_ENV: &str = "RDQ_ENVELOPE_JOBS";

/// The flags accepted before the subcommand (`rdq-envelope -q -j 4 validate ...`) as well as
/// after it. `-q` and `-j` belong to the commands that read envelopes, which define them
/// again (with the same ids); clap hands a value given before the subcommand down to them.
#[derive(Args, Debug)]
pub struct GlobalArgs {
    /// When to colour the stats tables and validate's diagnostics: auto (standard output is
    /// a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow), always, never.
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t)]
    #[arg(help_heading = OUTPUT_HEADING, display_order = 900)]
    pub color: ColorArg,

    /// Print nothing on standard error but errors (commands that read envelopes, and gen).
    #[arg(short, long, global = true, help_heading = OUTPUT_HEADING)]
    pub quiet: bool,

    /// Worker threads, 1 to 256 (commands that read envelopes; default: $RDQ_ENVELOPE_JOBS,
    /// else the machine's available parallelism).
    #[arg(short, long, global = true, value_name = "N", value_parser = jobs_in_range)]
    pub jobs: Option<u16>,
}

/// Inputs and the limits every command that reads envelopes shares (docs/cli.md#inputs).
#[derive(Args, Debug)]
#[command(next_help_heading = INPUT_HEADING)]
pub struct InputArgs {
    /// Input files, read in order, each framed on its own; none, or `-`, reads standard input.
    /// zstd and gzip inputs are detected from their first bytes and decompressed. A file may be
    /// s3://BUCKET/KEY or an http(s):// URL in a build with object storage (docs/cli.md#object-storage).
    // Under "Arguments", where every command's positionals are, not under the struct's heading.
    #[arg(value_name = "FILE", help_heading = None)]
    pub files: Vec<PathBuf>,

    /// The envelope size limit in bytes for queues without a limit of their own
    /// (PAYLOAD_TOO_LARGE).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_ENVELOPE_BYTES)]
    pub max_envelope_bytes: u64,

    /// A queue's own size limit in bytes, replacing --max-envelope-bytes for it (repeatable;
    /// over --queue-limits for the same queue).
    #[arg(long, value_name = "QUEUE=N", value_parser = parse_queue_limit)]
    pub queue_limit: Vec<(String, u64)>,

    /// Queues' own size limits from a file: TOML (`"billing.invoices" = 2097152`, a line per
    /// queue) or a JSON object (`{"billing.invoices": 2097152}`).
    #[arg(long, value_name = "FILE", value_parser = queue_limits::parse)]
    pub queue_limits: Option<QueueLimitsFile>,

    /// The reader cap: a line longer than this many bytes is LINE_TOO_LONG and never held in
    /// memory whole.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_LINE_BYTES)]
    pub max_line_bytes: usize,

    /// Worker threads, at most 256 (default: $RDQ_ENVELOPE_JOBS, else the machine's available
    /// parallelism). Output is the same, byte for byte, whatever the number.
    #[arg(short, long, value_name = "N", value_parser = jobs_in_range)]
    pub jobs: Option<u16>,

    /// Stop after N rejected lines: the run ends right after the Nth, in input order, with
    /// status 1 and the books of the lines up to it (the lines after it are not read).
    #[arg(long, value_name = "N", value_parser = at_least_one)]
    pub max_errors: Option<u64>,

    /// What the folders among `files` held that is not read (they are replaced by the files
    /// they hold before the command runs): for the books.
    #[arg(skip)]
    pub skipped: Vec<rdq_envelope::io::Skipped>,
}

impl InputArgs {
    /// Refuses a combination in which a flag would do nothing: a queue's limit given twice
    /// (only the last would count).
    pub fn check(&self) -> anyhow::Result<()> {
        // A set, not a scan of the flags before each: linear in the number of flags.
        let mut seen = std::collections::HashSet::new();
        for (queue, _) in &self.queue_limit {
            if !seen.insert(queue) {
                anyhow::bail!("--queue-limit {queue}=...: given twice for the same queue");
            }
        }
        Ok(())
    }

    /// The size limits of these arguments (`--max-envelope-bytes`, `--queue-limit`,
    /// `--queue-limits`), every other rule option at its default.
    pub fn rule_options(&self) -> rdq_envelope::RuleOptions {
        let mut options = rdq_envelope::RuleOptions::default();
        options.max_envelope_bytes = self.max_envelope_bytes;
        options.queue_limits = self.queue_limits();
        options
    }

    /// The worker count: `-j` (before the subcommand or after it), else `RDQ_ENVELOPE_JOBS`
    /// (set and not empty), else the machine's available parallelism. A bad value of the
    /// variable is a usage error naming it, even where `-j` would be the default; so is one of
    /// `RDQ_ENVELOPE_READER`, which the same commands read.
    pub fn jobs(&self) -> anyhow::Result<usize> {
        // Read by the commands that read envelopes, as this is: refused with the same words.
        rdq_envelope::io::check_reader_setting().map_err(anyhow::Error::msg)?;
        if let Some(n) = self.jobs {
            return Ok(usize::from(n));
        }
        match std::env::var_os(JOBS_ENV).filter(|v| !v.is_empty()) {
            Some(value) => {
                let text = value.to_string_lossy();
                let n = jobs_in_range(&text).map_err(|why| {
                    anyhow::anyhow!("{JOBS_ENV}={text:?}, the default of -j: {why}")
                })?;
                Ok(usize::from(n))
            }
            None => Ok(rdq_envelope::pipeline::PipelineOptions::default().jobs),
        }
    }

    /// How the pipeline runs for these arguments: `-j`, the reader cap and `--max-errors`.
    pub fn pipeline_options(&self) -> anyhow::Result<rdq_envelope::pipeline::PipelineOptions> {
        let mut options = rdq_envelope::pipeline::PipelineOptions::default();
        options.jobs = self.jobs()?;
        options.max_line_bytes = self.max_line_bytes;
        options.max_rejected = self.max_errors;
        Ok(options)
    }

    /// Every queue's own limit: the file's, then `--queue-limit`, which replaces the file's
    /// limit of the same queue (a flag is the nearer word, as it is over the environment).
    pub fn queue_limits(&self) -> std::collections::BTreeMap<String, u64> {
        let file = self.queue_limits.iter().flat_map(|f| f.limits.iter());
        file.chain(&self.queue_limit).cloned().collect()
    }
}

/// Outputs every command shares (docs/cli.md#outputs).
#[derive(Args, Debug)]
#[command(next_help_heading = OUTPUT_HEADING)]
pub struct OutputArgs {
    /// The primary output (default: standard output). Regular files (and s3://BUCKET/KEY
    /// objects) are written atomically.
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

    /// zstd outputs are written in the seekable format, in independent frames of at most SIZE
    /// of input each (default: 4MiB): 64KiB to 1GiB, in bytes or with a unit (KiB, MiB, GiB,
    /// KB, MB, GB). Smaller frames let a reader start nearer any line; larger ones compress a
    /// little better.
    #[arg(long, value_name = "SIZE", value_parser = parse_zstd_frame, allow_hyphen_values = true)]
    pub zstd_frame: Option<u32>,

    /// Flush every output line as soon as it is judged (slower); otherwise output is written in
    /// large blocks, and within 50 ms of a line when the input goes quiet.
    #[arg(long)]
    pub line_buffered: bool,

    /// Draw the progress bar even when standard error is not a terminal (not with --quiet).
    #[arg(long)]
    pub progress: bool,

    /// After the closing line, the rejected lines counted by code (and valid lines by warning),
    /// most first, on standard error, even with --quiet (validate prints them on a terminal
    /// unasked).
    #[arg(long)]
    pub stats: bool,

    /// What the primary output holds, for the closing line; set by the command.
    #[arg(skip)]
    pub written: Written,
}

/// What a command's primary output holds, named in its closing line (`; wrote 293 lines to
/// out.jsonl`), so that a run says what it wrote and not only what it read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Written {
    /// The input lines it keeps, byte-identical (`filter`, `dedupe`, `sample`).
    #[default]
    Lines,
    /// Envelopes it made of the lines (`migrate`).
    Envelopes,
    /// Tasks to submit again (`redrive`).
    Tasks,
    /// Rows (`export`).
    Rows,
    /// The diagnostics of the rejected lines (`validate`).
    Diagnostics,
    /// A report of the books (`stats`).
    Report,
    /// The number of matching lines (`filter --count`).
    Count,
}

impl OutputArgs {
    /// The most input bytes in one frame of a zstd output (`--zstd-frame`).
    pub fn zstd_frame_bytes(&self) -> u32 {
        self.zstd_frame
            .unwrap_or(rdq_envelope::io::ZSTD_FRAME_BYTES_DEFAULT)
    }

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

/// `--zstd-frame SIZE`: a size as `gen --size` takes it (a number of bytes, or of KB, MB, GB,
/// KiB, MiB, GiB), within what the seekable format and the seek table's frame count allow.
pub fn parse_zstd_frame(text: &str) -> Result<u32, String> {
    use rdq_envelope::io::{ZSTD_FRAME_BYTES_MAX as MAX, ZSTD_FRAME_BYTES_MIN as MIN};
    let bytes = super::gen::parse_size(text)?;
    match u32::try_from(bytes) {
        Ok(bytes) if (MIN..=MAX).contains(&bytes) => Ok(bytes),
        _ => Err(format!(
            "{text:?}: expected from 64KiB ({MIN} bytes) to 1GiB ({MAX} bytes)"
        )),
    }
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

/// A count of one or more (`--max-errors N`).
fn at_least_one(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(0) => Err("0 would stop before any line: give 1 or more".to_owned()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{s:?} is not a whole number of 1 or more")),
    }
}

fn parse_queue_limit(s: &str) -> Result<(String, u64), String> {
    let (queue, n) = s
        .split_once('=')
        .ok_or_else(|| format!("expected QUEUE=N, found {s:?}"))?;
    if let Some(problem) = queue_limits::queue_name_problem(queue) {
        return Err(problem);
    }
    let n = n
        .parse()
        .map_err(|_| format!("{n:?} is not a byte count"))?;
    Ok((queue.to_owned(), n))
}
