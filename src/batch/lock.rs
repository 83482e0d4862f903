//! One run at a time writes a manifest in a folder (`.rdq-batch.lock`), and what a stopped run
//! left there is cleared.

use std::fs::{self, File};
use std::io;
use std::path::Path;

use super::{Batch, Error, Event, Observer, Result};

/// The lock file's name in the output folder.
const LOCK: &str = ".rdq-batch.lock";

impl Batch {
    /// Makes the output folder and takes it for this run: one run at a time writes a manifest
    /// there. Then, with `clean`, removes the temporary files that a stopped run left. The lock
    /// holds while the file returned is open.
    pub(super) fn lock(&self, clean: bool, observer: &mut dyn Observer) -> Result<File> {
        let dir = &self.folders.output;
        make_folder(dir)?;
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
            return Ok(lock);
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
        Ok(lock)
    }
}

/// Makes `dir` if it is missing.
pub(super) fn make_folder(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir)
        .map_err(|e| Error::at(format!("{}: cannot make the folder", dir.display()), e))
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
