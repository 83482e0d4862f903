//! An alternate signal stack for a thread that may recurse as deep as its stack goes (a
//! `--where` expression): a handler of the fault on the stack's guard page (the command line's
//! `where_guard`) can only run on a stack of its own. Rust's runtime gives every thread one
//! when it started the process itself (`fn main`); a library loaded into another program (the
//! Python module, and the command line run from it) gets none, and the fault would end the
//! process with SIGSEGV instead of the run's own message.

/// A thread's alternate signal stack while the value lives; nothing where the thread had one
/// already.
#[derive(Debug)]
pub(crate) struct AltStack {
    #[cfg(unix)]
    memory: *mut libc::c_void,
}

/// Enough for the fault handler (an atomic store, `kill`, `pause`) and then some.
#[cfg(unix)]
const SIZE: usize = 64 * 1024;

impl AltStack {
    /// Gives this thread an alternate signal stack if it has none.
    #[cfg(unix)]
    #[allow(unsafe_code)]
    pub(crate) fn install() -> Option<AltStack> {
        // SAFETY: sigaltstack reads and writes only the `stack_t` values given, all initialised;
        // mmap asks for fresh anonymous memory, checked before use; the stack is disabled
        // before its memory is unmapped (`Drop`), and only this thread uses it.
        unsafe {
            let mut old: libc::stack_t = std::mem::zeroed();
            if libc::sigaltstack(std::ptr::null(), &mut old) != 0
                || old.ss_flags & libc::SS_DISABLE == 0
            {
                return None;
            }
            let memory = libc::mmap(
                std::ptr::null_mut(),
                SIZE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if memory == libc::MAP_FAILED {
                return None;
            }
            let stack = libc::stack_t {
                ss_sp: memory,
                ss_flags: 0,
                ss_size: SIZE,
            };
            if libc::sigaltstack(&stack, std::ptr::null_mut()) != 0 {
                libc::munmap(memory, SIZE);
                return None;
            }
            Some(AltStack { memory })
        }
    }

    /// Elsewhere, nothing to do.
    #[cfg(not(unix))]
    pub(crate) fn install() -> Option<AltStack> {
        None
    }
}

#[cfg(unix)]
impl Drop for AltStack {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        disable();
        // SAFETY: the memory is this thread's stack's (`install`), no longer in use: the stack
        // was disabled just before, and no handler runs on it now.
        unsafe { libc::munmap(self.memory, SIZE) };
    }
}

/// Turns this thread's alternate signal stack off.
#[cfg(unix)]
#[allow(unsafe_code)]
fn disable() {
    let off = libc::stack_t {
        ss_sp: std::ptr::null_mut(),
        ss_flags: libc::SS_DISABLE,
        ss_size: 0,
    };
    // SAFETY: sigaltstack reads the initialised `off`; no handler runs on the stack it ends.
    unsafe { libc::sigaltstack(&off, std::ptr::null_mut()) };
}

#[cfg(all(test, unix))]
mod tests {
    use super::AltStack;

    #[test]
    fn a_thread_without_an_alternate_stack_gets_one_and_gives_it_back() {
        std::thread::spawn(|| {
            // Rust's test threads have one: take it away first, as a foreign runtime's would.
            super::disable();
            let stack = AltStack::install().expect("installed");
            assert!(AltStack::install().is_none(), "a second one is not needed");
            drop(stack);
            assert!(
                AltStack::install().is_some(),
                "given back, it can be had again"
            );
        })
        .join()
        .unwrap();
    }
}
