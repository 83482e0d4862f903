//! `rdq-envelope batch`: `validate`, `migrate` or `filter` over every shard of a folder into
//! another folder, resumably.
//!
//! Each shard is one run of the command (the same op, the same pipeline, the same atomic
//! outputs) writing `STEM.jsonl[.zst]`, `STEM.rejects.jsonl[.zst]` and `STEM.summary.json`.
//! `manifest.json` records every shard's input (size, BLAKE3), outputs, books and state, and is
//! rewritten atomically after each shard, so a stopped run loses only the shards in flight: a
//! rerun keeps the shards done on unchanged input and redoes the rest. `--only` and
//! `--assemble` split the same work across machines (contrib/spark): the tasks print entries,
//! the driver assembles them into the same manifest a local run writes.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File};
use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{anyhow, bail, Context};
use clap::{ArgMatches, Args, Subcommand};

use rdq_envelope::batch::{
    first_clash, hash_file, list_shards, Entry, Manifest, Shard, ShardOutputs, State, MANIFEST,
    MANIFEST_FORMAT, SUMMARY,
};
use rdq_envelope::io::{OutputCompression, OutputFile};
use rdq_envelope::pipeline::Summary;
use rdq_envelope::pipeline::{LineOperation, PipelineOptions, Source};

use super::filter::{self, FilterArgs};
use super::migrate::{self, MigrateArgs};
use super::run::{self, Run, RunFiles};
use super::validate::{self, ValidateArgs};
use super::{CompressArg, InputArgs, Outcome, OutputArgs};

#[derive(Args, Debug)]
pub struct BatchArgs {
    /// Print the progress recorded in DIR's manifest (shards done, bytes, lines, rejected)
    /// without reading any input, and exit.
    #[arg(long, value_name = "DIR", exclusive = true)]
    status: Option<PathBuf>,

    /// The output folder (made if missing): per shard its lines, rejects and summary, and
    /// manifest.json and summary.json. Not the input folder.
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

/// A shard's books and its outputs, written but not yet committed.
type Written = (Summary, RunFiles);

/// Which output of the op holds the lines a shard writes.
#[derive(Clone, Copy)]
enum Slot {
    Primary,
    Secondary,
}

/// Options of the command that are not flags of its outputs: a change of these does not
/// change a byte the shards write.
const NOT_FLAGS: [&str; 10] = [
    "files",
    "jobs",
    "quiet",
    "progress",
    "out",
    "shards_at_once",
    "only",
    "list",
    "assemble",
    "in_flight",
];

/// What every mode shares: the folders, the command as the manifest records it, the workers.
struct Batch {
    command: &'static str,
    flags: BTreeMap<String, Vec<String>>,
    in_dir: PathBuf,
    out_dir: PathBuf,
    shards: Vec<Shard>,
    outputs: Vec<ShardOutputs>,
    jobs: usize,
    shards_at_once: usize,
    max_line_bytes: usize,
    compress: Option<CompressArg>,
    quiet: bool,
}

pub fn run(args: BatchArgs, matches: &ArgMatches) -> anyhow::Result<Outcome> {
    if let Some(dir) = &args.status {
        return status(dir);
    }
    let Some(command) = &args.command else {
        bail!(
            "batch: name a command: batch validate|migrate|filter [FLAGS] IN_DIR --out OUT_DIR, \
             or batch --status OUT_DIR"
        );
    };
    let (name, sub) = matches
        .subcommand()
        .ok_or_else(|| anyhow!("batch: no command"))?;
    let flags = flags(name, sub);
    // Every op is built (and its flags checked) before any file is touched.
    match command {
        BatchCommand::Validate(a) => {
            let op = validate::shard_op(a)?;
            let batch = Batch::new(&args, "validate", flags, &a.input, &a.output)?;
            batch.dispatch(&args, &op, Slot::Secondary)
        }
        BatchCommand::Migrate(a) => {
            let op = migrate::shard_op(a)?;
            let batch = Batch::new(&args, "migrate", flags, &a.input, &a.output)?;
            batch.dispatch(&args, &op, Slot::Primary)
        }
        BatchCommand::Filter(a) => {
            let op = filter::shard_op(a)?;
            let batch = Batch::new(&args, "filter", flags, &a.input, &a.output)?;
            batch.dispatch(&args, &op, Slot::Primary)
        }
    }
}

/// The command's options as the manifest records them: every one that decides the outputs,
/// with its values as given or defaulted, so that `--to 2` and no `--to` are the same run.
fn flags(command: &str, sub: &ArgMatches) -> BTreeMap<String, Vec<String>> {
    // The matches also hold the argument groups of flattened structs: keep the arguments.
    let definition = <BatchArgs as clap::Args>::augment_args(clap::Command::new("batch"));
    let arguments: BTreeSet<String> = definition
        .find_subcommand(command)
        .into_iter()
        .flat_map(|c| c.get_arguments())
        .map(|a| a.get_id().to_string())
        .collect();
    sub.ids()
        .filter(|id| arguments.contains(id.as_str()) && !NOT_FLAGS.contains(&id.as_str()))
        .filter_map(|id| {
            let values = sub.get_raw(id.as_str())?;
            let values = values.map(|v| v.to_string_lossy().into_owned()).collect();
            Some((id.as_str().to_owned(), normalised(id.as_str(), values)))
        })
        .collect()
}

/// Repeatable flags whose values are a set: `filter`'s predicates, each an OR within itself
/// (`--header`: each must hold). Their order and repeats change no output byte.
const SET_FLAGS: [&str; 9] = [
    "queue",
    "handler",
    "status",
    "error_type",
    "last_error_type",
    "outcome",
    "id",
    "header",
    "payload_contains",
];

/// A flag's values as the manifest records them, so that two command lines with the same
/// meaning are the same run: a set sorted and without repeats; `--queue-limit QUEUE=N`, a map
/// in which a later limit for the same queue replaces the earlier, as one limit per queue in
/// queue order. Any other flag keeps its values in the order given.
fn normalised(id: &str, mut values: Vec<String>) -> Vec<String> {
    if SET_FLAGS.contains(&id) {
        values.sort_unstable();
        values.dedup();
    } else if id == "queue_limit" {
        let mut limits = BTreeMap::new();
        for value in values {
            let queue = value.split_once('=').map_or(value.as_str(), |(q, _)| q);
            limits.insert(queue.to_owned(), value.clone());
        }
        values = limits.into_values().collect();
    }
    values
}

impl Batch {
    fn new(
        args: &BatchArgs,
        command: &'static str,
        flags: BTreeMap<String, Vec<String>>,
        input: &InputArgs,
        output: &OutputArgs,
    ) -> anyhow::Result<Batch> {
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
        if args.only.is_some() && args.shards_at_once.is_some() {
            bail!("batch: --shards-at-once with --only: --only runs one shard");
        }
        if output.line_buffered || output.progress {
            bail!("batch: --line-buffered and --progress are for single runs (batch prints a line per shard)");
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
        let shards = list_shards(in_dir)
            .with_context(|| format!("{}: cannot list the shards", in_dir.display()))?;
        if shards.is_empty() {
            bail!(
                "{}: no shards (files named *.jsonl, *.jsonl.zst or *.jsonl.gz)",
                in_dir.display()
            );
        }
        if let (Ok(a), Ok(b)) = (fs::canonicalize(in_dir), fs::canonicalize(&out_dir)) {
            if a == b {
                bail!("batch: --out must not be the input folder (the outputs are named like the shards)");
            }
        }
        let suffix = output.compress.map(|kind| match kind {
            CompressArg::Zstd => ".zst",
            CompressArg::Gzip => ".gz",
            CompressArg::None => "",
        });
        let outputs: Vec<_> = shards
            .iter()
            .map(|s| ShardOutputs::for_shard(&s.name, suffix))
            .collect();
        if let Some(name) = first_clash(&outputs) {
            bail!("batch: two shards would both write {name} in --out: rename one of them");
        }
        let jobs = run::jobs(input);
        Ok(Batch {
            command,
            flags,
            in_dir: in_dir.clone(),
            out_dir,
            shards,
            outputs,
            jobs,
            shards_at_once: args.shards_at_once.map_or(1, usize::from),
            max_line_bytes: input.max_line_bytes,
            compress: output.compress,
            quiet: output.quiet,
        })
    }

    fn dispatch<Op: LineOperation>(
        self,
        args: &BatchArgs,
        op: &Op,
        slot: Slot,
    ) -> anyhow::Result<Outcome> {
        if args.list {
            let mut out = io::stdout().lock();
            for shard in &self.shards {
                writeln!(out, "{}", shard.name)?;
            }
            return Ok(Outcome::Clean);
        }
        if let Some(name) = &args.only {
            return self.run_only(op, slot, name);
        }
        if let Some(entries) = &args.assemble {
            return self.assemble(entries, args.in_flight);
        }
        self.run_all(op, slot)
    }

    /// Runs every shard that is not done on its current input, `shards_at_once` at a time.
    fn run_all<Op: LineOperation>(self, op: &Op, slot: Slot) -> anyhow::Result<Outcome> {
        let started = Instant::now();
        let _lock = self.lock(true)?;
        let old = self.read_manifest()?;
        let manifest = self.plan(old.as_ref())?;
        self.remove_vanished(old.as_ref())?;
        let todo: Vec<usize> = (0..manifest.shards.len())
            .filter(|&i| !matches!(manifest.shards[i].state, State::Done { .. }))
            .collect();
        if !todo.is_empty() {
            remove_if_there(&self.out_dir.join(SUMMARY))?;
        }
        self.write_manifest(&manifest)?;

        let at_once = self.shards_at_once.clamp(1, todo.len().max(1));
        let jobs = (self.jobs / at_once).max(1);
        let next = AtomicUsize::new(0);
        let pending = manifest.shards.clone();
        // The shards' outputs are committed (zstd's last block, fsync, rename) and recorded on
        // a thread of their own, so that the next shard starts at once. One waits at most.
        let (commit_tx, commit_rx) =
            crossbeam_channel::bounded::<(usize, anyhow::Result<Written>)>(1);
        let (manifest, mut ran) = std::thread::scope(|scope| {
            for _ in 0..at_once {
                let commit_tx = commit_tx.clone();
                let (batch, next, todo, pending) = (&self, &next, &todo, &pending);
                scope.spawn(move || {
                    while let Some(&i) = todo.get(next.fetch_add(1, Ordering::Relaxed)) {
                        let written = batch.run_shard_files(op, slot, i, pending[i].size, jobs);
                        if commit_tx.send((i, written)).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(commit_tx);
            // Returning drops the receiver: then a worker's next send fails and it stops.
            self.commit_and_record(commit_rx, manifest)
        })?;
        ran.seconds = started.elapsed().as_secs_f64();
        if !self.quiet && todo.is_empty() {
            super::say(format_args!(
                "batch {}: {} shards, every one done on the same input: nothing to run",
                self.command,
                manifest.shards.len()
            ))?;
        } else if !self.quiet {
            let failed = count(&manifest, |s| matches!(s, State::Failed { .. }));
            super::say(format_args!(
                "batch {}: {} shards: {} run, {} unchanged, {failed} failed; this run: {}",
                self.command,
                manifest.shards.len(),
                todo.len(),
                manifest.shards.len() - todo.len(),
                ran.human()
            ))?;
        }
        self.finish(&manifest)
    }

    /// The committer: settles each shard the workers send, in the order they end, says how it
    /// went and records it in the manifest. Returns the manifest and the books of this run.
    fn commit_and_record(
        &self,
        shards: crossbeam_channel::Receiver<(usize, anyhow::Result<Written>)>,
        mut manifest: Manifest,
    ) -> anyhow::Result<(Manifest, Summary)> {
        let mut ran = Summary::default();
        let mut recorder = Recorder::default();
        loop {
            // A shard done is recorded when the next one is, or once the write is due.
            let received = match recorder.due_in() {
                Some(wait) => shards.recv_timeout(wait).map_err(|e| e.is_disconnected()),
                None => shards.recv().map_err(|_| true),
            };
            match received {
                Ok((i, written)) => {
                    let entry = self.settle(i, manifest.shards[i].clone(), written);
                    if let State::Done { summary, .. } = &entry.state {
                        ran.merge(summary);
                    }
                    let said = self.say(&entry);
                    manifest.shards[i] = entry;
                    if said.is_err() {
                        // Record what is done before the run ends on standard error's failure.
                        recorder.record(|| self.write_manifest(&manifest), true)?;
                        said?;
                    }
                }
                // Every worker is done.
                Err(true) => break,
                // The write is due.
                Err(false) => {}
            }
            // Work the manifest cannot record would be redone anyway: an error stops the run.
            recorder.record(|| self.write_manifest(&manifest), false)?;
        }
        recorder.record(|| self.write_manifest(&manifest), true)?;
        Ok((manifest, ran))
    }

    /// `--only NAME`: one shard, its entry on standard output.
    fn run_only<Op: LineOperation>(
        self,
        op: &Op,
        slot: Slot,
        name: &str,
    ) -> anyhow::Result<Outcome> {
        let Some(i) = self.shards.iter().position(|s| s.name == name) else {
            bail!(
                "--only {name:?}: no such shard in {} (see --list)",
                self.in_dir.display()
            );
        };
        fs::create_dir_all(&self.out_dir)
            .with_context(|| format!("{}: cannot make the folder", self.out_dir.display()))?;
        let old = self.read_manifest()?;
        let current = self.entry_for(i, old.as_ref())?;
        let entry = match current.state {
            State::Done { .. } => current,
            _ => {
                let written = self.run_shard_files(op, slot, i, current.size, self.jobs);
                let entry = self.settle(i, current, written);
                self.say(&entry)?;
                entry
            }
        };
        let mut out = io::stdout().lock();
        serde_json::to_writer(&mut out, &entry)?;
        writeln!(out)?;
        out.flush()?;
        match &entry.state {
            State::Done { summary, .. } => Ok(run::outcome(summary)),
            State::Failed { error } => bail!("{error}"),
            State::Pending => unreachable!("a shard run is done or failed"),
        }
    }

    /// `--assemble FILE`: the manifest and merged summary from the entries of `--only` runs.
    /// With `in_flight`, shards may still be running: their temporary files stay.
    fn assemble(self, entries: &Path, in_flight: bool) -> anyhow::Result<Outcome> {
        let given = read_entries(entries)?;
        let _lock = self.lock(!in_flight)?;
        let old = self.read_manifest()?;
        let mut manifest = self.plan(old.as_ref())?;
        for entry in given {
            let Some(i) = self.shards.iter().position(|s| s.name == entry.name) else {
                bail!(
                    "{}: an entry for {:?}, which is not a shard of {}",
                    entries.display(),
                    entry.name,
                    self.in_dir.display()
                );
            };
            let planned = &manifest.shards[i];
            let same_input = entry.size == planned.size && entry.blake3 == planned.blake3;
            let holds = match &entry.state {
                State::Done { .. } => entry.is_done_for(
                    planned.size,
                    &planned.blake3,
                    &self.outputs[i].names(),
                    &self.out_dir,
                ),
                State::Failed { .. } => same_input,
                State::Pending => false,
            };
            if holds {
                manifest.shards[i] = entry;
            } else if !self.quiet {
                super::say(format_args!(
                    "{}: the entry does not match the shard or its outputs now: left pending",
                    entry.name
                ))?;
            }
        }
        self.remove_vanished(old.as_ref())?;
        self.write_manifest(&manifest)?;
        if !self.quiet {
            let (merged, done) = manifest.merged();
            super::say(format_args!(
                "batch {}: {done} of {} shards done; {}",
                self.command,
                manifest.shards.len(),
                merged.human()
            ))?;
        }
        self.finish(&manifest)
    }

    /// The manifest as it stands before any shard runs: the old entries that still hold
    /// (same input, same outputs in place), every other shard pending. Costs the hashing of
    /// every shard, on the -j budget.
    fn plan(&self, old: Option<&Manifest>) -> anyhow::Result<Manifest> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(self.jobs)
            .build()
            .context("cannot start the hashing threads")?;
        let shards = pool.install(|| {
            use rayon::prelude::*;
            (0..self.shards.len())
                .into_par_iter()
                .map(|i| self.entry_for(i, old))
                .collect::<anyhow::Result<Vec<_>>>()
        })?;
        Ok(Manifest {
            format: MANIFEST_FORMAT,
            command: self.command.to_owned(),
            flags: self.flags.clone(),
            shards,
        })
    }

    /// Shard `i`'s entry: the old one when it is done on the same input with its outputs in
    /// place, else a pending one (failed when the shard cannot be read).
    fn entry_for(&self, i: usize, old: Option<&Manifest>) -> anyhow::Result<Entry> {
        let shard = &self.shards[i];
        let (blake3, size) = match hash_file(&shard.path) {
            Ok(hashed) => hashed,
            Err(e) => {
                return Ok(Entry {
                    name: shard.name.clone(),
                    size: shard.size,
                    blake3: String::new(),
                    state: State::Failed {
                        error: format!("{}: cannot read: {e}", shard.name),
                    },
                })
            }
        };
        let names = self.outputs[i].names();
        let kept = old
            .and_then(|m| m.shards.iter().find(|e| e.name == shard.name))
            .filter(|e| e.is_done_for(size, &blake3, &names, &self.out_dir));
        Ok(kept.cloned().unwrap_or(Entry {
            name: shard.name.clone(),
            size,
            blake3,
            state: State::Pending,
        }))
    }

    /// Commits what a shard's run wrote: its entry done, or failed with nothing in place.
    fn settle(&self, i: usize, pending: Entry, written: anyhow::Result<Written>) -> Entry {
        let committed = written.and_then(|(summary, files)| {
            files.commit()?;
            Ok(summary)
        });
        Entry {
            state: match committed {
                Ok(summary) => State::Done {
                    outputs: self.outputs[i].names().map(str::to_owned).to_vec(),
                    summary,
                },
                Err(e) => State::Failed {
                    error: format!("{e:#}"),
                },
            },
            ..pending
        }
    }

    /// Runs shard `i` on `jobs` workers into its outputs, not yet committed.
    fn run_shard_files<Op: LineOperation>(
        &self,
        op: &Op,
        slot: Slot,
        i: usize,
        hashed_size: u64,
        jobs: usize,
    ) -> anyhow::Result<Written> {
        let (shard, names) = (&self.shards[i], &self.outputs[i]);
        let started = Instant::now();
        let threads = u32::try_from(jobs).unwrap_or(u32::MAX);
        let open = |name: &str, compress: Option<CompressArg>| {
            let path = self.out_dir.join(name);
            let compression = match compress {
                Some(kind) => run::compression(kind, jobs),
                None => OutputCompression::from_name(&path, threads),
            };
            OutputFile::create_compressed(&path, compression)
                .with_context(|| format!("{}: cannot create output", path.display()))
        };
        let lines = open(&names.lines, self.compress)?;
        let mut files = RunFiles {
            primary: None,
            secondary: None,
            rejects: Some(open(&names.rejects, self.compress)?),
            summary: Some(open(&names.summary, Some(CompressArg::None))?),
            messages: None,
        };
        match slot {
            Slot::Primary => files.primary = Some(lines),
            Slot::Secondary => files.secondary = Some(lines),
        }
        let reader =
            File::open(&shard.path).with_context(|| format!("{}: cannot open", shard.name))?;
        // Named by its file name, not its path: the records are the same from any folder.
        let source = Source::Reader {
            name: shard.name.clone(),
            reader: Box::new(reader),
        };
        let options = PipelineOptions {
            jobs,
            max_line_bytes: self.max_line_bytes,
            ..PipelineOptions::default()
        };
        let run = Run {
            options,
            messages: false,
            progress: None,
            started,
        };
        let summary = run::execute(op, vec![source], run, &mut files)?;
        // The bytes run must be the bytes hashed: a shard rewritten meanwhile is not done.
        let now = fs::metadata(&shard.path)
            .with_context(|| format!("{}: cannot read", shard.name))?
            .len();
        if now != hashed_size {
            bail!(
                "{}: changed while it was read ({hashed_size} bytes hashed, {now} now)",
                shard.name
            );
        }
        Ok((summary, files))
    }

    /// A line per shard run on standard error (unless -q).
    fn say(&self, entry: &Entry) -> std::io::Result<()> {
        if self.quiet {
            return Ok(());
        }
        match &entry.state {
            State::Done { summary, .. } => {
                super::say(format_args!("{}: {}", entry.name, summary.human()))
            }
            State::Failed { error } => super::say(format_args!("{}: failed: {error}", entry.name)),
            State::Pending => Ok(()),
        }
    }

    /// Ends a run or an assembly: the merged summary when every shard is done, and the exit
    /// status a single run over every shard would have.
    fn finish(&self, manifest: &Manifest) -> anyhow::Result<Outcome> {
        let (merged, done) = manifest.merged();
        let summary_path = self.out_dir.join(SUMMARY);
        if done < manifest.shards.len() {
            remove_if_there(&summary_path)?;
            let not_done: Vec<_> = manifest
                .shards
                .iter()
                .filter(|e| !matches!(e.state, State::Done { .. }))
                .map(|e| e.name.as_str())
                .collect();
            let mut named = not_done[..not_done.len().min(5)].join(", ");
            if not_done.len() > 5 {
                named.push_str(&format!(" and {} more", not_done.len() - 5));
            }
            bail!(
                "{} of {} shards not done ({named}): rerun the same command to run them",
                not_done.len(),
                manifest.shards.len(),
            );
        }
        let mut out = OutputFile::create(&summary_path)
            .with_context(|| format!("{}: cannot create output", summary_path.display()))?;
        merged.write_json(&mut out)?;
        out.commit()?;
        Ok(run::outcome(&merged))
    }

    /// The manifest already in the output folder, if any: it must be of this command with
    /// the same flags, or its outputs could be taken for this run's.
    fn read_manifest(&self) -> anyhow::Result<Option<Manifest>> {
        let path = self.out_dir.join(MANIFEST);
        let Some(manifest) = load_manifest(&path)? else {
            return Ok(None);
        };
        if manifest.command != self.command || manifest.flags != self.flags {
            bail!(
                "{}: this folder holds the outputs of another run ({}): use another --out, \
                 or remove the folder to start over",
                self.out_dir.display(),
                differences(&manifest, self.command, &self.flags),
            );
        }
        Ok(Some(manifest))
    }

    fn write_manifest(&self, manifest: &Manifest) -> anyhow::Result<()> {
        let path = self.out_dir.join(MANIFEST);
        let mut out = OutputFile::create(&path)
            .with_context(|| format!("{}: cannot create output", path.display()))?;
        out.write_all(&manifest.to_json())?;
        out.commit()?;
        Ok(())
    }

    /// Makes the output folder and takes it for this run: one run at a time writes a
    /// manifest there. Then, with `clean`, removes the temporary files that a stopped run left.
    fn lock(&self, clean: bool) -> anyhow::Result<File> {
        fs::create_dir_all(&self.out_dir)
            .with_context(|| format!("{}: cannot make the folder", self.out_dir.display()))?;
        let path = self.out_dir.join(".rdq-batch.lock");
        let lock =
            File::create(&path).with_context(|| format!("{}: cannot create", path.display()))?;
        if lock.try_lock().is_err() {
            bail!(
                "{}: another batch run is writing this folder",
                self.out_dir.display()
            );
        }
        if !clean {
            return Ok(lock);
        }
        let mut removed = 0;
        for entry in fs::read_dir(&self.out_dir)? {
            let name = entry?.file_name();
            let name = name.to_string_lossy();
            // The names OutputFile gives its temporary files: with the lock held, no live run
            // writes here, so every one is stale.
            if rdq_envelope::io::is_temporary_file_name(&name) {
                remove_if_there(&self.out_dir.join(&*name))?;
                removed += 1;
            }
        }
        if removed > 0 && !self.quiet {
            super::say(format_args!(
                "removed {removed} temporary files a stopped run left"
            ))?;
        }
        Ok(lock)
    }

    /// Removes the outputs of shards that are no longer in the input folder.
    fn remove_vanished(&self, old: Option<&Manifest>) -> anyhow::Result<()> {
        let Some(old) = old else { return Ok(()) };
        let current: BTreeSet<&str> = self.outputs.iter().flat_map(|o| o.names()).collect();
        for entry in &old.shards {
            if self.shards.iter().any(|s| s.name == entry.name) {
                continue;
            }
            if let State::Done { outputs, .. } = &entry.state {
                for name in outputs.iter().filter(|n| !current.contains(n.as_str())) {
                    remove_if_there(&self.out_dir.join(name))?;
                }
            }
            if !self.quiet {
                super::say(format_args!(
                    "{}: no longer in {}: its outputs are removed",
                    entry.name,
                    self.in_dir.display()
                ))?;
            }
        }
        Ok(())
    }
}

/// When the manifest is rewritten: after each shard, unless that would take more than a tenth
/// of the time. With thousands of small shards the manifest is megabytes, and rewriting it
/// after every one would cost more than the shards (quadratic in their number); then it is
/// rewritten after every few, and a stopped run redoes the few it had not recorded.
#[derive(Default)]
struct Recorder {
    /// When the last write ended, and how long it took.
    last: Option<(Instant, std::time::Duration)>,
    /// Whether something is not written yet.
    behind: bool,
}

impl Recorder {
    /// How long until a write not yet made is due; `None` when nothing waits.
    fn due_in(&self) -> Option<std::time::Duration> {
        match self.last {
            Some((ended, took)) if self.behind => Some((took * 10).saturating_sub(ended.elapsed())),
            _ => None,
        }
    }

    /// Writes when something is behind and the write is due (or `last`).
    fn record(
        &mut self,
        write: impl FnOnce() -> anyhow::Result<()>,
        last: bool,
    ) -> anyhow::Result<()> {
        if !last {
            self.behind = true;
        }
        let due = self.due_in().is_none_or(|wait| wait.is_zero());
        if !self.behind || !(due || last) {
            return Ok(());
        }
        let started = Instant::now();
        write()?;
        self.last = Some((Instant::now(), started.elapsed()));
        self.behind = false;
        Ok(())
    }
}

fn count(manifest: &Manifest, which: impl Fn(&State) -> bool) -> usize {
    manifest.shards.iter().filter(|e| which(&e.state)).count()
}

fn remove_if_there(path: &Path) -> anyhow::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("{}: cannot remove", path.display()))
        }
        _ => Ok(()),
    }
}

fn load_manifest(path: &Path) -> anyhow::Result<Option<Manifest>> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("{}: cannot read", path.display())),
    };
    let manifest: Manifest = serde_json::from_slice(&bytes).with_context(|| {
        format!(
            "{}: not a manifest this rdq-envelope writes (format {MANIFEST_FORMAT})",
            path.display()
        )
    })?;
    if manifest.format != MANIFEST_FORMAT {
        bail!(
            "{}: manifest format {}, this rdq-envelope reads {MANIFEST_FORMAT}",
            path.display(),
            manifest.format
        );
    }
    Ok(Some(manifest))
}

fn read_entries(path: &Path) -> anyhow::Result<Vec<Entry>> {
    let reader: Box<dyn BufRead> = if path.as_os_str() == "-" {
        Box::new(io::stdin().lock())
    } else {
        let file = File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
        Box::new(io::BufReader::new(file))
    };
    let mut entries = Vec::new();
    for (n, line) in reader.lines().enumerate() {
        let line = line.with_context(|| format!("{}: cannot read", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let entry = serde_json::from_str(&line)
            .with_context(|| format!("{}:{}: not a manifest entry", path.display(), n + 1))?;
        entries.push(entry);
    }
    Ok(entries)
}

/// `migrate --to 2 ...`: the command and its flags as the manifest records them.
fn describe(command: &str, flags: &BTreeMap<String, Vec<String>>) -> String {
    let mut text = command.to_owned();
    for (name, values) in flags {
        let name = name.replace('_', "-");
        for value in values {
            match value.as_str() {
                "false" => {}
                "true" => text.push_str(&format!(" --{name}")),
                _ => text.push_str(&format!(" --{name}={value}")),
            }
        }
    }
    text
}

/// What differs between the run a manifest records and this one, for people.
fn differences(
    manifest: &Manifest,
    command: &str,
    flags: &BTreeMap<String, Vec<String>>,
) -> String {
    if manifest.command != command {
        return format!("batch {} there, batch {command} now", manifest.command);
    }
    let names: BTreeSet<&String> = manifest.flags.keys().chain(flags.keys()).collect();
    let shown = |values: Option<&Vec<String>>| match values {
        Some(values) => values.join(" "),
        None => "not given".to_owned(),
    };
    names
        .into_iter()
        .filter(|name| manifest.flags.get(*name) != flags.get(*name))
        .map(|name| {
            format!(
                "--{}: {} there, {} now",
                name.replace('_', "-"),
                shown(manifest.flags.get(name)),
                shown(flags.get(name))
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// `batch --status DIR`: progress from the manifest alone.
fn status(dir: &Path) -> anyhow::Result<Outcome> {
    let path = dir.join(MANIFEST);
    let Some(manifest) = load_manifest(&path)? else {
        bail!(
            "{}: no manifest (no batch run has written there)",
            dir.display()
        );
    };
    let total = manifest.shards.len();
    let (books, done) = manifest.merged();
    let failed = count(&manifest, |s| matches!(s, State::Failed { .. }));
    let stored: u64 = manifest.shards.iter().map(|e| e.size).sum();
    let stored_done: u64 = manifest
        .shards
        .iter()
        .filter(|e| matches!(e.state, State::Done { .. }))
        .map(|e| e.size)
        .sum();
    let mb = |n: u64| n as f64 / 1e6;
    let mut out = io::stdout().lock();
    writeln!(out, "{}", describe(&manifest.command, &manifest.flags))?;
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
    out.flush()?;
    Ok(Outcome::Clean)
}
