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
    let mut errors = Vec::new();
    if JsonParser::new().parse(data, &mut errors).is_some() {
        check_pretty(data);
    } else {
        assert!(!first.is_valid());
    }
}

/// `show`'s re-indentation of a line that passed the JSON layer: still JSON, and a second
/// pass changes nothing (only white space between tokens was touched).
fn check_pretty(data: &[u8]) {
    let (mut once, mut twice) = (Vec::new(), Vec::new());
    rdq_envelope::json::pretty(data, &mut once);
    rdq_envelope::json::pretty(&once, &mut twice);
    assert_eq!(once, twice);
    let mut errors = Vec::new();
    assert!(JsonParser::new().parse(&once, &mut errors).is_some(), "{errors:?}");
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
/// target version; a line at its own version passes through unchanged. Any JSON document at
/// all, validated or not, with any versions: an error or a result, never a panic.
pub fn check_migrate(data: &[u8]) {
    use rdq_envelope::migrate::{Migration, Migrator};
    let rules = EnvelopeRules::new(RuleOptions::default()).unwrap();
    let mut parser = JsonParser::new();
    if let Some(doc) = parser.parse(data, &mut Vec::new()) {
        let mut migrator = Migrator::new();
        for (from, to) in [(1, 2), (2, 1), (1, 1), (0, 1), (2, 3)] {
            let mut out = b"kept".to_vec();
            if migrator
                .migrate(data, &doc, from, to, &mut out, &mut Vec::new())
                .is_err()
            {
                assert_eq!(out, b"kept", "an error leaves the output as it was");
            }
        }
    }
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
        let done = migrator.migrate(data, &doc, from, to, &mut out, &mut errors);
        if done.expect("a valid line migrates or is refused") == Migration::Written {
            assert!(errors.is_empty());
            if to == from {
                assert_eq!(out, data);
            }
            // The output may be over the size limit (1 -> 2 adds bytes): the op checks that.
            let unlimited = EnvelopeRules::new({
        let mut o = RuleOptions::default();
        o.max_envelope_bytes = u64::MAX;
        o
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

/// The whole pipeline over any bytes, cut into chunks of any size and run on 1 to 4 workers:
/// the output and the books are those of one chunk on one worker. The first two bytes pick
/// the chunk size and the workers; the reader cap is tiny, so over-long lines come often.
pub fn check_pipeline(data: &[u8]) {
    use rdq_envelope::ops::{ReportFormat, ValidateOp};
    use rdq_envelope::pipeline::{self, Outputs, PipelineOptions, Source};
    let [size, jobs, input @ ..] = data else {
        return;
    };
    let mut op = ValidateOp::new(EnvelopeRules::new(RuleOptions::default()).unwrap());
    op.format = ReportFormat::Json;
    op.report_warnings = true;
    op.keep_valid = true;
    op.write_rejects = true;
    op.max_line_bytes = 300;
    let run = |chunk_bytes: usize, jobs: usize| {
        let (mut primary, mut valid, mut rejects) = (Vec::new(), Vec::new(), Vec::new());
        let sources = vec![Source::Reader {
            name: "fuzz".into(),
            reader: Box::new(std::io::Cursor::new(input.to_vec())),
        }];
        let outputs = Outputs {
            primary: Some(&mut primary),
            secondary: Some(&mut valid),
            rejects: Some(&mut rejects),
            messages: None,
        };
        let mut options = PipelineOptions::default();
        options.jobs = jobs;
        options.chunk_bytes = chunk_bytes;
        options.max_line_bytes = 300;
        options.line_buffered = false;
        let books = pipeline::run(sources, &op, options, outputs, None);
        (books.map_err(|e| e.to_string()), primary, valid, rejects)
    };
    let whole = run(usize::MAX, 1);
    let cut = run(1 + usize::from(*size) * 7, 1 + usize::from(*jobs % 4));
    if let Ok(books) = &whole.0 {
        assert!(books.balances());
    }
    assert!(whole == cut, "chunked output differs");
}

/// A structured envelope for the fuzzer: a `gen` line of either version, with members of
/// awkward keys and values inserted into its objects, so that the migrations meet moved
/// headers in every order, conflicts, unknown members of `origin`, escapes and huge numbers.
#[derive(Debug, arbitrary::Arbitrary)]
pub struct EnvelopeCase {
    seed: u64,
    version_2: bool,
    inserts: Vec<(Place, u8, u8)>,
}

/// Where a member goes.
#[derive(Debug, arbitrary::Arbitrary)]
enum Place {
    Top,
    Headers,
    Origin,
    Attempt(u8),
}

impl EnvelopeCase {
    /// The line this case describes.
    pub fn line(&self) -> Vec<u8> {
        const KEYS: &[&str] = &[
            "rdq.source",
            "rdq.submitted_by",
            "origin",
            "duration_ms",
            "source",
            "submitted_by",
            "x",
            "st\\u0061tus",
            "rdq.\\u0073ource",
            "",
        ];
        const VALUES: &[&str] = &[
            "\"s\"",
            "null",
            "1e400",
            "-0",
            "{}",
            "[1,{\"a\":[]}]",
            "\"\\ud83d\\ude00\"",
            "123456789012345678901234567890",
            "\"CANCELLED\"",
            "0.1000000000000000055511151231257827",
        ];
        let mut line = Vec::new();
        rdq_envelope::gen::Generator::new({
        let mut o = rdq_envelope::gen::GenOptions::default();
        o.seed = self.seed;
        o.version = if self.version_2 { 2 } else { 1 };
        o.invalid_rate = 0.0;
        o
    })
        .next_line(&mut line);
        for (place, key, value) in self.inserts.iter().take(8) {
            let anchor: Vec<u8> = match place {
                Place::Top => b"{".to_vec(),
                Place::Headers => b"\"headers\":{".to_vec(),
                Place::Origin => b"\"origin\":{".to_vec(),
                Place::Attempt(_) => b"{\"attempt_no\":".to_vec(),
            };
            let nth = match place {
                Place::Attempt(n) => usize::from(*n % 4),
                _ => 0,
            };
            let Some(at) = find_nth(&line, &anchor, nth) else {
                continue;
            };
            // Right after the object's `{`.
            let at = at + anchor.iter().position(|&b| b == b'{').unwrap_or(0) + 1;
            let member = format!(
                "\"{}\":{},",
                KEYS[usize::from(*key) % KEYS.len()],
                VALUES[usize::from(*value) % VALUES.len()]
            );
            line.splice(at..at, member.bytes());
        }
        line
    }
}

fn find_nth(haystack: &[u8], needle: &[u8], nth: usize) -> Option<usize> {
    memchr::memmem::find_iter(haystack, needle).nth(nth)
}

/// A structured envelope through the rules and every migration.
pub fn check_envelope(data: &[u8]) {
    let input = arbitrary::Unstructured::new(data);
    let Ok(case) = <EnvelopeCase as arbitrary::Arbitrary>::arbitrary_take_rest(input) else {
        return;
    };
    let line = case.line();
    check_line(&line);
    check_migrate(&line);
}

/// Any bytes as a ChokaQ row, for each way of telling its table: never a panic; an imported
/// row is a valid version 1 envelope, and migrates to version 2.
pub fn check_chokaq(data: &[u8]) {
    use rdq_envelope::chokaq::{ChokaqOptions, Importer, Table};
    let rules = EnvelopeRules::new(RuleOptions::default()).unwrap();
    let mut parser = JsonParser::new();
    let mut errors = Vec::new();
    let Some(doc) = parser.parse(data, &mut errors) else {
        return;
    };
    for table in [None, Some(Table::Hot), Some(Table::Archive), Some(Table::Dlq)] {
        let mut options = ChokaqOptions::default();
        options.table = table;
        let mut importer = Importer::new(options, rules.options());
        let (mut out, mut errors, mut warnings) = (Vec::new(), Vec::new(), Vec::new());
        if !importer.import(data, &doc, &mut out, &mut errors, &mut warnings) {
            assert!(!errors.is_empty());
            continue;
        }
        let unlimited = EnvelopeRules::new({
        let mut o = RuleOptions::default();
        o.max_envelope_bytes = u64::MAX;
        o
    })
        .unwrap();
        let mut verdict = Verdict::default();
        unlimited.check_line(&mut JsonParser::new(), &out, &mut verdict);
        // The importer's own output form is strict JSON; the rules may still refuse what the
        // row said (a history that goes backwards), which the op then rejects.
        assert!(
            !verdict.errors.iter().any(|d| d.code.as_str() == "MALFORMED_JSON"),
            "{}",
            String::from_utf8_lossy(&out)
        );
        if verdict.is_valid() {
            check_migrate(&out);
        }
    }
}
