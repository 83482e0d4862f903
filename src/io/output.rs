//! Output files (CLI.md "Output files"): atomic where the path allows it, direct elsewhere.
//!
//! A regular file (or a path that does not exist yet) is written to a temporary file beside it
//! and renamed into place only by [`OutputFile::commit`], so a run that fails, is killed or
//! meets a closed pipe never leaves a partial file at the path, and a file already there stays
//! untouched. Anything else (`-`, `/dev/stdout`, `/dev/full`, a FIFO, a character device) is
//! written directly: renaming over a device would replace the device itself.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Large blocks: output is written in few system calls.
const BLOCK: usize = 256 * 1024;

enum Target {
    Stdout(io::Stdout),
    Direct(File),
    Atomic {
        file: File,
        temp: PathBuf,
        dest: PathBuf,
        committed: bool,
    },
}

/// A buffered output: standard output, a device or pipe written directly, or an atomic file.
pub struct OutputFile {
    out: BufWriter<Target>,
    name: String,
}

impl std::fmt::Debug for OutputFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OutputFile({})", self.name)
    }
}

impl OutputFile {
    /// Standard output.
    pub fn stdout() -> Self {
        OutputFile {
            out: BufWriter::with_capacity(BLOCK, Target::Stdout(io::stdout())),
            name: "<stdout>".to_owned(),
        }
    }

    /// `-` is standard output; a regular or new file is written atomically; anything else
    /// directly.
    pub fn create(path: &Path) -> io::Result<Self> {
        if path.as_os_str() == "-" {
            return Ok(Self::stdout());
        }
        let name = path.display().to_string();
        // Follow a symlink, so that the rename replaces its target and not the link.
        let dest = match fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => fs::canonicalize(path)?,
            _ => path.to_path_buf(),
        };
        let target = match fs::metadata(&dest) {
            Ok(m) if !m.is_file() => {
                if m.is_dir() {
                    return Err(io::Error::other(format!("{name} is a directory")));
                }
                Target::Direct(OpenOptions::new().write(true).open(&dest)?)
            }
            Ok(_) => Self::temp_beside(dest)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Self::temp_beside(dest)?,
            Err(e) => return Err(e),
        };
        Ok(OutputFile {
            out: BufWriter::with_capacity(BLOCK, target),
            name,
        })
    }

    fn temp_beside(dest: PathBuf) -> io::Result<Target> {
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let base = dest
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let existing = fs::metadata(&dest).ok().map(|m| m.permissions());
        for attempt in 0u32.. {
            let temp = dir.join(format!(".{base}.rdq-tmp.{}.{attempt}", std::process::id()));
            // create_new: never reuse a stranger's file; the mode follows the umask, unlike a
            // private temporary file, so the renamed file looks like any other output.
            match OpenOptions::new().write(true).create_new(true).open(&temp) {
                Ok(file) => {
                    if let Some(perms) = existing {
                        file.set_permissions(perms)?;
                    }
                    return Ok(Target::Atomic {
                        file,
                        temp,
                        dest,
                        committed: false,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 1000 => {}
                Err(e) => return Err(e),
            }
        }
        unreachable!("the loop returns")
    }

    /// The path as given, for messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Flushes everything and, for an atomic file, renames it into place.
    pub fn commit(mut self) -> io::Result<()> {
        self.finish().map_err(|e| self.named(e))
    }

    fn finish(&mut self) -> io::Result<()> {
        self.out.flush()?;
        match self.out.get_mut() {
            Target::Stdout(s) => s.flush(),
            Target::Direct(f) => f.flush(),
            Target::Atomic {
                file,
                temp,
                dest,
                committed,
            } => {
                file.sync_all()?;
                fs::rename(&*temp, &*dest)?;
                *committed = true;
                Ok(())
            }
        }
    }
}

impl OutputFile {
    /// The error, naming this output; its kind is kept (a closed pipe stays `BrokenPipe`).
    #[cold]
    fn named(&self, e: io::Error) -> io::Error {
        io::Error::new(e.kind(), format!("{}: write failed: {e}", self.name))
    }
}

impl Write for OutputFile {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.write(buf).map_err(|e| self.named(e))
    }

    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.out.write_all(buf).map_err(|e| self.named(e))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush().map_err(|e| self.named(e))
    }
}

impl Write for Target {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Target::Stdout(s) => s.write(buf),
            Target::Direct(f) | Target::Atomic { file: f, .. } => f.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Target::Stdout(s) => s.flush(),
            Target::Direct(f) | Target::Atomic { file: f, .. } => f.flush(),
        }
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        if let Target::Atomic {
            temp,
            committed: false,
            ..
        } = self
        {
            // The run did not complete: leave nothing at the path, and no litter beside it.
            let _ = fs::remove_file(&*temp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "rdq-output-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn atomic_file_appears_only_on_commit() {
        let d = dir();
        let path = d.join("out.jsonl");
        fs::write(&path, "old\n").unwrap();
        let mut out = OutputFile::create(&path).unwrap();
        out.write_all(b"new\n").unwrap();
        out.flush().unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "old\n");
        out.commit().unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new\n");
        assert_eq!(
            fs::read_dir(&d).unwrap().count(),
            1,
            "no temporary file left"
        );
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn an_uncommitted_file_leaves_nothing() {
        let d = dir().join("uncommitted");
        fs::create_dir_all(&d).unwrap();
        let path = d.join("new.jsonl");
        let mut out = OutputFile::create(&path).unwrap();
        out.write_all(b"partial").unwrap();
        drop(out);
        assert!(!path.exists());
        assert_eq!(fs::read_dir(&d).unwrap().count(), 0);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn devices_are_written_directly() {
        let mut out = OutputFile::create(Path::new("/dev/null")).unwrap();
        out.write_all(b"x").unwrap();
        out.commit().unwrap();
        assert!(Path::new("/dev/null").exists());
        let mut full = OutputFile::create(Path::new("/dev/full")).unwrap();
        full.write_all(b"x").unwrap();
        assert!(full.commit().is_err());
    }

    #[test]
    fn a_directory_is_refused() {
        assert!(OutputFile::create(&std::env::temp_dir()).is_err());
    }
}
