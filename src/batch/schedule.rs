//! Running the shards: `shards_at_once` workers take the pending shards in name order and run
//! each on its share of the threads, while a committer thread of its own commits what each
//! wrote, says how it went and records it in the manifest, no more often than a tenth of the
//! time allows ([`Recorder`]).

use std::io::{self, Read};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;

use super::manifest::{Entry, Manifest, State, SUMMARY};
use super::{Batch, Command, Compress, Error, Event, Observer, Result};
use crate::io::{OutputCompression, OutputFile};
use crate::ops::output;
use crate::pipeline::{self, LineOperation, Outputs, PipelineOptions, Source, Summary};

/// A shard's books and its outputs (lines, rejects, summary), written but not yet committed.
pub(super) struct Written {
    summary: Summary,
    files: [OutputFile; 3],
    /// The BLAKE3 hash of the shard's bytes as read.
    blake3: String,
}

impl Batch {
    /// Runs every shard that is not done on its current input, `shards_at_once` at a time,
    /// with `op` (the operation the configuration describes). Returns the manifest as
    /// recorded; [`Batch::finish`] then writes the merged books.
    pub fn run<Op: LineOperation>(&self, op: &Op, observer: &mut dyn Observer) -> Result<Manifest> {
        let started = Instant::now();
        let _lock = self.lock(true, observer)?;
        let old = self.read_manifest()?;
        let manifest = self.plan(old.as_ref())?;
        self.remove_vanished(old.as_ref(), observer)?;
        let todo: Vec<usize> = (0..manifest.shards.len())
            .filter(|&i| !matches!(manifest.shards[i].state, State::Done { .. }))
            .collect();
        if !todo.is_empty() {
            self.output.remove(SUMMARY)?;
        }
        self.write_manifest(&manifest)?;

        let at_once = self.folders.shards_at_once.clamp(1, todo.len().max(1));
        let jobs = (self.folders.jobs / at_once).max(1);
        let next = AtomicUsize::new(0);
        let pending = manifest.shards.clone();
        // The shards' outputs are committed (zstd's last block, fsync, rename) and recorded on
        // a thread of their own, so that the next shard starts at once. One waits at most.
        let (commit_tx, commit_rx) = crossbeam_channel::bounded::<(usize, Result<Written>)>(1);
        let (manifest, mut ran) = std::thread::scope(|scope| {
            let mut started = 0;
            for _ in 0..at_once {
                let commit_tx = commit_tx.clone();
                let (next, todo, pending) = (&next, &todo, &pending);
                // A shard's thread is its pipeline's writer, which may apply the operation
                // too: it gets the stack the operation asks of its workers.
                let mut builder = std::thread::Builder::new().name("rdq-shard".into());
                if let Some(bytes) = op.worker_stack_bytes() {
                    builder = builder.stack_size(bytes);
                }
                let spawned = builder.spawn_scoped(scope, move || {
                    while let Some(&i) = todo.get(next.fetch_add(1, Ordering::Relaxed)) {
                        let written = self.run_shard(op, i, &pending[i], jobs);
                        if commit_tx.send((i, written)).is_err() {
                            break;
                        }
                    }
                });
                // The shards left wait for the threads that did start.
                match spawned {
                    Ok(_) => started += 1,
                    Err(e) if started == 0 => return Err(e.into()),
                    Err(_) => break,
                }
            }
            drop(commit_tx);
            // Returning drops the receiver: then a worker's next send fails and it stops.
            self.commit_and_record(commit_rx, manifest, observer)
        })?;
        ran.seconds = started.elapsed().as_secs_f64();
        let failed = manifest
            .shards
            .iter()
            .filter(|e| matches!(e.state, State::Failed { .. }))
            .count();
        observer.event(Event::Ran {
            shards: manifest.shards.len(),
            run: todo.len(),
            failed,
            books: &ran,
        })?;
        Ok(manifest)
    }

    /// The committer: settles each shard the workers send, in the order they end, says how it
    /// went and records it in the manifest. Returns the manifest and the books of this run.
    fn commit_and_record(
        &self,
        shards: Receiver<(usize, Result<Written>)>,
        mut manifest: Manifest,
        observer: &mut dyn Observer,
    ) -> Result<(Manifest, Summary)> {
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
                    let said = observer.event(Event::ShardEnded(&entry));
                    manifest.shards[i] = entry;
                    if said.is_err() {
                        // Record what is done before the run ends on the observer's failure.
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

    /// Commits what a shard's run wrote: its entry done, or failed with nothing in place.
    pub(super) fn settle(&self, i: usize, pending: Entry, written: Result<Written>) -> Entry {
        let committed = written.and_then(
            |Written {
                 summary,
                 files,
                 blake3,
             }| {
                crate::io::commit_all(files)?;
                Ok((summary, blake3))
            },
        );
        match committed {
            // A file's hash is the one planned; an object's is known only now.
            Ok((summary, blake3)) => Entry {
                blake3,
                state: State::Done {
                    outputs: self.outputs[i].names().map(str::to_owned).to_vec(),
                    summary,
                },
                ..pending
            },
            Err(e) => Entry {
                state: State::Failed { error: e.chain() },
                ..pending
            },
        }
    }

    /// Runs shard `i` on `jobs` workers into its outputs, not yet committed.
    pub(super) fn run_shard<Op: LineOperation>(
        &self,
        op: &Op,
        i: usize,
        planned: &Entry,
        jobs: usize,
    ) -> Result<Written> {
        let (shard, names) = (&self.shards[i], &self.outputs[i]);
        let started = Instant::now();
        let threads = u32::try_from(jobs).unwrap_or(u32::MAX);
        let frame_bytes = self.folders.zstd_frame_bytes;
        let open = |name: &str, compress: Option<Compress>| {
            let path = self.out(name);
            let compression = match compress {
                Some(Compress::Zstd) => OutputCompression::Zstd {
                    threads,
                    frame_bytes,
                },
                Some(Compress::Gzip) => OutputCompression::Gzip,
                Some(Compress::None) => OutputCompression::None,
                None => OutputCompression::from_name(&path, threads).with_zstd_frame(frame_bytes),
            };
            OutputFile::create_compressed(&path, compression)
                .map_err(|e| Error::at(format!("{}: cannot create output", path.display()), e))
        };
        let mut lines = open(&names.lines, self.config.compress)?;
        let mut rejects = open(&names.rejects, self.config.compress)?;
        let mut summary_file = open(&names.summary, Some(Compress::None))?;
        crate::io::between_reads(&shard.path);
        let opened = self
            .input
            .open(shard)
            .map_err(|e| Error::at(format!("{}: cannot open", shard.name), e))?;
        // The bytes read are hashed as they are read: the manifest must never record the
        // hash of other bytes than the ones the outputs were made from. The reader is shared
        // so that what the pipeline leaves unread is hashed from where it stopped.
        let read = Arc::new(Mutex::new((blake3::Hasher::new(), 0u64)));
        let shared = Arc::new(Mutex::new(opened));
        // Named by its file name, not its path: the records are the same from any folder.
        let source = Source::Reader {
            name: shard.name.clone(),
            reader: Box::new(Hashing {
                inner: Arc::clone(&shared),
                read: Arc::clone(&read),
            }),
        };
        let options = PipelineOptions {
            jobs,
            max_line_bytes: self.config.limits.max_line_bytes,
            ..PipelineOptions::default()
        };
        // validate's valid lines are its secondary output; the others write theirs first.
        let lines_are = match self.config.command {
            Command::Validate(_) => output::SECONDARY,
            _ => output::PRIMARY,
        };
        let outputs = Outputs::none()
            .to(lines_are, &mut lines)
            .to(output::REJECTS, &mut rejects);
        // A shard's summary is its books alone: what its operation adds up is not recorded.
        let (mut summary, _) = pipeline::run(vec![source], op, options, outputs, None)?;
        summary.seconds = started.elapsed().as_secs_f64();
        debug_assert!(summary.balances());
        summary.write_json(&mut summary_file)?;
        // The bytes run must be the bytes hashed: a shard rewritten meanwhile is not done. What
        // the reader left unread (past a compressed stream's end) is hashed from where it
        // stopped.
        let mut hashing = Hashing {
            inner: shared,
            read: Arc::clone(&read),
        };
        io::copy(&mut hashing, &mut io::sink())
            .map_err(|e| Error::at(format!("{}: cannot read", shard.name), e))?;
        let (hasher, size) = &*read.lock().unwrap_or_else(|e| e.into_inner());
        let blake3 = hasher.finalize().to_hex();
        // An object was planned without its hash: every range was read under the ETag listed
        // (`If-Match`), so its size is what remains to check.
        let planned_hash = match planned.e_tag {
            Some(_) => blake3.as_str(),
            None => planned.blake3.as_str(),
        };
        if (*size, blake3.as_str()) != (planned.size, planned_hash) {
            return Err(Error::Refused(format!(
                "{}: changed between its hashing and its reading ({} bytes hashed, {size} \
                 read, another BLAKE3): not done, run again",
                shard.name, planned.size
            )));
        }
        Ok(Written {
            summary,
            files: [lines, rejects, summary_file],
            blake3: blake3.to_string(),
        })
    }
}

/// A shard's reader that hashes what it reads (BLAKE3 and the byte count).
struct Hashing {
    inner: Arc<Mutex<Box<dyn Read + Send>>>,
    read: Arc<Mutex<(blake3::Hasher, u64)>>,
}

impl Read for Hashing {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self
            .inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .read(buf)?;
        let mut read = self.read.lock().unwrap_or_else(|e| e.into_inner());
        read.0.update(&buf[..n]);
        read.1 += n as u64;
        Ok(n)
    }
}

/// When the manifest is rewritten: after each shard, unless that would take more than a tenth
/// of the time. With thousands of small shards the manifest is megabytes, and rewriting it
/// after every one would cost more than the shards (quadratic in their number); then it is
/// rewritten after every few, and a stopped run redoes the few it had not recorded.
#[derive(Default)]
struct Recorder {
    /// When the last write ended, and how long it took.
    last: Option<(Instant, Duration)>,
    /// Whether something is not written yet.
    behind: bool,
}

impl Recorder {
    /// How long until a write not yet made is due; `None` when nothing waits.
    fn due_in(&self) -> Option<Duration> {
        match self.last {
            Some((ended, took)) if self.behind => Some((took * 10).saturating_sub(ended.elapsed())),
            _ => None,
        }
    }

    /// Writes when something is behind and the write is due (or `last`).
    fn record(&mut self, write: impl FnOnce() -> Result<()>, last: bool) -> Result<()> {
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
