//! Output files: atomic where the path allows it, direct elsewhere.
//!
//! A regular file (or a path that does not exist yet) is written to a temporary file beside it
//! and renamed into place only by [`OutputFile::commit`] or [`commit_all`], so a run that
//! fails, is interrupted or meets a closed pipe never leaves a partial file at the path, and a
//! file already there stays untouched. Anything else (`-`, `/dev/stdout`, `/dev/full`, a FIFO, a
//! character device) is written directly: renaming over a device would replace the device
//! itself.
//!
//! A run with several outputs commits them in two phases ([`commit_all`]): every output is
//! finished and synced to disk first, and only then are they all renamed, so that a failure
//! in the first phase leaves every path as it was.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::encoders::Encoder;
use super::temp;

/// Large blocks: output is written in few system calls.
const BLOCK: usize = 256 * 1024;

enum Target {
    Stdout(io::Stdout),
    Stderr(io::Stderr),
    Direct(File),
    Atomic {
        file: File,
        temp: PathBuf,
        dest: PathBuf,
        committed: bool,
    },
    /// An `s3://` object: a multipart upload, completed where a file would be renamed (boxed:
    /// its buffers' bookkeeping would make every target as large).
    #[cfg(feature = "s3")]
    Object(Box<super::remote::ObjectUpload>),
}

/// How an output is compressed (docs/cli.md#outputs: by the name's `.zst`/`.gz` ending, or
/// `--compress`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputCompression {
    /// Plain bytes.
    None,
    /// zstd (level 3) in the seekable format: independent frames of at most `frame_bytes` of
    /// input each, and the seek table in a skippable frame at the end (docs/cli.md#compression).
    Zstd {
        /// Compression threads, each compressing whole frames (0: compress on the writing
        /// thread). Any number gives the same bytes.
        threads: u32,
        /// The most input bytes in one frame, from [`ZSTD_FRAME_BYTES_MIN`] to
        /// [`ZSTD_FRAME_BYTES_MAX`] (a value outside is taken as the nearest end).
        frame_bytes: u32,
    },
    /// A gzip member.
    Gzip,
}

/// The default frame size of a zstd output, in bytes of input (4 MiB): measured in
/// docs/performance.md#seekable-zstd-outputs, a small cost in size against one frame.
pub const ZSTD_FRAME_BYTES_DEFAULT: u32 = 4 << 20;

/// The smallest frame size `--zstd-frame` takes (64 KiB): smaller frames cost much in size,
/// and the seek table's 2^27 frames would then cap an output at 8 TiB.
pub const ZSTD_FRAME_BYTES_MIN: u32 = 64 << 10;

/// The largest frame size (1 GiB), the seekable format's as zeekstd writes it.
pub const ZSTD_FRAME_BYTES_MAX: u32 = 1 << 30;

impl OutputCompression {
    /// What a file name asks for, compressing zstd on as many threads as the machine has.
    pub fn for_name(path: &Path) -> Self {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self::from_name(path, u32::try_from(threads).unwrap_or(u32::MAX))
    }

    /// What a file name asks for: `.zst` is zstd, `.gz` gzip (in any letter case: `.ZST`,
    /// `.Gz`; [`Endings`](super::Endings) reads them), anything else none.
    pub fn from_name(path: &Path, threads: u32) -> Self {
        match super::Endings::of(path).compression {
            super::Compression::Zstd => OutputCompression::Zstd {
                threads,
                frame_bytes: ZSTD_FRAME_BYTES_DEFAULT,
            },
            super::Compression::Gzip => OutputCompression::Gzip,
            super::Compression::None => OutputCompression::None,
        }
    }

    /// zstd with frames of at most `frame_bytes` of input instead (`--zstd-frame`); any other
    /// compression as it is.
    #[must_use]
    pub fn with_zstd_frame(self, frame_bytes: u32) -> Self {
        match self {
            OutputCompression::Zstd { threads, .. } => OutputCompression::Zstd {
                threads,
                frame_bytes: frame_bytes.clamp(ZSTD_FRAME_BYTES_MIN, ZSTD_FRAME_BYTES_MAX),
            },
            other => other,
        }
    }
}

/// The writer stack above the target: large-block buffering, then the encoder, if any.
enum Layer {
    Plain(BufWriter<Target>),
    Encoded(Encoder<BufWriter<Target>>),
    /// Between taking the encoder apart and putting the buffered target back.
    Finishing,
}

impl Layer {
    fn writer(&mut self) -> &mut dyn Write {
        match self {
            Layer::Plain(w) => w,
            Layer::Encoded(w) => w.writer(),
            Layer::Finishing => unreachable!("an output is not written while it is finished"),
        }
    }

    /// Ends the compressed stream (its last frame or member) and returns the buffered target.
    fn finish(&mut self) -> io::Result<BufWriter<Target>> {
        match std::mem::replace(self, Layer::Finishing) {
            Layer::Plain(w) => Ok(w),
            Layer::Encoded(w) => w.finish(),
            Layer::Finishing => Err(io::Error::other("output already finished")),
        }
    }
}

/// A buffered output: standard output, a device or pipe written directly, or an atomic file;
/// plain or compressed.
pub struct OutputFile {
    out: Layer,
    name: String,
    /// Standard output, however named (`-`, `/dev/stdout`): a closed pipe there is the reader
    /// saying it has seen enough (`| head`), and stays `BrokenPipe`. Anywhere else (a FIFO, a
    /// socket, standard error) it is a failed output.
    is_stdout: bool,
}

impl std::fmt::Debug for OutputFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OutputFile({})", self.name)
    }
}

impl OutputFile {
    /// Standard output.
    pub fn stdout() -> Self {
        Self::stdout_compressed(OutputCompression::None)
            .expect("a plain standard output needs no encoder")
    }

    /// Standard output, compressed as asked.
    pub fn stdout_compressed(compression: OutputCompression) -> io::Result<Self> {
        Ok(OutputFile {
            out: layer(Target::Stdout(io::stdout()), compression)?,
            name: "<stdout>".to_owned(),
            is_stdout: true,
        })
    }

    /// Standard error, for text to people: its write errors are errors like any output's.
    pub fn stderr() -> Self {
        OutputFile {
            out: Layer::Plain(BufWriter::with_capacity(
                8 << 10,
                Target::Stderr(io::stderr()),
            )),
            name: "<stderr>".to_owned(),
            is_stdout: false,
        }
    }

    /// `-` is standard output; a regular or new file is written atomically; anything else
    /// directly. Compressed as the name says (`.zst`, `.gz`): every output follows its name.
    pub fn create(path: &Path) -> io::Result<Self> {
        Self::create_compressed(path, OutputCompression::for_name(path))
    }

    /// Like [`create`](Self::create), compressed as asked.
    pub fn create_compressed(path: &Path, compression: OutputCompression) -> io::Result<Self> {
        if path.as_os_str() == "-" {
            return Self::stdout_compressed(compression);
        }
        let name = path.display().to_string();
        if let Some(url) = super::location::parse_object(path)? {
            return Ok(OutputFile {
                out: layer(object_target(url)?, compression)?,
                is_stdout: false,
                name,
            });
        }
        // Standard output or error by a name (`/dev/stdout`, `/proc/self/fd/2`): written through
        // the stream itself, at its position, so that what else goes there (the primary output,
        // the closing line) and this output follow each other instead of overwriting each
        // other, as a second open of the file at its own position would.
        if let Some(standard) = names_standard(path) {
            let target = match standard {
                Standard::Out => Target::Stdout(io::stdout()),
                Standard::Err => Target::Stderr(io::stderr()),
            };
            return Ok(OutputFile {
                out: layer(target, compression)?,
                is_stdout: standard == Standard::Out,
                name,
            });
        }
        let target = match fs::metadata(path) {
            Ok(m) if m.is_dir() => return Err(io::Error::other(format!("{name} is a directory"))),
            // `/dev/fd/N`, `/proc/self/fd/N`: whatever they lead to (a pipe, a terminal, the
            // file a shell redirected to), it belongs to someone else and is never replaced.
            // Append, so that a shell's `>>` and our own writes to the same file both hold.
            Ok(m) if !m.is_file() || path.starts_with("/dev") || path.starts_with("/proc") => {
                Target::Direct(OpenOptions::new().append(true).open(path)?)
            }
            // Follow a symlink, so that the rename replaces its target and not the link.
            Ok(_) => Self::temp_beside(fs::canonicalize(path)?)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if fs::symlink_metadata(path).is_ok() {
                    return Err(io::Error::other(format!(
                        "{name} is a symbolic link to nothing"
                    )));
                }
                Self::temp_beside(path.to_path_buf())?
            }
            Err(e) => return Err(e),
        };
        Ok(OutputFile {
            out: layer(target, compression)?,
            is_stdout: false,
            name,
        })
    }

    fn temp_beside(dest: PathBuf) -> io::Result<Target> {
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        // Temporary files that a killed run left here (no handler sees SIGKILL).
        temp::sweep_once(&dir);
        let existing = fs::metadata(&dest).ok();
        for attempt in 0u32.. {
            let temp = temp::fresh_name(&dir);
            // create_new: never reuse a stranger's file; the mode follows the umask, unlike a
            // private temporary file, so the renamed file looks like any other output.
            match OpenOptions::new().write(true).create_new(true).open(&temp) {
                Ok(file) => {
                    temp::register(&temp);
                    let target = Target::Atomic {
                        file,
                        temp,
                        dest,
                        committed: false,
                    };
                    if let (Some(old), Target::Atomic { file, .. }) = (&existing, &target) {
                        keep_owner_and_mode(file, old)?;
                    }
                    return Ok(target);
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
    pub fn commit(self) -> io::Result<()> {
        commit_all([self])
    }

    /// The first phase of a commit: the compressed stream ended, everything flushed, an atomic
    /// file synced to disk. Nothing is renamed yet.
    fn finish(&mut self) -> io::Result<()> {
        let mut buffered = self.out.finish().map_err(|e| self.named(e))?;
        let flushed = buffered.flush();
        // Put the target back, so that dropping it can still clean up.
        self.out = Layer::Plain(buffered);
        flushed.map_err(|e| self.named(e))?;
        let Layer::Plain(buffered) = &mut self.out else {
            unreachable!("just put back")
        };
        let done = match buffered.get_mut() {
            Target::Stdout(s) => s.flush(),
            Target::Stderr(s) => s.flush(),
            Target::Direct(f) => f.flush(),
            Target::Atomic { file, .. } => file.sync_all(),
            #[cfg(feature = "s3")]
            Target::Object(upload) => upload.finish(),
        };
        done.map_err(|e| self.named(e))
    }

    /// The second phase: an atomic file renamed into place.
    fn rename(&mut self, live: &mut Vec<PathBuf>) -> io::Result<()> {
        let Layer::Plain(buffered) = &mut self.out else {
            unreachable!("finished before renamed")
        };
        match buffered.get_mut() {
            Target::Atomic {
                temp,
                dest,
                committed,
                ..
            } => {
                fs::rename(&*temp, &*dest)?;
                *committed = true;
                temp::forget(live, temp);
            }
            #[cfg(feature = "s3")]
            Target::Object(upload) => upload.complete()?,
            _ => {}
        }
        Ok(())
    }
}

/// The target of an output URL: an upload for `s3://`; an `http(s)://` URL is read-only.
fn object_target(url: super::Url<'_>) -> io::Result<Target> {
    match url {
        super::Url::Http(url) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{url}: http(s) URLs are read-only inputs; write to s3://BUCKET/KEY or a file"),
        )),
        #[cfg(feature = "s3")]
        super::Url::S3 { bucket, key } => {
            let upload = super::remote::ObjectUpload::create(bucket, key)?;
            Ok(Target::Object(Box::new(upload)))
        }
        #[cfg(not(feature = "s3"))]
        url => Err(super::without_object_storage(&url.to_string())),
    }
}

/// One of this process's standard output streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Standard {
    Out,
    Err,
}

/// Which standard stream `path` names (`/dev/stdout`, `/dev/stderr` and their kin), if any.
pub(super) fn names_standard(path: &Path) -> Option<Standard> {
    let named = |names: [&str; 3]| names.iter().any(|name| path == Path::new(name));
    if named(["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"]) {
        Some(Standard::Out)
    } else if named(["/dev/stderr", "/dev/fd/2", "/proc/self/fd/2"]) {
        Some(Standard::Err)
    } else {
        None
    }
}

/// Commits several outputs all or nothing, as far as a file system allows: every one is
/// finished and synced first (a full disk, a closed pipe, a failing device stops the commit
/// there, and every atomic output's path stays as it was), then every atomic file is renamed
/// into place, with signals held off (see [`super::release_everything`]). Only a
/// failing rename (the folder removed meanwhile) or a crash between two renames can leave some
/// paths new and others old. On error, the outputs not yet renamed are removed.
pub fn commit_all(outputs: impl IntoIterator<Item = OutputFile>) -> io::Result<()> {
    commit_all_then(outputs, || Ok(()))
}

/// Like [`commit_all`], with `last_word` run between the two phases, when every output is
/// complete and none renamed: a run's closing line for people goes there, so that a standard
/// error that cannot take it fails the run with every path still as it was.
pub fn commit_all_then(
    outputs: impl IntoIterator<Item = OutputFile>,
    last_word: impl FnOnce() -> io::Result<()>,
) -> io::Result<()> {
    let mut outputs: Vec<OutputFile> = outputs.into_iter().collect();
    for out in &mut outputs {
        out.finish()?;
    }
    last_word()?;
    // Declared after `outputs`, so dropped before it: an output that is dropped unrenamed takes
    // this lock to forget its temporary file.
    let mut live = temp::live();
    for out in &mut outputs {
        out.rename(&mut live).map_err(|e| out.named(e))?;
    }
    Ok(())
}

impl OutputFile {
    /// The error, naming this output. A closed pipe keeps its kind only on standard output,
    /// where it ends the run quietly; anywhere else it is an output that failed.
    #[cold]
    fn named(&self, e: io::Error) -> io::Error {
        let kind = match e.kind() {
            io::ErrorKind::BrokenPipe if !self.is_stdout => io::ErrorKind::Other,
            kind => kind,
        };
        io::Error::new(kind, format!("{}: write failed: {e}", self.name))
    }
}

/// Gives a new file the mode, owner and group of the file it will replace, as `sed -i` does.
/// The owner and group are kept where the process may set them (as root, or a group it is in);
/// elsewhere the file is the writer's, as any new file would be.
fn keep_owner_and_mode(file: &File, old: &fs::Metadata) -> io::Result<()> {
    file.set_permissions(old.permissions())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let new = file.metadata()?;
        if (new.uid(), new.gid()) != (old.uid(), old.gid()) {
            let _ = std::os::unix::fs::fchown(file, Some(old.uid()), Some(old.gid()))
                .or_else(|_| std::os::unix::fs::fchown(file, None, Some(old.gid())));
            // chown may clear the set-user-ID bits: the mode once more.
            file.set_permissions(old.permissions())?;
        }
    }
    Ok(())
}

impl Write for OutputFile {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.writer().write(buf).map_err(|e| self.named(e))
    }

    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.out.writer().write_all(buf).map_err(|e| self.named(e))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.writer().flush().map_err(|e| self.named(e))
    }
}

fn layer(target: Target, compression: OutputCompression) -> io::Result<Layer> {
    let buffered = BufWriter::with_capacity(BLOCK, target);
    Ok(match compression {
        OutputCompression::None => Layer::Plain(buffered),
        OutputCompression::Zstd {
            threads,
            frame_bytes,
        } => {
            let frame_bytes = frame_bytes.clamp(ZSTD_FRAME_BYTES_MIN, ZSTD_FRAME_BYTES_MAX);
            Layer::Encoded(Encoder::zstd(buffered, threads, frame_bytes)?)
        }
        OutputCompression::Gzip => Layer::Encoded(Encoder::gzip(buffered)?),
    })
}

impl Write for Target {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Target::Stdout(s) => s.write(buf),
            Target::Stderr(s) => s.write(buf),
            Target::Direct(f) | Target::Atomic { file: f, .. } => f.write(buf),
            #[cfg(feature = "s3")]
            Target::Object(upload) => upload.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Target::Stdout(s) => s.flush(),
            Target::Stderr(s) => s.flush(),
            Target::Direct(f) | Target::Atomic { file: f, .. } => f.flush(),
            #[cfg(feature = "s3")]
            Target::Object(upload) => upload.flush(),
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
            temp::forget(&mut temp::live(), temp);
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
