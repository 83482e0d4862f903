//! Runs over inputs with the GIL released, and Ctrl-C heard while they run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use pyo3::prelude::*;

/// How often a waiting call asks Python whether a signal came (Ctrl-C): well within the
/// second the module promises.
pub(crate) const SIGNAL_POLL: Duration = Duration::from_millis(100);

/// Runs `work` on a thread of its own (with the stack a `where` expression may need), the GIL
/// released, asking Python every [`SIGNAL_POLL`] whether a signal came. On Ctrl-C (or any
/// error a signal handler raised) it sets `cancel`, which ends the pipeline at its next chunk
/// with no output committed, waits for the thread, and returns the error.
pub(crate) fn run_interruptible<T: Send>(
    py: Python<'_>,
    cancel: &Arc<AtomicBool>,
    work: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    py.detach(|| {
        std::thread::scope(|scope| {
            let (done_tx, done_rx) = crossbeam_channel::bounded::<()>(1);
            let worker = std::thread::Builder::new()
                .name("rdq-python-run".into())
                .stack_size(rdq_envelope::ops::EVAL_STACK_BYTES)
                .spawn_scoped(scope, move || {
                    let result = work();
                    let _ = done_tx.send(());
                    result
                })
                .map_err(|e| crate::error("INTERNAL", format!("cannot start a thread: {e}")))?;
            let mut interrupted = None;
            loop {
                match done_rx.recv_timeout(SIGNAL_POLL) {
                    Ok(()) | Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
                    Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
                }
                if interrupted.is_none() {
                    if let Err(signal) = Python::attach(|py| py.check_signals()) {
                        cancel.store(true, Ordering::Relaxed);
                        interrupted = Some(signal);
                    }
                }
            }
            let result = worker
                .join()
                .map_err(|_| crate::error("INTERNAL", "internal error (a bug, please report it)"));
            match interrupted {
                Some(signal) => Err(signal),
                None => result,
            }
        })
    })
}
