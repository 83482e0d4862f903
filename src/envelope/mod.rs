//! The envelope model and its rules (docs/envelope.md): no I/O, one line at a time.
//!
//! [`EnvelopeRules`] is built once from [`RuleOptions`]; each thread owns a [`Checker`], which
//! judges line after line by the single pass, else the tape, and hands back a valid envelope
//! as an [`EnvelopeRef`]. The rules that relate several facts are written once, in `laws.rs`,
//! for both paths.

mod attempts;
mod check;
// The string formats, for the command line and the tests: not part of the API.
#[doc(hidden)]
pub mod formats;
mod judge;
mod laws;
mod options;
pub(crate) mod owned;
mod rules;
pub(crate) mod shape;
mod single_pass;
pub(crate) mod spans;
#[cfg(test)]
mod tests;
mod types;
mod view;

pub use attempts::{MESSAGE_LIMIT, STACK_LIMIT};
pub use check::{Checked, Checker};
pub use options::{
    supported_versions, OptionsError, RuleOptions, DEFAULT_MAX_ENVELOPE_BYTES, NEWEST_VERSION,
    SUPPORTED_VERSIONS,
};
#[cfg(feature = "proto")]
pub(crate) use owned::known;
pub use owned::{
    truncate, Attempt, AttemptError, Clock, Envelope, EnvelopeError, FinishedAttempt, IdGenerator,
    JsonText, Optional, Origin, PayloadRef, Producer, Submit, SystemClock, UnknownMember,
    UnknownMembers,
};
pub(crate) use single_pass::{Clean, SinglePass};
pub use types::{Outcome, ParseError, Status, Timestamp, Ulid};
pub use view::{AttemptErrorRef, AttemptRef, EnvelopeRef, Text};

use crate::diagnostic::{Diagnostic, ErrorCode};
use crate::json::{Document, JsonParser};

/// The rules' judgement of one line: every error and warning it found (`#[non_exhaustive]`:
/// read its fields, make one with `Verdict::default()`). Owned (it borrows
/// nothing from the line) and reusable: [`EnvelopeRules::check_line`] clears it first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Verdict {
    /// Broken rules; the line is valid exactly when this is empty.
    pub errors: Vec<Diagnostic>,
    /// Warnings (docs/envelope.md#warnings): reported, never a reason to reject.
    pub warnings: Vec<Diagnostic>,
    /// The line's `envelope_version`, when it is a supported one.
    pub version: Option<u32>,
}

impl Verdict {
    /// Whether the line broke no rule.
    pub fn is_valid(&self) -> bool {
        self.errors.is_empty()
    }

    /// Empties the verdict, keeping its allocations.
    pub fn clear(&mut self) {
        self.errors.clear();
        self.warnings.clear();
        self.version = None;
    }

    /// Whether some error has `code`.
    pub fn has_error(&self, code: ErrorCode) -> bool {
        self.errors.iter().any(|d| d.code == code)
    }
}

/// Where in `line` each of the verdict's diagnostics points (`Diagnostic::offset`): only for
/// a line with something to report, so a valid line's judgement costs nothing more.
fn locate(verdict: &mut Verdict, line: &[u8]) {
    if !verdict.errors.is_empty() || !verdict.warnings.is_empty() {
        locate_cold(verdict, line);
    }
}

#[cold]
fn locate_cold(verdict: &mut Verdict, line: &[u8]) {
    crate::json::locate_all(&mut verdict.errors, line);
    crate::json::locate_all(&mut verdict.warnings, line);
}

/// The rules, configured once for a run.
///
/// ```
/// use rdq_envelope::{EnvelopeRules, JsonParser, RuleOptions, Verdict};
///
/// let mut options = RuleOptions::default();
/// options.submit = true;
/// let rules = EnvelopeRules::new(options).unwrap();
/// let mut parser = JsonParser::new();
/// let mut verdict = Verdict::default();
/// let line = br#"{"queue":"mail","handler_ref":"send","payload":"e30=","payload_content_type":"application/json"}"#;
/// rules.check_line(&mut parser, line, &mut verdict);
/// assert!(verdict.is_valid());
///
/// rules.check_line(&mut parser, br#"{"queue":"Mail"}"#, &mut verdict);
/// let codes: Vec<_> = verdict.errors.iter().map(|d| d.code.as_str()).collect();
/// assert!(codes.contains(&"INVALID_NAME") && codes.contains(&"MISSING_FIELD"));
/// ```
#[derive(Debug, Clone)]
pub struct EnvelopeRules {
    options: RuleOptions,
    largest_limit: u64,
}

impl EnvelopeRules {
    /// Rules for `options`, refused when the options contradict each other.
    pub fn new(options: RuleOptions) -> Result<Self, OptionsError> {
        options.validate()?;
        let largest_limit = options.largest_limit();
        Ok(EnvelopeRules {
            options,
            largest_limit,
        })
    }

    /// The options the rules were built from.
    pub fn options(&self) -> &RuleOptions {
        &self.options
    }

    /// Judges one line (its content, without terminator) into `verdict`. Returns the parsed
    /// document when the line passed the JSON layer (whatever the rules said), so that the
    /// caller can read more of it without parsing again.
    pub fn check_line<'p>(
        &self,
        parser: &'p mut JsonParser,
        line: &[u8],
        verdict: &mut Verdict,
    ) -> Option<Document<'p>> {
        verdict.clear();
        // A line over every limit cannot be valid: it is not parsed, so memory stays bounded
        // by the largest line that can be valid (docs/envelope.md#size-limit).
        if line.len() as u64 > self.largest_limit {
            verdict
                .errors
                .push(rules::too_large(line.len(), self.largest_limit, None).at_offset(0));
            return None;
        }
        let Some(doc) = parser.parse(line, &mut verdict.errors) else {
            locate(verdict, line);
            return None;
        };
        self.check_document(&doc, line.len(), verdict);
        locate(verdict, line);
        Some(doc)
    }

    /// Whether `line` is a valid envelope with nothing to warn about, found by the single pass
    /// (`single_pass.rs`) without parsing a tape: `Some(version)` then; `None` when it is not,
    /// or when the single pass cannot tell, and [`EnvelopeRules::check_line`] must judge it.
    pub(crate) fn clean_version(&self, single: &mut SinglePass, line: &[u8]) -> Option<u32> {
        self.clean(single, line).map(|clean| clean.version)
    }

    /// [`EnvelopeRules::clean_version`], with what else the single pass read of the line.
    pub(crate) fn clean(&self, single: &mut SinglePass, line: &[u8]) -> Option<Clean> {
        if line.len() as u64 > self.largest_limit {
            return None;
        }
        single.check(&self.options, line)
    }

    /// `PAYLOAD_TOO_LARGE` when a line of `len` bytes is over `queue`'s size limit
    /// (docs/envelope.md#size-limit): for lines a command writes, such as a migration's output
    /// (docs/migrations.md#size-limits-after-migration).
    pub fn size_error(&self, queue: Option<&str>, len: usize) -> Option<Diagnostic> {
        laws::over_size_limit(&self.options, len, || queue)
            .map(|over| rules::too_large(len, over.limit, over.queue))
    }

    /// Judges a document that passed the JSON layer; `line_len` is the raw line's length in
    /// bytes (for the size limit). Appends to `verdict` without clearing it.
    pub fn check_document(&self, doc: &Document<'_>, line_len: usize, verdict: &mut Verdict) {
        rules::check(&self.options, doc.root(), line_len, verdict);
    }
}
