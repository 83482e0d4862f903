//! Folders of shards (`rdq-envelope batch`): `validate`, `migrate` or `filter` over every shard of
//! a folder into another folder, resumably.
//!
//! Each shard is one run of the operation on the pipeline, writing `STEM.jsonl[.zst]`,
//! `STEM.rejects.jsonl[.zst]` and `STEM.summary.json` (see `ShardOutputs`). `manifest.json`
//! ([`Manifest`]) records the run's [`Config`] and every shard's input (size, BLAKE3), outputs,
//! books and state, and is rewritten atomically as shards end, so a stopped run loses only the
//! shards in flight: a rerun keeps the shards done on unchanged input and redoes the rest
//! ([`Batch::run`]). [`Batch::run_only`] and [`Batch::assemble`] split the same work across
//! machines (`contrib/spark`): the tasks print entries, the driver assembles them into the same
//! manifest a local run writes.
//!
//! The files, one idea each: `shards` (which files are shards, their outputs'
//! names, their hash), `config` (what a run is), `manifest` (its record), `plan` (what a
//! rerun keeps), `schedule` (running shards at once and recording them), `assemble` (one
//! shard alone, and entries into a manifest), `lock` (one run per folder, and what a stopped
//! run left), `place` (a folder or an `s3://` prefix, either side) and `object_lock` (one run
//! per prefix: a lock object with a heartbeat).

mod assemble;
mod config;
mod lock;
mod manifest;
#[cfg(feature = "s3")]
mod object_lock;
mod place;
mod plan;
mod schedule;
mod shards;

use std::io;
use std::path::{Path, PathBuf};
#[cfg(feature = "s3")]
use std::sync::atomic::AtomicBool;
#[cfg(feature = "s3")]
use std::sync::Arc;
use std::sync::Mutex;

pub use config::{
    Command, Compress, Config, FilterConfig, Limits, MigrateConfig, MigrateFrom, ValidateConfig,
};
pub use manifest::{read_entries, Entry, Manifest, State, MANIFEST, MANIFEST_FORMAT, SUMMARY};
pub use shards::Shard;
pub(crate) use shards::{first_clash, ShardOutputs};

use place::Place;

use crate::pipeline::{PipelineError, Summary};

/// Why a batch could not run, or a shard could not.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The folders, the shards or the manifest do not allow it; the message says why.
    #[error("{0}")]
    Refused(String),
    /// Something failed on a path: what was being done (`PATH: cannot create`), and why.
    #[error("{context}")]
    Failed {
        /// What was being done, on which path.
        context: String,
        /// The cause.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A shard's pipeline failed.
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
    /// An input or output failed (its error names it), or the observer did.
    #[error(transparent)]
    Io(#[from] io::Error),
}

impl Error {
    /// An error of `context`, caused by `source`.
    fn at(context: String, source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Error {
        Error::Failed {
            context,
            source: source.into(),
        }
    }

    /// The error and its causes on one line, `what: why: why`.
    pub fn chain(&self) -> String {
        let mut text = self.to_string();
        let mut cause = std::error::Error::source(self);
        while let Some(e) = cause {
            text.push_str(&format!(": {e}"));
            cause = e.source();
        }
        text
    }
}

/// The result of a batch step.
pub type Result<T> = std::result::Result<T, Error>;

/// What a batch tells people as it goes. The engine calls [`Observer::event`] from one thread
/// (the one that called it); an error there ends the run (after the manifest records what is
/// done).
#[derive(Debug)]
pub enum Event<'a> {
    /// Temporary files a stopped run left in the output folder were removed (how many).
    TemporaryFilesRemoved(usize),
    /// The output prefix's lock was left by a run not heard from for a minute (its host, pid
    /// and last heartbeat, as the lock says): this run took it over.
    StaleLockTakenOver(&'a str),
    /// A shard is no longer in the input folder: its outputs were removed.
    Vanished(&'a str),
    /// A shard's run ended: its entry, done or failed.
    ShardEnded(&'a Entry),
    /// An entry given to [`Batch::assemble`] does not match its shard or its outputs now: the
    /// shard is left pending.
    LeftPending(&'a str),
    /// [`Batch::run`] ended: `run` shards were run (`failed` of them failed) and the others
    /// were done on the same input already; `books` adds up this run's.
    Ran {
        /// The shards in the folder.
        shards: usize,
        /// The shards run.
        run: usize,
        /// The shards failed.
        failed: usize,
        /// This run's books.
        books: &'a Summary,
    },
    /// [`Batch::assemble`] ended: `done` of `shards` are done; `books` adds up theirs.
    Assembled {
        /// The shards done.
        done: usize,
        /// The shards in the folder.
        shards: usize,
        /// Their books.
        books: &'a Summary,
    },
}

/// Who hears a batch's [`Event`]s (a closure will do).
pub trait Observer {
    /// Tells of `event`; an error ends the run.
    fn event(&mut self, event: Event<'_>) -> io::Result<()>;
}

impl<F: FnMut(Event<'_>) -> io::Result<()>> Observer for F {
    fn event(&mut self, event: Event<'_>) -> io::Result<()> {
        self(event)
    }
}

/// Where a batch reads and writes, and on how many threads. Either folder may be an
/// `s3://bucket/prefix/` URL (feature `s3`; a missing final `/` is implied).
#[derive(Debug, Clone)]
pub struct Folders {
    /// The input folder: its shards.
    pub input: PathBuf,
    /// The output folder (made if missing).
    pub output: PathBuf,
    /// Worker threads in all (hashing, and the shards' pipelines).
    pub jobs: usize,
    /// How many shards run at once, sharing the workers.
    pub shards_at_once: usize,
    /// The most input bytes in one frame of a zstd output (`--zstd-frame`; default
    /// [`ZSTD_FRAME_BYTES_DEFAULT`](crate::io::ZSTD_FRAME_BYTES_DEFAULT)).
    pub zstd_frame_bytes: u32,
}

/// A batch: its configuration, its folders and its shards, listed and named.
#[derive(Debug)]
pub struct Batch {
    config: Config,
    folders: Folders,
    input: Place,
    output: Place,
    shards: Vec<Shard>,
    outputs: Vec<ShardOutputs>,
    /// On object storage, the ETag of the manifest as this run last read or wrote it: each
    /// rewrite is conditional on it, so that a manifest another writer replaced is never
    /// overwritten.
    manifest_tag: Mutex<Option<String>>,
    /// Set when this run's lock on an output prefix was taken over (its heartbeat could not
    /// refresh it): the run stops at its next manifest write.
    #[cfg(feature = "s3")]
    lock_lost: Arc<AtomicBool>,
}

impl Batch {
    /// Lists the shards of `folders.input` and names their outputs. Refuses an input folder
    /// without shards, an output folder that is the input folder, and two shards that would
    /// write the same name.
    pub fn new(config: Config, folders: Folders) -> Result<Batch> {
        let input = Place::parse(&folders.input)?;
        let output = Place::parse(&folders.output)?;
        // An object store's error names the prefix already.
        let shards = input.shards().map_err(|e| {
            if input.is_remote() {
                Error::Io(e)
            } else {
                Error::at(format!("{input}: cannot list the shards"), e)
            }
        })?;
        if shards.is_empty() {
            let what = if input.is_remote() {
                "objects"
            } else {
                "files"
            };
            return Err(Error::Refused(format!(
                "{input}: no shards ({what} named *.jsonl, *.jsonl.zst or *.jsonl.gz)"
            )));
        }
        if input.same_as(&output) {
            return Err(Error::Refused(
                "batch: --out must not be the input folder (the outputs are named like the shards)"
                    .into(),
            ));
        }
        let suffix = config.compress.map(Compress::suffix);
        let outputs: Vec<_> = shards
            .iter()
            .map(|s| ShardOutputs::for_shard(&s.name, suffix))
            .collect();
        if let Some(name) = first_clash(&outputs) {
            return Err(Error::Refused(format!(
                "batch: two shards would both write {name} in --out: rename one of them"
            )));
        }
        Ok(Batch {
            config,
            folders,
            input,
            output,
            shards,
            outputs,
            manifest_tag: Mutex::new(None),
            #[cfg(feature = "s3")]
            lock_lost: Arc::new(AtomicBool::new(false)),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The folders.
    pub fn folders(&self) -> &Folders {
        &self.folders
    }

    /// The shards, in name order.
    pub fn shards(&self) -> &[Shard] {
        &self.shards
    }

    /// Every file a run may write in the output folder: the shards' outputs, the manifest and
    /// the summary.
    pub fn output_paths(&self) -> Vec<PathBuf> {
        let names = self.outputs.iter().flat_map(|o| o.names());
        names
            .chain([MANIFEST, SUMMARY])
            .map(|name| self.out(name))
            .collect()
    }

    fn out(&self, name: &str) -> PathBuf {
        self.output.join(name)
    }

    /// Ends a run or an assembly: with every shard done, writes the merged books to
    /// `summary.json` and returns them; else removes `summary.json` and refuses, naming the
    /// shards not done.
    pub fn finish(&self, manifest: &Manifest) -> Result<Summary> {
        let (merged, done) = manifest.merged();
        let summary_path = self.out(SUMMARY);
        if done < manifest.shards.len() {
            self.output.remove(SUMMARY)?;
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
            return Err(Error::Refused(format!(
                "{} of {} {} not done ({named}): rerun the same command to run them",
                not_done.len(),
                manifest.shards.len(),
                crate::report::noun(manifest.shards.len() as u64, "shard"),
            )));
        }
        let mut out = crate::io::OutputFile::create(&summary_path).map_err(|e| {
            Error::at(
                format!("{}: cannot create output", summary_path.display()),
                e,
            )
        })?;
        merged.write_json(&mut out)?;
        out.commit()?;
        Ok(merged)
    }
}

/// `batch --status DIR`: the manifest in `dir` (a folder or an `s3://` prefix), refused when
/// there is none.
pub fn status(dir: &Path) -> Result<Manifest> {
    let place = Place::parse(dir)?;
    let Some((bytes, _)) = place.read(MANIFEST)? else {
        return Err(Error::Refused(format!(
            "{place}: no manifest (no batch run has written there)"
        )));
    };
    manifest::parse(&bytes, &place.join(MANIFEST))
}
