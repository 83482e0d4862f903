//! The run's one way out when it does not succeed: every fatal ending (a signal, the `--where`
//! watchdog, a stack overflow in `--where`, an error returned from any thread, a failed commit,
//! a panic) ends here, and everything the run began is removed on the way out
//! ([`rdq_envelope::io::release_everything`]: temporary files, multipart uploads, also those
//! still being created, lock objects and lock files). Before there was one path, each ending
//! cleaned what its author thought of: the watchdog left a 126 MB upload open and a `batch`
//! lock that refused every rerun for a minute.
//!
//! The endings that come back to `main` as an error have unwound through the run's values,
//! which clean up after themselves; the release then only finds what no value held (a lock
//! object written just before an error, say). The others (signals, the watchdog, a stack
//! overflow) end the process from another thread, with no unwinding: for them the release is
//! all there is.

/// Ends the process with `status` after releasing everything the run holds, and then writing
/// `message` (if any) on standard error. Safe from any thread; a second ending that arrives
/// meanwhile waits for this one (the release holds the commit's lock until the process ends).
pub fn fail(status: u8, message: Option<std::fmt::Arguments<'_>>) -> ! {
    // `compliance run`'s plugin commands (their process groups) and its run folder.
    super::compliance::release();
    let _released = rdq_envelope::io::release_everything();
    if let Some(message) = message {
        let _ = super::say(message);
    }
    std::process::exit(i32::from(status))
}
