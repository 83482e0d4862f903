//! The zstd and gzip encoders under [`OutputFile`](super::OutputFile) (feature `compression`).

use std::io::{self, Write};

use super::seekable::SeekableWriter;

/// A compressing writer over `W`.
pub(super) enum Encoder<W: Write> {
    /// The zstd seekable format (`seekable.rs`); boxed, as its frames' bookkeeping would make
    /// every output as large.
    Zstd(Box<SeekableWriter<W>>),
    Gzip(flate2::write::GzEncoder<W>),
}

impl<W: Write> Encoder<W> {
    /// zstd in the seekable format: frames of at most `frame_bytes` of input, compressed on
    /// `threads` threads (0: on the writing thread; the bytes are the same for any number).
    pub(super) fn zstd(out: W, threads: u32, frame_bytes: u32) -> io::Result<Self> {
        let writer = SeekableWriter::new(out, threads, frame_bytes);
        Ok(Encoder::Zstd(Box::new(writer)))
    }

    /// A gzip member at flate2's default level.
    pub(super) fn gzip(out: W) -> io::Result<Self> {
        Ok(Encoder::Gzip(flate2::write::GzEncoder::new(
            out,
            flate2::Compression::default(),
        )))
    }

    pub(super) fn writer(&mut self) -> &mut dyn Write {
        match self {
            Encoder::Zstd(w) => w,
            Encoder::Gzip(w) => w,
        }
    }

    /// Ends the compressed stream (its last frame and seek table, or its member) and returns
    /// the writer under it.
    pub(super) fn finish(self) -> io::Result<W> {
        match self {
            Encoder::Zstd(w) => w.finish(),
            Encoder::Gzip(w) => w.finish(),
        }
    }
}
