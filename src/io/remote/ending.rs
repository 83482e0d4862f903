//! The end of a run, as object storage sees it: what a request that creates something (a
//! multipart upload, a `batch` lock object) does when the run ends while the store is still
//! answering it.
//!
//! Such a request cannot be called back once sent, and the store may complete it after the
//! ending has aborted everything it knew of: the upload would stay open (stored, invisible,
//! 126 MB in the case that found this) and the lock would refuse every rerun for a minute. So
//! a creation is counted while it is in flight ([`Creation`]); the ending sets [`ENDING`] and
//! waits (bounded) until the count is zero; and a creation that returns into an ending undoes
//! what it made before it stops counting. The two sides meet as Dekker's pair does (each
//! writes its flag, then reads the other's, both sequentially consistent): either the creator
//! sees the ending and sends nothing, or the ending sees the creation and waits for it.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

/// Set once, when the run ends for any reason but success (a signal, the `--where` watchdog,
/// an error): from then on nothing new is created on a store.
static ENDING: AtomicBool = AtomicBool::new(false);

/// Creations in flight, and the condition the ending waits on.
static IN_FLIGHT: Mutex<usize> = Mutex::new(0);
static SETTLED: Condvar = Condvar::new();

fn in_flight() -> MutexGuard<'static, usize> {
    IN_FLIGHT.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether the run is ending: a creation that returns now undoes what it made.
fn is_ending() -> bool {
    ENDING.load(Ordering::SeqCst)
}

/// The error of a creation refused or undone because the run is ending. The run's own ending
/// says why; this is never the message a user reads first.
fn ended(url: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Interrupted,
        format!("{url}: not created: the run is ending"),
    )
}

/// A creation in flight, counted until dropped; it names what it creates, for messages.
pub(super) struct Creation {
    url: String,
}

impl Creation {
    /// Counts a creation about to be sent, unless the run is already ending (then it must not
    /// be sent at all: the error says so).
    pub(super) fn start(url: &str) -> io::Result<Creation> {
        *in_flight() += 1;
        let creation = Creation {
            url: url.to_owned(),
        };
        // After the count, so that an ending that missed the count is seen here.
        if is_ending() {
            return Err(ended(&creation.url));
        }
        Ok(creation)
    }

    /// The creation has returned: what it made is recorded in `registry` (the list the ending
    /// drains) by `record`, both under the registry's lock, unless the run is ending; then the
    /// ending has already drained the registry, so `undo` removes what was made here and the
    /// creation is an error. The count ends after either.
    pub(super) fn settle<T>(
        self,
        mut registry: MutexGuard<'_, T>,
        record: impl FnOnce(&mut T),
        undo: impl FnOnce(),
    ) -> io::Result<()> {
        if is_ending() {
            drop(registry);
            undo();
            return Err(ended(&self.url));
        }
        record(&mut registry);
        Ok(())
    }
}

impl Drop for Creation {
    fn drop(&mut self) {
        let mut count = in_flight();
        *count -= 1;
        if *count == 0 {
            SETTLED.notify_all();
        }
    }
}

/// Marks the run as ending; what is created from now on is undone by its creator.
pub(super) fn begin() {
    ENDING.store(true, Ordering::SeqCst);
}

/// Waits until every creation in flight has returned and undone what it made, or until
/// `deadline`. Call after [`begin`].
pub(super) fn wait_for_creations(deadline: Instant) {
    let mut count = in_flight();
    while *count > 0 {
        let Some(left) = deadline.checked_duration_since(Instant::now()) else {
            return;
        };
        count = SETTLED
            .wait_timeout(count, left)
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    // One test: ENDING is process-wide and never unset.
    #[test]
    fn an_ending_waits_for_a_creation_in_flight_and_refuses_new_ones() {
        let creation = Creation::start("s3://b/k").unwrap();
        let finished = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            assert!(is_ending(), "the creator sees the ending when it returns");
            // Before the drop: the ending may wake and read the clock before this thread does.
            let returned = Instant::now();
            drop(creation);
            returned
        });
        begin();
        wait_for_creations(Instant::now() + Duration::from_secs(10));
        let waited_until = Instant::now();
        assert!(finished.join().unwrap() <= waited_until);
        let refused = Creation::start("s3://b/k").err().unwrap();
        assert_eq!(refused.kind(), io::ErrorKind::Interrupted);
        assert_eq!(*in_flight(), 0);
    }
}
