//! One run at a time writes a manifest in a folder (`.rdq-batch.lock`), and what a stopped run
//! left there is cleared. On object storage the lock is an object (see `object_lock`).

use std::fs::{self, File};
use std::io;
use std::path::Path;

use super::place::Place;
use super::{Batch, Error, Event, Observer, Result};

/// The lock file's name in the output folder.
pub(super) const LOCK: &str = ".rdq-batch.lock";

/// The output folder held for this run, until dropped.
pub(super) enum Lock {
    /// A file locked for as long as it is open.
    #[allow(dead_code)] // held for its drop
    File(File),
    /// An object kept fresh by a heartbeat, removed when dropped.
    #[cfg(feature = "s3")]
    #[allow(dead_code)] // held for its drop
    Object(super::object_lock::ObjectLock),
}

impl Batch {
    /// Makes the output folder and takes it for this run: one run at a time writes a manifest
    /// there. Then, with `clean`, removes the temporary files that a stopped run left (a
    /// folder's: an object is written by multipart uploads, never by temporary objects). The
    /// lock holds until the value returned is dropped.
    pub(super) fn lock(&self, clean: bool, observer: &mut dyn Observer) -> Result<Lock> {
        // Without the `s3` feature a folder is the only place.
        #[allow(clippy::infallible_destructuring_match)]
        let dir = match &self.output {
            Place::Dir(dir) => dir,
            #[cfg(feature = "s3")]
            Place::Prefix { bucket, prefix } => {
                let lock = super::object_lock::ObjectLock::take(
                    bucket,
                    &format!("{prefix}{LOCK}"),
                    &self.output,
                    std::sync::Arc::clone(&self.lock_lost),
                    observer,
                )?;
                return Ok(Lock::Object(lock));
            }
        };
        self.output.make()?;
        let path = dir.join(LOCK);
        let lock = File::create(&path)
            .map_err(|e| Error::at(format!("{}: cannot create", path.display()), e))?;
        if lock.try_lock().is_err() {
            return Err(Error::Refused(format!(
                "{}: another batch run is writing this folder",
                dir.display()
            )));
        }
        if !clean {
            return Ok(Lock::File(lock));
        }
        let mut removed = 0;
        for entry in fs::read_dir(dir)? {
            let name = entry?.file_name();
            let name = name.to_string_lossy();
            // The names OutputFile gives its temporary files: with the lock held, no live run
            // writes here, so every one is stale.
            if crate::io::is_temporary_file_name(&name) {
                remove_if_there(&dir.join(&*name))?;
                removed += 1;
            }
        }
        if removed > 0 {
            observer.event(Event::TemporaryFilesRemoved(removed))?;
        }
        Ok(Lock::File(lock))
    }
}

/// Removes the file at `path`, if there is one.
pub(super) fn remove_if_there(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => {
            Err(Error::at(format!("{}: cannot remove", path.display()), e))
        }
        _ => Ok(()),
    }
}
