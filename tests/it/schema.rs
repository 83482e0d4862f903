//! The JSON Schemas of `rdq-envelope schema` (`src/schema/`), held by an independent validator
//! (the `jsonschema` crate) to what they promise: each is a valid draft 2020-12 schema; every
//! valid envelope (compliance fixtures, `gen` output) passes the schema of its version; every
//! fixture that breaks a rule a schema can state fails it; and each format pattern agrees with
//! the library's own check of that format. Then golden tests of the subcommand.

use crate::common;

use std::collections::BTreeSet;
use std::path::PathBuf;

use jsonschema::Validator;
use rdq_envelope::envelope::formats;
use rdq_envelope::generate::{GenOptions, Generator};
use rdq_envelope::schema::json_schema;
use rdq_envelope::ErrorCode;
use serde_json::Value;

use common::{run, scratch, stderr, stdout};

const VERSIONS: [u32; 2] = [1, 2];

fn schema(version: u32) -> Value {
    serde_json::from_str(json_schema(version).expect("a supported version"))
        .expect("the schema is JSON")
}

fn validator_of(schema: &Value) -> Validator {
    jsonschema::draft202012::new(schema).unwrap_or_else(|e| panic!("the schema compiles: {e}"))
}

/// The validators of versions 1 and 2, in that order.
fn validators() -> [Validator; 2] {
    VERSIONS.map(|v| validator_of(&schema(v)))
}

/// What the validator says of `value`: `None` when it passes, else its first errors.
fn failures(validator: &Validator, value: &Value) -> Option<String> {
    let errors: Vec<String> = validator
        .iter_errors(value)
        .take(3)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    (!errors.is_empty()).then(|| errors.join("; "))
}

/// `line` with every number that no f64 can hold (`1e400`, a 10,000-digit integer) written as
/// `1e300` of the same sign. serde_json refuses such numbers, which docs/envelope.md#numbers
/// accepts where any value is allowed. To the schemas the two are the same: integers (no fraction)
/// beyond every bound they set (the largest is 2^64-1), so the verdict does not change.
fn finite_numbers(line: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(line.len());
    let (mut i, mut in_string) = (0, false);
    while i < line.len() {
        let b = line[i];
        if in_string {
            out.push(b);
            match b {
                b'\\' => {
                    out.extend(line.get(i + 1));
                    i += 2;
                    continue;
                }
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
        } else if b == b'-' || b.is_ascii_digit() {
            let end = line[i..]
                .iter()
                .position(|c| !matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                .map_or(line.len(), |p| i + p);
            let token = &line[i..end];
            let infinite = std::str::from_utf8(token)
                .ok()
                .and_then(|t| t.parse::<f64>().ok())
                .is_some_and(f64::is_infinite);
            match (infinite, b) {
                (true, b'-') => out.extend_from_slice(b"-1e300"),
                (true, _) => out.extend_from_slice(b"1e300"),
                (false, _) => out.extend_from_slice(token),
            }
            i = end;
        } else {
            in_string = b == b'"';
            out.push(b);
            i += 1;
        }
    }
    out
}

/// How deep `line` nests arrays and objects (the top-level object is depth 1).
fn depth(line: &[u8]) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0, false, false);
    for &b in line {
        match (in_string, b) {
            (true, _) if escaped => escaped = false,
            (true, b'\\') => escaped = true,
            (true, b'"') | (false, b'"') => in_string = !in_string,
            (false, b'[' | b'{') => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            (false, b']' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// The JSON value of a line, when it passes the JSON layer as far as serde_json can tell (not
/// for bytes that are not UTF-8, unpaired surrogates, malformed JSON, or nesting past 128).
fn parse(line: &[u8]) -> Option<Value> {
    use serde::Deserialize;
    // serde_json's own limit stops one level short of docs/envelope.md#nesting-depth's 128.
    if depth(line) > 128 {
        return None;
    }
    let bytes = finite_numbers(line);
    let mut de = serde_json::Deserializer::from_slice(&bytes);
    de.disable_recursion_limit();
    let value = Value::deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(value)
}

/// The supported version a value says it has (by JSON Schema's equality: `1.0` is 1).
fn version_of(value: &Value) -> Option<u32> {
    let v = value.get("envelope_version")?.as_f64()?;
    VERSIONS.into_iter().find(|&n| f64::from(n) == v)
}

/// Whether `value` passes the schema of its version; a value of no supported version must
/// pass some schema.
fn passes(validators: &[Validator; 2], value: &Value) -> Result<(), String> {
    match version_of(value) {
        Some(version) => match failures(&validators[version as usize - 1], value) {
            None => Ok(()),
            Some(why) => Err(format!("v{version} schema: {why}")),
        },
        None => {
            let why: Vec<String> = validators
                .iter()
                .filter_map(|v| failures(v, value))
                .collect();
            if why.len() < validators.len() {
                Ok(())
            } else {
                Err(format!("every schema: {}", why.join(" | ")))
            }
        }
    }
}

#[test]
fn both_schemas_are_valid_draft_2020_12_schemas() {
    for version in VERSIONS {
        let schema = schema(version);
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        if let Err(e) = jsonschema::meta::validate(&schema) {
            panic!(
                "v{version}: not a valid draft 2020-12 schema: {}: {e}",
                e.instance_path()
            );
        }
        // Every pattern compiles, every $ref resolves.
        validator_of(&schema);
        assert_eq!(
            schema["properties"]["envelope_version"]["const"], version,
            "v{version}"
        );
    }
    // The meta-schema check is not vacuous.
    let broken = serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "envelope"
    });
    assert!(!jsonschema::meta::is_valid(&broken));
}

// ---------------------------------------------------------------------------------------------
// The compliance fixtures (tests/compliance/README.md).

struct Case {
    name: String,
    expect: Value,
    line: Vec<u8>,
}

fn cases() -> Vec<Case> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/compliance/cases");
    let mut cases = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("tests/compliance/cases exists") {
        let path = entry.expect("readable entry").path();
        let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".expect.json"))
        else {
            continue;
        };
        let expect: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let line = std::fs::read(path.with_file_name(format!("{name}.line"))).unwrap();
        cases.push(Case {
            name: name.to_owned(),
            expect,
            line,
        });
    }
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    assert!(cases.len() >= 100, "only {} compliance cases", cases.len());
    cases
}

/// Codes of rules a JSON Schema states in full: a fixture that expects one of them fails the
/// schema of its version, unless it is one of [`UNSEEN_BY_A_SCHEMA`].
const SCHEMA_CODES: &[&str] = &[
    "NOT_AN_OBJECT",
    "MISSING_FIELD",
    "WRONG_TYPE",
    "OUT_OF_RANGE",
    "UNSUPPORTED_VERSION",
    "INVALID_ID",
    "INVALID_NAME",
    "INVALID_BASE64",
    "INVALID_CONTENT_TYPE",
    "PAYLOAD_REF_RESERVED",
    "INVALID_PAYLOAD_REF",
    "INVALID_HEADER",
    "UNKNOWN_STATUS",
    "UNKNOWN_OUTCOME",
    "INVALID_TIMESTAMP",
];

/// Codes of rules a schema states only in part (limits in bytes, rules across attempts, status
/// rules that need the last attempt or a count): a fixture with only these (and
/// [`BEYOND_A_SCHEMA`]) codes fails the schema exactly when it is one of [`CAUGHT_IN_PART`].
const PARTLY_SCHEMA_CODES: &[&str] = &["FIELD_TOO_LONG", "BAD_ATTEMPT", "INCONSISTENT_STATE"];

/// Codes of rules beyond any schema: the JSON layer and the size of the line.
const BEYOND_A_SCHEMA: &[&str] = &[
    "LINE_TOO_LONG",
    "INVALID_UTF8",
    "MALFORMED_JSON",
    "DUPLICATE_KEY",
    "NESTING_TOO_DEEP",
    "PAYLOAD_TOO_LARGE",
];

/// Codes of the submit subset (docs/envelope.md#the-submit-subset), another document: the schemas
/// describe envelopes, so the `--submit` fixtures are not run against them.
const SUBMIT_CODES: &[&str] = &["RESERVED_HEADER", "SERVER_ASSIGNED_FIELD"];

/// Fixtures that break a rule of [`SCHEMA_CODES`] in a way a schema cannot see, and so pass it.
const UNSEEN_BY_A_SCHEMA: &[(&str, &str)] = &[
    (
        "invalid_envelope_version_fraction",
        "1.0 equals the const 1",
    ),
    (
        "invalid_wrong_type_attempt_count_one_point_zero",
        "1.0 is a JSON Schema integer",
    ),
    (
        "invalid_v2_wrong_type_duration_ms_fraction",
        "2511.0 is a JSON Schema integer",
    ),
    (
        "invalid_payload_ref_size_fraction",
        "73400320.0 is a JSON Schema integer",
    ),
    (
        "boundary_handler_version_241_bytes_multibyte",
        "241 bytes in fewer than 240 characters",
    ),
];

/// Fixtures with only [`PARTLY_SCHEMA_CODES`] (and [`BEYOND_A_SCHEMA`]) codes that the schema
/// refuses all the same, and the part of the rule it states.
const CAUGHT_IN_PART: &[(&str, &str)] = &[
    (
        "boundary_attempt_count_4294967296",
        "OUT_OF_RANGE is in the schema",
    ),
    ("boundary_attempt_no_0", "OUT_OF_RANGE is in the schema"),
    (
        "boundary_attempt_no_4294967296_last",
        "OUT_OF_RANGE is in the schema",
    ),
    (
        "boundary_message_ascii_dots_marker",
        "over 4096 characters without the marker",
    ),
    (
        "boundary_message_limit_plus_1_no_marker",
        "over 4096 characters without the marker",
    ),
    (
        "boundary_message_truncated_prefix_limit_plus_1",
        "over 4096 + 12 characters",
    ),
    (
        "boundary_stack_limit_plus_1_no_marker",
        "over 65536 characters without the marker",
    ),
    (
        "boundary_stack_truncated_prefix_limit_plus_1",
        "over 65536 + 12 characters",
    ),
    (
        "invalid_bad_attempt_first_attempt_no_2",
        "the first attempt_no is 1",
    ),
    (
        "invalid_bad_attempt_in_flight_not_last",
        "at most one attempt in flight, or none for the status",
    ),
    (
        "invalid_bad_attempt_lease_expired_empty_message",
        "the LEASE_EXPIRED error",
    ),
    (
        "invalid_bad_attempt_lease_expired_no_error",
        "the LEASE_EXPIRED error",
    ),
    (
        "invalid_bad_attempt_lease_expired_with_stack",
        "the LEASE_EXPIRED error",
    ),
    (
        "invalid_bad_attempt_lease_expired_wrong_type",
        "the LEASE_EXPIRED error",
    ),
    (
        "invalid_bad_attempt_outcome_null_but_finished",
        "outcome null exactly when finished_at is",
    ),
    (
        "invalid_bad_attempt_outcome_set_but_in_flight",
        "outcome null exactly when finished_at is",
    ),
    (
        "invalid_bad_attempt_success_not_last",
        "at most one SUCCESS, none for the status",
    ),
    (
        "invalid_bad_attempt_success_not_last_with_error",
        "SUCCESS carries no error",
    ),
    (
        "invalid_bad_attempt_success_with_error",
        "SUCCESS carries no error",
    ),
    (
        "invalid_field_too_long_message_and_stack_in_two_attempts",
        "over the limit in characters without the marker",
    ),
    (
        "invalid_inconsistent_dead_last_success",
        "no SUCCESS in a DEAD history",
    ),
    (
        "invalid_inconsistent_dead_lease_set",
        "DEAD: lease_expires_at null",
    ),
    (
        "invalid_inconsistent_in_flight_last_finished",
        "IN_FLIGHT: some attempt in flight",
    ),
    (
        "invalid_inconsistent_in_flight_lease_null",
        "IN_FLIGHT: lease_expires_at set",
    ),
    (
        "invalid_inconsistent_pending_attempt_in_flight",
        "PENDING: no attempt in flight",
    ),
    (
        "invalid_inconsistent_pending_lease_set",
        "PENDING: lease_expires_at null",
    ),
    (
        "invalid_inconsistent_pending_next_attempt_null",
        "PENDING: next_attempt_at set",
    ),
    (
        "invalid_inconsistent_succeeded_every_column",
        "SUCCEEDED: both timestamps null",
    ),
    (
        "invalid_inconsistent_succeeded_last_failed",
        "SUCCEEDED: some attempt is SUCCESS",
    ),
    (
        "invalid_inconsistent_succeeded_next_attempt_set",
        "SUCCEEDED: next_attempt_at null",
    ),
    (
        "invalid_inconsistent_v2_cancelled_attempt_in_flight",
        "CANCELLED: no attempt in flight",
    ),
    (
        "invalid_inconsistent_v2_cancelled_lease_set",
        "CANCELLED: lease_expires_at null",
    ),
    (
        "invalid_v2_bad_attempt_duration_huge",
        "longer than any span of timestamps",
    ),
    (
        "invalid_v2_bad_attempt_duration_integer_when_in_flight",
        "duration_ms null exactly when in flight",
    ),
    (
        "invalid_v2_bad_attempt_duration_negative",
        "duration_ms is not negative",
    ),
    (
        "invalid_v2_bad_attempt_duration_null_when_finished",
        "duration_ms null exactly when in flight",
    ),
    (
        "invalid_v2_bad_attempt_rules_hold",
        "the LEASE_EXPIRED error",
    ),
];

fn codes(list: &Value) -> BTreeSet<String> {
    list.as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|d| d["code"].as_str().expect("a code").to_owned())
        .collect()
}

/// Every fixture but the submit subset's, each with the verdict the lists above give it.
#[test]
fn compliance_fixtures_pass_or_fail_the_schema_as_the_rules_say() {
    let validators = validators();
    let cases = cases();
    let names: BTreeSet<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    for (name, _) in UNSEEN_BY_A_SCHEMA.iter().chain(CAUGHT_IN_PART) {
        assert!(names.contains(name), "no fixture {name}");
    }
    let known: BTreeSet<&str> = [
        SCHEMA_CODES,
        PARTLY_SCHEMA_CODES,
        BEYOND_A_SCHEMA,
        SUBMIT_CODES,
    ]
    .concat()
    .into_iter()
    .collect();
    let unseen: BTreeSet<&str> = UNSEEN_BY_A_SCHEMA.iter().map(|(n, _)| *n).collect();
    let caught: BTreeSet<&str> = CAUGHT_IN_PART.iter().map(|(n, _)| *n).collect();

    let (mut valid_checked, mut failed_checked, mut passed_checked) = (0, 0, 0);
    let mut problems = Vec::new();
    for case in &cases {
        let options = &case.expect["options"];
        if options["submit"] == true {
            continue;
        }
        let mut expected = codes(&case.expect["errors"]);
        for code in &expected {
            assert!(
                known.contains(code.as_str()),
                "{}: {code} is in no list of this test: decide whether a schema can state it",
                case.name
            );
        }
        let Some(value) = parse(&case.line) else {
            assert!(
                expected
                    .iter()
                    .any(|c| BEYOND_A_SCHEMA.contains(&c.as_str())),
                "{}: serde_json cannot read a line the JSON layer accepts",
                case.name
            );
            continue;
        };
        // `--require-version` refuses a valid envelope of the other version: the option's
        // doing, not the envelope's.
        if !options["require_version"].is_null() && version_of(&value).is_some() {
            expected.remove("UNSUPPORTED_VERSION");
        }
        let must_pass = if expected.is_empty() {
            valid_checked += 1;
            true
        } else if unseen.contains(case.name.as_str()) {
            true
        } else if expected.iter().any(|c| SCHEMA_CODES.contains(&c.as_str())) {
            false
        } else if expected
            .iter()
            .any(|c| BEYOND_A_SCHEMA.contains(&c.as_str()))
        {
            // The JSON layer (and a line over every size limit) ends the checks
            // (docs/envelope.md#diagnostics): the line may break other rules that no one reported,
            // and a parser that keeps one of two duplicate keys sees another envelope. Nothing to
            // compare.
            continue;
        } else {
            !caught.contains(case.name.as_str())
        };
        match (must_pass, passes(&validators, &value)) {
            (true, Ok(())) => passed_checked += 1,
            (false, Err(_)) => failed_checked += 1,
            (true, Err(why)) => problems.push(format!(
                "{} ({expected:?}) must pass the schema: {why}",
                case.name
            )),
            (false, Ok(())) => problems.push(format!(
                "{} ({expected:?}) must fail the schema, and passes",
                case.name
            )),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(valid_checked >= 50, "only {valid_checked} valid fixtures");
    assert!(
        failed_checked >= 100,
        "only {failed_checked} refused fixtures"
    );
    assert!(passed_checked > valid_checked, "the unseen cases were run");
}

#[test]
fn every_valid_fixture_of_each_version_passes_its_schema() {
    // The heart of the promise, said on its own: a valid envelope is never refused.
    let validators = validators();
    let mut seen = [0; 2];
    for case in cases() {
        if case.expect["valid"] != true || case.expect["options"]["submit"] == true {
            continue;
        }
        let value = parse(&case.line)
            .unwrap_or_else(|| panic!("{}: a valid line is readable JSON", case.name));
        let version = version_of(&value).expect("a valid line has a supported version");
        if let Some(why) = failures(&validators[version as usize - 1], &value) {
            panic!("{}: refused by the v{version} schema: {why}", case.name);
        }
        seen[version as usize - 1] += 1;
    }
    assert!(
        seen.iter().all(|&n| n >= 10),
        "valid fixtures per version: {seen:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// `gen` output.

#[test]
fn every_valid_gen_line_of_both_versions_passes_and_stated_defects_fail() {
    let validators = validators();
    for version in VERSIONS {
        let validator = &validators[version as usize - 1];
        // Valid lines only.
        let mut generator = Generator::new({
            let mut o = GenOptions::default();
            o.seed = 7;
            o.version = version;
            o.invalid_rate = 0.0;
            o
        });
        let mut line = Vec::new();
        for n in 0..400 {
            line.clear();
            assert_eq!(generator.next_line(&mut line), None);
            let value = parse(&line).unwrap_or_else(|| panic!("v{version} line {n}: readable"));
            if let Some(why) = failures(validator, &value) {
                panic!(
                    "v{version} gen line {n} refused: {why}\n{}",
                    String::from_utf8_lossy(&line)
                );
            }
        }
        // Half the lines with one defect each: the valid ones still pass, and each defect a
        // schema can state is refused.
        let mut generator = Generator::new({
            let mut o = GenOptions::default();
            o.seed = 11;
            o.version = version;
            o.invalid_rate = 0.5;
            o
        });
        let mut refused = 0;
        for n in 0..400 {
            line.clear();
            let defect = generator.next_line(&mut line);
            let Some(value) = parse(&line) else {
                assert!(
                    matches!(
                        defect,
                        Some(
                            ErrorCode::MalformedJson
                                | ErrorCode::InvalidUtf8
                                | ErrorCode::NestingTooDeep
                        )
                    ),
                    "v{version} line {n}: {defect:?} unreadable"
                );
                continue;
            };
            let must_pass = match defect {
                None => true,
                // A parser keeps one of the two statuses: the schema sees another envelope.
                Some(ErrorCode::DuplicateKey) => continue,
                // attempt_count against the number of attempts is a count.
                Some(ErrorCode::InconsistentState) => true,
                // An HTML page of 5,000 ASCII characters; a first attempt_no of 2.
                Some(ErrorCode::FieldTooLong | ErrorCode::BadAttempt) => false,
                Some(code) => {
                    assert!(SCHEMA_CODES.contains(&code.as_str()), "{code}");
                    false
                }
            };
            let verdict = passes(&validators, &value);
            assert_eq!(
                verdict.is_ok(),
                must_pass,
                "v{version} line {n} with defect {defect:?}: {verdict:?}\n{}",
                String::from_utf8_lossy(&line)
            );
            refused += usize::from(!must_pass);
        }
        assert!(refused >= 100, "v{version}: only {refused} defects refused");
    }
}

// ---------------------------------------------------------------------------------------------
// Each format pattern against the library's own check of that format.

/// A validator of one definition of the schema (`#/$defs/NAME`), or of a property's schema.
fn definition(version: u32, pointer: &str) -> Validator {
    let full = schema(version);
    let mut part = full
        .pointer(pointer)
        .unwrap_or_else(|| panic!("{pointer}"))
        .clone();
    let part_map = part.as_object_mut().expect("a schema object");
    part_map.insert("$schema".into(), full["$schema"].clone());
    part_map.insert("$defs".into(), full["$defs"].clone());
    validator_of(&part)
}

/// A small deterministic generator of test strings (xorshift64*).
struct Strings(u64);

impl Strings {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A string of `len` characters drawn from `alphabet`.
    fn string(&mut self, alphabet: &[char], len: usize) -> String {
        (0..len)
            .map(|_| alphabet[self.below(alphabet.len())])
            .collect()
    }
}

/// Checks that `validator` and `oracle` agree on every string of `samples`.
fn agree(what: &str, validator: &Validator, oracle: impl Fn(&str) -> bool, samples: &[String]) {
    let mut disagreements = Vec::new();
    for s in samples {
        let (schema, rule) = (validator.is_valid(&Value::from(s.as_str())), oracle(s));
        if schema != rule {
            disagreements.push(format!("{s:?}: schema {schema}, rule {rule}"));
        }
    }
    assert!(
        disagreements.is_empty(),
        "{what}: {} of {} disagree:\n{}",
        disagreements.len(),
        samples.len(),
        disagreements[..disagreements.len().min(20)].join("\n")
    );
}

#[test]
fn the_timestamp_pattern_is_the_strict_profile_with_real_dates() {
    let validator = definition(1, "/$defs/timestamp");
    let mut samples = Vec::new();
    // 29 February of every year: the leap-year rule in full.
    for year in 0..10_000 {
        samples.push(format!("{year:04}-02-29T12:00:00.000Z"));
    }
    // Every month and day number in a leap, a common and a century year.
    for year in [2024, 2023, 1900, 2000, 0, 9999] {
        for month in 0..=13 {
            for day in 0..=32 {
                samples.push(format!("{year:04}-{month:02}-{day:02}T00:00:00.000Z"));
            }
        }
    }
    for (h, m, s) in [
        (0, 0, 0),
        (23, 59, 59),
        (24, 0, 0),
        (23, 60, 0),
        (23, 59, 60),
    ] {
        samples.push(format!("2024-05-01T{h:02}:{m:02}:{s:02}.999Z"));
    }
    for bad in [
        "2024-05-01t00:00:00.000Z",
        "2024-05-01T00:00:00.000z",
        "2024-05-01T00:00:00.00Z",
        "2024-05-01T00:00:00.0000Z",
        "2024-05-01T00:00:00Z",
        "2024-05-01T00:00:00.000+00:00",
        "2024-05-01 00:00:00.000Z",
        "+024-05-01T00:00:00.000Z",
        "2024-5-01T00:00:00.000Z",
        "２024-05-01T00:00:00.000Z",
        "2024-05-01T00:00:00.000Z\n",
        " 2024-05-01T00:00:00.000Z",
        "",
    ] {
        samples.push(bad.to_owned());
    }
    agree(
        "timestamp",
        &validator,
        |s| formats::parse_timestamp(s).is_some(),
        &samples,
    );
}

#[test]
fn the_id_name_and_version_patterns_agree_with_the_rules() {
    let mut r = Strings(0x5EED);
    let ulid_chars: Vec<char> =
        "0123456789ABCDEFGHJKMNPQRSTVWXYZ0123456789ABCDEFGHJKMNPQRSTVWXYZILOUalz-"
            .chars()
            .collect();
    let samples: Vec<String> = (0..3000)
        .map(|i| r.string(&ulid_chars, [26, 26, 26, 25, 27][i % 5]))
        .collect();
    agree(
        "ulid",
        &definition(1, "/$defs/ulid"),
        |s| formats::ulid_time_ms(s).is_some(),
        &samples,
    );

    let name_chars: Vec<char> = "az09._-aqzAZ é/".chars().collect();
    let mut samples: Vec<String> = (0..3000).map(|i| r.string(&name_chars, i % 6)).collect();
    samples.extend(["a".repeat(240), "a".repeat(241), "é".repeat(100)]);
    agree(
        "name",
        &definition(1, "/$defs/name"),
        formats::is_name,
        &samples,
    );

    // Up to 60 characters, at most 240 bytes: here characters and bytes agree on the limit.
    let version_chars: Vec<char> = "a1. -\u{0}\u{1f}\u{7f}\u{80}\u{9f}\u{a0}é\u{200b}😀\t"
        .chars()
        .collect();
    let samples: Vec<String> = (0..3000)
        .map(|i| r.string(&version_chars, i % 61))
        .collect();
    for version in VERSIONS {
        agree(
            "handler_version",
            &definition(version, "/properties/handler_version"),
            formats::is_handler_version,
            &samples,
        );
    }
    // Beyond, the schema counts characters: 240 two-byte characters pass it, and not the rule.
    let wide = "é".repeat(240);
    assert!(definition(1, "/properties/handler_version").is_valid(&Value::from(wide.as_str())));
    assert!(!formats::is_handler_version(&wide));
}

#[test]
fn the_base64_pattern_is_canonical_standard_base64() {
    let mut r = Strings(0xBA5E);
    let alphabet: Vec<char> = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        .chars()
        .collect();
    let mut noisy = alphabet.clone();
    noisy.extend("====-_ \n".chars());
    let mut samples: Vec<String> = (0..4000).map(|i| r.string(&noisy, i % 13)).collect();
    // Every last character before one and two `=`: the unused bits, all 64 ways.
    for &c in &alphabet {
        samples.push(format!("QU{c}="));
        samples.push(format!("Q{c}=="));
        samples.push(format!("AAAAQU{c}="));
    }
    agree(
        "base64",
        &definition(1, "/$defs/base64"),
        |s| base64_simd::STANDARD.check(s.as_bytes()).is_ok(),
        &samples,
    );
}

#[test]
fn the_media_type_and_uri_patterns_agree_with_the_rules() {
    let mut r = Strings(0xC0FFEE);
    let media_chars: Vec<char> = "ab/;= \t\"\\-é!~1/;=\"".chars().collect();
    let mut samples: Vec<String> = (0..6000).map(|i| r.string(&media_chars, i % 16)).collect();
    for s in [
        "application/json",
        "application/json; charset=utf-8",
        "text/plain;charset=\"a\\\"b\"",
        "text/plain; charset=\"\"",
        "text/plain; a=\"é\\é\"",
        "text/plain;",
        "text/plain ",
        "text/plain; a = b",
        "téxt/plain",
        "",
    ] {
        samples.push(s.to_owned());
    }
    samples.push(format!("a/{}", "b".repeat(253)));
    samples.push(format!("a/{}", "b".repeat(254)));
    for version in VERSIONS {
        agree(
            "media type",
            &definition(version, "/$defs/mediaType"),
            formats::is_media_type,
            &samples,
        );
    }

    let uri_chars: Vec<char> = "s3:/a%F9gZ-._~?#[]@!$&'()*+,;= é\"<".chars().collect();
    let mut samples: Vec<String> = (0..6000).map(|i| r.string(&uri_chars, i % 12)).collect();
    samples.extend(
        [
            "s3://bucket/key%20x?v=1#frag",
            "s3:",
            "1s3:x",
            ":x",
            "s3://a b",
            "s3://a%2",
            "s3://a%zz",
        ]
        .map(str::to_owned),
    );
    agree(
        "payload_ref.uri",
        &definition(2, "/$defs/payloadRef/properties/uri"),
        formats::is_payload_uri,
        &samples,
    );
}

#[test]
fn the_truncation_pattern_never_refuses_what_the_rule_accepts() {
    const MARKER: &str = formats::TRUNCATION_MARKER;
    for (version, pointer, limit) in [
        (1, "/$defs/error/properties/message", 4096),
        (2, "/$defs/error/properties/message", 4096),
        (1, "/$defs/error/properties/stack/anyOf/1", 65_536),
    ] {
        let validator = definition(version, pointer);
        for unit in ["a", "é", "€", "😀"] {
            for chars in [
                limit / 4 - 2,
                limit / 3 - 2,
                limit / 2 - 2,
                limit - 14,
                limit - 4,
            ] {
                for extra in 0..24 {
                    let kept = unit.repeat(chars + extra);
                    for s in [kept.clone(), format!("{kept}{MARKER}")] {
                        let (schema, rule) = (
                            validator.is_valid(&Value::from(s.as_str())),
                            formats::within_limit(&s, limit),
                        );
                        assert!(
                            schema || !rule,
                            "{pointer}: {} characters, {} bytes: the rule accepts it, the schema refuses it",
                            s.chars().count(),
                            s.len()
                        );
                        // In ASCII characters are bytes: the schema refuses every value over the
                        // limit without the marker, as the rule does.
                        if unit == "a" && !s.ends_with(MARKER) {
                            assert_eq!(schema, rule, "{pointer}: {} ASCII characters", s.len());
                        }
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The subcommand.

#[test]
fn schema_prints_the_newest_version_by_default() {
    let default = run(&["schema"], b"");
    assert_eq!(default.status.code(), Some(0), "{}", stderr(&default));
    assert_eq!(stderr(&default), "");
    let explicit = run(&["schema", "--version", "2"], b"");
    assert_eq!(explicit.status.code(), Some(0), "{}", stderr(&explicit));
    assert_eq!(stdout(&default), stdout(&explicit));
    assert_eq!(stdout(&default), json_schema(2).unwrap());
    let printed: Value = serde_json::from_str(&stdout(&default)).expect("valid JSON");
    assert_eq!(printed["properties"]["envelope_version"]["const"], 2);

    let v1 = run(&["schema", "--version", "1"], b"");
    assert_eq!(v1.status.code(), Some(0), "{}", stderr(&v1));
    assert_ne!(stdout(&v1), stdout(&default));
    assert_eq!(stdout(&v1), json_schema(1).unwrap());
    let printed: Value = serde_json::from_str(&stdout(&v1)).expect("valid JSON");
    assert_eq!(printed["properties"]["envelope_version"]["const"], 1);
}

#[test]
fn an_unsupported_version_is_a_usage_error_naming_the_supported_ones() {
    let dir = scratch("schema-bad-version");
    let path = dir.join("schema.json");
    for version in ["3", "0"] {
        let out = run(
            &["schema", "--version", version, "-o", path.to_str().unwrap()],
            b"",
        );
        assert_eq!(out.status.code(), Some(2), "--version {version}");
        assert!(out.stdout.is_empty());
        let message = stderr(&out);
        assert!(
            message.contains(&format!("--version {version}")) && message.contains("1 and 2"),
            "{message}"
        );
        assert!(!path.exists(), "a usage error writes no output");
    }
    for bad in [&["schema", "--version", "two"][..], &["schema", "--bogus"]] {
        let out = run(bad, b"");
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(!stderr(&out).is_empty(), "{bad:?}");
    }
}

#[test]
fn schema_writes_o_atomically() {
    let dir = scratch("schema-output");
    let path = dir.join("envelope-v1.schema.json");
    std::fs::write(&path, "an older file").unwrap();
    let out = run(
        &["schema", "--version", "1", "-o", path.to_str().unwrap()],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        json_schema(1).unwrap()
    );
    // No temporary file is left beside it.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
}

#[test]
fn schema_into_a_closed_pipe_ends_quietly() {
    // The reading end is closed before the binary starts: its first write meets EPIPE.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = common::bin()
        .arg("schema")
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
