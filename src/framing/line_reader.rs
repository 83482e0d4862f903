//! The line reader: one recycled buffer, absolute offsets, a hard cap on line length.
//!
//! The shape follows ripgrep's line buffer: bytes are read into one `Vec<u8>` that is reused for
//! the whole stream; before each read the unconsumed tail (the start of a line whose end has not
//! arrived yet) is rolled to the front; line ends are found with `memchr`. The buffer grows, by
//! doubling, only while a pending line could still be within the cap. Past the cap, the line's
//! first [`TOO_LONG_PREFIX_BYTES`] bytes are kept (for the rejects' `raw`) and the rest is dropped
//! as it streams past, counted: the buffer never grows past max(cap + 2, prefix) plus one read
//! block, whatever the input.

use std::io::{self, Read};

/// Default reader cap (docs/envelope.md#reader-cap): 16 MiB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// How many leading bytes of an over-long line the reader keeps: the 65,536 that a rejects record
/// holds (docs/cli.md#rejects-records, `raw`) and one more, because cutting them back to a UTF-8
/// boundary looks at the byte after the cut.
pub const TOO_LONG_PREFIX_BYTES: usize = 65_537;

/// Room for one read beyond the longest pending line the buffer must hold.
const READ_BLOCK: usize = 64 * 1024;

/// The buffer's starting size, unless [`LineReader::with_capacity`] says otherwise.
const DEFAULT_CAPACITY: usize = READ_BLOCK;

/// The UTF-8 byte-order mark, skipped at the very start of a stream
/// (docs/envelope.md#byte-order-mark).
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// What kind of line the reader found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// A line with content to judge.
    Content,
    /// Empty, or only space, tab and CR (docs/envelope.md#blank-lines): skipped, but counted.
    Blank,
    /// Content longer than the reader cap (`LINE_TOO_LONG`); only a prefix of it is kept.
    TooLong,
}

/// One line of the stream, borrowed from the reader's buffer until the next call.
///
/// ```
/// use rdq_envelope::framing::{LineKind, LineReader};
///
/// // A cap of 4 bytes: the second line is over it, and only its start is kept.
/// let mut rdr = LineReader::with_max_line_bytes(&b"{}\r\n[1,2,3]\n"[..], 4);
/// let line = rdr.next_line()?.expect("a line");
/// assert_eq!((line.number, line.offset, line.len), (1, 0, 2));
/// assert_eq!((line.content, line.kind), (&b"{}"[..], LineKind::Content));
/// let long = rdr.next_line()?.expect("a line");
/// assert_eq!((long.number, long.offset, long.len, long.kind), (2, 4, 7, LineKind::TooLong));
/// assert_eq!(long.content, b"[1,2,3]");
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Line<'a> {
    /// 1-based line number within this stream, blank lines counted.
    pub number: u64,
    /// Absolute byte offset of the line's first byte in the (decompressed) stream, BOM included.
    pub offset: u64,
    /// The line's content without its terminator (LF or CR LF). For `TooLong`, only the first
    /// min(len, TOO_LONG_PREFIX_BYTES) bytes.
    pub content: &'a [u8],
    /// Full content length in bytes (terminator excluded), also for `TooLong`.
    pub len: u64,
    /// Whether the line is content, blank, or over the cap.
    pub kind: LineKind,
}

/// Reads a byte stream as lines (docs/envelope.md#framing), with bounded memory.
///
/// ```
/// use rdq_envelope::framing::{LineKind, LineReader};
///
/// let mut rdr = LineReader::new(&b"\xEF\xBB\xBF{}\r\n\n{\"a\":1}"[..]);
/// let first = rdr.next_line()?.expect("a line");
/// assert_eq!((first.number, first.offset, first.content), (1, 3, &b"{}"[..]));
/// assert_eq!(rdr.next_line()?.expect("a line").kind, LineKind::Blank);
/// let third = rdr.next_line()?.expect("a line");
/// assert_eq!((third.number, third.offset, third.len), (3, 8, 7));
/// assert!(rdr.next_line()?.is_none());
/// assert_eq!(rdr.offset(), 15);
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct LineReader<R> {
    rdr: R,
    /// The recycled buffer; `buf[pos..end]` holds bytes read but not yet returned in a line.
    buf: Vec<u8>,
    /// Start of the pending line in `buf`.
    pos: usize,
    /// End of the bytes read into `buf`.
    end: usize,
    /// How many bytes from `pos` on are known to hold no LF, so no byte is searched twice.
    scanned: usize,
    /// Bytes of the pending line dropped from the buffer: they lie, in the stream, between the
    /// kept prefix `buf[pos..pos + TOO_LONG_PREFIX_BYTES]` and the bytes read after them.
    dropped: u64,
    /// Whether the last dropped byte was a CR, which is the terminator's if an LF comes next.
    dropped_cr: bool,
    /// Absolute stream offset of the pending line's first byte.
    offset: u64,
    /// Lines returned so far.
    lines: u64,
    max_line_bytes: usize,
    /// The BOM check is done once, at the start of the stream.
    bom_checked: bool,
    /// The underlying reader reported end of stream.
    eof: bool,
    /// Pinned mode only: where the lines handed out since the last [`hand_off`](Self::hand_off)
    /// begin. Bytes from here on stay in place until then.
    keep_from: Option<usize>,
    /// Pinned mode: the buffer size reads aim for, about one chunk.
    target: usize,
}

/// `buf`, grown to hold at least `len` bytes. A buffer's length never shrinks, so its bytes are
/// zeroed only once (reads overwrite what it held); a buffer too small is replaced by fresh
/// zeroed memory, which the allocator hands out without writing it.
#[cfg(any(test, feature = "stream"))]
fn at_least(buf: &mut Vec<u8>, len: usize) -> &mut Vec<u8> {
    if buf.len() < len {
        if buf.capacity() < len {
            *buf = vec![0; len];
        } else {
            buf.resize(len, 0);
        }
    }
    buf
}

/// What [`LineReader::next_pinned`] found.
#[cfg(any(test, feature = "stream"))]
#[derive(Debug)]
pub(crate) enum Pinned<'a> {
    /// A line, and where its content starts in the buffer.
    Line(Line<'a>, usize),
    /// The buffer is full of lines not yet handed off: call [`LineReader::hand_off`] first.
    Full,
    /// The source went quiet: the next read would wait, and the caller's `quiet` said not to
    /// wait for it. Hand off the lines read so far (there may be none), then call again.
    Quiet,
    /// The end of the stream.
    End,
}

/// What the framing loop found before a line is taken.
enum Next {
    /// A line whose bytes before its end are `avail` long, ended by an LF or not.
    Line {
        avail: usize,
        terminated: bool,
    },
    Full,
    Quiet,
    End,
}

/// What [`LineReader::fill`] did.
enum Fill {
    /// Read some bytes, or met the end of the stream.
    Read,
    /// Read nothing: the buffer is full of pinned lines.
    Full,
    /// Read nothing: the caller's `quiet` said not to wait for the source.
    Quiet,
}

/// Asked before a pinned reader's read that may wait, with whether lines returned since the
/// last hand-off are held: true means "do not read now, hand off instead".
#[cfg(any(test, feature = "stream"))]
pub(crate) type Quiet<'a> = &'a mut dyn FnMut(bool) -> bool;

impl<R: Read> LineReader<R> {
    /// A reader with the default cap, [`DEFAULT_MAX_LINE_BYTES`].
    ///
    /// ```
    /// use rdq_envelope::framing::{LineReader, DEFAULT_MAX_LINE_BYTES};
    ///
    /// let rdr = LineReader::new(std::io::empty());
    /// assert_eq!(rdr.max_line_bytes(), DEFAULT_MAX_LINE_BYTES);
    /// ```
    pub fn new(rdr: R) -> Self {
        Self::with_max_line_bytes(rdr, DEFAULT_MAX_LINE_BYTES)
    }

    /// A reader whose lines longer than `max_line_bytes` (terminator excluded) are `TooLong`.
    ///
    /// ```
    /// use rdq_envelope::framing::{LineKind, LineReader};
    ///
    /// let mut rdr = LineReader::with_max_line_bytes(&b"1234\n12345\n"[..], 4);
    /// assert_eq!(rdr.next_line()?.map(|l| l.kind), Some(LineKind::Content));
    /// assert_eq!(rdr.next_line()?.map(|l| l.kind), Some(LineKind::TooLong));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn with_max_line_bytes(rdr: R, max_line_bytes: usize) -> Self {
        Self::with_capacity(rdr, max_line_bytes, DEFAULT_CAPACITY)
    }

    /// Like [`with_max_line_bytes`](Self::with_max_line_bytes), with the initial buffer
    /// capacity given (tests use tiny ones). The buffer still grows as the cap needs.
    ///
    /// ```
    /// use rdq_envelope::framing::LineReader;
    ///
    /// // A 1-byte buffer still returns a 9-byte line whole: it grows up to the cap.
    /// let mut rdr = LineReader::with_capacity(&b"{\"a\":[1]}"[..], 100, 1);
    /// assert_eq!(rdr.next_line()?.map(|l| l.content), Some(&b"{\"a\":[1]}"[..]));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn with_capacity(rdr: R, max_line_bytes: usize, initial_capacity: usize) -> Self {
        LineReader {
            rdr,
            buf: vec![0; initial_capacity],
            pos: 0,
            end: 0,
            scanned: 0,
            dropped: 0,
            dropped_cr: false,
            offset: 0,
            lines: 0,
            max_line_bytes,
            bom_checked: false,
            eof: false,
            keep_from: None,
            target: initial_capacity,
        }
    }

    /// A reader in pinned mode (see the module's doc), whose reads fill about `target` bytes.
    /// Only [`next_pinned`](Self::next_pinned) and [`hand_off`](Self::hand_off) may be used on it.
    #[cfg(any(test, feature = "stream"))]
    pub(crate) fn pinned(rdr: R, max_line_bytes: usize, target: usize) -> Self {
        let mut reader = Self::with_capacity(rdr, max_line_bytes, target.max(1));
        reader.keep_from = Some(0);
        reader
    }

    /// The next line, or `None` at end of stream (and at every call after it). Errors are the
    /// underlying reader's; after one, nothing read so far is lost and the call may be repeated.
    ///
    /// ```
    /// use rdq_envelope::framing::{LineKind, LineReader};
    ///
    /// let mut rdr = LineReader::new(&b"{}\n \t\n"[..]);
    /// let mut kinds = Vec::new();
    /// while let Some(line) = rdr.next_line()? {
    ///     kinds.push((line.number, line.kind));
    /// }
    /// assert_eq!(kinds, [(1, LineKind::Content), (2, LineKind::Blank)]);
    /// assert!(rdr.next_line()?.is_none());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        debug_assert!(
            self.keep_from.is_none(),
            "a pinned reader is read with next_pinned"
        );
        Ok(match self.next(None)? {
            Next::Line { avail, terminated } => Some(self.take_line(avail, terminated)),
            // Never `Full` or `Quiet`: only a pinned reader keeps bytes from moving, and only
            // a caller's `quiet` stops a read.
            Next::End | Next::Full | Next::Quiet => None,
        })
    }

    /// Pinned mode: the next line and where it starts in the buffer, `Full` when the lines
    /// not yet handed off fill the buffer, or `Quiet` when, before a read, `quiet` (told
    /// whether lines are held) said not to read now. Errors are as for
    /// [`next_line`](Self::next_line).
    #[cfg(any(test, feature = "stream"))]
    pub(crate) fn next_pinned(&mut self, quiet: Quiet<'_>) -> io::Result<Pinned<'_>> {
        Ok(match self.next(Some(quiet))? {
            Next::Line { avail, terminated } => {
                let start = self.pos;
                Pinned::Line(self.take_line(avail, terminated), start)
            }
            Next::Full => Pinned::Full,
            Next::Quiet => Pinned::Quiet,
            Next::End => Pinned::End,
        })
    }

    /// Pinned mode: hands the bytes of the lines returned since the last hand-off to `into` (a
    /// spare buffer, whatever it holds), and returns what to subtract from their starts to find
    /// them there. Either `into` takes the whole buffer and the reader goes on in the spare,
    /// moving its pending bytes (the start of the next line) there, or, when those are more than
    /// the lines, `into` takes a copy of the lines. Either way no byte is moved more than once
    /// on average, and nothing is allocated once the spares have grown.
    #[cfg(any(test, feature = "stream"))]
    pub(crate) fn hand_off(&mut self, into: &mut Vec<u8>) -> usize {
        let Some(from) = self.keep_from else {
            debug_assert!(false, "hand_off on a reader not pinned");
            return 0;
        };
        let pending = self.end - self.pos;
        let lines = self.pos - from;
        if lines < pending {
            at_least(into, lines)[..lines].copy_from_slice(&self.buf[from..self.pos]);
            self.keep_from = Some(self.pos);
            return from;
        }
        at_least(into, self.target.max(pending + READ_BLOCK))[..pending]
            .copy_from_slice(&self.buf[self.pos..self.end]);
        std::mem::swap(&mut self.buf, into);
        self.end = pending;
        self.pos = 0;
        self.keep_from = Some(0);
        0
    }

    /// Finds the pending line's end, reading as needed (asking `quiet` first, when given).
    fn next<'q>(
        &mut self,
        mut quiet: Option<&mut (dyn FnMut(bool) -> bool + 'q)>,
    ) -> io::Result<Next> {
        if !self.bom_checked {
            self.skip_bom()?;
        }
        loop {
            let from = self.pos + self.scanned;
            if let Some(i) = memchr::memchr(b'\n', &self.buf[from..self.end]) {
                let avail = from + i - self.pos;
                return Ok(Next::Line {
                    avail,
                    terminated: true,
                });
            }
            self.scanned = self.end - self.pos;
            self.drop_excess();
            if self.eof {
                if self.end == self.pos && self.dropped == 0 {
                    // An LF at the very end does not begin another line
                    // (docs/envelope.md#lines-and-terminators).
                    return Ok(Next::End);
                }
                let avail = self.end - self.pos;
                return Ok(Next::Line {
                    avail,
                    terminated: false,
                });
            }
            match self.fill(quiet.as_deref_mut())? {
                Fill::Read => {}
                Fill::Full => return Ok(Next::Full),
                Fill::Quiet => return Ok(Next::Quiet),
            }
        }
    }

    /// Bytes of the stream consumed so far into lines (the offset reached), BOM and
    /// terminators included. At end of stream it is the stream's length.
    ///
    /// ```
    /// use rdq_envelope::framing::LineReader;
    ///
    /// let mut rdr = LineReader::new(&b"{}\r\n[]"[..]);
    /// rdr.next_line()?;
    /// assert_eq!(rdr.offset(), 4);
    /// rdr.next_line()?;
    /// assert_eq!(rdr.offset(), 6);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Lines returned so far.
    ///
    /// ```
    /// use rdq_envelope::framing::LineReader;
    ///
    /// let mut rdr = LineReader::new(&b"{}\n\n{}\n"[..]);
    /// while rdr.next_line()?.is_some() {}
    /// assert_eq!(rdr.lines(), 3);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// The cap: lines with more content bytes than this are `TooLong`.
    ///
    /// ```
    /// use rdq_envelope::framing::LineReader;
    ///
    /// assert_eq!(LineReader::with_max_line_bytes(std::io::empty(), 1024).max_line_bytes(), 1024);
    /// ```
    pub fn max_line_bytes(&self) -> usize {
        self.max_line_bytes
    }

    /// The underlying reader. Bytes read from it but not yet returned in a line are lost.
    ///
    /// ```
    /// use std::io::Cursor;
    /// use rdq_envelope::framing::LineReader;
    ///
    /// let mut rdr = LineReader::new(Cursor::new(b"{}\n{}\n"));
    /// rdr.next_line()?;
    /// // The whole stream was read into the reader's buffer at the first call.
    /// assert_eq!(rdr.into_inner().position(), 6);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn into_inner(self) -> R {
        self.rdr
    }

    /// Skips a BOM at the very start, even when it arrives over several short reads.
    fn skip_bom(&mut self) -> io::Result<()> {
        // At the start nothing is pinned, so `fill` always has room. Nothing is held either, so
        // there is nothing to ask `quiet` about.
        while self.end - self.pos < BOM.len() && !self.eof && matches!(self.fill(None)?, Fill::Read)
        {
        }
        if self.buf[self.pos..self.end].starts_with(BOM) {
            // Pinned, the BOM is no line's: left held, it kept a full buffer from moving with
            // no line to hand off (a BOM, then a first line longer than the buffer).
            if self.keep_from == Some(self.pos) {
                self.keep_from = Some(self.pos + BOM.len());
            }
            self.pos += BOM.len();
            self.offset += BOM.len() as u64;
        }
        self.bom_checked = true;
        Ok(())
    }

    /// Returns the pending line, whose bytes before its end (its LF, or the end of the stream)
    /// are `buf[pos..pos + avail]` plus the `dropped` ones, and moves past it.
    fn take_line(&mut self, avail: usize, terminated: bool) -> Line<'_> {
        let start = self.pos;
        let raw = avail as u64 + self.dropped;
        // A CR belongs to the terminator only when an LF follows it; when the bytes just before
        // the LF were dropped, the last of them may have been that CR.
        let cr = terminated
            && if self.dropped > 0 && avail == TOO_LONG_PREFIX_BYTES {
                self.dropped_cr
            } else {
                avail > 0 && self.buf[start + avail - 1] == b'\r'
            };
        let len = raw - u64::from(cr);
        let (kind, shown) = if len > self.max_line_bytes as u64 {
            // When bytes were dropped, len >= TOO_LONG_PREFIX_BYTES: the kept prefix is whole.
            let shown = len.min(TOO_LONG_PREFIX_BYTES as u64) as usize;
            (LineKind::TooLong, shown)
        } else {
            // Within the cap nothing was dropped, so the whole content is in the buffer.
            let content = &self.buf[start..start + len as usize];
            let blank = content.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r'));
            let kind = if blank {
                LineKind::Blank
            } else {
                LineKind::Content
            };
            (kind, len as usize)
        };

        let offset = self.offset;
        self.offset += raw + u64::from(terminated);
        self.lines += 1;
        self.pos += avail + usize::from(terminated);
        self.scanned = 0;
        self.dropped = 0;
        self.dropped_cr = false;
        Line {
            number: self.lines,
            offset,
            content: &self.buf[start..start + shown],
            len,
            kind,
        }
    }

    /// Once the pending line, with no LF seen yet, is surely over the cap, keeps only its first
    /// [`TOO_LONG_PREFIX_BYTES`] bytes in the buffer and counts the rest as dropped.
    fn drop_excess(&mut self) {
        let avail = self.end - self.pos;
        // cap + 1 bytes without an LF may still be cap bytes of content and the CR of a CR LF
        // whose LF is in the next read: only at cap + 2 is the line surely too long.
        let surely_too_long =
            avail as u64 + self.dropped >= (self.max_line_bytes as u64).saturating_add(2);
        if surely_too_long && avail > TOO_LONG_PREFIX_BYTES {
            self.dropped_cr = self.buf[self.end - 1] == b'\r';
            self.dropped += (avail - TOO_LONG_PREFIX_BYTES) as u64;
            self.end = self.pos + TOO_LONG_PREFIX_BYTES;
            self.scanned = TOO_LONG_PREFIX_BYTES;
        }
    }

    /// Reads more bytes after the pending ones, rolling them to the front and growing the buffer
    /// first if there is no room. Sets `eof` when the reader has no more. Returns `Full`,
    /// having read nothing, when the buffer is full and pinned lines keep its bytes from
    /// moving, and `Quiet`, having read nothing, when `quiet` (asked just before the read, with
    /// whether pinned lines are held) says not to read now.
    fn fill<'q>(&mut self, quiet: Option<&mut (dyn FnMut(bool) -> bool + 'q)>) -> io::Result<Fill> {
        let movable = self.keep_from.is_none_or(|from| from == self.pos);
        if movable && self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
            if self.keep_from.is_some() {
                self.keep_from = Some(0);
            }
        }
        if self.end == self.buf.len() {
            if !movable {
                return Ok(Fill::Full);
            }
            // A pending line holds at most cap + 1 bytes before it is judged too long, and at
            // most the prefix after: beyond that, the buffer only needs room for one read.
            // Without that room, a too-long line would stream past in 1-byte reads.
            let most = self
                .max_line_bytes
                .saturating_add(2)
                .max(TOO_LONG_PREFIX_BYTES)
                .saturating_add(READ_BLOCK);
            let grown = self.buf.len().saturating_mul(2).min(most);
            self.buf.resize(grown.max(self.end + 1), 0);
        }
        // A pinned buffer that grew for a long line is not filled beyond the target, save one
        // read: what is read past the chunk's last line is moved at the hand-off.
        let limit = match self.keep_from {
            Some(_) => self.target.max(self.end + READ_BLOCK).min(self.buf.len()),
            None => self.buf.len(),
        };
        let room = limit - self.end;
        if let Some(quiet) = quiet {
            if quiet(!movable) {
                return Ok(Fill::Quiet);
            }
        }
        loop {
            match self.rdr.read(&mut self.buf[self.end..limit]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(Fill::Read);
                }
                Ok(n) if n <= room => {
                    self.end += n;
                    return Ok(Fill::Read);
                }
                // A broken `Read` impl must not make us index past the buffer.
                Ok(_) => {
                    return Err(io::Error::other(
                        "reader reported more bytes than the buffer it was given",
                    ));
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out its data in reads of the given sizes (cycled), then EOF.
    struct Chunked<'a> {
        data: &'a [u8],
        sizes: &'a [usize],
        next: usize,
        /// Return `Interrupted` before every read, once.
        interrupt: bool,
        interrupted: bool,
    }

    impl<'a> Chunked<'a> {
        fn new(data: &'a [u8], sizes: &'a [usize]) -> Self {
            Chunked {
                data,
                sizes,
                next: 0,
                interrupt: false,
                interrupted: false,
            }
        }
    }

    impl Read for Chunked<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.interrupt && !self.interrupted {
                self.interrupted = true;
                return Err(io::ErrorKind::Interrupted.into());
            }
            self.interrupted = false;
            let size = self.sizes[self.next % self.sizes.len()];
            self.next += 1;
            let n = size.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    /// (number, offset, content, len, kind) of every line, owned.
    type Seen = Vec<(u64, u64, Vec<u8>, u64, LineKind)>;

    fn collect<R: Read>(mut rdr: LineReader<R>) -> Seen {
        let mut seen = Vec::new();
        while let Some(line) = rdr.next_line().expect("reads from memory do not fail") {
            seen.push((
                line.number,
                line.offset,
                line.content.to_vec(),
                line.len,
                line.kind,
            ));
        }
        seen
    }

    fn lines(data: &[u8]) -> Seen {
        collect(LineReader::new(data))
    }

    fn lines_capped(data: &[u8], cap: usize) -> Seen {
        let whole = collect(LineReader::with_max_line_bytes(data, cap));
        // The same stream in 1-byte reads from a 1-byte buffer must frame identically.
        let bytewise = collect(LineReader::with_capacity(Chunked::new(data, &[1]), cap, 1));
        assert_eq!(whole, bytewise);
        whole
    }

    use LineKind::{Blank, Content, TooLong};

    fn l(number: u64, offset: u64, content: &[u8], len: u64, kind: LineKind) -> Seen {
        vec![(number, offset, content.to_vec(), len, kind)]
    }

    #[test]
    fn empty_stream_has_no_lines() {
        assert_eq!(lines(b""), vec![]);
        let mut rdr = LineReader::new(&b""[..]);
        assert!(rdr.next_line().unwrap().is_none());
        assert!(rdr.next_line().unwrap().is_none());
        assert_eq!((rdr.offset(), rdr.lines()), (0, 0));
    }

    #[test]
    fn lf_terminates_and_final_lf_starts_no_line() {
        assert_eq!(lines(b"a\n"), l(1, 0, b"a", 1, Content));
        assert_eq!(lines(b"\n"), l(1, 0, b"", 0, Blank));
        let both = [l(1, 0, b"ab", 2, Content), l(2, 3, b"c", 1, Content)].concat();
        assert_eq!(lines(b"ab\nc\n"), both);
    }

    #[test]
    fn final_line_without_lf_is_a_line() {
        let both = [l(1, 0, b"ab", 2, Content), l(2, 3, b"cd", 2, Content)].concat();
        assert_eq!(lines(b"ab\ncd"), both);
        assert_eq!(lines(b"x"), l(1, 0, b"x", 1, Content));
    }

    #[test]
    fn crlf_cr_belongs_to_terminator() {
        let both = [l(1, 0, b"ab", 2, Content), l(2, 4, b"c", 1, Content)].concat();
        assert_eq!(lines(b"ab\r\nc\r\n"), both);
        // Only one CR is the terminator's.
        assert_eq!(lines(b"a\r\r\n"), l(1, 0, b"a\r", 2, Content));
    }

    #[test]
    fn lone_cr_is_content_not_a_terminator() {
        assert_eq!(lines(b"a\rb\n"), l(1, 0, b"a\rb", 3, Content));
        // A CR at the end of the stream has no LF after it: it is content.
        assert_eq!(lines(b"a\r"), l(1, 0, b"a\r", 2, Content));
        assert_eq!(lines(b"\r"), l(1, 0, b"\r", 1, Blank));
    }

    #[test]
    fn blank_lines_are_counted() {
        let seen = lines(b"\n \t\r\n\r\r\n{}\n \x0b\n");
        let kinds: Vec<_> = seen.iter().map(|s| (s.0, s.1, s.4)).collect();
        let want = [
            (1, 0, Blank),
            (2, 1, Blank),
            (3, 5, Blank),
            (4, 8, Content),
            // Vertical tab is not JSON white space.
            (5, 11, Content),
        ];
        assert_eq!(kinds, want);
    }

    #[test]
    fn bom_is_skipped_but_counted_in_offsets() {
        assert_eq!(lines(b"\xEF\xBB\xBF"), vec![]);
        assert_eq!(lines(b"\xEF\xBB\xBF\n"), l(1, 3, b"", 0, Blank));
        let both = [l(1, 3, b"{}", 2, Content), l(2, 6, b"x", 1, Content)].concat();
        assert_eq!(lines(b"\xEF\xBB\xBF{}\nx"), both);
        let mut rdr = LineReader::new(&b"\xEF\xBB\xBF"[..]);
        assert!(rdr.next_line().unwrap().is_none());
        assert_eq!(rdr.offset(), 3);
    }

    #[test]
    fn bom_only_at_start_and_only_whole() {
        // A second BOM is content.
        assert_eq!(
            lines(b"\xEF\xBB\xBF\xEF\xBB\xBFa"),
            l(1, 3, b"\xEF\xBB\xBFa", 4, Content)
        );
        assert_eq!(
            lines(b"a\n\xEF\xBB\xBF")[1],
            (2, 2, b"\xEF\xBB\xBF".to_vec(), 3, Content)
        );
        // A partial BOM is content.
        assert_eq!(lines(b"\xEF\xBB"), l(1, 0, b"\xEF\xBB", 2, Content));
        assert_eq!(lines(b"\xEF\xBBa"), l(1, 0, b"\xEF\xBBa", 3, Content));
    }

    #[test]
    fn bom_split_across_reads() {
        let data = b"\xEF\xBB\xBFab\ncd";
        let want = [l(1, 3, b"ab", 2, Content), l(2, 6, b"cd", 2, Content)].concat();
        for sizes in [&[1][..], &[2, 1], &[1, 2], &[2, 2]] {
            let rdr = LineReader::with_capacity(Chunked::new(data, sizes), 100, 64 * 1024);
            assert_eq!(collect(rdr), want, "reads of {sizes:?}");
            let rdr = LineReader::with_capacity(Chunked::new(data, sizes), 100, 1);
            assert_eq!(collect(rdr), want, "reads of {sizes:?}, 1-byte buffer");
        }
    }

    #[test]
    fn offset_and_lines_track_progress() {
        let mut rdr = LineReader::new(&b"ab\r\n\ncd"[..]);
        assert_eq!((rdr.offset(), rdr.lines()), (0, 0));
        rdr.next_line().unwrap();
        assert_eq!((rdr.offset(), rdr.lines()), (4, 1));
        rdr.next_line().unwrap();
        assert_eq!((rdr.offset(), rdr.lines()), (5, 2));
        rdr.next_line().unwrap();
        assert_eq!((rdr.offset(), rdr.lines()), (7, 3));
        assert!(rdr.next_line().unwrap().is_none());
        assert_eq!((rdr.offset(), rdr.lines()), (7, 3));
    }

    #[test]
    fn cap_boundaries() {
        // Exactly the cap is fine; one more is too long.
        assert_eq!(lines_capped(b"abcd\n", 4), l(1, 0, b"abcd", 4, Content));
        assert_eq!(lines_capped(b"abcde\n", 4), l(1, 0, b"abcde", 5, TooLong));
        assert_eq!(lines_capped(b"abcd", 4), l(1, 0, b"abcd", 4, Content));
        assert_eq!(lines_capped(b"abcde", 4), l(1, 0, b"abcde", 5, TooLong));
        // The CR of CR LF is the terminator's, not counted against the cap.
        assert_eq!(lines_capped(b"abcd\r\n", 4), l(1, 0, b"abcd", 4, Content));
        assert_eq!(lines_capped(b"abcde\r\n", 4), l(1, 0, b"abcde", 5, TooLong));
        // Without an LF after it, the CR is content and counts.
        assert_eq!(lines_capped(b"abcd\r", 4), l(1, 0, b"abcd\r", 5, TooLong));
        // A cap of zero allows only empty lines.
        assert_eq!(lines_capped(b"\r\n", 0), l(1, 0, b"", 0, Blank));
        assert_eq!(lines_capped(b" \n", 0), l(1, 0, b" ", 1, TooLong));
    }

    #[test]
    fn cap_is_checked_before_blankness() {
        assert_eq!(lines_capped(b"     \n", 4), l(1, 0, b"     ", 5, TooLong));
    }

    #[test]
    fn cap_crlf_split_across_reads() {
        // cap bytes, then CR and LF in reads of their own: not too long.
        let data = b"abcd\r\nxy\n";
        let want = [l(1, 0, b"abcd", 4, Content), l(2, 6, b"xy", 2, Content)].concat();
        for sizes in [&[4, 1, 1][..], &[5, 1], &[1], &[4, 2]] {
            let rdr = LineReader::with_capacity(Chunked::new(data, sizes), 4, 1);
            assert_eq!(collect(rdr), want, "reads of {sizes:?}");
        }
    }

    #[test]
    fn cap_crlf_split_across_reads_with_cap_past_the_prefix() {
        // Here the bytes past the prefix are dropped while the line is pending: the CR of a
        // line of exactly the cap must not be taken for content and dropped.
        for cap in [
            TOO_LONG_PREFIX_BYTES - 1,
            TOO_LONG_PREFIX_BYTES,
            TOO_LONG_PREFIX_BYTES + 3,
        ] {
            let body = vec![b'c'; cap];
            let data = [&body[..], b"\r\nxy"].concat();
            let want = [
                l(1, 0, &body, cap as u64, Content),
                l(2, cap as u64 + 2, b"xy", 2, Content),
            ]
            .concat();
            for sizes in [&[cap, 1, 1][..], &[cap + 1, 1], &[1]] {
                let rdr = LineReader::with_capacity(Chunked::new(&data, sizes), cap, 1);
                assert_eq!(collect(rdr), want, "cap {cap}, reads of {:?}", &sizes[..1]);
            }
        }
    }

    #[test]
    fn too_long_keeps_prefix_and_next_line_is_right() {
        let cap = 100;
        let body: Vec<u8> = (0..200_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        for terminator in [&b"\n"[..], b"\r\n"] {
            let data = [&body[..], terminator, b"{}\n"].concat();
            let seen = lines_capped(&data, cap);
            let next_offset = (body.len() + terminator.len()) as u64;
            let want = [
                l(1, 0, &body[..TOO_LONG_PREFIX_BYTES], 200_000, TooLong),
                l(2, next_offset, b"{}", 2, Content),
            ]
            .concat();
            assert_eq!(seen, want);
        }
    }

    #[test]
    fn too_long_with_crlf_right_after_the_prefix() {
        // The CR is the last byte before the LF and may be among the dropped bytes, or be the
        // first byte after the kept prefix; either way it is the terminator's.
        for extra in [0, 1, 2, 3, 100] {
            let body = vec![b'x'; TOO_LONG_PREFIX_BYTES + extra];
            let data = [&body[..], b"\r\nz"].concat();
            let seen = lines_capped(&data, 10);
            let len = body.len() as u64;
            let want = [
                l(1, 0, &body[..TOO_LONG_PREFIX_BYTES], len, TooLong),
                l(2, len + 2, b"z", 1, Content),
            ]
            .concat();
            assert_eq!(seen, want, "extra {extra}");
        }
    }

    #[test]
    fn too_long_shorter_than_prefix_is_kept_whole() {
        let seen = lines_capped(b"0123456789abc\r\nok", 5);
        let want = [
            l(1, 0, b"0123456789abc", 13, TooLong),
            l(2, 15, b"ok", 2, Content),
        ]
        .concat();
        assert_eq!(seen, want);
    }

    #[test]
    fn too_long_at_end_of_stream_without_lf() {
        let body = vec![b'y'; 3 * TOO_LONG_PREFIX_BYTES + 7];
        let data = [&b"a\n"[..], &body].concat();
        let seen = lines_capped(&data, 1000);
        let want = [
            l(1, 0, b"a", 1, Content),
            l(
                2,
                2,
                &body[..TOO_LONG_PREFIX_BYTES],
                body.len() as u64,
                TooLong,
            ),
        ]
        .concat();
        assert_eq!(seen, want);
        // A CR at the very end is content, with no LF after it.
        let data = [&body[..], b"\r"].concat();
        let seen = lines_capped(&data, 1000);
        assert_eq!(seen[0].3, body.len() as u64 + 1);
    }

    #[test]
    fn memory_stays_bounded_for_a_huge_line() {
        // 64 MiB of one line through a cap of 1 KiB: the buffer must not follow the line.
        struct Endless(u64);
        impl Read for Endless {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = (buf.len() as u64).min(self.0) as usize;
                buf[..n].fill(b'q');
                self.0 -= n as u64;
                Ok(n)
            }
        }
        let total = 64 << 20;
        let mut rdr = LineReader::with_max_line_bytes(Endless(total), 1024);
        let line = rdr.next_line().unwrap().unwrap();
        assert_eq!((line.kind, line.len), (TooLong, total));
        assert_eq!(line.content.len(), TOO_LONG_PREFIX_BYTES);
        assert!(rdr.buf.len() <= TOO_LONG_PREFIX_BYTES + READ_BLOCK);
        assert!(rdr.next_line().unwrap().is_none());
        assert_eq!(rdr.offset(), total);
    }

    #[test]
    fn buffer_grows_to_the_cap_and_no_further() {
        let cap = 300_000;
        let body = vec![b'z'; cap];
        let data = [&body[..], b"\r\n", &body, b"!\r\n"].concat();
        let mut rdr = LineReader::with_capacity(&data[..], cap, 16);
        let first = rdr.next_line().unwrap().unwrap();
        assert_eq!(
            (first.kind, first.len, first.content.len()),
            (Content, cap as u64, cap)
        );
        let second = rdr.next_line().unwrap().unwrap();
        assert_eq!((second.kind, second.len), (TooLong, cap as u64 + 1));
        assert!(rdr.buf.len() <= cap + 2 + READ_BLOCK);
    }

    #[test]
    fn interrupted_reads_are_retried() {
        let data = b"\xEF\xBB\xBFab\r\ncd";
        let mut chunked = Chunked::new(data, &[1]);
        chunked.interrupt = true;
        let seen = collect(LineReader::with_capacity(chunked, 100, 1));
        let want = [l(1, 3, b"ab", 2, Content), l(2, 7, b"cd", 2, Content)].concat();
        assert_eq!(seen, want);
    }

    #[test]
    fn errors_are_the_readers_and_lose_nothing() {
        struct FailOnce<'a>(&'a [u8], bool);
        impl Read for FailOnce<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.0.len() == 2 && !self.1 {
                    self.1 = true;
                    return Err(io::Error::other("boom"));
                }
                let n = buf.len().min(self.0.len()).min(2);
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut rdr = LineReader::with_capacity(FailOnce(b"abcdef", false), 100, 1);
        let err = rdr.next_line().map(|_| ()).unwrap_err();
        assert_eq!(err.to_string(), "boom");
        let line = rdr.next_line().unwrap().unwrap();
        assert_eq!((line.content, line.offset), (&b"abcdef"[..], 0));
    }

    #[test]
    fn reader_claiming_too_many_bytes_is_an_error_not_a_panic() {
        struct Liar;
        impl Read for Liar {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                Ok(buf.len() + 1)
            }
        }
        assert!(LineReader::new(Liar).next_line().is_err());
    }

    #[test]
    fn zero_capacity_and_huge_cap_do_not_panic() {
        let rdr = LineReader::with_capacity(&b"ab\ncd"[..], usize::MAX, 0);
        assert_eq!(collect(rdr).len(), 2);
        let rdr = LineReader::with_capacity(&b"ab\ncd"[..], 0, 0);
        assert_eq!(collect(rdr).len(), 2);
    }

    #[test]
    fn accessors() {
        let rdr = LineReader::new(&b""[..]);
        assert_eq!(rdr.max_line_bytes(), DEFAULT_MAX_LINE_BYTES);
        assert_eq!(rdr.buf.len(), DEFAULT_CAPACITY);
        let rdr = LineReader::with_max_line_bytes(&b"rest"[..], 7);
        assert_eq!(rdr.max_line_bytes(), 7);
        assert_eq!(rdr.into_inner(), b"rest");
    }
}

/// Pinned mode against `next_line`: the same lines, wherever the hand-offs fall.
#[cfg(test)]
mod pinned_tests {
    use super::*;
    use proptest::prelude::*;

    /// A reader that returns its data in reads of the given sizes (cycled), then EOF.
    struct Split<'a>(&'a [u8], &'a [usize], usize);

    impl Read for Split<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let size = self.1[self.2 % self.1.len()];
            self.2 += 1;
            let n = size.min(buf.len()).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    /// (number, offset, content, len, kind) of one line.
    type Seen = (u64, u64, Vec<u8>, u64, LineKind);

    /// A line handed out but not yet handed off: its start in the buffer and what it was.
    type Held = (usize, u64, u64, usize, u64, LineKind);

    /// Frames `data` in pinned mode, handing off after the lines `hand_offs` picks (cycled),
    /// whenever the reader is full, and whenever `quiets` (cycled, asked before each read)
    /// says the source is quiet, reading the lines back from the buffers handed off.
    fn pinned(
        data: &[u8],
        sizes: &[usize],
        cap: usize,
        target: usize,
        hand_offs: &[bool],
        quiets: &[bool],
    ) -> Vec<Seen> {
        let mut rdr = LineReader::pinned(Split(data, sizes, 0), cap, target);
        // Spares of every sort: empty, short, long, all holding old bytes.
        let mut spares = vec![Vec::new(), vec![7u8; 3], vec![1u8; 100_000]];
        let bound = target.max((cap.saturating_add(2)).max(TOO_LONG_PREFIX_BYTES) + 2 * READ_BLOCK);
        let mut held: Vec<Held> = Vec::new();
        let mut seen = Vec::new();
        let mut hand_off = |rdr: &mut LineReader<Split<'_>>, held: &mut Vec<Held>| {
            let mut spare = spares.remove(0);
            let base = rdr.hand_off(&mut spare);
            for (start, number, offset, kept, len, kind) in held.drain(..) {
                let content = spare[start - base..start - base + kept].to_vec();
                seen.push((number, offset, content, len, kind));
            }
            spares.push(spare);
        };
        let mut count = 0;
        let mut asked = 0;
        // What `quiet` was told in the last call: whether lines wait for a hand-off.
        let told = std::cell::Cell::new(None);
        let mut quiet = |holding: bool| {
            told.set(Some(holding));
            asked += 1;
            // Quiet with nothing held too (output owed a flush), but not every time: the
            // reader must get to read.
            quiets[asked % quiets.len()] && (holding || asked % 3 != 0)
        };
        loop {
            let holding = !held.is_empty();
            told.set(None);
            let step = rdr
                .next_pinned(&mut quiet)
                .expect("reads from memory do not fail");
            if let Some(told) = told.get() {
                assert_eq!(told, holding, "quiet is told whether lines are held");
            }
            match step {
                Pinned::Line(line, start) => {
                    held.push((
                        start,
                        line.number,
                        line.offset,
                        line.content.len(),
                        line.len,
                        line.kind,
                    ));
                    count += 1;
                    if hand_offs[count % hand_offs.len()] {
                        hand_off(&mut rdr, &mut held);
                    }
                }
                Pinned::Full => {
                    assert!(!held.is_empty(), "full only with lines to hand off");
                    hand_off(&mut rdr, &mut held);
                }
                Pinned::Quiet => {
                    assert!(told.get().is_some(), "quiet only when asked");
                    hand_off(&mut rdr, &mut held);
                }
                Pinned::End => {
                    hand_off(&mut rdr, &mut held);
                    break;
                }
            }
            assert!(
                rdr.buf.len() <= bound,
                "buffer {} over {bound}",
                rdr.buf.len()
            );
        }
        seen
    }

    fn unpinned(data: &[u8], cap: usize) -> Vec<Seen> {
        let mut rdr = LineReader::with_max_line_bytes(data, cap);
        let mut seen = Vec::new();
        while let Some(line) = rdr.next_line().expect("reads from memory do not fail") {
            seen.push((
                line.number,
                line.offset,
                line.content.to_vec(),
                line.len,
                line.kind,
            ));
        }
        seen
    }

    /// Pieces of a stream: framing bytes, short text, and now and then a run long enough to be
    /// dropped past the kept prefix of an over-long line.
    fn piece() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            6 => prop::collection::vec(prop::sample::select(b"\n\r \tab{}\xEF\xBB\xBF".to_vec()), 1..40),
            1 => (66_000usize..140_000).prop_map(|n| vec![b'x'; n]),
            1 => (1usize..5_000).prop_map(|n| vec![b'y'; n]),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

        #[test]
        fn pinned_mode_frames_like_next_line(
            pieces in prop::collection::vec(piece(), 0..24),
            sizes in prop::collection::vec(prop_oneof![1usize..8, 1usize..70_000], 1..5),
            cap in prop_oneof![Just(0usize), 1usize..50, 4_000usize..80_000, Just(DEFAULT_MAX_LINE_BYTES)],
            target in prop_oneof![1usize..64, 64usize..5_000, Just(1usize << 20)],
            hand_offs in prop::collection::vec(any::<bool>(), 1..6),
            quiets in prop::collection::vec(any::<bool>(), 1..6),
        ) {
            let data = pieces.concat();
            let expected = unpinned(&data, cap);
            prop_assert_eq!(pinned(&data, &sizes, cap, target, &hand_offs, &quiets), expected);
        }
    }
}
