//! `rdq-envelope gen`: deterministic synthetic envelopes for benchmarks and pipeline tests.

use std::io::Write;

use anyhow::{bail, Context};
use clap::Args;

use rdq_envelope::chokaq::Table;
use rdq_envelope::envelope::STACK_LIMIT;
use rdq_envelope::generate::{ChokaqGenerator, GenOptions, Generator};
use rdq_envelope::io::OutputFile;

use super::{Outcome, TableArg};

#[derive(Args, Debug)]
pub struct GenArgs {
    /// How many lines to write.
    #[arg(long, value_name = "N")]
    count: u64,

    /// The seed: the same seed and options give the same bytes on every machine.
    #[arg(long, value_name = "S", default_value_t = 0)]
    seed: u64,

    /// The envelope_version to write, 1 or 2 (default: the newest). Not with --format chokaq.
    #[arg(long, value_name = "N")]
    version: Option<u32>,

    /// The share of lines (0 to 1) that carry one realistic defect each (default: 0). Not with
    /// --format chokaq.
    #[arg(long, value_name = "R")]
    invalid_rate: Option<f64>,

    /// Pads every retryable or permanent failure's stack trace to about N bytes (2048 to 65536,
    /// the stack limit) of Java frames, for a corpus of long, escape-heavy strings. Not with
    /// --format chokaq.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2048..=STACK_LIMIT as i64))]
    stack_bytes: Option<u32>,

    /// What to write: rdq envelopes, or ChokaQ table rows for `migrate --from chokaq`.
    #[arg(long, value_enum, default_value_t = Format::Rdq)]
    format: Format,

    /// With --format chokaq: rows of this table only (default: DLQ, Hot and Archive rows
    /// mixed).
    #[arg(long, value_enum, value_name = "TABLE")]
    table: Option<TableArg>,

    /// Where to write (default: standard output). Regular files are written atomically.
    #[arg(short, long, value_name = "FILE")]
    output: Option<std::path::PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    Rdq,
    Chokaq,
}

pub fn run(args: GenArgs) -> anyhow::Result<Outcome> {
    // A flag that would do nothing is a usage error, found before any output is created.
    if args.format == Format::Rdq && args.table.is_some() {
        bail!("--table goes with --format chokaq");
    }
    if args.format == Format::Chokaq {
        if args.version.is_some() {
            bail!("--version goes with --format rdq (ChokaQ rows have no envelope_version)");
        }
        if args.invalid_rate.is_some() {
            bail!("--invalid-rate goes with --format rdq (ChokaQ rows are written valid)");
        }
        if args.stack_bytes.is_some() {
            bail!("--stack-bytes goes with --format rdq");
        }
    }
    let version = args
        .version
        .unwrap_or(rdq_envelope::envelope::NEWEST_VERSION);
    if !rdq_envelope::envelope::SUPPORTED_VERSIONS.contains(&version) {
        bail!(
            "--version {version}: supported versions are {}",
            rdq_envelope::envelope::supported_versions()
        );
    }
    let invalid_rate = args.invalid_rate.unwrap_or(0.0);
    if !(0.0..=1.0).contains(&invalid_rate) {
        bail!("--invalid-rate {invalid_rate}: expected a share from 0 to 1");
    }
    super::check_against_stderr("-o", args.output.as_deref())?;
    let mut out = match &args.output {
        Some(path) => OutputFile::create(path)
            .with_context(|| format!("{}: cannot create output", path.display()))?,
        None => OutputFile::stdout(),
    };
    let mut line = Vec::with_capacity(8 << 10);
    if args.format == Format::Chokaq {
        let mut generator = ChokaqGenerator::new(args.seed, args.table.map(Table::from));
        for _ in 0..args.count {
            line.clear();
            generator.next_row(&mut line);
            line.push(b'\n');
            out.write_all(&line)?;
        }
        out.commit()?;
        return Ok(Outcome::Clean);
    }
    let mut generator = Generator::new({
        let mut o = GenOptions::default();
        o.seed = args.seed;
        o.version = version;
        o.invalid_rate = invalid_rate;
        o.stack_bytes = args.stack_bytes.map(|n| n as usize);
        o
    });
    for _ in 0..args.count {
        line.clear();
        generator.next_line(&mut line);
        line.push(b'\n');
        out.write_all(&line)?;
    }
    out.commit()?;
    Ok(Outcome::Clean)
}
