//! The commands' per-line work, as [`LineOperation`](crate::pipeline::LineOperation)s that the
//! parallel pipeline applies: each command of the CLI supplies one.

mod arrivals;
#[cfg(feature = "proto")]
mod convert;
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

// Each operation's `Worker` and `Tally` (the associated types of `LineOperation`) stay
// `pub` in their modules but are not re-exported: an embedder runs an operation, it never
// names its per-thread state or its chunks' books.
pub use arrivals::MAX_ARRIVAL_BUCKETS;
#[cfg(feature = "proto")]
pub use convert::{FromProtoOp, ProtoFrames, ToProtoOp};
pub use dedupe::{DedupeOp, DedupeScan, DedupeScanTotal, DedupeTotal};
pub use export::{
    ColumnType, ExportError, ExportField, ExportFormat, ExportOp, ExportTotal, UnknownField,
    DEFAULT_FIELDS, FIELD_NAMES, FORMULA_TRIGGERS,
};
#[cfg(feature = "filter")]
pub use filter::{FilterNotes, FilterOp, FilterTotal, Glob, Predicates};
// The command line's `--limit` writer: glue, not part of the API.
#[cfg(feature = "filter")]
#[doc(hidden)]
pub use filter::LimitedLines;
pub use fingerprint::{normalise, Fingerprint, FINGERPRINT_VERSION};
#[cfg(feature = "filter")]
pub use jq::{Where, WhereError, WhereVerdict};
// What the command line's `--where` watchdog reads (`cli/where_guard.rs`): not part of the API.
#[cfg(feature = "filter")]
#[doc(hidden)]
pub use jq::{EvalWatch, Running, EVAL_STACK_BYTES};
pub use migrate::{MigrateOp, MigrateSource};
pub use redrive::{InvalidQueue, InvalidTimestamp, Pacing, RedriveOp, RedriveReport, RedriveTotal};
#[cfg(feature = "sample")]
pub use sample::{SampleOp, SampleTotal};
pub use show::{ShowOp, ShowPayload};
pub use stats::{GroupBy, Stats, StatsOp, IN_FLIGHT, NO_ATTEMPTS};
// What `stats` hands the renderings is plain data defined beside them (`report/stats.rs`), so
// that the report never imports the operations; here under the names it always had.
pub use crate::report::stats::{
    ArrivalBucket, Arrivals, Bucket, CodeExamples, CreatedRange, Day, ErrorType, FingerprintGroup,
    Group, LineAt, QueueCount, StatsOverview, StatsReport, StatusCount, MAX_KEYS, REJECT_EXAMPLES,
};
pub use validate::{ReportFormat, ValidateOp};

use crate::envelope::{Checker, EnvelopeRules, Verdict};
use crate::framing::Line;
use crate::pipeline::{Action, ChunkOutput};
use crate::report::{self, Position};
use output::REJECTS;

/// The outputs of the operations here: each writes an output at the same index of its chunk's
/// buffers ([`ChunkOutput::buffer`]) whatever the operation, so that one [`Outputs`] fits them
/// all, and declares ([`LineOperation::OUTPUTS`]) as many as reach the last one it writes.
///
/// [`Outputs`]: crate::pipeline::Outputs
/// [`LineOperation::OUTPUTS`]: crate::pipeline::LineOperation::OUTPUTS
pub mod output {
    /// What the operation is for: the lines it writes (`migrate`'s migrated lines, `filter`'s
    /// matches, `export`'s rows), or `validate`'s diagnostics.
    pub const PRIMARY: usize = 0;
    /// A second stream of lines: `validate`'s valid lines, `migrate`'s warnings, `dedupe`'s
    /// dropped copies.
    pub const SECONDARY: usize = 1;
    /// Reject records (docs/cli.md#rejects).
    pub const REJECTS: usize = 2;
    /// Text for people, in input order (`migrate --warnings`, `show`'s notes).
    pub const MESSAGES: usize = 3;
}

/// Where a line came from, for its diagnostics.
fn position<'a>(source: &'a str, line: &Line<'_>) -> Position<'a> {
    Position {
        source,
        line: line.number,
        offset: line.offset,
    }
}

/// The checker an operation's worker judges lines with: `rules`, and the reader cap
/// (`max_line_bytes`) its `LINE_TOO_LONG` message names.
fn checker(rules: &EnvelopeRules, max_line_bytes: usize) -> Checker {
    Checker::new(rules.clone()).with_max_line_bytes(max_line_bytes)
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
        let _ = report::write_reject(out.buffer(REJECTS), at, line, &verdict.errors);
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
