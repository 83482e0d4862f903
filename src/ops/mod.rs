//! The commands' per-line work, as [`LineOperation`](crate::pipeline::LineOperation)s that the
//! parallel pipeline applies: each command of the CLI supplies one.

mod arrivals;
mod dedupe;
mod export;
mod fields;
#[cfg(feature = "filter")]
mod filter;
mod fingerprint;
#[cfg(feature = "filter")]
mod jq;
mod migrate;
mod redrive;
#[cfg(feature = "sample")]
mod sample;
mod show;
mod stats;
mod validate;

pub use arrivals::{ArrivalBucket, Arrivals, MAX_ARRIVAL_BUCKETS};
pub use dedupe::{DedupeOp, DedupeScan, DedupeWorker, History, Written};
pub use export::{
    ColumnType, ExportError, ExportField, ExportFormat, ExportOp, ExportTally, ExportWorker,
    UnknownField, DEFAULT_FIELDS, FIELD_NAMES, FORMULA_TRIGGERS, ROW_GROUP_BYTES, ROW_GROUP_ROWS,
};
#[cfg(feature = "filter")]
pub use filter::{
    FilterNotes, FilterOp, FilterTally, FilterWorker, Glob, LimitedLines, Predicates,
};
pub use fingerprint::{normalise, Fingerprint, FINGERPRINT_VERSION};
#[cfg(feature = "filter")]
pub use jq::{
    EvalSlot, EvalWatch, Running, Where, WhereError, WhereVerdict, EVAL_STACK_BYTES, MAX_DEPTH,
    MAX_EXPR_BYTES, REFUSED,
};
pub use migrate::{MigrateOp, MigrateSource, MigrateWorker};
pub use redrive::{
    InvalidQueue, InvalidTimestamp, Pacing, RedriveOp, RedriveReport, RedriveTally, RedriveWorker,
};
#[cfg(feature = "sample")]
pub use sample::{SampleOp, SampleTally, SampleWorker};
pub use show::{ShowOp, ShowPayload, ShowWorker};
pub use stats::{
    Bucket, CreatedRange, Day, ErrorType, FingerprintGroup, Group, GroupBy, QueueCount, Stats,
    StatsOp, StatsOverview, StatsReport, StatsWorker, IN_FLIGHT, MAX_KEYS, NO_ATTEMPTS,
};
pub use validate::{ReportFormat, ValidateOp, ValidateWorker};

use crate::diagnostic::Diagnostic;
use crate::envelope::{EnvelopeRules, Verdict};
use crate::framing::{Line, LineKind};
use crate::json::{Document, JsonParser};
use crate::pipeline::{Action, ChunkOutput};
use crate::report::{self, Position};

/// Where a line came from, for its diagnostics.
fn position<'a>(source: &'a str, line: &Line<'_>) -> Position<'a> {
    Position {
        source,
        line: line.number,
        offset: line.offset,
    }
}

/// Judges a line into `verdict`: `LINE_TOO_LONG` past the reader cap (`max_line_bytes`), else
/// what the rules say; the document when the line passed the JSON layer.
fn judge<'p>(
    rules: &EnvelopeRules,
    parser: &'p mut JsonParser,
    line: &Line<'_>,
    max_line_bytes: usize,
    verdict: &mut Verdict,
) -> Option<Document<'p>> {
    if line.kind == LineKind::TooLong {
        verdict.clear();
        verdict
            .errors
            .push(Diagnostic::line_too_long(line.len, max_line_bytes));
        return None;
    }
    rules.check_line(parser, line.content, verdict)
}

/// Counts a rejected line's codes and, with `write_rejects`, writes its reject record.
fn reject<T>(
    verdict: &Verdict,
    at: Position<'_>,
    line: &Line<'_>,
    out: &mut ChunkOutput<T>,
    write_rejects: bool,
) -> Action {
    out.summary.tally_errors(&verdict.errors);
    if write_rejects {
        // Writing into a Vec cannot fail.
        let _ = report::write_reject(&mut out.rejects, at, line, &verdict.errors);
    }
    Action::Reject
}

/// Ends a line an op wrote at `out[start..]`: over its queue's size limit it is `PAYLOAD_TOO_LARGE`
/// (docs/envelope.md#size-limit, docs/migrations.md#size-limits-after-migration). A line the
/// verdict rejects is taken back, a valid one terminated; returns whether it stays.
fn finish_written(
    rules: &EnvelopeRules,
    queue: Option<&str>,
    out: &mut Vec<u8>,
    start: usize,
    verdict: &mut Verdict,
) -> bool {
    if let Some(too_large) = rules.size_error(queue, out.len() - start) {
        verdict.errors.push(too_large);
    }
    if !verdict.is_valid() {
        out.truncate(start);
        return false;
    }
    out.push(b'\n');
    true
}
