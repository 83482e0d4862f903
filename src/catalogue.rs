//! The catalogue of codes: for every [`ErrorCode`], what the rule is, where it is reported,
//! a line that gets it and how to fix it. `rdq-envelope explain CODE` prints an entry; the
//! code sections of docs/envelope.md are checked against it, and every example is run through
//! the command it names and must get exactly its code (tests/it/explain.rs).
//!
//! ```
//! use rdq_envelope::catalogue::{self, ExampleLine};
//! use rdq_envelope::ErrorCode;
//!
//! let entry = catalogue::entry(ErrorCode::InvalidId).unwrap();
//! assert_eq!(entry.summary, "`id` is not a canonical ULID");
//! assert_eq!(entry.example.args, ["validate"]);
//! assert!(matches!(entry.example.line, ExampleLine::Edit { version: 1, .. }));
//! assert_eq!(catalogue::lookup("invalid_id"), Some(ErrorCode::InvalidId));
//! assert_eq!(catalogue::closest("INVALID_IDD"), Some(ErrorCode::InvalidId));
//! ```

use crate::diagnostic::ErrorCode;

/// The valid version 1 envelope of docs/envelope.md#what-an-envelope-is, which most examples
/// change in one place (583 bytes).
pub(crate) const VALID_V1: &str = r#"{"envelope_version":1,"id":"01HWT0D7G0Q8V9W2R4T6Y8A0B2","queue":"billing.invoices","handler_ref":"invoice.render","payload":"eyJuIjoxfQ==","payload_content_type":"application/json","headers":{"rdq.source":"api","traceparent":"00-abc"},"status":"DEAD","attempt_count":1,"redrive_count":0,"next_attempt_at":null,"lease_expires_at":null,"created_at":"2024-05-01T12:00:00.000Z","attempts":[{"attempt_no":1,"started_at":"2024-05-01T12:00:01.000Z","finished_at":"2024-05-01T12:00:01.250Z","outcome":"PERMANENT_FAILURE","error":{"type":"java.lang.IllegalStateException","message":"boom"}}]}"#;

/// The same task as version 2: what `rdq-envelope migrate` writes from [`VALID_V1`].
pub(crate) const VALID_V2: &str = r#"{"envelope_version":2,"id":"01HWT0D7G0Q8V9W2R4T6Y8A0B2","queue":"billing.invoices","handler_ref":"invoice.render","payload":"eyJuIjoxfQ==","payload_content_type":"application/json","headers":{"traceparent":"00-abc"},"origin":{"source":"api"},"status":"DEAD","attempt_count":1,"redrive_count":0,"next_attempt_at":null,"lease_expires_at":null,"created_at":"2024-05-01T12:00:00.000Z","attempts":[{"attempt_no":1,"started_at":"2024-05-01T12:00:01.000Z","finished_at":"2024-05-01T12:00:01.250Z","duration_ms":250,"outcome":"PERMANENT_FAILURE","error":{"type":"java.lang.IllegalStateException","message":"boom"}}]}"#;

/// One code's entry.
#[derive(Debug)]
pub struct Entry {
    /// The code.
    pub code: ErrorCode,
    /// One line, the first sentence of the code's section in docs/envelope.md.
    pub summary: &'static str,
    /// The rule, a paragraph.
    pub rule: &'static str,
    /// Where it is reported: each RFC 6901 pointer form (`i` an attempt's index, `<key>` a
    /// member's name; `""` the whole line), and when.
    pub pointers: &'static [(&'static str, &'static str)],
    /// A line that gets this code, and only this one.
    pub example: Example,
    /// How to fix a line that gets it.
    pub fix: &'static str,
    /// Where the docs describe it, relative to `docs/` (`envelope.md#bad_attempt`).
    pub docs: &'static [&'static str],
}

/// A line and the command that reports its code.
#[derive(Debug)]
pub struct Example {
    /// The line, as a template ([`Example::shown`], [`Example::line`]).
    pub line: ExampleLine,
    /// The subcommand and its options that report the code on this line
    /// (`["validate", "--max-line-bytes", "100"]`).
    pub args: &'static [&'static str],
    /// Where the line gets the code (one diagnostic per pointer).
    pub pointers: &'static [&'static str],
}

/// An example line. Its text may hold `<<TEXT*N>>`, which stands for TEXT repeated N times.
#[derive(Debug)]
#[non_exhaustive]
pub enum ExampleLine {
    /// A whole line.
    Whole(&'static str),
    /// The valid envelope of this version (the catalogue's `VALID_V1`, `VALID_V2`), unchanged.
    Valid(u32),
    /// The valid envelope of `version` with its first `from` replaced by `to`.
    Edit {
        /// 1 or 2.
        version: u32,
        /// Text of the valid line.
        from: &'static str,
        /// What replaces it.
        to: &'static str,
    },
}

fn valid(version: u32) -> &'static str {
    if version == 1 {
        VALID_V1
    } else {
        VALID_V2
    }
}

impl Example {
    /// The line with its `<<TEXT*N>>` templates kept, as a person reads it.
    pub fn shown(&self) -> String {
        match self.line {
            ExampleLine::Whole(text) => text.to_owned(),
            ExampleLine::Valid(version) => valid(version).to_owned(),
            ExampleLine::Edit { version, from, to } => valid(version).replacen(from, to, 1),
        }
    }

    /// The line itself, its templates expanded.
    pub fn line(&self) -> String {
        expand(&self.shown())
    }
}

/// `text` with every `<<TEXT*N>>` replaced by N times TEXT.
fn expand(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("<<") {
        out.push_str(&rest[..at]);
        let tail = &rest[at + 2..];
        let end = tail.find(">>").expect("a template ends with >>");
        let (unit, n) = tail[..end].rsplit_once('*').expect("a template is TEXT*N");
        out.push_str(&unit.repeat(n.parse().expect("a template's N is a number")));
        rest = &tail[end + 2..];
    }
    out.push_str(rest);
    out
}

/// The entry of `code`; every code the tool reports has one.
pub fn entry(code: ErrorCode) -> Option<&'static Entry> {
    CATALOGUE.iter().find(|e| e.code == code)
}

/// The code spelled `name`, ignoring ASCII case (`bad_attempt` is `BAD_ATTEMPT`).
pub fn lookup(name: &str) -> Option<ErrorCode> {
    ErrorCode::from_name(&name.to_ascii_uppercase())
}

/// The code whose name is close to `name` (ignoring case), if one is: a typo's worth away
/// ([`near`], the first in [`ErrorCode::ALL`] order among equals), or else the one code whose
/// name begins with `name` (three characters at least).
///
/// ```
/// use rdq_envelope::{catalogue, ErrorCode};
/// assert_eq!(catalogue::closest("malformed_jsn"), Some(ErrorCode::MalformedJson));
/// assert_eq!(catalogue::closest("xyz"), None);
/// assert_eq!(catalogue::closest(""), None);
/// ```
pub fn closest(name: &str) -> Option<ErrorCode> {
    let name = name.to_ascii_uppercase();
    let names = ErrorCode::ALL.iter().map(|code| code.as_str());
    if let Some(found) = near(&name, names) {
        return ErrorCode::from_name(found);
    }
    let mut starting = ErrorCode::ALL
        .iter()
        .filter(|code| name.len() >= 3 && code.as_str().starts_with(&name));
    match (starting.next(), starting.next()) {
        (Some(code), None) => Some(*code),
        _ => None,
    }
}

/// The candidate nearest to `name` by edit distance, when it is near enough to be what was
/// meant: at most a quarter of the longer name's characters differ (one typo in a short
/// name, a few in a long one). Nothing is near an empty name. The first among equals.
///
/// ```
/// use rdq_envelope::catalogue::near;
/// let names = ["queue", "status", "attempt_count"];
/// assert_eq!(near("staus", names), Some("status"));
/// assert_eq!(near("atempt_cont", names), Some("attempt_count"));
/// assert_eq!(near("priority", names), None);
/// ```
#[doc(hidden)]
pub fn near<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let (distance, best) = candidates
        .into_iter()
        .map(|candidate| (levenshtein(name, candidate), candidate))
        .min_by_key(|(distance, _)| *distance)?;
    let longer = name.chars().count().max(best.chars().count());
    (!name.is_empty() && distance * 4 <= longer).then_some(best)
}

/// The number of one-character insertions, deletions and substitutions from `a` to `b`.
fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

const fn edit(version: u32, from: &'static str, to: &'static str) -> ExampleLine {
    ExampleLine::Edit { version, from, to }
}

const VALIDATE: &[&str] = &["validate"];

/// Every entry, in [`ErrorCode::ALL`] order.
pub static CATALOGUE: &[Entry] = &[
    Entry {
        code: ErrorCode::LineTooLong,
        summary: "The line's content is longer than the reader cap",
        rule: "Before anything else, the reader cuts the input into lines. A line whose content (without its LF or CR LF) is longer than the reader cap, 16 MiB by default (`--max-line-bytes N`), is never held whole: its first 65,536 bytes are kept for the rejects record and the rest is counted as it streams past. The cap is checked before a line is judged blank.",
        pointers: &[("\"\"", "the whole line")],
        example: Example {
            line: ExampleLine::Valid(1),
            args: &["validate", "--max-line-bytes", "100"],
            pointers: &[""],
        },
        fix: "Raise `--max-line-bytes` if the line is a real envelope (its size is still held to the envelope size limit); otherwise the input is not JSON Lines: look for a missing line break.",
        docs: &["envelope.md#line_too_long", "envelope.md#reader-cap"],
    },
    Entry {
        code: ErrorCode::InvalidUtf8,
        summary: "Bytes that are not UTF-8, or an unpaired surrogate escape",
        rule: "A line is UTF-8 text. Bytes that are not UTF-8 (Latin-1, a cut multi-byte character) are reported once per line. A `\\uD800`-`\\uDFFF` escape that is not part of a surrogate pair decodes to no character, and is reported once per string that holds one, keys included.",
        pointers: &[
            ("\"\"", "bytes that are not UTF-8"),
            ("/<key>...", "the string that holds an unpaired surrogate (in a key: that member)"),
        ],
        example: Example {
            line: ExampleLine::Whole(r#"{"a":"\ud800"}"#),
            args: VALIDATE,
            pointers: &["/a"],
        },
        fix: "Re-export the data as UTF-8 (convert from its real encoding, e.g. `iconv -f latin1 -t utf-8`); replace an unpaired surrogate escape with the character meant, or `\\ufffd`.",
        docs: &["envelope.md#invalid_utf8", "envelope.md#encoding"],
    },
    Entry {
        code: ErrorCode::MalformedJson,
        summary: "Not RFC 8259 JSON, or data after the value",
        rule: "A line is one RFC 8259 JSON value and nothing after it but white space: no trailing commas, comments, single quotes, `NaN`, or a second value. The checking of the line ends here.",
        pointers: &[("\"\"", "the whole line")],
        example: Example {
            line: ExampleLine::Whole(r#"{"a":1,}"#),
            args: VALIDATE,
            pointers: &[""],
        },
        fix: "Fix the JSON at the byte offset the message names; a line cut short or two objects on one line usually mean a broken export or a missing line break.",
        docs: &["envelope.md#malformed_json", "envelope.md#encoding"],
    },
    Entry {
        code: ErrorCode::NotAnObject,
        summary: "One well-formed JSON value that is not an object",
        rule: "Each line holds one JSON object; an array, string, number, `true`, `false` or `null` is not an envelope. The checking of the line ends here.",
        pointers: &[("\"\"", "the whole line")],
        example: Example {
            line: ExampleLine::Whole("[1,2]"),
            args: VALIDATE,
            pointers: &[""],
        },
        fix: "Write one envelope object per line: a JSON array of envelopes becomes one line per element (`jq -c '.[]'`).",
        docs: &["envelope.md#not_an_object", "envelope.md#one-object-per-line"],
    },
    Entry {
        code: ErrorCode::DuplicateKey,
        summary: "An object repeats a key, anywhere in the line",
        rule: "No object anywhere in the line, unknown fields included, may repeat a key: readers that keep the first and readers that keep the last would see different envelopes. Keys are compared after unescaping (`\"a\"` and `\"\\u0061\"` are the same key).",
        pointers: &[("/<path>/<key>", "the repeated member, once per repetition")],
        example: Example {
            line: edit(1, r#""traceparent":"00-abc""#, r#""traceparent":"00-abc","traceparent":"00-def""#),
            args: VALIDATE,
            pointers: &["/headers/traceparent"],
        },
        fix: "Keep one member per key: decide which value is right and remove the other.",
        docs: &["envelope.md#duplicate_key", "envelope.md#duplicate-keys"],
    },
    Entry {
        code: ErrorCode::NestingTooDeep,
        summary: "Arrays and objects nested deeper than 128",
        rule: "Arrays and objects may nest 128 deep, the top-level object being depth 1; deeper is refused, never a crash. The checking of the line ends here.",
        pointers: &[("\"\"", "the whole line")],
        example: Example {
            line: ExampleLine::Whole(r#"{"a":<<[*128>><<]*128>>}"#),
            args: VALIDATE,
            pointers: &[""],
        },
        fix: "Flatten the data: an envelope's own fields nest 4 deep; deep structures belong in the payload, which is base64 and not nested.",
        docs: &["envelope.md#nesting_too_deep", "envelope.md#nesting-depth"],
    },
    Entry {
        code: ErrorCode::MissingField,
        summary: "A required member is absent",
        rule: "Every required member of the envelope, of each attempt and of each error object must be present (`null` is present: it is then the value's type that is judged). A missing `envelope_version` ends the field checks; in version 2, `origin` and each attempt's `duration_ms` are required, and `payload` unless a `payload_ref` is set.",
        pointers: &[("/<member>", "the missing member: /next_attempt_at, /attempts/i/outcome, /attempts/i/error/message, /origin, ...")],
        example: Example {
            line: edit(1, r#""next_attempt_at":null,"#, ""),
            args: VALIDATE,
            pointers: &["/next_attempt_at"],
        },
        fix: "Add the member; a field without a value is written as `null` where the rules allow it (`next_attempt_at`, `lease_expires_at`, `finished_at`).",
        docs: &["envelope.md#missing_field", "envelope.md#missing-null-and-wrong-types"],
    },
    Entry {
        code: ErrorCode::WrongType,
        summary: "A value of the wrong JSON type",
        rule: "Each field has one JSON type: strings are strings, integers are JSON integers (no fraction or exponent: `1.0` and `1e0` are not integers), objects are objects; `null` is only allowed where the field allows it.",
        pointers: &[
            ("/<member>", "the value: /envelope_version, /headers/<key>, /attempts/i/error/type, ..."),
            ("/attempts/i", "an attempt that is not an object"),
        ],
        example: Example {
            line: edit(1, r#""envelope_version":1"#, r#""envelope_version":"1""#),
            args: VALIDATE,
            pointers: &["/envelope_version"],
        },
        fix: "Write the value as its type: `1` not `\"1\"` or `1.0`, `{}` not `null` for `headers`, a string header value.",
        docs: &["envelope.md#wrong_type", "envelope.md#missing-null-and-wrong-types"],
    },
    Entry {
        code: ErrorCode::OutOfRange,
        summary: "A JSON integer outside its range",
        rule: "`attempt_count` and `redrive_count` are from 0 to 4294967295, `attempt_no` from 1 to 4294967295. `redrive` also refuses to redrive a `DEAD` task whose `redrive_count` is already 4294967295.",
        pointers: &[("/<member>", "the value: /attempt_count, /redrive_count, /attempts/i/attempt_no")],
        example: Example {
            line: edit(1, r#""redrive_count":0"#, r#""redrive_count":4294967296"#),
            args: VALIDATE,
            pointers: &["/redrive_count"],
        },
        fix: "Correct the count; a negative or huge count usually comes from a bad export or an overflow in the writer.",
        docs: &["envelope.md#out_of_range", "envelope.md#json-integers"],
    },
    Entry {
        code: ErrorCode::UnsupportedVersion,
        summary: "An `envelope_version` this tool does not read, or not the one `--require-version` asks for",
        rule: "The tool reads versions 1 and 2. Any other `envelope_version` ends the field checks (the size limit is still checked). With `validate --require-version N`, a line of the other supported version gets it too, besides its other errors.",
        pointers: &[("/envelope_version", "always")],
        example: Example {
            line: ExampleLine::Valid(1),
            args: &["validate", "--require-version", "2"],
            pointers: &["/envelope_version"],
        },
        fix: "Migrate the line to the version required (`rdq-envelope migrate --to N`); a version this tool does not know needs a newer rdq-envelope.",
        docs: &["envelope.md#unsupported_version", "envelope.md#envelope_version"],
    },
    Entry {
        code: ErrorCode::InvalidId,
        summary: "`id` is not a canonical ULID",
        rule: "`id` is 26 characters of upper-case Crockford base32 (no I, L, O or U), the first from 0 to 7. Lower case is not canonical: two spellings of one ID would compare unequal.",
        pointers: &[("/id", "always")],
        example: Example {
            line: edit(1, "01HWT0D7G0Q8V9W2R4T6Y8A0B2", "01hwt0d7g0q8v9w2r4t6y8a0b2"),
            args: VALIDATE,
            pointers: &["/id"],
        },
        fix: "Write the ULID in upper case; an ID that is not a ULID at all needs the task's real ID.",
        docs: &["envelope.md#invalid_id", "envelope.md#id"],
    },
    Entry {
        code: ErrorCode::InvalidName,
        summary: "A `queue`, `handler_ref` or `handler_version` that breaks its charset or length",
        rule: "`queue` and `handler_ref` are 1 to 240 characters of `a-z 0-9 . _ -`. `handler_version` is 1 to 240 bytes without control characters.",
        pointers: &[("/queue, /handler_ref, /handler_version", "the field")],
        example: Example {
            line: edit(1, r#""queue":"billing.invoices""#, r#""queue":"Billing""#),
            args: VALIDATE,
            pointers: &["/queue"],
        },
        fix: "Use the name as rdq spells it: lower case, with `.`, `_` or `-` for other separators.",
        docs: &["envelope.md#invalid_name", "envelope.md#queue-and-handler_ref"],
    },
    Entry {
        code: ErrorCode::InvalidBase64,
        summary: "`payload` is not canonical standard base64",
        rule: "`payload` is standard base64 (`A-Z a-z 0-9 + /`) with `=` padding, no white space, no URL-safe alphabet, and the unused bits of the last character zero, so that each payload has one spelling.",
        pointers: &[("/payload", "always")],
        example: Example {
            line: edit(1, r#""eyJuIjoxfQ==""#, r#""eyJuIjoxfQ=""#),
            args: VALIDATE,
            pointers: &["/payload"],
        },
        fix: "Re-encode the payload's bytes with a standard, padded base64 encoder.",
        docs: &["envelope.md#invalid_base64", "envelope.md#payload"],
    },
    Entry {
        code: ErrorCode::InvalidContentType,
        summary: "`payload_content_type` is not a media type of the grammar, or over 255 bytes",
        rule: "`payload_content_type` is `type/subtype` with optional `; name=value` parameters, each part of the strict grammar, at most 255 bytes.",
        pointers: &[("/payload_content_type", "always")],
        example: Example {
            line: edit(1, r#""application/json""#, r#""text/plain;""#),
            args: VALIDATE,
            pointers: &["/payload_content_type"],
        },
        fix: "Write a media type such as `application/json` or `text/plain; charset=utf-8`.",
        docs: &["envelope.md#invalid_content_type", "envelope.md#payload_content_type"],
    },
    Entry {
        code: ErrorCode::PayloadRefReserved,
        summary: "A version 1 (or submitted) `payload_ref` that is set",
        rule: "In version 1 and in the submit subset, `payload_ref` is reserved: absent or `null`. Claim-check payloads are version 2.",
        pointers: &[("/payload_ref", "always")],
        example: Example {
            line: edit(1, r#""headers""#, r#""payload_ref":5,"headers""#),
            args: VALIDATE,
            pointers: &["/payload_ref"],
        },
        fix: "Remove `payload_ref` (or make it `null`); a claim-checked payload needs a version 2 envelope.",
        docs: &["envelope.md#payload_ref_reserved", "envelope.md#payload_ref-in-version-1"],
    },
    Entry {
        code: ErrorCode::InvalidPayloadRef,
        summary: "A version 2 `payload_ref` of the wrong shape, or a `payload` beside a set one",
        rule: "A set version 2 `payload_ref` is an object: `uri` a URI with a scheme, `sha256` 64 lower-case hex digits, `size` a JSON integer. A bad or missing member is this code (never `WRONG_TYPE` or `MISSING_FIELD`), and so is a `payload` beside it.",
        pointers: &[
            ("/payload_ref", "not an object"),
            ("/payload_ref/uri, /payload_ref/sha256, /payload_ref/size", "a bad or missing member"),
            ("/payload", "a payload beside a set payload_ref"),
        ],
        example: Example {
            line: edit(2, r#""payload":"eyJuIjoxfQ==""#, r#""payload_ref":"s3://x""#),
            args: VALIDATE,
            pointers: &["/payload_ref"],
        },
        fix: "Write `{\"uri\":...,\"sha256\":...,\"size\":...}`, and remove `payload` when the payload is claim-checked.",
        docs: &["envelope.md#invalid_payload_ref", "envelope.md#claim-check-payloads"],
    },
    Entry {
        code: ErrorCode::InvalidHeader,
        summary: "An empty header key, or in version 2 a header that moved into `origin`",
        rule: "A header key is never empty. In version 2, `rdq.source` and `rdq.submitted_by` live in `origin` (`origin.source`, `origin.submitted_by`) and must not be in `headers`.",
        pointers: &[("/headers/<key>", "the header (`/headers/` for the empty key)")],
        example: Example {
            line: edit(1, r#""rdq.source":"api""#, r#""":"api""#),
            args: VALIDATE,
            pointers: &["/headers/"],
        },
        fix: "Name the header; in version 2, move `rdq.source` and `rdq.submitted_by` into `origin` (`rdq-envelope migrate` does it from version 1).",
        docs: &["envelope.md#invalid_header", "envelope.md#typed-origin"],
    },
    Entry {
        code: ErrorCode::ReservedHeader,
        summary: "In the submit subset, a header key that begins with `rdq.` in any letter case",
        rule: "`rdq.*` headers are set by the server. `validate --submit` refuses them in a submitted task, whatever the case of `rdq.`.",
        pointers: &[("/headers/<key>", "the header")],
        example: Example {
            line: ExampleLine::Whole(r#"{"queue":"mail","handler_ref":"send","payload":"e30=","payload_content_type":"application/json","headers":{"RDQ.source":"me"}}"#),
            args: &["validate", "--submit"],
            pointers: &["/headers/RDQ.source"],
        },
        fix: "Remove the header from what is submitted, or rename it outside the `rdq.` namespace.",
        docs: &["envelope.md#reserved_header", "envelope.md#the-submit-subset"],
    },
    Entry {
        code: ErrorCode::ServerAssignedField,
        summary: "In the submit subset, a field only the server assigns, present even as `null`",
        rule: "`validate --submit` judges what a client sends: `envelope_version`, `id`, `status`, `attempt_count`, `redrive_count`, `next_attempt_at`, `lease_expires_at`, `created_at` and `attempts` are assigned by the server and must be absent.",
        pointers: &[("/<member>", "the field")],
        example: Example {
            line: ExampleLine::Whole(r#"{"id":null,"queue":"mail","handler_ref":"send","payload":"e30=","payload_content_type":"application/json"}"#),
            args: &["validate", "--submit"],
            pointers: &["/id"],
        },
        fix: "Remove the field from what is submitted; to check stored envelopes, run `validate` without `--submit`.",
        docs: &["envelope.md#server_assigned_field", "envelope.md#the-submit-subset"],
    },
    Entry {
        code: ErrorCode::UnknownStatus,
        summary: "A `status` outside the version's set",
        rule: "Version 1 knows `PENDING`, `IN_FLIGHT`, `SUCCEEDED` and `DEAD`; version 2 adds `CANCELLED`. The spelling is exact (upper case).",
        pointers: &[("/status", "always")],
        example: Example {
            line: edit(1, r#""status":"DEAD""#, r#""status":"FAILED""#),
            args: VALIDATE,
            pointers: &["/status"],
        },
        fix: "Map the status to one of the version's set; `CANCELLED` needs version 2.",
        docs: &["envelope.md#unknown_status", "envelope.md#status"],
    },
    Entry {
        code: ErrorCode::UnknownOutcome,
        summary: "An attempt `outcome` outside the four",
        rule: "A finished attempt's `outcome` is `SUCCESS`, `RETRYABLE_FAILURE`, `PERMANENT_FAILURE` or `LEASE_EXPIRED`; an attempt in flight has `null`.",
        pointers: &[("/attempts/i/outcome", "always")],
        example: Example {
            line: edit(1, r#""outcome":"PERMANENT_FAILURE""#, r#""outcome":"TIMEOUT""#),
            args: VALIDATE,
            pointers: &["/attempts/0/outcome"],
        },
        fix: "Map the outcome to one of the four (a timeout is usually `RETRYABLE_FAILURE`).",
        docs: &["envelope.md#unknown_outcome", "envelope.md#the-attempt-record"],
    },
    Entry {
        code: ErrorCode::InvalidTimestamp,
        summary: "Not a timestamp of the strict form and a real date and time",
        rule: "Every timestamp is `YYYY-MM-DDTHH:MM:SS.mmmZ`: UTC, exactly three fraction digits, upper-case `T` and `Z`, no offset, a real date (no February 29 outside leap years) and time (no leap second).",
        pointers: &[("/<member>", "the field: /created_at, /next_attempt_at, /attempts/i/started_at, ...")],
        example: Example {
            line: edit(1, r#""created_at":"2024-05-01T12:00:00.000Z""#, r#""created_at":"2024-05-01T12:00:00.000+00:00""#),
            args: VALIDATE,
            pointers: &["/created_at"],
        },
        fix: "Write the time in UTC as `2024-05-01T12:00:00.000Z`.",
        docs: &["envelope.md#invalid_timestamp", "envelope.md#timestamps"],
    },
    Entry {
        code: ErrorCode::FieldTooLong,
        summary: "An error `message` over 4096 bytes or `stack` over 65536 bytes that is not truncated by the rule",
        rule: "A writer that cuts an error `message` or `stack` keeps at most the limit's bytes (cut at a character boundary, so 3 bytes fewer at most) and appends `…[truncated]`. A longer value without that form is refused.",
        pointers: &[("/attempts/i/error/message, /attempts/i/error/stack", "the value")],
        example: Example {
            line: edit(1, r#""message":"boom""#, r#""message":"<<x*4097>>""#),
            args: VALIDATE,
            pointers: &["/attempts/0/error/message"],
        },
        fix: "Cut the value to the limit at a character boundary and append `…[truncated]`.",
        docs: &["envelope.md#field_too_long", "envelope.md#truncation"],
    },
    Entry {
        code: ErrorCode::BadAttempt,
        summary: "The history breaks a rule across attempts, an `outcome` disagrees with `finished_at`, or a version 2 `duration_ms` is wrong",
        rule: "Attempts are numbered from 1, each the previous one plus 1 or 1 again after a redrive (no more restarts than `redrive_count`); starts never go back and no attempt finishes before it starts; only the last may be in flight; `SUCCESS` comes last and has no error; a `LEASE_EXPIRED` attempt has an `rdq.LeaseExpired` error; in version 2, `duration_ms` is `finished_at - started_at`.",
        pointers: &[
            ("/attempts/i/attempt_no", "a number out of sequence"),
            ("/attempts", "more restarts than redrive_count"),
            ("/attempts/i/started_at, /attempts/i/finished_at", "times out of order"),
            ("/attempts/i/outcome, /attempts/i/error", "an outcome or error that breaks its rule"),
            ("/attempts/i/duration_ms", "a wrong duration (version 2)"),
        ],
        example: Example {
            line: edit(1, r#""attempt_no":1"#, r#""attempt_no":2"#),
            args: VALIDATE,
            pointers: &["/attempts/0/attempt_no"],
        },
        fix: "Correct the attempt the pointer names; a history edited by hand is the usual cause.",
        docs: &["envelope.md#bad_attempt", "envelope.md#rules-across-attempts"],
    },
    Entry {
        code: ErrorCode::InconsistentState,
        summary: "`status` disagrees with the timestamps or the attempts, or `attempt_count` is over the number of attempts",
        rule: "Each status fixes `next_attempt_at`, `lease_expires_at` and the last attempt: a `DEAD` task has no next attempt and no lease, and at least one finished attempt; `IN_FLIGHT` has a lease and an attempt in flight; `SUCCEEDED` ends with `SUCCESS`. `attempt_count` is at most the number of attempts.",
        pointers: &[("/attempt_count, /next_attempt_at, /lease_expires_at, /attempts", "the value that disagrees")],
        example: Example {
            line: edit(1, r#""next_attempt_at":null"#, r#""next_attempt_at":"2024-05-01T12:00:00.000Z""#),
            args: VALIDATE,
            pointers: &["/next_attempt_at"],
        },
        fix: "Make the fields agree with the status (or the status with the fields), as the task really is.",
        docs: &["envelope.md#inconsistent_state", "envelope.md#status-consistency"],
    },
    Entry {
        code: ErrorCode::PayloadTooLarge,
        summary: "The line is longer than its queue's size limit, or a line a command writes would be",
        rule: "A line's length must not exceed its queue's limit: 1 MiB by default (`--max-envelope-bytes N`), or the queue's own (`--queue-limit QUEUE=N`). A line over every limit is not even parsed. A line a command writes (migrated, redriven, imported) is held to the same limit.",
        pointers: &[("\"\"", "the whole line")],
        example: Example {
            line: ExampleLine::Valid(1),
            args: &["validate", "--max-envelope-bytes", "100"],
            pointers: &[""],
        },
        fix: "Claim-check the payload (a version 2 `payload_ref`), shorten the error texts, or raise the limit where the queue allows larger envelopes.",
        docs: &["envelope.md#payload_too_large", "envelope.md#size-limit"],
    },
    Entry {
        code: ErrorCode::CannotDowngrade,
        summary: "A 2 → 1 migration of an envelope version 1 cannot represent",
        rule: "`migrate --to 1` refuses a version 2 envelope that version 1 cannot hold: status `CANCELLED`, a set `payload_ref`, or a member of `origin` other than `source` and `submitted_by`; one diagnostic per value that blocks it.",
        pointers: &[
            ("/status", "CANCELLED"),
            ("/payload_ref", "a set payload_ref"),
            ("/origin/<key>", "an unknown member of origin"),
        ],
        example: Example {
            line: edit(2, r#""status":"DEAD""#, r#""status":"CANCELLED""#),
            args: &["migrate", "--to", "1"],
            pointers: &["/status"],
        },
        fix: "Keep such envelopes in version 2, or change what blocks the downgrade (resolve the claim-check into `payload`, drop the extra `origin` member) if losing it is acceptable.",
        docs: &["envelope.md#cannot_downgrade", "migrations.md#cannot_downgrade"],
    },
    Entry {
        code: ErrorCode::MigrationConflict,
        summary: "A 1 → 2 migration that would overwrite an unknown field",
        rule: "In version 1, a top-level `origin` and an attempt's `duration_ms` are unknown fields, which version 2 defines. `migrate --to 2` refuses to overwrite them; one diagnostic per colliding member.",
        pointers: &[
            ("/origin", "a top-level origin"),
            ("/attempts/i/duration_ms", "an attempt's duration_ms"),
        ],
        example: Example {
            line: edit(1, r#""headers""#, r#""origin":{"x":1},"headers""#),
            args: &["migrate", "--to", "2"],
            pointers: &["/origin"],
        },
        fix: "Rename or remove the colliding member in the version 1 line, then migrate.",
        docs: &["envelope.md#migration_conflict", "migrations.md#migration_conflict"],
    },
    Entry {
        code: ErrorCode::NotDead,
        summary: "`redrive` of a task that is not `DEAD`",
        rule: "`redrive` turns `DEAD` tasks into resubmittable ones; a valid line of any other status is refused and left as it was.",
        pointers: &[("/status", "always")],
        example: Example {
            line: edit(2, r#""status":"DEAD""#, r#""status":"CANCELLED""#),
            args: &["redrive"],
            pointers: &["/status"],
        },
        fix: "Redrive only the dead letters: `rdq-envelope filter --status DEAD` first.",
        docs: &["envelope.md#not_dead", "cli.md#redrive"],
    },
    Entry {
        code: ErrorCode::RedriveLimit,
        summary: "`redrive --max-redrives N` of a task already redriven N times or more",
        rule: "`--max-redrives N` keeps a poison message from looping forever: a `DEAD` task whose `redrive_count` is already N or more is refused and left as it was; the others are redriven.",
        pointers: &[("/redrive_count", "always")],
        example: Example {
            line: edit(2, r#""redrive_count":0"#, r#""redrive_count":3"#),
            args: &["redrive", "--max-redrives", "3"],
            pointers: &["/redrive_count"],
        },
        fix: "Look at why the task keeps failing (`rdq-envelope show ID`) before sending it again; raise the limit only on purpose.",
        docs: &["envelope.md#redrive_limit", "cli.md#redrive"],
    },
    Entry {
        code: ErrorCode::IdTimeMismatch,
        summary: "The ULID's time and `created_at` differ by more than 1000 ms",
        rule: "A ULID holds its creation time (48 bits of milliseconds). A warning, never a reason to reject: it is computed whenever `id` and `created_at` are valid.",
        pointers: &[("/id", "always")],
        example: Example {
            line: edit(1, r#""created_at":"2024-05-01T12:00:00.000Z""#, r#""created_at":"2024-05-01T11:59:58.000Z""#),
            args: &["validate", "--warnings"],
            pointers: &["/id"],
        },
        fix: "Usually nothing: it points at IDs minted apart from the task (a re-keyed import) or at clock skew; check the writer if it is frequent.",
        docs: &["envelope.md#id_time_mismatch", "envelope.md#warnings"],
    },
    Entry {
        code: ErrorCode::CreatedAfterStart,
        summary: "`created_at` is later than the first attempt's `started_at`",
        rule: "A task starts after it is created; the other order means clock skew between the writers. A warning, never a reason to reject.",
        pointers: &[("/created_at", "always")],
        example: Example {
            line: edit(1, r#""started_at":"2024-05-01T12:00:01.000Z""#, r#""started_at":"2024-05-01T11:59:59.500Z""#),
            args: &["validate", "--warnings"],
            pointers: &["/created_at"],
        },
        fix: "Usually nothing; synchronise the clocks of the servers that wrote the times if it is frequent.",
        docs: &["envelope.md#created_after_start", "envelope.md#warnings"],
    },
    Entry {
        code: ErrorCode::ChokaqLimit,
        summary: "A ChokaQ column over ChokaQ's own limit, found while importing",
        rule: "`migrate --from chokaq` reports ChokaQ's own column limits (`Queue`, `Type`, `IdempotencyKey` 255 characters, `CreatedBy` 100, `Tags` 1000, `Payload` `--chokaq-max-payload-bytes N`), one per column. A warning: real DLQ rows can exceed them, and the row is imported.",
        pointers: &[("/<Column>", "the ChokaQ column: /Queue, /Payload, ...")],
        example: Example {
            line: ExampleLine::Whole(r#"{"Id":"job-1","Queue":"emails","Type":"Acme.SendWelcome","Payload":"{\"To\":\"a@b.c\"}","FailureReason":7,"AttemptCount":1,"CreatedAtUtc":"2026-04-30 14:32:07","FailedAtUtc":"2026-04-30T14:33:00"}"#),
            args: &["migrate", "--from", "chokaq", "--chokaq-max-payload-bytes", "10"],
            pointers: &["/Payload"],
        },
        fix: "Nothing for rdq; the warning tells which rows ChokaQ itself could not have held.",
        docs: &["envelope.md#chokaq_limit", "chokaq.md#chokaq-limits"],
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_one_entry_in_the_order_of_all() {
        for &code in ErrorCode::ALL {
            let entry = entry(code).unwrap_or_else(|| panic!("no entry for {code}"));
            assert_eq!(entry.code, code);
            assert!(!entry.summary.ends_with('.'), "{code}");
            assert!(!entry.example.pointers.is_empty(), "{code}");
            assert!(
                !entry.pointers.is_empty() && !entry.docs.is_empty(),
                "{code}"
            );
        }
        let codes: Vec<_> = CATALOGUE.iter().map(|e| e.code).collect();
        assert_eq!(codes, ErrorCode::ALL);
    }

    #[test]
    fn templates_expand_and_edits_apply() {
        assert_eq!(expand("a<<xy*3>>b<<[*2>>"), "axyxyxyb[[");
        for entry in CATALOGUE {
            if let ExampleLine::Edit { version, from, .. } = entry.example.line {
                assert!(valid(version).contains(from), "{}", entry.code);
            }
            assert!(!entry.example.line().contains("<<"), "{}", entry.code);
        }
    }

    #[test]
    fn names_are_found_ignoring_case_and_near_misses_suggested() {
        assert_eq!(lookup("bad_attempt"), Some(ErrorCode::BadAttempt));
        assert_eq!(lookup("Not_Dead"), Some(ErrorCode::NotDead));
        assert_eq!(lookup("BAD-ATTEMPT"), None);
        assert_eq!(closest("BAD_ATEMPT"), Some(ErrorCode::BadAttempt));
        assert_eq!(closest("bad-attempt"), Some(ErrorCode::BadAttempt));
        assert_eq!(closest("chokaq"), Some(ErrorCode::ChokaqLimit));
        // The start of several codes names none of them.
        assert_eq!(closest("INVALID"), None);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("abc", "abc"), 0);
    }
}
