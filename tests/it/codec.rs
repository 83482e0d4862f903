//! The codec's round trips (docs/library.md#the-canonical-form), over every valid line we have:
//! the compliance fixtures, `gen`'s corpora of both versions, the examples' output, and the
//! JSONTestSuite's values used as member values. Reading a valid line into an owned `Envelope`
//! and writing it gives a line the checker accepts with the same JSON value; a line already
//! canonical comes back byte for byte.

use std::path::PathBuf;

use rdq_envelope::envelope::{
    AttemptError, Checker, Envelope, JsonText, Optional, Outcome, Producer, Submit, Timestamp,
};
use rdq_envelope::json::{JsonParser, Value, ValueKind};
use rdq_envelope::{EnvelopeRules, RuleOptions};

use crate::common::{compliance_case_paths, gen_lines, need_or_skip};

fn checker() -> Checker {
    Checker::new(EnvelopeRules::new(RuleOptions::default()).unwrap())
}

/// Whether two JSON texts hold the same value: members in any order, strings after
/// unescaping, numbers equal as integers or spelled the same.
pub(crate) fn same_value(a: &[u8], b: &[u8]) -> bool {
    let (mut pa, mut pb) = (JsonParser::new(), JsonParser::new());
    let (Some(da), Some(db)) = (pa.parse(a, &mut Vec::new()), pb.parse(b, &mut Vec::new())) else {
        return false;
    };
    let (mut sa, mut sb) = (Vec::new(), Vec::new());
    da.node_spans(a, &mut sa);
    db.node_spans(b, &mut sb);
    let text = |line: &[u8], spans: &[(usize, usize)], v: Value<'_>| {
        let (from, to) = spans[v.tape_index()];
        line[from..to].to_vec()
    };
    fn walk(
        x: Value<'_>,
        y: Value<'_>,
        tx: &dyn Fn(Value<'_>) -> Vec<u8>,
        ty: &dyn Fn(Value<'_>) -> Vec<u8>,
    ) -> bool {
        if x.kind() != y.kind() {
            return false;
        }
        match x.kind() {
            ValueKind::Object => {
                x.len() == y.len()
                    && x.members()
                        .all(|(k, xv)| y.get(k).is_some_and(|yv| walk(xv, yv, tx, ty)))
            }
            ValueKind::Array => {
                x.len() == y.len()
                    && x.elements()
                        .zip(y.elements())
                        .all(|(xv, yv)| walk(xv, yv, tx, ty))
            }
            ValueKind::String => x.as_str() == y.as_str(),
            ValueKind::Number => match (x.as_integer(), y.as_integer()) {
                (Some(i), Some(j)) => i == j,
                _ => tx(x) == ty(y),
            },
            _ => tx(x) == ty(y),
        }
    }
    walk(da.root(), db.root(), &|v| text(a, &sa, v), &|v| {
        text(b, &sb, v)
    })
}

/// Reads `line` (valid) into an owned envelope and writes it: the checker accepts the result,
/// it holds the same value, and reading and writing it again changes nothing. Returns whether
/// the line came back byte for byte.
fn round_trip(checker: &mut Checker, line: &[u8]) -> bool {
    let owned = match checker.check(line).envelope() {
        Some(view) => view.to_owned(),
        None => panic!("not valid: {}", String::from_utf8_lossy(line)),
    };
    let written = owned.to_json();
    let checked = checker.check(written.as_bytes());
    assert!(
        checked.is_valid(),
        "{written}: {:?}",
        checked.verdict().errors
    );
    assert_eq!(checked.envelope().unwrap().to_owned(), owned);
    assert!(
        same_value(line, written.as_bytes()),
        "{}\n{written}",
        String::from_utf8_lossy(line)
    );
    assert_eq!(
        Envelope::from_json(written.as_bytes()).unwrap().to_json(),
        written
    );
    written.as_bytes() == line
}

#[test]
fn compliance_fixtures_round_trip() {
    let mut checker = checker();
    let (mut valid, mut same_bytes) = (0, 0);
    for path in compliance_case_paths() {
        let bytes = std::fs::read(&path).unwrap();
        let line = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        if line.contains(&b'\n') || !checker.check(line).is_valid() {
            continue;
        }
        valid += 1;
        same_bytes += usize::from(round_trip(&mut checker, line));
    }
    eprintln!("compliance fixtures: {valid} valid lines round-trip, {same_bytes} byte for byte");
    assert!(valid >= 70, "{valid}");
}

#[test]
fn gen_corpora_round_trip_byte_for_byte() {
    let mut checker = checker();
    for version in [1, 2] {
        let lines = gen_lines(2000, 99, Some(version), 0.0);
        for line in lines.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            assert!(round_trip(&mut checker, line), "v{version}: not canonical");
        }
    }
}

/// Every value of the JSONTestSuite that the JSON layer accepts, as an unknown member, an
/// error's `detail`, and (when it is a string) as a header value, a message and a stack.
#[test]
fn json_test_suite_values_as_member_values() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/testdata/JSONTestSuite/test_parsing");
    let found = std::fs::read_dir(&dir).map_err(|_| crate::common::json_test_suite_missing(&dir));
    let Some(entries) = need_or_skip(found, "the codec's JSONTestSuite round trip") else {
        return;
    };
    let t0 = Timestamp::UNIX_EPOCH;
    let mut checker = checker();
    let (mut values, mut strings) = (0, 0);
    for entry in entries {
        let path = entry.unwrap().path();
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Ok(value) = JsonText::parse(&text) else {
            continue;
        };
        values += 1;
        let mut envelope = Producer::with_clock(move || t0)
            .with_seed(1)
            .submit(Submit::new("q", "h", text.as_bytes().to_vec(), "text/plain").unwrap())
            .unwrap();
        envelope.insert_unknown("x", value.clone()).unwrap();
        envelope.lease(t0, t0).unwrap();
        let mut error = AttemptError::new("E", "m").unwrap();
        if let Some(decoded) = serde_json::from_str(&text)
            .ok()
            .as_ref()
            .and_then(first_string)
        {
            strings += 1;
            envelope.set_header("h", &decoded).unwrap();
            error = AttemptError::new("E", &decoded)
                .unwrap()
                .with_stack(&decoded);
        }
        let error = error.with_detail(value).unwrap();
        envelope
            .finish_attempt(t0, Outcome::RetryableFailure, Some(error))
            .unwrap()
            .dead_letter()
            .unwrap();
        let line = envelope.to_json();
        {
            let checked = checker.check(line.as_bytes());
            assert!(
                checked.is_valid(),
                "{}: {:?}",
                path.display(),
                checked.verdict().errors
            );
            assert_eq!(
                checked.envelope().unwrap().to_owned(),
                envelope,
                "{}",
                path.display()
            );
        }
        assert!(
            round_trip(&mut checker, line.as_bytes()),
            "{}",
            path.display()
        );
    }
    eprintln!("JSONTestSuite: {values} values, {strings} of them strings, round-trip");
    assert!(
        values > 90 && strings > 30,
        "{values} values, {strings} strings"
    );
}

/// The first string in a JSON value (the suite's string cases are strings in an array).
fn first_string(value: &serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Array(items) => items.iter().find_map(first_string),
        serde_json::Value::Object(members) => members.values().find_map(first_string),
        _ => None,
    }
}

/// A line in no canonical form (members out of order, escapes, `-0`, white space) comes back
/// canonical with the same value, its unknown members byte for byte.
#[test]
fn a_line_out_of_canonical_form_keeps_its_value() {
    let line = concat!(
        r#"{ "attempts":[{"error":{"message":"\u0062oom","type":"E","zz":[1.0,-0,1e2]},"#,
        r#""outcome":"PERMANENT_FAILURE","finished_at":"2024-05-01T12:00:02.000Z","#,
        r#""started_at":"2024-05-01T12:00:01.000Z","attempt_no":1,"x\u002dy":{"b":1,"a":2}}],"#,
        r#""envelope_version":1,"id":"01HWT0DD088F8ENKHRJHCSSPV8","queue":"mail","#,
        r#""handler_ref":"send","payload":"e30=","payload_content_type":"application/json","#,
        r#""headers":{"b":"2","a":"\/1"},"status":"DEAD","attempt_count":-0,"redrive_count":0,"#,
        r#""next_attempt_at":null,"lease_expires_at":null,"created_at":"2024-05-01T12:00:00.000Z","#,
        r#""x_top":123456789012345678901234567890 }"#
    );
    let mut checker = checker();
    assert!(!round_trip(&mut checker, line.as_bytes()));
    let written = Envelope::from_json(line.as_bytes()).unwrap().to_json();
    assert!(written.contains(r#""zz":[1.0,-0,1e2]"#), "{written}");
    assert!(written.contains(r#""x\u002dy":{"b":1,"a":2}"#), "{written}");
    assert!(
        written.ends_with(r#""x_top":123456789012345678901234567890}"#),
        "{written}"
    );
    assert!(
        written.contains(r#""headers":{"b":"2","a":"/1"}"#),
        "{written}"
    );
    assert!(written.contains(r#""attempt_count":0,"#), "{written}");
    let error = Envelope::from_json(line.as_bytes()).unwrap();
    let last = error.last_attempt().unwrap();
    assert_eq!(last.error().get().map(|e| e.message()), Some("boom"));
    assert_eq!(error.handler_version(), &Optional::Absent);
}

/// The two examples: `build_envelopes` writes canonical envelopes that `roundtrip` gives back
/// byte for byte, and every status appears.
#[test]
fn the_examples_build_and_round_trip() {
    let example = |name: &str| {
        let mut path = PathBuf::from(env!("CARGO_BIN_EXE_rdq-envelope"));
        path.pop();
        path.push("examples");
        path.push(name);
        path
    };
    let build = example("build_envelopes");
    // `cargo test` builds the examples beside the binary; `cargo test --test it` does not.
    let found = match build.exists() {
        true => Ok(()),
        false => Err(format!(
            "{} is not built (cargo test builds it)",
            build.display()
        )),
    };
    if need_or_skip(found, "the examples' round trip").is_none() {
        return;
    }
    for v2 in [false, true] {
        let mut command = std::process::Command::new(&build);
        command.arg("240");
        if v2 {
            command.arg("--v2");
        }
        let built = command.output().unwrap();
        assert!(
            built.status.success(),
            "{}",
            String::from_utf8_lossy(&built.stderr)
        );
        let text = String::from_utf8(built.stdout.clone()).unwrap();
        assert_eq!(text.lines().count(), 240);
        let statuses = ["PENDING", "IN_FLIGHT", "SUCCEEDED", "DEAD"];
        for status in statuses
            .iter()
            .chain(if v2 { &["CANCELLED"][..] } else { &[] })
        {
            assert!(
                text.contains(&format!(r#""status":"{status}""#)),
                "{status}"
            );
        }
        assert!(text.contains("…[truncated]"));
        assert!(text.contains(r#""redrive_count":1"#));
        let mut checker = checker();
        for line in text.lines() {
            assert!(round_trip(&mut checker, line.as_bytes()), "{line}");
        }
        let mut roundtrip = std::process::Command::new(example("roundtrip"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = built.stdout.clone();
        input.extend_from_slice(b"{\"envelope_version\":1}\n");
        let mut stdin = roundtrip.stdin.take().unwrap();
        std::thread::spawn(move || std::io::Write::write_all(&mut stdin, &input));
        let back = roundtrip.wait_with_output().unwrap();
        assert_eq!(back.status.code(), Some(1));
        assert_eq!(back.stdout, built.stdout);
        assert!(String::from_utf8_lossy(&back.stderr).starts_with("241: MISSING_FIELD"));
    }
}

/// Every diagnostic of a rejected line carries where it points (issue: positions as data):
/// over the compliance fixtures and `gen`'s defects, the value at a diagnostic's `offset`
/// is the value at its `path` when the line holds that path, and the deepest value on the path
/// when it does not; a JSON-layer error's offset is within the line; the line number is the
/// reader's.
#[test]
fn diagnostics_carry_the_offset_of_what_they_point_at() {
    use rdq_envelope::framing::LineReader;
    use rdq_envelope::ErrorCode;

    let mut input = Vec::new();
    for path in compliance_case_paths() {
        let bytes = std::fs::read(&path).unwrap();
        if bytes.iter().filter(|&&b| b == b'\n').count() <= 1 {
            input.extend_from_slice(bytes.strip_suffix(b"\n").unwrap_or(&bytes));
            input.push(b'\n');
        }
    }
    for version in [1, 2] {
        input.extend(gen_lines(1500, 7, Some(version), 0.3));
    }
    let mut checker = checker();
    let mut reader = LineReader::new(&input[..]);
    let (mut exact, mut deepest, mut json_layer) = (0, 0, 0);
    while let Some(line) = reader.next_line().unwrap() {
        if line.content.is_empty() {
            continue;
        }
        let (number, content) = (line.number, line.content);
        let checked = checker.check_line(&line);
        let whole: Option<serde_json::Value> = serde_json::from_slice(content).ok();
        for d in checked
            .verdict()
            .errors
            .iter()
            .chain(&checked.verdict().warnings)
        {
            assert_eq!(d.line, Some(number), "{d:?}");
            if d.message.ends_with("more diagnostics on this line") {
                assert_eq!(d.offset, None, "{d:?}");
                continue;
            }
            let offset = d
                .offset
                .unwrap_or_else(|| panic!("line {number}: no offset: {d:?}"));
            let offset = usize::try_from(offset).unwrap();
            assert!(offset <= content.len(), "line {number}: {d:?}");
            let Some(whole) = &whole else {
                json_layer += 1;
                continue;
            };
            // serde_json keeps one of a repeated key's values, not always the first.
            if checked.verdict().has_error(ErrorCode::DuplicateKey) || d.path.contains('…') {
                continue;
            }
            // The first value at the offset, read on its own.
            let mut values = serde_json::Deserializer::from_slice(&content[offset..]).into_iter();
            let at: serde_json::Value = values.next().unwrap().unwrap();
            match whole.pointer(&d.path) {
                Some(value) => {
                    assert_eq!(&at, value, "line {number}: {d:?}");
                    exact += 1;
                }
                None => {
                    // The deepest prefix of the path the line holds.
                    let mut prefix = d.path.as_str();
                    let held = loop {
                        prefix = &prefix[..prefix.rfind('/').unwrap()];
                        if let Some(value) = whole.pointer(prefix) {
                            break value;
                        }
                    };
                    assert_eq!(&at, held, "line {number}: {d:?}");
                    deepest += 1;
                }
            }
        }
    }
    eprintln!("offsets: {exact} exact, {deepest} at the deepest value held, {json_layer} in lines that are not JSON");
    assert!(
        exact > 100 && deepest > 10 && json_layer > 10,
        "{exact} {deepest} {json_layer}"
    );
}
