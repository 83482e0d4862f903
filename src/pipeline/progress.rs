//! Progress counters: the pipeline adds to atomics once per read or per chunk, never per line,
//! and whoever draws a bar reads them on a timer (per-record updates collapse throughput).

use std::io::{self, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// How far a run has come. Shared between the pipeline and a drawing thread.
#[derive(Debug, Default)]
pub struct Progress {
    raw_bytes: AtomicU64,
    bytes: AtomicU64,
    done_bytes: AtomicU64,
    lines: AtomicU64,
}

impl Progress {
    /// Bytes read from the sources as stored (compressed), for percent and ETA.
    pub fn raw_bytes(&self) -> u64 {
        self.raw_bytes.load(Ordering::Relaxed)
    }

    /// Decompressed bytes framed into lines.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Decompressed bytes of the lines written out: [`bytes`](Self::bytes) runs ahead of it by
    /// the chunks read and not yet worked on.
    pub fn done_bytes(&self) -> u64 {
        self.done_bytes.load(Ordering::Relaxed)
    }

    /// The stored (compressed) bytes the lines written out came from, estimated from the share
    /// of what was read that is done: how far the run has come, in the units of the inputs'
    /// sizes on disk (the reader is ahead of the writer, and a compressed stream is read ahead
    /// of its decompression).
    pub fn raw_bytes_done(&self) -> u64 {
        let (raw, read, done) = (self.raw_bytes(), self.bytes(), self.done_bytes());
        match read {
            0 => 0,
            _ => (u128::from(raw) * u128::from(done.min(read)) / u128::from(read)) as u64,
        }
    }

    /// Lines written out (in input order).
    pub fn lines(&self) -> u64 {
        self.lines.load(Ordering::Relaxed)
    }

    pub(super) fn add_raw_bytes(&self, n: u64) {
        self.raw_bytes.fetch_add(n, Ordering::Relaxed);
    }

    pub(super) fn add_bytes(&self, n: u64) {
        self.bytes.fetch_add(n, Ordering::Relaxed);
    }

    pub(super) fn add_lines(&self, n: u64) {
        self.lines.fetch_add(n, Ordering::Relaxed);
    }

    pub(super) fn add_done_bytes(&self, n: u64) {
        self.done_bytes.fetch_add(n, Ordering::Relaxed);
    }
}

/// A source that counts the bytes read from it as stored, before decompression.
pub(super) struct Counted {
    pub inner: Box<dyn Read>,
    pub progress: Arc<Progress>,
}

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.progress
            .raw_bytes
            .fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}
