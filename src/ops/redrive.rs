//! `redrive`: DEAD envelopes made resubmittable (docs/cli.md#redrive), by splicing: `status`
//! becomes `PENDING`, `attempt_count` 0, `redrive_count` one more, `next_attempt_at` the due
//! time, `lease_expires_at` null, and with `--queue` the `queue` another one; the attempts and
//! every other byte stay as they were. Due times come all at once, at a rate, or spread by ID
//! ([`Pacing`]).

use std::collections::BTreeMap;
use std::ops::Range;

use super::output::{self, PRIMARY, REJECTS};
use crate::diagnostic::{Diagnostic, ErrorCode};
use crate::envelope::formats::{is_name, parse_timestamp, timestamp_bytes};
use crate::envelope::{Checker, Clean, EnvelopeRules, SinglePass, Status, Verdict};
use crate::json::Document;
use crate::migrate::edits::Edits;
use crate::pipeline::{Action, ChunkOutput, LineOperation, SourceLine};

/// The latest timestamp an envelope can hold, 9999-12-31T23:59:59.999Z: a due time past it is
/// written as it (docs/cli.md#redrive).
const LATEST_MS: i64 = 253_402_300_799_999;

/// How the redriven tasks' due times (`next_attempt_at`) are set, from the start time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Pacing {
    /// All due at the start time.
    Together,
    /// `count` every `per_ms` milliseconds: the i-th redriven task, counting from 0 in input
    /// order, is due at start + floor(i × `per_ms` / `count`), for any `-j`.
    Rate {
        /// Tasks per period, at least 1.
        count: u64,
        /// The period in milliseconds: 1000, 60,000 or 3,600,000.
        per_ms: u64,
    },
    /// Each due at start + (FNV-1a 64 of its ID's 26 bytes) mod `window_ms`: the same time on
    /// every run and machine, uniform over the window.
    Spread {
        /// The window in milliseconds, at least 1.
        window_ms: u64,
    },
}

/// The `redrive` operation: redriven lines to the primary output, the rest to the rejects.
///
/// Built with [`RedriveOp::new`], which checks the start time; the fields it leaves at their
/// defaults can be set after, and [`RedriveOp::to_queue`] sends the tasks to another queue.
#[derive(Debug)]
#[non_exhaustive]
pub struct RedriveOp {
    /// The rules every line is judged by first.
    pub rules: EnvelopeRules,
    /// The start time, a valid timestamp, and its milliseconds.
    at: String,
    start_ms: i64,
    /// How due times follow from the start time.
    pub pacing: Pacing,
    /// The queue the tasks go to (`--queue`), a valid queue name; their own when `None`.
    queue: Option<String>,
    /// Reject with `REDRIVE_LIMIT` a task whose `redrive_count` is already this or more.
    pub max_redrives: Option<u64>,
    /// Add up the report of the run's total ([`RedriveTotal::report`]).
    pub collect_report: bool,
    /// Write nothing (`--dry-run`): the books and the report say what would be done. Implies
    /// `collect_report`.
    pub dry_run: bool,
    /// Write reject records.
    pub write_rejects: bool,
    /// The reader cap, for the `LINE_TOO_LONG` message.
    pub max_line_bytes: usize,
}

/// A due time that is not a timestamp of the envelope's form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?}: expected a UTC timestamp such as 2026-05-01T12:00:00.000Z")]
pub struct InvalidTimestamp(pub String);

/// A `--queue` that is not a queue name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a queue name (1 to 240 characters, each one of a-z 0-9 . _ -)")]
pub struct InvalidQueue(pub String);

/// What a redrive did, or in a dry run would do, to the lines it redrove.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RedriveReport {
    /// Redriven tasks by the queue they were in.
    pub by_queue: BTreeMap<String, u64>,
    /// The earliest and the latest due time written, in milliseconds.
    pub due: Option<(i64, i64)>,
}

impl RedriveReport {
    fn add_due(&mut self, ms: i64) {
        self.due = Some(match self.due {
            Some((first, last)) => (first.min(ms), last.max(ms)),
            None => (ms, ms),
        });
    }
}

/// What the writer adds up in input order: the run's total.
#[derive(Debug, Default)]
pub struct RedriveTotal {
    /// How many tasks earlier chunks redrove (`--rate` numbers them).
    redriven: u64,
    report: RedriveReport,
}

impl RedriveTotal {
    /// What the run redrove, by queue, and the due times written (empty unless
    /// [`RedriveOp::collect_report`] or [`RedriveOp::dry_run`]).
    pub fn report(&self) -> &RedriveReport {
        &self.report
    }
}

impl RedriveOp {
    /// Redrives DEAD envelopes to be due at `at` (`YYYY-MM-DDTHH:MM:SS.mmmZ`), with these
    /// defaults: all at once ([`Pacing::Together`]), in their own queue, no redrive limit, no
    /// report, no reject records (`write_rejects` off) and the reader's default cap as
    /// `max_line_bytes`.
    ///
    /// # Errors
    ///
    /// [`InvalidTimestamp`] when `at` is not a valid timestamp (docs/envelope.md#timestamps).
    pub fn new(rules: EnvelopeRules, at: &str) -> Result<Self, InvalidTimestamp> {
        let Some(start_ms) = parse_timestamp(at) else {
            return Err(InvalidTimestamp(at.to_owned()));
        };
        Ok(RedriveOp {
            rules,
            at: at.to_owned(),
            start_ms,
            pacing: Pacing::Together,
            queue: None,
            max_redrives: None,
            collect_report: false,
            dry_run: false,
            write_rejects: false,
            max_line_bytes: crate::framing::DEFAULT_MAX_LINE_BYTES,
        })
    }

    /// Sends the redriven tasks to `queue` (whose size limit then applies).
    ///
    /// # Errors
    ///
    /// [`InvalidQueue`] when `queue` is not a queue name (docs/envelope.md#queue-and-handler_ref).
    pub fn to_queue(mut self, queue: &str) -> Result<Self, InvalidQueue> {
        if !is_name(queue) {
            return Err(InvalidQueue(queue.to_owned()));
        }
        self.queue = Some(queue.to_owned());
        Ok(self)
    }

    /// The start time: when the redriven tasks are due, or the first of them is.
    pub fn at(&self) -> &str {
        &self.at
    }

    /// The due time of a task with this ID, before `--rate` (which the writer applies).
    fn due_ms(&self, id: &[u8]) -> i64 {
        match self.pacing {
            Pacing::Spread { window_ms } => {
                let offset = fnv1a64(id) % window_ms.max(1);
                self.start_ms.saturating_add_unsigned(offset)
            }
            Pacing::Together | Pacing::Rate { .. } => self.start_ms,
        }
        .min(LATEST_MS)
    }
}

/// FNV-1a, 64 bits (docs/cli.md#redrive: `--spread`).
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A worker's reusable state.
#[derive(Debug)]
pub struct RedriveWorker {
    checker: Checker,
    nodes: Vec<(usize, usize)>,
    edits: Edits,
}

/// What a chunk's redriven lines leave for the writer.
#[derive(Debug, Default)]
pub struct RedriveTally {
    /// Where each redriven line's `next_attempt_at` timestamp lies in the primary output
    /// (`--rate` writes it in input order).
    due_at: Vec<usize>,
    /// The queues the lines were in, back to back, and where each ends (with a report).
    queues: Vec<u8>,
    queue_ends: Vec<usize>,
    /// The due times written by the workers (with a report).
    due: Option<(i64, i64)>,
}

/// What a redrive rewrites in one valid DEAD line, found by the single pass or the tape.
struct Target<'a> {
    /// The values of `status`, `attempt_count`, `redrive_count`, `next_attempt_at`,
    /// `lease_expires_at` and `queue`.
    spans: [Range<usize>; 6],
    /// The new `redrive_count`.
    redrive_count: u64,
    id: &'a [u8],
    /// The queue the line was in.
    queue: &'a str,
}

impl LineOperation for RedriveOp {
    // The redriven lines, the rejects.
    const OUTPUTS: usize = output::REJECTS + 1;
    type Worker = RedriveWorker;
    type Tally = RedriveTally;
    type Total = RedriveTotal;

    fn worker(&self) -> Self::Worker {
        RedriveWorker {
            checker: super::checker(&self.rules, self.max_line_bytes),
            nodes: Vec::new(),
            edits: Edits::default(),
        }
    }

    fn total(&self) -> RedriveTotal {
        RedriveTotal::default()
    }

    fn apply(
        &self,
        w: &mut RedriveWorker,
        line: SourceLine<'_>,
        out: &mut ChunkOutput<RedriveTally>,
    ) -> Action {
        let SourceLine { source, line } = line;
        let RedriveWorker {
            checker,
            nodes,
            edits,
        } = w;
        let checked = checker.check_line(&line);
        // The usual line, a valid DEAD envelope with nothing to warn about, is rewritten from
        // what the single pass read; any other goes the tape path, which says why.
        if let Some((clean, single)) = checked.single_pass() {
            if let Some(target) = self.clean_target(line.content, &clean, single) {
                if self.rewrite(line.content, &target, edits, out).is_ok() {
                    return Action::Emit;
                }
            }
        }
        let mut checked = checked.on_tape();
        let (verdict, doc) = checked.verdict_mut();
        if let (Some(doc), true) = (doc, verdict.is_valid()) {
            if let Some(target) = self.tape_target(line.content, doc, nodes, verdict) {
                match self.rewrite(line.content, &target, edits, out) {
                    Ok(()) => {
                        out.summary.tally_warnings(&verdict.warnings);
                        return Action::Emit;
                    }
                    Err(too_large) => verdict.errors.push(too_large),
                }
            }
        }
        let at = super::position(source, &line);
        super::reject(checked.verdict(), at, &line, out, self.write_rejects)
    }

    fn settle(&self, total: &mut RedriveTotal, out: &mut ChunkOutput<RedriveTally>) {
        self.number_rated(total, out);
        if self.dry_run {
            out.buffer(PRIMARY).clear();
            out.buffer(REJECTS).clear();
        }
    }

    fn merge(&self, total: &mut RedriveTotal, tally: &mut RedriveTally) {
        if self.reports() {
            let mut start = 0;
            for &end in &tally.queue_ends {
                let queue = String::from_utf8_lossy(&tally.queues[start..end]);
                match total.report.by_queue.get_mut(queue.as_ref()) {
                    Some(count) => *count += 1,
                    None => {
                        total.report.by_queue.insert(queue.into_owned(), 1);
                    }
                }
                start = end;
            }
            if let Some((first, last)) = tally.due {
                total.report.add_due(first);
                total.report.add_due(last);
            }
        }
        tally.queues.clear();
        tally.queue_ends.clear();
        tally.due = None;
    }
}

impl RedriveOp {
    fn reports(&self) -> bool {
        self.collect_report || self.dry_run
    }

    /// With `--rate`: writes the due times of a chunk's redriven lines, which depend on how
    /// many came before them in the whole input.
    fn number_rated(&self, total: &mut RedriveTotal, out: &mut ChunkOutput<RedriveTally>) {
        let Pacing::Rate { count, per_ms } = self.pacing else {
            return;
        };
        let (lines, tally) = out.buffer_and_tally(PRIMARY);
        for &at in &tally.due_at {
            let i = u128::from(total.redriven);
            let offset = i * u128::from(per_ms) / u128::from(count.max(1));
            let due = i64::try_from(offset)
                .map_or(LATEST_MS, |offset| self.start_ms.saturating_add(offset))
                .min(LATEST_MS);
            lines[at..at + 24].copy_from_slice(&timestamp_bytes(due));
            total.redriven += 1;
            if self.reports() {
                total.report.add_due(due);
            }
        }
        tally.due_at.clear();
    }

    /// What to rewrite in a line the single pass found clean, when it can be redriven; `None`
    /// when not (the tape path then says why).
    fn clean_target<'a>(
        &self,
        line: &'a [u8],
        clean: &Clean,
        single: &SinglePass,
    ) -> Option<Target<'a>> {
        if !clean.dead
            || clean.redrive_count >= u64::from(u32::MAX)
            || self
                .max_redrives
                .is_some_and(|max| clean.redrive_count >= max)
        {
            return None;
        }
        let [status, attempts, redrives, next, lease] = clean
            .redrive_spans
            .map(|(start, end)| start as usize..end as usize);
        // The queue's text, between its quotes (a name: no escapes).
        let (start, end) = (clean.queue.0 as usize, clean.queue.1 as usize);
        let (id_start, id_end) = single.fields().id;
        Some(Target {
            spans: [status, attempts, redrives, next, lease, start - 1..end + 1],
            redrive_count: clean.redrive_count + 1,
            id: &line[id_start as usize..id_end as usize],
            queue: std::str::from_utf8(&line[start..end]).ok()?,
        })
    }

    /// What to rewrite in a valid line, read from its tape; `None`, with the reason pushed
    /// onto `verdict`, when it cannot be redriven.
    fn tape_target<'a>(
        &self,
        line: &[u8],
        doc: &'a Document<'a>,
        nodes: &mut Vec<(usize, usize)>,
        verdict: &mut Verdict,
    ) -> Option<Target<'a>> {
        let root = doc.root();
        let member = |key: &str| root.get(key).expect("a valid envelope has every field");
        let status = member("status");
        if status.as_str() != Some(Status::Dead.as_str()) {
            verdict.errors.push(Diagnostic::new(
                ErrorCode::NotDead,
                "/status",
                format!(
                    "only DEAD tasks are redriven; this one is {}",
                    status.as_str().unwrap_or_default()
                ),
            ));
            return None;
        }
        let redrives = member("redrive_count").as_integer().unwrap_or_default();
        if let Some(max) = self.max_redrives.filter(|&max| redrives >= i128::from(max)) {
            verdict.errors.push(Diagnostic::new(
                ErrorCode::RedriveLimit,
                "/redrive_count",
                format!(
                    "redrive_count is {redrives}: this task was redriven {redrives} {}, and \
                     --max-redrives {max} allows no more",
                    crate::report::noun(u64::try_from(redrives).unwrap_or(0), "time")
                ),
            ));
            return None;
        }
        let Ok(next) = u32::try_from(redrives + 1) else {
            verdict.errors.push(Diagnostic::new(
                ErrorCode::OutOfRange,
                "/redrive_count",
                "redrive_count is already 4294967295: one more redrive cannot be counted",
            ));
            return None;
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
            "queue",
        ]
        .map(span);
        Some(Target {
            spans,
            redrive_count: u64::from(next),
            id: member("id").as_str().unwrap_or_default().as_bytes(),
            queue: member("queue").as_str().unwrap_or_default(),
        })
    }

    /// Appends the redriven line and its line feed to the primary output, noting what the
    /// writer needs; `PAYLOAD_TOO_LARGE`, the output as it was, when it is over the size limit
    /// of the queue it goes to.
    fn rewrite(
        &self,
        line: &[u8],
        target: &Target<'_>,
        edits: &mut Edits,
        out: &mut ChunkOutput<RedriveTally>,
    ) -> Result<(), Diagnostic> {
        let [status, attempts, redrives, next, lease, queue] = target.spans.clone();
        let due = self.due_ms(target.id);
        edits.clear();
        edits.replace(status, b"\"PENDING\"");
        edits.replace(attempts, b"0");
        edits.replace_with_number(redrives, target.redrive_count as i64);
        let next_start = next.start;
        edits.replace_with_parts(next, &[b"\"", &timestamp_bytes(due), b"\""]);
        edits.replace(lease, b"null");
        if let Some(to) = &self.queue {
            edits.replace_with_parts(queue, &[b"\"", to.as_bytes(), b"\""]);
        }
        let start = out.buffer(PRIMARY).len();
        // Distinct members of a valid envelope: their spans never overlap.
        let applied = edits.apply(line, out.buffer(PRIMARY));
        debug_assert!(applied, "a valid envelope's members do not overlap");
        let to = self.queue.as_deref().unwrap_or(target.queue);
        if let Some(too_large) = self
            .rules
            .size_error(Some(to), out.buffer(PRIMARY).len() - start)
        {
            out.buffer(PRIMARY).truncate(start);
            return Err(too_large);
        }
        out.buffer(PRIMARY).push(b'\n');
        let tally = &mut out.tally;
        if matches!(self.pacing, Pacing::Rate { .. }) {
            // After the opening quote.
            tally
                .due_at
                .push(start + edits.output_position(next_start) + 1);
        }
        if self.reports() {
            tally.queues.extend_from_slice(target.queue.as_bytes());
            tally.queue_ends.push(tally.queues.len());
            if !matches!(self.pacing, Pacing::Rate { .. }) {
                let (first, last) = tally.due.unwrap_or((due, due));
                tally.due = Some((first.min(due), last.max(due)));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RuleOptions;

    fn op(at: &str) -> RedriveOp {
        RedriveOp::new(EnvelopeRules::new(RuleOptions::default()).unwrap(), at).unwrap()
    }

    /// The tape path's output for `line`: the redriven line, or nothing.
    fn by_tape(op: &RedriveOp, w: &mut RedriveWorker, line: &[u8]) -> Vec<u8> {
        let mut out = ChunkOutput::new(RedriveOp::OUTPUTS);
        let mut checked = w.checker.check_on_tape(line);
        let (verdict, doc) = checked.verdict_mut();
        if let (Some(doc), true) = (doc, verdict.is_valid()) {
            if let Some(target) = op.tape_target(line, doc, &mut w.nodes, verdict) {
                let _ = op.rewrite(line, &target, &mut w.edits, &mut out);
            }
        }
        std::mem::take(out.buffer(PRIMARY))
    }

    /// Every line the single pass redrives is redriven to the same bytes by the tape path,
    /// under every control; and most DEAD lines of `gen` are (else the single pass would save
    /// nothing).
    #[test]
    fn the_single_pass_redrives_as_the_tape_path_does() {
        let at = "2026-01-02T03:04:05.678Z";
        let mut ops = vec![op(at), op(at).to_queue("recovery.q").unwrap()];
        let mut spread = op(at);
        spread.pacing = Pacing::Spread {
            window_ms: 7_200_000,
        };
        spread.max_redrives = Some(2);
        ops.push(spread);
        for op in &ops {
            let mut w = op.worker();
            let (mut fast_lines, mut dead) = (0, 0);
            for version in [1, 2] {
                for line in crate::generate::test_lines(9, version, 0.1, 2000) {
                    let tape_out = by_tape(op, &mut w, &line);
                    dead += usize::from(!tape_out.is_empty());
                    let mut fast_out = ChunkOutput::new(RedriveOp::OUTPUTS);
                    let checked = w.checker.check(&line);
                    if let Some((clean, single)) = checked.single_pass() {
                        if let Some(target) = op.clean_target(&line, &clean, single) {
                            if op
                                .rewrite(&line, &target, &mut w.edits, &mut fast_out)
                                .is_ok()
                            {
                                fast_lines += 1;
                                let line = String::from_utf8_lossy(&line);
                                assert_eq!(fast_out.bytes(PRIMARY), tape_out, "{line}");
                            }
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

    #[test]
    fn fnv1a64_is_the_published_function() {
        // The FNV reference values.
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }
}
