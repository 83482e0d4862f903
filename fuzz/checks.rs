// The properties the fuzz targets check, shared with `tests/fuzz_corpus.rs` (through
// `include!`) so that every corpus file also runs under `cargo test`, without nightly.

use rdq_envelope::framing::{LineKind, LineReader};
use rdq_envelope::{EnvelopeRules, JsonParser, RuleOptions, Verdict};

/// One line through the JSON layer and every rule: never a panic; a reused parser gives the
/// same verdict as a fresh one; a valid verdict means the line passes the JSON layer alone.
pub fn check_line(data: &[u8]) {
    let rules = EnvelopeRules::new(RuleOptions::default()).unwrap();
    let mut parser = JsonParser::new();
    let (mut first, mut second) = (Verdict::default(), Verdict::default());
    rules.check_line(&mut parser, b"{\"warm\":[1e400,\"\\u0041\"]}", &mut first);
    rules.check_line(&mut parser, data, &mut first);
    rules.check_line(&mut JsonParser::new(), data, &mut second);
    assert_eq!(first, second);
    if first.is_valid() {
        let mut errors = Vec::new();
        assert!(JsonParser::new().parse(data, &mut errors).is_some());
    }
}

/// The reader over any byte stream, with a tiny cap and buffer: every byte is accounted for,
/// lines are numbered 1, 2, 3, ... and start where the previous one's terminator ended.
pub fn check_reader(data: &[u8]) {
    let mut reader = LineReader::with_capacity(data, 8, 1);
    let mut next_offset = if data.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
    let mut number = 0;
    while let Some(line) = reader.next_line().unwrap() {
        number += 1;
        assert_eq!(line.number, number);
        assert_eq!(line.offset, next_offset);
        let end = (line.offset + line.len) as usize;
        assert!(end <= data.len());
        if line.kind != LineKind::TooLong {
            assert_eq!(line.content, &data[line.offset as usize..end]);
        }
        next_offset = match &data[end..] {
            [b'\r', b'\n', ..] => end + 2,
            [b'\n', ..] => end + 1,
            _ => end,
        } as u64;
    }
    assert_eq!(next_offset, data.len() as u64);
    assert_eq!(reader.offset(), data.len() as u64);
}
