//! The round-trip fixtures: valid envelopes, each there to find one way a store loses data.
//!
//! Every fixture is a valid envelope in the canonical form (docs/library.md#the-canonical-form),
//! so a plugin that stores members typed and writes them back canonically can pass `--exact`;
//! unknown members and `detail` keep the spelling they are written with here (escapes, number
//! spellings, key order), which is what the canonical writer keeps too. The list, with each
//! fixture's purpose, is docs/fixtures.md; a unit test holds the two to the same names in the
//! same order.
//!
//! The groups, in order: the versions and statuses, the optional members, unknown members,
//! nesting, numbers, strings, payloads, the text limits, headers, times, attempts, names and
//! content types, version 2's claim check, and what stores are known to mangle. Ids are
//! `01HWT0D7G0` (2024-05-01T12:00:00.000Z) followed by the fixture's number in 16 decimal
//! digits, so that a report's id names its fixture.
//!
//! What no valid envelope holds, so no fixture does: an unpaired surrogate escape (`\ud800`
//! alone is `INVALID_UTF8` everywhere, unknown members included); `attempt_count` or
//! `attempt_no` above the number of attempts (4294967295 would need as many attempt records);
//! white space between tokens and escapes other than the canonical ones in a known member (the
//! canonical writer rewrites them, so they cannot be canonical); a known member's integer as
//! `-0` (written `0`).

mod build;
#[cfg(test)]
mod tests;

use build::{string, unknown, Attempt, Draft, Error, Member, Origin, T0};

/// One fixture: a valid envelope (one line of canonical JSON, no terminator) and why it is in
/// the set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fixture {
    /// A short name, unique in the set (`[a-z0-9_]`): what the fixture tests.
    pub name: &'static str,
    /// The loss it is there to find, in a sentence a plugin author reads when it fails.
    pub purpose: &'static str,
    /// The envelope's `envelope_version`: 1 or 2.
    pub version: u32,
    /// The envelope: one JSON object, no line terminator. Its `id` is unique in the set.
    pub line: Vec<u8>,
}

/// The fixture set, in a fixed order (the same on every run and machine).
///
/// ```
/// use rdq_envelope::compliance::fixtures;
/// use rdq_envelope::envelope::Envelope;
///
/// let set = fixtures();
/// let first = &set[0];
/// let envelope = Envelope::from_json(&first.line)?;
/// assert_eq!(envelope.to_json().as_bytes(), &first.line[..]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn fixtures() -> Vec<Fixture> {
    let mut set = Set::default();
    statuses(&mut set);
    optional_members(&mut set);
    unknown_members(&mut set);
    nesting(&mut set);
    numbers(&mut set);
    strings(&mut set);
    payloads(&mut set);
    text_limits(&mut set);
    headers(&mut set);
    times(&mut set);
    attempts(&mut set);
    names_and_content_types(&mut set);
    claim_check(&mut set);
    mangling(&mut set);
    set.fixtures
}

/// The fixtures made so far; each new one gets the next id.
#[derive(Default)]
struct Set {
    fixtures: Vec<Fixture>,
}

impl Set {
    fn add(&mut self, name: &'static str, purpose: &'static str, draft: &Draft) {
        let id = format!("01HWT0D7G0{:016}", self.fixtures.len() + 1);
        self.fixtures.push(Fixture {
            name,
            purpose,
            version: draft.version,
            line: draft.to_json(&id).into_bytes(),
        });
    }
}

/// Every status of each version, every outcome, an attempt in flight, and the empty history.
fn statuses(set: &mut Set) {
    set.add(
        "v1_pending_new",
        "A version 1 envelope just submitted: the members every store must keep, and an empty `attempts` array that must not come back as null or be dropped.",
        &Draft::pending(1),
    );
    set.add(
        "v2_pending_new",
        "A version 2 envelope just submitted: `origin` as `{}` and an empty `attempts` array must come back, not be dropped or turned into null.",
        &Draft::pending(2),
    );
    set.add(
        "v1_in_flight",
        "An attempt in flight: `finished_at` and `outcome` null, `lease_expires_at` set; a store that drops null members or fills them in loses the state.",
        &Draft::in_flight(1),
    );
    set.add(
        "v2_in_flight",
        "A version 2 attempt in flight: `duration_ms` is null, not 0 and not absent.",
        &Draft::in_flight(2),
    );
    set.add(
        "v1_in_flight_next_attempt_set",
        "`IN_FLIGHT` with `next_attempt_at` still set beside the lease: a store that derives one time column from the other loses it.",
        &Draft {
            next_attempt_ms: Some(T0 + 90_000),
            ..Draft::in_flight(1)
        },
    );
    set.add(
        "v1_succeeded",
        "`SUCCEEDED` with a `SUCCESS` attempt and no `error` member: both times null.",
        &Draft::succeeded(1),
    );
    set.add(
        "v2_succeeded",
        "A finished version 2 attempt: `duration_ms` is `finished_at - started_at`.",
        &Draft::succeeded(2),
    );
    set.add(
        "v1_pending_retryable_failure",
        "`PENDING` again after a `RETRYABLE_FAILURE`: the status, the outcome and the error survive together.",
        &Draft::retrying(1, Error::new("TimeoutError", "SMTP server did not answer in 30 s")),
    );
    set.add(
        "v2_pending_retryable_failure",
        "A version 2 retry: the failed attempt keeps its error and `duration_ms`.",
        &Draft::retrying(
            2,
            Error::new("TimeoutError", "SMTP server did not answer in 30 s"),
        ),
    );
    set.add(
        "v1_dead_permanent_failure",
        "`DEAD` after a `PERMANENT_FAILURE`.",
        &Draft::dead(1, Error::new("ValueError", "no such user: 42")),
    );
    set.add(
        "v2_dead_permanent_failure",
        "Version 2 `DEAD` after a `PERMANENT_FAILURE`.",
        &Draft::dead(2, Error::new("ValueError", "no such user: 42")),
    );
    let mut dead_lease = Draft::dead(1, Error::lease_expired());
    dead_lease.attempts[0].outcome = Some("LEASE_EXPIRED");
    set.add(
        "v1_dead_lease_expired",
        "`DEAD` after `LEASE_EXPIRED`, its error `rdq.LeaseExpired` with no stack.",
        &dead_lease,
    );
    let mut dead_lease_v2 = dead_lease.clone();
    dead_lease_v2.version = 2;
    set.add(
        "v2_dead_lease_expired",
        "Version 2 `DEAD` after `LEASE_EXPIRED`.",
        &dead_lease_v2,
    );
    let every_outcome = |version| Draft {
        status: "SUCCEEDED",
        attempt_count: 4,
        next_attempt_ms: None,
        attempts: vec![
            Attempt::finished(1, T0 + 1_000, T0 + 2_000, "RETRYABLE_FAILURE")
                .error(Error::new("ConnectionError", "connection reset by peer")),
            Attempt::finished(2, T0 + 10_000, T0 + 40_000, "LEASE_EXPIRED")
                .error(Error::lease_expired().null_stack()),
            Attempt::finished(3, T0 + 50_000, T0 + 50_001, "RETRYABLE_FAILURE")
                .error(Error::new("TimeoutError", "read timed out").stack("at send (mail.py:10)")),
            Attempt::finished(4, T0 + 60_000, T0 + 60_999, "SUCCESS").null_error(),
        ],
        ..Draft::pending(version)
    };
    set.add(
        "v1_every_outcome",
        "One history with every outcome (`RETRYABLE_FAILURE`, `LEASE_EXPIRED`, `SUCCESS`) in order: a store that reorders attempts or keeps only the last loses them.",
        &every_outcome(1),
    );
    set.add(
        "v2_every_outcome",
        "Version 2's history with every outcome, each `duration_ms` derived (1000, 30000, 1, 999).",
        &every_outcome(2),
    );
    set.add(
        "v2_cancelled_new",
        "`CANCELLED` (version 2 only) with no attempts.",
        &Draft {
            status: "CANCELLED",
            next_attempt_ms: None,
            ..Draft::pending(2)
        },
    );
    set.add(
        "v2_cancelled_after_success",
        "`CANCELLED` whose last attempt is `SUCCESS`: a store that derives the status from the last outcome turns it into `SUCCEEDED`.",
        &Draft {
            status: "CANCELLED",
            ..Draft::succeeded(2)
        },
    );
    set.add(
        "v2_cancelled_after_failure",
        "`CANCELLED` after a `RETRYABLE_FAILURE`.",
        &Draft {
            status: "CANCELLED",
            next_attempt_ms: None,
            ..Draft::retrying(2, Error::new("Cancelled", "cancelled by an operator"))
        },
    );
}

/// Each optional member absent, `null` and set.
fn optional_members(set: &mut Set) {
    set.add(
        "v1_handler_version_null",
        "`handler_version` null: not absent, not the string \"null\", not \"\".",
        &Draft {
            handler_version: Member::Null,
            ..Draft::pending(1)
        },
    );
    set.add(
        "v1_handler_version_set",
        "`handler_version` set.",
        &Draft {
            handler_version: Member::Set(string("2.3.1")),
            ..Draft::pending(1)
        },
    );
    set.add(
        "v1_handler_version_string_null",
        "`handler_version` is the string \"null\": a store that reads text \"null\" as SQL NULL (or writes null as \"null\") confuses the two.",
        &Draft {
            handler_version: Member::Set(string("null")),
            ..Draft::pending(1)
        },
    );
    set.add(
        "v2_handler_version_null",
        "Version 2 `handler_version` null.",
        &Draft {
            handler_version: Member::Null,
            ..Draft::pending(2)
        },
    );
    set.add(
        "v2_handler_version_set",
        "Version 2 `handler_version` set, with non-ASCII and an emoji.",
        &Draft {
            handler_version: Member::Set(string("v2 (été 😀)")),
            ..Draft::pending(2)
        },
    );
    set.add(
        "v1_payload_ref_null",
        "Version 1's reserved `payload_ref` present as null: it must come back present and null, not dropped.",
        &Draft {
            payload_ref: Member::Null,
            ..Draft::pending(1)
        },
    );
    set.add(
        "v2_payload_ref_null",
        "Version 2 `payload_ref` null beside a payload.",
        &Draft {
            payload_ref: Member::Null,
            ..Draft::pending(2)
        },
    );
    let mut error_null = Draft::retrying(1, Error::new("x", "y"));
    error_null.attempts[0].error = Some(None);
    set.add(
        "v1_attempt_error_null",
        "An attempt's `error` null, not absent.",
        &error_null,
    );
    let mut error_absent = Draft::retrying(1, Error::new("x", "y"));
    error_absent.attempts[0].error = None;
    set.add(
        "v1_attempt_error_absent",
        "A failed attempt with no `error` member: it must not come back as null or `{}`.",
        &error_absent,
    );
    set.add(
        "v1_error_stack_null",
        "An error's `stack` null, not absent and not \"\".",
        &Draft::dead(1, Error::new("ValueError", "bad").null_stack()),
    );
    set.add(
        "v1_error_stack_set",
        "An error's `stack` set, several lines with tabs.",
        &Draft::dead(
            1,
            Error::new("ValueError", "bad").stack(
                "Traceback (most recent call last):\n\tFile \"mail.py\", line 10, in send\nValueError: bad",
            ),
        ),
    );
    set.add(
        "v1_error_stack_empty",
        "An error's `stack` the empty string: not null, not absent.",
        &Draft::dead(1, Error::new("ValueError", "bad").stack("")),
    );
    set.add(
        "v1_error_message_empty",
        "An error's `message` the empty string (required, may be empty): not null.",
        &Draft::dead(1, Error::new("ValueError", "")),
    );
    let details: [(&'static str, &'static str, &str); 10] = [
        (
            "v1_detail_null",
            "`detail` null: present, not dropped (absent and null differ).",
            "null",
        ),
        (
            "v1_detail_true",
            "`detail` true: not 1, not \"true\".",
            "true",
        ),
        (
            "v1_detail_false",
            "`detail` false: not 0, not null, not dropped.",
            "false",
        ),
        (
            "v1_detail_integer",
            "`detail` a bare integer.",
            "429",
        ),
        (
            "v1_detail_string",
            "`detail` a string: not parsed as JSON, not unquoted.",
            "\"{\\\"looks\\\":\\\"like json\\\"}\"",
        ),
        (
            "v1_detail_empty_string",
            "`detail` the empty string: not null.",
            "\"\"",
        ),
        (
            "v1_detail_array",
            "`detail` an array of mixed types, its order kept.",
            "[3,\"two\",1.0,null,true,{\"k\":[]}]",
        ),
        (
            "v1_detail_object",
            "`detail` an object whose keys are not sorted: their order must be kept under `--exact`.",
            "{\"status_code\":503,\"retry_after\":\"120\",\"body\":{\"z\":1,\"a\":2}}",
        ),
        (
            "v1_detail_empty_array",
            "`detail` an empty array: not null, not `{}`.",
            "[]",
        ),
        (
            "v1_detail_empty_object",
            "`detail` an empty object: not null, not `[]`.",
            "{}",
        ),
    ];
    for (name, purpose, detail) in details {
        set.add(
            name,
            purpose,
            &Draft::dead(
                1,
                Error::new("HttpError", "503 Service Unavailable").detail(detail),
            ),
        );
    }
    set.add(
        "v2_detail_and_stack",
        "Version 2: an error with `detail`, `stack` and every member set.",
        &Draft::dead(
            2,
            Error::new("HttpError", "503 Service Unavailable")
                .detail("{\"status\":503}")
                .stack("at fetch (http.js:1:1)"),
        ),
    );
    let origins: [(&'static str, &'static str, Origin); 4] = [
        (
            "v2_origin_source_only",
            "`origin` with `source` only: `submitted_by` must stay absent, not become null or \"\".",
            Origin {
                source: Some("billing-api".to_owned()),
                ..Origin::default()
            },
        ),
        (
            "v2_origin_submitted_by_only",
            "`origin` with `submitted_by` only.",
            Origin {
                submitted_by: Some("user:alice@example.com".to_owned()),
                ..Origin::default()
            },
        ),
        (
            "v2_origin_both",
            "`origin` with both members, non-ASCII in them.",
            Origin {
                source: Some("service-é".to_owned()),
                submitted_by: Some("José Ñúñez 😀".to_owned()),
                ..Origin::default()
            },
        ),
        (
            "v2_origin_empty_strings",
            "`origin` members set to \"\": not null, not absent.",
            Origin {
                source: Some(String::new()),
                submitted_by: Some(String::new()),
                ..Origin::default()
            },
        ),
    ];
    for (name, purpose, origin) in origins {
        set.add(
            name,
            purpose,
            &Draft {
                origin,
                ..Draft::pending(2)
            },
        );
    }
}

/// Values of every JSON type, as unknown members' text.
const EVERY_TYPE: [(&str, &str); 13] = [
    ("u_null", "null"),
    ("u_true", "true"),
    ("u_false", "false"),
    ("u_zero", "0"),
    ("u_negative", "-17"),
    ("u_fraction", "2.5"),
    ("u_string", "\"text\""),
    ("u_empty_string", "\"\""),
    ("u_empty_array", "[]"),
    ("u_empty_object", "{}"),
    (
        "u_array",
        "[1,\"a\",null,true,false,[],{},[[2]],{\"k\":{\"k\":[]}}]",
    ),
    (
        "u_object",
        "{\"z\":null,\"a\":[false],\"m\":{\"b\":1,\"a\":2},\"\":\"\"}",
    ),
    ("u_nested_empty", "[[],{},[{}],{\"a\":[]}]"),
];

/// Unknown members at every level, of every JSON type, and named like known members of
/// another level.
fn unknown_members(set: &mut Set) {
    let every = unknown(&EVERY_TYPE);
    set.add(
        "v1_unknown_top_every_type",
        "Unknown members at the top level, beside `headers` and the known members, of every JSON type (null, booleans, numbers, strings, empty and nested arrays and objects).",
        &Draft {
            unknown: every.clone(),
            ..Draft::pending(1)
        },
    );
    set.add(
        "v2_unknown_top_every_type",
        "Version 2's top level with unknown members of every JSON type.",
        &Draft {
            unknown: every.clone(),
            ..Draft::pending(2)
        },
    );
    let mut in_attempt = Draft::retrying(1, Error::new("TimeoutError", "read timed out"));
    in_attempt.attempts[0].unknown = every.clone();
    set.add(
        "v1_unknown_attempt_every_type",
        "Unknown members inside an attempt record, every JSON type: a store with one column per attempt member drops them.",
        &in_attempt,
    );
    let mut in_attempt_v2 = in_attempt.clone();
    in_attempt_v2.version = 2;
    set.add(
        "v2_unknown_attempt_every_type",
        "Unknown members inside a version 2 attempt, after `duration_ms`.",
        &in_attempt_v2,
    );
    let mut in_flight = Draft::in_flight(2);
    in_flight.attempts[0].unknown = unknown(&[("worker", "\"w-7\""), ("pid", "4242")]);
    set.add(
        "v2_unknown_attempt_in_flight",
        "Unknown members inside an attempt in flight: kept while the known members are null.",
        &in_flight,
    );
    let mut in_error = Error::new("TimeoutError", "read timed out");
    in_error.unknown = every.clone();
    set.add(
        "v1_unknown_error_every_type",
        "Unknown members inside an attempt's error object, every JSON type.",
        &Draft::dead(1, in_error.clone()),
    );
    set.add(
        "v2_unknown_error_every_type",
        "Unknown members inside a version 2 error object.",
        &Draft::dead(2, in_error),
    );
    let detail = build::Object::new().members(&every).end();
    set.add(
        "v1_unknown_in_detail_every_type",
        "`detail` an object holding members of every JSON type: a store that keeps `detail` as a typed map loses types or order.",
        &Draft::dead(1, Error::new("HttpError", "bad gateway").detail(&detail)),
    );
    set.add(
        "v2_unknown_origin_every_type",
        "Unknown members inside version 2's `origin`, after `source` and `submitted_by`, every JSON type.",
        &Draft {
            origin: Origin {
                source: Some("api".to_owned()),
                submitted_by: Some("alice".to_owned()),
                unknown: every.clone(),
            },
            ..Draft::pending(2)
        },
    );
    set.add(
        "v2_unknown_origin_only",
        "`origin` holding unknown members and neither known one.",
        &Draft {
            origin: Origin {
                unknown: unknown(&[("region", "\"eu-west-1\""), ("hops", "[1,2,3]")]),
                ..Origin::default()
            },
            ..Draft::pending(2)
        },
    );
    let mut ref_every = ClaimCheck::new();
    ref_every.unknown = every;
    set.add(
        "v2_unknown_payload_ref_every_type",
        "Unknown members inside a set `payload_ref`, every JSON type.",
        &ref_every.draft(),
    );
    let mut names_v1 = Draft::retrying(
        1,
        Error::new("ValueError", "bad").unknown(&[
            ("outcome", "\"SUCCESS\""),
            ("attempt_no", "1"),
            ("payload", "\"aGk=\""),
        ]),
    );
    names_v1.attempts[0].unknown = unknown(&[
        ("status", "\"DEAD\""),
        ("id", "\"01HWT0D7G00000000000000000\""),
        ("headers", "{\"a\":\"b\"}"),
        ("duration_ms", "250"),
        ("type", "\"x\""),
    ]);
    names_v1.unknown = unknown(&[
        ("origin", "{\"source\":\"v1-field\"}"),
        ("attempt_no", "7"),
        ("message", "\"top-level\""),
        ("uri", "\"s3://b/k\""),
        ("Status", "\"not the status\""),
        ("STATUS", "0"),
    ]);
    set.add(
        "v1_unknown_named_like_known",
        "Unknown members named like known members of another level (`status` in an attempt, `outcome` in an error, `origin` and `duration_ms` in version 1, `Status` beside `status`): a store that looks members up by name at the wrong level, or case-blind, mixes them up.",
        &names_v1,
    );
    let mut names_v2 = Draft::retrying(2, Error::new("ValueError", "bad"));
    names_v2.origin = Origin {
        source: Some("api".to_owned()),
        submitted_by: None,
        unknown: unknown(&[
            ("rdq.source", "\"header-like\""),
            ("headers", "{}"),
            ("queue", "\"other\""),
        ]),
    };
    names_v2.unknown = unknown(&[("submitted_by", "\"top\""), ("source", "null")]);
    set.add(
        "v2_unknown_named_like_known",
        "Version 2: `origin` holding members named `rdq.source`, `headers` and `queue`, and top-level members named `source` and `submitted_by`.",
        &names_v2,
    );
    set.add(
        "v1_unknown_key_shapes",
        "Unknown members whose keys are the empty string, look like numbers (`0`, `-1`, `1e2`), hold `/` and `~` (JSON pointer escapes), spaces, dots, non-ASCII, and prototype names (`__proto__`, `constructor`).",
        &Draft {
            unknown: unknown(&[
                ("", "\"empty key\""),
                ("0", "\"zero\""),
                ("-1", "\"minus one\""),
                ("1e2", "\"looks like a number\""),
                ("a/b", "1"),
                ("a~1b", "2"),
                ("~", "3"),
                (" spaced key ", "4"),
                ("a.b.c", "5"),
                ("clé", "6"),
                ("😀", "7"),
                ("__proto__", "{\"polluted\":true}"),
                ("constructor", "\"c\""),
                ("$ref", "\"#/x\""),
                ("null", "null"),
            ]),
            ..Draft::pending(1)
        },
    );
    set.add(
        "v1_unknown_key_escapes",
        "Unknown keys spelt with escapes (`\\u0041`, `\\n`, `\\\"`, `\\u00e9`, a surrogate pair): the canonical writer keeps a key's spelling, so `--exact` needs it kept; the value comparison unescapes.",
        &Draft {
            unknown: unknown(&[
                ("\\u0041", "\"A spelt as an escape\""),
                ("line\\nbreak", "1"),
                ("quote\\\"d", "2"),
                ("caf\\u00e9", "3"),
                ("\\ud83d\\ude00", "4"),
                ("tab\\tkey", "5"),
            ]),
            ..Draft::pending(1)
        },
    );
    set.add(
        "v1_unknown_member_order",
        "Unknown members in an order that is not sorted (z, a, m, b) at the top level and inside an object: a store that sorts keys (PostgreSQL `jsonb`, many maps) fails `--exact`.",
        &Draft {
            unknown: unknown(&[
                ("z_last_alphabetically", "1"),
                ("a_first_alphabetically", "2"),
                ("m", "{\"z\":1,\"a\":2,\"aa\":3,\"b\":4}"),
                ("b", "[{\"y\":0,\"x\":0}]"),
            ]),
            ..Draft::pending(1)
        },
    );
    set.add(
        "v1_unknown_case_keys",
        "Unknown keys that differ only in letter case (`Key`, `key`, `KEY`): a case-folding store merges them.",
        &Draft {
            unknown: unknown(&[("Key", "1"), ("key", "2"), ("KEY", "3")]),
            ..Draft::pending(1)
        },
    );
}

/// `[` × `levels`, the innermost array holding `"deepest"`, then `]` × `levels`: a value
/// nesting `levels` deep.
fn nested_arrays(levels: usize) -> String {
    let mut text = "[".repeat(levels);
    text.push_str("\"deepest\"");
    text.push_str(&"]".repeat(levels));
    text
}

/// `{"d":` × (`levels` − 1), then `["deepest"]`, then `}` × (`levels` − 1): a value of
/// objects nesting `levels` deep.
fn nested_objects(levels: usize) -> String {
    let outer = levels.saturating_sub(1);
    let mut text = "{\"d\":".repeat(outer);
    text.push_str("[\"deepest\"]");
    text.push_str(&"}".repeat(outer));
    text
}

/// The deepest nesting the 128 limit allows at each level (the top-level object is depth 1).
fn nesting(set: &mut Set) {
    set.add(
        "v1_deep_top_arrays",
        "A top-level unknown member of 127 nested arrays, reaching depth 128, the deepest valid: a store or JSON library with a lower limit (or a recursive one) fails or truncates.",
        &Draft {
            unknown: vec![("deep".to_owned(), nested_arrays(127))],
            ..Draft::pending(1)
        },
    );
    set.add(
        "v1_deep_top_objects",
        "A top-level unknown member of 127 nested objects, depth 128.",
        &Draft {
            unknown: vec![("deep".to_owned(), nested_objects(127))],
            ..Draft::pending(1)
        },
    );
    let mut attempt = Draft::retrying(1, Error::new("E", "m"));
    attempt.attempts[0].unknown = vec![("deep".to_owned(), nested_arrays(125))];
    set.add(
        "v1_deep_attempt",
        "An unknown member of an attempt nested 125 deep (the attempt is depth 3): depth 128.",
        &attempt,
    );
    set.add(
        "v1_deep_error",
        "An unknown member of an error nested 124 deep (the error is depth 4): depth 128.",
        &Draft::dead(
            1,
            Error {
                unknown: vec![("deep".to_owned(), nested_arrays(124))],
                ..Error::new("E", "m")
            },
        ),
    );
    set.add(
        "v1_deep_detail",
        "`detail` nested 124 deep, objects and arrays (its error is depth 4): depth 128, the deepest `detail`.",
        &Draft::dead(1, Error::new("E", "m").detail(&nested_objects(124))),
    );
    set.add(
        "v2_deep_origin",
        "An unknown member of `origin` nested 126 deep (`origin` is depth 2): depth 128.",
        &Draft {
            origin: Origin {
                unknown: vec![("deep".to_owned(), nested_arrays(126))],
                ..Origin::default()
            },
            ..Draft::pending(2)
        },
    );
    let mut claim = ClaimCheck::new();
    claim.unknown = vec![("deep".to_owned(), nested_objects(126))];
    set.add(
        "v2_deep_payload_ref",
        "An unknown member of `payload_ref` nested 126 deep: depth 128.",
        &claim.draft(),
    );
    let mut attempt_v2 = Draft::retrying(2, Error::new("E", "m").detail(&nested_arrays(124)));
    attempt_v2.attempts[0].unknown = vec![("deep".to_owned(), nested_objects(125))];
    set.add(
        "v2_deep_attempt_and_detail",
        "Version 2: an attempt's unknown member and its error's `detail`, each at depth 128.",
        &attempt_v2,
    );
}

/// The number spellings stores change, each in a fixture of its own (the one number at the
/// top level and in `detail`), so a failure names the spelling. In the order of the table in
/// docs/fixtures.md.
pub(crate) const NUMBER_SPELLINGS: [(&str, &str, &str); 24] = [
    (
        "number_1_0",
        "1.0",
        "`1.0`: a store that types it as an integer writes `1`.",
    ),
    (
        "number_1e2",
        "1e2",
        "`1e2`: a store writes `100` or `100.0`.",
    ),
    (
        "number_1e_plus_2_upper",
        "1E+2",
        "`1E+2`: an upper-case exponent with a sign.",
    ),
    (
        "number_100",
        "100",
        "`100` (beside the fixture for `1e2`): the integer must stay an integer.",
    ),
    ("number_minus_0", "-0", "`-0`: a store writes `0`."),
    (
        "number_minus_0_0",
        "-0.0",
        "`-0.0`: a store writes `0`, `-0` or `0.0`.",
    ),
    (
        "number_2_pow_53_plus_1",
        "9007199254740993",
        "2^53+1: a store through an IEEE double writes 9007199254740992.",
    ),
    (
        "number_20_digits",
        "12345678901234567890",
        "A 20-digit integer, over i64: a store through i64 or a double rounds it.",
    ),
    (
        "number_20_digits_negative",
        "-12345678901234567890",
        "A negative 20-digit integer, below i64.",
    ),
    (
        "number_2_pow_64",
        "18446744073709551616",
        "2^64, one over u64: a store through u64 overflows.",
    ),
    (
        "number_i64_max_plus_1",
        "9223372036854775808",
        "i64::MAX+1: a store through i64 overflows or clamps.",
    ),
    (
        "number_0_1",
        "0.1",
        "`0.1`: a store through a double may print `0.1000000000000000055511151231257827`.",
    ),
    (
        "number_0_30000000000000004",
        "0.30000000000000004",
        "`0.30000000000000004` (0.1+0.2): a store printing 15 significant digits writes `0.3`.",
    ),
    (
        "number_1e400",
        "1e400",
        "`1e400`, beyond a double: a store writes `inf`, null or fails.",
    ),
    (
        "number_1e_minus_400",
        "1e-400",
        "`1e-400`, below a double's least: a store writes `0`.",
    ),
    (
        "number_long_fraction",
        "123456789012345678901234567890.5",
        "30 integer digits and a fraction: a double keeps 17 of them.",
    ),
    (
        "number_many_fraction_digits",
        "1.000000000000000000000000000001",
        "31 significant digits: a double or a 28-digit decimal rounds it to 1.",
    ),
    (
        "number_5e_minus_324",
        "5e-324",
        "The least subnormal double: printed as `4.9406564584124654e-324` by some.",
    ),
    (
        "number_double_max",
        "1.7976931348623157e308",
        "The largest double: printed in full by some (309 digits).",
    ),
    (
        "number_exponent_zero",
        "0e0",
        "`0e0`: a zero with an exponent.",
    ),
    (
        "number_exponent_plus",
        "1e+2",
        "`1e+2`: a store drops the `+`.",
    ),
    (
        "number_exponent_leading_zeros",
        "1e002",
        "`1e002`: an exponent with leading zeros.",
    ),
    (
        "number_trailing_zeros",
        "2.50000",
        "`2.50000`: a decimal column keeps a scale, a double writes `2.5`.",
    ),
    (
        "number_negative_exponent_fraction",
        "-1.5E-7",
        "`-1.5E-7`: a store writes `-0.00000015` or `-1.5e-07`.",
    ),
];

/// Number spellings, each in a fixture of its own; the largest integers the known members
/// allow.
fn numbers(set: &mut Set) {
    for (name, spelling, purpose) in NUMBER_SPELLINGS {
        set.add(
            name,
            purpose,
            &Draft {
                unknown: vec![
                    ("n".to_owned(), spelling.to_owned()),
                    ("in_array".to_owned(), format!("[{spelling}]")),
                    ("in_object".to_owned(), format!("{{\"n\":{spelling}}}")),
                ],
                ..Draft::pending(1)
            },
        );
    }
    let all: Vec<&str> = NUMBER_SPELLINGS.iter().map(|(_, s, _)| *s).collect();
    set.add(
        "v1_numbers_in_detail",
        "Every number spelling above inside `detail` (an array): a store that types `detail` changes them.",
        &Draft::dead(
            1,
            Error::new("E", "m").detail(&format!("[{}]", all.join(","))),
        ),
    );
    let mut v2 = Draft::retrying(2, Error::new("E", "m"));
    v2.attempts[0].unknown = vec![("numbers".to_owned(), format!("[{}]", all.join(",")))];
    v2.origin.unknown = vec![("numbers".to_owned(), format!("[{}]", all.join(",")))];
    set.add(
        "v2_numbers_in_attempt_and_origin",
        "Every number spelling inside a version 2 attempt's and `origin`'s unknown members.",
        &v2,
    );
    set.add(
        "v1_redrive_count_max",
        "`redrive_count` 4294967295, the largest allowed: a store through a signed 32-bit column overflows.",
        &Draft {
            redrive_count: u64::from(u32::MAX),
            ..Draft::pending(1)
        },
    );
    set.add(
        "v2_redrive_count_max",
        "Version 2 `redrive_count` 4294967295.",
        &Draft {
            redrive_count: u64::from(u32::MAX),
            ..Draft::pending(2)
        },
    );
}

/// Strings: escapes, control characters, `\u0000`, astral characters raw and as escapes, and
/// the characters stores are known to drop or rewrite.
fn strings(set: &mut Set) {
    const ESCAPES: &str = "quote \" backslash \\ slash / controls \u{8}\u{c}\n\r\t";
    let controls: String = (0u8..0x20).map(char::from).collect();
    set.add(
        "v1_escapes_known_members",
        "The escapes of the canonical writer (`\\\"`, `\\\\`, `\\b\\f\\n\\r\\t`) in a message, a header key and value, an error type and a stack: a store that unescapes twice, or stores the escaped text, changes them.",
        &Draft {
            headers: vec![(format!("key {ESCAPES}"), format!("value {ESCAPES}"))],
            ..Draft::dead(
                1,
                Error::new(&format!("type {ESCAPES}"), &format!("message {ESCAPES}"))
                    .stack(&format!("stack {ESCAPES}")),
            )
        },
    );
    set.add(
        "v1_control_characters",
        "Every control character U+0000-U+001F (`\\u0000` first) and DEL in a message, a header value and a stack: C strings stop at NUL, text columns refuse it (PostgreSQL `text` and `jsonb`).",
        &Draft {
            headers: vec![("controls".to_owned(), format!("{controls}\u{7f}"))],
            ..Draft::dead(
                1,
                Error::new("ControlError", &format!("{controls}\u{7f}"))
                    .stack(&format!("{controls}\u{7f}")),
            )
        },
    );
    set.add(
        "v1_nul_in_known_strings",
        "`\\u0000` alone and inside text in `message`, a header key and a header value.",
        &Draft {
            headers: vec![
                ("nul\u{0}key".to_owned(), "\u{0}".to_owned()),
                ("nul-inside".to_owned(), "before\u{0}after".to_owned()),
            ],
            ..Draft::dead(1, Error::new("NulError", "a\u{0}b"))
        },
    );
    set.add(
        "v2_nul_in_known_strings",
        "Version 2: `\\u0000` in `origin.source`, `origin.submitted_by` and a message.",
        &Draft {
            origin: Origin {
                source: Some("src\u{0}".to_owned()),
                submitted_by: Some("\u{0}by".to_owned()),
                ..Origin::default()
            },
            ..Draft::dead(2, Error::new("NulError", "\u{0}"))
        },
    );
    set.add(
        "v1_unknown_string_escapes",
        "Unknown members spelt with every escape: `\\/`, `\\u00e9` and `\\u00E9` for é, `\\u0041` for A, `\\u001F` upper case, `\\u0000`, `\\b\\f\\n\\r\\t`, `\\\"`, `\\\\`: the canonical writer keeps an unknown member's spelling, so `--exact` needs it kept; the value comparison unescapes.",
        &Draft {
            unknown: unknown(&[
                ("solidus", "\"a\\/b\""),
                ("e_acute_lower", "\"caf\\u00e9\""),
                ("e_acute_upper", "\"caf\\u00E9\""),
                ("escaped_ascii", "\"\\u0041BC\""),
                ("control_upper_hex", "\"\\u001F\""),
                ("nul", "\"\\u0000\""),
                ("short_escapes", "\"\\b\\f\\n\\r\\t\\\"\\\\\""),
                ("crlf", "\"line1\\r\\nline2\""),
                ("in_array", "[\"\\/\",\"\\u00e9\",\"\\u0000\"]"),
            ]),
            ..Draft::pending(1)
        },
    );
    set.add(
        "v1_nul_in_unknown_and_detail",
        "`\\u0000` inside unknown members (a value and a key) and inside `detail`.",
        &Draft {
            unknown: unknown(&[("nul\\u0000key", "\"x\\u0000y\"")]),
            ..Draft::dead(1, Error::new("E", "m").detail("{\"raw\":\"\\u0000\"}"))
        },
    );
    set.add(
        "v1_astral_raw",
        "U+1F600 (😀) and other astral characters as raw UTF-8 in a message, a stack, an error type, a header key and value, `handler_version` and an unknown member: a store with 3-byte UTF-8 (MySQL `utf8`) or UTF-16 code units mangles them.",
        &Draft {
            handler_version: Member::Set(string("v😀1")),
            headers: vec![("emoji-😀".to_owned(), "𝄞 𠜎 😀".to_owned())],
            unknown: unknown(&[("emoji", "\"😀\"")]),
            ..Draft::dead(1, Error::new("Error😀", "failed 😀").stack("𝄞 at line 1"))
        },
    );
    set.add(
        "v1_astral_surrogate_escapes",
        "U+1F600 spelt as the surrogate-pair escape `\\ud83d\\ude00` (and upper case `\\uD83D\\uDE00`) inside unknown members and `detail`: the value is 😀; `--exact` needs the escape kept.",
        &Draft {
            unknown: unknown(&[
                ("pair_lower", "\"\\ud83d\\ude00\""),
                ("pair_upper", "\"\\uD83D\\uDE00\""),
                ("pair_in_text", "\"smile \\ud83d\\ude00 done\""),
            ]),
            ..Draft::dead(1, Error::new("E", "m").detail("\"\\ud83d\\ude00\""))
        },
    );
    set.add(
        "v2_non_ascii_everywhere",
        "Non-ASCII in every string member that allows it (version 2): `handler_version`, the content type's quoted parameter, header keys and values, `origin`, error type, message, stack, `detail`, unknown members.",
        &Draft {
            handler_version: Member::Set(string("版本 1")),
            payload_content_type: "text/plain; name=\"Résumé 😀\"".to_owned(),
            headers: vec![("Ключ".to_owned(), "значение".to_owned())],
            origin: Origin {
                source: Some("サービス".to_owned()),
                submitted_by: Some("Zoë".to_owned()),
                unknown: unknown(&[("note", "\"ñ\"")]),
            },
            unknown: unknown(&[("ünknown", "\"ÿ\"")]),
            ..Draft::dead(
                2,
                Error::new("Ошибка", "échec: 失败")
                    .detail("{\"é\":\"è\"}")
                    .stack("à la ligne 1"),
            )
        },
    );
    set.add(
        "v1_non_ascii_everywhere",
        "Non-ASCII in every string member that allows it (version 1).",
        &Draft {
            handler_version: Member::Set(string("版本 1")),
            payload_content_type: "text/plain; name=\"Résumé\"".to_owned(),
            headers: vec![("Ключ".to_owned(), "значение".to_owned())],
            unknown: unknown(&[("ünknown", "\"ÿ\"")]),
            ..Draft::dead(
                1,
                Error::new("Ошибка", "échec: 失败")
                    .detail("{\"é\":\"è\"}")
                    .stack("à la ligne 1"),
            )
        },
    );
    set.add(
        "v1_c1_controls_and_del",
        "DEL (U+007F) and the C1 controls U+0080-U+009F, written raw by the canonical writer: a store that strips or escapes them (or reads them as Latin-1) changes the text.",
        &Draft {
            headers: vec![("c1".to_owned(), "\u{7f}\u{80}\u{85}\u{9f}".to_owned())],
            unknown: unknown(&[("c1", "\"\u{7f}\u{80}\u{85}\u{9f}\"")]),
            ..Draft::dead(1, Error::new("E", "\u{7f}\u{80}\u{85}\u{9f}"))
        },
    );
    set.add(
        "v1_line_separators",
        "U+2028 and U+2029 (line and paragraph separators, raw): JavaScript-era encoders escape them, line-oriented tools split on them.",
        &Draft {
            headers: vec![("sep".to_owned(), "a\u{2028}b\u{2029}c".to_owned())],
            unknown: unknown(&[("sep", "\"a\u{2028}b\u{2029}c\""), ("sep_escaped", "\"\\u2028\\u2029\"")]),
            ..Draft::dead(1, Error::new("E", "line\u{2028}separator"))
        },
    );
    set.add(
        "v1_byte_order_mark_in_strings",
        "U+FEFF (a byte-order mark) at the start of a message, a header value and an unknown string: a store or reader that strips BOMs drops it.",
        &Draft {
            headers: vec![("bom".to_owned(), "\u{feff}value".to_owned())],
            unknown: unknown(&[("bom", "\"\u{feff}\""), ("bom_escaped", "\"\\ufeff\"")]),
            ..Draft::dead(1, Error::new("E", "\u{feff}message"))
        },
    );
    set.add(
        "v1_unicode_normalisation",
        "é as NFC (U+00E9) and NFD (e + U+0301) in distinct header keys and values, messages and unknown members: a store that normalises Unicode merges the two keys (a duplicate) or changes the text.",
        &Draft {
            headers: vec![
                ("caf\u{e9}".to_owned(), "nfc caf\u{e9}".to_owned()),
                ("cafe\u{301}".to_owned(), "nfd cafe\u{301}".to_owned()),
            ],
            unknown: unknown(&[
                ("caf\u{e9}", "\"nfc\""),
                ("cafe\u{301}", "\"nfd\""),
                ("angstrom", "\"\u{212b} \u{c5} A\u{30a}\""),
            ]),
            ..Draft::dead(1, Error::new("E", "cafe\u{301} / caf\u{e9}"))
        },
    );
    set.add(
        "v1_whitespace_kept",
        "Leading and trailing spaces, tabs and newlines in a message, a header key and value, `handler_version` and an unknown string: a store that trims (CHAR columns, form handling) loses them.",
        &Draft {
            handler_version: Member::Set(string(" 1.0 ")),
            headers: vec![
                (" padded key ".to_owned(), "  padded value  ".to_owned()),
                ("tabs".to_owned(), "\tvalue\t".to_owned()),
                ("only-space".to_owned(), " ".to_owned()),
            ],
            unknown: unknown(&[("padded", "\"  x  \""), ("blank", "\"   \"")]),
            ..Draft::dead(1, Error::new("E", "  message with trailing spaces   \n"))
        },
    );
    set.add(
        "v1_line_endings_in_strings",
        "CR LF, lone CR and lone LF inside a message, a stack and a header value: a store that normalises line endings changes them.",
        &Draft {
            headers: vec![("multiline".to_owned(), "a\r\nb\rc\nd".to_owned())],
            ..Draft::dead(
                1,
                Error::new("E", "line 1\r\nline 2\rline 3\nline 4").stack("frame 1\r\nframe 2\r\n"),
            )
        },
    );
    let long_text = "0123456789abcdef".repeat(16_384);
    let long_key = "k".repeat(10_000);
    set.add(
        "v1_long_unknown_string",
        "An unknown string of 262,144 bytes and an unknown key of 10,000 bytes: a store with a column or key size limit (VARCHAR(255), an index entry) truncates or refuses them.",
        &Draft {
            unknown: vec![
                ("long".to_owned(), format!("\"{long_text}\"")),
                (long_key, "true".to_owned()),
            ],
            ..Draft::pending(1)
        },
    );
}

/// Payloads: empty, every byte value, each base64 padding, the largest a 1 MiB line holds.
fn payloads(set: &mut Set) {
    set.add(
        "v1_payload_empty",
        "The empty payload `\"\"`: not null, not absent.",
        &Draft {
            payload: Some(Vec::new()),
            ..Draft::pending(1)
        },
    );
    set.add(
        "v2_payload_empty",
        "Version 2's empty payload.",
        &Draft {
            payload: Some(Vec::new()),
            ..Draft::pending(2)
        },
    );
    let every_byte: Vec<u8> = (0..=255u8).collect();
    set.add(
        "v1_payload_every_byte",
        "A binary payload of all 256 byte values: a store that keeps the decoded bytes as text (or as UTF-8) loses the bytes that are not UTF-8, and one that re-encodes must write standard base64 with padding.",
        &Draft {
            payload: Some(every_byte.clone()),
            payload_content_type: "application/octet-stream".to_owned(),
            ..Draft::pending(1)
        },
    );
    set.add(
        "v2_payload_every_byte",
        "Version 2's payload of all 256 byte values.",
        &Draft {
            payload: Some(every_byte),
            payload_content_type: "application/octet-stream".to_owned(),
            ..Draft::pending(2)
        },
    );
    for (name, purpose, payload) in [
        (
            "v1_payload_one_byte",
            "A 1-byte payload (`==` padding): a store that drops padding or writes URL-safe base64 changes it.",
            &b"\xff"[..],
        ),
        (
            "v1_payload_two_bytes",
            "A 2-byte payload (`=` padding), `+` and `/` in its base64.",
            &b"\xfb\xff"[..],
        ),
        (
            "v1_payload_three_bytes",
            "A 3-byte payload (no padding).",
            &b"\xfb\xef\xbe"[..],
        ),
    ] {
        set.add(
            name,
            purpose,
            &Draft {
                payload: Some(payload.to_vec()),
                payload_content_type: "application/octet-stream".to_owned(),
                ..Draft::pending(1)
            },
        );
    }
    set.add(
        "v1_line_of_1_mib",
        "A line of exactly 1,048,576 bytes, the default size limit, nearly all payload: a store with a smaller row, value or message limit (or one that adds bytes) fails it.",
        &largest_line(1),
    );
    set.add(
        "v2_line_of_1_mib",
        "Version 2's line of exactly 1,048,576 bytes.",
        &largest_line(2),
    );
}

/// The default envelope size limit (docs/envelope.md): a line of this many bytes is valid.
pub(crate) const SIZE_LIMIT: usize = 1_048_576;

/// A pending envelope whose line is exactly [`SIZE_LIMIT`] bytes: a payload of a multiple of
/// 3 bytes (base64 without padding), the rest (0-3 bytes) in a header value.
fn largest_line(version: u32) -> Draft {
    let mut draft = Draft {
        payload: Some(Vec::new()),
        payload_content_type: "application/octet-stream".to_owned(),
        headers: vec![("fill".to_owned(), String::new())],
        ..Draft::pending(version)
    };
    // The id's length does not depend on its number: any id measures the same.
    let bare = draft.to_json("01HWT0D7G00000000000000000").len();
    let room = SIZE_LIMIT.saturating_sub(bare);
    let payload_len = room / 4 * 3;
    draft.headers[0].1 = "f".repeat(room % 4);
    // Bytes cycling through every value, so the payload is not text.
    draft.payload = Some((0..payload_len).map(|i| (i % 251) as u8).collect());
    draft
}

/// `count` bytes of text: ASCII, with a multibyte character every 97 bytes (all of them
/// whole), so the text is not all ASCII without landing a character on a chosen cut.
fn text_of(count: usize) -> String {
    let mut text = String::with_capacity(count);
    while text.len() < count {
        let left = count - text.len();
        if text.len() % 97 == 96 && left >= 2 {
            text.push('é');
        } else {
            text.push(char::from(b'a' + (text.len() % 26) as u8));
        }
    }
    text
}

/// `prefix_len` bytes ending with `last` (a character of 1 to 4 bytes), then the truncation
/// marker: the form a writer gives a text cut at `prefix_len` bytes.
fn truncated(prefix_len: usize, last: char) -> String {
    let mut text = text_of(prefix_len - last.len_utf8());
    text.push(last);
    text.push_str(TRUNCATION_MARKER);
    text
}

/// What a truncated `message` or `stack` ends with (docs/envelope.md#truncation).
const TRUNCATION_MARKER: &str = "…[truncated]";

/// The longest `message` and `stack`, and their truncated forms with a kept part of limit-3 to
/// limit bytes, multibyte characters at the cut.
fn text_limits(set: &mut Set) {
    use crate::envelope::{MESSAGE_LIMIT, STACK_LIMIT};
    let message = |text: String| Draft::dead(1, Error::new("LongError", &text));
    let stack = |text: String| Draft::dead(1, Error::new("LongError", "long stack").stack(&text));
    set.add(
        "v1_message_at_limit",
        "A `message` of exactly 4096 bytes, the limit, with 2-byte characters in it: a store with a 4000-character (or 4096-character in UTF-16) column truncates it.",
        &message(text_of(MESSAGE_LIMIT)),
    );
    let mut astral_end = text_of(MESSAGE_LIMIT - 4);
    astral_end.push('😀');
    set.add(
        "v1_message_at_limit_astral_end",
        "A `message` of 4096 bytes ending with a 4-byte character: a store limiting characters by UTF-16 units, or cutting bytes, breaks the last one.",
        &message(astral_end),
    );
    for (name, purpose, kept, last) in [
        (
            "v1_message_truncated_4096",
            "A truncated `message`: 4096 bytes then `…[truncated]` (4110 bytes): a store that enforces the limit without the marker cuts it.",
            MESSAGE_LIMIT,
            'a',
        ),
        (
            "v1_message_truncated_4095",
            "A truncated `message` whose kept part is 4095 bytes ending with a 3-byte character (€) at the cut.",
            MESSAGE_LIMIT - 1,
            '€',
        ),
        (
            "v1_message_truncated_4094",
            "A truncated `message` whose kept part is 4094 bytes ending with a 2-byte character (é).",
            MESSAGE_LIMIT - 2,
            'é',
        ),
        (
            "v1_message_truncated_4093",
            "A truncated `message` whose kept part is 4093 bytes, the shortest allowed, ending with a 4-byte character (😀).",
            MESSAGE_LIMIT - 3,
            '😀',
        ),
    ] {
        set.add(name, purpose, &message(truncated(kept, last)));
    }
    set.add(
        "v1_message_marker_short",
        "A short `message` that happens to end with `…[truncated]`: a store must not treat it as cut.",
        &message(format!("already short{TRUNCATION_MARKER}")),
    );
    set.add(
        "v1_stack_at_limit",
        "A `stack` of exactly 65536 bytes, the limit: a store with a 64 KiB text column including its own overhead (MySQL `TEXT`) truncates it.",
        &stack(text_of(STACK_LIMIT)),
    );
    for (name, purpose, kept, last) in [
        (
            "v1_stack_truncated_65536",
            "A truncated `stack`: 65536 bytes then `…[truncated]` (65550 bytes).",
            STACK_LIMIT,
            'a',
        ),
        (
            "v1_stack_truncated_65535",
            "A truncated `stack` whose kept part is 65535 bytes ending with a 3-byte character.",
            STACK_LIMIT - 1,
            '€',
        ),
        (
            "v1_stack_truncated_65534",
            "A truncated `stack` whose kept part is 65534 bytes ending with a 2-byte character.",
            STACK_LIMIT - 2,
            'é',
        ),
        (
            "v1_stack_truncated_65533",
            "A truncated `stack` whose kept part is 65533 bytes ending with a 4-byte character.",
            STACK_LIMIT - 3,
            '😀',
        ),
    ] {
        set.add(name, purpose, &stack(truncated(kept, last)));
    }
    set.add(
        "v2_message_and_stack_truncated",
        "Version 2: a truncated `message` and a truncated `stack` in one error.",
        &Draft::dead(
            2,
            Error::new("LongError", &truncated(MESSAGE_LIMIT - 3, '😀'))
                .stack(&truncated(STACK_LIMIT - 1, '€')),
        ),
    );
}

/// Header keys and values: case, order, emptiness, count, shapes.
fn headers(set: &mut Set) {
    let owned = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    };
    set.add(
        "v1_header_keys_case",
        "Header keys that differ only in letter case (`Content-Type`, `content-type`, `CONTENT-TYPE`): a store keyed case-blind (HTTP header maps, MySQL's default collation) merges them.",
        &Draft {
            headers: owned(&[
                ("Content-Type", "text/html"),
                ("content-type", "text/plain"),
                ("CONTENT-TYPE", "image/png"),
            ]),
            ..Draft::pending(1)
        },
    );
    set.add(
        "v2_header_keys_case",
        "Version 2 header keys that differ only in case, `Rdq.Source` among them (only the exact `rdq.source` moved to `origin`).",
        &Draft {
            headers: owned(&[("X-Trace", "1"), ("x-trace", "2"), ("Rdq.Source", "not moved")]),
            ..Draft::pending(2)
        },
    );
    set.add(
        "v1_header_order_unsorted",
        "Headers in an order that is not sorted (z, a, m, B, b): a store that sorts keys or uses a hash map fails `--exact`.",
        &Draft {
            headers: owned(&[("z", "1"), ("a", "2"), ("m", "3"), ("B", "4"), ("b", "5")]),
            ..Draft::pending(1)
        },
    );
    set.add(
        "v1_header_values_empty_and_null_like",
        "Header values that are empty or look like other types (`\"\"`, `\"null\"`, `\"true\"`, `\"0\"`, `\"007\"`, `\"1e2\"`, `\"[]\"`): a store that types values, or turns \"\" into NULL (Oracle), changes them.",
        &Draft {
            headers: owned(&[
                ("empty", ""),
                ("null", "null"),
                ("true", "true"),
                ("zero", "0"),
                ("padded-number", "007"),
                ("exponent", "1e2"),
                ("array", "[]"),
            ]),
            ..Draft::pending(1)
        },
    );
    set.add(
        "v1_header_key_shapes",
        "Header keys with dots, spaces, slashes, `~`, non-ASCII, an emoji, number-like and prototype names (`__proto__`): a store that treats dots as paths (MongoDB), or keys as identifiers, changes them.",
        &Draft {
            headers: owned(&[
                ("a.b.c", "dots"),
                ("with space", "space"),
                ("a/b~c", "pointer characters"),
                ("clé", "non-ASCII"),
                ("日本語", "CJK"),
                ("😀", "emoji"),
                ("0", "number-like"),
                ("$set", "dollar"),
                ("__proto__", "prototype"),
                ("x-\"quoted\"", "quote"),
            ]),
            ..Draft::pending(1)
        },
    );
    set.add(
        "v1_headers_rdq_keys",
        "Version 1 headers `rdq.source`, `rdq.submitted_by` and another `rdq.` key: they stay headers in version 1 (a store must not move them to an `origin`).",
        &Draft {
            headers: owned(&[
                ("rdq.submitted_by", "alice"),
                ("x-request-id", "r-1"),
                ("rdq.source", "billing-api"),
                ("rdq.trace", "t-9"),
            ]),
            ..Draft::pending(1)
        },
    );
    let many: Vec<(String, String)> = (0..1000)
        .map(|i| {
            // A stride coprime with 1000 spreads the keys out of sorted order.
            let n = (i * 337) % 1000;
            (format!("h-{n:04}"), format!("value {i}"))
        })
        .collect();
    set.add(
        "v1_headers_1000",
        "1000 headers in an order that is not sorted: a store with a limit on keys or columns (Redis hash pipelining, 100-column rows) or one that sorts them loses some or their order.",
        &Draft {
            headers: many.clone(),
            ..Draft::pending(1)
        },
    );
    set.add(
        "v2_headers_1000",
        "Version 2 with 1000 headers.",
        &Draft {
            headers: many,
            ..Draft::pending(2)
        },
    );
}

/// Milliseconds of the times the fixtures name.
const EPOCH: i64 = 0;
/// 0000-01-01T00:00:00.000Z.
const TIME_MIN: i64 = -62_167_219_200_000;
/// 9999-12-31T23:59:59.999Z.
const TIME_MAX: i64 = 253_402_300_799_999;
/// 2024-02-29T12:34:56.789Z.
const LEAP_DAY: i64 = 1_709_210_096_789;
/// 2000-02-29T00:00:00.000Z (a century that is a leap year).
const LEAP_CENTURY: i64 = 951_782_400_000;

/// Timestamps at both ends, leap days, the milliseconds' ends, the epoch.
fn times(set: &mut Set) {
    set.add(
        "v1_time_min",
        "`created_at` and every time 0000-01-01T00:00:00.000Z, the earliest: a store with a smaller date range (PostgreSQL `timestamp` starts in 4713 BC, but many start in 1900, 1970 or year 1) shifts or refuses it.",
        &Draft {
            next_attempt_ms: Some(TIME_MIN),
            created_ms: TIME_MIN,
            ..Draft::pending(1)
        },
    );
    set.add(
        "v1_time_max",
        "`created_at` and `next_attempt_at` 9999-12-31T23:59:59.999Z, the latest: a store that rounds milliseconds up rolls into year 10000.",
        &Draft {
            next_attempt_ms: Some(TIME_MAX),
            created_ms: TIME_MAX,
            ..Draft::pending(1)
        },
    );
    set.add(
        "v2_attempt_spanning_every_year",
        "An attempt from 0000-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z: `duration_ms` 315569519999999, the largest, beyond 32 bits.",
        &Draft {
            created_ms: TIME_MIN,
            attempts: vec![Attempt::finished(1, TIME_MIN, TIME_MAX, "SUCCESS")],
            ..Draft::succeeded(2)
        },
    );
    set.add(
        "v1_time_leap_days",
        "Leap days: `created_at` 2000-02-29 and an attempt on 2024-02-29T12:34:56.789Z.",
        &Draft {
            created_ms: LEAP_CENTURY,
            attempts: vec![Attempt::finished(1, LEAP_DAY, LEAP_DAY + 1, "SUCCESS")],
            ..Draft::succeeded(1)
        },
    );
    set.add(
        "v1_time_milliseconds_ends",
        "Times at .000 and .999 of a second: a store with second precision drops them, one with microseconds must write back exactly three digits.",
        &Draft {
            created_ms: T0 - 1,
            attempts: vec![Attempt::finished(1, T0, T0 + 999, "SUCCESS")],
            ..Draft::succeeded(1)
        },
    );
    set.add(
        "v1_time_epoch",
        "1970-01-01T00:00:00.000Z (0 in epoch time) and the millisecond before it: a store that reads 0 as unset, or mishandles negative epoch times, loses them.",
        &Draft {
            created_ms: EPOCH - 1,
            next_attempt_ms: Some(EPOCH),
            ..Draft::pending(1)
        },
    );
    set.add(
        "v2_time_zero_duration",
        "A version 2 attempt that finished in the millisecond it started: `duration_ms` 0, not null.",
        &Draft {
            attempts: vec![Attempt::finished(1, T0 + 5, T0 + 5, "SUCCESS")],
            ..Draft::succeeded(2)
        },
    );
}

/// Histories: many attempts with redrives.
fn attempts(set: &mut Set) {
    let history = |version: u32| {
        let mut attempts = Vec::with_capacity(500);
        let mut at = T0;
        for cycle in 0..5u64 {
            for no in 1..=100u64 {
                let outcome = if no == 100 {
                    "PERMANENT_FAILURE"
                } else {
                    "RETRYABLE_FAILURE"
                };
                attempts.push(
                    Attempt::finished(no, at, at + 500, outcome).error(Error::new(
                        "TimeoutError",
                        &format!("cycle {cycle} attempt {no}"),
                    )),
                );
                at += 1_000;
            }
        }
        Draft {
            status: "DEAD",
            attempt_count: 500,
            redrive_count: 4,
            next_attempt_ms: None,
            attempts,
            ..Draft::pending(version)
        }
    };
    set.add(
        "v1_attempts_500_redriven",
        "500 attempts in 5 runs of 100 (`attempt_no` restarting at 1 after each of 4 redrives), `attempt_count` 500: a store that keys attempts by `attempt_no`, limits their number, or reorders them loses some.",
        &history(1),
    );
    set.add(
        "v2_attempts_500_redriven",
        "Version 2's 500 attempts in 5 runs of 100.",
        &history(2),
    );
    set.add(
        "v1_redriven_pending",
        "`PENDING` after a redrive: `redrive_count` 1, `attempt_count` 0 while the old history stays.",
        &Draft {
            redrive_count: 1,
            attempt_count: 0,
            next_attempt_ms: Some(T0 + 100_000),
            attempts: vec![
                Attempt::finished(1, T0 + 1_000, T0 + 2_000, "PERMANENT_FAILURE")
                    .error(Error::new("ValueError", "bad input")),
            ],
            ..Draft::pending(1)
        },
    );
}

/// Queue and handler names at both lengths; content types with parameters.
fn names_and_content_types(set: &mut Set) {
    set.add(
        "v1_names_one_character",
        "`queue` and `handler_ref` of one character.",
        &Draft {
            queue: "q".to_owned(),
            handler_ref: "h".to_owned(),
            ..Draft::pending(1)
        },
    );
    let long_name: String = "abcdefghijklmnopqrstuvwxyz0123456789.-_"
        .chars()
        .cycle()
        .take(240)
        .collect();
    set.add(
        "v1_names_240_characters",
        "`queue` and `handler_ref` of 240 characters, the longest: a store with a 64-, 128- or 200-character name column truncates them.",
        &Draft {
            queue: long_name.clone(),
            handler_ref: long_name.chars().rev().collect(),
            ..Draft::pending(1)
        },
    );
    set.add(
        "v2_names_240_characters",
        "Version 2 names of 240 characters, and a `handler_version` of 240 bytes.",
        &Draft {
            queue: long_name.clone(),
            handler_ref: long_name,
            handler_version: Member::Set(string(&"é".repeat(120))),
            ..Draft::pending(2)
        },
    );
    set.add(
        "v1_names_look_like_values",
        "`queue` \"null\", `handler_ref` \"007\", `handler_version` \"true\": a store that types strings (YAML, CSV loaders) turns them into null, 7 and true.",
        &Draft {
            queue: "null".to_owned(),
            handler_ref: "007".to_owned(),
            handler_version: Member::Set(string("true")),
            ..Draft::pending(1)
        },
    );
    for (name, purpose, content_type) in [
        (
            "v1_content_type_parameters",
            "`payload_content_type` with parameters, mixed case and space around `;`: a store that parses and rewrites media types (lower-cases, drops spaces) changes it.",
            "Text/HTML ; Charset=UTF-8 ;format=flowed",
        ),
        (
            "v1_content_type_quoted",
            "`payload_content_type` with quoted-string parameters holding `;`, `=`, a space, an escaped quote and a backslash.",
            "multipart/form-data; boundary=\"--a;b=c d\"; name=\"say \\\"hi\\\" \\\\ bye\"",
        ),
        (
            "v1_content_type_obs_text_and_tab",
            "`payload_content_type` with non-ASCII (obs-text) inside a quoted string and a tab as white space.",
            "text/plain;\tfilename=\"naïve 😀.txt\"",
        ),
    ] {
        set.add(
            name,
            purpose,
            &Draft {
                payload_content_type: content_type.to_owned(),
                ..Draft::pending(1)
            },
        );
    }
    let mut longest = String::from("application/x.");
    let parameter = "; p=\"v\"";
    longest.push_str(&"a".repeat(255 - longest.len() - parameter.len()));
    longest.push_str(parameter);
    set.add(
        "v1_content_type_255_bytes",
        "A `payload_content_type` of 255 bytes, the longest: a store with a 128- or 254-byte column truncates it.",
        &Draft {
            payload_content_type: longest,
            ..Draft::pending(1)
        },
    );
}

/// A version 2 `payload_ref` (set, `payload` absent).
struct ClaimCheck {
    uri: String,
    sha256: String,
    size: u64,
    unknown: Vec<(String, String)>,
}

impl ClaimCheck {
    fn new() -> ClaimCheck {
        ClaimCheck {
            uri: "s3://payloads/2024/05/01/01HWT0D7G0.bin".to_owned(),
            sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08".to_owned(),
            size: 1_234_567,
            unknown: Vec::new(),
        }
    }

    /// A pending version 2 envelope holding this `payload_ref` and no payload.
    fn draft(&self) -> Draft {
        let payload_ref = build::Object::new()
            .string("uri", &self.uri)
            .string("sha256", &self.sha256)
            .raw("size", &self.size.to_string())
            .members(&self.unknown)
            .end();
        Draft {
            payload: None,
            payload_ref: Member::Set(payload_ref),
            ..Draft::pending(2)
        }
    }
}

/// Version 2's claim check: `payload_ref` set with `payload` absent.
fn claim_check(set: &mut Set) {
    set.add(
        "v2_payload_ref_set",
        "`payload_ref` set and `payload` absent: a store must not add `payload` back (as \"\" or null).",
        &ClaimCheck::new().draft(),
    );
    set.add(
        "v2_payload_ref_size_max",
        "`payload_ref.size` 18446744073709551615 (2^64-1), the largest: a store through i64 or a double changes it.",
        &ClaimCheck {
            size: u64::MAX,
            ..ClaimCheck::new()
        }
        .draft(),
    );
    set.add(
        "v2_payload_ref_size_zero",
        "`payload_ref.size` 0: not null, not absent.",
        &ClaimCheck {
            size: 0,
            ..ClaimCheck::new()
        }
        .draft(),
    );
    set.add(
        "v2_payload_ref_uri_escapes",
        "A `uri` with percent escapes in both cases (`%2F`, `%2f`, `%20`), a query and a fragment: a store that decodes or normalises URIs changes it.",
        &ClaimCheck {
            uri: "https://store.example.com/a%2Fb%2fc%20d?versionId=3&x=[1]#frag:ment".to_owned(),
            ..ClaimCheck::new()
        }
        .draft(),
    );
    set.add(
        "v2_payload_ref_urn",
        "A `uri` with no authority (`urn:`), a scheme with `+`, `-` and `.`: not rewritten into a URL.",
        &ClaimCheck {
            uri: "x-store+v1.2:urn:sha256:9f86d081;key=a,b".to_owned(),
            ..ClaimCheck::new()
        }
        .draft(),
    );
    let mut with_in_flight = ClaimCheck::new().draft();
    with_in_flight.status = "IN_FLIGHT";
    with_in_flight.attempt_count = 1;
    with_in_flight.next_attempt_ms = None;
    with_in_flight.lease_expires_ms = Some(T0 + 31_000);
    with_in_flight.attempts = vec![Attempt::in_flight(1, T0 + 1_000)];
    set.add(
        "v2_payload_ref_in_flight",
        "A claim-check envelope in flight, with its `origin` and no payload.",
        &with_in_flight,
    );
}

/// What else stores are known to mangle.
fn mangling(set: &mut Set) {
    set.add(
        "v1_empty_vs_null_unknown",
        "Unknown members \"\", null, `[]` and `{}` side by side: a store that conflates empty and null (Oracle's \"\" as NULL, drop-empty serialisers) changes some.",
        &Draft {
            unknown: unknown(&[
                ("empty_string", "\"\""),
                ("null", "null"),
                ("empty_array", "[]"),
                ("empty_object", "{}"),
                ("string_null", "\"null\""),
                ("zero", "0"),
                ("false", "false"),
            ]),
            ..Draft::pending(1)
        },
    );
    set.add(
        "v1_unknown_arrays_of_objects",
        "Unknown arrays of objects whose members differ from element to element, and an array of arrays: a store that infers one schema per array (Parquet, BigQuery) adds nulls or drops members.",
        &Draft {
            unknown: unknown(&[
                ("items", "[{\"a\":1},{\"b\":\"x\"},{\"a\":null,\"c\":[]},{}]"),
                ("matrix", "[[1,2],[],[\"three\",[4]]]"),
                ("mixed", "[1,\"1\",1.0,true,null]"),
            ]),
            ..Draft::pending(1)
        },
    );
    set.add(
        "v1_detail_nested_stack_trace",
        "A `detail` that is itself an error with a nested cause and a stack: a store that flattens `detail` into columns loses structure.",
        &Draft::dead(
            1,
            Error::new("WrappedError", "outer").detail(
                "{\"cause\":{\"type\":\"IOError\",\"message\":\"disk full\",\"cause\":null},\"frames\":[\"a.py:1\",\"b.py:2\"],\"retryable\":false}",
            ),
        ),
    );
    set.add(
        "v2_everything_set",
        "Version 2 with every optional member set and unknown members at every level at once: the store's full mapping in one envelope.",
        &everything_set(),
    );
    set.add(
        "v1_everything_set",
        "Version 1 with every optional member set and unknown members at every level at once.",
        &Draft {
            version: 1,
            payload: Some(b"hello".to_vec()),
            payload_ref: Member::Null,
            ..everything_set()
        },
    );
}

/// A version 2 envelope with every member set, unknown members at every level.
fn everything_set() -> Draft {
    let mut draft = ClaimCheck {
        unknown: unknown(&[("region", "\"eu\"")]),
        ..ClaimCheck::new()
    }
    .draft();
    draft.handler_version = Member::Set(string("1.2.3"));
    draft.headers = vec![
        ("traceparent".to_owned(), "00-abc-def-01".to_owned()),
        ("x-tenant".to_owned(), "acme".to_owned()),
    ];
    draft.origin = Origin {
        source: Some("api".to_owned()),
        submitted_by: Some("alice".to_owned()),
        unknown: unknown(&[("ip", "\"192.0.2.1\"")]),
    };
    draft.status = "DEAD";
    draft.attempt_count = 2;
    draft.redrive_count = 1;
    draft.next_attempt_ms = None;
    draft.attempts = vec![
        Attempt::finished(1, T0 + 1_000, T0 + 1_500, "RETRYABLE_FAILURE")
            .error(
                Error::new("TimeoutError", "timed out")
                    .detail("{\"after_ms\":500}")
                    .stack("at call (x.js:1:1)")
                    .unknown(&[("error_extra", "1")]),
            )
            .unknown(&[("worker", "\"w-1\"")]),
        Attempt::finished(1, T0 + 2_000, T0 + 2_100, "PERMANENT_FAILURE")
            .error(Error::new("ValueError", "bad").null_stack())
            .unknown(&[("worker", "\"w-2\"")]),
    ];
    draft.unknown = unknown(&[("trace", "{\"id\":\"t\",\"spans\":[1,2]}")]);
    draft
}
