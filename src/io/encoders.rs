//! The zstd and gzip encoders under [`OutputFile`](super::OutputFile) (feature `compression`).

use std::io::{self, Write};
use std::sync::Mutex;

use zstd::stream::raw::{Encoder as ZstdEncoder, Operation};
use zstd::stream::zio::Writer as ZstdWriter;

/// A compressing writer over `W`.
pub(super) enum Encoder<W: Write> {
    /// The writer and its thread count (for its encoder's reuse).
    Zstd(ZstdWriter<W, ZstdEncoder<'static>>, u32),
    Gzip(flate2::write::GzEncoder<W>),
}

impl<W: Write> Encoder<W> {
    /// A zstd frame at [`ZSTD_LEVEL`] on `threads` threads.
    pub(super) fn zstd(out: W, threads: u32) -> io::Result<Self> {
        Ok(Encoder::Zstd(
            ZstdWriter::new(out, zstd_encoder(threads)?),
            threads,
        ))
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
            Encoder::Zstd(w, _) => w,
            Encoder::Gzip(w) => w,
        }
    }

    /// Ends the compressed stream (its last frame or member) and returns the writer under it.
    pub(super) fn finish(self) -> io::Result<W> {
        match self {
            Encoder::Zstd(mut w, threads) => {
                w.finish()?;
                let (out, encoder) = w.into_inner();
                recycle(encoder, threads);
                Ok(out)
            }
            Encoder::Gzip(w) => w.finish(),
        }
    }
}

/// zstd's own default: fast, and already far smaller than the JSON it holds.
const ZSTD_LEVEL: i32 = 3;

/// Encoders of finished outputs, by thread count, for the next output to reuse: a fresh
/// multi-threaded one allocates tens of MB, and fresh memory is slow to touch on these
/// machines (`batch` writes two outputs per shard, thousands of shards). A reset encoder
/// writes the same bytes as a fresh one.
static RECYCLED: Mutex<Vec<(u32, ZstdEncoder<'static>)>> = Mutex::new(Vec::new());

/// At most this many encoders wait for reuse.
const RECYCLED_MAX: usize = 8;

fn recycle(encoder: ZstdEncoder<'static>, threads: u32) {
    let mut recycled = RECYCLED.lock().unwrap_or_else(|e| e.into_inner());
    if recycled.len() < RECYCLED_MAX {
        recycled.push((threads, encoder));
    }
}

/// A zstd encoder at [`ZSTD_LEVEL`] on `threads` threads: a recycled one, reset, or a new one.
fn zstd_encoder(threads: u32) -> io::Result<ZstdEncoder<'static>> {
    let reused = {
        let mut recycled = RECYCLED.lock().unwrap_or_else(|e| e.into_inner());
        let at = recycled.iter().position(|(t, _)| *t == threads);
        at.map(|at| recycled.swap_remove(at).1)
    };
    if let Some(mut encoder) = reused {
        encoder.reinit()?;
        return Ok(encoder);
    }
    let mut encoder = ZstdEncoder::new(ZSTD_LEVEL)?;
    // From 1 thread up, not 2: zstd's single-threaded frames differ from its multi-threaded
    // ones, and `-j1` must write the same bytes as `-j8` (and a shard of `batch` the same as
    // a single run).
    if threads >= 1 {
        encoder.set_parameter(zstd::zstd_safe::CParameter::NbWorkers(threads))?;
    }
    Ok(encoder)
}
