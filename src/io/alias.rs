//! Refusing outputs that alias each other or an input, as `cat` refuses "input file is output
//! file": two outputs naming the same file would interleave or overwrite each other, and an
//! output that is an input destroys the one copy of the data (or, appended to while it is read,
//! grows until the disk is full).
//!
//! Files are compared by device and inode, never by name, so `./x`, a symbolic link and a hard
//! link are all caught. Only regular files (and outputs that do not exist yet) are compared:
//! devices such as `/dev/null` may be named any number of times.
//!
//! Standard error is an output like the others: a file that it is open on, named as another
//! output (`--summary err.txt 2>err.txt`), would be replaced by that output's rename, and the
//! run's messages lost with the old file. The standard streams among themselves are not
//! refused: standard output and error on one file (`>log 2>&1`) is ordinary, and an output
//! named `/dev/stdout` or `/dev/stderr` is written through the stream itself, in order.

use std::collections::HashMap;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// One stream a run reads or writes.
#[derive(Debug, Clone)]
pub enum Stream {
    /// A file by its path (`-` is not a path: use the standard streams).
    Path(PathBuf),
    /// Standard input.
    Stdin,
    /// Standard output.
    Stdout,
    /// Standard error (compared with the inputs and the outputs, not with standard output:
    /// `>log 2>&1` is ordinary).
    Stderr,
}

/// A stream and the role it plays, for messages (`-o`, `--rejects`, `input`).
#[derive(Debug, Clone)]
pub struct Named {
    /// What the stream is to the run: a flag, or "input".
    pub role: String,
    /// The stream.
    pub stream: Stream,
}

impl Named {
    /// A stream in a role.
    pub fn new(role: impl Into<String>, stream: Stream) -> Self {
        Named {
            role: role.into(),
            stream,
        }
    }

    /// A path given on the command line in a role: `-` is the standard stream of its side.
    pub fn path(role: impl Into<String>, path: &Path, output: bool) -> Self {
        let stream = match (path.as_os_str() == "-", output) {
            (true, true) => Stream::Stdout,
            (true, false) => Stream::Stdin,
            (false, _) => Stream::Path(path.to_path_buf()),
        };
        Named::new(role, stream)
    }

    /// Whether this is standard output or error, as itself or by a name (`/dev/stdout`,
    /// `/proc/self/fd/2`): written through the stream itself, so never clashing with another
    /// standard stream.
    fn is_standard(&self) -> bool {
        match &self.stream {
            Stream::Stdout | Stream::Stderr => true,
            Stream::Path(p) => super::output::names_standard(p).is_some(),
            Stream::Stdin => false,
        }
    }

    fn describe(&self) -> String {
        match &self.stream {
            Stream::Path(p) => format!("{} ({})", p.display(), self.role),
            Stream::Stdin => format!("standard input ({})", self.role),
            Stream::Stdout => format!("standard output ({})", self.role),
            Stream::Stderr => format!("standard error ({})", self.role),
        }
    }
}

/// Two streams of a run that are one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AliasError {
    /// The first stream, described.
    pub first: String,
    /// The second stream, described.
    pub second: String,
    /// Whether one of the two is an input.
    pub input: bool,
}

impl fmt::Display for AliasError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = if self.input {
            "input file is output file"
        } else {
            "two outputs are the same file"
        };
        write!(f, "{what}: {} and {}", self.first, self.second)
    }
}

impl std::error::Error for AliasError {}

/// What makes a file itself.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Identity {
    /// An existing regular file.
    Inode(u64, u64),
    /// A file not there yet: its folder and name.
    New(u64, u64, std::ffi::OsString),
    /// An object in S3: `bucket/key`, as the URL names it (keys are compared byte for byte,
    /// as S3 compares them; bucket names are lower case).
    Object(String),
}

/// Checks that no output is an input and no two outputs are one file (standard error
/// included). Streams that are not regular files (pipes, terminals, devices) are never
/// compared, nor two standard streams (see the module's documentation). Linear in the number
/// of streams: `batch` checks thousands.
pub fn check_aliases(inputs: &[Named], outputs: &[Named]) -> Result<(), AliasError> {
    let mut input_ids: HashMap<Identity, usize> = HashMap::new();
    for (i, input) in inputs.iter().enumerate() {
        if let Some(id) = identity(input) {
            input_ids.entry(id).or_insert(i);
        }
    }
    // The outputs seen so far, by file: the first one, and the first that is not a standard
    // stream (a standard stream clashes only with an output that is not one).
    let mut seen: HashMap<Identity, (usize, Option<usize>)> = HashMap::new();
    for (o, out) in outputs.iter().enumerate() {
        let Some(id) = identity(out) else { continue };
        if let Some(&i) = input_ids.get(&id) {
            return Err(AliasError {
                first: inputs[i].describe(),
                second: out.describe(),
                input: true,
            });
        }
        let standard = out.is_standard();
        let entry = seen.entry(id).or_insert((o, None));
        let earlier = match (standard, entry.1) {
            (_, Some(plain)) => Some(plain),
            (false, None) if entry.0 != o => Some(entry.0),
            _ => None,
        };
        if let Some(e) = earlier {
            return Err(AliasError {
                first: outputs[e].describe(),
                second: out.describe(),
                input: false,
            });
        }
        if !standard {
            entry.1 = Some(o);
        }
    }
    Ok(())
}

fn identity(named: &Named) -> Option<Identity> {
    let meta = match &named.stream {
        Stream::Path(path) if super::is_url(path) => {
            return match super::location::parse(path) {
                Ok(Some(super::Url::S3 { bucket, key })) => {
                    Some(Identity::Object(format!("{bucket}/{key}")))
                }
                // An http(s) input is never an output; a malformed URL is refused elsewhere.
                _ => None,
            };
        }
        Stream::Path(path) => match fs::metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return new_file(path),
            Err(_) => return None,
        },
        Stream::Stdin => standard(0)?,
        Stream::Stdout => standard(1)?,
        Stream::Stderr => standard(2)?,
    };
    inode(&meta)
}

#[cfg(unix)]
fn inode(meta: &fs::Metadata) -> Option<Identity> {
    use std::os::unix::fs::MetadataExt;
    meta.is_file()
        .then(|| Identity::Inode(meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn inode(_: &fs::Metadata) -> Option<Identity> {
    None
}

/// An output path that does not exist yet: two of them alias when their folders are one and
/// their names equal.
#[cfg(unix)]
fn new_file(path: &Path) -> Option<Identity> {
    use std::os::unix::fs::MetadataExt;
    let name = path.file_name()?.to_os_string();
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let meta = fs::metadata(dir).ok()?;
    Some(Identity::New(meta.dev(), meta.ino(), name))
}

#[cfg(not(unix))]
fn new_file(_: &Path) -> Option<Identity> {
    None
}

/// What a standard stream of this process is open on.
#[cfg(unix)]
fn standard(fd: i32) -> Option<fs::Metadata> {
    use std::os::fd::AsFd;
    let owned = match fd {
        0 => io::stdin().as_fd().try_clone_to_owned(),
        1 => io::stdout().as_fd().try_clone_to_owned(),
        _ => io::stderr().as_fd().try_clone_to_owned(),
    };
    fs::File::from(owned.ok()?).metadata().ok()
}

#[cfg(not(unix))]
fn standard(_: i32) -> Option<fs::Metadata> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_links_and_new_files_are_compared_as_files() {
        let dir = std::env::temp_dir().join(format!("rdq-alias-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let a = dir.join("a.jsonl");
        fs::write(&a, "{}\n").unwrap();
        fs::hard_link(&a, dir.join("hard")).unwrap();
        std::os::unix::fs::symlink(&a, dir.join("soft")).unwrap();
        let input = [Named::path("input", &a, false)];
        for other in ["hard", "soft", "./a.jsonl"] {
            let out = [Named::path("-o", &dir.join(other), true)];
            let e = check_aliases(&input, &out).unwrap_err();
            assert!(e.input && e.to_string().starts_with("input file is output file"));
        }
        let new = [
            Named::path("-o", &dir.join("new.jsonl"), true),
            Named::path("--rejects", &dir.join(".").join("new.jsonl"), true),
        ];
        let e = check_aliases(&input, &new).unwrap_err();
        assert!(!e.input, "{e}");
        let apart = [
            Named::path("-o", &dir.join("x"), true),
            Named::path("--rejects", &dir.join("y"), true),
            Named::path("--summary", Path::new("/dev/null"), true),
            Named::path("--valid-out", Path::new("/dev/null"), true),
        ];
        check_aliases(&input, &apart).unwrap();
        fs::remove_dir_all(&dir).unwrap();
    }
}
