//! Small objects and listings, for `batch` over a prefix: shards listed from a prefix, and the
//! manifest and the lock read whole and written with conditions (`If-None-Match: *` to create,
//! `If-Match: ETAG` to replace), so that two runs can never both write one prefix.

use std::io;

use futures_util::TryStreamExt;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion};

use super::ending::Creation;
use super::error::named;
use super::read::object_path;
use super::store;
use super::Url;

/// An object under a prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// Its key, whole.
    pub key: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its ETag, when the store gives one (`batch` records it: the same key, size and ETag is
    /// the same object, without reading it).
    pub e_tag: Option<String>,
}

/// Every object under `prefix` (a key ending in `/`, or empty for the whole bucket), at any
/// depth, sorted by key.
pub fn list(bucket: &str, prefix: &str) -> io::Result<Vec<Listed>> {
    let url = Url::s3_join(bucket, prefix);
    let store = store::s3(bucket)?;
    let base = prefix.strip_suffix('/').unwrap_or(prefix);
    let at = (!base.is_empty()).then(|| object_path(base));
    // A listing whose body was cut is asked again (the client retries a failed request, not a
    // body that broke off), up to the attempts a request has.
    let attempts = super::settings::retry()?.max_retries + 1;
    let mut tries = 0;
    let metas: Vec<_> = loop {
        tries += 1;
        match store::block_on(store.list(at.as_ref()).try_collect()) {
            Ok(metas) => break metas,
            Err(e) if tries < attempts && e.to_string().contains("response body") => {
                std::thread::sleep(std::time::Duration::from_millis(100 << tries.min(7)));
            }
            Err(e) => return Err(named(&url, &e)),
        }
    };
    let mut listed: Vec<Listed> = metas
        .into_iter()
        .map(|meta| Listed {
            key: meta.location.to_string(),
            size: meta.size,
            e_tag: meta.e_tag,
        })
        .collect();
    listed.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(listed)
}

/// What a conditional write found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    /// Written; the object's new ETag.
    Done(Option<String>),
    /// The condition failed: another writer created or replaced the object first.
    Lost,
}

/// An object read whole, with its ETag, or `None` when there is none.
pub fn get(bucket: &str, key: &str) -> io::Result<Option<(Vec<u8>, Option<String>)>> {
    let url = Url::s3_join(bucket, key);
    let store = store::s3(bucket)?;
    let path = object_path(key);
    let got = store::block_on(async {
        let got = store.get(&path).await?;
        let e_tag = got.meta.e_tag.clone();
        Ok::<_, object_store::Error>((got.bytes().await?.to_vec(), e_tag))
    });
    match got {
        Ok(got) => Ok(Some(got)),
        Err(object_store::Error::NotFound { .. }) => Ok(None),
        Err(e) => Err(named(&url, &e)),
    }
}

/// Writes `bytes` at `key` if it is not there (`e_tag` `None`) or still has `e_tag`.
pub fn put_if(bucket: &str, key: &str, bytes: Vec<u8>, e_tag: Option<&str>) -> io::Result<Written> {
    let url = Url::s3_join(bucket, key);
    let store = store::s3(bucket)?;
    let path = object_path(key);
    let mode = match e_tag {
        None => PutMode::Create,
        Some(e_tag) => PutMode::Update(UpdateVersion {
            e_tag: Some(e_tag.to_owned()),
            version: None,
        }),
    };
    let options = PutOptions {
        mode,
        ..Default::default()
    };
    let written = store::block_on(store.put_opts(&path, PutPayload::from(bytes.clone()), options));
    match written {
        Ok(done) => Ok(Written::Done(done.e_tag)),
        // A condition that failed, or a write whose answer was lost (a timeout, a connection
        // cut, a 5xx after the store acted), may be this write itself having landed: an
        // earlier try of the same request. The object holding exactly these bytes says so
        // (a lock holds the run's host, pid and second; a manifest, what this run recorded).
        Err(
            object_store::Error::AlreadyExists { .. } | object_store::Error::Precondition { .. },
        ) => Ok(landed(bucket, key, &bytes).map_or(Written::Lost, Written::Done)),
        Err(e) => match landed(bucket, key, &bytes) {
            Some(e_tag) => Ok(Written::Done(e_tag)),
            None => Err(named(&url, &e)),
        },
    }
}

/// The object's ETag if it holds exactly `bytes`.
fn landed(bucket: &str, key: &str, bytes: &[u8]) -> Option<Option<String>> {
    match get(bucket, key) {
        Ok(Some((found, e_tag))) if found == bytes => Some(e_tag),
        _ => None,
    }
}

/// Removes an object (no error if it is gone already).
pub fn delete(bucket: &str, key: &str) -> io::Result<()> {
    let url = Url::s3_join(bucket, key);
    let store = store::s3(bucket)?;
    let path = object_path(key);
    match store::block_on(store.delete(&path)) {
        Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
        // A delete whose answer was lost may have been done: the object gone says so.
        Err(e) => match store::block_on(store.head(&path)) {
            Err(object_store::Error::NotFound { .. }) => Ok(()),
            _ => Err(named(&url, &e)),
        },
    }
}

/// Objects a run holds only while it lives (a `batch` lock), removed by the run's ending
/// through [`super::abort_live_uploads`] so that the next run need not wait for them to go
/// stale.
static HELD: std::sync::Mutex<Vec<(String, String)>> = std::sync::Mutex::new(Vec::new());

fn held() -> std::sync::MutexGuard<'static, Vec<(String, String)>> {
    HELD.lock().unwrap_or_else(|e| e.into_inner())
}

/// [`put_if`] for an object the run holds only while it lives (a `batch` lock): once written,
/// a run that ends any way but success removes it. A run that ends while the store is still
/// answering the write waits for the answer and removes what it wrote (`ending.rs`); an
/// ending that came first refuses the write.
pub fn put_held(
    bucket: &str,
    key: &str,
    bytes: Vec<u8>,
    e_tag: Option<&str>,
) -> io::Result<Written> {
    let url = Url::s3_join(bucket, key);
    let creation = Creation::start(&url)?;
    let written = put_if(bucket, key, bytes, e_tag)?;
    if let Written::Done(_) = written {
        creation.settle(
            held(),
            |held| held.push((bucket.to_owned(), key.to_owned())),
            || {
                let _ = delete(bucket, key);
            },
        )?;
    }
    Ok(written)
}

/// Forgets an object written by [`put_held`]: the run removes it itself, or leaves it.
pub fn forget_held(bucket: &str, key: &str) {
    held().retain(|(b, k)| (b.as_str(), k.as_str()) != (bucket, key));
}

/// Removes every object held, for the run's ending: the futures it waits for.
pub(super) fn release_held() -> Vec<impl std::future::Future<Output = ()>> {
    held()
        .drain(..)
        .filter_map(|(bucket, key)| {
            let store = store::s3(&bucket).ok()?;
            Some(async move {
                let _ = store.delete(&object_path(&key)).await;
            })
        })
        .collect()
}
