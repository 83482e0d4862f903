//! Small readers of an envelope's members, shared by `filter` and `stats` (which find the
//! members themselves with [`Top::of`](crate::envelope::Top::of), the rules' one walk).

use crate::envelope::{Fields, Range32, Top};
use crate::json::Value;

/// A string member's text, or `""`.
pub(crate) fn text(value: Option<Value<'_>>) -> &str {
    value.and_then(|v| v.as_str()).unwrap_or_default()
}

/// An attempt's `error.type`.
pub(crate) fn error_type(attempt: Value<'_>) -> Option<&str> {
    attempt.get("error")?.get("type")?.as_str()
}

/// What `filter` reads of a valid envelope, from its tape ([`TapeView`]) or from the ranges the
/// single pass recorded ([`RangeView`]): one set of predicates serves both. A text the envelope
/// lacks reads as `""`, as [`text`] has it.
pub(crate) trait EnvelopeView<'a> {
    fn queue(&self) -> &'a str;
    fn handler_ref(&self) -> &'a str;
    fn status(&self) -> &'a str;
    fn id(&self) -> &'a str;
    fn created_at(&self) -> &'a str;
    /// The number of attempt records.
    fn attempt_records(&self) -> usize;
    fn redrive_count(&self) -> i128;
    /// Every attempt's `error.type`, in order (attempts without an error have none).
    fn error_types(&self) -> impl Iterator<Item = &'a str>;
    /// The last attempt's `error.type` and `outcome`, when there is an attempt.
    fn last_attempt(&self) -> Option<(Option<&'a str>, Option<&'a str>)>;
    /// The header `key`'s value.
    fn header(&self, key: &str) -> Option<&'a str>;
    /// `origin.source` or `origin.submitted_by` (`field` is `source` or `submitted_by`).
    fn origin(&self, field: &str) -> Option<&'a str>;
    /// The base64 `payload`, absent under a claim check.
    fn payload(&self) -> Option<&'a str>;
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
    fn error_types(&self) -> impl Iterator<Item = &'a str> {
        self.0
            .attempts
            .into_iter()
            .flat_map(|a| a.elements())
            .filter_map(error_type)
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
pub(crate) struct RangeView<'a> {
    pub line: &'a [u8],
    pub fields: &'a Fields,
}

impl<'a> RangeView<'a> {
    fn text(&self, (start, end): Range32) -> &'a str {
        // The single pass accepted the line, so it is UTF-8 and a string's content too.
        std::str::from_utf8(&self.line[start as usize..end as usize]).unwrap_or_default()
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
    fn attempt_records(&self) -> usize {
        self.fields.attempts.len()
    }
    fn redrive_count(&self) -> i128 {
        i128::from(self.fields.redrive_count)
    }
    fn error_types(&self) -> impl Iterator<Item = &'a str> {
        let fields: &'a Fields = self.fields;
        let line = self.line;
        fields.attempts.iter().filter_map(move |a| {
            let (start, end) = a.error_type?;
            std::str::from_utf8(&line[start as usize..end as usize]).ok()
        })
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
