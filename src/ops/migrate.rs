//! `migrate`: every valid line written as the target version (ENVELOPE.md §5, CLI.md).

use crate::diagnostic::Diagnostic;
use crate::envelope::{EnvelopeRules, Verdict};
use crate::framing::LineKind;
use crate::json::JsonParser;
use crate::migrate::Migrator;
use crate::pipeline::{Action, ChunkOutput, LineOperation, SourceLine};
use crate::report::{self, Position};

/// The `migrate` operation: migrated lines to the primary output, reject records to the
/// rejects, the input's warnings of emitted lines as JSON Lines to the secondary output
/// (`--warnings-out`) and in human form to the messages (`--warnings`).
#[derive(Debug, Clone)]
pub struct MigrateOp {
    /// The rules every input line is judged by first, against its own version.
    pub rules: EnvelopeRules,
    /// The target `envelope_version`.
    pub to: u32,
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
#[derive(Debug, Default)]
pub struct MigrateWorker {
    parser: JsonParser,
    verdict: Verdict,
    migrator: Migrator,
}

impl LineOperation for MigrateOp {
    type Worker = MigrateWorker;

    fn worker(&self) -> Self::Worker {
        MigrateWorker::default()
    }

    fn apply(&self, w: &mut MigrateWorker, line: SourceLine<'_>, out: &mut ChunkOutput) -> Action {
        let SourceLine { source, line } = line;
        let at = Position {
            source,
            line: line.number,
            offset: line.offset,
        };
        let MigrateWorker {
            parser,
            verdict,
            migrator,
        } = w;
        let doc = match line.kind {
            LineKind::TooLong => {
                verdict.clear();
                let diagnostic = Diagnostic::line_too_long(line.len, self.max_line_bytes);
                verdict.errors.push(diagnostic);
                None
            }
            _ => self.rules.check_line(parser, line.content, verdict),
        };
        // Input is judged against its own version first: an invalid line is rejected, never
        // fixed (ENVELOPE.md §5).
        if let (Some(doc), true) = (doc, verdict.is_valid()) {
            let root = doc.root();
            let from = verdict
                .version
                .expect("a valid line has a supported version");
            // Written straight into the output, and taken back if the line is rejected.
            let start = out.primary.len();
            let (to, errors) = (self.to, &mut verdict.errors);
            if migrator.migrate(line.content, &doc, from, to, &mut out.primary, errors) {
                let queue = root.get("queue").and_then(|v| v.as_str());
                let len = out.primary.len() - start;
                if let Some(too_large) = self.rules.size_error(queue, len) {
                    verdict.errors.push(too_large);
                }
            }
            if !verdict.is_valid() {
                out.primary.truncate(start);
            } else {
                out.primary.push(b'\n');
                out.summary.tally_warnings(&verdict.warnings);
                if !verdict.warnings.is_empty() {
                    // Writing into a Vec cannot fail.
                    if self.report_warnings {
                        let _ = report::write_human(&mut out.messages, at, verdict, true);
                    }
                    if self.warnings_out {
                        let id = root.get("id").and_then(|v| v.as_str());
                        let _ = report::write_json(&mut out.secondary, at, id, verdict, true);
                    }
                }
                return Action::Emit;
            }
        }
        out.summary.tally_errors(&verdict.errors);
        if self.write_rejects {
            let _ = report::write_reject(&mut out.rejects, at, &line, &verdict.errors);
        }
        Action::Reject
    }
}
