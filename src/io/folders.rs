//! Folders given as inputs (docs/cli.md#inputs): each is replaced by the JSON Lines files in
//! it and below, in name order, as ripgrep walks a folder: hidden names, other files and
//! links to folders are left out, and each one left out is named in the books. The command
//! line and the Python module expand their inputs with [`expand_folders`].

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};

use super::Endings;

/// An error of the expansion, with its message.
fn error(message: String) -> io::Error {
    io::Error::other(message)
}

/// A file or folder a folder held that the run does not read, and why: named in the books
/// ([`Summary::skipped`](crate::pipeline::Summary::skipped)).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Skipped {
    /// Where it is, as people read it: under the folder as given (`in/.git`), or an `s3://`
    /// URL.
    pub path: String,
    /// Why it is left out, in words (`hidden`, `not a regular file`, ...).
    pub why: String,
}

impl Skipped {
    fn new(path: &Path, why: &str) -> Skipped {
        Skipped {
            path: path.to_string_lossy().into_owned(),
            why: why.to_owned(),
        }
    }
}

/// Why an entry is left out.
const HIDDEN: &str = "hidden";
const OTHER_NAME: &str = "not named as JSON Lines (.jsonl or .ndjson, compressed or not)";
const REJECTS: &str = "a rejects file (records of rejected lines, not envelopes)";
const NOT_A_FILE: &str = "not a regular file";
const LINK_TO_FOLDER: &str = "a symbolic link to a folder (not followed)";

/// What an input names.
enum Named<'a> {
    /// A folder on disk.
    Folder,
    /// An `s3://` prefix (a key ending in `/`, or none): the objects under it.
    Prefix { bucket: &'a str, prefix: &'a str },
    /// A file, an object, standard input: read as given.
    Other,
}

fn named(path: &Path) -> Named<'_> {
    if path.as_os_str() == "-" {
        return Named::Other;
    }
    match super::parse_url(path) {
        Ok(Some(super::Url::S3 { bucket, key })) if key.is_empty() || key.ends_with('/') => {
            Named::Prefix {
                bucket,
                prefix: key,
            }
        }
        // Another URL, or a bad one (refused when it is read, as ever).
        Ok(Some(_)) | Err(_) => Named::Other,
        Ok(None) if path.is_dir() => Named::Folder,
        Ok(None) => Named::Other,
    }
}

/// Replaces every folder among `files` by the files it holds, and every `s3://` prefix by the
/// objects under it, in place; returns what they held that is left out. Standard input (`-`),
/// objects and anything that is not a folder stay as given (a missing file fails when it is
/// read, as ever). A folder without one file to read is an error: a run over nothing would
/// pass for a clean one.
///
/// ```
/// # let dir = std::env::temp_dir().join(format!("rdq-doc-folders-{}", std::process::id()));
/// # std::fs::create_dir_all(dir.join("b")).unwrap();
/// # for name in ["b/2.jsonl", "a.jsonl.zst", ".hidden.jsonl", "notes.md"] {
/// #     std::fs::write(dir.join(name), "").unwrap();
/// # }
/// let mut inputs = vec![dir.clone(), "-".into()];
/// let skipped = rdq_envelope::io::expand_folders(&mut inputs).unwrap();
/// assert_eq!(inputs, [dir.join("a.jsonl.zst"), dir.join("b/2.jsonl"), "-".into()]);
/// let why: Vec<&str> = skipped.iter().map(|s| s.why.as_str()).collect();
/// assert_eq!(why, ["hidden", "not named as JSON Lines (.jsonl or .ndjson, compressed or not)"]);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn expand_folders(files: &mut Vec<PathBuf>) -> io::Result<Vec<Skipped>> {
    if files.iter().all(|path| matches!(named(path), Named::Other)) {
        return Ok(Vec::new());
    }
    let mut skipped = Vec::new();
    let mut expanded = Vec::with_capacity(files.len());
    for path in std::mem::take(files) {
        let before = (expanded.len(), skipped.len());
        match named(&path) {
            Named::Other => {
                expanded.push(path);
                continue;
            }
            Named::Folder => walk(&path, &mut expanded, &mut skipped)?,
            Named::Prefix { bucket, prefix } => {
                list(&path, bucket, prefix, &mut expanded, &mut skipped)?
            }
        }
        if expanded.len() == before.0 {
            let left_out = &skipped[before.1..];
            return Err(error(format!(
                "{}: no .jsonl or .ndjson file in this folder or below{}",
                path.display(),
                match left_out.is_empty() {
                    true => " (it is empty)".to_owned(),
                    false => format!("; left out: {}", listed(left_out, "")),
                }
            )));
        }
    }
    *files = expanded;
    Ok(skipped)
}

/// The files to read under `folder`, in name order (byte order, a folder's files and
/// subfolders side by side, as `ls` sorts them in the C locale).
fn walk(folder: &Path, files: &mut Vec<PathBuf>, skipped: &mut Vec<Skipped>) -> io::Result<()> {
    let mut entries = walkdir::WalkDir::new(folder)
        .min_depth(1)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter();
    while let Some(entry) = entries.next() {
        let entry = entry.map_err(|error| {
            let at = error.path().unwrap_or(folder).display().to_string();
            match error.into_io_error() {
                Some(io) => self::error(format!("{at}: cannot read the folder: {io}")),
                None => self::error(format!("{at}: cannot read the folder")),
            }
        })?;
        let path = entry.path();
        let kind = entry.file_type();
        let why = if is_hidden(entry.file_name()) {
            Some(HIDDEN)
        } else if kind.is_dir() {
            continue;
        } else if kind.is_symlink() {
            match std::fs::metadata(path) {
                Ok(target) if target.is_dir() => Some(LINK_TO_FOLDER),
                Ok(target) if !target.is_file() => Some(NOT_A_FILE),
                // A file, or a link to nothing: read, so that the run names what is wrong.
                _ => by_name(entry.file_name()),
            }
        } else if !kind.is_file() {
            Some(NOT_A_FILE)
        } else {
            by_name(entry.file_name())
        };
        match why {
            None => files.push(path.to_path_buf()),
            Some(why) => {
                if kind.is_dir() {
                    entries.skip_current_dir();
                }
                skipped.push(Skipped::new(path, why));
            }
        }
    }
    Ok(())
}

/// The objects to read under an `s3://` prefix, in key order, by the rules of a folder: an
/// object under a key segment that starts with a dot is hidden (the first such segment is
/// named once), and the last segment is the name.
#[cfg(feature = "s3")]
fn list(
    url: &Path,
    bucket: &str,
    prefix: &str,
    files: &mut Vec<PathBuf>,
    skipped: &mut Vec<Skipped>,
) -> io::Result<()> {
    use super::Url;
    let listed = super::remote::objects::list(bucket, prefix)
        .map_err(|e| error(format!("{}: cannot list the prefix: {e}", url.display())))?;
    for object in listed {
        let below = object.key.strip_prefix(prefix).unwrap_or(&object.key);
        if let Some(end) = hidden_segment_end(below) {
            let path = PathBuf::from(Url::s3_join(bucket, &format!("{prefix}{}", &below[..end])));
            let hidden = Skipped::new(&path, HIDDEN);
            if skipped.last() != Some(&hidden) {
                skipped.push(hidden);
            }
            continue;
        }
        let path = PathBuf::from(Url::s3_join(bucket, &object.key));
        let name = below.rsplit('/').next().unwrap_or(below);
        match by_name(OsStr::new(name)) {
            None => files.push(path),
            Some(why) => skipped.push(Skipped::new(&path, why)),
        }
    }
    Ok(())
}

/// Without object storage the URL stays as given, and is refused as every URL is there
/// (naming the feature).
#[cfg(not(feature = "s3"))]
fn list(
    url: &Path,
    _: &str,
    _: &str,
    files: &mut Vec<PathBuf>,
    _: &mut Vec<Skipped>,
) -> io::Result<()> {
    files.push(url.to_path_buf());
    Ok(())
}

/// Where the first segment of `key` that starts with a dot ends (the hidden part of a key
/// under a prefix), if one does.
#[cfg_attr(not(feature = "s3"), allow(dead_code))]
fn hidden_segment_end(key: &str) -> Option<usize> {
    let mut start = 0;
    for segment in key.split('/') {
        if segment.starts_with('.') {
            return Some(start + segment.len());
        }
        start += segment.len() + 1;
    }
    None
}

/// A name that starts with a dot (`.git`, a tool's `.part-0001.crc`, an output being written).
fn is_hidden(name: &OsStr) -> bool {
    name.as_encoded_bytes().starts_with(b".")
}

/// Why a file is left out by its name, if it is: JSON Lines are named `.jsonl` or `.ndjson`
/// (in any letter case, then `.zst` or `.gz` or neither), and a rejects file
/// (`NAME.rejects.jsonl`, as `batch` names them) holds records, not envelopes.
fn by_name(name: &OsStr) -> Option<&'static str> {
    let name = name.to_string_lossy();
    let endings = Endings::of_name(&name);
    if !(endings.format_is("jsonl") || endings.format_is("ndjson")) {
        return Some(OTHER_NAME);
    }
    let stem = endings.stem.as_bytes();
    let rejects = stem.len() >= 8 && stem[stem.len() - 8..].eq_ignore_ascii_case(b".rejects");
    rejects.then_some(REJECTS)
}

/// The closing line's clause for what was left out: a count, and the first few names
/// (`--summary` lists every one, in the books).
#[doc(hidden)]
pub fn note(skipped: &[Skipped]) -> Option<String> {
    if skipped.is_empty() {
        return None;
    }
    let n = skipped.len();
    Some(format!(
        "; left out {n} entr{} of the folders: {}",
        if n == 1 { "y" } else { "ies" },
        listed(skipped, " (--summary lists them)")
    ))
}

/// The first few entries left out, each with why in a word or two, and how many more (then
/// `after_more`).
fn listed(skipped: &[Skipped], after_more: &str) -> String {
    const NAMED: usize = 3;
    let names: Vec<String> = skipped
        .iter()
        .take(NAMED)
        .map(|s| format!("{} ({})", s.path, short(&s.why)))
        .collect();
    match skipped.len().saturating_sub(NAMED) {
        0 => names.join(", "),
        n => format!("{} and {n} more{after_more}", names.join(", ")),
    }
}

/// A reason in a word or two, for the closing line.
fn short(why: &str) -> &str {
    match why {
        OTHER_NAME => "other name",
        REJECTS => "rejects file",
        NOT_A_FILE => "not a file",
        LINK_TO_FOLDER => "link to a folder",
        _ => why,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_say_what_a_folder_reads() {
        for read in [
            "a.jsonl",
            "B.JSONL.ZST",
            "c.ndjson.gz",
            "part-0001.jsonl.zst",
        ] {
            assert_eq!(by_name(OsStr::new(read)), None, "{read}");
        }
        for (name, why) in [
            ("manifest.json", OTHER_NAME),
            ("x.summary.json", OTHER_NAME),
            ("_SUCCESS", OTHER_NAME),
            ("notes.txt", OTHER_NAME),
            ("a.jsonl.bak", OTHER_NAME),
            ("part-1.rejects.jsonl.zst", REJECTS),
            ("part-1.REJECTS.jsonl", REJECTS),
        ] {
            assert_eq!(by_name(OsStr::new(name)), Some(why), "{name}");
        }
        assert!(is_hidden(OsStr::new(".a.jsonl")));
        assert_eq!(hidden_segment_end("a/.git/x.jsonl"), Some(6));
        assert_eq!(hidden_segment_end(".x.jsonl"), Some(8));
        assert_eq!(hidden_segment_end("a/b.jsonl"), None);
    }
}
