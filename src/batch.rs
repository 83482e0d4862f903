//! Folders of shards (`rdq-envelope batch`): which files of a folder are shards, what each
//! shard's outputs are called, and the manifest that records, per shard, the input it was run
//! on (size and BLAKE3 hash), its outputs, its books and its state.
//!
//! The manifest is what makes a run resumable and what a cluster runner (`contrib/spark`)
//! assembles from the per-shard entries its tasks print: the same entries give the same bytes.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::pipeline::Summary;

/// The manifest's file name in the output folder.
pub const MANIFEST: &str = "manifest.json";

/// The merged summary's file name in the output folder (written when every shard is done).
pub const SUMMARY: &str = "summary.json";

/// The manifest format this crate writes and reads.
pub const MANIFEST_FORMAT: u32 = 1;

/// The endings a shard's name may have: JSON Lines, plain or compressed.
const SHARD_ENDINGS: [&str; 3] = [".jsonl", ".jsonl.zst", ".jsonl.gz"];

/// One input file of a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shard {
    /// The file name, which also names the shard in diagnostics and in the manifest.
    pub name: String,
    /// Where it is.
    pub path: PathBuf,
    /// Its stored (compressed) size in bytes.
    pub size: u64,
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
        if name.starts_with('.') || !SHARD_ENDINGS.iter().any(|e| name.ends_with(e)) {
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
        let (stem, own) = SHARD_ENDINGS
            .iter()
            .rev()
            .find_map(|ending| {
                let stem = shard.strip_suffix(ending)?;
                Some((stem, &ending[".jsonl".len()..]))
            })
            .unwrap_or((shard, ""));
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

/// The record of a batch run in its output folder (`manifest.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// [`MANIFEST_FORMAT`].
    pub format: u32,
    /// The command every shard runs: `validate`, `migrate` or `filter`.
    pub command: String,
    /// Every option of the command that decides the outputs, by name, with its values as
    /// given or defaulted (worker counts and the like left out). A run with other flags does
    /// not reuse the outputs.
    pub flags: BTreeMap<String, Vec<String>>,
    /// Every shard of the input folder, in name order.
    pub shards: Vec<Entry>,
}

/// One shard in the manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The shard's file name.
    pub name: String,
    /// Its stored size in bytes.
    pub size: u64,
    /// The BLAKE3 hash of its stored bytes.
    pub blake3: String,
    /// What became of it.
    #[serde(flatten)]
    pub state: State,
}

/// A shard's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "lowercase")]
pub enum State {
    /// Not run yet (or run by a process that was stopped).
    Pending,
    /// Run to the end: its outputs are in place.
    Done {
        /// The files it wrote, lines first.
        outputs: Vec<String>,
        /// Its books.
        summary: Summary,
    },
    /// The run could not complete; no output of it is in place.
    Failed {
        /// Why.
        error: String,
    },
}

impl Entry {
    /// Whether this entry is done, for the shard as it is now (same size and hash), with
    /// `outputs` as its files, and whether those are all in `out_dir`.
    pub fn is_done_for(&self, size: u64, blake3: &str, outputs: &[&str], out_dir: &Path) -> bool {
        match &self.state {
            State::Done { outputs: had, .. } => {
                self.size == size
                    && self.blake3 == blake3
                    && had.iter().map(String::as_str).eq(outputs.iter().copied())
                    && had.iter().all(|name| out_dir.join(name).is_file())
            }
            _ => false,
        }
    }
}

impl Manifest {
    /// The merged books of the done shards, and how many shards are done.
    pub fn merged(&self) -> (Summary, usize) {
        let mut total = Summary::default();
        let mut done = 0;
        for entry in &self.shards {
            if let State::Done { summary, .. } = &entry.state {
                total.merge(summary);
                // Shards overlap in time and runs resume: the merged `seconds` is the time
                // spent on the shards, added up.
                total.seconds += summary.seconds;
                done += 1;
            }
        }
        (total, done)
    }

    /// The manifest as written: JSON with one shard per line (for `grep` and `diff`), the
    /// command and its flags on the first line.
    pub fn to_json(&self) -> Vec<u8> {
        let head = Manifest {
            shards: Vec::new(),
            ..self.clone()
        };
        let mut bytes = serde_json::to_vec(&head).expect("a manifest serializes");
        // `shards` is the last member: `...,"shards":[]}`.
        bytes.truncate(bytes.len() - "]}".len());
        for (i, entry) in self.shards.iter().enumerate() {
            bytes.extend_from_slice(if i == 0 { b"\n" } else { b",\n" });
            serde_json::to_writer(&mut bytes, entry).expect("an entry serializes");
        }
        bytes.extend_from_slice(b"\n]}\n");
        bytes
    }
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

    #[test]
    fn a_manifest_reads_back() {
        let manifest = Manifest {
            format: MANIFEST_FORMAT,
            command: "migrate".into(),
            flags: BTreeMap::from([("to".into(), vec!["2".into()])]),
            shards: vec![
                Entry {
                    name: "a.jsonl".into(),
                    size: 3,
                    blake3: "00".into(),
                    state: State::Done {
                        outputs: vec!["a.jsonl".into()],
                        summary: Summary {
                            lines: 1,
                            blank: 1,
                            ..Summary::default()
                        },
                    },
                },
                Entry {
                    name: "b.jsonl".into(),
                    size: 3,
                    blake3: "01".into(),
                    state: State::Failed {
                        error: "b.jsonl: input failed".into(),
                    },
                },
            ],
        };
        let json = manifest.to_json();
        let back: Manifest = serde_json::from_slice(&json).unwrap();
        assert_eq!(back, manifest);
        let text = String::from_utf8(json).unwrap();
        assert_eq!(text.lines().count(), 1 + 2 + 1, "{text}");
        assert!(text
            .lines()
            .nth(2)
            .unwrap()
            .starts_with("{\"name\":\"b.jsonl\""));
        let empty = Manifest {
            shards: Vec::new(),
            ..manifest
        };
        assert_eq!(
            serde_json::from_slice::<Manifest>(&empty.to_json()).unwrap(),
            empty
        );
        assert_eq!(back.merged().1, 1);
    }
}
