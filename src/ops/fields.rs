//! Small readers of an envelope's members, shared by `filter` and `stats` (which find the
//! members themselves with [`Top::of`](crate::envelope::Top::of), the rules' one walk).

use crate::envelope::formats::parse_timestamp;
use crate::envelope::{AttemptFields, Fields, Range32, Top};
use crate::json::Value;

/// Evaluates `$body` with `$view` bound to the view that reads `$envelope` (an
/// [`EnvelopeRef`](crate::envelope::EnvelopeRef)): a [`RangeView`] or a [`TapeView`], each
/// its own monomorphised copy of `$body`, so the hot path reads ranges without a branch per
/// field.
macro_rules! with_view {
    ($envelope:expr, |$view:ident| $body:expr) => {
        match $envelope.repr {
            $crate::envelope::Repr::Ranges { line, fields } => {
                let $view = &$crate::ops::fields::RangeView { line, fields };
                $body
            }
            $crate::envelope::Repr::Tape(root) => {
                let $view = &$crate::ops::fields::TapeView($crate::envelope::Top::of(root));
                $body
            }
        }
    };
}
pub(crate) use with_view;

/// A string member's text, or `""`.
pub(crate) fn text(value: Option<Value<'_>>) -> &str {
    value.and_then(|v| v.as_str()).unwrap_or_default()
}

/// An attempt's `error.type`.
pub(crate) fn error_type(attempt: Value<'_>) -> Option<&str> {
    attempt.get("error")?.get("type")?.as_str()
}

pub(crate) use crate::envelope::Text;

/// An attempt's error: its `type` and `message`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AttemptError<'a> {
    pub kind: &'a str,
    pub message: Text<'a>,
}

/// What `filter` reads of a valid envelope, from its tape ([`TapeView`]) or from the ranges the
/// single pass recorded ([`RangeView`]): one set of predicates serves both. A text the envelope
/// lacks reads as `""`, as [`text`] has it.
#[cfg_attr(not(feature = "filter"), allow(dead_code))]
pub(crate) trait EnvelopeView<'a> {
    fn queue(&self) -> &'a str;
    fn handler_ref(&self) -> &'a str;
    fn status(&self) -> &'a str;
    fn id(&self) -> &'a str;
    fn created_at(&self) -> &'a str;
    /// `created_at` in milliseconds (none when it is not a timestamp: a line the rules
    /// rejected).
    fn created_ms(&self) -> Option<i64> {
        parse_timestamp(self.created_at())
    }
    /// The number of attempt records.
    fn attempt_records(&self) -> usize;
    fn redrive_count(&self) -> i128;
    /// Every attempt's `error.type`, in order (attempts without an error have none).
    fn error_types(&self) -> impl Iterator<Item = &'a str> {
        self.errors().map(|e| e.kind)
    }
    /// Every attempt's error, in order.
    fn errors(&self) -> impl Iterator<Item = AttemptError<'a>>;
    /// The last attempt that has an error, and when it was seen: its `finished_at`, or its
    /// `started_at` while it is in flight (milliseconds).
    fn last_error(&self) -> Option<(AttemptError<'a>, i64)>;
    /// The last attempt's `finished_at` (milliseconds): none without an attempt or in flight.
    fn last_finished_at(&self) -> Option<i64>;
    /// The last attempt's `error.type` and `outcome`, when there is an attempt.
    fn last_attempt(&self) -> Option<(Option<&'a str>, Option<&'a str>)>;
    /// The header `key`'s value.
    fn header(&self, key: &str) -> Option<&'a str>;
    /// `origin.source` or `origin.submitted_by` (`field` is `source` or `submitted_by`).
    fn origin(&self, field: &str) -> Option<&'a str>;
    /// The base64 `payload`, absent under a claim check.
    fn payload(&self) -> Option<&'a str>;
}

/// An attempt's error, read from its tape.
fn attempt_error(attempt: Value<'_>) -> Option<AttemptError<'_>> {
    let error = attempt.get("error")?;
    Some(AttemptError {
        kind: error.get("type")?.as_str()?,
        message: Text::Plain(text(error.get("message"))),
    })
}

/// An attempt's timestamp member, in milliseconds.
fn time(attempt: Value<'_>, key: &str) -> Option<i64> {
    parse_timestamp(attempt.get(key)?.as_str()?)
}

/// An envelope read from its tape.
pub(crate) struct TapeView<'a>(pub Top<'a>);

impl<'a> EnvelopeView<'a> for TapeView<'a> {
    fn queue(&self) -> &'a str {
        text(self.0.queue)
    }
    fn handler_ref(&self) -> &'a str {
        text(self.0.handler_ref)
    }
    fn status(&self) -> &'a str {
        text(self.0.status)
    }
    fn id(&self) -> &'a str {
        text(self.0.id)
    }
    fn created_at(&self) -> &'a str {
        text(self.0.created_at)
    }
    fn attempt_records(&self) -> usize {
        self.0.attempts.map_or(0, |a| a.len())
    }
    fn redrive_count(&self) -> i128 {
        self.0
            .redrive_count
            .and_then(|v| v.as_integer())
            .unwrap_or(0)
    }
    fn errors(&self) -> impl Iterator<Item = AttemptError<'a>> {
        self.0
            .attempts
            .into_iter()
            .flat_map(|a| a.elements())
            .filter_map(attempt_error)
    }
    fn last_error(&self) -> Option<(AttemptError<'a>, i64)> {
        let attempts = self.0.attempts?.elements();
        let last = attempts.filter(|a| attempt_error(*a).is_some()).last()?;
        let seen = match time(last, "finished_at") {
            Some(ms) => ms,
            None => time(last, "started_at")?,
        };
        Some((attempt_error(last)?, seen))
    }
    fn last_finished_at(&self) -> Option<i64> {
        time(self.0.attempts?.last_element()?, "finished_at")
    }
    fn last_attempt(&self) -> Option<(Option<&'a str>, Option<&'a str>)> {
        let last = self.0.attempts?.last_element()?;
        let outcome = last.get("outcome").and_then(|o| o.as_str());
        Some((error_type(last), outcome))
    }
    fn header(&self, key: &str) -> Option<&'a str> {
        self.0.headers?.get(key)?.as_str()
    }
    fn origin(&self, field: &str) -> Option<&'a str> {
        self.0.origin?.get(field)?.as_str()
    }
    fn payload(&self) -> Option<&'a str> {
        self.0.payload?.as_str()
    }
}

/// An envelope read from the ranges the single pass recorded of a line it accepted, when none
/// of them holds an escape ([`Fields::plain`]): each range's bytes are the text.
#[derive(Clone, Copy)]
pub(crate) struct RangeView<'a> {
    pub line: &'a [u8],
    pub fields: &'a Fields,
}

impl<'a> RangeView<'a> {
    fn text(&self, (start, end): Range32) -> &'a str {
        // The single pass accepted the line, so it is UTF-8 and a string's content too.
        std::str::from_utf8(&self.line[start as usize..end as usize]).unwrap_or_default()
    }

    fn error(&self, attempt: &AttemptFields) -> Option<AttemptError<'a>> {
        let message = self.text(attempt.error_message);
        Some(AttemptError {
            kind: self.text(attempt.error_type?),
            message: match attempt.message_escaped {
                true => Text::Escaped(message),
                false => Text::Plain(message),
            },
        })
    }
}

impl<'a> EnvelopeView<'a> for RangeView<'a> {
    fn queue(&self) -> &'a str {
        self.text(self.fields.queue)
    }
    fn handler_ref(&self) -> &'a str {
        self.text(self.fields.handler_ref)
    }
    fn status(&self) -> &'a str {
        self.text(self.fields.status)
    }
    fn id(&self) -> &'a str {
        self.text(self.fields.id)
    }
    fn created_at(&self) -> &'a str {
        self.text(self.fields.created_at)
    }
    fn created_ms(&self) -> Option<i64> {
        // Parsed once already, by the single pass.
        Some(self.fields.created)
    }
    fn attempt_records(&self) -> usize {
        self.fields.attempts.len()
    }
    fn redrive_count(&self) -> i128 {
        i128::from(self.fields.redrive_count)
    }
    fn error_types(&self) -> impl Iterator<Item = &'a str> {
        // The types alone: the default, through `errors`, would check each message's UTF-8 too
        // (5% of `stats`'s instructions).
        let view = *self;
        view.fields
            .attempts
            .iter()
            .filter_map(move |a| Some(view.text(a.error_type?)))
    }
    fn errors(&self) -> impl Iterator<Item = AttemptError<'a>> {
        let view = *self;
        view.fields
            .attempts
            .iter()
            .filter_map(move |a| view.error(a))
    }
    fn last_error(&self) -> Option<(AttemptError<'a>, i64)> {
        let last = self
            .fields
            .attempts
            .iter()
            .rev()
            .find(|a| a.error_type.is_some())?;
        Some((self.error(last)?, last.finished.unwrap_or(last.started)))
    }
    fn last_finished_at(&self) -> Option<i64> {
        self.fields.attempts.last()?.finished
    }
    fn last_attempt(&self) -> Option<(Option<&'a str>, Option<&'a str>)> {
        let last = self.fields.attempts.last()?;
        Some((
            last.error_type.map(|r| self.text(r)),
            last.outcome.map(|r| self.text(r)),
        ))
    }
    fn header(&self, key: &str) -> Option<&'a str> {
        let line = self.line;
        let (_, value) =
            self.fields.headers.iter().find(|((start, end), _)| {
                &line[*start as usize..*end as usize] == key.as_bytes()
            })?;
        Some(self.text(*value))
    }
    fn origin(&self, field: &str) -> Option<&'a str> {
        let range = match field {
            "source" => self.fields.origin_source,
            "submitted_by" => self.fields.origin_submitted_by,
            _ => None,
        };
        range.map(|r| self.text(r))
    }
    fn payload(&self) -> Option<&'a str> {
        self.fields.payload.map(|r| self.text(r))
    }
}
