//! The temporary files of atomic outputs: their names, the list of those this process has open
//! (which a signal handler empties before the process ends), and the removal of those a killed
//! run left.
//!
//! A temporary file is named `.rdq-tmp.HOST.PID.N`: short, so that any output name the file
//! system takes can have one beside it, and with the writer's host name and process ID, so that
//! a later run on the same host can tell a file whose writer is gone (a run killed with SIGKILL,
//! which no handler sees) from one that another run is still writing. A file of another host
//! (a folder shared by the executors of a cluster) is never taken for stale.

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

/// This host's name as temporary names carry it: letters, digits and `-` only, at most 32
/// bytes; `unknown` when the system does not say (then no file is ever taken for stale).
fn host() -> &'static str {
    static HOST: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HOST.get_or_init(|| {
        let name = fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
        let clean: String = name
            .trim()
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
            .take(32)
            .collect();
        if clean.is_empty() {
            "unknown".to_owned()
        } else {
            clean
        }
    })
}

/// The list of live temporary files, locked. Held across the renames of a commit, so that a
/// signal handler waits for them rather than seeing half the outputs renamed.
pub(super) fn live() -> MutexGuard<'static, Vec<PathBuf>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// A fresh temporary name for a file in `dir`.
pub(super) fn fresh_name(dir: &Path) -> PathBuf {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    dir.join(format!("{PREFIX}{}.{}.{n}", host(), std::process::id()))
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

/// Files a run holds only while it lives (a `batch` lock file), removed by
/// [`remove_held_files`] when the run fails.
static HELD: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn held() -> MutexGuard<'static, Vec<PathBuf>> {
    HELD.lock().unwrap_or_else(|e| e.into_inner())
}

/// Marks `path` as a file this run holds only while it lives: a run that fails removes it
/// (`io::release_everything`). Its holder removes it itself on success, after
/// [`forget_removal`].
pub fn remove_when_the_run_fails(path: &Path) {
    held().push(path.to_path_buf());
}

/// Forgets a file marked by [`remove_when_the_run_fails`].
pub fn forget_removal(path: &Path) {
    let mut held = held();
    if let Some(at) = held.iter().rposition(|p| p == path) {
        held.swap_remove(at);
    }
}

/// Removes every file marked by [`remove_when_the_run_fails`].
pub(super) fn remove_held_files() {
    for path in held().drain(..) {
        let _ = fs::remove_file(path);
    }
}

/// Whether `name` is the name of a temporary file of an atomic output, of this version
/// (`.rdq-tmp.HOST.PID.N`) or an earlier one (`.NAME.rdq-tmp.PID.N`).
#[cfg(any(feature = "batch", test))]
pub fn is_temporary_file_name(name: &str) -> bool {
    parse(name).is_some()
}

/// The host and process ID in a temporary file's name (no host in earlier versions' names).
fn parse(name: &str) -> Option<(Option<&str>, u32)> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some(rest) = name.strip_prefix(PREFIX) {
        let mut parts = rest.split('.');
        let (host, pid, n) = (parts.next()?, parts.next()?, parts.next()?);
        let host_ok =
            !host.is_empty() && host.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if parts.next().is_none() && host_ok && digits(pid) && digits(n) {
            return Some((Some(host), pid.parse().ok()?));
        }
        return None;
    }
    // Earlier versions: `.NAME.rdq-tmp.PID.N`.
    let at = name.find(PREFIX)?;
    let (pid, n) = name[at + PREFIX.len()..].split_once('.')?;
    (name.starts_with('.') && at > 0 && digits(pid) && digits(n))
        .then(|| Some((None, pid.parse().ok()?)))
        .flatten()
}

/// The process ID of a temporary file written on this host, if `name` is one.
fn own_host_writer(name: &str) -> Option<u32> {
    match parse(name)? {
        (Some(h), pid) if h == host() && h != "unknown" => Some(pid),
        _ => None,
    }
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
/// ours, written on this host, and no process has its ID (`/proc`). Returns how many it removed. A file of a live
/// process is left alone, whoever that process is: a reused process ID only delays the
/// cleanup to a later run.
pub fn remove_stale_temporary_files(dir: &Path) -> io::Result<usize> {
    let own = std::process::id();
    let mut removed = 0;
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(own_host_writer) else {
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
    fn names_of_both_versions_are_told() {
        assert_eq!(parse(".rdq-tmp.box-1.123.0"), Some((Some("box-1"), 123)));
        assert_eq!(parse(".out.jsonl.rdq-tmp.77.12"), Some((None, 77)));
        for not_ours in [
            "rdq-tmp.h.1.2",
            ".rdq-tmp.h.1",
            ".rdq-tmp.h.1.x",
            ".rdq-tmp..1.2",
            ".rdq-tmp.h.1.2.3",
            ".rdq-tmp.1.2",
            "out.jsonl",
        ] {
            assert_eq!(parse(not_ours), None, "{not_ours}");
        }
    }

    #[test]
    fn only_files_of_dead_processes_are_swept() {
        let dir = std::env::temp_dir().join(format!("rdq-temp-sweep-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        // PID 1 runs; a PID beyond the kernel's maximum (4194304) never does.
        let (h, pid) = (host(), std::process::id());
        let dead = format!(".rdq-tmp.{h}.4294967295.0");
        let kept = [
            format!(".rdq-tmp.{h}.1.0"),
            format!(".rdq-tmp.{h}.{pid}.0"),
            ".rdq-tmp.another-host.4294967295.0".to_owned(),
            ".out.rdq-tmp.4294967295.0".to_owned(),
            "keep.jsonl".to_owned(),
        ];
        for name in kept.iter().chain([&dead]) {
            fs::write(dir.join(name), "x").unwrap();
        }
        let expected = usize::from(h != "unknown");
        assert_eq!(remove_stale_temporary_files(&dir).unwrap(), expected);
        assert_eq!(dir.join(&dead).exists(), expected == 0);
        for name in &kept {
            assert!(dir.join(name).exists(), "{name}");
        }
        fs::remove_dir_all(&dir).unwrap();
    }
}

/// A scratch file in the system's temporary folder, removed when dropped (and by the signal
/// handler, as every live temporary file): `dedupe` keeps standard input in one to read it
/// twice.
#[derive(Debug)]
pub struct SpillFile {
    path: PathBuf,
    file: fs::File,
}

impl SpillFile {
    /// Creates an empty one in the temporary folder (`temporary_folder`: `TMPDIR`, or the system's), readable and
    /// writable by this user only. The error names the folder: a `TMPDIR` that is missing, not
    /// a folder or not writable is then plain to see.
    pub fn create() -> io::Result<Self> {
        let folder = temporary_folder();
        let path = fresh_name(&folder);
        let mut options = fs::OpenOptions::new();
        options.read(true).write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(&path).map_err(|e| {
            let folder = folder.display();
            io::Error::new(e.kind(), format!("temporary folder {folder} (TMPDIR): {e}"))
        })?;
        register(&path);
        Ok(SpillFile { path, file })
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The open file, to write.
    pub fn file(&mut self) -> &mut fs::File {
        &mut self.file
    }
}

/// The folder for temporary files: `TMPDIR` when set and not empty (POSIX: an empty one is
/// unset; `std::env::temp_dir` would take it for the current folder), else the system's.
pub fn temporary_folder() -> PathBuf {
    match std::env::var_os("TMPDIR").filter(|folder| !folder.is_empty()) {
        Some(folder) => PathBuf::from(folder),
        None if cfg!(unix) => PathBuf::from("/tmp"),
        None => std::env::temp_dir(),
    }
}

impl Drop for SpillFile {
    fn drop(&mut self) {
        let mut live = live();
        forget(&mut live, &self.path);
        let _ = fs::remove_file(&self.path);
    }
}
