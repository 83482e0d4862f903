//! `rdq-envelope batch`: the arguments turned into the library's batch
//! ([`rdq_envelope::batch`], which holds the engine: shards, manifest, resume, scheduling,
//! assembly), and its events and the manifest rendered for people.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::{Args, Subcommand};

use rdq_envelope::batch::{
    self, Batch, Command, Compress, Config, Event, Folders, Limits, Observer, State,
};
use rdq_envelope::io::{check_aliases, Named, OutputFile, Stream};
use rdq_envelope::pipeline::LineOperation;
use rdq_envelope::report::{noun, thousands};

use super::filter::{self, FilterArgs};
use super::migrate::{self, MigrateArgs};
use super::run;
use super::validate::{self, ValidateArgs};
use super::{CompressArg, InputArgs, Outcome, OutputArgs};

#[derive(Args, Debug)]
pub struct BatchArgs {
    /// Print the progress recorded in DIR's manifest (shards done, bytes, lines, rejected)
    /// without reading any input, and exit. DIR may be an s3://BUCKET/PREFIX/.
    #[arg(long, value_name = "DIR", exclusive = true)]
    status: Option<PathBuf>,

    /// The output folder (made if missing) or s3://BUCKET/PREFIX/: per shard its lines,
    /// rejects and summary, and manifest.json and summary.json. Not the input folder.
    #[arg(long, value_name = "DIR", global = true)]
    out: Option<PathBuf>,

    /// How many shards run at once; the -j workers are shared among them (default: 1, every
    /// worker on one shard at a time).
    #[arg(long, value_name = "K", global = true, value_parser = super::jobs_in_range)]
    shards_at_once: Option<u16>,

    /// Run only this shard (a file name in the input folder), unless the manifest has it done
    /// on the same input, and print its manifest entry as one JSON line; the manifest is not
    /// written (for cluster runners: contrib/spark).
    #[arg(long, value_name = "SHARD", global = true, conflicts_with_all = ["list", "assemble"])]
    only: Option<String>,

    /// Print the names of the input folder's shards, one per line, and exit.
    #[arg(long, global = true, conflicts_with = "assemble")]
    list: bool,

    /// Write manifest.json and summary.json from the entries in FILE (the JSON lines of
    /// --only runs; `-` is standard input) instead of running the shards.
    #[arg(long, value_name = "FILE", global = true)]
    assemble: Option<PathBuf>,

    /// With --assemble: other shards may still be running (a runner recording its progress),
    /// so their temporary files are left alone.
    #[arg(long, global = true, requires = "assemble")]
    in_flight: bool,

    #[command(subcommand)]
    command: Option<BatchCommand>,
}

#[derive(Subcommand, Debug)]
enum BatchCommand {
    /// validate every shard: its valid lines are its output, its rejects hold the diagnostics.
    Validate(ValidateArgs),
    /// migrate every shard: its migrated lines are its output.
    Migrate(MigrateArgs),
    /// filter every shard: its matching lines are its output.
    Filter(Box<FilterArgs>),
}

pub fn run(args: BatchArgs) -> anyhow::Result<Outcome> {
    if let Some(dir) = &args.status {
        return status(dir);
    }
    let Some(command) = &args.command else {
        bail!(
            "batch: name a command: batch validate|migrate|filter [FLAGS] IN_DIR --out OUT_DIR, \
             or batch --status OUT_DIR"
        );
    };
    // Every op is built (and its flags checked) before any file is touched.
    match command {
        BatchCommand::Validate(a) => {
            let op = validate::shard_op(a)?;
            dispatch(&args, validate::shard_config(a), &a.input, &a.output, &op)
        }
        BatchCommand::Migrate(a) => {
            let op = migrate::shard_op(a)?;
            dispatch(&args, migrate::shard_config(a), &a.input, &a.output, &op)
        }
        BatchCommand::Filter(a) => {
            let op = filter::shard_op(a)?;
            dispatch(&args, filter::shard_config(a), &a.input, &a.output, &op)
        }
    }
}

/// The batch these arguments describe, run in the mode they ask for.
fn dispatch<Op: LineOperation>(
    args: &BatchArgs,
    command: Command,
    input: &InputArgs,
    output: &OutputArgs,
    op: &Op,
) -> anyhow::Result<Outcome> {
    // Test builds only: a line holding these bytes panics in its worker (`panic_hook.rs`), so
    // that the tests can prove a shard's panic leaves nothing behind.
    #[cfg(debug_assertions)]
    if let Some(marker) = std::env::var_os("RDQ_ENVELOPE_TEST_PANIC_ON") {
        let op = super::panic_hook::PanicOn {
            op,
            marker: marker.into_encoded_bytes(),
        };
        return dispatch_op(args, command, input, output, &op);
    }
    dispatch_op(args, command, input, output, op)
}

fn dispatch_op<Op: LineOperation>(
    args: &BatchArgs,
    command: Command,
    input: &InputArgs,
    output: &OutputArgs,
    op: &Op,
) -> anyhow::Result<Outcome> {
    for (given, flag) in [
        (output.output.is_some(), "-o"),
        (output.rejects.is_some(), "--rejects"),
        (output.summary.is_some(), "--summary"),
    ] {
        if given {
            bail!("batch: {flag}: each shard's outputs are named from it in --out");
        }
    }
    input.check()?;
    if input.max_errors.is_some() {
        // Shards run side by side: no line is the Nth rejected one in a single order.
        bail!("batch: --max-errors: shards are read side by side, so no run order says which rejected line is the Nth; each shard's summary counts its rejected lines");
    }
    if args.only.is_some() && args.shards_at_once.is_some() {
        bail!("batch: --shards-at-once with --only: --only runs one shard");
    }
    if output.line_buffered || output.progress || output.stats {
        bail!("batch: --line-buffered, --progress and --stats are for single runs (batch prints a line per shard, and each shard's summary counts its codes)");
    }
    let [in_dir] = input.files.as_slice() else {
        bail!("batch: give one input folder (found {})", input.files.len());
    };
    let out_dir = match (&args.out, args.list) {
        (Some(dir), _) => dir.clone(),
        // --list only reads the input folder.
        (None, true) => PathBuf::new(),
        (None, false) => bail!("batch: --out DIR: the output folder is required"),
    };
    let config = Config {
        command,
        limits: Limits {
            max_envelope_bytes: input.max_envelope_bytes,
            queue_limit: input.queue_limits(),
            max_line_bytes: input.max_line_bytes,
        },
        compress: output.compress.map(|kind| match kind {
            CompressArg::Zstd => Compress::Zstd,
            CompressArg::Gzip => Compress::Gzip,
            CompressArg::None => Compress::None,
        }),
    };
    let folders = Folders {
        input: in_dir.clone(),
        output: out_dir,
        jobs: input.jobs()?,
        shards_at_once: args.shards_at_once.map_or(1, usize::from),
        zstd_frame_bytes: output.zstd_frame_bytes(),
    };
    let batch = Batch::new(config, folders).map_err(lib)?;
    let mut say = Say {
        quiet: output.quiet,
        command: batch.config().command_name(),
        in_dir,
    };
    if args.list {
        let mut out = OutputFile::stdout();
        for shard in batch.shards() {
            writeln!(out, "{}", shard.name)?;
        }
        out.commit()?;
        return Ok(Outcome::Clean);
    }
    check_standard_streams(&batch, args.assemble.as_deref())?;
    if let Some(name) = &args.only {
        let entry = batch.run_only(op, name, &mut say).map_err(lib)?;
        let mut line = serde_json::to_vec(&entry)?;
        line.push(b'\n');
        let mut out = OutputFile::stdout();
        out.write_all(&line)?;
        out.commit()?;
        return match &entry.state {
            State::Done { summary, .. } => Ok(run::outcome(summary)),
            State::Failed { error } => bail!("{error}"),
            State::Pending => unreachable!("a shard run is done or failed"),
        };
    }
    let manifest = match &args.assemble {
        Some(path) => {
            let entries = read_entries(path)?;
            batch.assemble(entries, path, args.in_flight, &mut say)
        }
        None => batch.run(op, &mut say),
    }
    .map_err(lib)?;
    Ok(run::outcome(&batch.finish(&manifest).map_err(lib)?))
}

/// Refuses standard output or error on a file the batch reads or writes (`2>out/manifest.json`):
/// an output renamed into place would take the messages' file away, and a shard that grows
/// with them while it is read would fail.
fn check_standard_streams(batch: &Batch, assemble: Option<&Path>) -> anyhow::Result<()> {
    let shards = batch
        .shards()
        .iter()
        .map(|s| Named::path("shard", &s.path, false));
    let entries = assemble.map(|path| Named::path("--assemble", path, false));
    let inputs: Vec<Named> = shards.chain(entries).collect();
    let files = batch.output_paths().into_iter();
    let mut outputs: Vec<Named> = files.map(|p| Named::path("--out", &p, true)).collect();
    outputs.push(Named::new("the batch's records", Stream::Stdout));
    outputs.push(Named::new("the batch's messages", Stream::Stderr));
    check_aliases(&inputs, &outputs)?;
    Ok(())
}

/// The library's error for the command line: an input or output error as itself (so that a
/// closed standard output is told), any other with its causes.
fn lib(e: batch::Error) -> anyhow::Error {
    match e {
        batch::Error::Io(e) => e.into(),
        e => e.into(),
    }
}

/// The entries of `--assemble FILE` (`-`: standard input).
fn read_entries(path: &Path) -> anyhow::Result<Vec<batch::Entry>> {
    let entries = if path.as_os_str() == "-" {
        batch::read_entries(io::stdin().lock(), path)
    } else {
        // A file, or an object (the entries a cluster's runners left in the store).
        let file = rdq_envelope::io::open_stored(path)
            .with_context(|| format!("{}: cannot open", path.display()))?;
        batch::read_entries(io::BufReader::new(file), path)
    };
    entries.map_err(lib)
}

/// The batch's events on standard error, one line each (nothing with -q).
struct Say<'a> {
    quiet: bool,
    command: &'static str,
    in_dir: &'a Path,
}

impl Observer for Say<'_> {
    fn event(&mut self, event: Event<'_>) -> io::Result<()> {
        if self.quiet {
            return Ok(());
        }
        let command = self.command;
        match event {
            Event::TemporaryFilesRemoved(n) => super::say(format_args!(
                "removed {n} temporary files a stopped run left"
            )),
            Event::StaleLockTakenOver(what) => super::say(format_args!("{what}")),
            Event::Vanished(name) => super::say(format_args!(
                "{name}: no longer in {}: its outputs are removed",
                self.in_dir.display()
            )),
            Event::ShardEnded(entry) => match &entry.state {
                State::Done { summary, .. } => {
                    super::say(format_args!("{}: {}", entry.name, summary.human()))
                }
                State::Failed { error } => {
                    super::say(format_args!("{}: failed: {error}", entry.name))
                }
                State::Pending => Ok(()),
            },
            Event::LeftPending(name) => super::say(format_args!(
                "{name}: the entry does not match the shard or its outputs now: left pending"
            )),
            Event::Ran { shards, run: 0, .. } => super::say(format_args!(
                "batch {command}: {shards} {}, every one done on the same input: nothing to run",
                noun(shards as u64, "shard")
            )),
            Event::Ran {
                shards,
                run,
                failed,
                books,
            } => super::say(format_args!(
                "batch {command}: {} {}: {} run, {} unchanged, {} failed; this run: {}",
                thousands(shards as u64),
                noun(shards as u64, "shard"),
                thousands(run as u64),
                thousands((shards - run) as u64),
                thousands(failed as u64),
                books.human()
            )),
            Event::Assembled {
                done,
                shards,
                books,
            } => super::say(format_args!(
                "batch {command}: {} of {} {} done; {}",
                thousands(done as u64),
                thousands(shards as u64),
                noun(shards as u64, "shard"),
                books.human()
            )),
        }
    }
}

/// `batch --status DIR`: progress from the manifest alone.
fn status(dir: &Path) -> anyhow::Result<Outcome> {
    let manifest = batch::status(dir).map_err(lib)?;
    let total = manifest.shards.len();
    let (books, done) = manifest.merged();
    let failed = manifest
        .shards
        .iter()
        .filter(|e| matches!(e.state, State::Failed { .. }))
        .count();
    let stored: u64 = manifest.shards.iter().map(|e| e.size).sum();
    let stored_done: u64 = manifest
        .shards
        .iter()
        .filter(|e| matches!(e.state, State::Done { .. }))
        .map(|e| e.size)
        .sum();
    let mb = |n: u64| n as f64 / 1e6;
    let mut out = OutputFile::stdout();
    writeln!(out, "{}", manifest.config.describe())?;
    writeln!(
        out,
        "shards: {done}/{total} done, {failed} failed, {} pending",
        total - done - failed
    )?;
    writeln!(
        out,
        "stored bytes: {:.1} of {:.1} MB done ({:.1} MB read after decompression)",
        mb(stored_done),
        mb(stored),
        mb(books.bytes_in)
    )?;
    writeln!(
        out,
        "lines: {} ({} emitted, {} rejected, {} blank, {} filtered out)",
        books.lines, books.emitted, books.rejected, books.blank, books.filtered_out
    )?;
    for entry in &manifest.shards {
        if let State::Failed { error } = &entry.state {
            writeln!(out, "failed: {}: {error}", entry.name)?;
        }
    }
    out.commit()?;
    Ok(Outcome::Clean)
}
