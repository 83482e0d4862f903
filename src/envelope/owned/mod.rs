//! The owned envelope (docs/library.md#making-and-writing-envelopes): what a service holds to
//! make, change and write envelopes, where [`EnvelopeRef`](super::EnvelopeRef) only reads
//! them in place.
//!
//! Its members are typed and private: every way to change one (a setter, a transition of the
//! lifecycle, a migration) checks the rules first and leaves the envelope as it was when the
//! change would break one, so an `Envelope` is always one the checker accepts. What it does not
//! know (unknown members, at every level; an error's `detail`) it keeps as JSON text, in the
//! order and spelling read, and writes back after the members it knows.
//!
//! - `mod.rs`: the types and their accessors;
//! - `lifecycle.rs`: [`Submit`] and [`Producer`] (new envelopes: the ULID, the clock) and the
//!   transitions of the state table;
//! - `read.rs`: an envelope from a valid line; `write.rs`: the canonical writer;
//! - `members.rs`: [`JsonText`] and [`UnknownMembers`]; `error.rs`: [`EnvelopeError`].

mod error;
mod lifecycle;
mod members;
pub(crate) mod read;
#[cfg(feature = "serde")]
mod serde;
#[cfg(test)]
mod tests;
mod write;

use crate::diagnostic::cut_text;

pub use error::EnvelopeError;
pub use lifecycle::{Clock, FinishedAttempt, IdGenerator, Producer, Submit, SystemClock};
pub use members::{JsonText, UnknownMember, UnknownMembers};

use super::formats::{
    is_handler_version, is_media_type, is_name, is_payload_uri, is_sha256_hex, TRUNCATION_MARKER,
};
use super::laws;
use super::options::DEFAULT_MAX_ENVELOPE_BYTES;
use super::shape::{moved_header, MOVED_HEADERS};
use super::types::{Outcome, Status, Timestamp, Ulid};
use super::{MESSAGE_LIMIT, STACK_LIMIT};

/// An optional member: absent, `null`, or set. The contract tells the three apart (a storage
/// that turns an absent member into `null` changed the envelope), so the owned envelope does
/// too.
///
/// ```
/// use rdq_envelope::envelope::Optional;
/// let version: Optional<String> = Optional::Set("1.4.0".into());
/// assert_eq!(version.get().map(String::as_str), Some("1.4.0"));
/// assert_eq!(Optional::<String>::Null.get(), None);
/// assert!(Optional::<String>::Absent.is_absent());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub enum Optional<T> {
    /// The member is not there.
    #[default]
    Absent,
    /// The member is `null`.
    Null,
    /// The member has a value.
    Set(T),
}

impl<T> Optional<T> {
    /// The value, when set.
    ///
    /// ```
    /// use rdq_envelope::envelope::Optional;
    /// assert_eq!(Optional::Set(3).get(), Some(&3));
    /// ```
    pub fn get(&self) -> Option<&T> {
        match self {
            Optional::Set(value) => Some(value),
            _ => None,
        }
    }

    /// Whether the member is not there.
    ///
    /// ```
    /// use rdq_envelope::envelope::Optional;
    /// assert!(Optional::<u8>::Absent.is_absent() && !Optional::<u8>::Null.is_absent());
    /// ```
    pub fn is_absent(&self) -> bool {
        matches!(self, Optional::Absent)
    }

    /// Whether the member has a value.
    ///
    /// ```
    /// use rdq_envelope::envelope::Optional;
    /// assert!(Optional::Set(1).is_set() && !Optional::<u8>::Null.is_set());
    /// ```
    pub fn is_set(&self) -> bool {
        matches!(self, Optional::Set(_))
    }

    /// The value, when set, as `Optional<&T>`.
    ///
    /// ```
    /// use rdq_envelope::envelope::Optional;
    /// let v = Optional::Set(String::from("x"));
    /// assert_eq!(v.as_ref().get().map(|s| s.as_str()), Some("x"));
    /// ```
    pub fn as_ref(&self) -> Optional<&T> {
        match self {
            Optional::Absent => Optional::Absent,
            Optional::Null => Optional::Null,
            Optional::Set(value) => Optional::Set(value),
        }
    }
}

/// The names of the members of each object the contract names: an unknown member may take
/// none of them.
pub(crate) mod known {
    pub const TOP_V1: &[&str] = &[
        "envelope_version",
        "id",
        "queue",
        "handler_ref",
        "handler_version",
        "payload",
        "payload_content_type",
        "payload_ref",
        "headers",
        "status",
        "attempt_count",
        "redrive_count",
        "next_attempt_at",
        "lease_expires_at",
        "created_at",
        "attempts",
    ];
    pub const TOP_V2: &[&str] = &[
        "envelope_version",
        "id",
        "queue",
        "handler_ref",
        "handler_version",
        "payload",
        "payload_content_type",
        "payload_ref",
        "headers",
        "origin",
        "status",
        "attempt_count",
        "redrive_count",
        "next_attempt_at",
        "lease_expires_at",
        "created_at",
        "attempts",
    ];
    pub const ATTEMPT_V1: &[&str] = &[
        "attempt_no",
        "started_at",
        "finished_at",
        "outcome",
        "error",
    ];
    pub const ATTEMPT_V2: &[&str] = &[
        "attempt_no",
        "started_at",
        "finished_at",
        "duration_ms",
        "outcome",
        "error",
    ];
    pub const ERROR: &[&str] = &["type", "message", "detail", "stack"];
    pub const ORIGIN: &[&str] = &["source", "submitted_by"];
    pub const PAYLOAD_REF: &[&str] = &["uri", "sha256", "size"];

    /// The top level's names in `version`.
    pub fn top(version: u32) -> &'static [&'static str] {
        if version >= 2 {
            TOP_V2
        } else {
            TOP_V1
        }
    }

    /// An attempt's names in `version`.
    pub fn attempt(version: u32) -> &'static [&'static str] {
        if version >= 2 {
            ATTEMPT_V2
        } else {
            ATTEMPT_V1
        }
    }
}

/// How deep each object of an envelope is (the line's object is 1): where an unknown member's
/// value may nest to.
pub(crate) mod depth {
    pub const TOP: usize = 1;
    pub const PAYLOAD_REF: usize = 2;
    pub const ORIGIN: usize = 2;
    pub const ATTEMPT: usize = 3;
    pub const ERROR: usize = 4;
}

/// An envelope, owned: typed members, the payload as bytes, and every member it does not know
/// kept as JSON text. Made by [`Producer::submit`], read from a line by
/// [`Envelope::from_json`] or [`EnvelopeRef::to_owned`](super::EnvelopeRef::to_owned),
/// changed by its setters and its lifecycle's transitions, written by [`Envelope::write`].
///
/// Every change checks the rules first: an `Envelope` is always valid (its size included,
/// against [`Envelope::size_limit`]).
///
/// ```
/// use rdq_envelope::envelope::{Outcome, Producer, Status, Submit, Timestamp};
///
/// let t0: Timestamp = "2024-05-01T12:00:00.000Z".parse()?;
/// let mut producer = Producer::with_clock(move || t0).with_seed(7);
/// let mut envelope = producer.submit(
///     Submit::new("mail", "send", br#"{"to":"a@example.com"}"#.to_vec(), "application/json")?
///         .header("tenant", "acme")?,
/// )?;
/// assert_eq!(envelope.status(), Status::Pending);
///
/// let lease_end = t0.checked_add_ms(30_000).unwrap();
/// envelope.lease(t0, lease_end)?;
/// envelope
///     .finish_attempt(t0.checked_add_ms(250).unwrap(), Outcome::PermanentFailure, None)?
///     .dead_letter()?;
/// assert_eq!(envelope.status(), Status::Dead);
///
/// let line = envelope.to_json();
/// assert!(line.contains(r#""status":"DEAD""#));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Envelope {
    pub(crate) version: u32,
    pub(crate) id: Ulid,
    pub(crate) queue: String,
    pub(crate) handler_ref: String,
    pub(crate) handler_version: Optional<String>,
    /// `None` only beside a set `payload_ref` (version 2).
    pub(crate) payload: Option<Vec<u8>>,
    pub(crate) payload_content_type: String,
    pub(crate) payload_ref: Optional<PayloadRef>,
    pub(crate) headers: Vec<(String, String)>,
    /// Version 2's `origin`; `None` in version 1.
    pub(crate) origin: Option<Origin>,
    pub(crate) status: Status,
    pub(crate) attempt_count: u32,
    pub(crate) redrive_count: u32,
    pub(crate) next_attempt_at: Option<Timestamp>,
    pub(crate) lease_expires_at: Option<Timestamp>,
    pub(crate) created_at: Timestamp,
    pub(crate) attempts: Vec<Attempt>,
    pub(crate) unknown: UnknownMembers,
    pub(crate) size_limit: SizeLimit,
}

/// An envelope's size limit: not a member, so two envelopes that differ only in it are equal.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SizeLimit(pub usize);

impl PartialEq for SizeLimit {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for SizeLimit {}

impl Default for SizeLimit {
    fn default() -> Self {
        SizeLimit(DEFAULT_MAX_ENVELOPE_BYTES as usize)
    }
}

/// One attempt record (docs/envelope.md#the-attempt-record). Made by
/// [`Envelope::lease`] and finished by [`Envelope::finish_attempt`]; read through
/// [`Envelope::attempts`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    pub(crate) attempt_no: u32,
    pub(crate) started_at: Timestamp,
    pub(crate) finished_at: Option<Timestamp>,
    pub(crate) outcome: Option<Outcome>,
    pub(crate) error: Optional<AttemptError>,
    pub(crate) unknown: UnknownMembers,
}

impl Attempt {
    /// Its `attempt_no` (1 for the first, and again after a redrive).
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// # let attempt = envelope.last_attempt().unwrap();
    /// assert_eq!(attempt.attempt_no(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn attempt_no(&self) -> u32 {
        self.attempt_no
    }

    /// When it started.
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// # let attempt = envelope.last_attempt().unwrap();
    /// assert_eq!(attempt.started_at().to_string(), "2024-05-01T12:00:01.000Z");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn started_at(&self) -> Timestamp {
        self.started_at
    }

    /// When it finished; `None` while it is in flight.
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// # let attempt = envelope.last_attempt().unwrap();
    /// assert_eq!(attempt.finished_at().map(|t| t.to_string()).as_deref(), Some("2024-05-01T12:00:01.250Z"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn finished_at(&self) -> Option<Timestamp> {
        self.finished_at
    }

    /// How it ended; `None` while it is in flight.
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// # let attempt = envelope.last_attempt().unwrap();
    /// assert_eq!(attempt.outcome(), Some(Outcome::PermanentFailure));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    /// Its `error`: absent, `null` or set.
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// # let attempt = envelope.last_attempt().unwrap();
    /// assert_eq!(attempt.error().get().map(|e| e.kind()), Some("java.lang.IllegalStateException"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn error(&self) -> &Optional<AttemptError> {
        &self.error
    }

    /// Its length in milliseconds (version 2's `duration_ms`), once finished.
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// # let attempt = envelope.last_attempt().unwrap();
    /// assert_eq!(attempt.duration_ms(), Some(250));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn duration_ms(&self) -> Option<i64> {
        Some(self.finished_at?.unix_ms() - self.started_at.unix_ms())
    }

    /// Its unknown members.
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// let line = String::from_utf8(rdq_envelope::test_support::dead_v2_line())?;
    /// let line = line.replacen(r#""message":"boom""#, r#""message":"boom","code":7"#, 1).replacen(r#""source":"api""#, r#""source":"api","zone":"eu""#, 1).replacen(r#""duration_ms":250"#, r#""duration_ms":250,"host":"w1""#, 1);
    /// let envelope = Envelope::from_json(line.as_bytes())?;
    /// assert_eq!(envelope.last_attempt().unwrap().unknown().get("host").map(|v| v.as_str()), Some(r#""w1""#));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn unknown(&self) -> &UnknownMembers {
        &self.unknown
    }
}

/// An attempt's error object: `type`, `message`, an optional `detail` (any JSON value) and
/// `stack`. A `message` or `stack` over its limit is cut as the truncation rule says
/// (docs/envelope.md#truncation) when it is set.
///
/// ```
/// use rdq_envelope::envelope::{AttemptError, MESSAGE_LIMIT};
///
/// let error = AttemptError::new("java.io.IOException", &"x".repeat(5000))?
///     .with_stack("at Main.main(Main.java:1)");
/// assert_eq!(error.message().len(), MESSAGE_LIMIT + "…[truncated]".len());
/// assert!(error.message().ends_with("…[truncated]"));
/// assert!(AttemptError::new("", "boom").is_err());
/// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptError {
    pub(crate) kind: String,
    pub(crate) message: String,
    pub(crate) detail: Option<JsonText>,
    pub(crate) stack: Optional<String>,
    pub(crate) unknown: UnknownMembers,
}

impl AttemptError {
    /// An error of type `kind` (not empty) with `message` (cut to [`MESSAGE_LIMIT`] bytes as
    /// the truncation rule says).
    ///
    /// ```
    /// use rdq_envelope::envelope::AttemptError;
    /// let error = AttemptError::new("java.io.IOException", "reset")?;
    /// assert_eq!((error.kind(), error.message()), ("java.io.IOException", "reset"));
    /// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
    /// ```
    pub fn new(kind: &str, message: &str) -> Result<AttemptError, EnvelopeError> {
        if kind.is_empty() {
            return Err(EnvelopeError::EmptyErrorType);
        }
        Ok(AttemptError {
            kind: kind.to_owned(),
            message: truncate(message, MESSAGE_LIMIT),
            detail: None,
            stack: Optional::Absent,
            unknown: UnknownMembers::for_object(known::ERROR, depth::ERROR),
        })
    }

    /// With `stack` (cut to [`STACK_LIMIT`] bytes as the truncation rule says).
    ///
    /// ```
    /// use rdq_envelope::envelope::{AttemptError, STACK_LIMIT};
    /// let error = AttemptError::new("E", "m")?.with_stack(&"é".repeat(40_000));
    /// let stack = error.stack().get().unwrap();
    /// assert_eq!(stack.len(), STACK_LIMIT + "…[truncated]".len());
    /// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
    /// ```
    pub fn with_stack(mut self, stack: &str) -> AttemptError {
        self.stack = Optional::Set(truncate(stack, STACK_LIMIT));
        self
    }

    /// With `stack` set to `null`.
    ///
    /// ```
    /// use rdq_envelope::envelope::{AttemptError, Optional};
    /// let error = AttemptError::new("E", "m")?.with_null_stack();
    /// assert_eq!(error.stack(), &Optional::Null);
    /// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
    /// ```
    pub fn with_null_stack(mut self) -> AttemptError {
        self.stack = Optional::Null;
        self
    }

    /// With `detail`, any JSON value; refused when it nests deeper than an error's place
    /// allows.
    ///
    /// ```
    /// use rdq_envelope::envelope::{AttemptError, JsonText};
    /// let error = AttemptError::new("E", "m")?.with_detail(JsonText::parse(r#"{"http_status":503}"#)?)?;
    /// assert_eq!(error.detail().map(|d| d.as_str()), Some(r#"{"http_status":503}"#));
    /// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
    /// ```
    pub fn with_detail(mut self, detail: JsonText) -> Result<AttemptError, EnvelopeError> {
        let allowed = crate::json::MAX_DEPTH - depth::ERROR;
        if detail.depth() > allowed {
            return Err(EnvelopeError::NestingTooDeep {
                depth: detail.depth(),
                allowed,
            });
        }
        self.detail = Some(detail);
        Ok(self)
    }

    /// With an unknown member `name`.
    ///
    /// ```
    /// use rdq_envelope::envelope::{AttemptError, JsonText};
    /// let error = AttemptError::new("E", "m")?.with_unknown("retryable", JsonText::parse("true")?)?;
    /// assert_eq!(error.unknown().len(), 1);
    /// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
    /// ```
    pub fn with_unknown(
        mut self,
        name: &str,
        value: JsonText,
    ) -> Result<AttemptError, EnvelopeError> {
        self.unknown.insert(name, value)?;
        Ok(self)
    }

    /// Its `type`.
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// # let attempt = envelope.last_attempt().unwrap();
    /// # let error = attempt.error().get().unwrap();
    /// assert_eq!(error.kind(), "java.lang.IllegalStateException");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// Its `message`.
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// # let attempt = envelope.last_attempt().unwrap();
    /// # let error = attempt.error().get().unwrap();
    /// assert_eq!(error.message(), "boom");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Its `detail`, when present (`null` is a value here).
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// # let attempt = envelope.last_attempt().unwrap();
    /// # let error = attempt.error().get().unwrap();
    /// assert!(error.detail().is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn detail(&self) -> Option<&JsonText> {
        self.detail.as_ref()
    }

    /// Its `stack`: absent, `null` or set.
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// # let attempt = envelope.last_attempt().unwrap();
    /// # let error = attempt.error().get().unwrap();
    /// assert!(error.stack().is_absent());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stack(&self) -> &Optional<String> {
        &self.stack
    }

    /// Its unknown members.
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// let line = String::from_utf8(rdq_envelope::test_support::dead_v2_line())?;
    /// let line = line.replacen(r#""message":"boom""#, r#""message":"boom","code":7"#, 1).replacen(r#""source":"api""#, r#""source":"api","zone":"eu""#, 1).replacen(r#""duration_ms":250"#, r#""duration_ms":250,"host":"w1""#, 1);
    /// let envelope = Envelope::from_json(line.as_bytes())?;
    /// assert_eq!(envelope.last_attempt().unwrap().error().get().unwrap().unknown().get("code").map(|v| v.as_str()), Some("7"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn unknown(&self) -> &UnknownMembers {
        &self.unknown
    }
}

/// `text` cut at the last character boundary at or below `limit` bytes, followed by the
/// truncation marker, when it is longer (docs/envelope.md#truncation); else `text`.
///
/// ```
/// use rdq_envelope::envelope::truncate;
/// assert_eq!(truncate("abcdef", 6), "abcdef");
/// assert_eq!(truncate("abcdef", 4), "abcd…[truncated]");
/// assert_eq!(truncate("aé", 2), "a…[truncated]");
/// ```
pub fn truncate(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    let mut cut = limit;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut out = String::with_capacity(cut + TRUNCATION_MARKER.len());
    out.push_str(&text[..cut]);
    out.push_str(TRUNCATION_MARKER);
    out
}

/// Version 2's `origin`: where the task came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    pub(crate) source: Option<String>,
    pub(crate) submitted_by: Option<String>,
    pub(crate) unknown: UnknownMembers,
}

impl Origin {
    /// `origin.source` (version 1's header `rdq.source`).
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// assert_eq!(envelope.origin().and_then(|o| o.source()), Some("api"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn source(&self) -> Option<&str> {
        self.source.as_deref()
    }

    /// `origin.submitted_by` (version 1's header `rdq.submitted_by`).
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// assert_eq!(envelope.origin().and_then(|o| o.submitted_by()), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn submitted_by(&self) -> Option<&str> {
        self.submitted_by.as_deref()
    }

    /// Its unknown members (version 1 cannot hold them).
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// let line = String::from_utf8(rdq_envelope::test_support::dead_v2_line())?;
    /// let line = line.replacen(r#""message":"boom""#, r#""message":"boom","code":7"#, 1).replacen(r#""source":"api""#, r#""source":"api","zone":"eu""#, 1).replacen(r#""duration_ms":250"#, r#""duration_ms":250,"host":"w1""#, 1);
    /// let envelope = Envelope::from_json(line.as_bytes())?;
    /// assert_eq!(envelope.origin().unwrap().unknown().get("zone").map(|v| v.as_str()), Some(r#""eu""#));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn unknown(&self) -> &UnknownMembers {
        &self.unknown
    }
}

/// Version 2's claim check: the payload is stored elsewhere, at `uri`.
///
/// ```
/// use rdq_envelope::envelope::PayloadRef;
/// let sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
/// let r = PayloadRef::new("s3://bucket/payloads/1", sha, 4)?;
/// assert_eq!((r.uri(), r.sha256(), r.size()), ("s3://bucket/payloads/1", sha, 4));
/// assert!(PayloadRef::new("no scheme", sha, 4).is_err());
/// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PayloadRef {
    pub(crate) uri: String,
    pub(crate) sha256: String,
    pub(crate) size: u64,
    pub(crate) unknown: UnknownMembers,
}

impl PayloadRef {
    /// A claim check of `size` bytes at `uri` (a URI with a scheme), whose SHA-256 is
    /// `sha256` (64 lower-case hex digits).
    ///
    /// ```
    /// use rdq_envelope::envelope::PayloadRef;
    /// assert!(PayloadRef::new("s3://b/k", &"0".repeat(64), 1).is_ok());
    /// assert!(PayloadRef::new("s3://b/k", "00", 1).is_err());
    /// ```
    pub fn new(uri: &str, sha256: &str, size: u64) -> Result<PayloadRef, EnvelopeError> {
        if !is_payload_uri(uri) {
            return Err(EnvelopeError::InvalidPayloadRef {
                member: "uri",
                why: "is not a URI (scheme:rest, no white space or non-ASCII)",
            });
        }
        if !is_sha256_hex(sha256) {
            return Err(EnvelopeError::InvalidPayloadRef {
                member: "sha256",
                why: "is not 64 lower-case hex digits",
            });
        }
        Ok(PayloadRef {
            uri: uri.to_owned(),
            sha256: sha256.to_owned(),
            size,
            unknown: UnknownMembers::for_object(known::PAYLOAD_REF, depth::PAYLOAD_REF),
        })
    }

    /// Its `uri`.
    ///
    /// ```
    /// use rdq_envelope::envelope::PayloadRef;
    /// let r = PayloadRef::new("https://x/y#z", &"0".repeat(64), 0)?;
    /// assert_eq!(r.uri(), "https://x/y#z");
    /// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
    /// ```
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Its `sha256`, 64 lower-case hex digits.
    ///
    /// ```
    /// use rdq_envelope::envelope::PayloadRef;
    /// let r = PayloadRef::new("s3://b/k", &"a".repeat(64), 0)?;
    /// assert_eq!(r.sha256(), "a".repeat(64));
    /// assert!(PayloadRef::new("s3://b/k", &"A".repeat(64), 0).is_err());
    /// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
    /// ```
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// Its `size` in bytes.
    ///
    /// ```
    /// use rdq_envelope::envelope::PayloadRef;
    /// let r = PayloadRef::new("s3://b/k", &"0".repeat(64), u64::MAX)?;
    /// assert_eq!(r.size(), u64::MAX);
    /// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
    /// ```
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Its unknown members.
    ///
    /// ```
    /// use rdq_envelope::envelope::PayloadRef;
    /// assert!(PayloadRef::new("s3://b/k", &"0".repeat(64), 1)?.unknown().is_empty());
    /// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
    /// ```
    pub fn unknown(&self) -> &UnknownMembers {
        &self.unknown
    }
}

/// Reading: each member, typed.
impl Envelope {
    /// `envelope_version`: 1 or 2.
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// assert_eq!(envelope.version(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn version(&self) -> u32 {
        self.version
    }

    /// `id`.
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// assert_eq!(envelope.id().to_string(), "01HWT0D7G0Q8V9W2R4T6Y8A0B2");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn id(&self) -> Ulid {
        self.id
    }

    /// `queue`.
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// assert_eq!(envelope.queue(), "billing.invoices");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn queue(&self) -> &str {
        &self.queue
    }

    /// `handler_ref`.
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// assert_eq!(envelope.handler_ref(), "invoice.render");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn handler_ref(&self) -> &str {
        &self.handler_ref
    }

    /// `handler_version`: absent, `null` or set.
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// assert_eq!(envelope.handler_version().get().map(String::as_str), Some("1.4.0"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn handler_version(&self) -> &Optional<String> {
        &self.handler_version
    }

    /// The payload's bytes (decoded from base64); `None` for a claim-checked payload
    /// (version 2's `payload_ref`).
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// assert_eq!(envelope.payload(), Some(&br#"{"n":1}"#[..]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn payload(&self) -> Option<&[u8]> {
        self.payload.as_deref()
    }

    /// `payload_content_type`.
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// assert_eq!(envelope.payload_content_type(), "application/json");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn payload_content_type(&self) -> &str {
        &self.payload_content_type
    }

    /// `payload_ref`: absent, `null`, or (version 2) the claim check.
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// assert!(envelope.payload_ref().is_absent());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn payload_ref(&self) -> &Optional<PayloadRef> {
        &self.payload_ref
    }

    /// The headers, in order.
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// assert_eq!(envelope.headers().collect::<Vec<_>>(), [("traceparent", "00-abc")]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn headers(&self) -> impl ExactSizeIterator<Item = (&str, &str)> {
        self.headers.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The header `key`'s value.
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// assert_eq!(envelope.header("traceparent"), Some("00-abc"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn header(&self, key: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Version 2's `origin`; `None` in version 1 (where its values are the headers
    /// `rdq.source` and `rdq.submitted_by`).
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// assert_eq!(envelope.origin().and_then(|o| o.source()), Some("api"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn origin(&self) -> Option<&Origin> {
        self.origin.as_ref()
    }

    /// `status`.
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// assert_eq!(envelope.status(), Status::Dead);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn status(&self) -> Status {
        self.status
    }

    /// `attempt_count`: attempts since the task was created or last redriven.
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// assert_eq!(envelope.attempt_count(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn attempt_count(&self) -> u32 {
        self.attempt_count
    }

    /// `redrive_count`.
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// assert_eq!(envelope.redrive_count(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn redrive_count(&self) -> u32 {
        self.redrive_count
    }

    /// `next_attempt_at`.
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// assert_eq!(envelope.next_attempt_at(), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn next_attempt_at(&self) -> Option<Timestamp> {
        self.next_attempt_at
    }

    /// `lease_expires_at`.
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// assert_eq!(envelope.lease_expires_at(), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn lease_expires_at(&self) -> Option<Timestamp> {
        self.lease_expires_at
    }

    /// `created_at`.
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// assert_eq!(envelope.created_at().to_string(), "2024-05-01T12:00:00.000Z");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn created_at(&self) -> Timestamp {
        self.created_at
    }

    /// The attempt records, oldest first (across redrives).
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// assert_eq!(envelope.attempts().len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn attempts(&self) -> &[Attempt] {
        &self.attempts
    }

    /// The last attempt record.
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// assert_eq!(envelope.last_attempt().map(|a| a.attempt_no()), Some(1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn last_attempt(&self) -> Option<&Attempt> {
        self.attempts.last()
    }

    /// The unknown members of the top level, in order.
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// let line = String::from_utf8(rdq_envelope::test_support::dead_v2_line())?;
    /// let line = line.replacen(r#""message":"boom""#, r#""message":"boom","code":7"#, 1).replacen(r#""source":"api""#, r#""source":"api","zone":"eu""#, 1).replacen(r#""duration_ms":250"#, r#""duration_ms":250,"host":"w1""#, 1);
    /// let envelope = Envelope::from_json(line.as_bytes())?;
    /// assert_eq!(envelope.unknown().len(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn unknown(&self) -> &UnknownMembers {
        &self.unknown
    }

    /// The longest line this envelope may be written as: [`DEFAULT_MAX_ENVELOPE_BYTES`]
    /// unless [`Envelope::set_size_limit`] changed it.
    ///
    /// [`DEFAULT_MAX_ENVELOPE_BYTES`]: super::DEFAULT_MAX_ENVELOPE_BYTES
    ///
    /// ```
    /// # use rdq_envelope::envelope::*;
    /// # let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// assert_eq!(envelope.size_limit(), 1 << 20);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn size_limit(&self) -> usize {
        self.size_limit.0
    }
}

/// Changing members: each setter checks its rule and the size limit, and changes nothing when
/// either would break.
impl Envelope {
    /// Applies `change` to a copy and keeps it when it is within the size limit; the envelope
    /// is unchanged otherwise.
    fn try_change(
        &mut self,
        change: impl FnOnce(&mut Envelope) -> Result<(), EnvelopeError>,
    ) -> Result<(), EnvelopeError> {
        let mut next = self.clone();
        change(&mut next)?;
        next.check_size()?;
        *self = next;
        Ok(())
    }

    /// `TooLarge` when the envelope, written, is over its size limit.
    pub(crate) fn check_size(&self) -> Result<(), EnvelopeError> {
        let bytes = self.encoded_len();
        if bytes > self.size_limit.0 {
            return Err(EnvelopeError::TooLarge {
                bytes,
                limit: self.size_limit.0,
            });
        }
        Ok(())
    }

    /// Sets the longest line the envelope may be written as (a queue's own limit, see
    /// docs/envelope.md#size-limit); refused when it is already longer.
    ///
    /// ```
    /// # use rdq_envelope::envelope::{Producer, Submit};
    /// # let mut producer = Producer::new();
    /// let mut envelope = producer.submit(Submit::new("q", "h", vec![0; 600_000], "application/octet-stream")?)?;
    /// assert!(envelope.set_payload(vec![0; 900_000]).is_err()); // 1.2 MB of base64
    /// envelope.set_size_limit(2 << 20)?;
    /// envelope.set_payload(vec![0; 900_000])?;
    /// assert!(envelope.set_size_limit(1 << 20).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_size_limit(&mut self, bytes: usize) -> Result<(), EnvelopeError> {
        let before = self.size_limit;
        self.size_limit = SizeLimit(bytes);
        self.check_size().inspect_err(|_| self.size_limit = before)
    }

    /// Sets `id` (an envelope stored apart and put back together keeps its own). An ID whose
    /// time is over a second from `created_at` is only a warning (`ID_TIME_MISMATCH`).
    ///
    /// ```
    /// # use rdq_envelope::envelope::{Producer, Submit, Ulid};
    /// # let mut envelope = Producer::new().submit(Submit::new("q", "h", vec![], "text/plain")?)?;
    /// let id: Ulid = "01HWT0DD088F8ENKHRJHCSSPV8".parse()?;
    /// envelope.set_id(id)?;
    /// assert_eq!(envelope.id(), id);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_id(&mut self, id: Ulid) -> Result<(), EnvelopeError> {
        self.id = id;
        Ok(())
    }

    /// Sets `queue`.
    ///
    /// ```
    /// # use rdq_envelope::envelope::{Producer, Submit};
    /// # let mut envelope = Producer::new().submit(Submit::new("q", "h", vec![], "text/plain")?)?;
    /// envelope.set_queue("recovery")?;
    /// assert_eq!(envelope.queue(), "recovery");
    /// assert!(envelope.set_queue("Recovery").is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_queue(&mut self, queue: &str) -> Result<(), EnvelopeError> {
        check_name("queue", queue)?;
        self.try_change(|e| {
            e.queue = queue.to_owned();
            Ok(())
        })
    }

    /// Sets `handler_ref`.
    ///
    /// ```
    /// # use rdq_envelope::envelope::{Producer, Submit};
    /// # let mut envelope = Producer::new().submit(Submit::new("q", "h", vec![], "text/plain")?)?;
    /// envelope.set_handler_ref("invoice.render")?;
    /// assert_eq!(envelope.handler_ref(), "invoice.render");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_handler_ref(&mut self, handler_ref: &str) -> Result<(), EnvelopeError> {
        check_name("handler_ref", handler_ref)?;
        self.try_change(|e| {
            e.handler_ref = handler_ref.to_owned();
            Ok(())
        })
    }

    /// Sets `handler_version` (absent, `null` or 1-240 bytes without control characters).
    ///
    /// ```
    /// # use rdq_envelope::envelope::{Optional, Producer, Submit};
    /// # let mut envelope = Producer::new().submit(Submit::new("q", "h", vec![], "text/plain")?)?;
    /// envelope.set_handler_version(Optional::Set("2.0.1".into()))?;
    /// assert!(envelope.set_handler_version(Optional::Set(String::new())).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_handler_version(&mut self, version: Optional<String>) -> Result<(), EnvelopeError> {
        check_handler_version(&version)?;
        self.try_change(|e| {
            e.handler_version = version;
            Ok(())
        })
    }

    /// Sets the payload's bytes (written as base64); clears a claim check.
    ///
    /// ```
    /// # use rdq_envelope::envelope::{Producer, Submit};
    /// # let mut envelope = Producer::new().submit(Submit::new("q", "h", vec![], "text/plain")?)?;
    /// envelope.set_payload(b"hello".to_vec())?;
    /// assert!(envelope.to_json().contains(r#""payload":"aGVsbG8=""#));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_payload(&mut self, payload: Vec<u8>) -> Result<(), EnvelopeError> {
        self.try_change(|e| {
            if e.payload_ref.is_set() {
                e.payload_ref = Optional::Null;
            }
            e.payload = Some(payload);
            Ok(())
        })
    }

    /// Claim-checks the payload (version 2): `payload_ref` is set and `payload` removed.
    ///
    /// ```
    /// # use rdq_envelope::envelope::{PayloadRef, Producer, Submit};
    /// # let mut envelope = Producer::new().submit(Submit::new("q", "h", vec![1], "text/plain")?.version(2)?)?;
    /// let sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
    /// envelope.set_payload_ref(PayloadRef::new("s3://b/k", sha, 1)?)?;
    /// assert_eq!(envelope.payload(), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_payload_ref(&mut self, payload_ref: PayloadRef) -> Result<(), EnvelopeError> {
        if self.version < 2 {
            return Err(EnvelopeError::PayloadRefNotAllowed {
                why: "version 1 has no claim-checked payloads (payload_ref is reserved)",
            });
        }
        self.try_change(|e| {
            e.payload = None;
            e.payload_ref = Optional::Set(payload_ref);
            Ok(())
        })
    }

    /// Sets `payload_content_type` (a media type, at most 255 bytes).
    ///
    /// ```
    /// # use rdq_envelope::envelope::{Producer, Submit};
    /// # let mut envelope = Producer::new().submit(Submit::new("q", "h", vec![], "text/plain")?)?;
    /// envelope.set_payload_content_type("application/json; charset=utf-8")?;
    /// assert!(envelope.set_payload_content_type("text/plain;").is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_payload_content_type(&mut self, content_type: &str) -> Result<(), EnvelopeError> {
        check_content_type(content_type)?;
        self.try_change(|e| {
            e.payload_content_type = content_type.to_owned();
            Ok(())
        })
    }

    /// Sets header `key` to `value` (in place when it is there, else last). In version 2
    /// the keys moved into `origin` are refused (use [`Envelope::set_origin_source`]).
    ///
    /// ```
    /// # use rdq_envelope::envelope::{Producer, Submit};
    /// # let mut envelope = Producer::new().submit(Submit::new("q", "h", vec![], "text/plain")?)?;
    /// envelope.set_header("traceparent", "00-abc")?;
    /// assert_eq!(envelope.header("traceparent"), Some("00-abc"));
    /// assert!(envelope.set_header("", "x").is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_header(&mut self, key: &str, value: &str) -> Result<(), EnvelopeError> {
        check_header_key(key, self.version)?;
        self.try_change(|e| {
            match e.headers.iter_mut().find(|(k, _)| k == key) {
                Some((_, v)) => *v = value.to_owned(),
                None => e.headers.push((key.to_owned(), value.to_owned())),
            }
            Ok(())
        })
    }

    /// Removes header `key`, returning its value.
    ///
    /// ```
    /// # use rdq_envelope::envelope::{Producer, Submit};
    /// # let mut envelope = Producer::new().submit(Submit::new("q", "h", vec![], "text/plain")?.header("a", "1")?)?;
    /// assert_eq!(envelope.remove_header("a").as_deref(), Some("1"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn remove_header(&mut self, key: &str) -> Option<String> {
        let at = self.headers.iter().position(|(k, _)| k == key)?;
        Some(self.headers.remove(at).1)
    }

    /// Sets where the task came from: `origin.source` in version 2, the header `rdq.source`
    /// in version 1.
    ///
    /// ```
    /// # use rdq_envelope::envelope::{Producer, Submit};
    /// # let mut envelope = Producer::new().submit(Submit::new("q", "h", vec![], "text/plain")?)?;
    /// envelope.set_origin_source("billing-api")?;
    /// assert_eq!(envelope.header("rdq.source"), Some("billing-api"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_origin_source(&mut self, source: &str) -> Result<(), EnvelopeError> {
        self.set_moved(0, source)
    }

    /// Sets who submitted the task: `origin.submitted_by` in version 2, the header
    /// `rdq.submitted_by` in version 1.
    ///
    /// ```
    /// # use rdq_envelope::envelope::{Producer, Submit};
    /// # let mut envelope = Producer::new().submit(Submit::new("q", "h", vec![], "text/plain")?.version(2)?)?;
    /// envelope.set_origin_submitted_by("ops@example.com")?;
    /// assert_eq!(envelope.origin().and_then(|o| o.submitted_by()), Some("ops@example.com"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_origin_submitted_by(&mut self, submitted_by: &str) -> Result<(), EnvelopeError> {
        self.set_moved(1, submitted_by)
    }

    /// One of the headers version 2 moved into `origin` (`source`, `submitted_by`), where the envelope's version keeps it.
    fn set_moved(&mut self, which: usize, value: &str) -> Result<(), EnvelopeError> {
        let header = MOVED_HEADERS[which];
        self.try_change(|e| {
            match &mut e.origin {
                Some(origin) => {
                    let slot = if which == 0 {
                        &mut origin.source
                    } else {
                        &mut origin.submitted_by
                    };
                    *slot = Some(value.to_owned());
                }
                None => match e.headers.iter_mut().find(|(k, _)| k == header) {
                    Some((_, v)) => *v = value.to_owned(),
                    None => e.headers.push((header.to_owned(), value.to_owned())),
                },
            }
            Ok(())
        })
    }

    /// Adds an unknown member at the top level, after the others.
    ///
    /// ```
    /// # use rdq_envelope::envelope::{JsonText, Producer, Submit};
    /// # let mut envelope = Producer::new().submit(Submit::new("q", "h", vec![], "text/plain")?)?;
    /// envelope.insert_unknown("x_export", JsonText::parse(r#"{"batch":7}"#)?)?;
    /// assert!(envelope.to_json().ends_with(r#","x_export":{"batch":7}}"#));
    /// assert!(envelope.insert_unknown("queue", JsonText::null()).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn insert_unknown(&mut self, name: &str, value: JsonText) -> Result<(), EnvelopeError> {
        self.try_change(|e| e.unknown.insert(name, value))
    }

    /// Removes the unknown top-level member `name`, returning its value.
    ///
    /// ```
    /// # use rdq_envelope::envelope::{JsonText, Producer, Submit};
    /// # let mut envelope = Producer::new().submit(Submit::new("q", "h", vec![], "text/plain")?)?;
    /// envelope.insert_unknown("x", JsonText::null())?;
    /// assert_eq!(envelope.remove_unknown("x"), Some(JsonText::null()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn remove_unknown(&mut self, name: &str) -> Option<JsonText> {
        self.unknown.remove(name)
    }
}

fn short(text: &str) -> String {
    cut_text(text, 64).into_owned()
}

pub(crate) fn check_name(field: &'static str, value: &str) -> Result<(), EnvelopeError> {
    if is_name(value) {
        return Ok(());
    }
    Err(EnvelopeError::InvalidName {
        field,
        value: short(value),
    })
}

pub(crate) fn check_handler_version(version: &Optional<String>) -> Result<(), EnvelopeError> {
    match version {
        Optional::Set(v) if !is_handler_version(v) => {
            Err(EnvelopeError::InvalidHandlerVersion { value: short(v) })
        }
        _ => Ok(()),
    }
}

pub(crate) fn check_content_type(value: &str) -> Result<(), EnvelopeError> {
    if value.len() <= 255 && is_media_type(value) {
        return Ok(());
    }
    Err(EnvelopeError::InvalidContentType {
        value: short(value),
    })
}

pub(crate) fn check_header_key(key: &str, version: u32) -> Result<(), EnvelopeError> {
    if key.is_empty() {
        return Err(EnvelopeError::InvalidHeader {
            key: String::new(),
            why: "is empty",
        });
    }
    if !laws::header_in_version(moved_header(key.as_bytes()).is_some(), version) {
        return Err(EnvelopeError::InvalidHeader {
            key: key.to_owned(),
            why: "moved into origin in version 2",
        });
    }
    Ok(())
}
