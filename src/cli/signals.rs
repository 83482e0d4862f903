//! Signals: SIGINT, SIGTERM, SIGHUP and SIGPIPE end the run the way `zstd` does, through the
//! run's one way out (`ending.rs`: no temporary file, upload or lock left behind, every output
//! path as it was before the run), with the conventional status (128 + the signal's number:
//! 130, 143, 129, 141).
//!
//! The ending waits for the stores (at most 30 s: the uploads aborted, the lock removed); a
//! second signal meanwhile ends the process at once, with the second signal's status.
//!
//! SIGUSR1 ends the run the same way (status 138); the process sends it to itself when a
//! thread ran out of stack in `filter --where` (`where_guard.rs`), and then ends with status 2.
//!
//! A SIGPIPE that the process raised itself (a write to a pipe whose reader went away) is not
//! an interruption: the write fails with EPIPE and the output's own rules apply (a closed
//! standard output ends the run quietly). Only a SIGPIPE sent by another process ends the run
//! here. SIGKILL cannot be caught: the temporary files it leaves are removed by the next run
//! that writes an output into the same folder (see `rdq_envelope::io`).

use signal_hook::consts::{SIGHUP, SIGINT, SIGPIPE, SIGTERM, SIGUSR1};
use signal_hook::iterator::exfiltrator::WithOrigin;
use signal_hook::iterator::SignalsInfo;

/// Starts the thread that waits for the signals. Without it (the handlers cannot be set), the
/// signals keep their default action, which still leaves every output path untouched.
pub fn install() {
    let Ok(mut signals) =
        SignalsInfo::<WithOrigin>::new([SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGUSR1])
    else {
        return;
    };
    let own = std::process::id();
    let spawned = std::thread::Builder::new()
        .name("rdq-signals".into())
        .spawn(move || {
            let mut ending = false;
            for origin in signals.forever() {
                let from_self = origin
                    .process
                    .is_some_and(|p| u32::try_from(p.pid) == Ok(own));
                if origin.signal == SIGPIPE && from_self {
                    continue;
                }
                // 128 + a signal's number: at most 128 + 31 for the signals caught here.
                let status = u8::try_from(128 + origin.signal).unwrap_or(u8::MAX);
                // A second signal while the first one's ending waits for a slow store: the
                // user has waited enough, and the store's lifecycle rule cleans up the rest.
                if ending {
                    std::process::exit(i32::from(status));
                }
                ending = true;
                // The fault handler's call: a thread ran out of stack in `--where`.
                let overflowed =
                    origin.signal == SIGUSR1 && from_self && super::where_guard::overflowed();
                // The ending on a thread of its own, so that this one hears a second signal.
                let on_its_own = std::thread::Builder::new()
                    .name("rdq-ending".into())
                    .spawn(move || end(overflowed, status));
                if on_its_own.is_err() {
                    end(overflowed, status);
                }
            }
        });
    drop(spawned);
}

/// Ends the run for a signal with `status`, or for a stack overflow (`where_guard.rs`).
fn end(overflowed: bool, status: u8) -> ! {
    match overflowed {
        true => super::where_guard::stop_after_overflow(),
        false => super::ending::fail(status, None),
    }
}
