//! What keeps a `--where` expression from ending, aborting or hanging the run.
//!
//! jaq evaluates an expression by recursion on the thread's own stack and cannot be
//! interrupted inside one evaluation. So a runaway expression cannot be made one line's error;
//! what the command line can do is end the run the way a signal does (every temporary file
//! removed, every output as it was) with status 2 and a message that names the line:
//!
//! - a watchdog ([`watch`]) ends it when one line has been evaluated for longer than
//!   `--where-timeout`, or the process holds more memory than `--where-max-memory`;
//! - a fault handler ([`catch_stack_overflow`]) turns a stack overflow (an expression that
//!   recurses deeper than a worker's stack) into the same ending, where Rust would abort.
//!
//! Ctrl-C needs nothing more: the signal thread (`signals.rs`) ends the run whatever the
//! workers are doing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rdq_envelope::ops::{EvalWatch, Running, EVAL_STACK_BYTES};

/// The limits `filter --where` runs under (`0` turns one off).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The longest one line's evaluation may take.
    pub timeout: Option<Duration>,
    /// The most memory the process may hold (its resident set), in MiB.
    pub max_memory_mib: Option<u64>,
}

/// Starts the watchdog over `watch`'s workers. It polls 50 times a second and ends the process
/// when a limit is passed.
pub fn watch(watch: Arc<EvalWatch>, limits: Limits) {
    let spawned = std::thread::Builder::new()
        .name("rdq-where-watch".into())
        .spawn(move || loop {
            std::thread::sleep(Duration::from_millis(20));
            let running = watch.longest();
            if let (Some(limit), Some(r)) = (limits.timeout, &running) {
                if r.elapsed > limit {
                    stop(format_args!(
                        "--where has run for over {} on {}; it may never end (--where-timeout \
                         sets the limit, 0 turns it off)",
                        seconds(limit),
                        place(r)
                    ));
                }
            }
            if let (Some(limit), Some(held)) = (limits.max_memory_mib, resident_mib()) {
                if held > limit {
                    let on = running
                        .as_ref()
                        .map(place)
                        .unwrap_or_else(|| "a line".into());
                    stop(format_args!(
                        "the run holds {held} MiB, over --where-max-memory {limit} MiB, while \
                         --where runs on {on} (0 turns the limit off)"
                    ));
                }
            }
        });
    // Without the watchdog the run goes on unbounded, as jq would; Ctrl-C still ends it.
    drop(spawned);
}

fn place(r: &Running) -> String {
    format!("line {} of {}", r.line, r.source)
}

fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    match s == 1.0 {
        true => "1 second".into(),
        false => format!("{s} seconds"),
    }
}

/// The process's resident set in MiB, where the system tells it (Linux's /proc).
fn resident_mib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024)
}

/// Ends the run as a signal does (`ending.rs`), with status 2 and `message`.
fn stop(message: std::fmt::Arguments<'_>) -> ! {
    super::ending::fail(2, Some(message))
}

/// Set by the fault handler before it asks the signal thread to end the run.
static OVERFLOWED: AtomicBool = AtomicBool::new(false);

/// Whether a thread ran out of stack (the signal thread asks when the fault handler wakes it).
pub fn overflowed() -> bool {
    OVERFLOWED.load(Ordering::SeqCst)
}

/// Ends the run for a thread that ran out of stack, from the signal thread.
pub fn stop_after_overflow() -> ! {
    stop(format_args!(
        "--where recursed deeper than a worker's stack of {} MiB allows (an expression that \
         calls itself too deeply, or forever); the run is stopped",
        EVAL_STACK_BYTES >> 20
    ))
}

/// Turns a stack overflow (SIGSEGV or SIGBUS on a guard page) into the signal thread's
/// ending (`SIGUSR1`, then [`stop_after_overflow`]), instead of Rust's abort.
#[cfg(unix)]
pub fn catch_stack_overflow() {
    extern "C" fn on_fault(_: libc::c_int, _: *mut libc::siginfo_t, _: *mut libc::c_void) {
        // Only async-signal-safe calls here: an atomic store, kill, pause.
        OVERFLOWED.store(true, Ordering::SeqCst);
        // SAFETY: kill and getpid are async-signal-safe and take no pointers.
        unsafe { libc::kill(libc::getpid(), libc::SIGUSR1) };
        // The faulting thread cannot go on (its stack is exhausted); it waits here, on the
        // alternate signal stack Rust gives every thread, until the signal thread exits.
        loop {
            // SAFETY: pause takes no arguments and is async-signal-safe.
            unsafe { libc::pause() };
        }
    }
    let handler: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) = on_fault;
    for signal in [libc::SIGSEGV, libc::SIGBUS] {
        // SAFETY: the action is fully initialised (zeroed, then the handler, flags and an
        // empty mask set); `on_fault` only makes async-signal-safe calls. SA_ONSTACK runs it
        // on the thread's alternate stack, which Rust sets up for every thread it starts,
        // since the faulting stack has no room left. A failed sigaction leaves Rust's handler,
        // which aborts as before.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = handler as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// Elsewhere a stack overflow still aborts.
#[cfg(not(unix))]
pub fn catch_stack_overflow() {}
