//! An owned envelope from a line the checker accepted: each known member typed, each unknown
//! member (and `detail`) kept as the exact bytes of the line.

use crate::json::{JsonParser, Value, ValueKind};

use super::super::types::{Outcome, Status, Timestamp, Ulid};
use super::super::{Checker, EnvelopeRules, RuleOptions};
use super::{
    depth, known, Attempt, AttemptError, Envelope, EnvelopeError, JsonText, Optional, Origin,
    PayloadRef, SizeLimit, UnknownMembers,
};

/// Where the raw text of a value comes from: the line and its tape's node spans, or (for a
/// view with no line) the tape itself.
struct Texts<'a> {
    line: &'a [u8],
    spans: &'a [(usize, usize)],
}

impl Texts<'_> {
    fn of(&self, value: Value<'_>) -> JsonText {
        match self.text(value.tape_index()) {
            Some(text) => JsonText::trusted(text),
            None => {
                let mut out = Vec::new();
                value.write_json(&mut out);
                JsonText::trusted(&String::from_utf8_lossy(&out))
            }
        }
    }

    /// A key's spelling, quotes included: the node before its value.
    fn key(&self, name: &str, value: Value<'_>) -> String {
        match value.tape_index().checked_sub(1).and_then(|i| self.text(i)) {
            Some(text) => text.to_owned(),
            None => {
                let mut out = Vec::new();
                crate::json::push_string(&mut out, name);
                String::from_utf8_lossy(&out).into_owned()
            }
        }
    }

    fn text(&self, node: usize) -> Option<&str> {
        let &(from, to) = self.spans.get(node)?;
        std::str::from_utf8(self.line.get(from..to)?).ok()
    }
}

impl Envelope {
    /// Reads one line (without its terminator) as an envelope, when the checker with
    /// [`RuleOptions::default`] accepts it; else the first error. Warnings are allowed.
    ///
    /// ```
    /// use rdq_envelope::envelope::{Envelope, Status};
    ///
    /// # let line = rdq_envelope::envelope::Producer::new().submit(rdq_envelope::envelope::Submit::new("mail", "send", vec![], "text/plain")?)?.to_json();
    /// let envelope = Envelope::from_json(line.as_bytes())?;
    /// assert_eq!(envelope.status(), Status::Pending);
    /// let err = Envelope::from_json(br#"{"envelope_version":1}"#).unwrap_err();
    /// assert_eq!(err.code().as_str(), "MISSING_FIELD");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_json(line: &[u8]) -> Result<Envelope, EnvelopeError> {
        let rules =
            EnvelopeRules::new(RuleOptions::default()).map_err(|e| EnvelopeError::Invalid {
                code: crate::ErrorCode::MalformedJson,
                pointer: String::new(),
                message: e.to_string(),
            })?;
        Envelope::from_json_with(&mut Checker::new(rules), line)
    }

    /// [`Envelope::from_json`] with a checker of one's own (its options: the size limits,
    /// `--require-version`; and its buffers, reused line after line).
    ///
    /// ```
    /// use rdq_envelope::envelope::{Checker, Envelope};
    /// use rdq_envelope::{EnvelopeRules, RuleOptions};
    ///
    /// let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let line = rdq_envelope::envelope::Producer::new().submit(rdq_envelope::envelope::Submit::new("mail", "send", vec![], "text/plain")?)?.to_json();
    /// let envelope = Envelope::from_json_with(&mut checker, line.as_bytes())?;
    /// assert_eq!(envelope.queue(), "mail");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_json_with(checker: &mut Checker, line: &[u8]) -> Result<Envelope, EnvelopeError> {
        let checked = checker.check(line);
        match checked.envelope() {
            Some(view) => Ok(view.to_owned()),
            None => {
                let first = checked.verdict().errors.first();
                Err(EnvelopeError::Invalid {
                    code: first.map_or(crate::ErrorCode::MalformedJson, |d| d.code),
                    pointer: first.map(|d| d.path.clone()).unwrap_or_default(),
                    message: first.map(|d| d.message.clone()).unwrap_or_default(),
                })
            }
        }
    }
}

/// The owned envelope of a valid `line`, parsed again on a tape of its own; `None` when the
/// line does not parse (a view with no line).
pub(crate) fn from_valid_line(line: &[u8], version: u32) -> Option<Envelope> {
    from_valid_line_with(&mut Reread::default(), line, version)
}

/// What reading valid lines again needs, kept between lines by a caller that reads many (an
/// operation's worker): a parser's buffers and the spans of its last line.
#[derive(Debug, Default)]
pub(crate) struct Reread {
    parser: JsonParser,
    spans: Vec<(usize, usize)>,
}

/// [`from_valid_line`], with `reread`'s buffers.
pub(crate) fn from_valid_line_with(
    reread: &mut Reread,
    line: &[u8],
    version: u32,
) -> Option<Envelope> {
    let Reread { parser, spans } = reread;
    let doc = parser.parse(line, &mut Vec::new())?;
    doc.node_spans(line, spans);
    Some(from_tape(doc.root(), version, line, spans))
}

/// The owned envelope of a valid envelope's tape. `line` and `spans` give the exact text of
/// unknown members; when they are empty, the text is written from the tape.
pub(crate) fn from_tape(
    root: Value<'_>,
    version: u32,
    line: &[u8],
    spans: &[(usize, usize)],
) -> Envelope {
    let texts = Texts { line, spans };
    let mut e = Envelope {
        version,
        id: Ulid::from_u128(0),
        queue: String::new(),
        handler_ref: String::new(),
        handler_version: Optional::Absent,
        payload: None,
        payload_content_type: String::new(),
        payload_ref: Optional::Absent,
        headers: Vec::new(),
        origin: None,
        status: Status::Pending,
        attempt_count: 0,
        redrive_count: 0,
        next_attempt_at: None,
        lease_expires_at: None,
        created_at: Timestamp::UNIX_EPOCH,
        attempts: Vec::new(),
        unknown: UnknownMembers::for_object(known::top(version), depth::TOP),
        size_limit: SizeLimit::default(),
    };
    for (name, value) in root.members() {
        match name {
            "envelope_version" => {}
            "id" => e.id = value.as_str().and_then(|s| s.parse().ok()).unwrap_or(e.id),
            "queue" => e.queue = string(value),
            "handler_ref" => e.handler_ref = string(value),
            "handler_version" => e.handler_version = optional(value, string),
            "payload" => {
                let mut bytes = Vec::new();
                if let Some(text) = value.as_str() {
                    if let Ok(decoded) = base64_simd::STANDARD.decode_to_vec(text) {
                        bytes = decoded;
                    }
                }
                e.payload = Some(bytes);
            }
            "payload_content_type" => e.payload_content_type = string(value),
            "payload_ref" => e.payload_ref = optional(value, |v| payload_ref(v, &texts)),
            "headers" => {
                e.headers = value
                    .members()
                    .map(|(k, v)| (k.to_owned(), string(v)))
                    .collect()
            }
            "origin" if version >= 2 => e.origin = Some(origin(value, &texts)),
            "status" => {
                e.status = value
                    .as_str()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(e.status)
            }
            "attempt_count" => e.attempt_count = count(value),
            "redrive_count" => e.redrive_count = count(value),
            "next_attempt_at" => e.next_attempt_at = timestamp(value),
            "lease_expires_at" => e.lease_expires_at = timestamp(value),
            "created_at" => e.created_at = timestamp(value).unwrap_or(e.created_at),
            "attempts" => {
                e.attempts = value
                    .elements()
                    .map(|a| attempt(a, version, &texts))
                    .collect()
            }
            _ => e
                .unknown
                .push_trusted(name, &texts.key(name, value), texts.of(value)),
        }
    }
    if version >= 2 && e.origin.is_none() {
        e.origin = Some(new_origin());
    }
    e
}

pub(crate) fn new_origin() -> Origin {
    Origin {
        source: None,
        submitted_by: None,
        unknown: UnknownMembers::for_object(known::ORIGIN, depth::ORIGIN),
    }
}

fn string(value: Value<'_>) -> String {
    value.as_str().unwrap_or_default().to_owned()
}

fn optional<T>(value: Value<'_>, read: impl FnOnce(Value<'_>) -> T) -> Optional<T> {
    match value.kind() {
        ValueKind::Null => Optional::Null,
        _ => Optional::Set(read(value)),
    }
}

fn count(value: Value<'_>) -> u32 {
    value
        .as_integer()
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or_default()
}

fn timestamp(value: Value<'_>) -> Option<Timestamp> {
    value.as_str()?.parse().ok()
}

fn payload_ref(value: Value<'_>, texts: &Texts<'_>) -> PayloadRef {
    let mut r = PayloadRef {
        uri: String::new(),
        sha256: String::new(),
        size: 0,
        unknown: UnknownMembers::for_object(known::PAYLOAD_REF, depth::PAYLOAD_REF),
    };
    for (name, v) in value.members() {
        match name {
            "uri" => r.uri = string(v),
            "sha256" => r.sha256 = string(v),
            "size" => {
                r.size = v
                    .as_integer()
                    .and_then(|n| u64::try_from(n).ok())
                    .unwrap_or_default()
            }
            _ => r
                .unknown
                .push_trusted(name, &texts.key(name, v), texts.of(v)),
        }
    }
    r
}

fn origin(value: Value<'_>, texts: &Texts<'_>) -> Origin {
    let mut o = new_origin();
    for (name, v) in value.members() {
        match name {
            "source" => o.source = Some(string(v)),
            "submitted_by" => o.submitted_by = Some(string(v)),
            _ => o
                .unknown
                .push_trusted(name, &texts.key(name, v), texts.of(v)),
        }
    }
    o
}

fn attempt(value: Value<'_>, version: u32, texts: &Texts<'_>) -> Attempt {
    let mut a = Attempt {
        attempt_no: 1,
        started_at: Timestamp::UNIX_EPOCH,
        finished_at: None,
        outcome: None,
        error: Optional::Absent,
        unknown: UnknownMembers::for_object(known::attempt(version), depth::ATTEMPT),
    };
    for (name, v) in value.members() {
        match name {
            "attempt_no" => a.attempt_no = count(v),
            "started_at" => a.started_at = timestamp(v).unwrap_or(a.started_at),
            "finished_at" => a.finished_at = timestamp(v),
            // Version 2's `duration_ms` is derived from the two times, which it equals.
            "duration_ms" if version >= 2 => {}
            "outcome" => a.outcome = v.as_str().and_then(|s| s.parse::<Outcome>().ok()),
            "error" => a.error = optional(v, |v| error(v, texts)),
            _ => a
                .unknown
                .push_trusted(name, &texts.key(name, v), texts.of(v)),
        }
    }
    a
}

fn error(value: Value<'_>, texts: &Texts<'_>) -> AttemptError {
    let mut e = AttemptError {
        kind: String::new(),
        message: String::new(),
        detail: None,
        stack: Optional::Absent,
        unknown: UnknownMembers::for_object(known::ERROR, depth::ERROR),
    };
    for (name, v) in value.members() {
        match name {
            "type" => e.kind = string(v),
            "message" => e.message = string(v),
            "detail" => e.detail = Some(texts.of(v)),
            "stack" => e.stack = optional(v, string),
            _ => e
                .unknown
                .push_trusted(name, &texts.key(name, v), texts.of(v)),
        }
    }
    e
}
