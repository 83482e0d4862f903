//! The record of a batch run in its output folder (`manifest.json`): the run's [`Config`] and,
//! per shard, the input it was run on (size and BLAKE3 hash; for an object under an `s3://`
//! prefix also its ETag, by which a rerun knows it unread), its outputs, its books and its
//! state. It is what makes a run resumable, and what a cluster runner (`contrib/spark`)
//! assembles from the per-shard entries its tasks print: the same entries give the same bytes.
//!
//! Written as JSON with one shard per line (for `grep` and `diff`):
//!
//! ```text
//! {"format_version":2,"config":{"command":"migrate","to":2,...},"shards":[
//! {"name":"a.jsonl","size":3,"blake3":"...","state":"done","outputs":[...],"summary":{...}},
//! ...
//! ]}
//! ```

#[cfg(test)]
use std::fs;
#[cfg(test)]
use std::io;
use std::io::{BufRead, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Config, Error, Result};
use crate::io::OutputFile;
use crate::pipeline::Summary;

/// The manifest's file name in the output folder.
pub const MANIFEST: &str = "manifest.json";

/// The merged summary's file name in the output folder (written when every shard is done).
pub const SUMMARY: &str = "summary.json";

/// The manifest format this crate writes and reads: 2, the run's [`Config`] (format 1, before
/// `format_version`, recorded the command line's flags).
pub const MANIFEST_FORMAT: u32 = 2;

/// The record of a batch run in its output folder (`manifest.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// [`MANIFEST_FORMAT`].
    pub format_version: u32,
    /// The command and every option of it that decides the outputs. A run with another
    /// configuration does not reuse the outputs.
    pub config: Config,
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
    /// The BLAKE3 hash of its stored bytes. For an object (`batch` over an `s3://` prefix) it
    /// is computed as the shard is read for its run, so it is empty until the shard has run.
    pub blake3: String,
    /// An object's ETag as listed: for a shard under an `s3://` prefix, the size and ETag tell
    /// whether it is the object a run was made on, without reading it. Absent for a file (a
    /// local manifest does not have it).
    #[serde(rename = "etag", default, skip_serializing_if = "Option::is_none")]
    pub e_tag: Option<String>,
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
    /// Whether this entry was made on the input `now` (an entry planned for the shard as it is
    /// now): a file's size and BLAKE3 hash, or an object's size and ETag. An empty ETag (a
    /// store that gives none) never matches: such a shard is always run again.
    pub fn same_input(&self, now: &Entry) -> bool {
        self.size == now.size
            && match &now.e_tag {
                Some(e_tag) => !e_tag.is_empty() && self.e_tag.as_ref() == Some(e_tag),
                None => self.e_tag.is_none() && self.blake3 == now.blake3,
            }
    }

    /// Whether this entry is done, for the shard as it is now ([`Entry::same_input`]), with
    /// `outputs` as its files, and whether `present` says those are all there.
    pub fn is_done_for(
        &self,
        now: &Entry,
        outputs: &[&str],
        present: impl Fn(&str) -> bool,
    ) -> bool {
        match &self.state {
            State::Done { outputs: had, .. } => {
                self.same_input(now)
                    && had.iter().map(String::as_str).eq(outputs.iter().copied())
                    && had.iter().all(|name| present(name))
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
    /// format and the configuration on the first line.
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

/// The manifest at `path`, if there is one: see [`parse`].
#[cfg(test)]
fn load(path: &Path) -> Result<Option<Manifest>> {
    match fs::read(path) {
        Ok(bytes) => parse(&bytes, path).map(Some),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::at(format!("{}: cannot read", path.display()), e)),
    }
}

/// The manifest in `bytes`, read from `path`. One of another format is refused: format 1 (the
/// command line's flags, before `format_version`) with a message that says what to do.
pub(super) fn parse(bytes: &[u8], path: &Path) -> Result<Manifest> {
    let not_ours = |e: serde_json::Error| {
        Error::at(
            format!(
                "{}: not a manifest this rdq-envelope writes (format {MANIFEST_FORMAT})",
                path.display()
            ),
            e,
        )
    };
    // The version first, so that a manifest of another format is named as such.
    #[derive(Deserialize)]
    struct Head {
        format_version: Option<u32>,
        format: Option<u32>,
    }
    let head: Head = serde_json::from_slice(bytes).map_err(not_ours)?;
    match (head.format_version, head.format) {
        (Some(MANIFEST_FORMAT), _) => {}
        (None, Some(old)) => {
            return Err(Error::Refused(format!(
                "{}: this folder's manifest was written by an older rdq-envelope (format {old}): \
                 remove the folder or use another --out",
                path.display()
            )))
        }
        (Some(other), _) => {
            return Err(Error::Refused(format!(
                "{}: manifest format {other}, this rdq-envelope reads {MANIFEST_FORMAT}",
                path.display()
            )))
        }
        (None, None) => {}
    }
    serde_json::from_slice(bytes).map_err(not_ours)
}

/// Writes `manifest` to `path`, atomically.
pub(super) fn write(path: &Path, manifest: &Manifest) -> Result<()> {
    let mut out = OutputFile::create(path)
        .map_err(|e| Error::at(format!("{}: cannot create output", path.display()), e))?;
    out.write_all(&manifest.to_json())?;
    out.commit()?;
    Ok(())
}

/// The entries in `reader`, one JSON object a line (blank lines skipped), as `--only` prints
/// them; `name` names the reader in errors.
pub fn read_entries(reader: impl BufRead, name: &Path) -> Result<Vec<Entry>> {
    let mut entries = Vec::new();
    for (n, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| Error::at(format!("{}: cannot read", name.display()), e))?;
        if line.trim().is_empty() {
            continue;
        }
        let entry = serde_json::from_str(&line).map_err(|e| {
            Error::at(
                format!("{}:{}: not a manifest entry", name.display(), n + 1),
                e,
            )
        })?;
        entries.push(entry);
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::super::{Command, Limits, MigrateConfig, MigrateFrom};
    use super::*;

    #[test]
    fn a_manifest_reads_back() {
        let manifest = Manifest {
            format_version: MANIFEST_FORMAT,
            config: Config {
                command: Command::Migrate(MigrateConfig {
                    to: 2,
                    from: MigrateFrom::Rdq,
                }),
                limits: Limits {
                    max_envelope_bytes: 10,
                    queue_limit: BTreeMap::new(),
                    max_line_bytes: 20,
                },
                compress: None,
            },
            shards: vec![
                Entry {
                    name: "a.jsonl".into(),
                    size: 3,
                    blake3: "00".into(),
                    e_tag: None,
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
                    e_tag: None,
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

    #[test]
    fn a_manifest_of_format_1_is_refused_with_what_to_do() {
        let dir = std::env::temp_dir().join(format!("rdq-manifest-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join(MANIFEST);
        fs::write(
            &path,
            "{\"format\":1,\"command\":\"migrate\",\"flags\":{\"to\":[\"2\"]},\"shards\":[\n]}\n",
        )
        .unwrap();
        let e = load(&path).unwrap_err().chain();
        assert!(
            e.ends_with(
                "manifest.json: this folder's manifest was written by an older rdq-envelope \
                 (format 1): remove the folder or use another --out"
            ),
            "{e}"
        );
        fs::write(&path, "{\"format_version\":3}").unwrap();
        assert!(load(&path)
            .unwrap_err()
            .chain()
            .contains("manifest format 3"));
        fs::write(&path, "[]").unwrap();
        assert!(load(&path).unwrap_err().chain().contains("not a manifest"));
        fs::remove_dir_all(&dir).unwrap();
    }
}
