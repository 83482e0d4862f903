//! Where a batch reads its shards and writes its outputs: a local folder, or (feature `s3`) an
//! `s3://bucket/prefix/` of object storage. The rest of the engine names files by their name in
//! the place and asks it to list, read, remove or join them; outputs themselves go through
//! `OutputFile` and shards through the pipeline's readers, which take a joined `s3://` path as
//! they take a file's.

#[cfg(feature = "s3")]
use std::collections::BTreeSet;
use std::fmt;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

#[cfg(feature = "s3")]
use super::shards::is_shard_name;
use super::shards::{list_shards, Shard};
use super::{Error, Result};

/// A folder of shards or of outputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Place {
    /// A local folder.
    Dir(PathBuf),
    /// Every object whose key is `prefix` and a name without `/` (`prefix` is empty, for the
    /// whole bucket, or ends in `/`).
    #[cfg(feature = "s3")]
    Prefix {
        /// The bucket.
        bucket: String,
        /// The keys' common beginning, `""` or ending in `/`.
        prefix: String,
    },
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Dir(dir) => write!(f, "{}", dir.display()),
            #[cfg(feature = "s3")]
            Place::Prefix { bucket, prefix } => write!(f, "s3://{bucket}/{prefix}"),
        }
    }
}

/// The files in an output place, to tell whether a done shard's outputs are still there: a
/// folder is asked file by file, a prefix is listed once (one request per thousand keys, not
/// one per file).
pub(crate) enum Present {
    /// Ask the folder.
    Dir(PathBuf),
    /// The names listed.
    #[cfg(feature = "s3")]
    Names(BTreeSet<String>),
}

impl Present {
    /// Whether `name` is there.
    pub(crate) fn has(&self, name: &str) -> bool {
        match self {
            Present::Dir(dir) => dir.join(name).is_file(),
            #[cfg(feature = "s3")]
            Present::Names(names) => names.contains(name),
        }
    }
}

impl Place {
    /// The place `path` names: an `s3://bucket/prefix` URL (a `/` is added to a prefix that
    /// lacks it: `s3://b/dlq` is the prefix `dlq/`), or a local folder.
    pub(crate) fn parse(path: &Path) -> Result<Place> {
        let url = crate::io::parse_url(path).map_err(|e| Error::Refused(e.to_string()))?;
        match url {
            None => Ok(Place::Dir(path.to_path_buf())),
            Some(crate::io::Url::Http(url)) => Err(Error::Refused(format!(
                "{url}: batch reads and writes folders or s3://BUCKET/PREFIX/ prefixes; an \
                 http(s) URL cannot be listed"
            ))),
            #[cfg(feature = "s3")]
            Some(crate::io::Url::S3 { bucket, key }) => {
                let mut prefix = key.to_owned();
                if !prefix.is_empty() && !prefix.ends_with('/') {
                    prefix.push('/');
                }
                Ok(Place::Prefix {
                    bucket: bucket.to_owned(),
                    prefix,
                })
            }
            #[cfg(not(feature = "s3"))]
            Some(url) => Err(Error::Refused(format!(
                "{url}: URLs need rdq-envelope's `s3` feature"
            ))),
        }
    }

    /// Whether this is object storage (no temporary files, no local lock).
    pub(crate) fn is_remote(&self) -> bool {
        !matches!(self, Place::Dir(_))
    }

    /// The path of `name` in this place, as `OutputFile` and the pipeline take it.
    pub(crate) fn join(&self, name: &str) -> PathBuf {
        match self {
            Place::Dir(dir) => dir.join(name),
            #[cfg(feature = "s3")]
            Place::Prefix { bucket, prefix } => {
                PathBuf::from(format!("s3://{bucket}/{prefix}{name}"))
            }
        }
    }

    /// Whether `other` is the same folder or prefix.
    pub(crate) fn same_as(&self, other: &Place) -> bool {
        match (self, other) {
            (Place::Dir(a), Place::Dir(b)) => {
                matches!((fs::canonicalize(a), fs::canonicalize(b)), (Ok(a), Ok(b)) if a == b)
            }
            #[allow(unreachable_patterns)]
            _ => self == other,
        }
    }

    /// The shards, sorted by name: see [`list_shards`]; under a prefix, the objects directly
    /// under it (not deeper) with a shard's name, each with its ETag.
    pub(crate) fn shards(&self) -> io::Result<Vec<Shard>> {
        match self {
            Place::Dir(dir) => list_shards(dir),
            #[cfg(feature = "s3")]
            Place::Prefix { bucket, prefix } => {
                let mut shards = Vec::new();
                for listed in crate::io::remote::objects::list(bucket, prefix)? {
                    let Some(name) = listed.key.strip_prefix(prefix.as_str()) else {
                        continue;
                    };
                    if name.contains('/') || name.starts_with('.') || !is_shard_name(name) {
                        continue;
                    }
                    shards.push(Shard {
                        name: name.to_owned(),
                        path: self.join(name),
                        size: listed.size,
                        // A store that gives no ETag: the empty one, which never matches.
                        e_tag: Some(listed.e_tag.unwrap_or_default()),
                    });
                }
                shards.sort_by(|a, b| a.name.cmp(&b.name));
                Ok(shards)
            }
        }
    }

    /// Makes the folder if it is missing (a prefix needs no making).
    pub(crate) fn make(&self) -> Result<()> {
        match self {
            Place::Dir(dir) => fs::create_dir_all(dir)
                .map_err(|e| Error::at(format!("{}: cannot make the folder", dir.display()), e)),
            #[cfg(feature = "s3")]
            Place::Prefix { .. } => Ok(()),
        }
    }

    /// The file `name` read whole, with its ETag on object storage; `None` when there is none.
    pub(crate) fn read(&self, name: &str) -> Result<Option<(Vec<u8>, Option<String>)>> {
        let path = self.join(name);
        match self {
            Place::Dir(_) => match fs::read(&path) {
                Ok(bytes) => Ok(Some((bytes, None))),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(Error::at(format!("{}: cannot read", path.display()), e)),
            },
            #[cfg(feature = "s3")]
            Place::Prefix { bucket, prefix } => {
                crate::io::remote::objects::get(bucket, &format!("{prefix}{name}"))
                    .map_err(|e| Error::at(format!("{}: cannot read", path.display()), e))
            }
        }
    }

    /// Removes the file `name`, if it is there.
    pub(crate) fn remove(&self, name: &str) -> Result<()> {
        let path = self.join(name);
        let removed = match self {
            Place::Dir(_) => match fs::remove_file(&path) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                other => other,
            },
            #[cfg(feature = "s3")]
            Place::Prefix { bucket, prefix } => {
                crate::io::remote::objects::delete(bucket, &format!("{prefix}{name}"))
            }
        };
        removed.map_err(|e| Error::at(format!("{}: cannot remove", path.display()), e))
    }

    /// What is in this output place now, for [`Present::has`].
    pub(crate) fn present(&self) -> Result<Present> {
        match self {
            Place::Dir(dir) => Ok(Present::Dir(dir.clone())),
            #[cfg(feature = "s3")]
            Place::Prefix { bucket, prefix } => {
                let listed = crate::io::remote::objects::list(bucket, prefix)
                    .map_err(|e| Error::at(format!("{self}: cannot list"), e))?;
                let names = listed
                    .into_iter()
                    .filter_map(|l| l.key.strip_prefix(prefix.as_str()).map(str::to_owned))
                    .filter(|name| !name.contains('/'))
                    .collect();
                Ok(Present::Names(names))
            }
        }
    }

    /// Opens `shard` for reading: a file, or an object that must still be the one listed (its
    /// size and ETag: every range request asks for that ETag).
    pub(crate) fn open(&self, shard: &Shard) -> io::Result<Box<dyn Read + Send>> {
        match self {
            Place::Dir(_) => Ok(Box::new(fs::File::open(&shard.path)?)),
            #[cfg(feature = "s3")]
            Place::Prefix { bucket, prefix } => {
                use crate::io::remote::{open_s3, Stamp};
                let stamp = Stamp {
                    size: shard.size,
                    e_tag: shard.e_tag.clone().filter(|t| !t.is_empty()),
                };
                let key = format!("{prefix}{}", shard.name);
                Ok(Box::new(open_s3(bucket, &key, Some(&stamp))?))
            }
        }
    }
}
