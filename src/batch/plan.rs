//! What a rerun keeps: the manifest in the output folder must record the same configuration,
//! and of its entries those done on the same input (a file's size and BLAKE3, an object's size
//! and ETag) with their outputs in place hold; every other shard is pending again, and the
//! outputs of shards gone from the input folder are removed.

use std::collections::BTreeSet;

use rayon::prelude::*;

use super::manifest::{self, Entry, Manifest, State, MANIFEST, MANIFEST_FORMAT};
use super::place::{Place, Present};
use super::shards::hash_file;
use super::{Batch, Error, Event, Observer, Result};

impl Batch {
    /// The manifest already in the output folder, if any: it must record this configuration,
    /// or its outputs could be taken for this run's.
    pub(super) fn read_manifest(&self) -> Result<Option<Manifest>> {
        let Some((bytes, e_tag)) = self.output.read(MANIFEST)? else {
            return Ok(None);
        };
        let manifest = manifest::parse(&bytes, &self.out(MANIFEST))?;
        *self.manifest_tag.lock().unwrap_or_else(|e| e.into_inner()) = e_tag;
        if manifest.config != self.config {
            return Err(Error::Refused(format!(
                "{}: this folder holds the outputs of another run ({}): use another --out, \
                 or remove the folder to start over",
                self.output,
                manifest.config.differences(&self.config),
            )));
        }
        Ok(Some(manifest))
    }

    /// Writes `manifest` into the output folder, atomically. On object storage the write is
    /// conditional: on the ETag this run read or last wrote, or on there being none; a lost
    /// condition means that another writer replaced it, and the run stops rather than
    /// overwrite what that writer recorded.
    pub(super) fn write_manifest(&self, manifest: &Manifest) -> Result<()> {
        match &self.output {
            Place::Dir(_) => manifest::write(&self.out(MANIFEST), manifest),
            #[cfg(feature = "s3")]
            Place::Prefix { bucket, prefix } => {
                use crate::io::remote::objects::{put_if, Written};
                use std::sync::atomic::Ordering;
                let url = self.out(MANIFEST).display().to_string();
                if self.lock_lost.load(Ordering::SeqCst) {
                    return Err(Error::Refused(format!(
                        "{}: this run's lock was taken over by another run (its heartbeat \
                         found the lock replaced): stopped, {url} is left to that run",
                        self.output
                    )));
                }
                let mut tag = self.manifest_tag.lock().unwrap_or_else(|e| e.into_inner());
                let key = format!("{prefix}{MANIFEST}");
                match put_if(bucket, &key, manifest.to_json(), tag.as_deref())? {
                    Written::Done(Some(new)) => {
                        *tag = Some(new);
                        Ok(())
                    }
                    Written::Done(None) => Err(Error::Refused(format!(
                        "{url}: the store gives no ETag, without which the manifest cannot be \
                         rewritten safely"
                    ))),
                    Written::Lost => Err(Error::Refused(format!(
                        "{url}: created or replaced by another writer during this run (its \
                         ETag changed): stopped, so as not to overwrite it; see `batch --status`, \
                         then rerun"
                    ))),
                }
            }
        }
    }

    /// The manifest as it stands before any shard runs: the old entries that still hold
    /// (same input, same outputs in place), every other shard pending. Costs the hashing of
    /// every shard, on the workers.
    pub(super) fn plan(&self, old: Option<&Manifest>) -> Result<Manifest> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(self.folders.jobs)
            .build()
            .map_err(|e| Error::at("cannot start the hashing threads".into(), e))?;
        let present = self.output.present()?;
        let shards = pool.install(|| {
            (0..self.shards.len())
                .into_par_iter()
                .map(|i| self.entry_for(i, old, &present))
                .collect()
        });
        Ok(Manifest {
            format_version: MANIFEST_FORMAT,
            config: self.config.clone(),
            shards,
        })
    }

    /// Shard `i`'s entry: the old one when it is done on the same input with its outputs
    /// `present`, else a pending one (failed when the shard cannot be read). A file is hashed
    /// here; an object is known by its size and ETag as listed, and hashed only as it is read
    /// for its run (reading every object twice would double the traffic).
    pub(super) fn entry_for(&self, i: usize, old: Option<&Manifest>, present: &Present) -> Entry {
        let shard = &self.shards[i];
        let hashed = match shard.e_tag {
            Some(_) => Ok((String::new(), shard.size)),
            None => hash_file(&shard.path),
        };
        let (blake3, size) = match hashed {
            Ok(hashed) => hashed,
            Err(e) => {
                return Entry {
                    name: shard.name.clone(),
                    size: shard.size,
                    blake3: String::new(),
                    e_tag: None,
                    state: State::Failed {
                        error: format!("{}: cannot read: {e}", shard.name),
                    },
                }
            }
        };
        let now = Entry {
            name: shard.name.clone(),
            size,
            blake3,
            e_tag: shard.e_tag.clone(),
            state: State::Pending,
        };
        let names = self.outputs[i].names();
        let kept = old
            .and_then(|m| m.shards.iter().find(|e| e.name == shard.name))
            .filter(|e| e.is_done_for(&now, &names, |name| present.has(name)));
        kept.cloned().unwrap_or(now)
    }

    /// Removes the outputs of shards that are no longer in the input folder.
    pub(super) fn remove_vanished(
        &self,
        old: Option<&Manifest>,
        observer: &mut dyn Observer,
    ) -> Result<()> {
        let Some(old) = old else { return Ok(()) };
        let current: BTreeSet<&str> = self.outputs.iter().flat_map(|o| o.names()).collect();
        for entry in &old.shards {
            if self.shards.iter().any(|s| s.name == entry.name) {
                continue;
            }
            if let State::Done { outputs, .. } = &entry.state {
                for name in outputs.iter().filter(|n| !current.contains(n.as_str())) {
                    self.output.remove(name)?;
                }
            }
            observer.event(Event::Vanished(&entry.name))?;
        }
        Ok(())
    }
}
