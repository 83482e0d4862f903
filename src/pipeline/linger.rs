//! The linger (docs/cli.md#latency): how long the reader holds the lines of a source that has
//! gone quiet before it hands them to the workers, with the outputs flushed after them.
//!
//! Kafka's producers batch the same way (`linger.ms`): a batch goes out when it is full or
//! when its first record has waited the linger, whichever comes first. Here a chunk goes out
//! when it is full, or when the next read would wait and the first line whose output is not
//! yet flushed was read the linger ago. Until then the reader waits for more bytes (poll(2)
//! with the time left), so lines that arrive close together still share a chunk. A source that
//! always has bytes ready (a file, a fast pipe) never waits, and its chunks are full as before.

use std::time::{Duration, Instant};

use crate::io::Waits;

/// The reader's state for the linger, across its sources.
#[derive(Debug)]
pub(super) struct Linger {
    /// The most a line is held (`None`: until its chunk is full or the input ends).
    most: Option<Duration>,
    /// The source being read, when its reads may wait.
    waits: Option<Waits>,
    /// When the reader first held a line whose output is not flushed yet: the linger is
    /// counted from here.
    since: Option<Instant>,
    /// Chunks with lines went out since the last flush: their output may sit in the outputs'
    /// buffers.
    owed: bool,
}

impl Linger {
    pub(super) fn new(most: Option<Duration>) -> Self {
        Linger {
            most,
            waits: None,
            since: None,
            owed: false,
        }
    }

    /// The next source: whether its reads may wait.
    pub(super) fn source(&mut self, waits: Option<Waits>) {
        self.waits = waits.filter(|_| self.most.is_some());
    }

    /// Asked just before a read: whether to hand off what is held (and have the outputs
    /// flushed) rather than read. Never for a source that cannot wait, nor with nothing held
    /// and nothing owed a flush; otherwise true when no byte comes before the linger is over.
    pub(super) fn quiet(&mut self, holding: bool) -> bool {
        let (Some(most), Some(waits)) = (self.most, self.waits) else {
            return false;
        };
        if !holding && !self.owed {
            return false;
        }
        let now = Instant::now();
        let since = *self.since.get_or_insert(now);
        !waits.ready_within(most.saturating_sub(now.duration_since(since)))
    }

    /// Whether output is owed a flush: asked before opening a source whose reads may wait.
    pub(super) fn owed(&self) -> bool {
        self.owed && self.most.is_some()
    }

    /// A chunk went to the workers: with `flush`, every output is flushed once it is written.
    pub(super) fn sent(&mut self, flush: bool, has_lines: bool) {
        if flush {
            self.owed = false;
            self.since = None;
        } else if has_lines {
            self.owed = true;
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::fs::File;
    use std::io::{Read, Write};

    #[test]
    fn the_linger_is_counted_from_the_first_line_held_not_from_the_last_read() {
        let (reader, mut writer) = std::io::pipe().unwrap();
        let mut reader = File::from(std::os::fd::OwnedFd::from(reader));
        let most = Duration::from_millis(100);
        let mut linger = Linger::new(Some(most));
        linger.source(Waits::of_file(&reader));

        // Nothing held and nothing owed: read (and wait) at once, without polling.
        let started = Instant::now();
        assert!(!linger.quiet(false));
        assert!(started.elapsed() < most);

        // Lines held on a silent pipe: the whole linger, then hand them off.
        let started = Instant::now();
        assert!(linger.quiet(true));
        assert!(started.elapsed() >= most);
        linger.sent(true, true);

        // Bytes ready: read them, whenever the first line was held.
        writer.write_all(b"{}\n").unwrap();
        assert!(!linger.quiet(true));
        std::thread::sleep(most + Duration::from_millis(20));
        assert!(!linger.quiet(true));
        reader.read_exact(&mut [0; 3]).unwrap();
        // Past the linger, a pipe that is dry now is not waited on any more.
        let started = Instant::now();
        assert!(linger.quiet(true));
        assert!(started.elapsed() < most, "{:?}", started.elapsed());

        // A full chunk sent without a flush leaves its output owed: asked even with nothing held.
        linger.sent(true, true);
        linger.sent(false, true);
        assert!(linger.owed());
        assert!(linger.quiet(false));

        // Without a linger, or for a source that cannot wait, never.
        let mut off = Linger::new(None);
        off.source(Waits::of_file(&reader));
        off.sent(false, true);
        assert!(!off.owed() && !off.quiet(true));
    }
}
