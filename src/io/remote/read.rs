//! Reading an object as a stream, ahead of the workers (docs/cli.md#object-storage).
//!
//! An S3 object is read in ranges of [`RANGE`] bytes, [`AHEAD`] of them in flight at once, and
//! handed over in order through a channel of [`QUEUED`] ranges: the network stays busy while
//! the workers judge lines, and the memory a read holds is bounded by
//! `(AHEAD + QUEUED + 1) × RANGE` (56 MiB) whatever the object's size. Every range asks for the
//! ETag the object had when the read began, so an object replaced during the read is an error,
//! never a mix of two objects. An `http(s)://` input, which may not answer a HEAD (a presigned
//! URL is signed for GET alone), is read as one streamed GET, its chunks queued the same way.

use std::io::{self, Read};
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::stream::{self, StreamExt};
use object_store::path::Path as ObjectPath;
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreExt};
use tokio::sync::mpsc;

use super::error::named;
use super::store;

/// The size of one range request.
const RANGE: u64 = 8 << 20;
/// Range requests in flight at once.
const AHEAD: usize = 4;
/// Ranges fetched and waiting for the reader.
const QUEUED: usize = 2;
/// Chunks of a streamed GET waiting for the reader (a body arrives in chunks of some KiB).
const QUEUED_CHUNKS: usize = 256;

/// What an object was when its read began.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    /// Its size in bytes.
    pub size: u64,
    /// Its entity tag, when the store gives one.
    pub e_tag: Option<String>,
}

/// An object read as a stream: see the module's documentation.
pub struct ObjectReader {
    chunks: mpsc::Receiver<io::Result<Bytes>>,
    current: Bytes,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ObjectReader {
    fn drop(&mut self) {
        // A run that stops early (an error, `show`'s first match) stops the requests too.
        self.task.abort();
    }
}

impl Read for ObjectReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.current.is_empty() {
            match self.chunks.blocking_recv() {
                Some(Ok(chunk)) => self.current = chunk,
                Some(Err(e)) => return Err(e),
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.current.len());
        buf[..n].copy_from_slice(&self.current[..n]);
        let _ = self.current.split_to(n);
        Ok(n)
    }
}

/// What an S3 object is now (a HEAD request): its size and ETag, or an error naming the URL.
pub fn stat_s3(bucket: &str, key: &str) -> io::Result<Stamp> {
    let url = super::Url::s3_join(bucket, key);
    let store = store::s3(bucket)?;
    let path = object_path(key);
    let meta = store::block_on(store.head(&path)).map_err(|e| match e {
        // A HEAD answer has no body to say whether the key or the whole bucket is missing:
        // a listing of the key's own name says which.
        object_store::Error::NotFound { .. } => {
            match store::block_on(store.list_with_delimiter(Some(&path))) {
                Err(listing) if super::error::cause(&listing).starts_with("no such bucket") => {
                    named(&url, &listing)
                }
                _ => named(&url, &e),
            }
        }
        e => named(&url, &e),
    })?;
    Ok(Stamp {
        size: meta.size,
        e_tag: meta.e_tag,
    })
}

/// The store's name for a key: the key byte for byte (`Path::parse`, not `Path::from`, which
/// would percent-encode `%`, `#`, `~` and others into another key). `location::parse` refused
/// what it cannot hold (empty, `.`, `..` segments, control characters).
pub(super) fn object_path(key: &str) -> ObjectPath {
    ObjectPath::parse(key).unwrap_or_else(|_| ObjectPath::from(key))
}

/// Opens an S3 object for reading; `expect`, when given, is what it must still be (an input
/// read a second time).
pub fn open_s3(bucket: &str, key: &str, expect: Option<&Stamp>) -> io::Result<ObjectReader> {
    let url = super::Url::s3_join(bucket, key);
    let stamp = stat_s3(bucket, key)?;
    if let Some(expected) = expect {
        if *expected != stamp {
            return Err(changed(&url));
        }
    }
    let store: Arc<dyn ObjectStore> = store::s3(bucket)?;
    let path = object_path(key);
    let (tx, rx) = mpsc::channel(QUEUED);
    let task = store::spawn(async move {
        let e_tag = stamp.e_tag.clone();
        let ranges = (0..stamp.size.div_ceil(RANGE))
            .map(move |i| i * RANGE..((i + 1) * RANGE).min(stamp.size));
        let mut fetched = stream::iter(ranges)
            .map(|range| fetch(Arc::clone(&store), &path, range, e_tag.clone(), &url))
            .buffered(AHEAD);
        while let Some(chunk) = fetched.next().await {
            let failed = chunk.is_err();
            if tx.send(chunk).await.is_err() || failed {
                return;
            }
        }
    });
    Ok(ObjectReader {
        chunks: rx,
        current: Bytes::new(),
        task,
    })
}

async fn fetch(
    store: Arc<dyn ObjectStore>,
    path: &ObjectPath,
    range: Range<u64>,
    e_tag: Option<String>,
    url: &str,
) -> io::Result<Bytes> {
    let expected = range.end - range.start;
    let options = GetOptions {
        range: Some(GetRange::Bounded(range)),
        if_match: e_tag,
        ..Default::default()
    };
    let got = async { store.get_opts(path, options).await?.bytes().await }.await;
    match got {
        Ok(bytes) if bytes.len() as u64 == expected => Ok(bytes),
        Ok(bytes) => Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!(
                "{url}: a range of {expected} bytes came back with {}: the object changed \
                 while it was read",
                bytes.len()
            ),
        )),
        Err(object_store::Error::Precondition { .. }) => Err(changed(url)),
        Err(e) => Err(named(url, &e)),
    }
}

fn changed(url: &str) -> io::Error {
    io::Error::other(format!(
        "{url}: the object changed between two reads of this run (its size or ETag is not \
         what it was)"
    ))
}

/// Opens an `http(s)://` URL for reading, as one streamed GET.
pub fn open_http(url: &str) -> io::Result<ObjectReader> {
    let store = store::http(url)?;
    let owned = url.to_owned();
    // The first answer (status, headers) is awaited here, so that a missing or refused URL
    // is an error of the open, before any output is touched.
    let got = store::block_on(store.get_opts(&ObjectPath::default(), GetOptions::default()))
        .map_err(|e| named(&owned, &e))?;
    let (tx, rx) = mpsc::channel(QUEUED_CHUNKS);
    let task = store::spawn(async move {
        let mut body = got.into_stream();
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| named(&owned, &e));
            let failed = chunk.is_err();
            if tx.send(chunk).await.is_err() || failed {
                return;
            }
        }
    });
    Ok(ObjectReader {
        chunks: rx,
        current: Bytes::new(),
        task,
    })
}
