//! `redrive`: DEAD envelopes made resubmittable (docs/cli.md#redrive), by splicing: `status`
//! becomes `PENDING`, `attempt_count` 0, `redrive_count` one more, `next_attempt_at` the time
//! given, `lease_expires_at` null; the attempts and every other byte stay as they were.

use crate::diagnostic::{Diagnostic, ErrorCode};
use crate::envelope::formats::parse_timestamp;
use crate::envelope::{Clean, EnvelopeRules, SinglePass, Verdict};
use crate::framing::LineKind;
use crate::json::{Document, JsonParser};
use crate::migrate::edits::Edits;
use crate::pipeline::{Action, ChunkOutput, LineOperation, SourceLine};

/// The `redrive` operation: redriven lines to the primary output, the rest to the rejects.
///
/// Built with [`RedriveOp::new`], which checks the due time; the fields it leaves at their
/// defaults can be set after.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RedriveOp {
    /// The rules every line is judged by first.
    pub rules: EnvelopeRules,
    /// `next_attempt_at` of every redriven task, a valid timestamp.
    at: String,
    /// Write reject records.
    pub write_rejects: bool,
    /// The reader cap, for the `LINE_TOO_LONG` message.
    pub max_line_bytes: usize,
}

/// A due time that is not a timestamp of the envelope's form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?}: expected a UTC timestamp such as 2026-05-01T12:00:00.000Z")]
pub struct InvalidTimestamp(pub String);

impl RedriveOp {
    /// Redrives DEAD envelopes to be due at `at` (`YYYY-MM-DDTHH:MM:SS.mmmZ`), with these
    /// defaults: no reject records (`write_rejects` off) and the reader's default cap as
    /// `max_line_bytes`.
    ///
    /// # Errors
    ///
    /// [`InvalidTimestamp`] when `at` is not a valid timestamp (docs/envelope.md#timestamps).
    pub fn new(rules: EnvelopeRules, at: &str) -> Result<Self, InvalidTimestamp> {
        if parse_timestamp(at).is_none() {
            return Err(InvalidTimestamp(at.to_owned()));
        }
        Ok(RedriveOp {
            rules,
            at: at.to_owned(),
            write_rejects: false,
            max_line_bytes: crate::framing::DEFAULT_MAX_LINE_BYTES,
        })
    }

    /// When the redriven tasks are due.
    pub fn at(&self) -> &str {
        &self.at
    }
}

/// A worker's reusable state.
#[derive(Debug, Default)]
pub struct RedriveWorker {
    parser: JsonParser,
    verdict: Verdict,
    single: SinglePass,
    nodes: Vec<(usize, usize)>,
    edits: Edits,
}

impl LineOperation for RedriveOp {
    type Worker = RedriveWorker;
    type Tally = ();

    fn worker(&self) -> Self::Worker {
        RedriveWorker::default()
    }

    fn apply(&self, w: &mut RedriveWorker, line: SourceLine<'_>, out: &mut ChunkOutput) -> Action {
        let SourceLine { source, line } = line;
        let RedriveWorker {
            parser,
            verdict,
            single,
            nodes,
            edits,
        } = w;
        // The usual line, a valid DEAD envelope with nothing to warn about, is rewritten from
        // what the single pass read; any other goes the tape path, which says why.
        if line.kind != LineKind::TooLong {
            if let Some(clean) = self.rules.clean(single, line.content) {
                if self.redrive_clean(line.content, &clean, edits, &mut out.primary) {
                    return Action::Emit;
                }
            }
        }
        let doc = super::judge(&self.rules, parser, &line, self.max_line_bytes, verdict);
        if let (Some(doc), true) = (doc, verdict.is_valid()) {
            let start = out.primary.len();
            self.redrive(line.content, &doc, nodes, edits, &mut out.primary, verdict);
            let queue = doc.root().get("queue").and_then(|v| v.as_str());
            if super::finish_written(&self.rules, queue, &mut out.primary, start, verdict) {
                out.summary.tally_warnings(&verdict.warnings);
                return Action::Emit;
            }
        }
        let at = super::position(source, &line);
        super::reject(verdict, at, &line, out, self.write_rejects)
    }
}

impl RedriveOp {
    /// Appends the redriven line (and its line feed) to `out` when the single pass's `clean`
    /// line can be redriven and stays within its queue's size limit; `false`, with `out` as it
    /// was, when not.
    fn redrive_clean(
        &self,
        line: &[u8],
        clean: &Clean,
        edits: &mut Edits,
        out: &mut Vec<u8>,
    ) -> bool {
        if !clean.dead || clean.redrive_count >= u64::from(u32::MAX) {
            return false;
        }
        let [status, attempts, redrives, next, lease] = clean
            .redrive_spans
            .map(|(start, end)| start as usize..end as usize);
        let start = out.len();
        self.splice(
            line,
            [status, attempts, redrives, next, lease],
            clean.redrive_count + 1,
            edits,
            out,
        );
        let queue = std::str::from_utf8(&line[clean.queue.0 as usize..clean.queue.1 as usize]).ok();
        if self.rules.size_error(queue, out.len() - start).is_some() {
            out.truncate(start);
            return false;
        }
        out.push(b'\n');
        true
    }

    /// Appends `line` redriven: the values at `spans` (`status`, `attempt_count`,
    /// `redrive_count`, `next_attempt_at`, `lease_expires_at`) replaced.
    fn splice(
        &self,
        line: &[u8],
        [status, attempts, redrives, next, lease]: [std::ops::Range<usize>; 5],
        redrive_count: u64,
        edits: &mut Edits,
        out: &mut Vec<u8>,
    ) {
        edits.clear();
        edits.replace(status, b"\"PENDING\"");
        edits.replace(attempts, b"0");
        edits.replace_with_number(redrives, redrive_count as i64);
        let at = self.at.as_bytes();
        edits.replace_with_parts(next, &[b"\"", at, b"\""]);
        edits.replace(lease, b"null");
        // Five distinct members of a valid envelope: their spans never overlap.
        let applied = edits.apply(line, out);
        debug_assert!(applied, "a valid envelope's members do not overlap");
    }

    /// Appends the redriven line to `out`, or pushes onto `verdict` why it cannot be redriven.
    fn redrive(
        &self,
        line: &[u8],
        doc: &Document<'_>,
        nodes: &mut Vec<(usize, usize)>,
        edits: &mut Edits,
        out: &mut Vec<u8>,
        verdict: &mut Verdict,
    ) {
        let root = doc.root();
        let member = |key: &str| root.get(key).expect("a valid envelope has every field");
        let status = member("status");
        if status.as_str() != Some("DEAD") {
            verdict.errors.push(Diagnostic::new(
                ErrorCode::NotDead,
                "/status",
                format!(
                    "only DEAD tasks are redriven; this one is {}",
                    status.as_str().unwrap_or_default()
                ),
            ));
            return;
        }
        let redrives = member("redrive_count").as_integer().unwrap_or_default();
        let Ok(next) = u32::try_from(redrives + 1) else {
            verdict.errors.push(Diagnostic::new(
                ErrorCode::OutOfRange,
                "/redrive_count",
                "redrive_count is already 4294967295: one more redrive cannot be counted",
            ));
            return;
        };
        doc.node_spans(line, nodes);
        let span = |key: &str| {
            let (start, end) = nodes[member(key).tape_index()];
            start..end
        };
        let spans = [
            "status",
            "attempt_count",
            "redrive_count",
            "next_attempt_at",
            "lease_expires_at",
        ]
        .map(span);
        self.splice(line, spans, u64::from(next), edits, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RuleOptions;

    /// Every line the single pass redrives is redriven to the same bytes by the tape path; and
    /// most DEAD lines of `gen` are (else the single pass would save nothing).
    #[test]
    fn the_single_pass_redrives_as_the_tape_path_does() {
        let op = RedriveOp::new(
            EnvelopeRules::new(RuleOptions::default()).unwrap(),
            "2026-01-02T03:04:05.678Z",
        )
        .unwrap();
        let mut w = RedriveWorker::default();
        let (mut fast_lines, mut dead) = (0, 0);
        for version in [1, 2] {
            for line in crate::gen::test_lines(9, version, 0.1, 2000) {
                let mut tape_out = Vec::new();
                let doc = op.rules.check_line(&mut w.parser, &line, &mut w.verdict);
                if let (Some(doc), true) = (doc, w.verdict.is_valid()) {
                    op.redrive(
                        &line,
                        &doc,
                        &mut w.nodes,
                        &mut w.edits,
                        &mut tape_out,
                        &mut w.verdict,
                    );
                }
                let tape_ok = w.verdict.is_valid() && !tape_out.is_empty();
                dead += usize::from(tape_ok);
                let mut fast_out = Vec::new();
                if let Some(clean) = op.rules.clean(&mut w.single, &line) {
                    if op.redrive_clean(&line, &clean, &mut w.edits, &mut fast_out) {
                        fast_lines += 1;
                        tape_out.push(b'\n');
                        assert_eq!(fast_out, tape_out, "{}", String::from_utf8_lossy(&line));
                    }
                }
            }
        }
        assert!(
            fast_lines * 10 >= dead * 9,
            "{fast_lines} of {dead} DEAD lines"
        );
    }
}
