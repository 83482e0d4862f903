//! The same work split across machines (`contrib/spark`): each task runs one shard alone and
//! prints its entry ([`Batch::run_only`]); the driver assembles the entries into the manifest
//! a local run writes ([`Batch::assemble`]), keeping only those that hold for the shards and
//! outputs as they are now.

use std::path::Path;

use super::manifest::{Entry, Manifest, State};
use super::{Batch, Error, Event, Observer, Result};
use crate::pipeline::LineOperation;

impl Batch {
    /// Runs the shard named `name` alone, on every worker, unless the manifest has it done on
    /// the same input, and returns its entry (done or failed). The manifest is not written.
    pub fn run_only<Op: LineOperation>(
        &self,
        op: &Op,
        name: &str,
        observer: &mut dyn Observer,
    ) -> Result<Entry> {
        let Some(i) = self.shards.iter().position(|s| s.name == name) else {
            return Err(Error::Refused(format!(
                "--only {name:?}: no such shard in {} (see --list)",
                self.input
            )));
        };
        self.output.make()?;
        let old = self.read_manifest()?;
        let present = self.output.present()?;
        let current = self.entry_for(i, old.as_ref(), &present);
        if let State::Done { .. } = current.state {
            return Ok(current);
        }
        let written = self.run_shard(op, i, &current, self.folders.jobs);
        let entry = self.settle(i, current, written);
        observer.event(Event::ShardEnded(&entry))?;
        Ok(entry)
    }

    /// Writes the manifest from `given`, the entries of [`run_only`](Batch::run_only) runs
    /// (read from `source`, named in errors): each one that holds for its shard and outputs as
    /// they are now replaces the planned entry; the others leave their shard pending. With
    /// `in_flight`, shards may still be running, so temporary files are left alone. Returns
    /// the manifest written; [`Batch::finish`] then writes the merged books.
    pub fn assemble(
        &self,
        given: Vec<Entry>,
        source: &Path,
        in_flight: bool,
        observer: &mut dyn Observer,
    ) -> Result<Manifest> {
        let _lock = self.lock(!in_flight, observer)?;
        let old = self.read_manifest()?;
        let mut manifest = self.plan(old.as_ref())?;
        let present = self.output.present()?;
        for entry in given {
            let Some(i) = self.shards.iter().position(|s| s.name == entry.name) else {
                return Err(Error::Refused(format!(
                    "{}: an entry for {:?}, which is not a shard of {}",
                    source.display(),
                    entry.name,
                    self.input
                )));
            };
            let planned = &manifest.shards[i];
            let holds = match &entry.state {
                State::Done { .. } => {
                    entry.is_done_for(planned, &self.outputs[i].names(), |name| present.has(name))
                }
                State::Failed { .. } => entry.same_input(planned),
                State::Pending => false,
            };
            if holds {
                manifest.shards[i] = entry;
            } else {
                observer.event(Event::LeftPending(&entry.name))?;
            }
        }
        self.remove_vanished(old.as_ref(), observer)?;
        self.write_manifest(&manifest)?;
        let (books, done) = manifest.merged();
        observer.event(Event::Assembled {
            done,
            shards: manifest.shards.len(),
            books: &books,
        })?;
        Ok(manifest)
    }
}
