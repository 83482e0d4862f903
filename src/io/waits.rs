//! Inputs whose reads may wait: a pipe, a FIFO, a terminal, a socket, a character device.
//! The pipeline asks one of these whether a read would wait before it reads while it holds
//! lines, so that a slow producer's lines are not held (docs/cli.md#latency). A regular file
//! (or a block device) never waits, and a reader without a file descriptor (an object in
//! storage, an embedder's reader) is never asked.

use std::fs::File;
use std::path::Path;
use std::time::Duration;

/// The file descriptor of an input whose reads may wait for its writer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Waits {
    #[cfg(unix)]
    fd: std::os::fd::RawFd,
    /// A pipe or FIFO (not a terminal, a socket or a device).
    pipe: bool,
}

/// The capacity a pipe input is given, when it has less: 256 KiB, four times Linux's default.
/// A fast producer then fills it in fewer, larger writes, read in fewer, larger reads, and
/// each read while lines are held is preceded by a poll(2): on this project's machine `cat
/// FILE |` moved 500 MB about 1.7 times as fast into a reader of 1 MiB reads, and with a poll
/// before each read as fast as without (1 MiB gained no more). 64 pages, so that a user's
/// 64 MiB of pipes (Linux's `pipe-user-pages-soft`) takes 256 runs at once.
#[cfg(target_os = "linux")]
const PIPE_BYTES: libc::c_int = 256 << 10;

impl Waits {
    /// `file`'s descriptor, unless its reads never wait (a regular file, a block device).
    /// It stays valid while `file` is open; the caller keeps the two together.
    pub(crate) fn of_file(file: &File) -> Option<Self> {
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            let meta = file.metadata().ok()?;
            may_wait(&meta).then(|| Waits {
                fd: file.as_raw_fd(),
                pipe: is_pipe(&meta),
            })
        }
        #[cfg(not(unix))]
        {
            let _ = file;
            None
        }
    }

    /// Standard input's, unless it is a regular file or a block device (or closed).
    pub(crate) fn stdin() -> Option<Self> {
        #[cfg(unix)]
        {
            use std::os::fd::AsFd;
            // fstat through a duplicate, which std can make: the descriptor itself is the
            // process's, never closed here.
            let stdin = std::io::stdin();
            let copy = File::from(stdin.as_fd().try_clone_to_owned().ok()?);
            let meta = copy.metadata().ok()?;
            may_wait(&meta).then_some(Waits {
                fd: std::os::fd::AsRawFd::as_raw_fd(&stdin),
                pipe: is_pipe(&meta),
            })
        }
        #[cfg(not(unix))]
        None
    }

    /// A pipe's capacity raised to [`PIPE_BYTES`] when it has less (Linux; elsewhere, and when
    /// the system refuses, it stays as it is). The pipe is the producer's too: it can then
    /// write that far ahead, as into any larger pipe.
    pub(crate) fn widen_pipe(self) {
        #[cfg(target_os = "linux")]
        if self.pipe {
            #[allow(unsafe_code)]
            // SAFETY: fcntl on a descriptor the caller keeps open, with an integer argument;
            // it changes nothing in this process's memory. An error leaves the pipe as it was.
            unsafe {
                if libc::fcntl(self.fd, libc::F_GETPIPE_SZ) < PIPE_BYTES {
                    libc::fcntl(self.fd, libc::F_SETPIPE_SZ, PIPE_BYTES);
                }
            }
        }
    }

    /// Whether a read would not wait (bytes are there, or the end of the stream, or an error)
    /// now or before `timeout` has passed. With a zero `timeout` it only looks.
    pub(crate) fn ready_within(self, timeout: Duration) -> bool {
        #[cfg(unix)]
        {
            poll_readable(self.fd, timeout)
        }
        #[cfg(not(unix))]
        {
            let _ = timeout;
            true
        }
    }
}

/// Whether `path` names something whose reads may wait (a FIFO, a character device, a
/// socket: `/dev/stdin` on a pipe, a shell's `<(...)`), told without opening it: opening a
/// FIFO waits for its writer.
pub(crate) fn path_may_wait(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|meta| may_wait(&meta))
}

fn is_pipe(meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        meta.file_type().is_fifo()
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        false
    }
}

fn may_wait(meta: &std::fs::Metadata) -> bool {
    let kind = meta.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        !(kind.is_file() || kind.is_dir() || kind.is_block_device())
    }
    #[cfg(not(unix))]
    {
        let _ = kind;
        false
    }
}

/// poll(2) for reading on one descriptor, at most `timeout`, again after a signal.
#[cfg(unix)]
#[allow(unsafe_code)]
fn poll_readable(fd: std::os::fd::RawFd, timeout: Duration) -> bool {
    use std::time::Instant;
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        // Whole milliseconds, rounded up: a timeout rounded down to 0 would only look.
        let ms = left.as_nanos().div_ceil(1_000_000);
        let ms = libc::c_int::try_from(ms).unwrap_or(libc::c_int::MAX);
        let mut one = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: `one` is a valid, initialised pollfd that lives across the call, and the
        // count says there is exactly one. A descriptor closed meanwhile only makes poll
        // answer POLLNVAL, which reads as ready: the read then says what is wrong.
        let answer = unsafe { libc::poll(&mut one, 1, ms) };
        match answer {
            0 => return false,
            n if n > 0 => return true,
            _ if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {
                if left.is_zero() {
                    return false;
                }
            }
            // Anything else (no memory for the call): read, as before there was a linger.
            _ => return true,
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Write;
    use std::time::Instant;

    #[test]
    fn a_regular_file_never_waits_and_a_pipe_does_until_written() {
        let path = std::env::temp_dir().join(format!("rdq-waits-{}", std::process::id()));
        std::fs::write(&path, b"{}\n").unwrap();
        assert!(Waits::of_file(&File::open(&path).unwrap()).is_none());
        assert!(!path_may_wait(&path));
        std::fs::remove_file(&path).unwrap();
        assert!(!path_may_wait(&std::env::temp_dir()));
        assert!(!path_may_wait(Path::new("/no/such/path")));
        assert!(path_may_wait(Path::new("/dev/null")), "a character device");

        let (reader, mut writer) = std::io::pipe().unwrap();
        let reader = File::from(std::os::fd::OwnedFd::from(reader));
        let waits = Waits::of_file(&reader).expect("a pipe may wait");
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            waits.widen_pipe();
            #[allow(unsafe_code)]
            // SAFETY: fcntl on the pipe this test holds open.
            let bytes = unsafe { libc::fcntl(reader.as_raw_fd(), libc::F_GETPIPE_SZ) };
            assert!(bytes >= PIPE_BYTES, "{bytes}");
        }
        let started = Instant::now();
        assert!(!waits.ready_within(Duration::ZERO));
        assert!(!waits.ready_within(Duration::from_millis(30)));
        assert!(started.elapsed() >= Duration::from_millis(30), "it waited");
        writer.write_all(b"{}\n").unwrap();
        assert!(waits.ready_within(Duration::ZERO));
        drop(writer);
        // The end of the stream reads at once too.
        let mut rest = Vec::new();
        std::io::Read::read_to_end(&mut &reader, &mut rest).unwrap();
        assert!(waits.ready_within(Duration::from_secs(5)));
    }
}
