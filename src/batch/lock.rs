//! One run at a time writes a manifest in a folder (`.rdq-batch.lock`, there only while a run
//! holds it), and what a stopped run left there is cleared. On object storage the lock is an object (see `object_lock`).

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

use super::place::Place;
use super::{Batch, Error, Event, Observer, Result};

/// The lock file's name in the output folder.
pub(super) const LOCK: &str = ".rdq-batch.lock";

/// The output folder held for this run, until dropped.
pub(super) enum Lock {
    /// A file locked for as long as it is open.
    #[allow(dead_code)] // held for its drop
    File(LockFile),
    /// An object kept fresh by a heartbeat, removed when dropped.
    #[cfg(feature = "s3")]
    #[allow(dead_code)] // held for its drop
    Object(super::object_lock::ObjectLock),
}

/// The lock file, locked while open and removed when the run ends: by its drop, or by the
/// run's ending when it does not succeed (`io::release_everything`), so that no run leaves
/// one behind.
pub(super) struct LockFile {
    path: PathBuf,
    #[allow(dead_code)] // held for its lock
    file: File,
}

impl LockFile {
    /// Creates (or opens) and locks the lock file at `path`; `None` when another run holds it.
    ///
    /// A run that ends removes its lock file, so the file another run opened may be gone from
    /// the folder by the time its lock is granted: that lock holds nothing, and the file is
    /// opened again. (Without the check, a third run could create a new file and lock it too.)
    fn take(path: &Path) -> Result<Option<LockFile>> {
        loop {
            let file = File::create(path)
                .map_err(|e| Error::at(format!("{}: cannot create", path.display()), e))?;
            if file.try_lock().is_err() {
                return Ok(None);
            }
            if still_there(path, &file) {
                crate::io::remove_when_the_run_fails(path);
                return Ok(Some(LockFile {
                    path: path.to_owned(),
                    file,
                }));
            }
        }
    }
}

/// Whether `file` is still the file at `path` (not removed, nor replaced, since it was opened).
#[cfg(unix)]
fn still_there(path: &Path, file: &File) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (fs::metadata(path), file.metadata()) {
        (Ok(there), Ok(open)) => (there.dev(), there.ino()) == (open.dev(), open.ino()),
        _ => false,
    }
}

/// Elsewhere a lock file is not removed while open, so the one opened is the one there.
#[cfg(not(unix))]
fn still_there(_: &Path, _: &File) -> bool {
    true
}

impl Drop for LockFile {
    fn drop(&mut self) {
        crate::io::forget_removal(&self.path);
        // Removed while still locked: a run that opened it meanwhile finds it gone (`take`).
        let _ = fs::remove_file(&self.path);
    }
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
        let Some(lock) = LockFile::take(&path)? else {
            return Err(Error::Refused(format!(
                "{}: another batch run is writing this folder",
                dir.display()
            )));
        };
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
