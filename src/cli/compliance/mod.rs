//! `rdq-envelope compliance`: the storage plugins' round-trip kit (docs/plugins.md).
//!
//! `run` hands the fixtures to a plugin's write command, asks its read command for what it
//! stored, and judges the two with the library's `compliance::judge`; `fixtures` writes the
//! set for a plugin author to look at or to load by other means.

mod plugin;
mod render;

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{Args, Subcommand, ValueEnum};

use rdq_envelope::compliance::{fixtures, judge, Equality, Fixture};
use rdq_envelope::io::{Named, OutputFile};

use super::args::OUTPUT_HEADING;
use super::Outcome;

pub use plugin::release;

#[derive(Args, Debug)]
pub struct ComplianceArgs {
    #[command(subcommand)]
    command: ComplianceCommand,
}

#[derive(Subcommand, Debug)]
enum ComplianceCommand {
    /// Hand the fixtures to a plugin's write command, read them back with its read command, and
    /// report every difference.
    ///
    /// Each command runs through `sh -c`, with RDQ_COMPLIANCE_DIR (a new, empty folder for the
    /// run, removed after it) and RDQ_COMPLIANCE_RUN (a token unique to the run, [a-z0-9_]) in
    /// its environment. The write command reads the fixtures as JSON Lines on its standard
    /// input; the read command prints every envelope stored, as JSON Lines, in any order.
    /// Exit status: 0 when every fixture came back equal and nothing else came back, 1 when
    /// not (or when a command failed, hung or printed what is not JSON Lines), 2 when the kit
    /// could not run.
    Run(RunArgs),

    /// Write the fixture set into a folder: fixtures.jsonl (what run sends) and fixtures.md
    /// (each fixture's name, id and the loss it is there to find).
    Fixtures(FixturesArgs),
}

#[derive(Args, Debug)]
struct RunArgs {
    /// The plugin's command that stores the envelopes it reads on its standard input.
    #[arg(long, value_name = "CMD")]
    write: String,

    /// The plugin's command that prints every envelope it stored, one JSON object per line.
    #[arg(long, value_name = "CMD")]
    read: String,

    /// Ask for the same bytes, not only the same JSON value: member order, number spellings,
    /// string escapes and white space must come back as they were sent.
    #[arg(long)]
    exact: bool,

    /// Each command's time limit, in seconds; past it, the command and every process it
    /// started are killed.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 120.0,
        allow_negative_numbers = true
    )]
    timeout: f64,

    /// The report's form: human rows, or one JSON object.
    #[arg(long, value_enum, default_value_t = ReportFormat::Human, help_heading = OUTPUT_HEADING)]
    format: ReportFormat,

    /// Also write the report as JUnit XML, for a CI system's test view.
    #[arg(long, value_name = "FILE", help_heading = OUTPUT_HEADING)]
    junit: Option<PathBuf>,

    /// Where to write the report (default: standard output). Regular files are written
    /// atomically.
    #[arg(short, long, value_name = "FILE", help_heading = OUTPUT_HEADING)]
    output: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ReportFormat {
    Human,
    Json,
}

#[derive(Args, Debug)]
struct FixturesArgs {
    /// The folder to write into (made if missing; the two files in it are replaced).
    #[arg(short, long, value_name = "DIR")]
    output: PathBuf,
}

pub fn run(args: ComplianceArgs) -> anyhow::Result<Outcome> {
    match args.command {
        ComplianceCommand::Run(args) => run_kit(args),
        ComplianceCommand::Fixtures(args) => write_fixtures(args),
    }
}

/// The most a read command may print: far more than any store holding the fixtures prints,
/// far less than a machine's memory.
const MAX_READ_OUTPUT: usize = 1 << 30;

fn run_kit(args: RunArgs) -> anyhow::Result<Outcome> {
    let timeout = match args.timeout {
        t if t.is_finite() && t > 0.0 && t <= 1e6 => Duration::from_secs_f64(t),
        t => bail!("--timeout {t}: expected a number of seconds above 0, at most 1e6"),
    };
    for (flag, command) in [("--write", &args.write), ("--read", &args.read)] {
        if command.trim().is_empty() {
            bail!("{flag}: the command is empty");
        }
    }
    let mut outputs = vec![match &args.output {
        Some(path) => Named::path("-o", path, true),
        None => Named::new("the report", rdq_envelope::io::Stream::Stdout),
    }];
    if let Some(junit) = &args.junit {
        outputs.push(Named::path("--junit", junit, true));
    }
    outputs.push(Named::new(
        "the run's messages",
        rdq_envelope::io::Stream::Stderr,
    ));
    super::run::check_streams(&[], &outputs)?;

    let set = fixtures();
    let mut sent = Vec::with_capacity(set.iter().map(|f| f.line.len() + 1).sum());
    for fixture in &set {
        sent.extend_from_slice(&fixture.line);
        sent.push(b'\n');
    }
    let folder = plugin::RunFolder::create()?;
    let token = run_token();
    let protocol = plugin::Protocol {
        folder: folder.path(),
        token: &token,
        timeout,
        max_output: MAX_READ_OUTPUT,
    };
    let write = plugin::run(&args.write, Some(&sent), &protocol);
    // The read runs even when the write failed: what did reach the store says how far it got.
    let read = plugin::run(&args.read, None, &protocol);
    drop(folder);

    let equality = match args.exact {
        true => Equality::Exact,
        false => Equality::Value,
    };
    let judgement = judge(&set, &read.stdout, equality);
    let report = render::Report {
        set: &set,
        judgement: &judgement,
        equality,
        write: &write,
        read: &read,
        timeout,
    };
    let mut out = match &args.output {
        Some(path) => OutputFile::create(path)
            .with_context(|| format!("{}: cannot create output", path.display()))?,
        None => OutputFile::stdout(),
    };
    match args.format {
        ReportFormat::Human => report.human(&mut out)?,
        ReportFormat::Json => report.json(&mut out)?,
    }
    let mut files = vec![out];
    if let Some(path) = &args.junit {
        let mut junit = OutputFile::create(path)
            .with_context(|| format!("{}: cannot create output", path.display()))?;
        report.junit(&mut junit)?;
        files.push(junit);
    }
    rdq_envelope::io::commit_all(files)?;
    Ok(match report.passed() {
        true => Outcome::Clean,
        false => Outcome::Rejected,
    })
}

/// A token unique to the run, for a plugin's table or schema name: letters, digits and `_`
/// only, starting with a letter, at most 63 bytes (PostgreSQL's limit on a name).
fn run_token() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "rdq_compliance_{}_{:x}",
        std::process::id(),
        nanos & 0xffff_ffff_ffff
    )
}

fn write_fixtures(args: FixturesArgs) -> anyhow::Result<Outcome> {
    let folder = &args.output;
    if let Some(url) = folder.to_str().filter(|p| p.contains("://")) {
        bail!("-o {url}: a folder on this machine is expected, not a URL");
    }
    std::fs::create_dir_all(folder)
        .with_context(|| format!("{}: cannot create the folder", folder.display()))?;
    let set = fixtures();
    let lines_path = folder.join("fixtures.jsonl");
    let table_path = folder.join("fixtures.md");
    let mut lines = OutputFile::create(&lines_path)
        .with_context(|| format!("{}: cannot create output", lines_path.display()))?;
    for fixture in &set {
        lines.write_all(&fixture.line)?;
        lines.write_all(b"\n")?;
    }
    let mut table = OutputFile::create(&table_path)
        .with_context(|| format!("{}: cannot create output", table_path.display()))?;
    write_table(&mut table, &set)?;
    rdq_envelope::io::commit_all([lines, table])?;
    Ok(Outcome::Clean)
}

/// The set as a Markdown table: name, id and purpose, in the set's order.
fn write_table(out: &mut impl Write, set: &[Fixture]) -> std::io::Result<()> {
    writeln!(out, "# rdq-envelope compliance fixtures\n")?;
    writeln!(
        out,
        "{} envelopes, one per line of fixtures.jsonl, in this order. Each is valid and written in\n\
         the canonical form; a store must give each back as the same JSON value (or, with\n\
         `--exact`, the same bytes).\n",
        set.len()
    )?;
    writeln!(
        out,
        "| name | id | bytes | what it finds |\n|---|---|---|---|"
    )?;
    let mut comparer = rdq_envelope::compliance::Comparer::new();
    for fixture in set {
        let id = comparer
            .id_of(&fixture.line)
            .ok()
            .flatten()
            .unwrap_or_default();
        let purpose = fixture.purpose.replace('|', "\\|");
        writeln!(
            out,
            "| `{}` | `{id}` | {} | {purpose} |",
            fixture.name,
            fixture.line.len()
        )?;
    }
    Ok(())
}
