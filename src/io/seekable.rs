//! The zstd seekable format of `.zst` outputs (docs/cli.md#compression): the output cut into
//! independent zstd frames of at most a frame size of input each, then the seek table (every
//! frame's compressed and decompressed size) in a skippable frame at the end. zeekstd writes
//! both: each frame through its `RawEncoder`, the table through its `SeekTable`. Every zstd
//! decoder reads such a file as the concatenation of its frames and skips the table; a seekable
//! reader can start at any frame.
//!
//! Frames are independent, so they are compressed on worker threads of the output's own while
//! the writing thread fills the next one, and written in order: the bytes are the same for any
//! number of threads, 0 (every frame compressed on the writing thread) included.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::Mutex;
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender, TryRecvError};
use zeekstd::{EncodeOptions, FrameSizePolicy, RawEncoder, SeekTable};

use super::output::ZSTD_FRAME_BYTES_MAX;

/// zstd's own default: fast, and already far smaller than the JSON it holds.
const LEVEL: i32 = 3;

/// The most compressing threads of one output, whatever a caller asks (the command line asks
/// for at most 256): the queue of frames is allocated for that many.
const MAX_THREADS: usize = 1024;

/// A writer of the seekable format over `W`: the frame being filled, the frames being
/// compressed, and the table of the frames written.
pub(super) struct SeekableWriter<W: Write> {
    out: W,
    /// The most input bytes in one frame.
    frame_bytes: usize,
    /// The input of the frame being filled (never more than `frame_bytes`).
    filling: Vec<u8>,
    /// The frames written so far, for the seek table.
    table: SeekTable,
    frames: Frames,
}

impl<W: Write> SeekableWriter<W> {
    /// A writer of frames of at most `frame_bytes` of input (at least 1), compressed on
    /// `threads` worker threads (0: on the writing thread). Workers start as frames come, so
    /// that an output of one frame starts none.
    pub(super) fn new(out: W, threads: u32, frame_bytes: u32) -> Self {
        let frame_bytes = frame_bytes.clamp(1, ZSTD_FRAME_BYTES_MAX) as usize;
        SeekableWriter {
            out,
            frame_bytes,
            filling: Vec::new(),
            table: SeekTable::new(),
            frames: Frames::new((threads as usize).min(MAX_THREADS)),
        }
    }

    /// Ends the frame being filled, if it holds anything, and hands it to be compressed.
    fn end_frame(&mut self) -> io::Result<()> {
        if self.filling.is_empty() {
            return Ok(());
        }
        let mut frame = self.frames.spare();
        std::mem::swap(&mut frame.input, &mut self.filling);
        let written = self.frames.submit(frame)?;
        self.write_frames(written)
    }

    /// Writes compressed frames, in order, and logs them in the table.
    fn write_frames(&mut self, frames: Vec<Frame>) -> io::Result<()> {
        for frame in frames {
            let compressed = &frame.compressed[..frame.compressed_len];
            self.out.write_all(compressed)?;
            let (c_size, d_size) = (
                frame_size(compressed.len())?,
                frame_size(frame.input.len())?,
            );
            self.table.log_frame(c_size, d_size).map_err(zstd_error)?;
            self.frames.keep_spare(frame);
        }
        Ok(())
    }

    /// Every frame so far compressed and written (the frame being filled ended first).
    fn drain(&mut self) -> io::Result<()> {
        self.end_frame()?;
        let written = self.frames.wait_all()?;
        self.write_frames(written)
    }

    /// Ends the last frame, writes the seek table and returns the writer under it. An empty
    /// output is a seek table of no frame: what the format says of no data, and what `zstd -d`
    /// reads as empty.
    pub(super) fn finish(mut self) -> io::Result<W> {
        self.drain()?;
        let table = std::mem::take(&mut self.table);
        let mut serializer = table.into_serializer();
        let mut bytes = vec![0; serializer.encoded_len()];
        let mut at = 0;
        while at < bytes.len() {
            match serializer.write_into(&mut bytes[at..]) {
                0 => break,
                n => at += n,
            }
        }
        self.out.write_all(&bytes[..at])?;
        self.frames.stop();
        Ok(self.out)
    }
}

impl<W: Write> Write for SeekableWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut rest = buf;
        while !rest.is_empty() {
            let room = self.frame_bytes - self.filling.len();
            let (now, later) = rest.split_at(room.min(rest.len()));
            // A frame of up to 1 GiB grows as it fills: memory that cannot be had is an error
            // of this output, not an abort of the process.
            self.filling.try_reserve(now.len()).map_err(out_of_memory)?;
            self.filling.extend_from_slice(now);
            rest = later;
            if self.filling.len() == self.frame_bytes {
                self.end_frame()?;
            }
        }
        Ok(buf.len())
    }

    /// Ends the frame being filled (however small) and writes every frame: a reader of the
    /// output can decompress everything written so far. The pipeline flushes only when the
    /// input goes quiet, or after every line with `--line-buffered` (a frame per line).
    fn flush(&mut self) -> io::Result<()> {
        self.drain()?;
        self.out.flush()
    }
}

/// The most bytes a frame's size may count: the table holds 32-bit sizes.
fn frame_size(len: usize) -> io::Result<u32> {
    u32::try_from(len).map_err(|_| io::Error::other("a zstd frame larger than 4 GiB"))
}

#[cold]
fn out_of_memory(e: std::collections::TryReserveError) -> io::Error {
    io::Error::new(io::ErrorKind::OutOfMemory, format!("a zstd frame: {e}"))
}

fn zstd_error(e: zeekstd::Error) -> io::Error {
    io::Error::other(format!("zstd seekable format: {e}"))
}

/// A frame's buffers: its input, and its compressed bytes (`compressed_len` of them; the
/// buffer keeps its length between frames, so that it is not zeroed again for each).
#[derive(Default)]
struct Frame {
    input: Vec<u8>,
    compressed: Vec<u8>,
    compressed_len: usize,
}

/// One frame to compress, and where to say it is done.
struct Job {
    frame: Frame,
    done: Sender<io::Result<Frame>>,
}

/// The frames on their way: compressed on the writing thread (no worker), or handed to
/// workers and waited for in order.
struct Frames {
    /// The most worker threads (0: none, every frame compressed by `here`).
    limit: usize,
    /// The writing thread's compressor, when there are no workers.
    here: Option<FrameCompressor>,
    /// The workers' queue: `None` once they are told to stop.
    jobs: Option<Sender<Job>>,
    queue: Receiver<Job>,
    workers: Vec<JoinHandle<()>>,
    /// The frames handed to workers, oldest first: each one's answer.
    pending: VecDeque<Receiver<io::Result<Frame>>>,
    /// Buffers of frames written, for the next frames.
    spares: Vec<Frame>,
}

impl Frames {
    fn new(limit: usize) -> Self {
        // A bounded queue: the writer never runs more than `limit + 1` frames ahead of the
        // oldest one being compressed (see `submit`), so the memory held is bounded by the
        // frame size times the thread count.
        let (jobs, queue) = crossbeam_channel::bounded(limit.max(1));
        Frames {
            limit,
            here: None,
            jobs: Some(jobs),
            queue,
            workers: Vec::new(),
            pending: VecDeque::new(),
            spares: Vec::new(),
        }
    }

    fn spare(&mut self) -> Frame {
        self.spares.pop().unwrap_or_default()
    }

    fn keep_spare(&mut self, mut frame: Frame) {
        // A frame's buffers, and one more set: enough for the frames in flight.
        if self.spares.len() <= self.limit + 1 {
            frame.input.clear();
            self.spares.push(frame);
        }
    }

    /// Compresses `frame`, here or on a worker; returns the frames compressed since, in order,
    /// for the writer to write.
    fn submit(&mut self, mut frame: Frame) -> io::Result<Vec<Frame>> {
        if self.limit == 0 {
            let here = match &mut self.here {
                Some(here) => here,
                None => self.here.insert(FrameCompressor::take()?),
            };
            here.compress(&mut frame)?;
            return Ok(vec![frame]);
        }
        let mut done = Vec::new();
        // The oldest first when the workers are all busy and one frame waits: the writer
        // fills the next frame meanwhile.
        while self.pending.len() > self.limit {
            done.push(self.wait_oldest()?);
        }
        if self.workers.len() < self.limit && self.workers.len() <= self.pending.len() {
            let queue = self.queue.clone();
            let worker = std::thread::Builder::new()
                .name("zstd-frames".to_owned())
                .spawn(move || work(&queue))?;
            self.workers.push(worker);
        }
        let (answer, answered) = crossbeam_channel::bounded(1);
        let jobs = self.jobs.as_ref().ok_or_else(stopped)?;
        jobs.send(Job {
            frame,
            done: answer,
        })
        .map_err(|_| stopped())?;
        self.pending.push_back(answered);
        // And whatever is done already, without waiting.
        while let Some(oldest) = self.pending.front() {
            match oldest.try_recv() {
                Ok(frame) => {
                    self.pending.pop_front();
                    done.push(frame?);
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => return Err(stopped()),
            }
        }
        Ok(done)
    }

    fn wait_oldest(&mut self) -> io::Result<Frame> {
        let oldest = self.pending.pop_front().ok_or_else(stopped)?;
        oldest.recv().map_err(|_| stopped())?
    }

    /// Every frame handed over, in order.
    fn wait_all(&mut self) -> io::Result<Vec<Frame>> {
        let mut done = Vec::with_capacity(self.pending.len());
        while !self.pending.is_empty() {
            done.push(self.wait_oldest()?);
        }
        Ok(done)
    }

    /// The workers told to stop and waited for (each ends its frame first); the compressors
    /// kept for the next output.
    fn stop(&mut self) {
        self.jobs = None;
        self.pending.clear();
        // Frames queued for a run that failed: nobody will write them.
        while self.queue.try_recv().is_ok() {}
        for worker in self.workers.drain(..) {
            // A worker that panicked has said so through its frame's answer already.
            let _ = worker.join();
        }
        if let Some(here) = self.here.take() {
            here.give_back();
        }
    }
}

impl Drop for Frames {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cold]
fn stopped() -> io::Error {
    io::Error::other("a zstd compression thread stopped")
}

/// A worker: compresses frames until the queue closes.
fn work(queue: &Receiver<Job>) {
    let mut compressor: Option<FrameCompressor> = None;
    for Job { mut frame, done } in queue {
        let compressed = match &mut compressor {
            Some(compressor) => compressor.compress(&mut frame),
            None => FrameCompressor::take().and_then(|c| compressor.insert(c).compress(&mut frame)),
        };
        // The writer may have gone (a failed run): nobody to tell.
        let _ = done.send(compressed.map(|()| frame));
    }
    if let Some(compressor) = compressor {
        compressor.give_back();
    }
}

/// zeekstd's encoder, used for one whole frame at a time: the writer ends every frame itself
/// (at the frame size or at a flush) and keeps the output's seek table.
struct FrameCompressor(RawEncoder<'static>);

/// Compressors of finished outputs, for the next ones: a fresh compression context allocates
/// megabytes, and fresh memory is slow to touch on these machines (`batch` writes two outputs
/// per shard, thousands of shards). A reused context writes the same bytes as a fresh one.
static SPARE_COMPRESSORS: Mutex<Vec<FrameCompressor>> = Mutex::new(Vec::new());

/// At most this many compressors wait for reuse.
const SPARE_COMPRESSORS_MAX: usize = 16;

impl FrameCompressor {
    /// A spare compressor, or a new one.
    fn take() -> io::Result<Self> {
        let spare = SPARE_COMPRESSORS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop();
        match spare {
            Some(compressor) => Ok(compressor),
            None => Self::new(),
        }
    }

    fn give_back(self) {
        let mut spares = SPARE_COMPRESSORS.lock().unwrap_or_else(|e| e.into_inner());
        if spares.len() < SPARE_COMPRESSORS_MAX {
            spares.push(self);
        }
    }

    fn new() -> io::Result<Self> {
        let options = EncodeOptions::try_new()
            .ok_or_else(|| io::Error::other("cannot allocate a zstd compression context"))?;
        let encoder = options
            .compression_level(LEVEL)
            // Each frame's checksum of its content, as the zstd command writes: `zstd -t`
            // and every reader check it.
            .checksum_flag(true)
            // The format's ceiling only: the writer ends each frame before.
            .frame_size_policy(FrameSizePolicy::Uncompressed(ZSTD_FRAME_BYTES_MAX))
            .into_raw_encoder()
            .map_err(zstd_error)?;
        Ok(FrameCompressor(encoder))
    }

    /// `frame.input` as one whole zstd frame into `frame.compressed`.
    fn compress(&mut self, frame: &mut Frame) -> io::Result<()> {
        let result = self.compress_into(frame);
        // The table of one frame is the writer's to keep: this encoder's own stays empty.
        self.0.reset_seek_table();
        if result.is_err() {
            self.0.reset_frame();
        }
        result
    }

    fn compress_into(&mut self, frame: &mut Frame) -> io::Result<()> {
        let Frame {
            input,
            compressed,
            compressed_len,
        } = frame;
        // The bound of a whole frame, and room for its header and checksum: one pass.
        let bound = zstd::zstd_safe::compress_bound(input.len()) + 64;
        if compressed.len() < bound {
            let more = bound - compressed.len();
            compressed.try_reserve_exact(more).map_err(out_of_memory)?;
            compressed.resize(bound, 0);
        }
        let (mut read, mut written) = (0, 0);
        while read < input.len() {
            grow_if_full(compressed, written);
            let progress = self
                .0
                .compress(&input[read..], &mut compressed[written..])
                .map_err(zstd_error)?;
            read += progress.in_progress();
            written += progress.out_progress();
        }
        loop {
            grow_if_full(compressed, written);
            let progress = self
                .0
                .end_frame(&mut compressed[written..])
                .map_err(zstd_error)?;
            written += progress.out_progress();
            if progress.data_left() == 0 {
                break;
            }
        }
        *compressed_len = written;
        Ok(())
    }
}

/// More room when the compressed bytes have filled their buffer (never with the bound, but a
/// loop that cannot write would never end).
fn grow_if_full(compressed: &mut Vec<u8>, written: usize) {
    if written == compressed.len() {
        compressed.resize(compressed.len() * 2 + 1024, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seekable(input: &[u8], threads: u32, frame_bytes: u32, pieces: usize) -> Vec<u8> {
        let mut writer = SeekableWriter::new(Vec::new(), threads, frame_bytes);
        for piece in input.chunks(pieces.max(1)) {
            writer.write_all(piece).unwrap();
        }
        writer.finish().unwrap()
    }

    fn text(lines: usize) -> Vec<u8> {
        (0..lines)
            .flat_map(|i| {
                format!("{{\"line\":{i},\"text\":\"some words {}\"}}\n", i % 7).into_bytes()
            })
            .collect()
    }

    /// The last 9 bytes: the number of frames, the descriptor, the seekable magic.
    fn frames_in_table(bytes: &[u8]) -> u32 {
        let footer = &bytes[bytes.len() - 9..];
        assert_eq!(footer[5..], 0x8F92_EAB1u32.to_le_bytes());
        u32::from_le_bytes(footer[..4].try_into().unwrap())
    }

    #[test]
    fn frames_decode_to_the_input_for_any_thread_count() {
        let input = text(20_000);
        let one = seekable(&input, 0, 64 << 10, 7_000);
        assert!(frames_in_table(&one) > 1);
        assert_eq!(zstd::decode_all(&one[..]).unwrap(), input);
        for threads in [1, 2, 5] {
            assert_eq!(
                seekable(&input, threads, 64 << 10, 100_000),
                one,
                "{threads}"
            );
        }
        let table = SeekTable::from_seekable(&mut zeekstd::BytesWrapper::new(&one)).unwrap();
        assert_eq!(table.size_decomp(), input.len() as u64);
        assert_eq!(table.num_frames(), frames_in_table(&one));
    }

    #[test]
    fn an_empty_output_is_a_table_of_no_frame() {
        let empty = seekable(b"", 2, 1 << 20, 1);
        assert_eq!(empty.len(), 17);
        assert_eq!(frames_in_table(&empty), 0);
        assert_eq!(zstd::decode_all(&empty[..]).unwrap(), b"");
    }

    /// A writer that takes `room` bytes, then fails as a full disk does.
    struct Full {
        room: usize,
    }

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::Error::from_raw_os_error(28));
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failing_writer_is_an_error_and_the_workers_end() {
        let input = text(20_000);
        for (threads, room) in [(0, 1000), (1, 1000), (3, 1000), (3, 0), (2, 30_000)] {
            let mut writer = SeekableWriter::new(Full { room }, threads, 64 << 10);
            let written = input
                .chunks(10_000)
                .try_for_each(|piece| writer.write_all(piece));
            let failed = match written {
                Err(e) => e,
                Ok(()) => writer.finish().err().expect("the disk is full"),
            };
            assert_eq!(
                failed.raw_os_error(),
                Some(28),
                "{threads} {room}: {failed}"
            );
        }
        // Dropped mid-way with frames in flight: the workers are told to stop and joined.
        let mut writer = SeekableWriter::new(Vec::new(), 4, 64 << 10);
        writer.write_all(&input[..500_000]).unwrap();
        drop(writer);
    }

    #[test]
    fn a_flush_ends_the_frame() {
        let mut writer = SeekableWriter::new(Vec::new(), 1, 1 << 20);
        writer.write_all(b"one\n").unwrap();
        writer.flush().unwrap();
        writer.flush().unwrap();
        writer.write_all(b"two\n").unwrap();
        let bytes = writer.finish().unwrap();
        assert_eq!(frames_in_table(&bytes), 2);
        assert_eq!(zstd::decode_all(&bytes[..]).unwrap(), b"one\ntwo\n");
    }
}
