//! The data of `stats`' report: what the operation hands the renderings (`--format json`
//! serialises it, the table and [`html`](super::html) draw it). It lives here, beside the
//! renderings and above the operations, so that the report reads plain data and never imports
//! `ops`; `ops` re-exports every type under the names it always had (`ops::StatsReport`, ...).

use serde::Serialize;

/// At most this many distinct keys are kept per table (groups, histogram values, error types,
/// days): the first this many in input order, whatever the worker count; later new keys are
/// counted together as "other". Memory stays bounded whatever the input holds: a hostile
/// stream of unique queue names costs at most this many entries.
pub const MAX_KEYS: usize = 100_000;

/// How many example lines a rejected code keeps (the first, in input order).
pub const REJECT_EXAMPLES: usize = 3;

/// Where a rejected line is: its source as given and its line number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineAt {
    /// The source as given (`<stdin>` for standard input).
    pub source: String,
    /// The 1-based line number.
    pub line: u64,
}

/// A rejected code's first lines, in input order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CodeExamples {
    /// The error code.
    pub code: &'static str,
    /// Its first [`REJECT_EXAMPLES`] lines.
    pub lines: Vec<LineAt>,
}

/// What `stats` reports (`--format json` prints it as is; the table form draws it).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct StatsReport {
    /// Every line read, blank ones included.
    pub lines: u64,
    /// Blank lines.
    pub blank: u64,
    /// Lines that broke a rule (not counted below).
    pub rejected: u64,
    /// Valid envelopes: everything below counts these.
    pub envelopes: u64,
    /// What the groups are (`--by`).
    pub by: &'static str,
    /// Envelopes per group, largest first.
    pub groups: Vec<Group>,
    /// Envelopes of groups past the first [`MAX_KEYS`] distinct ones.
    pub groups_other: u64,
    /// The earliest and latest `created_at`; null without envelopes.
    pub created_at: Option<CreatedRange>,
    /// Envelopes by their number of attempt records.
    pub attempts: Vec<Bucket>,
    /// Envelopes whose number of attempt records was past the first [`MAX_KEYS`] distinct ones.
    pub attempts_other: u64,
    /// Envelopes by `redrive_count`.
    pub redrives: Vec<Bucket>,
    /// Envelopes whose `redrive_count` was past the first [`MAX_KEYS`] distinct ones.
    pub redrives_other: u64,
    /// The error types of most failed attempts.
    pub top_error_types: Vec<ErrorType>,
    /// How many error types there are in all (up to [`MAX_KEYS`]).
    pub distinct_error_types: u64,
    /// Failed attempts whose error types were past the first [`MAX_KEYS`].
    pub error_types_other: u64,
    /// Envelopes by the UTC day of `created_at`.
    pub arrivals_per_day: Vec<Day>,
    /// Envelopes created on days past the first [`MAX_KEYS`] distinct ones.
    pub arrivals_other: u64,
}

/// One group's count.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Group {
    /// The group's value; `None` (null in JSON) when the envelope has none: `--by error_type`
    /// when the last attempt has no `error.type` (or there is no attempt), apart from a real
    /// error type of any name.
    pub key: Option<String>,
    /// Envelopes in it.
    pub count: u64,
    /// `--by fingerprint`: what the group is, beside its count.
    #[serde(flatten)]
    pub triage: Option<FingerprintGroup>,
}

/// A fingerprint group's details (`stats --by fingerprint`); the group without an error has
/// no type, template or times.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct FingerprintGroup {
    /// The error type (cut to 256 bytes).
    #[serde(rename = "type")]
    pub error_type: Option<String>,
    /// The normalised message (cut to 256 bytes).
    pub template: Option<String>,
    /// The earliest time an envelope's last error was seen: that attempt's `finished_at`, or
    /// its `started_at` while in flight.
    pub first_seen: Option<String>,
    /// The latest such time.
    pub last_seen: Option<String>,
    /// The queues with the most envelopes in the group (at most 3).
    pub top_queues: Vec<QueueCount>,
    /// The first 3 IDs of the group, in input order.
    pub sample_ids: Vec<String>,
    /// Envelopes of the group per `status`, most first (then by name): how many of this
    /// failure are DEAD, and so can be redriven.
    pub statuses: Vec<StatusCount>,
}

/// Envelopes of one status.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct StatusCount {
    /// The status.
    pub status: String,
    /// Envelopes with it.
    pub count: u64,
}

/// Envelopes of one queue.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct QueueCount {
    /// The queue.
    pub queue: String,
    /// Envelopes in it.
    pub count: u64,
}

/// The first and last `created_at`.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct CreatedRange {
    /// The earliest.
    pub first: String,
    /// The latest.
    pub last: String,
}

/// One histogram bucket.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Bucket {
    /// The value counted (attempt records, redrives).
    pub value: u64,
    /// Envelopes with it.
    pub count: u64,
}

/// One error type's failures.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ErrorType {
    /// `error.type`.
    #[serde(rename = "type")]
    pub error_type: String,
    /// Attempts that recorded it.
    pub attempts: u64,
    /// Envelopes whose last attempt recorded it.
    pub last_attempt: u64,
}

/// Arrivals on one day.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Day {
    /// `YYYY-MM-DD`, UTC.
    pub day: String,
    /// Envelopes created that day.
    pub count: u64,
}

/// Arrivals over time: envelopes per bucket of `created_at`.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Arrivals {
    /// A bucket's width in words: `minute`, `5 minutes`, `hour`, `day`, `week` (Monday to
    /// Sunday), `month`, `3 months`, `year`, `N years`; empty without envelopes.
    pub width: String,
    /// Every bucket from the first envelope's to the last's, the empty ones included.
    pub buckets: Vec<ArrivalBucket>,
    /// Envelopes the buckets leave out: those the table counted from kept no key for (past
    /// the first [`MAX_KEYS`] distinct days, when the run had to count per day).
    pub other: u64,
}

/// One bucket of [`Arrivals`].
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ArrivalBucket {
    /// When the bucket begins (`YYYY-MM-DDTHH:MM:SS.mmmZ`).
    pub start: String,
    /// Envelopes created in it.
    pub count: u64,
}

/// Everything `StatsOp::overview` reports: a report per grouping, and the arrivals over time.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StatsOverview {
    /// The report of `by`, then one for each other grouping asked for, in that order; each is
    /// what a `stats` run with that grouping alone reports.
    pub reports: Vec<StatsReport>,
    /// The arrivals over time, in buckets of a width that suits their range.
    pub arrivals: Arrivals,
    /// The first rejected lines of each error code, by code.
    pub reject_examples: Vec<CodeExamples>,
}
