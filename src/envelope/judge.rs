//! The machinery every rule of the tape path uses: where a value sits (`Loc`), and the `Judge`
//! that collects one line's diagnostics, with the checks shared by the field
//! rules (`rules.rs`) and the attempt rules (`attempts.rs`): strings, timestamps, integers,
//! truncated text.

use crate::diagnostic::{pointer, push_capped, quoted, Diagnostic, ErrorCode};
use crate::json::{Value, ValueKind};

use super::formats;
use super::laws::Stamp;
use super::options::RuleOptions;
use super::Verdict;

/// Where a value sits, kept as parts so that the pointer is only built for a diagnostic.
#[derive(Debug, Clone, Copy)]
pub(super) enum Loc<'k> {
    Top(&'static str),
    Header(&'k str),
    PayloadRef(&'static str),
    Origin(&'static str),
    Attempt(usize),
    AttemptField(usize, &'static str),
    AttemptError(usize, &'static str),
}

impl Loc<'_> {
    fn pointer(self) -> String {
        match self {
            Loc::Top(f) => format!("/{f}"),
            Loc::Header(key) => pointer("/headers", key),
            Loc::PayloadRef(f) => format!("/payload_ref/{f}"),
            Loc::Origin(f) => format!("/origin/{f}"),
            Loc::Attempt(i) => format!("/attempts/{i}"),
            Loc::AttemptField(i, f) => format!("/attempts/{i}/{f}"),
            Loc::AttemptError(i, f) => format!("/attempts/{i}/error/{f}"),
        }
    }
}

/// What a value is, for a message: "a string", "a number that is not an integer".
pub(super) fn describe(v: Value<'_>) -> &'static str {
    match v.kind() {
        ValueKind::Number if v.as_integer().is_some() => "an integer",
        ValueKind::Number => "a number that is not a JSON integer",
        kind => kind.described(),
    }
}

/// Collects diagnostics for one line.
pub(super) struct Judge<'o, 'v> {
    pub(super) options: &'o RuleOptions,
    pub(super) version: u32,
    pub(super) out: &'v mut Verdict,
}

impl<'a> Judge<'_, '_> {
    #[cold]
    pub(super) fn error(&mut self, code: ErrorCode, loc: Loc<'_>, message: impl Into<String>) {
        // Capped: an envelope of many bad headers or attempts lists only so many.
        push_capped(&mut self.out.errors, code, || {
            Diagnostic::new(code, loc.pointer(), message)
        });
    }

    #[cold]
    pub(super) fn missing(&mut self, loc: Loc<'_>) {
        self.error(ErrorCode::MissingField, loc, "required member is missing");
    }

    #[cold]
    pub(super) fn wrong_type(&mut self, loc: Loc<'_>, expected: &str, found: Value<'_>) {
        let message = format!("expected {expected}, found {}", describe(found));
        self.error(ErrorCode::WrongType, loc, message);
    }

    /// A required string: `MISSING_FIELD` or `WRONG_TYPE` when it is not one.
    pub(super) fn string(&mut self, v: Option<Value<'a>>, loc: Loc<'_>) -> Option<&'a str> {
        let Some(v) = v else {
            self.missing(loc);
            return None;
        };
        let s = v.as_str();
        if s.is_none() {
            self.wrong_type(loc, "a string", v);
        }
        s
    }

    /// A required timestamp.
    pub(super) fn timestamp(&mut self, v: Option<Value<'a>>, loc: Loc<'_>) -> Option<i64> {
        let s = self.string(v, loc)?;
        self.timestamp_text(s, loc)
    }

    fn timestamp_text(&mut self, s: &str, loc: Loc<'_>) -> Option<i64> {
        let t = formats::parse_timestamp(s);
        if t.is_none() {
            self.error(
                ErrorCode::InvalidTimestamp,
                loc,
                format!(
                    "{} is not a UTC timestamp of the form YYYY-MM-DDTHH:MM:SS.mmmZ",
                    quoted(s)
                ),
            );
        }
        t
    }

    /// A required key holding a timestamp or `null`.
    pub(super) fn nullable_timestamp(&mut self, v: Option<Value<'a>>, loc: Loc<'_>) -> Stamp {
        match v {
            None => {
                self.missing(loc);
                Stamp::Unknown
            }
            Some(v) if v.is_null() => Stamp::Null,
            Some(v) => match v.as_str() {
                Some(s) => Stamp::Set(self.timestamp_text(s, loc)),
                None => {
                    self.wrong_type(loc, "a timestamp string or null", v);
                    Stamp::Unknown
                }
            },
        }
    }

    /// A required JSON integer in `min..=max`. An integer out of range is reported and still
    /// returned: the rules across fields can still check it (docs/envelope.md#diagnostics: "every
    /// rule a line breaks that it can still check").
    pub(super) fn integer(
        &mut self,
        v: Option<Value<'a>>,
        loc: Loc<'_>,
        min: i128,
        max: i128,
    ) -> Option<i128> {
        let Some(v) = v else {
            self.missing(loc);
            return None;
        };
        let Some(n) = v.as_integer() else {
            self.wrong_type(loc, "a JSON integer", v);
            return None;
        };
        if !(min..=max).contains(&n) {
            self.error(
                ErrorCode::OutOfRange,
                loc,
                format!("must be between {min} and {max}"),
            );
        }
        Some(n)
    }

    /// An optional string field with a byte limit and the truncation rule (`message`, `stack`).
    pub(super) fn truncatable(&mut self, s: &str, limit: usize, loc: Loc<'_>) {
        if !formats::within_limit(s, limit) {
            self.error(
                ErrorCode::FieldTooLong,
                loc,
                format!(
                    "{} bytes: over the {limit}-byte limit and not cut as the truncation rule says",
                    s.len()
                ),
            );
        }
    }
}
