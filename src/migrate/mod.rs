//! Migrations across envelope versions (docs/migrations.md), by splicing.
//!
//! A step reads a valid envelope of its source version (the document from the JSON layer, and
//! the line's bytes) and writes the target version as a few `Edits` of the input: the
//! version number, a member moved or inserted, a member removed. Every other byte is copied, so
//! unknown fields, number spellings, escapes, key order and white space all stay as they were.
//! The steps chain for any pair of supported versions; a later version adds one step up and
//! one step down.
//!
//! ```
//! use rdq_envelope::migrate::{Migration, Migrator};
//! use rdq_envelope::{EnvelopeRules, JsonParser, RuleOptions, Verdict};
//!
//! let v1 = br#"{"envelope_version":1,"id":"01HWT0DD088F8ENKHRJHCSSPV8","queue":"mail","handler_ref":"send","payload":"e30=","payload_content_type":"application/json","headers":{"rdq.source":"api","x":"1"},"status":"PENDING","attempt_count":0,"redrive_count":0,"next_attempt_at":"2024-05-01T12:00:00.000Z","lease_expires_at":null,"created_at":"2024-05-01T12:00:00.000Z","attempts":[],"extra":1e400}"#;
//! let rules = EnvelopeRules::new(RuleOptions::default()).unwrap();
//! let (mut parser, mut verdict) = (JsonParser::new(), Verdict::default());
//! let doc = rules.check_line(&mut parser, v1, &mut verdict).unwrap();
//! assert!(verdict.is_valid());
//!
//! let (mut migrator, mut out, mut errors) = (Migrator::new(), Vec::new(), Vec::new());
//! let done = migrator.migrate(v1, &doc, 1, 2, &mut out, &mut errors);
//! assert_eq!(done, Ok(Migration::Written));
//! let v2 = String::from_utf8(out).unwrap();
//! assert!(v2.starts_with(r#"{"envelope_version":2,"#));
//! assert!(v2.contains(r#""headers":{"x":"1"},"origin":{"source":"api"},"#));
//! assert!(v2.ends_with(r#""attempts":[],"extra":1e400}"#));
//! ```

pub(crate) mod edits;
#[cfg(test)]
mod tests;
mod v1_to_v2;
mod v2_to_v1;

use crate::diagnostic::Diagnostic;
use crate::envelope::shape::Shape;
use crate::envelope::{supported_versions, SUPPORTED_VERSIONS};
use crate::json::{Document, JsonParser, Value, ValueKind};
use edits::Edits;

/// The edits of a step from one version to the next one up or down, for a valid envelope of
/// `from` whose shape is given.
type EditsFn = fn(&Shape, &[u8], &mut Edits);

/// Every step, by the versions it joins.
const STEPS: &[(u32, u32, EditsFn)] = &[(1, 2, v1_to_v2::edits), (2, 1, v2_to_v1::edits)];

/// Span lists and edits, reused from line to line.
#[derive(Debug, Default)]
struct Scratch {
    /// Every tape node's byte range ([`Document::node_spans`]).
    nodes: Vec<(usize, usize)>,
    shape: Shape,
    edits: Edits,
}

/// What became of a line that could be migrated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Migration {
    /// The target version was appended to the output.
    Written,
    /// The target cannot hold the envelope (`CANNOT_DOWNGRADE`) or the step would overwrite
    /// data (`MIGRATION_CONFLICT`): the reasons were pushed onto the errors, nothing written.
    Refused,
}

/// Why a line could not be put to a migration at all: a caller's mistake, not a property of
/// the envelope (that is a [`Migration::Refused`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MigrateError {
    /// `from` or `to` is not a supported version.
    #[error(
        "envelope version {0} is not supported (supported: {supported})",
        supported = supported_versions()
    )]
    UnsupportedVersion(u32),
    /// The document is not a valid envelope of version `from` (validate it first).
    #[error("the document is not a valid envelope of version {from}: {what}")]
    NotValid {
        /// The version the caller said the document has.
        from: u32,
        /// What is missing or wrong.
        what: &'static str,
    },
}

/// Migrates lines between versions; one per worker thread (it reuses its buffers).
#[derive(Debug, Default)]
pub struct Migrator {
    scratch: Scratch,
    /// For a chain of several steps: the parser of the intermediate lines, and those lines.
    parser: Option<Box<JsonParser>>,
    between: Vec<u8>,
}

impl Migrator {
    /// A migrator with empty buffers: make one per thread and reuse it for every line.
    ///
    /// ```
    /// use rdq_envelope::migrate::{Migration, Migrator};
    /// use rdq_envelope::JsonParser;
    ///
    /// let line = br#"{"envelope_version":1,"headers":{},"attempts":[]}"#;
    /// let mut parser = JsonParser::new();
    /// let doc = parser.parse(line, &mut Vec::new()).expect("JSON");
    /// let (mut migrator, mut out, mut errors) = (Migrator::new(), Vec::new(), Vec::new());
    /// // The same version: the line is copied as it is.
    /// let done = migrator.migrate(line, &doc, 1, 1, &mut out, &mut errors);
    /// assert_eq!(done, Ok(Migration::Written));
    /// assert_eq!(out, line);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends `line`, a valid envelope of version `from` whose document is `doc`, as version
    /// `to` to `out` (a worker writes straight into its output). [`Migration::Refused`], with
    /// the reasons in `errors`, when the target cannot represent it (`CANNOT_DOWNGRADE`) or the
    /// step would overwrite data (`MIGRATION_CONFLICT`). `from == to` copies the line
    /// unchanged.
    ///
    /// # Errors
    ///
    /// [`MigrateError::UnsupportedVersion`] for a version other than 1 and 2, and
    /// [`MigrateError::NotValid`] for a document that is not a valid envelope of `from` as far
    /// as the migration needs (its version, `headers`, `origin`, `attempts`); `out` is then
    /// left as it was. The full rules are [`EnvelopeRules`](crate::EnvelopeRules)'s to check:
    /// a document that passes them always migrates or is refused.
    ///
    /// ```
    /// use rdq_envelope::migrate::{MigrateError, Migration, Migrator};
    /// use rdq_envelope::{EnvelopeRules, ErrorCode, JsonParser, RuleOptions, Verdict};
    ///
    /// // A version 2 envelope whose origin says more than version 1 can hold.
    /// let v2 = br#"{"envelope_version":2,"id":"01HWT0DD088F8ENKHRJHCSSPV8","queue":"mail","handler_ref":"send","payload":"e30=","payload_content_type":"application/json","headers":{},"origin":{"source":"api","region":"eu"},"status":"PENDING","attempt_count":0,"redrive_count":0,"next_attempt_at":"2024-05-01T12:00:00.000Z","lease_expires_at":null,"created_at":"2024-05-01T12:00:00.000Z","attempts":[]}"#;
    /// let rules = EnvelopeRules::new(RuleOptions::default())?;
    /// let (mut parser, mut verdict) = (JsonParser::new(), Verdict::default());
    /// let doc = rules.check_line(&mut parser, v2, &mut verdict).expect("JSON");
    /// assert_eq!(verdict.version, Some(2));
    ///
    /// let (mut migrator, mut out, mut errors) = (Migrator::new(), Vec::new(), Vec::new());
    /// let done = migrator.migrate(v2, &doc, 2, 1, &mut out, &mut errors)?;
    /// assert_eq!(done, Migration::Refused);
    /// assert!(out.is_empty());
    /// assert_eq!((errors[0].code, errors[0].path.as_str()), (ErrorCode::CannotDowngrade, "/origin/region"));
    ///
    /// // Upwards nothing is lost; a version that does not exist is the caller's mistake.
    /// errors.clear();
    /// assert_eq!(migrator.migrate(v2, &doc, 2, 2, &mut out, &mut errors)?, Migration::Written);
    /// assert_eq!(out, v2);
    /// let unknown = migrator.migrate(v2, &doc, 2, 3, &mut out, &mut errors);
    /// assert_eq!(unknown, Err(MigrateError::UnsupportedVersion(3)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn migrate(
        &mut self,
        line: &[u8],
        doc: &Document<'_>,
        from: u32,
        to: u32,
        out: &mut Vec<u8>,
        errors: &mut Vec<Diagnostic>,
    ) -> Result<Migration, MigrateError> {
        for version in [from, to] {
            if !SUPPORTED_VERSIONS.contains(&version) {
                return Err(MigrateError::UnsupportedVersion(version));
            }
        }
        precondition(doc.root(), from).map_err(|what| MigrateError::NotValid { from, what })?;
        if from == to {
            out.extend_from_slice(line);
            return Ok(Migration::Written);
        }
        let next = if to > from { from + 1 } else { from - 1 };
        if next == to {
            return self.step(line, doc, from, next, out, errors);
        }
        // A longer chain: parse what this step wrote and go on from there.
        let mut between = std::mem::take(&mut self.between);
        between.clear();
        let stepped = self.step(line, doc, from, next, &mut between, errors);
        if stepped != Ok(Migration::Written) {
            self.between = between;
            return stepped;
        }
        let mut parser = self.parser.take().unwrap_or_default();
        let mut parse_errors = Vec::new();
        let done = match parser.parse(&between, &mut parse_errors) {
            Some(doc) => self.migrate(&between, &doc, next, to, out, errors),
            // Not reached: a step writes valid JSON.
            None => Err(MigrateError::NotValid {
                from: next,
                what: "an intermediate step wrote a line that is not JSON",
            }),
        };
        self.between = between;
        self.parser = Some(parser);
        done
    }

    fn step(
        &mut self,
        line: &[u8],
        doc: &Document<'_>,
        from: u32,
        to: u32,
        out: &mut Vec<u8>,
        errors: &mut Vec<Diagnostic>,
    ) -> Result<Migration, MigrateError> {
        let Scratch {
            nodes,
            shape,
            edits,
        } = &mut self.scratch;
        doc.node_spans(line, nodes);
        shape.fill_from_tape(doc.root(), nodes);
        let before = errors.len();
        let refused = match (from, to) {
            (1, 2) => v1_to_v2::refused(shape, errors),
            (2, 1) => v2_to_v1::refused(doc.root(), errors),
            _ => false,
        };
        if refused {
            crate::json::locate_all(&mut errors[before..], line);
            return Ok(Migration::Refused);
        }
        write_step(shape, edits, line, from, to, out)
    }

    /// Appends `line`, a valid envelope of version `from` whose shape the single pass recorded,
    /// as version `to`, next to `from`. [`Migration::Refused`] without reasons, `out` as it
    /// was, when the step refuses it: [`Migrator::migrate`] on the tape gives them.
    pub(crate) fn migrate_shape(
        &mut self,
        line: &[u8],
        shape: &Shape,
        from: u32,
        to: u32,
        out: &mut Vec<u8>,
    ) -> Result<Migration, MigrateError> {
        let refused = match (from, to) {
            (1, 2) => v1_to_v2::would_overwrite(shape),
            (2, 1) => shape.downgrade_blocked,
            _ => false,
        };
        if refused {
            return Ok(Migration::Refused);
        }
        write_step(shape, &mut self.scratch.edits, line, from, to, out)
    }
}

/// Appends `line` as version `to`: the edits of the step `from` → `to` for its `shape`, applied.
fn write_step(
    shape: &Shape,
    edits: &mut Edits,
    line: &[u8],
    from: u32,
    to: u32,
    out: &mut Vec<u8>,
) -> Result<Migration, MigrateError> {
    let Some(edits_of) = STEPS
        .iter()
        .find(|(f, t, _)| (*f, *t) == (from, to))
        .map(|(_, _, step)| *step)
    else {
        // Not reached: every adjacent pair of supported versions has its step.
        return Err(MigrateError::UnsupportedVersion(to));
    };
    edits.clear();
    edits_of(shape, line, edits);
    if !edits.apply(line, out) {
        // Edits that overlap: the document's members are not those of a valid envelope
        // (a repeated top-level member, say).
        return Err(MigrateError::NotValid {
            from,
            what: "its members overlap the migration's edits (a repeated member?)",
        });
    }
    Ok(Migration::Written)
}

/// What the steps rely on in a valid envelope of `from`: checked, so that a document that was
/// not validated is an error and never a panic.
fn precondition(root: Value<'_>, from: u32) -> Result<(), &'static str> {
    if root.kind() != ValueKind::Object {
        return Err("it is not a JSON object");
    }
    let mut seen = [false; 4];
    for (key, value) in root.members() {
        let (slot, ok, what) = match key {
            "envelope_version" => (
                0,
                value.as_integer() == Some(i128::from(from)),
                "envelope_version is not the version given",
            ),
            "headers" => (1, is_object(value), "headers is not an object"),
            "attempts" => (
                2,
                attempts_hold(value, from),
                "attempts are not attempt records",
            ),
            "origin" if from >= 2 => (3, is_object(value), "origin is not an object"),
            _ => continue,
        };
        if seen[slot] {
            return Err("a top-level member is repeated");
        }
        if !ok {
            return Err(what);
        }
        seen[slot] = true;
    }
    match seen {
        [false, ..] => Err("envelope_version is missing"),
        [_, false, ..] => Err("headers is missing"),
        [.., false] if from >= 2 => Err("origin is missing"),
        _ => Ok(()),
    }
}

/// Whether `attempts` is an array of objects, each with a `finished_at` where version 1 → 2
/// computes a duration from it.
fn attempts_hold(attempts: Value<'_>, from: u32) -> bool {
    attempts.kind() == ValueKind::Array
        && attempts.elements().all(|attempt| {
            is_object(attempt) && (from != 1 || attempt.get("finished_at").is_some())
        })
}

fn is_object(value: Value<'_>) -> bool {
    value.kind() == ValueKind::Object
}
