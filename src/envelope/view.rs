//! [`EnvelopeRef`]: a typed, zero-copy view of a valid envelope, read from the byte ranges the
//! single pass recorded of the line or, for a line judged on its tape, from the tape.

use super::formats::parse_timestamp;
use super::owned::{read as owned_read, Envelope};
use super::single_pass::{AttemptFields, Fields, Range32};
use super::types::{Outcome, Status};
use crate::diagnostic::Diagnostic;
use crate::json::{unescape, Value};

/// A string of the envelope: its text, or the content of a JSON string with its escapes still
/// in it. The single pass records where a string is and decodes nothing; [`Text::decode`]
/// decodes when needed. A text read from the tape is always [`Text::Plain`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Text<'a> {
    /// The text itself.
    Plain(&'a str),
    /// The raw content between the quotes, escapes and all (`a\"b` for `a"b`).
    Escaped(&'a str),
}

impl<'a> Text<'a> {
    /// The text, decoded into `scratch` when it has escapes.
    ///
    /// ```
    /// use rdq_envelope::envelope::Text;
    ///
    /// let mut scratch = String::new();
    /// assert_eq!(Text::Plain("mail").decode(&mut scratch), "mail");
    /// assert_eq!(Text::Escaped(r#"say \"hi\"\n"#).decode(&mut scratch), "say \"hi\"\n");
    /// ```
    pub fn decode<'b>(self, scratch: &'b mut String) -> &'b str
    where
        'a: 'b,
    {
        match self {
            Text::Plain(text) => text,
            Text::Escaped(raw) => {
                unescape(raw, scratch);
                scratch
            }
        }
    }

    /// The text when it holds no escape.
    ///
    /// ```
    /// use rdq_envelope::envelope::Text;
    ///
    /// assert_eq!(Text::Plain("mail").as_plain(), Some("mail"));
    /// assert_eq!(Text::Escaped(r"\u00e9").as_plain(), None);
    /// ```
    pub fn as_plain(self) -> Option<&'a str> {
        match self {
            Text::Plain(text) => Some(text),
            Text::Escaped(_) => None,
        }
    }
}

/// A valid envelope, read in place: every accessor borrows from the line (or its tape), and
/// nothing is decoded until asked. Made by [`Checker::check`](super::Checker::check).
///
/// ```
/// use rdq_envelope::envelope::{AttemptError, Checker, Outcome, Producer, Submit, Timestamp};
/// use rdq_envelope::{EnvelopeRules, RuleOptions};
///
/// // A task that failed for good, made through the lifecycle and written as one line.
/// let t0: Timestamp = "2024-05-01T12:00:00.000Z".parse()?;
/// let at = |ms| t0.checked_add_ms(ms).expect("in range");
/// let submit = Submit::new("mail", "send", b"{}".to_vec(), "application/json")?.source("api");
/// let mut task = Producer::with_clock(move || t0).with_seed(1).submit(submit)?;
/// task.lease(at(1_000), at(31_000))?;
/// let error = AttemptError::new("SmtpError", "550 no such user")?;
/// task.finish_attempt(at(2_500), Outcome::PermanentFailure, Some(error))?.dead_letter()?;
/// let line = task.to_json();
/// let line = line.as_bytes();
///
/// let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
/// let checked = checker.check(line);
/// let envelope = checked.envelope().expect("a valid envelope");
/// assert_eq!((envelope.queue(), envelope.status().as_str(), envelope.version()), ("mail", "DEAD", 1));
/// assert_eq!(envelope.header("rdq.source").and_then(|t| t.as_plain()), Some("api"));
/// let last = envelope.attempts().last().expect("one attempt");
/// assert_eq!(last.finished_at_ms().map(|f| f - last.started_at_ms()), Some(1500));
/// let error = last.error().expect("an error");
/// assert_eq!((error.kind.as_plain(), error.message.as_plain()), (Some("SmtpError"), Some("550 no such user")));
/// let mut payload = Vec::new();
/// envelope.decode_payload(&mut payload);
/// assert_eq!(payload, b"{}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy)]
pub struct EnvelopeRef<'e> {
    pub(crate) repr: Repr<'e>,
    version: u32,
    warnings: &'e [Diagnostic],
    /// The line, for [`EnvelopeRef::to_owned`]; empty for a view of a tape alone.
    line: &'e [u8],
}

/// Where an [`EnvelopeRef`] reads from.
#[derive(Clone, Copy)]
pub(crate) enum Repr<'e> {
    /// The ranges the single pass recorded of an accepted line.
    Ranges { line: &'e [u8], fields: &'e Fields },
    /// The root of a line judged on its tape (its members looked up by name: the tape path
    /// is the slow one, where the parse costs far more).
    Tape(Value<'e>),
}

impl std::fmt::Debug for EnvelopeRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnvelopeRef")
            .field("id", &self.id())
            .field("queue", &self.queue())
            .field("status", &self.status())
            .finish_non_exhaustive()
    }
}

/// A string member's text read from the tape, or `""`.
fn text(value: Option<Value<'_>>) -> &str {
    value.and_then(|v| v.as_str()).unwrap_or_default()
}

/// A range of an accepted line as text: the single pass accepted the line, so it is UTF-8 and
/// a string's content too.
fn range_text(line: &[u8], (start, end): Range32) -> &str {
    std::str::from_utf8(&line[start as usize..end as usize]).unwrap_or_default()
}

/// A range of an accepted line as a [`Text`]: escaped unless the line's texts are `plain`.
fn range_string(line: &[u8], range: Range32, plain: bool) -> Text<'_> {
    match plain {
        true => Text::Plain(range_text(line, range)),
        false => Text::Escaped(range_text(line, range)),
    }
}

impl<'e> EnvelopeRef<'e> {
    pub(crate) fn new(
        repr: Repr<'e>,
        version: u32,
        warnings: &'e [Diagnostic],
        line: &'e [u8],
    ) -> Self {
        EnvelopeRef {
            repr,
            version,
            warnings,
            line,
        }
    }

    /// The envelope, owned: every member typed, the payload decoded, every unknown member
    /// kept as the line's exact text (docs/library.md#making-and-writing-envelopes).
    ///
    /// ```
    /// use rdq_envelope::envelope::{Checker, Producer, Status, Submit};
    /// use rdq_envelope::{EnvelopeRules, RuleOptions};
    ///
    /// let line = Producer::new().submit(Submit::new("mail", "send", b"{}".to_vec(), "application/json")?)?.to_json();
    /// let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// let checked = checker.check(line.as_bytes());
    /// let owned = checked.envelope().expect("valid").to_owned();
    /// assert_eq!((owned.status(), owned.payload()), (Status::Pending, Some(&b"{}"[..])));
    /// assert_eq!(owned.to_json(), line);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[allow(clippy::wrong_self_convention)]
    pub fn to_owned(&self) -> Envelope {
        if let Some(envelope) = owned_read::from_valid_line(self.line, self.version) {
            return envelope;
        }
        // A view of a tape alone (the crate's own readers): unknown members are written from
        // the tape, their numbers in the tape's form.
        match self.repr {
            Repr::Tape(root) => owned_read::from_tape(root, self.version, &[], &[]),
            Repr::Ranges { line, .. } => owned_read::from_valid_line(line, self.version)
                .unwrap_or_else(|| {
                    owned_read::from_tape(Value::empty_object(), self.version, &[], &[])
                }),
        }
    }

    /// [`EnvelopeRef::to_owned`] with a worker's buffers: a line read again is parsed with
    /// `reread`'s parser, not a new one.
    #[cfg(feature = "stream")]
    #[cfg_attr(not(feature = "proto"), allow(dead_code))]
    pub(crate) fn to_owned_with(self, reread: &mut owned_read::Reread) -> Envelope {
        match owned_read::from_valid_line_with(reread, self.line, self.version) {
            Some(envelope) => envelope,
            None => self.to_owned(),
        }
    }

    /// A view of a valid envelope's tape (`root`), for tests of the single pass's view
    /// against the tape's.
    #[cfg(test)]
    pub(crate) fn on_tape(root: Value<'e>, version: u32) -> Self {
        EnvelopeRef::new(Repr::Tape(root), version, &[], &[])
    }

    /// A view of the tape of an envelope the caller judged valid, its version read from it.
    #[cfg(feature = "stream")]
    pub(crate) fn of_tape(root: Value<'e>) -> Self {
        let version = root
            .get("envelope_version")
            .and_then(|v| v.as_integer())
            .and_then(|v| u32::try_from(v).ok())
            .unwrap_or(1);
        EnvelopeRef::new(Repr::Tape(root), version, &[], &[])
    }

    /// A string of the envelope that holds no escape in a valid one (a name, an ID, a status,
    /// a timestamp: their grammars have none, and the single pass declines a line that
    /// spells one with escapes).
    fn grammar(&self, range: impl Fn(&Fields) -> Range32, key: &str) -> &'e str {
        match self.repr {
            Repr::Ranges { line, fields } => range_text(line, range(fields)),
            Repr::Tape(root) => text(root.get(key)),
        }
    }

    /// The envelope's `envelope_version`.
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// assert_eq!(envelope.version(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The warnings the rules found (docs/envelope.md#warnings): a valid envelope may have some.
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// assert!(envelope.warnings().is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn warnings(&self) -> &'e [Diagnostic] {
        self.warnings
    }

    /// `id`: a canonical ULID.
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// assert_eq!(envelope.id(), "01HWT0D7G0Q8V9W2R4T6Y8A0B2");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn id(&self) -> &'e str {
        self.grammar(|f| f.id, "id")
    }

    /// `queue`.
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// assert_eq!(envelope.queue(), "billing.invoices");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn queue(&self) -> &'e str {
        self.grammar(|f| f.queue, "queue")
    }

    /// `handler_ref`.
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// assert_eq!(envelope.handler_ref(), "invoice.render");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn handler_ref(&self) -> &'e str {
        self.grammar(|f| f.handler_ref, "handler_ref")
    }

    /// `status`: `PENDING`, `IN_FLIGHT`, `SUCCEEDED`, `DEAD` or (version 2) `CANCELLED`.
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// assert_eq!(envelope.status(), rdq_envelope::envelope::Status::Dead);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn status(&self) -> Status {
        // A valid envelope's status is one of the five.
        Status::from_name(self.grammar(|f| f.status, "status").as_bytes())
            .unwrap_or(Status::Pending)
    }

    /// `handler_version`, when the envelope has one.
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// assert_eq!(envelope.handler_version(), Some("1.4.0"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn handler_version(&self) -> Option<&'e str> {
        match self.repr {
            Repr::Ranges { line, fields } => fields.handler_version.map(|r| range_text(line, r)),
            Repr::Tape(root) => root.get("handler_version")?.as_str(),
        }
    }

    /// `payload_content_type`: a media type.
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// assert_eq!(envelope.payload_content_type(), "application/json");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn payload_content_type(&self) -> &'e str {
        self.grammar(|f| f.payload_content_type, "payload_content_type")
    }

    /// `created_at`, as the line spells it.
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// assert_eq!(envelope.created_at(), "2024-05-01T12:00:00.000Z");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn created_at(&self) -> &'e str {
        self.grammar(|f| f.created_at, "created_at")
    }

    /// `created_at` in milliseconds since the Unix epoch.
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// assert_eq!(envelope.created_at_ms(), 1_714_564_800_000);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn created_at_ms(&self) -> i64 {
        match self.repr {
            // Parsed once already, by the single pass.
            Repr::Ranges { fields, .. } => fields.created,
            Repr::Tape(_) => parse_timestamp(self.created_at()).unwrap_or_default(),
        }
    }

    /// `next_attempt_at`, `None` when `null`.
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// assert_eq!(envelope.next_attempt_at(), None); // null: a DEAD task is not due
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn next_attempt_at(&self) -> Option<&'e str> {
        match self.repr {
            Repr::Ranges { line, fields } => fields.next_attempt_at.map(|r| range_text(line, r)),
            Repr::Tape(root) => root.get("next_attempt_at")?.as_str(),
        }
    }

    /// `lease_expires_at`, `None` when `null`.
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// assert_eq!(envelope.lease_expires_at(), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn lease_expires_at(&self) -> Option<&'e str> {
        match self.repr {
            Repr::Ranges { line, fields } => fields.lease_expires_at.map(|r| range_text(line, r)),
            Repr::Tape(root) => root.get("lease_expires_at")?.as_str(),
        }
    }

    /// `attempt_count`.
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// assert_eq!(envelope.attempt_count(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn attempt_count(&self) -> u64 {
        match self.repr {
            Repr::Ranges { fields, .. } => fields.attempt_count,
            Repr::Tape(root) => integer(root.get("attempt_count")),
        }
    }

    /// `redrive_count`.
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// assert_eq!(envelope.redrive_count(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn redrive_count(&self) -> u64 {
        match self.repr {
            Repr::Ranges { fields, .. } => fields.redrive_count,
            Repr::Tape(root) => integer(root.get("redrive_count")),
        }
    }

    /// The header `key`'s value (keys are compared as the line spells them).
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// use rdq_envelope::envelope::Text;
    /// assert_eq!(envelope.header("traceparent"), Some(Text::Plain("00-abc")));
    /// assert_eq!(envelope.header("tenant"), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn header(&self, key: &str) -> Option<Text<'e>> {
        self.headers()
            .find(|(k, _)| *k == key)
            .map(|(_, value)| value)
    }

    /// Every header, as `(key, value)`, in the line's order. A key holds no escape: the single
    /// pass sends a line with an escaped key to the tape, which decodes it.
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// let keys: Vec<_> = envelope.headers().map(|(key, _)| key).collect();
    /// assert_eq!(keys, ["traceparent"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn headers(&self) -> impl Iterator<Item = (&'e str, Text<'e>)> + 'e {
        let (ranges, members) = match self.repr {
            Repr::Ranges { line, fields } => (Some((line, fields)), None),
            Repr::Tape(root) => (None, root.get("headers").map(|h| h.members())),
        };
        let from_ranges = ranges
            .into_iter()
            .flat_map(|(line, fields): (_, &'e Fields)| {
                let plain = fields.plain;
                fields
                    .headers
                    .iter()
                    .map(move |&(k, v)| (range_text(line, k), range_string(line, v, plain)))
            });
        let from_tape = members
            .into_iter()
            .flatten()
            .map(|(k, v)| (k, Text::Plain(v.as_str().unwrap_or_default())));
        from_ranges.chain(from_tape)
    }

    /// `origin.source` (version 2).
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// assert_eq!(envelope.origin_source().and_then(|t| t.as_plain()), Some("api"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn origin_source(&self) -> Option<Text<'e>> {
        self.origin_text("source")
    }

    /// `origin.submitted_by` (version 2).
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// assert_eq!(envelope.origin_submitted_by(), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn origin_submitted_by(&self) -> Option<Text<'e>> {
        self.origin_text("submitted_by")
    }

    fn origin_text(&self, field: &str) -> Option<Text<'e>> {
        match self.repr {
            Repr::Ranges { line, fields } => {
                let range = match field {
                    "source" => fields.origin_source,
                    _ => fields.origin_submitted_by,
                };
                range.map(|r| range_string(line, r, fields.plain))
            }
            Repr::Tape(root) => root.get("origin")?.get(field)?.as_str().map(Text::Plain),
        }
    }

    /// The base64 `payload` as the line spells it; `None` under a claim check (`payload_ref`).
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// assert_eq!(envelope.payload(), Some("eyJuIjoxfQ=="));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn payload(&self) -> Option<&'e str> {
        match self.repr {
            Repr::Ranges { line, fields } => fields.payload.map(|r| range_text(line, r)),
            Repr::Tape(root) => root.get("payload")?.as_str(),
        }
    }

    /// Appends the decoded payload to `out`; returns whether there was one (`false` under a
    /// claim check). A valid envelope's payload is canonical base64, so decoding cannot fail.
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// let mut payload = Vec::new();
    /// assert!(envelope.decode_payload(&mut payload));
    /// assert_eq!(payload, br#"{"n":1}"#);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn decode_payload(&self, out: &mut Vec<u8>) -> bool {
        let Some(encoded) = self.payload() else {
            return false;
        };
        base64_simd::STANDARD.decode_append(encoded, out).is_ok()
    }

    /// The attempt records, oldest first.
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// let outcomes: Vec<_> = envelope.attempts().map(|a| a.outcome()).collect();
    /// assert_eq!(outcomes, [Some(rdq_envelope::envelope::Outcome::PermanentFailure)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn attempts(&self) -> impl Iterator<Item = AttemptRef<'e>> + 'e {
        match self.repr {
            Repr::Ranges { line, fields } => Attempts::Ranges {
                line,
                plain: fields.plain,
                each: fields.attempts.iter(),
            },
            Repr::Tape(root) => Attempts::Tape(root.get("attempts").map(|a| a.elements())),
        }
    }

    /// The last attempt that has an error, found without reading any text.
    #[cfg(feature = "stream")]
    pub(crate) fn last_attempt_with_error(&self) -> Option<AttemptRef<'e>> {
        match self.repr {
            Repr::Ranges { line, fields } => {
                let last = fields
                    .attempts
                    .iter()
                    .rev()
                    .find(|a| a.error_type.is_some())?;
                Some(AttemptRef(AttemptRepr::Ranges {
                    line,
                    fields: last,
                    plain: fields.plain,
                }))
            }
            Repr::Tape(_) => self.attempts().filter(|a| a.has_error()).last(),
        }
    }

    /// How many attempt records there are.
    #[cfg(feature = "stream")]
    pub(crate) fn attempt_records(&self) -> usize {
        match self.repr {
            Repr::Ranges { fields, .. } => fields.attempts.len(),
            Repr::Tape(root) => root.get("attempts").map_or(0, |a| a.len()),
        }
    }

    /// The last attempt record, when there is one.
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// let last = envelope.last_attempt().expect("one attempt");
    /// assert_eq!(last.started_at(), "2024-05-01T12:00:01.000Z");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn last_attempt(&self) -> Option<AttemptRef<'e>> {
        match self.repr {
            Repr::Ranges { line, fields } => {
                let plain = fields.plain;
                let last = fields.attempts.last()?;
                Some(AttemptRef(AttemptRepr::Ranges {
                    line,
                    fields: last,
                    plain,
                }))
            }
            Repr::Tape(root) => {
                let last = root.get("attempts")?.last_element()?;
                Some(AttemptRef(AttemptRepr::Tape(last)))
            }
        }
    }
}

/// The attempts of an [`EnvelopeRef`], from either representation.
enum Attempts<'e> {
    Ranges {
        line: &'e [u8],
        plain: bool,
        each: std::slice::Iter<'e, AttemptFields>,
    },
    Tape(Option<crate::json::Elements<'e>>),
}

impl<'e> Iterator for Attempts<'e> {
    type Item = AttemptRef<'e>;

    fn next(&mut self) -> Option<AttemptRef<'e>> {
        match self {
            Attempts::Ranges { line, plain, each } => {
                let fields = each.next()?;
                Some(AttemptRef(AttemptRepr::Ranges {
                    line,
                    fields,
                    plain: *plain,
                }))
            }
            Attempts::Tape(each) => Some(AttemptRef(AttemptRepr::Tape(each.as_mut()?.next()?))),
        }
    }
}

/// One attempt record of an [`EnvelopeRef`].
#[derive(Debug, Clone, Copy)]
pub struct AttemptRef<'e>(AttemptRepr<'e>);

#[derive(Debug, Clone, Copy)]
enum AttemptRepr<'e> {
    Ranges {
        line: &'e [u8],
        fields: &'e AttemptFields,
        /// The envelope's texts hold no escape (`Fields::plain`).
        plain: bool,
    },
    Tape(Value<'e>),
}

/// An attempt's `error`: its `type` and `message`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttemptErrorRef<'e> {
    /// `error.type`.
    pub kind: Text<'e>,
    /// `error.message`.
    pub message: Text<'e>,
}

impl<'e> AttemptRef<'e> {
    /// `started_at` in milliseconds since the Unix epoch.
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// # let attempt = envelope.last_attempt().expect("an attempt");
    /// assert_eq!(attempt.started_at_ms(), 1_714_564_801_000);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn started_at_ms(&self) -> i64 {
        match self.0 {
            AttemptRepr::Ranges { fields, .. } => fields.started,
            AttemptRepr::Tape(a) => time(a, "started_at").unwrap_or_default(),
        }
    }

    /// `finished_at` in milliseconds; `None` while the attempt is in flight.
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// # let attempt = envelope.last_attempt().expect("an attempt");
    /// assert_eq!(attempt.finished_at_ms(), Some(1_714_564_801_250));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn finished_at_ms(&self) -> Option<i64> {
        match self.0 {
            AttemptRepr::Ranges { fields, .. } => fields.finished,
            AttemptRepr::Tape(a) => time(a, "finished_at"),
        }
    }

    /// `started_at`, as the line spells it.
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// # let attempt = envelope.last_attempt().expect("an attempt");
    /// assert_eq!(attempt.started_at(), "2024-05-01T12:00:01.000Z");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn started_at(&self) -> &'e str {
        match self.0 {
            AttemptRepr::Ranges { line, fields, .. } => range_text(line, fields.started_text),
            AttemptRepr::Tape(a) => text(a.get("started_at")),
        }
    }

    /// `finished_at` as the line spells it; `None` while in flight.
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// # let attempt = envelope.last_attempt().expect("an attempt");
    /// assert_eq!(attempt.finished_at(), Some("2024-05-01T12:00:01.250Z"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn finished_at(&self) -> Option<&'e str> {
        match self.0 {
            AttemptRepr::Ranges { line, fields, .. } => {
                fields.finished_text.map(|r| range_text(line, r))
            }
            AttemptRepr::Tape(a) => a.get("finished_at")?.as_str(),
        }
    }

    /// `outcome`; `None` while in flight.
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// # let attempt = envelope.last_attempt().expect("an attempt");
    /// assert_eq!(attempt.outcome(), Some(rdq_envelope::envelope::Outcome::PermanentFailure));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn outcome(&self) -> Option<Outcome> {
        let name = match self.0 {
            AttemptRepr::Ranges { line, fields, .. } => fields.outcome.map(|r| range_text(line, r)),
            AttemptRepr::Tape(a) => a.get("outcome")?.as_str(),
        };
        Outcome::from_name(name?.as_bytes())
    }

    /// Whether the attempt has an error (with a type): no text is read.
    #[cfg(feature = "stream")]
    pub(crate) fn has_error(&self) -> bool {
        match self.0 {
            AttemptRepr::Ranges { fields, .. } => fields.error_type.is_some(),
            AttemptRepr::Tape(a) => a
                .get("error")
                .and_then(|e| e.get("type"))
                .is_some_and(|t| t.as_str().is_some()),
        }
    }

    /// `error.type` alone, when the attempt has an error: cheaper than [`AttemptRef::error`],
    /// which also reads the message.
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// # let attempt = envelope.last_attempt().expect("an attempt");
    /// assert_eq!(attempt.error_type().and_then(|t| t.as_plain()), Some("java.lang.IllegalStateException"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn error_type(&self) -> Option<Text<'e>> {
        match self.0 {
            AttemptRepr::Ranges {
                line,
                fields,
                plain,
            } => Some(range_string(line, fields.error_type?, plain)),
            AttemptRepr::Tape(a) => a.get("error")?.get("type")?.as_str().map(Text::Plain),
        }
    }

    /// `error`, when the attempt has one (not `null`).
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// # let envelope = checked.envelope().expect("valid");
    /// # let attempt = envelope.last_attempt().expect("an attempt");
    /// let error = attempt.error().expect("an error");
    /// assert_eq!(error.kind.as_plain(), Some("java.lang.IllegalStateException"));
    /// assert_eq!(error.message.as_plain(), Some("boom"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn error(&self) -> Option<AttemptErrorRef<'e>> {
        match self.0 {
            AttemptRepr::Ranges {
                line,
                fields,
                plain,
            } => Some(AttemptErrorRef {
                kind: range_string(line, fields.error_type?, plain),
                message: range_string(line, fields.error_message, !fields.message_escaped),
            }),
            AttemptRepr::Tape(a) => {
                let error = a.get("error")?;
                Some(AttemptErrorRef {
                    kind: Text::Plain(error.get("type")?.as_str()?),
                    message: Text::Plain(text(error.get("message"))),
                })
            }
        }
    }
}

/// An attempt's timestamp member read from the tape, in milliseconds.
fn time(attempt: Value<'_>, key: &str) -> Option<i64> {
    parse_timestamp(attempt.get(key)?.as_str()?)
}

/// An integer member read from the tape (a valid envelope's counts fit in a `u32`).
fn integer(value: Option<Value<'_>>) -> u64 {
    value
        .and_then(|v| v.as_integer())
        .and_then(|i| u64::try_from(i).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::Checker;
    use crate::json::JsonParser;
    use crate::{EnvelopeRules, RuleOptions};

    /// Everything a view says of an envelope, texts decoded.
    fn read(envelope: &EnvelopeRef<'_>) -> Vec<String> {
        let mut scratch = String::new();
        let mut text = |t: Option<Text<'_>>| t.map(|t| t.decode(&mut scratch).to_owned());
        let mut all = vec![
            format!(
                "{} {} {}",
                envelope.version(),
                envelope.id(),
                envelope.queue()
            ),
            format!(
                "{} {} {}",
                envelope.handler_ref(),
                envelope.status(),
                envelope.created_at()
            ),
            format!(
                "{:?} {}",
                envelope.handler_version(),
                envelope.payload_content_type()
            ),
            format!(
                "{} {:?}",
                envelope.created_at_ms(),
                envelope.next_attempt_at()
            ),
            format!(
                "{:?} {}",
                envelope.lease_expires_at(),
                envelope.attempt_count()
            ),
            format!("{} {:?}", envelope.redrive_count(), envelope.payload()),
            format!("{:?}", text(envelope.origin_source())),
            format!("{:?}", text(envelope.origin_submitted_by())),
            format!("{:?}", text(envelope.header("rdq.source"))),
        ];
        for (key, value) in envelope.headers() {
            all.push(format!("{key:?}={:?}", text(Some(value))));
        }
        let mut payload = Vec::new();
        all.push(format!(
            "{} {payload:?}",
            envelope.decode_payload(&mut payload)
        ));
        for attempt in envelope.attempts().chain(envelope.last_attempt()) {
            all.push(format!(
                "{} {:?} {} {:?} {:?}",
                attempt.started_at_ms(),
                attempt.finished_at_ms(),
                attempt.started_at(),
                attempt.finished_at(),
                attempt.outcome()
            ));
            if let Some(error) = attempt.error() {
                all.push(format!(
                    "{:?} {:?}",
                    text(Some(error.kind)),
                    text(Some(error.message))
                ));
            }
        }
        all
    }

    /// The single pass's ranges and the tape say the same of every valid envelope, with
    /// escapes in its texts or not, of both versions.
    #[test]
    fn the_ranges_and_the_tape_read_every_member_alike() {
        let rules = EnvelopeRules::new(RuleOptions::default()).unwrap();
        let mut checkers = [
            Checker::new(rules.clone()),
            Checker::new(rules).with_plain_texts(),
        ];
        let mut parser = JsonParser::new();
        let mut escaped = 0;
        let mut compared = 0;
        // Escapes where the single pass records texts: a header's value, an origin's source (an
        // escaped key sends the line to the tape).
        let escaped_copy = |line: &Vec<u8>| {
            String::from_utf8_lossy(line)
                .replace(r#"-labs""#, r#"-l\/abs""#)
                .replace(r#"{"source":"media"#, r#"{"source":"m\u00e9dia"#)
                .into_bytes()
        };
        for version in [1, 2] {
            let lines = crate::generate::test_lines(41, version, 0.1, 1500);
            for line in lines
                .iter()
                .chain(lines.iter().map(escaped_copy).collect::<Vec<_>>().iter())
            {
                for checker in &mut checkers {
                    let checked = checker.check(line);
                    let Some(envelope) = checked.envelope() else {
                        continue;
                    };
                    if let Repr::Ranges { fields, .. } = envelope.repr {
                        escaped += usize::from(!fields.plain);
                    }
                    let doc = parser.parse(line, &mut Vec::new()).unwrap();
                    let on_tape = EnvelopeRef::on_tape(doc.root(), version);
                    assert_eq!(
                        read(&envelope),
                        read(&on_tape),
                        "{}",
                        String::from_utf8_lossy(line)
                    );
                    compared += 1;
                }
            }
        }
        assert!(
            compared > 4000 && escaped > 20,
            "{compared} compared, {escaped} with escapes"
        );
    }
}
