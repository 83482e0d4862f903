//! A chunk: a run of consecutive lines of one source, in the buffer the reader read them into,
//! with the output buffers its worker fills. Chunks are pooled: every buffer keeps its capacity
//! from one use to the next.

use std::io;
use std::sync::Arc;

use super::baton::{Counts, Place};
use super::straddle::line_kind;
use super::Summary;
use super::{Action, LineOperation, SourceLine};
use crate::framing::{Line, LineKind, LineReader, TOO_LONG_PREFIX_BYTES};
use crate::io::pieces::{Piece, PieceReader, Positioned};

/// The floor of a chunk's bookkeeping budget, so that tiny chunk sizes (tests) still batch
/// blank lines.
const MIN_SPAN_BYTES: usize = 64 * 1024;

/// Where one line's content lies in [`Chunk::data`], and what the reader knew of it.
#[derive(Debug, Clone, Copy)]
struct LineSpan {
    start: usize,
    /// Bytes kept in `data`: the content, or for an over-long line its kept prefix.
    kept: usize,
    /// The full content length (terminator excluded).
    len: u64,
    number: u64,
    offset: u64,
    kind: LineKind,
}

/// What a worker wrote for the lines of one chunk, and their books: a buffer for each of the
/// operation's outputs ([`LineOperation::OUTPUTS`]), which the writer writes to the sink of
/// the same index in [`Outputs`](super::Outputs). What each output is, the operation says.
#[derive(Debug)]
pub struct ChunkOutput<T = ()> {
    /// One per output the operation declared, kept with their capacity from chunk to chunk.
    buffers: Vec<Vec<u8>>,
    /// The books of these lines.
    pub summary: Summary,
    /// What the operation adds up beside the books ([`LineOperation::Tally`]); the writer
    /// empties it into the run's total through [`LineOperation::merge`].
    pub tally: T,
    /// Set by an operation that needs no more input: the run ends once this chunk's output
    /// is written (`show` without `--all`).
    pub stop: bool,
}

impl<T: Default> ChunkOutput<T> {
    /// Empty buffers for `outputs` outputs (an operation's [`LineOperation::OUTPUTS`]): what
    /// the pipeline gives each chunk, and what a test that calls
    /// [`apply`](LineOperation::apply) itself passes.
    ///
    /// ```
    /// use rdq_envelope::pipeline::ChunkOutput;
    ///
    /// let mut out = ChunkOutput::<()>::new(2);
    /// out.buffer(1).extend_from_slice(b"second\n");
    /// assert_eq!((out.bytes(0), out.bytes(1)), (&b""[..], &b"second\n"[..]));
    /// ```
    pub fn new(outputs: usize) -> Self {
        ChunkOutput {
            buffers: (0..outputs).map(|_| Vec::new()).collect(),
            summary: Summary::default(),
            tally: T::default(),
            stop: false,
        }
    }
}

impl<T> ChunkOutput<T> {
    /// The buffer of the operation's output `index` (`0..OUTPUTS`), to write its bytes into.
    ///
    /// # Panics
    ///
    /// When `index` is not one of the outputs the operation declared: a mistake in the
    /// operation, whatever its input.
    #[inline]
    pub fn buffer(&mut self, index: usize) -> &mut Vec<u8> {
        &mut self.buffers[index]
    }

    /// Every output's buffer, in order: to write to two at once.
    ///
    /// ```
    /// use rdq_envelope::pipeline::ChunkOutput;
    ///
    /// let mut out = ChunkOutput::<()>::new(2);
    /// out.buffer(0).extend_from_slice(b"a\n");
    /// if let [first, second] = out.buffers() {
    ///     second.extend_from_slice(first);
    /// }
    /// assert_eq!(out.bytes(1), b"a\n");
    /// ```
    #[inline]
    pub fn buffers(&mut self) -> &mut [Vec<u8>] {
        &mut self.buffers
    }

    /// The buffer of output `index` beside the chunk's tally, to fill both at once.
    ///
    /// # Panics
    ///
    /// As [`buffer`](Self::buffer).
    #[inline]
    pub fn buffer_and_tally(&mut self, index: usize) -> (&mut Vec<u8>, &mut T) {
        (&mut self.buffers[index], &mut self.tally)
    }

    /// The bytes written so far to output `index`; empty for an index the operation did not
    /// declare.
    pub fn bytes(&self, index: usize) -> &[u8] {
        self.buffers.get(index).map_or(&[], Vec::as_slice)
    }

    /// The bytes held for the outputs.
    fn len(&self) -> usize {
        self.buffers.iter().map(Vec::len).sum()
    }

    pub(super) fn clear(&mut self) {
        for buffer in &mut self.buffers {
            buffer.clear();
        }
        self.summary.clear();
        self.stop = false;
    }
}

/// Why the reader stopped inside a source.
#[derive(Debug)]
pub(super) struct InputFailure {
    pub what: &'static str,
    /// Lines of the source read before the failure.
    pub line: u64,
    /// The decompressed byte offset reached.
    pub offset: u64,
    pub error: io::Error,
}

#[derive(Debug)]
pub(super) struct Chunk<T = ()> {
    /// Position in the run: the writer restores this order.
    pub seq: u64,
    /// Index of the source the lines come from.
    pub source: usize,
    /// The bytes the lines lie in (terminators and all): the reader's buffer they were read
    /// into, or a copy of them ([`LineReader::hand_off`]). Its length is not reset between
    /// uses, so a reused buffer is never zeroed again.
    data: Vec<u8>,
    spans: Vec<LineSpan>,
    /// Content bytes the spans keep.
    held: usize,
    /// Bytes of the decompressed stream these lines cover (BOM and terminators included).
    pub bytes_in: u64,
    /// Set on the last chunk of a source that could not be read to its end.
    pub failure: Option<InputFailure>,
    /// Handed off because the source went quiet (the linger): once it is written, every
    /// output is flushed.
    pub flush: bool,
    /// Set by a worker whose operation panicked on this chunk: the panic's message.
    pub panic: Option<String>,
    /// For a source read in pieces: what the worker reads, and what it found.
    pub piece: Option<PieceChunk>,
    /// Lines and bytes of the source before this chunk's bytes (a piece's, from the baton):
    /// its spans count from there. Zero for a chunk the reader framed.
    pub base: Counts,
    /// The first line not yet worked on, when the output reached its budget first.
    resume_at: Option<usize>,
    pub out: ChunkOutput<T>,
}

impl<T: Default> Chunk<T> {
    /// An empty chunk with a buffer for each of `outputs` outputs.
    pub fn new(outputs: usize) -> Self {
        Chunk {
            seq: 0,
            source: 0,
            data: Vec::new(),
            spans: Vec::new(),
            held: 0,
            bytes_in: 0,
            failure: None,
            flush: false,
            panic: None,
            piece: None,
            base: Counts::default(),
            resume_at: None,
            out: ChunkOutput::new(outputs),
        }
    }
}

/// A chunk of a source read in pieces (`io::pieces`).
pub(super) struct PieceChunk {
    pub input: Arc<dyn Positioned>,
    pub piece: Piece,
    pub place: Place,
    /// Bytes of `data` the piece holds (decoded).
    pub len: usize,
    /// Where the bytes after the first LF start (0: the piece holds no LF). The bytes before
    /// end the line that crossed into the piece, which the writer joins.
    pub head_end: usize,
    /// Where the bytes after the last LF start: the start of the line that crosses out.
    pub tail_start: usize,
    /// LFs in the piece: the lines that end in it.
    pub newlines: u64,
}

impl std::fmt::Debug for PieceChunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PieceChunk")
            .field("piece", &self.piece)
            .field("place", &self.place)
            .field("len", &self.len)
            .field("newlines", &self.newlines)
            .finish_non_exhaustive()
    }
}

impl<T> Chunk<T> {
    pub fn reset(&mut self, seq: u64, source: usize) {
        self.seq = seq;
        self.source = source;
        self.spans.clear();
        self.held = 0;
        self.bytes_in = 0;
        self.failure = None;
        self.flush = false;
        self.panic = None;
        self.piece = None;
        self.base = Counts::default();
        self.resume_at = None;
        self.out.clear();
    }

    /// A worker's part of a piece: reads its bytes (unless the reader did), and frames the
    /// lines that lie wholly inside them. Returns its counts for the baton; a failed read is
    /// kept in `failure` and counts nothing.
    pub fn read_piece(&mut self, reader: &mut PieceReader, max_line_bytes: usize) -> Counts {
        let Some(piece) = self.piece.as_mut() else {
            return Counts::default();
        };
        if self.failure.is_none() && piece.piece != Piece::Filled {
            match reader.read(&*piece.input, piece.piece, &mut self.data) {
                Ok(len) => piece.len = len,
                Err(error) => {
                    self.failure = Some(InputFailure {
                        what: "input failed",
                        line: 0,
                        offset: 0,
                        error,
                    });
                }
            }
        }
        if self.failure.is_some() {
            piece.len = 0;
        }
        self.bytes_in = piece.len as u64;
        let data = &self.data[..piece.len];
        let mut lfs = memchr::memchr_iter(b'\n', data);
        let Some(first) = lfs.next() else {
            (piece.head_end, piece.tail_start, piece.newlines) = (0, 0, 0);
            return Counts {
                lines: 0,
                bytes: piece.len as u64,
            };
        };
        // The line that ends at the first LF crossed into the piece: the writer joins it, but
        // in a source's first piece it is whole, and framed here (after a BOM), so that line 1
        // is judged first, as the single reader has it.
        let mut number = 1;
        if piece.place.first {
            let start = if data.starts_with(b"\xEF\xBB\xBF") {
                3
            } else {
                0
            };
            self.held += push_span(&mut self.spans, data, start, first, number, max_line_bytes);
        }
        let mut start = first + 1;
        // The lines after are numbered from 2 (the base is added when they are worked on).
        for end in lfs {
            number += 1;
            self.held += push_span(&mut self.spans, data, start, end, number, max_line_bytes);
            start = end + 1;
        }
        (piece.head_end, piece.tail_start, piece.newlines) = (first + 1, start, number);
        Counts {
            lines: number,
            bytes: piece.len as u64,
        }
    }

    /// The chunk's buffer, for the reader to decode a piece into.
    pub fn data_mut(&mut self) -> &mut Vec<u8> {
        &mut self.data
    }

    /// The bytes of a piece chunk in `range`.
    pub fn piece_bytes(&self, range: std::ops::Range<usize>) -> &[u8] {
        &self.data[range]
    }

    /// Whether the chunk should go to the workers: it holds about `chunk_bytes` of lines, or
    /// so many lines that their bookkeeping would be as large (blank lines copy no bytes, and
    /// a stream of them must not grow one chunk without bound).
    pub fn is_full(&self, chunk_bytes: usize) -> bool {
        self.held >= chunk_bytes
            || self.spans.len() * std::mem::size_of::<LineSpan>() >= chunk_bytes.max(MIN_SPAN_BYTES)
    }

    /// Whether the chunk holds any line (blank ones included).
    pub fn has_lines(&self) -> bool {
        !self.spans.is_empty()
    }

    /// The number of the chunk's first line (0 when it has none).
    pub fn first_line(&self) -> u64 {
        self.spans.first().map_or(0, |s| s.number)
    }

    /// The bytes kept of the first line that is not blank, if any.
    pub fn first_content(&self) -> Option<&[u8]> {
        let span = self.spans.iter().find(|s| s.kind != LineKind::Blank)?;
        self.data.get(span.start..span.start + span.kept)
    }

    /// Records a line that starts at `start` in the pinned reader's buffer; its bytes stay there
    /// until [`take_lines`](Self::take_lines).
    pub fn push(&mut self, line: &Line<'_>, start: usize) {
        let kept = if line.kind == LineKind::Blank {
            0
        } else {
            line.content.len()
        };
        self.held += kept;
        self.spans.push(LineSpan {
            start,
            kept,
            len: line.len,
            number: line.number,
            offset: line.offset,
            kind: line.kind,
        });
    }

    /// Takes the bytes of the lines pushed since the reader's last hand-off.
    pub fn take_lines<R: std::io::Read>(&mut self, reader: &mut LineReader<R>) {
        let base = reader.hand_off(&mut self.data);
        if base > 0 {
            for span in &mut self.spans {
                span.start -= base;
            }
        }
    }

    /// Applies `op` to every line, writing into `self.out`. With `reject_room`, stops right
    /// after the line that brings the output's rejected lines to it, and sets `out.stop`: the
    /// cut of [`PipelineOptions::max_rejected`](super::PipelineOptions::max_rejected), made by
    /// the writer, which alone knows the rejected lines before this chunk.
    pub fn process<Op: LineOperation<Tally = T>>(
        &mut self,
        op: &Op,
        state: &mut Op::Worker,
        source: &str,
        output_budget: usize,
        reject_room: Option<u64>,
    ) {
        let first = self.resume_at.take().unwrap_or(0);
        for (i, span) in self.spans.iter().enumerate().skip(first) {
            // Output past the budget is written before the rest of the lines are worked on
            // (by the writer, in order): a chunk of lines that each yield a hundred diagnostics
            // must not hold tens of times its input in memory.
            if i > first && self.out.len() > output_budget {
                self.resume_at = Some(i);
                return;
            }
            if span.kind == LineKind::Blank {
                self.out.summary.lines += 1;
                self.out.summary.blank += 1;
                continue;
            }
            let line = Line {
                number: span.number + self.base.lines,
                offset: span.offset + self.base.bytes,
                content: &self.data[span.start..span.start + span.kept],
                len: span.len,
                kind: span.kind,
            };
            apply(op, state, SourceLine { source, line }, &mut self.out);
            if reject_room.is_some_and(|room| self.out.summary.rejected >= room) {
                self.out.stop = true;
                return;
            }
        }
    }

    /// Forgets what was worked out for the lines, to work on them again from the first.
    pub fn restart(&mut self)
    where
        T: Default,
    {
        self.out.clear();
        self.out.tally = T::default();
        self.resume_at = None;
    }

    /// Whether lines are left for [`process`](Self::process) to resume at.
    pub fn unfinished(&self) -> bool {
        self.resume_at.is_some()
    }

    /// Empties the output already written, to resume the lines left.
    pub fn clear_output(&mut self) {
        self.out.clear();
    }
}

/// Applies `op` to one line and keeps its books: every line, blank or not, is counted once.
pub(super) fn apply<Op: LineOperation>(
    op: &Op,
    state: &mut Op::Worker,
    line: SourceLine<'_>,
    out: &mut ChunkOutput<Op::Tally>,
) {
    out.summary.lines += 1;
    if line.line.kind == LineKind::Blank {
        out.summary.blank += 1;
        return;
    }
    match op.apply(state, line, out) {
        Action::Emit => {
            out.summary.valid += 1;
            out.summary.emitted += 1;
        }
        Action::FilterOut => {
            out.summary.valid += 1;
            out.summary.filtered_out += 1;
        }
        Action::Reject => out.summary.rejected += 1,
    }
}

/// Records the line `data[start..end]` (`end` at its LF) as line `number` of a piece, by the line
/// reader's rules (a CR before the LF is the terminator's; past the cap only a prefix is kept);
/// returns the content bytes it keeps.
fn push_span(
    spans: &mut Vec<LineSpan>,
    data: &[u8],
    start: usize,
    end: usize,
    number: u64,
    max_line_bytes: usize,
) -> usize {
    let raw = end - start;
    let cr = raw > 0 && data[end - 1] == b'\r';
    let len = raw - usize::from(cr);
    let (kind, kept) = if len > max_line_bytes {
        (LineKind::TooLong, len.min(TOO_LONG_PREFIX_BYTES))
    } else {
        let kind = line_kind(&data[start..start + len]);
        (kind, if kind == LineKind::Blank { 0 } else { len })
    };
    spans.push(LineSpan {
        start,
        kept,
        len: len as u64,
        number,
        offset: start as u64,
        kind,
    });
    kept
}
