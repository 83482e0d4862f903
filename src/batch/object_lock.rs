//! The lock of an output prefix on object storage: an object `.rdq-batch.lock` that holds the
//! host, pid and last heartbeat (Unix seconds) of the run that writes the prefix.
//!
//! It is created only if there is none (`If-None-Match: *`), so of two runs that start at once
//! one wins. A thread of the run rewrites it every 15 s, on the condition that it is still the
//! object the run last wrote (`If-Match` its ETag). A run killed (SIGKILL, a lost machine)
//! leaves the object behind (every other ending removes it on the way out, through
//! `io::release_everything`): a lock whose heartbeat is more than 60 s old is stale, and a new
//! run replaces it on the condition that it is still that stale object (`If-Match` the ETag
//! read), so of two runs that find the same stale lock one takes it over. The heartbeat is the
//! writer's clock against the reader's: clocks a few seconds apart do no harm, clocks 45 s
//! apart could take a live run's lock, and then the manifest's own conditional writes still
//! keep the two runs from both recording it. A run whose heartbeat finds the lock taken over
//! stops at its next manifest write. The object is removed when the run ends.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::place::Place;
use super::{Error, Event, Observer, Result};
use crate::io::remote::objects::{self, Written};

/// How often a run refreshes its lock.
const HEARTBEAT: Duration = Duration::from_secs(15);

/// [`HEARTBEAT`], but for a hook of test builds only (none in release builds):
/// `RDQ_ENVELOPE_TEST_LOCK_HEARTBEAT_MS`, so that a test sees a refresh without waiting 15 s.
fn heartbeat_every() -> Duration {
    #[cfg(debug_assertions)]
    if let Some(ms) = std::env::var("RDQ_ENVELOPE_TEST_LOCK_HEARTBEAT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return Duration::from_millis(ms);
    }
    HEARTBEAT
}

/// How old a heartbeat makes a lock stale (four missed heartbeats).
const STALE_SECONDS: u64 = 60;

/// What the lock object holds.
#[derive(Debug, Serialize, Deserialize)]
struct Holder {
    host: String,
    pid: u32,
    /// Unix seconds of the last refresh, by the holder's clock.
    heartbeat: u64,
}

impl Holder {
    fn this_run() -> Holder {
        let host = ["/proc/sys/kernel/hostname", "/etc/hostname"]
            .iter()
            .find_map(|p| std::fs::read_to_string(p).ok())
            .map(|h| h.trim().to_owned())
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "unknown host".into());
        Holder {
            host,
            pid: std::process::id(),
            heartbeat: now(),
        }
    }

    fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec(self).unwrap_or_default();
        bytes.push(b'\n');
        bytes
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The lock held: its heartbeat thread, stopped and the object removed when dropped.
pub(crate) struct ObjectLock {
    bucket: String,
    key: String,
    stop: Option<mpsc::Sender<()>>,
    /// Returns whether the lock was still this run's when the heartbeat stopped.
    heartbeat: Option<JoinHandle<bool>>,
}

impl ObjectLock {
    /// Takes the lock at `key` for the output prefix `place`, or refuses when another run
    /// holds it; `lost` is set if the heartbeat finds it taken over later.
    pub(crate) fn take(
        bucket: &str,
        key: &str,
        place: &Place,
        lost: Arc<AtomicBool>,
        observer: &mut dyn Observer,
    ) -> Result<ObjectLock> {
        let url = format!("s3://{bucket}/{key}");
        let me = Holder::this_run();
        let mut written = objects::put_held(bucket, key, me.to_bytes(), None)?;
        if written == Written::Lost {
            // Gone since (its run just ended): `None` retries the creation once.
            let found = objects::get(bucket, key)?;
            let (bytes, e_tag) = found.unwrap_or_default();
            let held: Option<Holder> = serde_json::from_slice(&bytes).ok();
            match (held, e_tag) {
                (None, None) if bytes.is_empty() => {
                    written = objects::put_held(bucket, key, me.to_bytes(), None)?;
                }
                (Some(held), Some(e_tag))
                    if now().saturating_sub(held.heartbeat) > STALE_SECONDS =>
                {
                    written = objects::put_held(bucket, key, me.to_bytes(), Some(&e_tag))?;
                    if let Written::Done(_) = written {
                        observer.event(Event::StaleLockTakenOver(&format!(
                            "{url}: a lock not refreshed for {} s (host {}, pid {}): taken over",
                            now().saturating_sub(held.heartbeat),
                            held.host,
                            held.pid
                        )))?;
                    }
                }
                (Some(held), _) => {
                    return Err(Error::Refused(format!(
                        "{place}: another batch run is writing this prefix (host {}, pid {}, \
                         heartbeat {} s ago; {url} is taken over once it is {STALE_SECONDS} s \
                         old)",
                        held.host,
                        held.pid,
                        now().saturating_sub(held.heartbeat)
                    )))
                }
                (None, _) => {
                    return Err(Error::Refused(format!(
                        "{url}: not a lock this rdq-envelope writes: if no batch run is \
                         writing {place}, remove it"
                    )))
                }
            }
        }
        let e_tag = match written {
            Written::Done(Some(e_tag)) => e_tag,
            Written::Done(None) => {
                objects::forget_held(bucket, key);
                let _ = objects::delete(bucket, key);
                return Err(Error::Refused(format!(
                    "{url}: the store gives no ETag, without which the lock cannot be kept"
                )));
            }
            Written::Lost => {
                return Err(Error::Refused(format!(
                    "{place}: another batch run is writing this prefix (it took {url} first)"
                )))
            }
        };
        // Held (`put_held`): every ending of the run but success removes it too, so that a
        // rerun need not wait a minute.
        let (stop, stopped) = mpsc::channel::<()>();
        let (b, k) = (bucket.to_owned(), key.to_owned());
        let heartbeat = std::thread::Builder::new()
            .name("rdq-batch-lock".into())
            .spawn(move || beat(&b, &k, e_tag, &stopped, &lost))
            .map_err(|e| Error::at(format!("{url}: cannot start the lock's heartbeat"), e))?;
        Ok(ObjectLock {
            bucket: bucket.to_owned(),
            key: key.to_owned(),
            stop: Some(stop),
            heartbeat: Some(heartbeat),
        })
    }
}

/// Refreshes the lock every [`HEARTBEAT`] until told to stop; returns whether it is still
/// this run's.
fn beat(
    bucket: &str,
    key: &str,
    mut e_tag: String,
    stop: &mpsc::Receiver<()>,
    lost: &AtomicBool,
) -> bool {
    loop {
        match stop.recv_timeout(heartbeat_every()) {
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            _ => return true,
        }
        let me = Holder::this_run();
        match objects::put_if(bucket, key, me.to_bytes(), Some(&e_tag)) {
            Ok(Written::Done(Some(new))) => e_tag = new,
            Ok(Written::Done(None) | Written::Lost) => {
                lost.store(true, Ordering::SeqCst);
                return false;
            }
            // A failed request is tried again at the next beat: four fail before the lock is
            // stale.
            Err(_) => {}
        }
    }
}

impl Drop for ObjectLock {
    fn drop(&mut self) {
        drop(self.stop.take());
        objects::forget_held(&self.bucket, &self.key);
        let ours = self
            .heartbeat
            .take()
            .is_some_and(|h| h.join().unwrap_or(false));
        if ours {
            // Nothing to do on failure: the lock goes stale and the next run takes it over.
            let _ = objects::delete(&self.bucket, &self.key);
        }
    }
}
