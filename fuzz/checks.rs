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

/// Any bytes through `migrate` both ways: never a panic; whatever is written is valid in its
/// target version; a line at its own version passes through unchanged.
pub fn check_migrate(data: &[u8]) {
    use rdq_envelope::migrate::Migrator;
    let rules = EnvelopeRules::new(RuleOptions::default()).unwrap();
    let mut parser = JsonParser::new();
    let mut verdict = Verdict::default();
    let Some(doc) = rules.check_line(&mut parser, data, &mut verdict) else {
        return;
    };
    if !verdict.is_valid() {
        return;
    }
    let from = verdict.version.expect("a valid line has a version");
    let mut migrator = Migrator::new();
    for to in [1, 2] {
        let (mut out, mut errors) = (Vec::new(), Vec::new());
        if migrator.migrate(data, &doc, from, to, &mut out, &mut errors) {
            assert!(errors.is_empty());
            if to == from {
                assert_eq!(out, data);
            }
            // The output may be over the size limit (1 -> 2 adds bytes): the op checks that.
            let unlimited = EnvelopeRules::new(RuleOptions {
                max_envelope_bytes: u64::MAX,
                ..RuleOptions::default()
            })
            .unwrap();
            let mut written = Verdict::default();
            unlimited.check_line(&mut JsonParser::new(), &out, &mut written);
            assert!(written.is_valid(), "{:?}", written.errors);
            assert_eq!(written.version, Some(to));
        } else {
            assert!(!errors.is_empty());
        }
    }
}
