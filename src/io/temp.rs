//! The temporary files of atomic outputs: their names, the list of those this process has open
//! (which a signal handler empties before the process ends), and the removal of those a killed
//! run left.
//!
//! A temporary file is named `.rdq-tmp.PID.N`: short, so that any output name the file system
//! takes can have one beside it, and with the writer's process ID, so that a later run can tell
//! a file whose writer is gone (a run killed with SIGKILL, which no handler sees) from one that
//! another run is still writing.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// The prefix of every temporary file's name.
const PREFIX: &str = ".rdq-tmp.";

/// Temporary files this process has created and not yet renamed or removed.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Folders already cleared of stale temporary files by this process.
static SWEPT: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);

static NEXT: AtomicU64 = AtomicU64::new(0);

/// The list of live temporary files, locked. Held across the renames of a commit, so that a
/// signal handler waits for them rather than seeing half the outputs renamed.
pub(super) fn live() -> MutexGuard<'static, Vec<PathBuf>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// A fresh temporary name for a file in `dir`.
pub(super) fn fresh_name(dir: &Path) -> PathBuf {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    dir.join(format!("{PREFIX}{}.{n}", std::process::id()))
}

/// Records a temporary file just created.
pub(super) fn register(path: &Path) {
    live().push(path.to_path_buf());
}

/// Forgets a temporary file, renamed or removed.
pub(super) fn forget(live: &mut Vec<PathBuf>, path: &Path) {
    if let Some(at) = live.iter().rposition(|p| p == path) {
        live.swap_remove(at);
    }
}

/// Removes every temporary file this process has open and returns the lock on the (now empty)
/// list: no output is renamed into place after this. For a signal handler, just before the
/// process exits: the outputs' paths are left as they were before the run.
pub fn remove_live_temporary_files() -> MutexGuard<'static, Vec<PathBuf>> {
    let mut live = live();
    for path in live.drain(..) {
        let _ = fs::remove_file(path);
    }
    live
}

/// Whether `name` is a temporary file of an atomic output, and if so the process ID that wrote
/// it. Knows the names of earlier versions too (`.NAME.rdq-tmp.PID.N`).
pub fn temporary_file_owner(name: &str) -> Option<u32> {
    let at = name.find(&PREFIX[1..])?;
    if !name.starts_with('.') || (at != 1 && !name[..at].ends_with('.')) {
        return None;
    }
    let (pid, n) = name[at + PREFIX.len() - 1..].split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(pid) && digits(n))
        .then(|| pid.parse().ok())
        .flatten()
}

/// Whether a process with this ID is running, when the system can say (`/proc`); `None`
/// elsewhere.
fn running(pid: u32) -> Option<bool> {
    if !Path::new("/proc/self").exists() {
        return None;
    }
    Some(Path::new("/proc").join(pid.to_string()).exists())
}

/// Removes the temporary files in `dir` whose writer is provably gone: the name is one of
/// ours and no process has its ID (`/proc`). Returns how many it removed. A file of a live
/// process is left alone, whoever that process is: a reused process ID only delays the
/// cleanup to a later run.
pub fn remove_stale_temporary_files(dir: &Path) -> io::Result<usize> {
    let own = std::process::id();
    let mut removed = 0;
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(temporary_file_owner) else {
            continue;
        };
        if pid != own && running(pid) == Some(false) {
            match fs::remove_file(entry.path()) {
                Ok(()) => removed += 1,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(removed)
}

/// Sweeps `dir` once per process (an output folder of thousands of shards is not listed
/// thousands of times). Errors are ignored: cleanup is a courtesy, never a reason to fail.
pub(super) fn sweep_once(dir: &Path) {
    let key = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    {
        let mut swept = SWEPT.lock().unwrap_or_else(|e| e.into_inner());
        if !swept.get_or_insert_with(HashSet::new).insert(key) {
            return;
        }
    }
    let _ = remove_stale_temporary_files(dir);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_are_read_from_the_names_of_both_versions() {
        assert_eq!(temporary_file_owner(".rdq-tmp.123.0"), Some(123));
        assert_eq!(temporary_file_owner(".out.jsonl.rdq-tmp.77.12"), Some(77));
        assert_eq!(temporary_file_owner("rdq-tmp.1.2"), None);
        assert_eq!(temporary_file_owner(".rdq-tmp.1"), None);
        assert_eq!(temporary_file_owner(".rdq-tmp.1.x"), None);
        assert_eq!(temporary_file_owner(".xrdq-tmp.1.2"), None);
        assert_eq!(temporary_file_owner("out.jsonl"), None);
    }

    #[test]
    fn only_files_of_dead_processes_are_swept() {
        let dir = std::env::temp_dir().join(format!("rdq-temp-sweep-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        // PID 1 runs; a PID beyond the kernel's maximum (4194304) never does.
        for name in [".rdq-tmp.1.0", ".rdq-tmp.4294967295.0", "keep.jsonl"] {
            fs::write(dir.join(name), "x").unwrap();
        }
        let own = format!(".rdq-tmp.{}.0", std::process::id());
        fs::write(dir.join(&own), "x").unwrap();
        assert_eq!(remove_stale_temporary_files(&dir).unwrap(), 1);
        assert!(!dir.join(".rdq-tmp.4294967295.0").exists());
        for kept in [".rdq-tmp.1.0", "keep.jsonl", own.as_str()] {
            assert!(dir.join(kept).exists(), "{kept}");
        }
        fs::remove_dir_all(&dir).unwrap();
    }
}
