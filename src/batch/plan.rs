//! What a rerun keeps: the manifest in the output folder must record the same configuration,
//! and of its entries those done on the same input (size and BLAKE3) with their outputs in
//! place hold; every other shard is pending again, and the outputs of shards gone from the
//! input folder are removed.

use std::collections::BTreeSet;

use rayon::prelude::*;

use super::manifest::{self, Entry, Manifest, State, MANIFEST, MANIFEST_FORMAT};
use super::shards::hash_file;
use super::{lock, Batch, Error, Event, Observer, Result};

impl Batch {
    /// The manifest already in the output folder, if any: it must record this configuration,
    /// or its outputs could be taken for this run's.
    pub(super) fn read_manifest(&self) -> Result<Option<Manifest>> {
        let Some(manifest) = manifest::load(&self.out(MANIFEST))? else {
            return Ok(None);
        };
        if manifest.config != self.config {
            return Err(Error::Refused(format!(
                "{}: this folder holds the outputs of another run ({}): use another --out, \
                 or remove the folder to start over",
                self.folders.output.display(),
                manifest.config.differences(&self.config),
            )));
        }
        Ok(Some(manifest))
    }

    /// Writes `manifest` into the output folder, atomically.
    pub(super) fn write_manifest(&self, manifest: &Manifest) -> Result<()> {
        manifest::write(&self.out(MANIFEST), manifest)
    }

    /// The manifest as it stands before any shard runs: the old entries that still hold
    /// (same input, same outputs in place), every other shard pending. Costs the hashing of
    /// every shard, on the workers.
    pub(super) fn plan(&self, old: Option<&Manifest>) -> Result<Manifest> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(self.folders.jobs)
            .build()
            .map_err(|e| Error::at("cannot start the hashing threads".into(), e))?;
        let shards = pool.install(|| {
            (0..self.shards.len())
                .into_par_iter()
                .map(|i| self.entry_for(i, old))
                .collect()
        });
        Ok(Manifest {
            format_version: MANIFEST_FORMAT,
            config: self.config.clone(),
            shards,
        })
    }

    /// Shard `i`'s entry: the old one when it is done on the same input with its outputs in
    /// place, else a pending one (failed when the shard cannot be read).
    pub(super) fn entry_for(&self, i: usize, old: Option<&Manifest>) -> Entry {
        let shard = &self.shards[i];
        let (blake3, size) = match hash_file(&shard.path) {
            Ok(hashed) => hashed,
            Err(e) => {
                return Entry {
                    name: shard.name.clone(),
                    size: shard.size,
                    blake3: String::new(),
                    state: State::Failed {
                        error: format!("{}: cannot read: {e}", shard.name),
                    },
                }
            }
        };
        let names = self.outputs[i].names();
        let kept = old
            .and_then(|m| m.shards.iter().find(|e| e.name == shard.name))
            .filter(|e| e.is_done_for(size, &blake3, &names, &self.folders.output));
        kept.cloned().unwrap_or(Entry {
            name: shard.name.clone(),
            size,
            blake3,
            state: State::Pending,
        })
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
                    lock::remove_if_there(&self.out(name))?;
                }
            }
            observer.event(Event::Vanished(&entry.name))?;
        }
        Ok(())
    }
}
