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
use object_store::client::{HttpClient, HttpRequestBody, HttpResponse};
use object_store::path::Path as ObjectPath;
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreExt, RetryConfig};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

use super::error::named;
use super::{settings, store};

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
    stream_s3(bucket, key, stamp)
}

/// Reads an S3 object that was just asked about (`stamp`, from [`stat_s3`]) as a stream: the
/// ranges ask for that ETag.
pub fn stream_s3(bucket: &str, key: &str, stamp: Stamp) -> io::Result<ObjectReader> {
    let url = super::Url::s3_join(bucket, key);
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

/// Checks an `http(s)://` input before anything is read or created: the URL as the HTTP client
/// takes it, and the settings it is read with (`AWS_MAX_ATTEMPTS`, the proxies).
pub fn check_http(url: &str) -> io::Result<()> {
    store::http_uri(url)?;
    settings::retry()?;
    settings::check_proxies()
}

/// What the first answer to an `http(s)://` input said of the body, for resuming it.
struct HttpBody {
    /// A strong ETag (`W/` ones cannot vouch for ranges).
    e_tag: Option<String>,
    /// `Content-Length`, when sent (a chunked body has none).
    length: Option<u64>,
}

/// Opens an `http(s)://` URL for reading, as one streamed GET: with a `Content-Length` or
/// without one (`Transfer-Encoding: chunked`, as consoles stream an export). A body cut short
/// (a reset, a stall of 60 s, an end before its length) is resumed where it stopped with a
/// ranged GET under the first answer's ETag (`If-Match`), as an S3 segment is; a server that
/// gives no strong ETag, ignores the range (200 with the whole body) or has a new ETag cannot
/// resume, and the read is an error naming the URL and the byte reached, never a line twice or
/// a mix of two bodies.
pub fn open_http(url: &str) -> io::Result<ObjectReader> {
    let uri = store::http_uri(url)?;
    let client = store::http_client()?;
    let retry = settings::retry()?;
    let owned = url.to_owned();
    // The first answer (status, headers) is awaited here, so that a missing or refused URL
    // is an error of the open, before any output is touched.
    let first = store::block_on(http_get(&client, &uri, url, None, &retry))?;
    let headers = first.headers();
    let header = |name: http::header::HeaderName| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let body = HttpBody {
        e_tag: header(http::header::ETAG).filter(|t| !t.starts_with("W/")),
        length: header(http::header::CONTENT_LENGTH).and_then(|l| l.parse().ok()),
    };
    let (tx, rx) = mpsc::channel(QUEUED_CHUNKS);
    let task = store::spawn(async move {
        if let Err(e) = stream_http(&client, &uri, &owned, &retry, first, body, &tx).await {
            let _ = tx.send(Err(e)).await;
        }
    });
    Ok(ObjectReader {
        chunks: rx,
        current: Bytes::new(),
        task,
    })
}

/// The wait before the `n`th retry (from 0): 100 ms doubling up to 15 s.
fn backoff(retry: &RetryConfig, n: usize) -> Duration {
    let wait = retry.backoff.init_backoff.as_secs_f64() * retry.backoff.base.powi(n.min(30) as i32);
    Duration::from_secs_f64(wait.min(retry.backoff.max_backoff.as_secs_f64()))
}

/// One GET of `uri`, from byte `from.0` under the ETag `from.1` when resuming, retried as an S3
/// request is (a 5xx, 429 or 408 answer, a connection refused, reset or timed out). A success,
/// or a ranged GET's 412 and 416, is the caller's to read; any other answer is an error naming
/// the URL.
async fn http_get(
    client: &HttpClient,
    uri: &http::Uri,
    url: &str,
    from: Option<(u64, &str)>,
    retry: &RetryConfig,
) -> io::Result<HttpResponse> {
    let started = Instant::now();
    let mut retries = 0;
    loop {
        let mut request = http::Request::builder()
            .method(http::Method::GET)
            .uri(uri.clone());
        if let Some((at, e_tag)) = from {
            request = request
                .header(http::header::RANGE, format!("bytes={at}-"))
                .header(http::header::IF_MATCH, e_tag);
        }
        let request = request
            .body(HttpRequestBody::empty())
            .map_err(|e| io::Error::other(format!("{url}: {e}")))?;
        let why = match client.execute(request).await {
            Ok(answer) => {
                let status = answer.status();
                if status.is_success() || (from.is_some() && matches!(status.as_u16(), 412 | 416)) {
                    return Ok(answer);
                }
                if !(status.is_server_error() || matches!(status.as_u16(), 408 | 429)) {
                    return Err(http_status(url, status));
                }
                format!("the server answered {status}")
            }
            Err(e) => {
                use object_store::client::HttpErrorKind as K;
                let why = super::error::root(&e);
                let why = if why.is_empty() { e.to_string() } else { why };
                if !matches!(
                    e.kind(),
                    K::Connect | K::Request | K::Timeout | K::Interrupted
                ) {
                    return Err(io::Error::other(format!("{url}: {why}")));
                }
                why
            }
        };
        if retries >= retry.max_retries || started.elapsed() > retry.retry_timeout {
            return Err(io::Error::other(format!(
                "{url}: {why} (GET, after {retries} retries in {:.1} s)",
                started.elapsed().as_secs_f64()
            )));
        }
        tokio::time::sleep(backoff(retry, retries)).await;
        retries += 1;
    }
}

/// An answer that is not the body, as a person reads it.
fn http_status(url: &str, status: http::StatusCode) -> io::Error {
    let (kind, what) = match status.as_u16() {
        404 | 410 => (io::ErrorKind::NotFound, "no such object: "),
        401 | 403 => (io::ErrorKind::PermissionDenied, "access denied: "),
        300..=399 => (io::ErrorKind::Other, "a redirect not followed: "),
        _ => (io::ErrorKind::Other, ""),
    };
    io::Error::new(kind, format!("{url}: {what}the server answered {status}"))
}

/// Streams the body of `first` into `out`, resuming it where it was cut (see [`open_http`]).
async fn stream_http(
    client: &HttpClient,
    uri: &http::Uri,
    url: &str,
    retry: &RetryConfig,
    first: HttpResponse,
    body: HttpBody,
    out: &mpsc::Sender<io::Result<Bytes>>,
) -> io::Result<()> {
    let mut stream = first.into_body().bytes_stream();
    let mut got = 0u64;
    // Retries in a row without a byte between them, and since when.
    let (mut retries, mut since) = (0usize, Instant::now());
    loop {
        let why = match stream.next().await {
            Some(Ok(chunk)) => {
                got += chunk.len() as u64;
                retries = 0;
                if out.send(Ok(chunk)).await.is_err() {
                    // The read stopped early.
                    return Ok(());
                }
                continue;
            }
            None => match body.length {
                Some(length) if got < length => {
                    format!("the body ended at {got} of its {length} bytes")
                }
                Some(length) if got > length => {
                    return Err(io::Error::other(format!(
                        "{url}: the body is longer than its Content-Length ({length} bytes)"
                    )))
                }
                _ => return Ok(()),
            },
            Some(Err(e)) => {
                let root = super::error::root(&e);
                if root.is_empty() {
                    e.to_string()
                } else {
                    root
                }
            }
        };
        let cut = |more: &str| {
            io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("{url}: the body was cut at byte {got} ({why}){more}"),
            )
        };
        let Some(e_tag) = &body.e_tag else {
            return Err(cut(
                ", and without a strong ETag from the server the read cannot resume safely",
            ));
        };
        if retries == 0 {
            since = Instant::now();
        }
        if retries >= retry.max_retries || since.elapsed() > retry.retry_timeout {
            return Err(cut(&format!(" and {retries} resumptions failed")));
        }
        tokio::time::sleep(backoff(retry, retries)).await;
        retries += 1;
        let again = http_get(client, uri, url, Some((got, e_tag)), retry).await?;
        let headers = again.headers();
        let same_tag = headers
            .get(http::header::ETAG)
            .and_then(|v| v.to_str().ok())
            .is_none_or(|t| t == e_tag);
        let starts_at = headers
            .get(http::header::CONTENT_RANGE)
            .and_then(|v| v.to_str().ok())
            .and_then(|r| r.strip_prefix("bytes "))
            .and_then(|r| r.split('-').next())
            .and_then(|start| start.parse::<u64>().ok());
        match again.status().as_u16() {
            206 if same_tag && starts_at == Some(got) => {
                stream = again.into_body().bytes_stream();
            }
            206 => {
                return Err(cut(
                    ", and the server resumed it at another byte or under another ETag",
                ))
            }
            412 => return Err(changed(url)),
            200 => {
                return Err(cut(
                    ", and the server does not resume: it answers a range with the whole \
                     body",
                ))
            }
            status => {
                return Err(cut(&format!(
                    ", and the server answered {status} to its resumption"
                )))
            }
        }
    }
}

/// An S3 object read at any offset, by ranged GETs that each ask for the ETag the object had
/// when it was opened: the workers' reads of frame groups (`io::pieces`).
pub struct RangedObject {
    store: Arc<dyn ObjectStore>,
    path: ObjectPath,
    stamp: Stamp,
    url: String,
    bucket: String,
    key: String,
}

impl RangedObject {
    /// Opens an object (a HEAD request: its size and ETag).
    pub fn open(bucket: &str, key: &str) -> io::Result<RangedObject> {
        let stamp = stat_s3(bucket, key)?;
        Ok(RangedObject {
            store: store::s3(bucket)?,
            path: object_path(key),
            stamp,
            url: super::Url::s3_join(bucket, key),
            bucket: bucket.to_owned(),
            key: key.to_owned(),
        })
    }

    /// Its size when it was opened.
    pub fn size(&self) -> u64 {
        self.stamp.size
    }

    /// The object read as a stream from its start, under the same ETag (no second HEAD).
    pub fn stream(&self) -> io::Result<ObjectReader> {
        stream_s3(&self.bucket, &self.key, self.stamp.clone())
    }
}

impl crate::io::pieces::Positioned for RangedObject {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        if buf.is_empty() {
            return Ok(());
        }
        let range = offset..offset + buf.len() as u64;
        let (tx, mut rx) = mpsc::channel(SEGMENT_CHUNKS);
        let (store, path, e_tag, url) = (
            Arc::clone(&self.store),
            self.path.clone(),
            self.stamp.e_tag.clone(),
            self.url.clone(),
        );
        let task = store::spawn(async move {
            stream_segment(&*store, &path, range, e_tag, &url, tx).await;
        });
        let mut filled = 0;
        let result = (|| {
            while let Some(chunk) = rx.blocking_recv() {
                let chunk = chunk?;
                let end = filled + chunk.len();
                // stream_segment checks the length; more than asked is a store's mistake.
                let Some(place) = buf.get_mut(filled..end) else {
                    return Err(io::Error::other(format!(
                        "{}: a range of {} bytes came back longer",
                        self.url,
                        buf.len()
                    )));
                };
                place.copy_from_slice(&chunk);
                filled = end;
            }
            if filled < buf.len() {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "{}: a range of {} bytes came back with {filled}",
                        self.url,
                        buf.len()
                    ),
                ));
            }
            Ok(())
        })();
        task.abort();
        result
    }
}
