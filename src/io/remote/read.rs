//! Reading an object as a stream, ahead of the workers (docs/cli.md#object-storage).
//!
//! An S3 object is read in segments of [`SEGMENT`] bytes, each one streamed GET of its range,
//! [`AHEAD`] of them in flight at once: the first streams as a plain GET would (measured on a
//! local server, collecting 8 MiB ranges whole before handing them on took 1.6 times as long
//! as one streamed GET, since each range waits for its last byte), and the others fill ahead
//! of it over their own connections, which is what a store that limits each connection's speed
//! needs. Each segment holds at most [`SEGMENT_CHUNKS`] chunks of its body waiting (the HTTP
//! client's reads, some KiB to a few hundred), so memory stays bounded whatever the object's
//! size. Every range asks for the ETag the object had when the read began, so an object
//! replaced during the read is an error, never a mix of two objects. An `http(s)://` input,
//! which may not answer a HEAD (a presigned URL is signed for GET alone), is read as one
//! streamed GET.

use std::collections::VecDeque;
use std::io::{self, Read};
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::stream::StreamExt;
use object_store::path::Path as ObjectPath;
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreExt};
use tokio::sync::mpsc;

use super::error::named;
use super::store;

/// The size of one segment, a range read as one streamed GET.
const SEGMENT: u64 = 32 << 20;
/// [`SEGMENT`], but for a hook of test builds only (none in release builds):
/// `RDQ_ENVELOPE_TEST_SEGMENT_BYTES`, so that a test's small object is read in many segments.
fn segment_bytes() -> u64 {
    #[cfg(debug_assertions)]
    if let Some(bytes) = std::env::var("RDQ_ENVELOPE_TEST_SEGMENT_BYTES")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|&b| b > 0)
    {
        return bytes;
    }
    SEGMENT
}

/// Segments in flight at once: the one being read and those ahead of it.
const AHEAD: usize = 3;
/// Chunks of a segment's body waiting to be read.
const SEGMENT_CHUNKS: usize = 64;
/// Chunks waiting for the reader thread. With the segments', at most `(AHEAD + 1) × 64` chunks
/// are held: with the HTTP client's reads of at most 400 KiB, 100 MiB at the very worst; 45 to 80 MiB
/// measured (`benches/object_storage.py`: peak RSS 60 to 98 MiB, against 16 MiB from disk).
const QUEUED_CHUNKS: usize = 64;

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
    let (tx, rx) = mpsc::channel(QUEUED_CHUNKS);
    let task = store::spawn(async move {
        let (size, segment) = (stamp.size, segment_bytes());
        let mut segments =
            (0..size.div_ceil(segment)).map(move |i| i * segment..((i + 1) * segment).min(size));
        let start = |range: Range<u64>| {
            let (segment_tx, segment_rx) = mpsc::channel(SEGMENT_CHUNKS);
            let (store, path, e_tag, url) = (
                Arc::clone(&store),
                path.clone(),
                stamp.e_tag.clone(),
                url.clone(),
            );
            // Ends by itself when its receiver is gone (the read stopped early).
            tokio::spawn(async move {
                stream_segment(&*store, &path, range, e_tag, &url, segment_tx).await;
            });
            segment_rx
        };
        let mut in_flight: VecDeque<_> = segments.by_ref().take(AHEAD).map(start).collect();
        while let Some(mut segment) = in_flight.pop_front() {
            while let Some(chunk) = segment.recv().await {
                let failed = chunk.is_err();
                if tx.send(chunk).await.is_err() || failed {
                    return;
                }
            }
            in_flight.extend(segments.next().map(start));
        }
    });
    Ok(ObjectReader {
        chunks: rx,
        current: Bytes::new(),
        task,
    })
}

/// Streams one segment's range into `out`, and an error if the object changed or the range
/// came back short.
async fn stream_segment(
    store: &dyn ObjectStore,
    path: &ObjectPath,
    range: Range<u64>,
    e_tag: Option<String>,
    url: &str,
    out: mpsc::Sender<io::Result<Bytes>>,
) {
    let expected = range.end - range.start;
    let options = GetOptions {
        range: Some(GetRange::Bounded(range)),
        if_match: e_tag,
        ..Default::default()
    };
    let mut body = match store.get_opts(path, options).await {
        Ok(got) => got.into_stream(),
        Err(object_store::Error::Precondition { .. }) => {
            let _ = out.send(Err(changed(url))).await;
            return;
        }
        Err(e) => {
            let _ = out.send(Err(named(url, &e))).await;
            return;
        }
    };
    let mut got = 0u64;
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| named(url, &e));
        if let Ok(bytes) = &chunk {
            got += bytes.len() as u64;
        }
        let failed = chunk.is_err();
        if out.send(chunk).await.is_err() || failed {
            return;
        }
    }
    if got != expected {
        let short = io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!(
                "{url}: a range of {expected} bytes came back with {got}: the object changed \
                 while it was read"
            ),
        );
        let _ = out.send(Err(short)).await;
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
