//! `migrate`: every valid line written as the target version (docs/migrations.md,
//! docs/cli.md#migrate), from rdq envelopes or from ChokaQ rows (docs/chokaq.md).

use super::output::{self, MESSAGES, PRIMARY, SECONDARY};
use crate::chokaq::{ChokaqOptions, Importer};
use crate::diagnostic::{Diagnostic, ErrorCode};
use crate::envelope::SUPPORTED_VERSIONS;
use crate::envelope::{Checked, Checker, Clean, EnvelopeRules, SinglePass, Verdict};
use crate::framing::{Line, LineKind};
use crate::json::JsonParser;
use crate::migrate::{MigrateError, Migration, Migrator};
use crate::pipeline::{Action, ChunkOutput, LineOperation, SourceLine};
use crate::report::{self, Position};

/// What the input lines are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MigrateSource {
    /// rdq envelopes of any supported version.
    Rdq,
    /// ChokaQ table rows, imported as version 1 first.
    Chokaq(ChokaqOptions),
}

/// The `migrate` operation: migrated lines to the primary output, reject records to the
/// rejects, the warnings of emitted lines as JSON Lines to the secondary output
/// (`--warnings-out`) and in human form to the messages (`--warnings`).
///
/// Built with [`MigrateOp::new`], which checks the target version; the fields it leaves at
/// their defaults can be set after.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct MigrateOp {
    /// The rules every line (or imported envelope) is judged by, against its own version.
    pub rules: EnvelopeRules,
    /// What the input lines are.
    pub source: MigrateSource,
    /// The target `envelope_version`, a supported one.
    to: u32,
    /// Write warnings in human form to the messages (standard error).
    pub report_warnings: bool,
    /// Write warning records to the secondary output.
    pub warnings_out: bool,
    /// Write reject records.
    pub write_rejects: bool,
    /// The reader cap, for the `LINE_TOO_LONG` message.
    pub max_line_bytes: usize,
}

/// A worker's reusable state.
#[derive(Debug)]
pub struct MigrateWorker {
    /// Judges lines, recording where the migration's edits go when the single pass settles
    /// one.
    checker: Checker,
    migrator: Migrator,
    /// For ChokaQ rows: the importer, the row's parser, what is wrong with the row, the
    /// imported envelope and the row's warnings.
    importer: Option<Importer>,
    row_parser: JsonParser,
    row_verdict: Verdict,
    envelope: Vec<u8>,
    row_warnings: Vec<Diagnostic>,
}

impl LineOperation for MigrateOp {
    // The migrated lines, the warnings records, the rejects, the warnings for people.
    const OUTPUTS: usize = output::MESSAGES + 1;
    type Worker = MigrateWorker;
    type Tally = ();
    type Total = ();

    fn worker(&self) -> Self::Worker {
        let importer = match &self.source {
            MigrateSource::Rdq => None,
            MigrateSource::Chokaq(options) => {
                Some(Importer::new(options.clone(), self.rules.options()))
            }
        };
        let mut checker = super::checker(&self.rules, self.max_line_bytes);
        checker.record_shape();
        MigrateWorker {
            checker,
            migrator: Migrator::default(),
            importer,
            row_parser: JsonParser::new(),
            row_verdict: Verdict::default(),
            envelope: Vec::new(),
            row_warnings: Vec::new(),
        }
    }

    fn total(&self) {}

    fn apply(&self, w: &mut MigrateWorker, line: SourceLine<'_>, out: &mut ChunkOutput) -> Action {
        let SourceLine { source, line } = line;
        let at = super::position(source, &line);
        if w.importer.is_some() && line.kind != LineKind::TooLong {
            return self.import_row(w, at, &line, out);
        }
        let checked = w.checker.check_line(&line);
        // The usual line, valid with nothing to warn about or refuse, is migrated from what
        // the single pass recorded; any other goes the tape path, which says why.
        if let Some((clean, single)) = checked.single_pass() {
            if self.migrate_clean(clean, single, line.content, &mut w.migrator, out) {
                return Action::Emit;
            }
        }
        let mut checked = checked.on_tape();
        if !self.migrate_valid(at, line.content, &mut checked, &mut w.migrator, out) {
            return super::reject(checked.verdict(), at, &line, out, self.write_rejects);
        }
        Action::Emit
    }
}

impl MigrateOp {
    /// Migration of `source` lines to version `to`, with these defaults: no warnings reported
    /// (`report_warnings`, `warnings_out` off), no reject records (`write_rejects` off), and
    /// the reader's default cap as `max_line_bytes`.
    ///
    /// # Errors
    ///
    /// [`MigrateError::UnsupportedVersion`] when `to` is not a supported version.
    pub fn new(rules: EnvelopeRules, source: MigrateSource, to: u32) -> Result<Self, MigrateError> {
        if !SUPPORTED_VERSIONS.contains(&to) {
            return Err(MigrateError::UnsupportedVersion(to));
        }
        Ok(MigrateOp {
            rules,
            source,
            to,
            report_warnings: false,
            warnings_out: false,
            write_rejects: false,
            max_line_bytes: crate::framing::DEFAULT_MAX_LINE_BYTES,
        })
    }

    /// The target `envelope_version`.
    pub fn to(&self) -> u32 {
        self.to
    }

    /// A ChokaQ row: imported as version 1, validated, then migrated. The row's warnings go
    /// before the envelope's.
    fn import_row(
        &self,
        w: &mut MigrateWorker,
        at: Position<'_>,
        line: &Line<'_>,
        out: &mut ChunkOutput,
    ) -> Action {
        let MigrateWorker {
            checker,
            migrator,
            importer,
            row_parser,
            row_verdict,
            envelope,
            row_warnings,
        } = w;
        let importer = importer.as_mut().expect("a ChokaQ source has an importer");
        envelope.clear();
        row_warnings.clear();
        row_verdict.clear();
        let row = line.content;
        let imported = match row_parser.parse(row, &mut row_verdict.errors) {
            Some(doc) => {
                importer.import(row, &doc, envelope, &mut row_verdict.errors, row_warnings)
            }
            None => false,
        };
        if !imported {
            return super::reject(row_verdict, at, line, out, self.write_rejects);
        }
        let mut checked = checker.check_on_tape(envelope);
        let (verdict, _) = checked.verdict_mut();
        verdict.warnings.splice(0..0, row_warnings.drain(..));
        if !self.migrate_valid(at, envelope, &mut checked, migrator, out) {
            return super::reject(checked.verdict(), at, line, out, self.write_rejects);
        }
        Action::Emit
    }

    /// Appends `line` and its line feed as the target version when the single pass found it
    /// clean and the step neither refuses it nor makes it too large for its queue; `false`,
    /// `out` as it was, when not.
    fn migrate_clean(
        &self,
        Clean { version, queue, .. }: Clean,
        single: &SinglePass,
        line: &[u8],
        migrator: &mut Migrator,
        out: &mut ChunkOutput,
    ) -> bool {
        let out = out.buffer(PRIMARY);
        let start = out.len();
        if version == self.to {
            out.extend_from_slice(line);
        } else {
            let Some(shape) = single.shape() else {
                return false;
            };
            let done = migrator.migrate_shape(line, shape, version, self.to, out);
            if done != Ok(Migration::Written) {
                return false;
            }
        }
        let queue = std::str::from_utf8(&line[queue.0 as usize..queue.1 as usize]).ok();
        if self.rules.size_error(queue, out.len() - start).is_some() {
            out.truncate(start);
            return false;
        }
        out.push(b'\n');
        true
    }

    /// Writes a line the rules judged into `verdict`, as the target version, when it is valid
    /// and fits its queue's size limit; the reasons land in `verdict` otherwise.
    fn migrate_valid(
        &self,
        at: Position<'_>,
        line: &[u8],
        checked: &mut Checked<'_>,
        migrator: &mut Migrator,
        out: &mut ChunkOutput,
    ) -> bool {
        // Input is judged against its own version first: an invalid line is rejected, never
        // fixed (docs/migrations.md#the-principle).
        let (verdict, doc) = checked.verdict_mut();
        let (Some(doc), true) = (doc, verdict.is_valid()) else {
            return false;
        };
        let root = doc.root();
        let from = verdict
            .version
            .expect("a valid line has a supported version");
        // Written straight into the output, and taken back if the line is rejected.
        let start = out.buffer(PRIMARY).len();
        // A refusal (CANNOT_DOWNGRADE, MIGRATION_CONFLICT) lands in the verdict's errors.
        let errors = &mut verdict.errors;
        if let Err(e) = migrator.migrate(line, doc, from, self.to, out.buffer(PRIMARY), errors) {
            // Not reached for a valid line and a supported target; still a rejection with its
            // reason, never a line lost.
            errors.push(Diagnostic::new(
                ErrorCode::UnsupportedVersion,
                "/envelope_version".to_owned(),
                e.to_string(),
            ));
        }
        let queue = root.get("queue").and_then(|v| v.as_str());
        if !super::finish_written(&self.rules, queue, out.buffer(PRIMARY), start, verdict) {
            return false;
        }
        out.summary.tally_warnings(&verdict.warnings);
        if !verdict.warnings.is_empty() {
            // Writing into a Vec cannot fail.
            if self.report_warnings {
                let _ = report::write_human(out.buffer(MESSAGES), at, verdict, true);
            }
            if self.warnings_out {
                // The record names the written envelope's `id`.
                let id = root.get("id").and_then(|v| v.as_str());
                let _ = report::write_json(out.buffer(SECONDARY), at, id, verdict, true);
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RuleOptions;

    /// Every line migrated from the single pass's shape is migrated to the same bytes by the
    /// tape path, both ways; and nearly every valid `gen` line is (else it would save nothing).
    #[test]
    fn the_single_pass_migrates_as_the_tape_path_does() {
        for (from, to) in [(1, 2), (2, 1)] {
            let rules = EnvelopeRules::new(RuleOptions::default()).unwrap();
            let op = MigrateOp::new(rules, MigrateSource::Rdq, to).unwrap();
            let mut w = op.worker();
            let (mut fast_lines, mut written) = (0, 0);
            for line in crate::generate::test_lines(5, from, 0.1, 2000) {
                let mut tape_out = Vec::new();
                let checked = w.checker.check_on_tape(&line);
                if let (Some(doc), true) = (checked.document(), checked.is_valid()) {
                    let (mut errors, version) = (Vec::new(), checked.verdict().version.unwrap());
                    let done =
                        w.migrator
                            .migrate(&line, doc, version, to, &mut tape_out, &mut errors);
                    if done == Ok(Migration::Written) {
                        written += 1;
                        tape_out.push(b'\n');
                    }
                }
                drop(checked);
                let mut fast_out = ChunkOutput::new(MigrateOp::OUTPUTS);
                let checked = w.checker.check(&line);
                let Some((clean, single)) = checked.single_pass() else {
                    continue;
                };
                if op.migrate_clean(clean, single, &line, &mut w.migrator, &mut fast_out) {
                    fast_lines += 1;
                    let fast_out = fast_out.bytes(PRIMARY);
                    assert_eq!(fast_out, tape_out, "{}", String::from_utf8_lossy(&line));
                }
            }
            assert!(
                fast_lines * 10 >= written * 9,
                "{from} -> {to}: {fast_lines} of {written} lines"
            );
        }
    }
}
