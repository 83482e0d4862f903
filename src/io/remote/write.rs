//! Writing an object atomically: a multipart upload, visible only when it is completed in the
//! commit's second phase, aborted otherwise (docs/cli.md#object-storage).
//!
//! The upload is created when the output is opened (so a missing bucket or a denied write is
//! an error before anything is read), parts of [`PART`] bytes are uploaded while the run goes
//! on, at most [`IN_FLIGHT`] at once, and the last part is uploaded in the commit's first
//! phase. A run that fails, or a signal, aborts every upload not yet completed
//! ([`abort_live_uploads`]), also one whose creation is still in flight (`ending.rs`): the
//! object that was there stays as it was. SIGKILL leaves an
//! incomplete upload, invisible but stored, until a bucket lifecycle rule removes it.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use object_store::aws::AmazonS3;
use object_store::multipart::{MultipartStore, PartId};
use object_store::path::Path as ObjectPath;
use object_store::{MultipartId, PutPayload};

use super::ending::Creation;
use super::error::named;
use super::store;

/// One part: 8 MiB (S3 wants 5 MiB or more for every part but the last; equal parts suit R2).
/// With S3's 10,000 parts, an output object can hold 78 GiB.
const PART: usize = 8 << 20;
/// Parts uploading at once: the memory an output holds is at most `(IN_FLIGHT + 1) × PART`.
const IN_FLIGHT: usize = 3;
/// S3's most parts in one upload.
const MAX_PARTS: usize = 10_000;
/// How long the aborts of a run's ending may take before it ends anyway (the lifecycle rule
/// cleans up; a second signal ends it at once). A loaded store answers in well under this: at
/// 10 s, a local test server under the test suite's load did not always.
const ABORT_WAIT: Duration = Duration::from_secs(30);

/// An upload that a signal must abort: the store, the key, the upload's ID.
struct Live {
    token: u64,
    store: Arc<AmazonS3>,
    path: ObjectPath,
    id: MultipartId,
}

static LIVE: Mutex<Vec<Live>> = Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<Live>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Ends this process's business with the stores, for the run's one way out when it does not
/// succeed (`io::release_everything`, after it holds the lock of the commit: no upload is
/// completed after this). Every multipart upload still open is aborted, including those
/// whose creation the store is still answering (`ending.rs`), and the objects the run holds
/// only while it lives are removed (a `batch` lock: see `objects::put_held`); all of it
/// within `ABORT_WAIT` (30 s) in all, past which a bucket lifecycle rule cleans up.
pub fn abort_live_uploads() {
    let deadline = std::time::Instant::now() + ABORT_WAIT;
    let uploads: Vec<Live> = {
        let mut live = live();
        super::ending::begin();
        live.drain(..).collect()
    };
    let released = super::objects::release_held();
    if !uploads.is_empty() || !released.is_empty() {
        let aborts = uploads.into_iter().map(|up| async move {
            let _ = up.store.abort_multipart(&up.path, &up.id).await;
        });
        store::block_on(async {
            let both = async {
                futures_util::future::join_all(aborts).await;
                futures_util::future::join_all(released).await;
            };
            let _ = tokio::time::timeout_at(deadline.into(), both).await;
        });
    }
    // Their creators abort what the store makes now, and then stop counting.
    super::ending::wait_for_creations(deadline);
}

/// An object being written: see the module's documentation.
pub struct ObjectUpload {
    url: String,
    store: Arc<AmazonS3>,
    path: ObjectPath,
    id: MultipartId,
    token: u64,
    buffer: Vec<u8>,
    parts: Vec<PartId>,
    uploading: VecDeque<tokio::task::JoinHandle<object_store::Result<PartId>>>,
    next_part: usize,
    completed: bool,
}

impl std::fmt::Debug for ObjectUpload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ObjectUpload({})", self.url)
    }
}

impl ObjectUpload {
    /// Starts the upload of `s3://bucket/key`.
    pub fn create(bucket: &str, key: &str) -> io::Result<ObjectUpload> {
        static TOKENS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let url = super::Url::s3_join(bucket, key);
        let store = store::s3(bucket)?;
        let path = super::read::object_path(key);
        // Counted while the store answers: a run that ends meanwhile waits for the answer.
        let creation = Creation::start(&url)?;
        let id = store::block_on(store.create_multipart(&path)).map_err(|e| named(&url, &e))?;
        let token = TOKENS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        creation.settle(
            live(),
            |live| {
                live.push(Live {
                    token,
                    store: Arc::clone(&store),
                    path: path.clone(),
                    id: id.clone(),
                })
            },
            // The ending has aborted every upload it knew of; this one is ours to abort.
            || abort_within(&store, &path, &id),
        )?;
        Ok(ObjectUpload {
            url,
            store,
            path,
            id,
            token,
            buffer: Vec::with_capacity(PART),
            parts: Vec::new(),
            uploading: VecDeque::new(),
            next_part: 0,
            completed: false,
        })
    }

    /// The URL, for messages.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Hands the buffered bytes to the runtime as the next part.
    fn send_part(&mut self) -> io::Result<()> {
        if self.next_part == MAX_PARTS {
            return Err(io::Error::other(format!(
                "{}: over {MAX_PARTS} parts of {} MiB: the object would be larger than S3 \
                 takes in one upload",
                self.url,
                PART >> 20
            )));
        }
        while self.uploading.len() >= IN_FLIGHT {
            self.wait_oldest()?;
        }
        let data = PutPayload::from(std::mem::replace(
            &mut self.buffer,
            Vec::with_capacity(PART),
        ));
        let (store, path, id, index) = (
            Arc::clone(&self.store),
            self.path.clone(),
            self.id.clone(),
            self.next_part,
        );
        self.uploading.push_back(store::spawn(async move {
            store.put_part(&path, &id, index, data).await
        }));
        self.next_part += 1;
        Ok(())
    }

    fn wait_oldest(&mut self) -> io::Result<()> {
        let Some(handle) = self.uploading.pop_front() else {
            return Ok(());
        };
        match store::block_on(handle) {
            Ok(Ok(part)) => {
                self.parts.push(part);
                Ok(())
            }
            Ok(Err(e)) => Err(named(&self.url, &e)),
            Err(e) => Err(io::Error::other(format!(
                "{}: upload failed: {e}",
                self.url
            ))),
        }
    }

    /// The commit's first phase: the last part uploaded and every part acknowledged. The
    /// object is not visible yet.
    pub fn finish(&mut self) -> io::Result<()> {
        // The last part may be short, or empty when the object is (one empty part is an
        // empty object).
        if !self.buffer.is_empty() || self.next_part == 0 {
            self.send_part()?;
        }
        while !self.uploading.is_empty() {
            self.wait_oldest()?;
        }
        Ok(())
    }

    /// The commit's second phase: the upload completed, and the object visible at its key.
    pub fn complete(&mut self) -> io::Result<()> {
        let parts = std::mem::take(&mut self.parts);
        store::block_on(self.store.complete_multipart(&self.path, &self.id, parts)).map_err(
            |e| {
                // No answer (a timeout, a connection cut) is not a no: the store may have
                // completed it, and the object may be the new one.
                if super::error::no_answer(&e) {
                    io::Error::other(format!(
                        "{}; the store may have completed the upload before its answer was \
                         lost: the object may be the new one",
                        named(&self.url, &e)
                    ))
                } else {
                    named(&self.url, &e)
                }
            },
        )?;
        self.completed = true;
        let token = self.token;
        live().retain(|up| up.token != token);
        Ok(())
    }
}

impl Write for ObjectUpload {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let room = PART - self.buffer.len();
        let n = buf.len().min(room);
        self.buffer.extend_from_slice(&buf[..n]);
        if self.buffer.len() == PART {
            self.send_part()?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        // Parts go out when full; a flush cannot make a short part (only the last may be).
        Ok(())
    }
}

impl Drop for ObjectUpload {
    fn drop(&mut self) {
        if self.completed {
            return;
        }
        // The run did not complete: the parts go, and the object stays as it was.
        for handle in self.uploading.drain(..) {
            handle.abort();
        }
        let token = self.token;
        let owned = {
            let mut live = live();
            let before = live.len();
            live.retain(|up| up.token != token);
            before != live.len()
        };
        // The run's ending, when it got here first, has aborted it already.
        if owned {
            abort_within(&self.store, &self.path, &self.id);
        }
    }
}

/// Aborts an upload, waiting at most [`ABORT_WAIT`].
fn abort_within(store: &AmazonS3, path: &ObjectPath, id: &MultipartId) {
    store::block_on(async {
        let _ = tokio::time::timeout(ABORT_WAIT, store.abort_multipart(path, id)).await;
    });
}
