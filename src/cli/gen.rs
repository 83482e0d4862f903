//! `rdq-envelope gen`: deterministic synthetic envelopes for benchmarks and pipeline tests.

use std::io::Write;

use anyhow::{bail, Context};
use clap::Args;

use rdq_envelope::chokaq::Table;
use rdq_envelope::envelope::STACK_LIMIT;
use rdq_envelope::generate::{ChokaqGenerator, GenOptions, Generator};
use rdq_envelope::io::{OutputCompression, OutputFile, ZSTD_FRAME_BYTES_DEFAULT};

use super::args::OUTPUT_HEADING;
use super::{Outcome, TableArg};

#[derive(Args, Debug)]
pub struct GenArgs {
    /// How many lines to write (or --size).
    #[arg(long, value_name = "N", required_unless_present = "size")]
    count: Option<u64>,

    /// About how many bytes to write, instead of --count: whole lines, as many as come nearest
    /// to SIZE (at least one). Bytes, or with a unit: KB, MB, GB, TB (powers of 1000), KiB,
    /// MiB, GiB, TiB (powers of 1024), as in 500MB, 1.5GB, 1GiB.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, conflicts_with = "count",
          allow_hyphen_values = true)]
    size: Option<u64>,

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
    #[arg(short, long, value_name = "FILE", help_heading = OUTPUT_HEADING)]
    output: Option<std::path::PathBuf>,

    /// A zstd -o (a name ending in .zst) is written in the seekable format, in frames of at
    /// most SIZE of input each (default: 4MiB): 64KiB to 1GiB, as the other commands take it.
    #[arg(long, value_name = "SIZE", value_parser = super::args::parse_zstd_frame,
          allow_hyphen_values = true, help_heading = OUTPUT_HEADING)]
    zstd_frame: Option<u32>,

    /// Print nothing on standard error but errors (no closing line).
    #[arg(short, long, help_heading = OUTPUT_HEADING)]
    quiet: bool,
}

/// The byte units `--size` takes, upper-cased, with their sizes.
const SIZE_UNITS: [(&str, u128); 9] = [
    ("B", 1),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
    ("KIB", 1 << 10),
    ("MIB", 1 << 20),
    ("GIB", 1 << 30),
    ("TIB", 1 << 40),
];

/// `--size SIZE`: a whole or decimal number of bytes, or of a unit (`500MB`, `1.5GB`,
/// `1GiB`), more than zero and at most `u64::MAX`. Digits are counted exactly, not through a
/// float, so that `NaN`, `inf` and `1e9` are refused and no rounding moves a byte.
pub(super) fn parse_size(text: &str) -> Result<u64, String> {
    let expected = "expected a number of bytes, or of KB, MB, GB, TB, KiB, MiB, GiB or TiB, \
                    as in 500MB or 1GiB";
    let number_len = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(number_len);
    let unit = unit.trim_start().to_ascii_uppercase();
    let unit = match unit.as_str() {
        "" => 1,
        unit => match SIZE_UNITS.iter().find(|(name, _)| *name == unit) {
            Some((_, size)) => *size,
            None => return Err(format!("{text:?}: {expected}")),
        },
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let digits_only = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() && fraction.is_empty() || !digits_only(whole) || !digits_only(fraction) {
        return Err(format!("{text:?}: {expected}"));
    }
    let too_large = || format!("{text:?}: more than {} bytes", u64::MAX);
    // Digits past what u128 holds are refused as too large (leading zeros aside).
    let exact = |digits: &str| -> Result<u128, String> {
        let digits = digits.trim_start_matches('0');
        match digits.is_empty() {
            true => Ok(0),
            false => digits.parse::<u128>().map_err(|_| too_large()),
        }
    };
    let fraction = fraction.trim_end_matches('0');
    let scale = u32::try_from(fraction.len())
        .ok()
        .and_then(|len| 10u128.checked_pow(len))
        .ok_or_else(too_large)?;
    let bytes = exact(whole)?
        .checked_mul(unit)
        .and_then(|b| b.checked_add(exact(fraction).ok()?.checked_mul(unit)? / scale))
        .ok_or_else(too_large)?;
    match u64::try_from(bytes) {
        Ok(0) => Err(format!("{text:?}: expected more than 0 bytes")),
        Ok(bytes) => Ok(bytes),
        Err(_) => Err(too_large()),
    }
}

/// `bytes` for people: `950 bytes`, `2.0 MB`, `1.1 GB` (powers of 1000, as --size's KB, MB,
/// GB).
fn human_bytes(bytes: u64) -> String {
    let units = [("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)];
    match units.iter().find(|(_, size)| bytes as f64 >= *size) {
        Some((name, size)) => format!("{:.1} {name}", bytes as f64 / size),
        None if bytes == 1 => "1 byte".to_owned(),
        None => format!("{bytes} bytes"),
    }
}

/// When to stop writing lines: after a number of them, or at about a number of bytes.
#[derive(Clone, Copy)]
enum Amount {
    Lines(u64),
    Bytes(u64),
}

impl Amount {
    /// Whether the line of `next` bytes, after `lines` lines of `written` bytes, is still to be
    /// written. For a size: the line that brings the total nearer to it than stopping would,
    /// and always the first one.
    fn wants(self, lines: u64, written: u64, next: usize) -> bool {
        match self {
            Amount::Lines(count) => lines < count,
            Amount::Bytes(size) => {
                let over_with_it = written.saturating_add(next as u64).saturating_sub(size);
                let short_without_it = size.saturating_sub(written);
                lines == 0 || (short_without_it > 0 && over_with_it <= short_without_it)
            }
        }
    }
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
    super::format_name::refuse_other_than_json_lines("-o", args.output.as_deref())?;
    let mut out = match &args.output {
        Some(path) => {
            let frame_bytes = args.zstd_frame.unwrap_or(ZSTD_FRAME_BYTES_DEFAULT);
            let compression = OutputCompression::for_name(path).with_zstd_frame(frame_bytes);
            OutputFile::create_compressed(path, compression)
                .with_context(|| format!("{}: cannot create output", path.display()))?
        }
        None => OutputFile::stdout(),
    };
    let amount = match (args.count, args.size) {
        (_, Some(size)) => Amount::Bytes(size),
        (Some(count), None) => Amount::Lines(count),
        // clap requires one of the two; this only keeps the types honest.
        (None, None) => bail!("give --count N or --size SIZE"),
    };
    let (lines, written, what) = match args.format {
        Format::Chokaq => {
            let mut generator = ChokaqGenerator::new(args.seed, args.table.map(Table::from));
            let (lines, written) = write_lines(&mut out, amount, |line| {
                generator.next_row(line);
            })?;
            (lines, written, "ChokaQ row")
        }
        Format::Rdq => {
            let mut generator = Generator::new({
                let mut o = GenOptions::default();
                o.seed = args.seed;
                o.version = version;
                o.invalid_rate = invalid_rate;
                o.stack_bytes = args.stack_bytes.map(|n| n as usize);
                o
            });
            let (lines, written) = write_lines(&mut out, amount, |line| {
                generator.next_line(line);
            })?;
            (lines, written, "envelope")
        }
    };
    out.commit()?;
    if !args.quiet {
        let plural = if lines == 1 { "" } else { "s" };
        let place = super::closing::place_of(args.output.as_deref());
        super::say(format_args!(
            "wrote {} {what}{plural} ({}) to {place}",
            rdq_envelope::report::thousands(lines),
            human_bytes(written),
        ))?;
    }
    Ok(Outcome::Clean)
}

/// Writes the lines `next` makes (each without its newline) to `out` for as long as `amount`
/// wants them; returns how many lines, and bytes with the newlines, were written.
fn write_lines(
    out: &mut OutputFile,
    amount: Amount,
    mut next: impl FnMut(&mut Vec<u8>),
) -> anyhow::Result<(u64, u64)> {
    let mut line = Vec::with_capacity(8 << 10);
    let (mut lines, mut written) = (0u64, 0u64);
    loop {
        // Generated before the check: only a line's length says whether it brings the total
        // nearer to --size. Never written, the last one costs one line's work.
        if let Amount::Lines(count) = amount {
            if lines >= count {
                break;
            }
        }
        line.clear();
        next(&mut line);
        line.push(b'\n');
        if !amount.wants(lines, written, line.len()) {
            break;
        }
        out.write_all(&line)?;
        lines += 1;
        written += line.len() as u64;
    }
    Ok((lines, written))
}
