//! What `filter` and `stats` read of a valid envelope, beyond its members: its errors, the last
//! one and when it was seen, the last attempt. Read through the [`EnvelopeRef`] the checker
//! hands back, with plain texts (`Checker::with_plain_texts`: a line whose strings hold
//! escapes is read from its tape), so that every text but an error message is a `&str`.

use crate::envelope::{EnvelopeRef, Outcome, Text as EnvelopeText};

pub(crate) use crate::envelope::Text;

/// An attempt's error: its `type` and `message`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AttemptError<'a> {
    pub kind: &'a str,
    pub message: Text<'a>,
}

/// A text of a view with plain texts (see the module's documentation).
fn plain(text: EnvelopeText<'_>) -> &str {
    match text {
        EnvelopeText::Plain(text) => text,
        // Not reached: a checker with plain texts reads such a line from its tape.
        EnvelopeText::Escaped(_) => "",
    }
}

/// What `filter` and `stats` read of a valid envelope: one set of predicates and groups over
/// [`EnvelopeRef`], whichever way the line was judged. A text the envelope lacks reads as `""`.
#[cfg_attr(not(feature = "filter"), allow(dead_code))]
pub(crate) trait EnvelopeView<'a> {
    /// `created_at` in milliseconds.
    fn created_ms(&self) -> Option<i64>;
    /// Every attempt's `error.type`, in order (attempts without an error have none).
    fn error_types(&self) -> impl Iterator<Item = &'a str>;
    /// Every attempt's error, in order.
    fn errors(&self) -> impl Iterator<Item = AttemptError<'a>>;
    /// The last attempt that has an error, and when it was seen: its `finished_at`, or its
    /// `started_at` while it is in flight (milliseconds).
    fn last_error(&self) -> Option<(AttemptError<'a>, i64)>;
    /// The last attempt's `finished_at` (milliseconds): none without an attempt or in flight.
    fn last_finished_at(&self) -> Option<i64>;
    /// The last attempt's `error.type` and `outcome`, when there is an attempt.
    fn last_attempt_facts(&self) -> Option<(Option<&'a str>, Option<&'a str>)>;
    /// The header `key`'s value.
    fn header_text(&self, key: &str) -> Option<&'a str>;
    /// `origin.source` or `origin.submitted_by` (`field` is `source` or `submitted_by`).
    fn origin(&self, field: &str) -> Option<&'a str>;
}

fn attempt_error(error: crate::envelope::AttemptErrorRef<'_>) -> AttemptError<'_> {
    AttemptError {
        kind: plain(error.kind),
        message: error.message,
    }
}

impl<'a> EnvelopeView<'a> for EnvelopeRef<'a> {
    fn created_ms(&self) -> Option<i64> {
        Some(self.created_at_ms())
    }
    fn error_types(&self) -> impl Iterator<Item = &'a str> {
        // The types alone: `errors` would check each message's UTF-8 too (5% of `stats`'s
        // instructions).
        self.attempts().filter_map(|a| a.error_type().map(plain))
    }
    fn errors(&self) -> impl Iterator<Item = AttemptError<'a>> {
        self.attempts().filter_map(|a| a.error().map(attempt_error))
    }
    fn last_error(&self) -> Option<(AttemptError<'a>, i64)> {
        let last = self.last_attempt_with_error()?;
        let seen = last.finished_at_ms().unwrap_or(last.started_at_ms());
        Some((attempt_error(last.error()?), seen))
    }
    fn last_finished_at(&self) -> Option<i64> {
        self.last_attempt()?.finished_at_ms()
    }
    fn last_attempt_facts(&self) -> Option<(Option<&'a str>, Option<&'a str>)> {
        let last = self.last_attempt()?;
        Some((
            last.error_type().map(plain),
            last.outcome().map(Outcome::as_str),
        ))
    }
    fn header_text(&self, key: &str) -> Option<&'a str> {
        self.header(key).map(plain)
    }
    fn origin(&self, field: &str) -> Option<&'a str> {
        match field {
            "source" => self.origin_source(),
            "submitted_by" => self.origin_submitted_by(),
            _ => None,
        }
        .map(plain)
    }
}
