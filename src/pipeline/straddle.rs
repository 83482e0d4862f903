//! The line that crosses the edge between two pieces of a source read in pieces
//! (`io::pieces`): the writer joins it from the tail of one piece and the head of the next, in
//! input order, by the same rules as the line reader (docs/envelope.md#framing): a CR before the
//! LF is the terminator's, a line over the reader cap keeps only its first bytes, and a BOM at
//! the very start of the source is skipped.

use crate::framing::{Line, LineKind, TOO_LONG_PREFIX_BYTES};

/// The UTF-8 byte-order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A line being joined, with bounded memory: past the cap, only a count of its bytes grows.
#[derive(Debug)]
pub(super) struct Straddle {
    /// The line's first bytes, at most `keep` of them.
    kept: Vec<u8>,
    /// All its bytes so far (terminator excluded).
    raw: u64,
    /// Its last byte so far: a CR there is the terminator's if an LF comes next.
    last: u8,
    /// Where it starts in the source (decompressed).
    offset: u64,
    /// At the start of the source, until three bytes or a line end have come.
    bom_pending: bool,
    max_line_bytes: usize,
    keep: usize,
}

impl Straddle {
    pub(super) fn new(max_line_bytes: usize) -> Self {
        Straddle {
            kept: Vec::new(),
            raw: 0,
            last: 0,
            offset: 0,
            bom_pending: false,
            max_line_bytes,
            // A line within the cap is kept whole (with the CR of a CR LF), a longer one as the
            // prefix a rejects record quotes; and a BOM before either, which goes once seen.
            keep: max_line_bytes
                .saturating_add(2)
                .max(TOO_LONG_PREFIX_BYTES)
                .saturating_add(BOM.len()),
        }
    }

    /// Starts a line at `offset`; `source_start` when it is the first of its source.
    pub(super) fn begin(&mut self, offset: u64, source_start: bool) {
        self.kept.clear();
        self.raw = 0;
        self.last = 0;
        self.offset = offset;
        self.bom_pending = source_start;
    }

    /// Where the line begins in its source: where a failed read of the source stopped (the
    /// line reader's offset then).
    pub(super) fn offset(&self) -> u64 {
        self.offset
    }

    /// Adds bytes of the line (no LF among them).
    pub(super) fn push(&mut self, bytes: &[u8]) {
        let Some(&last) = bytes.last() else {
            return;
        };
        self.raw += bytes.len() as u64;
        self.last = last;
        let room = self.keep.saturating_sub(self.kept.len());
        self.kept.extend_from_slice(&bytes[..room.min(bytes.len())]);
        if self.bom_pending && self.kept.len() >= BOM.len() {
            self.skip_bom();
        }
    }

    fn skip_bom(&mut self) {
        self.bom_pending = false;
        if self.kept.starts_with(BOM) {
            self.kept.drain(..BOM.len());
            self.raw -= BOM.len() as u64;
            self.offset += BOM.len() as u64;
        }
    }

    /// Ends the line: at an LF (`terminated`), or at the end of the source, where nothing
    /// held is no line. It is line `number` of its source.
    pub(super) fn finish(&mut self, terminated: bool, number: u64) -> Option<Line<'_>> {
        if self.bom_pending {
            self.skip_bom();
        }
        if !terminated && self.raw == 0 {
            return None;
        }
        let cr = terminated && self.raw > 0 && self.last == b'\r';
        let len = self.raw - u64::from(cr);
        let (kind, shown) = if len > self.max_line_bytes as u64 {
            (
                LineKind::TooLong,
                len.min(TOO_LONG_PREFIX_BYTES as u64) as usize,
            )
        } else {
            (line_kind(&self.kept[..len as usize]), len as usize)
        };
        Some(Line {
            number,
            offset: self.offset,
            content: &self.kept[..shown],
            len,
            kind,
        })
    }
}

/// Blank (only space, tab and CR: docs/envelope.md#blank-lines) or content.
pub(super) fn line_kind(content: &[u8]) -> LineKind {
    if content.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r')) {
        LineKind::Blank
    } else {
        LineKind::Content
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framing::LineReader;

    /// Every way of cutting `input` in two, joined by a straddle, gives the reader's first line.
    fn first_line_agrees(input: &[u8], cap: usize) {
        let mut reader = LineReader::with_max_line_bytes(input, cap);
        let expected = reader
            .next_line()
            .unwrap()
            .map(|l| (l.number, l.offset, l.content.to_vec(), l.len, l.kind));
        for cut in 0..=input.len() {
            let mut straddle = Straddle::new(cap);
            straddle.begin(0, true);
            let end = memchr::memchr(b'\n', input).unwrap_or(input.len());
            let (a, b) = input[..end].split_at(cut.min(end));
            straddle.push(a);
            straddle.push(b);
            let got = straddle
                .finish(end < input.len(), 1)
                .map(|l| (l.number, l.offset, l.content.to_vec(), l.len, l.kind));
            assert_eq!(got, expected, "{input:?} cut at {cut}");
        }
    }

    #[test]
    fn joins_as_the_reader_frames() {
        for input in [
            &b"{}\n"[..],
            b"{}\r\n",
            b"\r\n",
            b" \t\r\n",
            b"\xEF\xBB\xBF{}\n",
            b"\xEF\xBB\xBF\n",
            b"\xEF\xBB\xBF",
            b"\xEF\xBB\n",
            b"\xEF\xBB",
            b"",
            b"{}",
            b"12345\r\n",
            b"1234\r\n",
            b"123456",
            b"\r",
        ] {
            first_line_agrees(input, 4);
        }
    }

    #[test]
    fn a_long_line_keeps_its_prefix_only() {
        let mut line = vec![b'a'; TOO_LONG_PREFIX_BYTES * 3];
        line.extend_from_slice(b"\r\n");
        first_line_agrees(&line[..], 10);
        let mut straddle = Straddle::new(10);
        straddle.begin(7, false);
        for piece in line[..line.len() - 1].chunks(1000) {
            straddle.push(piece);
        }
        assert!(straddle.kept.len() <= TOO_LONG_PREFIX_BYTES + BOM.len());
        let got = straddle.finish(true, 9).unwrap();
        assert_eq!(
            (got.len, got.kind, got.offset, got.number),
            ((TOO_LONG_PREFIX_BYTES * 3) as u64, LineKind::TooLong, 7, 9)
        );
    }
}
