//! Which files of a folder are shards, what each shard's outputs are called, and the hash that
//! tells whether a shard is the one a run was made on.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::manifest::{MANIFEST, SUMMARY};
use crate::io::{Compression, Endings};

/// Whether a file named `name` is a shard, by its endings: `.jsonl`, plain or compressed
/// (`.jsonl.zst`, `.jsonl.gz`), in any letter case, as [`Endings`] reads every name.
pub(crate) fn is_shard_name(name: &str) -> bool {
    Endings::of_name(name).format_is("jsonl")
}

/// One input file of a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shard {
    /// The file name, which also names the shard in diagnostics and in the manifest.
    pub name: String,
    /// Where it is.
    pub path: PathBuf,
    /// Its stored (compressed) size in bytes.
    pub size: u64,
    /// An object's ETag as listed (empty when the store gives none); `None` for a file.
    pub e_tag: Option<String>,
}

/// The shards of `dir`, sorted by name (byte order): its files named `*.jsonl`,
/// `*.jsonl.zst` or `*.jsonl.gz`, symbolic links followed, hidden files (`.name`) and
/// subfolders left out. A name that is not UTF-8 or holds a control character is an error (it
/// could not be named in the manifest, or listed one per line). A shard that cannot be
/// examined (a dangling symbolic link) is listed with size 0: its run fails and says why.
pub fn list_shards(dir: &Path) -> io::Result<Vec<Shard>> {
    let mut shards = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            if name.as_encoded_bytes().starts_with(b".") {
                continue;
            }
            return Err(io::Error::other(format!(
                "{}: a file name that is not UTF-8: rename it",
                entry.path().display()
            )));
        };
        if name.starts_with('.') || !is_shard_name(name) {
            continue;
        }
        let path = entry.path();
        if name.chars().any(char::is_control) {
            return Err(io::Error::other(format!(
                "{}: a file name with a control character: rename it",
                path.display()
            )));
        }
        let size = match fs::metadata(&path) {
            Ok(meta) if meta.is_file() => meta.len(),
            Ok(_) => continue,
            Err(_) => 0,
        };
        shards.push(Shard {
            name: name.to_owned(),
            path,
            size,
            e_tag: None,
        });
    }
    shards.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(shards)
}

/// The files a shard's run writes into the output folder, named from the shard's name: for
/// `part-0001.jsonl.zst`, `part-0001.jsonl.zst` (the lines), `part-0001.rejects.jsonl.zst`
/// and `part-0001.summary.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardOutputs {
    /// The lines the command writes (migrated, matching, or valid lines).
    pub lines: String,
    /// The rejected lines' records.
    pub rejects: String,
    /// The shard's summary (docs/cli.md#summary-and-the-books, `--summary`).
    pub summary: String,
}

impl ShardOutputs {
    /// The names for `shard`'s outputs. `suffix` is the compression ending of the outputs
    /// (`".zst"`, `".gz"` or `""`); `None` follows the shard's own.
    pub fn for_shard(shard: &str, suffix: Option<&str>) -> ShardOutputs {
        let endings = Endings::of_name(shard);
        let (stem, own) = match endings.format_is("jsonl") {
            true => (endings.stem, compression_suffix(endings.compression)),
            false => (shard, ""),
        };
        let suffix = suffix.unwrap_or(own);
        ShardOutputs {
            lines: format!("{stem}.jsonl{suffix}"),
            rejects: format!("{stem}.rejects.jsonl{suffix}"),
            summary: format!("{stem}.summary.json"),
        }
    }

    /// The three names, lines first.
    pub fn names(&self) -> [&str; 3] {
        [&self.lines, &self.rejects, &self.summary]
    }
}

/// The ending an output compressed as `compression` is given (in lower case, whatever the
/// shard's).
fn compression_suffix(compression: Compression) -> &'static str {
    match compression {
        Compression::Zstd => ".zst",
        Compression::Gzip => ".gz",
        Compression::None => "",
    }
}

/// An output name that two shards (or a shard and the folder's own files) would both write.
pub fn first_clash<'a>(outputs: impl IntoIterator<Item = &'a ShardOutputs>) -> Option<&'a str> {
    let mut seen = std::collections::BTreeSet::from([MANIFEST, SUMMARY]);
    outputs
        .into_iter()
        .flat_map(|o| o.names())
        .find(|name| !seen.insert(name))
}

/// The BLAKE3 hash of a file's bytes as stored (compressed shards are not decompressed), in
/// lower-case hex, and the number of bytes hashed.
pub fn hash_file(path: &Path) -> io::Result<(String, u64)> {
    let mut file = File::open(path)?;
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buf[..n]);
        size += n as u64;
    }
    Ok((hasher.finalize().to_hex().to_string(), size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_named_from_the_shard() {
        let o = ShardOutputs::for_shard("part-0001.jsonl.zst", None);
        assert_eq!(
            o.names(),
            [
                "part-0001.jsonl.zst",
                "part-0001.rejects.jsonl.zst",
                "part-0001.summary.json"
            ]
        );
        let o = ShardOutputs::for_shard("a.b.jsonl", Some(".gz"));
        assert_eq!(
            o.names(),
            ["a.b.jsonl.gz", "a.b.rejects.jsonl.gz", "a.b.summary.json"]
        );
        let o = ShardOutputs::for_shard("x.jsonl.gz", Some(""));
        assert_eq!(o.lines, "x.jsonl");
        // Endings in any letter case (the outputs' in lower case).
        assert!(is_shard_name("A.JSONL.ZST") && is_shard_name("b.Jsonl.Gz"));
        assert!(is_shard_name("c.JSONL") && !is_shard_name("d.json.zst"));
        let o = ShardOutputs::for_shard("A.JSONL.ZST", None);
        assert_eq!(
            o.names(),
            ["A.jsonl.zst", "A.rejects.jsonl.zst", "A.summary.json"]
        );
    }

    #[test]
    fn clashing_names_are_found() {
        let a = ShardOutputs::for_shard("a.jsonl", None);
        let b = ShardOutputs::for_shard("a.jsonl.zst", None);
        assert_eq!(first_clash([&a, &b]), Some("a.summary.json"));
        let r = ShardOutputs::for_shard("a.rejects.jsonl", None);
        assert_eq!(first_clash([&a, &r]), Some("a.rejects.jsonl"));
        let c = ShardOutputs::for_shard("c.jsonl", None);
        assert_eq!(first_clash([&a, &c]), None);
    }
}
