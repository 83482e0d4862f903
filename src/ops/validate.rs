//! `validate`: every line against the rules, every broken rule reported (docs/cli.md#validate).

use super::output::{self, PRIMARY, SECONDARY};
use crate::envelope::{Checker, EnvelopeRules};
use crate::pipeline::{Action, ChunkOutput, LineOperation, SourceLine};
use crate::report;

/// How diagnostics are written on the primary output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    /// `SOURCE:LINE: POINTER: CODE: message`, one row per diagnostic.
    Human,
    /// One JSON object per reported line.
    Json,
}

/// The `validate` operation: diagnostics to the primary output, valid lines (byte-identical)
/// to the secondary output, reject records to the rejects.
///
/// Built with [`ValidateOp::new`]; the fields it leaves at their defaults can be set after.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ValidateOp {
    /// The rules, configured once.
    pub rules: EnvelopeRules,
    /// How diagnostics are written.
    pub format: ReportFormat,
    /// Report warnings too, valid lines included (`--warnings`).
    pub report_warnings: bool,
    /// Write the valid lines to the secondary output (`--valid-out`).
    pub keep_valid: bool,
    /// Write reject records (`--rejects`).
    pub write_rejects: bool,
    /// The reader cap, for the `LINE_TOO_LONG` message.
    pub max_line_bytes: usize,
    /// Highlight the pointer and code of human diagnostics with ANSI escapes, for a terminal
    /// ([`report::write_human_styled`]).
    pub colour: bool,
}

impl ValidateOp {
    /// Validation by `rules`, with these defaults: diagnostics in [`ReportFormat::Human`],
    /// errors only (`report_warnings` off), valid lines not kept (`keep_valid` off), no reject
    /// records (`write_rejects` off), the reader's default cap
    /// ([`DEFAULT_MAX_LINE_BYTES`](crate::framing::DEFAULT_MAX_LINE_BYTES)) as
    /// `max_line_bytes`, and no colour (`colour` off). Set `max_line_bytes` to the cap the pipeline reads with, so a
    /// `LINE_TOO_LONG` message names it.
    pub fn new(rules: EnvelopeRules) -> Self {
        ValidateOp {
            rules,
            format: ReportFormat::Human,
            report_warnings: false,
            keep_valid: false,
            write_rejects: false,
            max_line_bytes: crate::framing::DEFAULT_MAX_LINE_BYTES,
            colour: false,
        }
    }
}

/// A worker's reusable state.
#[derive(Debug)]
pub struct ValidateWorker {
    checker: Checker,
}

impl LineOperation for ValidateOp {
    // The diagnostics, the valid lines (`--valid-out`), the rejects.
    const OUTPUTS: usize = output::REJECTS + 1;
    type Worker = ValidateWorker;
    type Tally = ();
    type Total = ();

    fn worker(&self) -> Self::Worker {
        ValidateWorker {
            checker: super::checker(&self.rules, self.max_line_bytes),
        }
    }

    fn total(&self) {}

    fn apply(
        &self,
        w: &mut Self::Worker,
        SourceLine { source, line }: SourceLine<'_>,
        out: &mut ChunkOutput,
    ) -> Action {
        let checked = w.checker.check_line(&line);
        let verdict = checked.verdict();
        let valid = verdict.is_valid();
        if valid {
            out.summary.tally_warnings(&verdict.warnings);
            if self.keep_valid {
                out.buffer(SECONDARY).extend_from_slice(line.content);
                out.buffer(SECONDARY).push(b'\n');
            }
        } else {
            super::reject(
                verdict,
                super::position(source, &line),
                &line,
                out,
                self.write_rejects,
            );
        }
        if !valid || (self.report_warnings && !verdict.warnings.is_empty()) {
            let at = super::position(source, &line);
            // Writing into a Vec cannot fail.
            let _ = match self.format {
                ReportFormat::Human => report::write_human_styled(
                    out.buffer(PRIMARY),
                    at,
                    verdict,
                    self.report_warnings,
                    self.colour,
                ),
                ReportFormat::Json => {
                    let id = checked
                        .document()
                        .and_then(|d| d.root().get("id"))
                        .and_then(|v| v.as_str());
                    report::write_json(out.buffer(PRIMARY), at, id, verdict, self.report_warnings)
                }
            };
        }
        if valid {
            Action::Emit
        } else {
            Action::Reject
        }
    }

    /// The rows of the human format are for people; the JSON objects are for programs, which
    /// count on one per rejected line.
    fn diagnostics_for_people(&self) -> Option<usize> {
        (self.format == ReportFormat::Human).then_some(output::PRIMARY)
    }
}

#[cfg(test)]
mod tests {
    use crate::envelope::{EnvelopeRules, SinglePass};
    use crate::RuleOptions;

    /// tests/no_alloc.rs counts the single pass's allocations on this line: it must take it.
    #[test]
    fn the_allocation_test_line_takes_the_single_pass() {
        let line = include_bytes!("../../tests/data/dlq_line.json");
        let rules = EnvelopeRules::new(RuleOptions::default()).unwrap();
        let mut single = SinglePass::default();
        assert!(rules.clean(&mut single, line).is_some());
        assert!(single.fields().plain);
    }
}
