//! A zstd input of several frames, cut into groups of whole frames that workers decode on their
//! own ([`super::pieces`]). The frames come from the seek table of the zstd seekable format
//! (what this tool writes), or, in a file without one, from walking the frames' headers
//! (`pzstd`'s files, concatenated `zstd` outputs): zstd's own `ZSTD_findFrameCompressedSize`
//! and `ZSTD_decompressBound` over the stored bytes, read once by the reader thread.
//!
//! A group decodes to at most the run's group limit (`Sizes::group`, at most [`GROUP_LIMIT`]),
//! so that the pool of chunks stays bounded. A
//! walked frame that may decode to more, or that is damaged, ends the walk: the rest of the
//! file is decoded as a stream by the reader thread, as the whole file was before (and a damaged
//! frame is then the stream decoder's error, with its offset). A file of one frame is read as a
//! stream from the start.

use std::collections::VecDeque;
use std::io::{self, Read};
use std::sync::Arc;

use zeekstd::{BytesWrapper, SeekTable};
use zstd::zstd_safe;

use super::pieces::{Decoded, Piece, Positioned, Sizes};

/// The most one group of frames may ever decode to (a run's limit may be lower:
/// `Sizes::group`). `pzstd`'s frames are four windows of input: 8 MiB at its default level,
/// 32 MiB at level 19; this tool's are 4 MiB by default.
pub(crate) const GROUP_LIMIT: usize = 32 << 20;

/// The largest seek table read: 64 MiB of entries, 5 million frames or more (20 TB at this
/// tool's 4 MiB frames). A table that says it is larger is damaged.
const TABLE_LIMIT: u64 = 64 << 20;

/// The seek table's footer: the number of frames (4 bytes), a descriptor (1), the magic (4).
const FOOTER: usize = 9;
/// The magic number that ends a seekable file.
const SEEKABLE_MAGIC: u32 = 0x8F92_EAB1;
/// A skippable frame's header: its magic (4 bytes) and its length (4).
const SKIPPABLE_HEADER: u64 = 8;

/// The first read of a walk, and how much it grows by when a frame is longer.
const WALK_READ: usize = 1 << 20;

/// What comes next of a source read in groups.
pub(crate) enum Step {
    /// A group for a worker: the piece, and the stored bytes it covers.
    Group(Piece, u64),
    /// Decode the rest as a stream (from the stored bytes on, skippable frames and all).
    Rest(Box<dyn Read + Send>),
    /// The last frame has been handed out.
    End,
}

/// The groups of one source.
pub(crate) struct Groups {
    frames: Frames,
    sizes: Sizes,
}

enum Frames {
    Table { table: SeekTable, next: u32 },
    Walk(Walk),
}

impl Groups {
    /// The groups of a zstd input of `size` bytes, or `None` to read it as a stream: one frame
    /// only, a first frame too large to decode alone, or, where frames may not be walked
    /// (`local` false: an object in storage), no seek table that covers the whole input.
    ///
    /// A seek table whose footer or entries cannot be what they say is an error that names
    /// its offset.
    pub(crate) fn plan(
        input: &dyn Positioned,
        size: u64,
        sizes: Sizes,
        local: bool,
    ) -> io::Result<Option<Groups>> {
        let group = sizes.group.clamp(1, GROUP_LIMIT);
        let sizes = Sizes {
            piece: sizes.piece.clamp(1, group),
            group,
        };
        if let Some(table) = seek_table(input, size)? {
            if table.num_frames() < 2 {
                return Ok(None);
            }
            // Every frame must fit in a group; a larger frame (`--zstd-frame 1G`) makes the
            // whole file a stream, as it was before.
            if table.max_frame_size_decomp() > group as u64 {
                return Ok(None);
            }
            return Ok(Some(Groups {
                frames: Frames::Table { table, next: 0 },
                sizes,
            }));
        }
        if !local {
            return Ok(None);
        }
        let mut walk = Walk::new(size, group);
        // Two frames of data that can be decoded alone, or it is read as a stream.
        let mut data_frames = 0;
        for i in 0.. {
            match walk.peek(input, i)? {
                Found::Frame { .. } => data_frames += 1,
                Found::Skippable { .. } => {}
                Found::Stop { .. } | Found::End => break,
            }
            if data_frames == 2 {
                return Ok(Some(Groups {
                    frames: Frames::Walk(walk),
                    sizes,
                }));
            }
        }
        Ok(None)
    }

    /// The next group.
    pub(crate) fn next(&mut self, input: &Arc<dyn Positioned>) -> io::Result<Step> {
        match &mut self.frames {
            Frames::Table { table, next } => table_group(table, next, self.sizes),
            Frames::Walk(walk) => walk.group(input, self.sizes.piece),
        }
    }
}

/// The seek table at the end of the input, when it has one that covers the whole input (a
/// seekable file with more frames appended, `cat a.zst b.zst`, has a table of the last part
/// only: it is walked instead).
fn seek_table(input: &dyn Positioned, size: u64) -> io::Result<Option<SeekTable>> {
    if size < (FOOTER as u64) + SKIPPABLE_HEADER {
        return Ok(None);
    }
    let mut footer = [0u8; FOOTER];
    input.read_exact_at(&mut footer, size - FOOTER as u64)?;
    if u32::from_le_bytes([footer[5], footer[6], footer[7], footer[8]]) != SEEKABLE_MAGIC {
        return Ok(None);
    }
    let frames = u64::from(u32::from_le_bytes([
        footer[0], footer[1], footer[2], footer[3],
    ]));
    let descriptor = footer[4];
    let entry = if descriptor & 0x80 != 0 { 12 } else { 8 };
    let table_bytes = frames * entry + FOOTER as u64 + SKIPPABLE_HEADER;
    let damaged = |at: u64, why: String| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("damaged zstd seek table at byte offset {at}: {why}"),
        )
    };
    // Read as the footer says only once it is known to fit: zeekstd would allocate for as
    // many frames as the footer names before reading them.
    if table_bytes > size || table_bytes > TABLE_LIMIT {
        return Err(damaged(
            size - FOOTER as u64,
            format!(
                "its footer names {frames} frames, a table of {table_bytes} bytes, in an input of {size}"
            ),
        ));
    }
    let at = size - table_bytes;
    let mut bytes = vec![0u8; table_bytes as usize];
    input.read_exact_at(&mut bytes, at)?;
    let table = SeekTable::from_seekable(&mut BytesWrapper::new(&bytes))
        .map_err(|e| damaged(at, e.to_string()))?;
    if table.size_comp() != at {
        return Ok(None);
    }
    // Each frame's stored bytes must be what its contents could compress to; the workers read
    // them into memory.
    for i in 0..table.num_frames() {
        let (comp, decomp) = (
            table
                .frame_size_comp(i)
                .map_err(|e| damaged(at, e.to_string()))?,
            table
                .frame_size_decomp(i)
                .map_err(|e| damaged(at, e.to_string()))?,
        );
        let most = zstd_safe::compress_bound(decomp as usize) as u64 + 64;
        if comp > most {
            let start = table.frame_start_comp(i).unwrap_or(0);
            return Err(damaged(
                at,
                format!(
                    "frame {i}, at byte offset {start}, is said to hold {comp} bytes for {decomp} \
                     decoded: more than zstd could need"
                ),
            ));
        }
    }
    Ok(Some(table))
}

/// The next group of the table's frames: frames from `next` until the group holds a piece's
/// bytes, never past the group limit decoded.
fn table_group(table: &SeekTable, next: &mut u32, sizes: Sizes) -> io::Result<Step> {
    let piece_bytes = sizes.piece;
    if *next >= table.num_frames() {
        return Ok(Step::End);
    }
    let first = *next;
    let at = table.frame_start_comp(first).map_err(table_error)?;
    let (mut compressed, mut decoded) = (0u64, 0u64);
    while *next < table.num_frames() {
        let d = table.frame_size_decomp(*next).map_err(table_error)?;
        if *next > first && decoded + d > sizes.group as u64 {
            break;
        }
        compressed += table.frame_size_comp(*next).map_err(table_error)?;
        decoded += d;
        *next += 1;
        if decoded >= piece_bytes as u64 || compressed >= piece_bytes as u64 {
            break;
        }
    }
    let piece = Piece::Frames {
        at,
        compressed: compressed as usize,
        decoded: Decoded::Exactly(decoded as usize),
    };
    Ok(Step::Group(piece, compressed))
}

fn table_error(e: zeekstd::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("zstd seek table: {e}"))
}

/// Decodes a group (`compressed`, read from `at`) into the front of `into`: the number of bytes
/// decoded. Frames that do not decode, or a group that decodes to another size than its seek
/// table says, are errors that name the offset.
pub(crate) fn decode(
    decoder: &mut zstd::bulk::Decompressor<'static>,
    compressed: &[u8],
    at: u64,
    decoded: Decoded,
    into: &mut Vec<u8>,
) -> io::Result<usize> {
    let room = match decoded {
        Decoded::Exactly(n) | Decoded::AtMost(n) => n,
    };
    if into.len() < room {
        into.resize(room, 0);
    }
    let end = at + compressed.len() as u64;
    let n = decoder
        .decompress_to_buffer(compressed, &mut into[..room])
        .map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("damaged zstd frame in the stored bytes from offset {at} to {end}: {e}"),
            )
        })?;
    if let Decoded::Exactly(expected) = decoded {
        if n != expected {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "the zstd frames from byte offset {at} to {end} decode to {n} bytes, where \
                     the seek table says {expected}: a damaged seek table"
                ),
            ));
        }
    }
    Ok(n)
}

/// What the walk found at an offset.
#[derive(Debug, Clone, Copy)]
enum Found {
    /// A frame of data: its stored length and the most it decodes to.
    Frame {
        at: u64,
        compressed: u64,
        bound: u64,
    },
    /// A skippable frame (a `pzstd` size mark, a seek table): decoded to nothing.
    Skippable { at: u64, len: u64 },
    /// A frame the walk does not take (larger than a group, damaged, not zstd): the rest is a
    /// stream from here.
    Stop { at: u64 },
    /// The end of the input.
    End,
}

/// The frames of a file, found in order through a window of its stored bytes.
struct Walk {
    size: u64,
    /// The most a group, so a frame, may decode to.
    group: usize,
    /// Where the next frame not yet in `ahead` starts.
    at: u64,
    /// Frames found and not yet grouped.
    ahead: VecDeque<Found>,
    /// Stored bytes from `window_at`.
    window: Vec<u8>,
    window_at: u64,
    /// How many of `window` hold bytes.
    window_len: usize,
}

impl Walk {
    fn new(size: u64, group: usize) -> Walk {
        Walk {
            size,
            group,
            at: 0,
            ahead: VecDeque::new(),
            window: Vec::new(),
            window_at: 0,
            window_len: 0,
        }
    }

    /// The `i`-th frame from the next not yet grouped.
    fn peek(&mut self, input: &dyn Positioned, i: usize) -> io::Result<Found> {
        while self.ahead.len() <= i {
            if matches!(self.ahead.back(), Some(Found::Stop { .. } | Found::End)) {
                return Ok(*self.ahead.back().expect("not empty"));
            }
            let found = self.find(input)?;
            self.ahead.push_back(found);
        }
        Ok(self.ahead[i])
    }

    /// The frame at `self.at`, and moves past it.
    fn find(&mut self, input: &dyn Positioned) -> io::Result<Found> {
        let at = self.at;
        if at >= self.size {
            return Ok(Found::End);
        }
        let (size, mut want) = (self.size, WALK_READ);
        loop {
            let view = self.window(input, at, want)?;
            let reaches_end = at + view.len() as u64 >= size;
            match zstd_safe::find_frame_compressed_size(view) {
                Ok(len) => {
                    let frame = &view[..len];
                    let found = if is_skippable(frame) {
                        // A run of skippable frames is one: however many a file holds, the
                        // frames found ahead stay few.
                        let end = self.skippable_run(input, at + len as u64)?;
                        self.at = end;
                        return Ok(Found::Skippable { at, len: end - at });
                    } else {
                        match zstd_safe::decompress_bound(frame) {
                            Ok(bound) if bound <= self.group as u64 => Found::Frame {
                                at,
                                compressed: len as u64,
                                bound,
                            },
                            _ => Found::Stop { at },
                        }
                    };
                    self.at = at + len as u64;
                    return Ok(found);
                }
                // The frame goes on past the window: a larger one, up to a group's worth.
                Err(_) if !reaches_end && want < self.group => want *= 2,
                Err(_) => return Ok(Found::Stop { at }),
            }
        }
    }

    /// Where the run of skippable frames that goes on at `at` ends.
    fn skippable_run(&mut self, input: &dyn Positioned, mut at: u64) -> io::Result<u64> {
        while at < self.size {
            let view = self.window(input, at, SKIPPABLE_HEADER as usize)?;
            if !is_skippable(view) || view.len() < SKIPPABLE_HEADER as usize {
                break;
            }
            let len = u64::from(u32::from_le_bytes([view[4], view[5], view[6], view[7]]));
            let end = at + SKIPPABLE_HEADER + len;
            if end > self.size {
                break;
            }
            at = end;
        }
        Ok(at)
    }

    /// The stored bytes from `at`, at least `want` of them unless the input ends first. Frames
    /// are found front to back: the bytes before `at` are let go, and those after it that the
    /// window already holds are not read again.
    fn window(&mut self, input: &dyn Positioned, at: u64, want: usize) -> io::Result<&[u8]> {
        let want = (want as u64).min(self.size - at) as usize;
        match at.checked_sub(self.window_at) {
            Some(from) if from <= self.window_len as u64 => {
                let from = from as usize;
                self.window.copy_within(from..self.window_len, 0);
                self.window_len -= from;
            }
            _ => self.window_len = 0,
        }
        self.window_at = at;
        if self.window_len < want {
            // At least a walk's read at a time, so a run of small frames costs few reads.
            let len = (want.max(WALK_READ) as u64).min(self.size - at) as usize;
            if self.window.len() < len {
                self.window.resize(len, 0);
            }
            let held = self.window_len;
            input.read_exact_at(&mut self.window[held..len], at + held as u64)?;
            self.window_len = len;
        }
        Ok(&self.window[..want])
    }

    /// The next group: frames until it holds a piece's bytes, never past the group limit
    /// decoded; skippable frames ride along (the decoder skips them).
    fn group(&mut self, input: &Arc<dyn Positioned>, piece_bytes: usize) -> io::Result<Step> {
        let (mut start, mut end, mut bound, mut frames) = (None, 0u64, 0u64, 0usize);
        loop {
            let next = self.peek(&**input, 0)?;
            match next {
                Found::Frame {
                    at,
                    compressed,
                    bound: b,
                } => {
                    if frames > 0 && bound + b > self.group as u64 {
                        break;
                    }
                    start.get_or_insert(at);
                    end = at + compressed;
                    bound += b;
                    frames += 1;
                }
                Found::Skippable { at, len } => {
                    start.get_or_insert(at);
                    end = at + len;
                }
                Found::Stop { .. } | Found::End => break,
            }
            self.ahead.pop_front();
            let stored = end - start.unwrap_or(end);
            if bound >= piece_bytes as u64 || stored >= piece_bytes as u64 {
                break;
            }
        }
        if let Some(at) = start {
            let compressed = end - at;
            let piece = Piece::Frames {
                at,
                compressed: compressed as usize,
                decoded: Decoded::AtMost(bound as usize),
            };
            return Ok(Step::Group(piece, compressed));
        }
        Ok(match self.peek(&**input, 0)? {
            Found::Stop { at } => {
                self.ahead.clear();
                self.ahead.push_back(Found::End);
                Step::Rest(Box::new(stored_from(Arc::clone(input), at, self.size)?))
            }
            _ => Step::End,
        })
    }
}

/// Whether a frame is a skippable one (magic 0x184D2A50 to 0x184D2A5F).
fn is_skippable(frame: &[u8]) -> bool {
    matches!(frame, [0x50..=0x5F, 0x2A, 0x4D, 0x18, ..])
}

/// The stored bytes of a file from offset `at` on, decoded: the rest of a walk.
fn stored_from(input: Arc<dyn Positioned>, at: u64, size: u64) -> io::Result<impl Read + Send> {
    let stored = PositionedReader { input, at, size };
    Ok(OffsetErrors {
        inner: zstd::stream::read::Decoder::new(stored)?,
        base: at,
        decoded: 0,
    })
}

/// Sequential reads of a positioned input, from `at` to `size`.
struct PositionedReader {
    input: Arc<dyn Positioned>,
    at: u64,
    size: u64,
}

impl Read for PositionedReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = (buf.len() as u64).min(self.size - self.at) as usize;
        self.input.read_exact_at(&mut buf[..n], self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

/// A decoder's errors, told as the stream reader tells them (`corrupt zstd stream: ...`) and
/// where the frames it decodes began.
struct OffsetErrors<R> {
    inner: R,
    base: u64,
    decoded: u64,
}

impl<R: Read> Read for OffsetErrors<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.inner.read(buf) {
            Ok(n) => {
                self.decoded += n as u64;
                Ok(n)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => {
                let what = match e.kind() {
                    io::ErrorKind::UnexpectedEof => "truncated",
                    _ => "corrupt",
                };
                Err(io::Error::new(
                    e.kind(),
                    format!(
                        "{what} zstd stream: {e} (the frames from stored byte offset {} on had \
                         decoded {} bytes)",
                        self.base, self.decoded
                    ),
                ))
            }
        }
    }
}
