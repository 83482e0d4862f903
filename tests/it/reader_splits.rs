//! The line reader frames a stream the same way however its reads are split, and the same way
//! as a plain reference model of docs/envelope.md#framing.

use std::io::{self, Read};

use proptest::prelude::*;
use rdq_envelope::framing::{LineKind, LineReader, TOO_LONG_PREFIX_BYTES};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// (number, offset, len, kind, content) of one line.
type Framed = (u64, u64, u64, LineKind, Vec<u8>);

/// A reader that returns its data in reads of the given sizes (cycled), then EOF.
struct Chunked<'a> {
    data: &'a [u8],
    sizes: &'a [usize],
    next: usize,
}

impl Read for Chunked<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let size = self.sizes[self.next % self.sizes.len()];
        self.next += 1;
        let n = size.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// Every line the reader gives, and its final `offset()`.
fn frame<R: Read>(mut rdr: LineReader<R>) -> (Vec<Framed>, u64) {
    let mut out = Vec::new();
    while let Some(line) = rdr.next_line().expect("reads from memory do not fail") {
        out.push((
            line.number,
            line.offset,
            line.len,
            line.kind,
            line.content.to_vec(),
        ));
    }
    assert_eq!(rdr.lines(), out.len() as u64);
    (out, rdr.offset())
}

/// docs/envelope.md#framing the obvious way: the whole stream in memory, split on LF.
fn model(data: &[u8], cap: usize) -> Vec<Framed> {
    let start = if data.starts_with(BOM) { BOM.len() } else { 0 };
    let mut rest = &data[start..];
    let mut offset = start as u64;
    let mut out = Vec::new();
    while !rest.is_empty() {
        let (raw, terminator) = match rest.iter().position(|&b| b == b'\n') {
            Some(i) => (&rest[..i], 1),
            None => (rest, 0),
        };
        // One CR before the LF is the terminator's; a CR at the end of the stream is not.
        let content = match raw.strip_suffix(b"\r") {
            Some(stripped) if terminator == 1 => stripped,
            _ => raw,
        };
        let (kind, shown) = if content.len() > cap {
            let keep = content.len().min(TOO_LONG_PREFIX_BYTES);
            (LineKind::TooLong, &content[..keep])
        } else if content.iter().all(|b| b" \t\r".contains(b)) {
            (LineKind::Blank, content)
        } else {
            (LineKind::Content, content)
        };
        let number = out.len() as u64 + 1;
        out.push((number, offset, content.len() as u64, kind, shown.to_vec()));
        offset += (raw.len() + terminator) as u64;
        rest = &rest[raw.len() + terminator..];
    }
    out
}

/// The lines, their lengths and their terminators cover every byte of the stream once.
fn assert_accounts_for_every_byte(data: &[u8], lines: &[Framed], end_offset: u64) {
    let mut expected = if data.starts_with(BOM) { 3 } else { 0 };
    for (number, offset, len, _, content) in lines {
        assert_eq!(
            *offset, expected,
            "line {number} starts where the previous ended"
        );
        let at = *offset as usize;
        let after = &data[at + *len as usize..];
        let terminator = if after.starts_with(b"\r\n") {
            2
        } else if after.starts_with(b"\n") {
            1
        } else {
            assert!(
                after.is_empty(),
                "line {number} ends at a terminator or the end"
            );
            0
        };
        assert_eq!(
            &data[at..at + content.len()],
            &content[..],
            "line {number} content"
        );
        expected = offset + len + terminator;
    }
    assert_eq!(expected, data.len() as u64);
    assert_eq!(end_offset, data.len() as u64);
}

fn check(data: &[u8], sizes: &[usize], cap: usize, initial_capacity: usize) {
    // One read brings the whole stream.
    let one_read = LineReader::with_capacity(data, cap, data.len().max(1));
    let (whole, whole_end) = frame(one_read);
    let chunked = Chunked {
        data,
        sizes,
        next: 0,
    };
    let (split, split_end) = frame(LineReader::with_capacity(chunked, cap, initial_capacity));
    assert_eq!(split, whole, "split reads {sizes:?} frame like one read");
    assert_eq!(split_end, whole_end);
    assert_eq!(whole, model(data, cap), "one read frames like the model");
    assert_accounts_for_every_byte(data, &whole, whole_end);
}

/// Bytes that matter to framing, often; anything, sometimes.
pub(crate) fn byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        4 => Just(b'\n'),
        3 => Just(b'\r'),
        2 => Just(b' '),
        1 => Just(b'\t'),
        1 => Just(0xEF),
        1 => Just(0xBB),
        1 => Just(0xBF),
        3 => prop::sample::select(b"ab{}".to_vec()),
        1 => any::<u8>(),
    ]
}

/// A stream, starting with a BOM half of the time.
pub(crate) fn short_stream() -> impl Strategy<Value = Vec<u8>> {
    (any::<bool>(), prop::collection::vec(byte(), 0..80)).prop_map(|(bom, body)| {
        if bom {
            [BOM, &body].concat()
        } else {
            body
        }
    })
}

/// A cap, and a stream of lines whose lengths sit next to that cap and to the kept prefix of a
/// too-long line, with every kind of ending: the boundaries where framing goes wrong.
pub(crate) fn long_case() -> impl Strategy<Value = (Vec<u8>, usize)> {
    let cap = prop_oneof![
        0usize..20,
        (TOO_LONG_PREFIX_BYTES - 1)..(TOO_LONG_PREFIX_BYTES + 2)
    ];
    cap.prop_flat_map(|cap| {
        let len = prop_oneof![
            2 => 0usize..4,
            2 => Just(cap),
            2 => cap.saturating_sub(1)..(cap + 2),
            1 => (TOO_LONG_PREFIX_BYTES - 2)..(TOO_LONG_PREFIX_BYTES + 3),
            1 => TOO_LONG_PREFIX_BYTES..(2 * TOO_LONG_PREFIX_BYTES + 10),
        ];
        let fill = prop_oneof![3 => Just(b'x'), 1 => byte()];
        let ending = prop::sample::select(vec![&b"\n"[..], b"\r\n", b"\r\n", b"\r", b""]);
        let lines = prop::collection::vec((fill, len, ending), 0..6);
        (Just(cap), any::<bool>(), lines)
    })
    .prop_map(|(cap, bom, lines)| {
        let mut data = if bom { BOM.to_vec() } else { Vec::new() };
        for (fill, len, ending) in lines {
            data.resize(data.len() + len, fill);
            data.extend_from_slice(ending);
        }
        (data, cap)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn short_streams_frame_alike_under_any_split(
        data in short_stream(),
        sizes in prop::collection::vec(1usize..6, 1..8),
        cap in 0usize..20,
        initial_capacity in 0usize..8,
    ) {
        check(&data, &sizes, cap, initial_capacity);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn long_lines_frame_alike_under_any_split(
        (data, cap) in long_case(),
        sizes in prop_oneof![
            Just(vec![1]),
            prop::collection::vec(prop_oneof![1usize..4, 60_000usize..70_000], 1..4),
        ],
        initial_capacity in 0usize..8,
    ) {
        check(&data, &sizes, cap, initial_capacity);
    }
}

#[test]
fn one_byte_reads_of_a_bom_and_crlf_stream() {
    let data = b"\xEF\xBB\xBF{}\r\n\r\n \t\nab\r\r\nlast\r";
    for cap in 0..8 {
        check(data, &[1], cap, 0);
        check(data, &[2, 3], cap, 1);
    }
}
