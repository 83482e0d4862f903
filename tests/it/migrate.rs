//! Property tests of the migrations (docs/migrations.md#losslessness, "Round trips") over generated
//! envelopes of both versions, decorated with unknown fields, awkward numbers, escapes and white
//! space; and the pipeline's `migrate` giving the same bytes for any number of workers.

use std::io::Cursor;

use proptest::prelude::*;

use rdq_envelope::generate::{GenOptions, Generator};
use rdq_envelope::json::{Document, JsonParser, Value, ValueKind};
use rdq_envelope::migrate::{Migration, Migrator};
use rdq_envelope::ops::{output, MigrateOp};
use rdq_envelope::pipeline::{self, Outputs, PipelineOptions, Source};
use rdq_envelope::{EnvelopeRules, RuleOptions, Verdict};

/// Unknown values a careless re-serializer would change.
const AWKWARD: &[&str] = &[
    "1e400",
    "-0",
    "123456789012345678901234567890",
    "0.1000000000000000055511151231257827",
    r#""caf\u00e9 \ud83d\ude00 \/""#,
    r#"[ 1 , {"a" : null} ]"#,
    "{}",
    "true",
    "1E-7",
];

/// A `gen` envelope with `extras` unknown members (each an index into [`AWKWARD`]) spliced in
/// after `headers`' first member and at the end, with white space around them.
fn decorated(seed: u64, version: u32, extras: &[usize]) -> String {
    let mut line = Vec::new();
    Generator::new({
        let mut o = GenOptions::default();
        o.seed = seed;
        o.version = version;
        o.invalid_rate = 0.0;
        o
    })
    .next_line(&mut line);
    let mut line = String::from_utf8(line).unwrap();
    for (i, &pick) in extras.iter().enumerate() {
        let member = format!(" \"x_{i}\" : {} ", AWKWARD[pick % AWKWARD.len()]);
        if i % 2 == 0 {
            line.insert_str(line.len() - 1, &format!(",{member}"));
        } else {
            let at = line.find(r#""headers":{"#).unwrap() + 11;
            line.insert_str(at, &format!("\"h_{i}\":\"\\u0041{i}\","));
        }
    }
    line
}

struct Checked {
    rules: EnvelopeRules,
    parser: JsonParser,
    verdict: Verdict,
    migrator: Migrator,
}

impl Checked {
    fn new() -> Self {
        Checked {
            rules: EnvelopeRules::new(RuleOptions::default()).unwrap(),
            parser: JsonParser::new(),
            verdict: Verdict::default(),
            migrator: Migrator::new(),
        }
    }

    /// Validates `line` (it must be valid) and migrates it; `None` when the step refused.
    fn migrate(&mut self, line: &str, to: u32) -> Option<String> {
        let doc = self
            .rules
            .check_line(&mut self.parser, line.as_bytes(), &mut self.verdict);
        assert!(self.verdict.is_valid(), "{line}\n{:?}", self.verdict.errors);
        let from = self.verdict.version.unwrap();
        let (mut out, mut errors) = (Vec::new(), Vec::new());
        let done = self.migrator.migrate(
            line.as_bytes(),
            &doc.unwrap(),
            from,
            to,
            &mut out,
            &mut errors,
        );
        let written = done.expect("a valid line migrates or is refused") == Migration::Written;
        written.then(|| String::from_utf8(out).unwrap())
    }

    fn version(&mut self, line: &str) -> Option<u32> {
        self.rules
            .check_line(&mut self.parser, line.as_bytes(), &mut self.verdict);
        self.verdict
            .is_valid()
            .then_some(self.verdict.version)
            .flatten()
    }
}

/// The JSON value of `line` in a canonical text: members sorted by decoded key, strings
/// decoded and re-escaped, numbers as written (the migrations never touch their spelling).
fn json_value(line: &str) -> String {
    fn write(value: Value<'_>, line: &str, spans: &[(usize, usize)], out: &mut String) {
        match value.kind() {
            ValueKind::Object => {
                let mut members: Vec<(String, String)> = value
                    .members()
                    .map(|(key, v)| {
                        let mut text = String::new();
                        write(v, line, spans, &mut text);
                        (key.to_owned(), text)
                    })
                    .collect();
                members.sort();
                out.push('{');
                for (key, text) in members {
                    out.push_str(&format!("{key:?}:{text},"));
                }
                out.push('}');
            }
            ValueKind::Array => {
                out.push('[');
                for element in value.elements() {
                    write(element, line, spans, out);
                    out.push(',');
                }
                out.push(']');
            }
            ValueKind::String => out.push_str(&format!("{:?}", value.as_str().unwrap())),
            _ => {
                let (start, end) = spans[value.tape_index()];
                out.push_str(&line[start..end]);
            }
        }
    }
    let mut parser = JsonParser::new();
    let doc: Document<'_> = parser.parse(line.as_bytes(), &mut Vec::new()).unwrap();
    let mut spans = Vec::new();
    doc.node_spans(line.as_bytes(), &mut spans);
    let mut out = String::new();
    write(doc.root(), line, &spans, &mut out);
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn v1_round_trips(seed in any::<u64>(), extras in prop::collection::vec(0usize..64, 0..6)) {
        let mut c = Checked::new();
        let v1 = decorated(seed, 1, &extras);
        let same = c.migrate(&v1, 1);
        prop_assert_eq!(same.as_deref(), Some(v1.as_str()));
        let v2 = c.migrate(&v1, 2).expect("every valid v1 envelope goes up");
        prop_assert_eq!(c.version(&v2), Some(2), "{}", v2);
        let back = c.migrate(&v2, 1).expect("what 1 -> 2 wrote goes down");
        prop_assert_eq!(json_value(&back), json_value(&v1));
        let again = c.migrate(&back, 2).unwrap();
        prop_assert_eq!(&again, &v2);
        let same = c.migrate(&v2, 2);
        prop_assert_eq!(same.as_deref(), Some(v2.as_str()));
    }

    #[test]
    fn v2_round_trips_when_it_can_go_down(
        seed in any::<u64>(),
        extras in prop::collection::vec(0usize..64, 0..6),
    ) {
        let mut c = Checked::new();
        let v2 = decorated(seed, 2, &extras);
        let same = c.migrate(&v2, 2);
        prop_assert_eq!(same.as_deref(), Some(v2.as_str()));
        if let Some(v1) = c.migrate(&v2, 1) {
            prop_assert_eq!(c.version(&v1), Some(1), "{}", v1);
            let up = c.migrate(&v1, 2).unwrap();
            prop_assert_eq!(json_value(&up), json_value(&v2));
        } else {
            // Only what version 1 cannot hold is refused.
            let claim_check = v2.contains(r#""payload_ref":{"#);
            prop_assert!(v2.contains("CANCELLED") || claim_check, "{}", v2);
        }
    }
}

fn run(op: &MigrateOp, input: &[u8], jobs: usize, chunk_bytes: usize) -> (Vec<u8>, Vec<u8>) {
    let (mut out, mut rejects) = (Vec::new(), Vec::new());
    let sources = vec![Source::Reader {
        name: "in".into(),
        reader: Box::new(Cursor::new(input.to_vec())),
    }];
    let outputs = Outputs::none()
        .to(output::PRIMARY, &mut out)
        .to(output::REJECTS, &mut rejects);
    let mut options = PipelineOptions::default();
    options.jobs = jobs;
    options.chunk_bytes = chunk_bytes;
    pipeline::run(sources, op, options, outputs, None).unwrap();
    (out, rejects)
}

#[test]
fn migrate_writes_the_same_bytes_for_any_number_of_workers() {
    let mut input = Vec::new();
    for (seed, version) in [(1, 1), (2, 2)] {
        let mut generator = Generator::new({
            let mut o = GenOptions::default();
            o.seed = seed;
            o.version = version;
            o.invalid_rate = 0.1;
            o
        });
        for _ in 0..400 {
            generator.next_line(&mut input);
            input.push(b'\n');
        }
    }
    for to in [1, 2] {
        let rules = EnvelopeRules::new(RuleOptions::default()).unwrap();
        let mut op = MigrateOp::new(rules, rdq_envelope::ops::MigrateSource::Rdq, to).unwrap();
        op.write_rejects = true;
        op.max_line_bytes = 1 << 20;
        let one = run(&op, &input, 1, 1 << 20);
        assert!(!one.0.is_empty() && !one.1.is_empty());
        for (jobs, chunk_bytes) in [(2, 1 << 20), (2, 7_000), (3, 1)] {
            assert!(
                run(&op, &input, jobs, chunk_bytes) == one,
                "--to {to} -j{jobs}"
            );
        }
    }
}

/// `Migrator::migrate` is total: an unsupported version or a document that was not validated
/// is an error, never a panic, and leaves the output as it was.
#[test]
fn migrate_refuses_what_it_cannot_take_without_panicking() {
    use rdq_envelope::migrate::MigrateError;
    let mut parser = JsonParser::new();
    let mut migrator = Migrator::new();
    let cases: [(&str, u32, u32); 8] = [
        (r#"{"envelope_version":1,"headers":{}}"#, 1, 3),
        (r#"{"envelope_version":1,"headers":{}}"#, 0, 1),
        (r#"{"headers":{}}"#, 1, 2),
        (r#"{"envelope_version":2,"headers":{}}"#, 1, 2),
        (r#"{"envelope_version":1}"#, 1, 2),
        (r#"{"envelope_version":1,"headers":[]}"#, 1, 2),
        (
            r#"{"envelope_version":1,"headers":{},"attempts":[{}]}"#,
            1,
            2,
        ),
        (r#"{"envelope_version":2,"headers":{}}"#, 2, 1),
    ];
    for (line, from, to) in cases {
        let doc = parser.parse(line.as_bytes(), &mut Vec::new()).unwrap();
        let mut out = b"kept".to_vec();
        let result = migrator.migrate(line.as_bytes(), &doc, from, to, &mut out, &mut Vec::new());
        match result {
            Err(MigrateError::UnsupportedVersion(_) | MigrateError::NotValid { .. }) => {}
            other => panic!("{line} {from}->{to}: {other:?}"),
        }
        assert_eq!(out, b"kept", "{line}");
    }
}
