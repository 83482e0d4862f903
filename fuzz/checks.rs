// The properties the fuzz targets check, shared with `tests/it/fuzz_corpus.rs` (through
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
    use rdq_envelope::ops::{output, ReportFormat, ValidateOp};
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
    // The input is also a file, which two workers or more read in pieces: the same bytes out.
    let path = std::env::temp_dir().join(format!("rdq-fuzz-pieces-{}", std::process::id()));
    std::fs::write(&path, input).unwrap();
    let name = path.display().to_string();
    let run = |chunk_bytes: usize, jobs: usize, file: bool| {
        let (mut primary, mut valid, mut rejects) = (Vec::new(), Vec::new(), Vec::new());
        let sources = vec![if file {
            Source::Path(path.clone())
        } else {
            Source::Reader {
                name: name.clone(),
                reader: Box::new(std::io::Cursor::new(input.to_vec())),
            }
        }];
        let outputs = Outputs::none().to(output::PRIMARY, &mut primary).to(output::SECONDARY, &mut valid).to(output::REJECTS, &mut rejects);
        let mut options = PipelineOptions::default();
        options.jobs = jobs;
        options.chunk_bytes = chunk_bytes;
        options.max_line_bytes = 300;
        options.line_buffered = false;
        let books = pipeline::run(sources, &op, options, outputs, None).map(|(books, ())| books);
        (books.map_err(|e| e.to_string()), primary, valid, rejects)
    };
    let whole = run(usize::MAX, 1, false);
    let cut = run(1 + usize::from(*size) * 7, 1 + usize::from(*jobs % 4), false);
    let pieces = run(1 + usize::from(*size) * 7, 2 + usize::from(*jobs % 3), true);
    let _ = std::fs::remove_file(&path);
    if let Ok(books) = &whole.0 {
        assert!(books.balances());
    }
    assert!(whole == cut, "chunked output differs");
    assert!(whole == pieces, "the file read in pieces differs");
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
        rdq_envelope::generate::Generator::new({
        let mut o = rdq_envelope::generate::GenOptions::default();
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
/// The single pass against the tape path (`rdq_envelope::test_support`): it accepts only lines
/// the tape path finds valid with no warning, every stage-1 classifier agrees, warm state
/// agrees with fresh; and stage 1's index equals simd-json's on lines simd-json parses. Input
/// starting with 0xFF is a structured case ([`SinglePassCase`]: a nearly valid envelope under
/// some options); any other input is a line, judged under the defaults and under options
/// picked by its length.
pub fn check_single_pass(data: &[u8]) {
    use rdq_envelope::test_support::{single_pass_agrees, stage1_agrees_with_simd_json};
    if let [0xFF, rest @ ..] = data {
        let input = arbitrary::Unstructured::new(rest);
        if let Ok(case) = <SinglePassCase as arbitrary::Arbitrary>::arbitrary_take_rest(input) {
            let line = case.line();
            single_pass_agrees(&case.options(line.len()), &line);
            stage1_agrees_with_simd_json(&line);
        }
        return;
    }
    stage1_agrees_with_simd_json(data);
    single_pass_agrees(&RuleOptions::default(), data);
    single_pass_agrees(
        &options_for_single_pass(data.len() as u8, data.len(), "q"),
        data,
    );
}

/// Rule options by `pick`: warnings off, a required version, the global limit or the queue
/// `queue`'s own just below, at or just above `len`, or the defaults.
fn options_for_single_pass(pick: u8, len: usize, queue: &str) -> RuleOptions {
    let mut o = RuleOptions::default();
    let near = (len as u64 + u64::from(pick / 8 % 3)).saturating_sub(1);
    match pick % 8 {
        0 => o.warnings = false,
        1 => o.require_version = Some(1),
        2 => o.require_version = Some(2),
        3 => o.max_envelope_bytes = near,
        4 => {
            o.max_envelope_bytes = 16;
            o.queue_limits.insert(queue.to_owned(), near);
        }
        5 => {
            o.queue_limits.insert(queue.to_owned(), near);
        }
        6 => o.submit = true,
        _ => {}
    }
    o
}

/// A nearly valid envelope for the single pass: one consistent with its status (either
/// version, a claim check or a payload, up to four attempts, a redrive), then a few members
/// replaced by near misses of their rules or removed or doubled, unknown members inserted, the
/// top-level members rotated, and at most two byte edits.
#[derive(Debug, arbitrary::Arbitrary)]
pub struct SinglePassCase {
    options: u8,
    version_2: bool,
    claim_check: bool,
    status: u8,
    attempts: u8,
    outcomes: [u8; 4],
    redriven: bool,
    edits: Vec<(u8, u8)>,
    extras: Vec<(u8, u8, u8)>,
    rotate: u8,
    bytes: Vec<(u16, u8)>,
}

type Members = Vec<(String, String)>;

/// Near misses and valid values, by member name; `DELETE` removes the member, `DOUBLE` repeats
/// it, `ESCAPE` spells the first character of its key as an escape.
const DELETE: &str = "<delete>";
const DOUBLE: &str = "<double>";
const ESCAPE: &str = "<escape>";

fn single_pass_values(key: &str) -> &'static [&'static str] {
    match key {
        "envelope_version" => &["1", "2", "3", "0", "-0", "1.0", "\"1\"", "12345678901234567890"],
        "id" => &[
            "\"01HWT0D7G0Q8V9W2R4T6Y8A0B2\"",
            "\"01hwt0d7g0q8v9w2r4t6y8a0b2\"",
            "\"81HWT0D7G0Q8V9W2R4T6Y8A0B2\"",
            "\"01HWT0D7G1Q8V9W2R4T6Y8A0B2\"",
            "\"\\u0030\"",
            "\"01HWT0D7G0Q8V9W2R4T6Y8A0BU\"",
        ],
        "queue" | "handler_ref" => &["\"q\"", "\"Q\"", "\"\"", "\"a b\"", "\"\\u0071\"", "1", "\"é\""],
        "handler_version" => &["null", "\"1.0\"", "\"\"", "\"1\\u0007\"", "\"\u{85}\"", "1"],
        "payload" => &["\"\"", "\"e30=\"", "\"eR==\"", "\"e30\"", "\"e3\\u0030=\"", "null"],
        "payload_content_type" => &[
            "\"a/b\"",
            "\"a/b;c=\\\"d\\\"\"",
            "\"text/plain;\"",
            "\"json\"",
            "\"a/b \"",
            "\"a\\/b\"",
        ],
        "payload_ref" => &[
            "null",
            "{}",
            "\"x\"",
            "{\"uri\":\"s3:\",\"sha256\":\"0000000000000000000000000000000000000000000000000000000000000000\",\"size\":0}",
            "{\"uri\":\"s3: \",\"sha256\":\"0000000000000000000000000000000000000000000000000000000000000000\",\"size\":0}",
            "{\"uri\":\"s3:\",\"sha256\":\"0000000000000000000000000000000000000000000000000000000000000000\",\"size\":-0}",
        ],
        "headers" => &[
            "{}",
            "{\"rdq.source\":\"api\"}",
            "{\"a\":\"1\",\"\\u0061\":\"2\"}",
            "{\"\":\"x\"}",
            "{\"a\":1}",
            "null",
            "{\"a\":\"\\ud83d\\ude00\"}",
        ],
        "origin" => &[
            "{}",
            "{\"source\":\"api\"}",
            "{\"source\":null}",
            "{\"source\":1}",
            "[]",
            "{\"x\":[[[]]],\"submitted_by\":\"u\"}",
        ],
        "status" => &["\"PENDING\"", "\"IN_FLIGHT\"", "\"SUCCEEDED\"", "\"DEAD\"", "\"CANCELLED\"", "\"dead\"", "\"\\u0044EAD\""],
        "attempt_count" | "redrive_count" | "attempt_no" | "duration_ms" | "size" => &[
            "0", "1", "2", "1000", "4294967295", "4294967296", "-0", "-1", "1.0", "1e2",
            "999999999999999999", "1000000000000000000", "18446744073709551616", "null", "\"1\"",
        ],
        "next_attempt_at" | "lease_expires_at" | "created_at" | "started_at" | "finished_at" => &[
            "null",
            "\"2024-05-01T12:00:00.000Z\"",
            "\"2024-05-01T12:00:01.000Z\"",
            "\"2024-05-01T12:00:01.001Z\"",
            "\"2024-05-01T11:59:59.000Z\"",
            "\"2024-02-29T12:00:00.000Z\"",
            "\"2023-02-29T12:00:00.000Z\"",
            "\"2024-05-01T12:00:00Z\"",
            "\"2024-05-01T24:00:00.000Z\"",
            "\"2024-05-01T12:00:60.000Z\"",
            "\"\\u0032024-05-01T12:00:00.000Z\"",
        ],
        "attempts" => &["[]", "null", "[{}]", "[1]"],
        "outcome" => &["null", "\"SUCCESS\"", "\"RETRYABLE_FAILURE\"", "\"PERMANENT_FAILURE\"", "\"LEASE_EXPIRED\"", "\"TIMEOUT\""],
        "error" => &[
            "null",
            "{\"type\":\"E\",\"message\":\"m\"}",
            "{\"type\":\"rdq.LeaseExpired\",\"message\":\"m\"}",
            "{\"type\":\"rdq.LeaseExpired\",\"message\":\"\"}",
            "{\"type\":\"rdq.LeaseExpired\",\"message\":\"m\",\"stack\":\"s\"}",
            "{\"type\":\"\",\"message\":\"m\"}",
            "{\"type\":\"E\"}",
            "\"x\"",
        ],
        _ => &["1", "\"s\"", "null", "{}", "[]", "1e400", "\"\\ud800\"", "{\"a\":1,\"a\":2}"],
    }
}

/// Values of unknown members.
const SINGLE_PASS_EXTRA_VALUES: &[&str] = &[
    "null",
    "-0.0e-0",
    "123456789012345678901234567890",
    "\"\\u0041\\ud83d\\ude00\\\\\\\"\"",
    "\"\\ud800\"",
    "[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]",
    "{\"a\":{\"b\":[true,false,null]},\"c\":\"d\"}",
    "{\"a\":1,\"\\u0061\":2}",
    "\"\u{1}\"",
    "tru",
];

const SINGLE_PASS_EXTRA_KEYS: &[&str] = &[
    "x",
    "x_extra",
    "\\u0078",
    "",
    "status",
    "st\\u0061tus",
    "rdq.source",
    "a\\\"b",
];


impl SinglePassCase {
    /// The options this case runs under, for a line of `len` bytes.
    pub fn options(&self, len: usize) -> RuleOptions {
        if self.options < 128 {
            return RuleOptions::default();
        }
        options_for_single_pass(self.options, len, "q")
    }

    /// The line this case describes.
    pub fn line(&self) -> Vec<u8> {
        let v2 = self.version_2;
        let at = |s: usize| format!("\"2024-05-01T12:{:02}:{:02}.000Z\"", s / 60 % 60, s % 60);
        let status = ["PENDING", "IN_FLIGHT", "SUCCEEDED", "DEAD", "CANCELLED"]
            [usize::from(self.status) % if v2 { 5 } else { 4 }];
        let mut n = usize::from(self.attempts % 5);
        if matches!(status, "IN_FLIGHT" | "SUCCEEDED" | "DEAD") {
            n = n.max(1);
        }
        let mut attempts: Vec<Members> = Vec::new();
        let mut restarts = 0;
        for i in 0..n {
            let last = i + 1 == n;
            let no = if self.redriven && i >= 1 {
                if i == 1 {
                    restarts = 1;
                }
                i
            } else {
                i + 1
            };
            let start = 10 * i + 1;
            let in_flight = last && status == "IN_FLIGHT";
            let outcome = if in_flight {
                "null"
            } else if last && status == "SUCCEEDED" {
                "\"SUCCESS\""
            } else {
                [
                    "\"RETRYABLE_FAILURE\"",
                    "\"PERMANENT_FAILURE\"",
                    "\"LEASE_EXPIRED\"",
                ][usize::from(self.outcomes[i]) % 3]
            };
            let error = match outcome {
                "\"LEASE_EXPIRED\"" => "{\"type\":\"rdq.LeaseExpired\",\"message\":\"lease of w-7 expired\"}",
                "\"SUCCESS\"" | "null" => "null",
                _ => "{\"type\":\"java.lang.E\",\"message\":\"boom \\\"q\\\"\",\"stack\":\"at a\\n\\tat b\",\"detail\":{\"k\":[1,2.5]}}",
            };
            let mut a: Members = vec![
                ("attempt_no".into(), no.to_string()),
                ("started_at".into(), at(start)),
                (
                    "finished_at".into(),
                    if in_flight {
                        "null".into()
                    } else {
                        at(start + 1)
                    },
                ),
            ];
            if v2 {
                let d = if in_flight { "null" } else { "1000" };
                a.push(("duration_ms".into(), d.into()));
            }
            a.push(("outcome".into(), outcome.into()));
            a.push(("error".into(), error.into()));
            attempts.push(a);
        }
        let mut top: Members = vec![
            ("envelope_version".into(), if v2 { "2" } else { "1" }.into()),
            ("id".into(), "\"01HWT0D7G0Q8V9W2R4T6Y8A0B2\"".into()),
            ("queue".into(), "\"q\"".into()),
            ("handler_ref".into(), "\"h\"".into()),
            ("handler_version".into(), "\"1.4.2 (build é)\"".into()),
        ];
        if v2 && self.claim_check {
            top.push(("payload_ref".into(), "{\"uri\":\"s3://b/k?v=1#f\",\"sha256\":\"abababababababababababababababababababababababababababababababab\",\"size\":10}".into()));
        } else {
            top.push(("payload".into(), "\"eyJuIjoxfQ==\"".into()));
        }
        top.push((
            "payload_content_type".into(),
            "\"application/json; charset=utf-8\"".into(),
        ));
        if v2 {
            top.push(("headers".into(), "{\"traceparent\":\"00-abc\"}".into()));
            top.push(("origin".into(), "{\"source\":\"api\"}".into()));
        } else {
            top.push((
                "headers".into(),
                "{\"rdq.source\":\"api\",\"traceparent\":\"00-abc\"}".into(),
            ));
        }
        top.push(("status".into(), format!("\"{status}\"")));
        top.push(("attempt_count".into(), n.to_string()));
        top.push(("redrive_count".into(), restarts.to_string()));
        let next = if status == "PENDING" {
            at(3600)
        } else {
            "null".into()
        };
        top.push(("next_attempt_at".into(), next));
        let lease = if status == "IN_FLIGHT" {
            at(3000)
        } else {
            "null".into()
        };
        top.push(("lease_expires_at".into(), lease));
        top.push(("created_at".into(), at(0)));

        // Edits: a member of the top level, or of an attempt, replaced, removed or doubled.
        for &(field, value) in self.edits.iter().take(3) {
            let members = match usize::from(field) % 3 {
                0 if !attempts.is_empty() => {
                    let i = usize::from(field / 3) % attempts.len();
                    &mut attempts[i]
                }
                _ => &mut top,
            };
            if members.is_empty() {
                continue;
            }
            let m = usize::from(field / 16) % members.len();
            let values = single_pass_values(&members[m].0);
            let value = match usize::from(value) % (values.len() + 3) {
                k if k < values.len() => values[k],
                k if k == values.len() => DELETE,
                k if k == values.len() + 1 => DOUBLE,
                _ => ESCAPE,
            };
            match value {
                DELETE => {
                    members.remove(m);
                }
                DOUBLE => members.push(members[m].clone()),
                ESCAPE => {
                    let key = &mut members[m].0;
                    let first = key.remove(0);
                    *key = format!("\\u{:04x}{key}", u32::from(first));
                }
                v => members[m].1 = v.to_owned(),
            }
        }
        let render = |members: &Members| {
            let inner: Vec<String> = members
                .iter()
                .map(|(k, v)| format!("\"{k}\":{v}"))
                .collect();
            format!("{{{}}}", inner.join(","))
        };
        let attempts: Vec<String> = attempts.iter().map(render).collect();
        top.push(("attempts".into(), format!("[{}]", attempts.join(","))));
        for &(place, key, value) in self.extras.iter().take(3) {
            let member = (
                SINGLE_PASS_EXTRA_KEYS[usize::from(key) % SINGLE_PASS_EXTRA_KEYS.len()].to_owned(),
                SINGLE_PASS_EXTRA_VALUES[usize::from(value) % SINGLE_PASS_EXTRA_VALUES.len()]
                    .to_owned(),
            );
            let at = usize::from(place) % (top.len() + 1);
            top.insert(at, member);
        }
        let rotate = usize::from(self.rotate) % top.len();
        top.rotate_left(rotate);
        let mut line = render(&top).into_bytes();
        // A byte edit for kinds below 80 only: most cases stay near valid.
        for &(position, kind) in self.bytes.iter().take(2) {
            if line.is_empty() || kind >= 80 {
                continue;
            }
            let at = usize::from(position) % line.len();
            let kind = usize::from(kind) % rdq_envelope::test_support::BYTE_MUTATIONS;
            line = rdq_envelope::test_support::byte_mutation(&line, at, kind);
        }
        line
    }
}

/// Any bytes as a sequence of calls on an owned envelope (see
/// `rdq_envelope::test_support::drive_lifecycle`): after every call, applied or refused, the
/// checker accepts the envelope as written, and it reads back the same.
pub fn check_lifecycle(data: &[u8]) {
    rdq_envelope::test_support::drive_lifecycle(data);
}

/// The compliance kit's fixtures, made once per process (a megabyte of lines).
fn compliance_fixtures() -> &'static [rdq_envelope::compliance::Fixture] {
    static SET: std::sync::OnceLock<Vec<rdq_envelope::compliance::Fixture>> =
        std::sync::OnceLock::new();
    SET.get_or_init(rdq_envelope::compliance::fixtures)
}

/// A store's output against a fixture, as the compliance kit compares them: never a panic on
/// any bytes; the comparison is reflexive (a line equals itself under both equalities) and
/// symmetric in whether it finds a difference by value; a fixture given back as it was sent
/// passes. `data`: a fixture's index, a position and a mutation kind, then the line given
/// back (none: the fixture mutated at that position).
pub fn check_compare(data: &[u8]) {
    use rdq_envelope::compliance::{judge, Comparer, Equality};
    let [index, at_low, at_high, kind, found @ ..] = data else {
        return;
    };
    let set = compliance_fixtures();
    let fixture = &set[usize::from(*index) % set.len()];
    let sent = &fixture.line;
    let mutated;
    let found = match found {
        [] => {
            let at = usize::from(u16::from_le_bytes([*at_low, *at_high])) % sent.len().max(1);
            let kind = usize::from(*kind) % rdq_envelope::test_support::BYTE_MUTATIONS;
            mutated = rdq_envelope::test_support::byte_mutation(sent, at, kind);
            &mutated[..]
        }
        found => found,
    };
    let mut comparer = Comparer::new();
    for equality in [Equality::Value, Equality::Exact] {
        if let Ok(forth) = comparer.compare(sent, found, equality) {
            assert!(forth.kept.len() <= forth.total);
            if equality == Equality::Value {
                let back = comparer.compare(found, sent, equality).expect("both parse");
                assert_eq!(forth.is_empty(), back.is_empty(), "symmetric by value");
            }
            let itself = comparer.compare(found, found, equality).expect("it parsed");
            assert!(itself.is_empty(), "{equality:?}: {:?}", itself.kept);
        }
    }
    // The fixture and its neighbours (the whole set is megabytes: too slow to fuzz), with
    // this line in the fixture's place, and again as an extra line after them.
    let at = usize::from(*index) % set.len();
    let set = &set[at.saturating_sub(1)..(at + 2).min(set.len())];
    let mut output = Vec::new();
    for other in set {
        let line = if std::ptr::eq(other, fixture) { found } else { &other.line[..] };
        output.extend_from_slice(line);
        output.push(b'\n');
    }
    let judgement = judge(set, &output, Equality::Value);
    if found == &sent[..] {
        assert!(judgement.passed(), "{:?}", judgement.by_class());
    }
    output.extend_from_slice(found);
    let _ = judge(set, &output, Equality::Exact);
}

/// Any bytes as one protobuf envelope, and as a length-delimited stream of them: never a panic;
/// a message that converts is a valid envelope whose own message converts back to the same
/// envelope and the same canonical line.
pub fn check_proto(data: &[u8]) {
    use rdq_envelope::envelope::Envelope;
    if let Ok(envelope) = Envelope::from_proto(data) {
        let line = envelope.to_json();
        let again = Envelope::from_proto(&envelope.to_proto()).expect("its own message converts");
        assert_eq!(again.to_json(), line);
        assert!(Envelope::from_json(line.as_bytes()).is_ok(), "{line}");
    }
    let mut stream = rdq_envelope::proto::DelimitedReader::new(data).max_message_bytes(1 << 16);
    for _ in 0..64 {
        match stream.next_message() {
            Ok(Some(frame)) => {
                let _ = Envelope::from_proto(frame.bytes);
            }
            Ok(None) | Err(_) => break,
        }
    }
}
