//! Inputs a run reads more than once (`dedupe --keep newest`'s two passes): what cannot be read
//! twice (standard input, a pipe, a FIFO, `/dev/stdin`, a process substitution, a device) is
//! copied to a [`SpillFile`] first and read from there, under its own name; a regular file is
//! read where it is, and noted (device, inode, size, modification time) so that a file that
//! changed between the reads is told rather than read as two different inputs.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use super::Source;
use super::SpillFile;

/// What a regular file was when it was first read.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    modified: Option<SystemTime>,
}

impl Stamp {
    fn of(meta: &fs::Metadata) -> Stamp {
        #[cfg(unix)]
        let (dev, ino) = {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino())
        };
        #[cfg(not(unix))]
        let (dev, ino) = (0, 0);
        Stamp {
            dev,
            ino,
            len: meta.len(),
            modified: meta.modified().ok(),
        }
    }
}

/// One input, readable again.
#[derive(Debug)]
enum Input {
    /// A regular file, read where it is.
    Regular { path: PathBuf, stamp: Stamp },
    /// A stream copied to a spill file, named as it was given. One spill serves every mention
    /// of the same stream (`-` twice, or `-` and `/dev/stdin`).
    Spilled { name: String, spill: Arc<SpillFile> },
    /// A path that cannot be examined or is a folder: left for the reader to refuse, naming it.
    Other(PathBuf),
    /// An `s3://` object, read where it is: each read asks for the ETag the first one saw.
    #[cfg(feature = "s3")]
    Object {
        path: PathBuf,
        stamp: super::remote::Stamp,
    },
}

/// An `s3://` object as it is now: `None` for anything else (an `http(s)://` URL is spilled,
/// since a server need not answer the same twice).
#[cfg(feature = "s3")]
fn object_stamp(path: &Path) -> io::Result<Option<super::remote::Stamp>> {
    match super::location::parse_object(path)? {
        Some(super::Url::S3 { bucket, key }) => Ok(Some(super::remote::stat_s3(bucket, key)?)),
        _ => Ok(None),
    }
}

/// Inputs that can be read as many times as a run needs: see the module's documentation.
#[derive(Debug)]
pub struct Rereadable {
    inputs: Vec<Input>,
}

impl Rereadable {
    /// Reads every input that cannot be read twice into a spill file (in order: standard input
    /// and each FIFO are read to their end here), and notes each regular file as it is now.
    /// A `Source::Reader` is spilled too.
    pub fn new(sources: Vec<Source>) -> io::Result<Rereadable> {
        // The spills so far, by the device and inode of the stream they copied.
        let mut spilled: Vec<((u64, u64), Arc<SpillFile>)> = Vec::new();
        let mut inputs = Vec::with_capacity(sources.len());
        for source in sources {
            let name = source.name();
            let (key, reader): (_, Box<dyn io::Read>) = match source {
                Source::Stdin => (stream_key(None), Box::new(io::stdin().lock())),
                Source::Reader { reader, .. } => (None, reader),
                #[cfg(feature = "s3")]
                Source::Path(path) if super::is_url(&path) => match object_stamp(&path)? {
                    Some(stamp) => {
                        inputs.push(Input::Object { path, stamp });
                        continue;
                    }
                    None => {
                        let reader = super::open_url(&path)?.expect("a URL");
                        (None, reader as Box<dyn io::Read>)
                    }
                },
                Source::Path(path) => match fs::metadata(&path) {
                    Ok(meta) if meta.is_file() => {
                        let stamp = Stamp::of(&meta);
                        inputs.push(Input::Regular { path, stamp });
                        continue;
                    }
                    Ok(meta) if !meta.is_dir() => {
                        let key = stream_key(Some(&meta));
                        if let Some(spill) = find(&spilled, key) {
                            inputs.push(Input::Spilled { name, spill });
                            continue;
                        }
                        let file = fs::File::open(&path).map_err(|e| named(&name, e))?;
                        (key, Box::new(file))
                    }
                    _ => {
                        inputs.push(Input::Other(path));
                        continue;
                    }
                },
            };
            if let Some(spill) = find(&spilled, key) {
                inputs.push(Input::Spilled { name, spill });
                continue;
            }
            let spill = Arc::new(spill_from(reader, &name)?);
            if let Some(key) = key {
                spilled.push((key, Arc::clone(&spill)));
            }
            inputs.push(Input::Spilled { name, spill });
        }
        Ok(Rereadable { inputs })
    }

    /// The inputs for one more read, in order, each under the name it was given.
    pub fn sources(&self) -> io::Result<Vec<Source>> {
        self.inputs
            .iter()
            .map(|input| {
                Ok(match input {
                    Input::Regular { path, .. } | Input::Other(path) => Source::Path(path.clone()),
                    Input::Spilled { name, spill } => Source::Reader {
                        name: name.clone(),
                        reader: Box::new(fs::File::open(spill.path())?),
                    },
                    #[cfg(feature = "s3")]
                    Input::Object { path, stamp } => {
                        let Some(super::Url::S3 { bucket, key }) =
                            super::location::parse_object(path)?
                        else {
                            unreachable!("an object's URL was parsed when it was first read")
                        };
                        Source::Reader {
                            name: path.display().to_string(),
                            reader: Box::new(super::remote::open_s3(bucket, key, Some(stamp))?),
                        }
                    }
                })
            })
            .collect()
    }

    /// The regular files (and `s3://` objects) read where they are.
    pub fn regular_files(&self) -> impl Iterator<Item = &Path> {
        self.inputs.iter().filter_map(|input| match input {
            Input::Regular { path, .. } => Some(path.as_path()),
            #[cfg(feature = "s3")]
            Input::Object { path, .. } => Some(path.as_path()),
            _ => None,
        })
    }

    /// Refuses a regular file that is not what it was when first read (another size,
    /// modification time or inode): the reads saw two different files, and what they found
    /// together would be wrong. The error names the file.
    pub fn check_unchanged(&self) -> io::Result<()> {
        for input in &self.inputs {
            #[cfg(feature = "s3")]
            if let Input::Object { path, stamp } = input {
                if object_stamp(path)?.as_ref() != Some(stamp) {
                    return Err(io::Error::other(format!(
                        "{}: changed while it was read twice (another size or ETag): nothing \
                         written; read a copy that does not change",
                        path.display()
                    )));
                }
                continue;
            }
            let Input::Regular { path, stamp } = input else {
                continue;
            };
            let now = fs::metadata(path).map(|m| Stamp::of(&m));
            let what = match &now {
                Ok(now) if now == stamp => continue,
                Ok(now) if (now.dev, now.ino) != (stamp.dev, stamp.ino) => {
                    "was replaced by another file".to_owned()
                }
                Ok(now) if now.len != stamp.len => {
                    format!("{} bytes, then {}", stamp.len, now.len)
                }
                Ok(_) => "modified".to_owned(),
                Err(e) => format!("{e}"),
            };
            return Err(io::Error::other(format!(
                "{}: changed while it was read twice ({what}): nothing written; read a copy \
                 that does not change",
                path.display()
            )));
        }
        Ok(())
    }
}

/// The device and inode of a stream, to know it when it is named again (`-` and `/dev/stdin`).
fn stream_key(meta: Option<&fs::Metadata>) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        use std::os::unix::fs::MetadataExt;
        let owned;
        let meta = match meta {
            Some(meta) => meta,
            None => {
                let fd = io::stdin().as_fd().try_clone_to_owned().ok()?;
                owned = fs::File::from(fd).metadata().ok()?;
                &owned
            }
        };
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

fn find(
    spilled: &[((u64, u64), Arc<SpillFile>)],
    key: Option<(u64, u64)>,
) -> Option<Arc<SpillFile>> {
    let key = key?;
    spilled
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, s)| Arc::clone(s))
}

fn spill_from(mut reader: Box<dyn io::Read + '_>, name: &str) -> io::Result<SpillFile> {
    let mut spill = SpillFile::create().map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("{name}: cannot create a temporary file to read it twice: {e}"),
        )
    })?;
    io::copy(&mut reader, spill.file()).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("{name}: cannot copy it to a temporary file to read it twice: {e}"),
        )
    })?;
    Ok(spill)
}

fn named(name: &str, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{name}: cannot open: {e}"))
}

/// A hook of test builds only (none in release builds): with `RDQ_ENVELOPE_TEST_BETWEEN_READS`
/// set, runs it as a shell command (`sh -c "$RDQ_ENVELOPE_TEST_BETWEEN_READS" sh PATH`) after
/// `path` was first read and before it is read again, so that a test can change the file at
/// exactly that moment (no timing involved). Its outcome is ignored.
#[doc(hidden)]
pub fn between_reads(path: &Path) {
    #[cfg(debug_assertions)]
    if let Some(command) = std::env::var_os("RDQ_ENVELOPE_TEST_BETWEEN_READS") {
        let _ = std::process::Command::new("sh")
            .arg("-c")
            .arg(command)
            .arg("sh")
            .arg(path)
            .status();
    }
    #[cfg(not(debug_assertions))]
    let _ = path;
}
