//! `stats`: what a stream of envelopes looks like at a glance (docs/cli.md#stats): counts per
//! group, attempt and redrive histograms, the `created_at` range, the top error types and the
//! arrivals per day.
//!
//! Each chunk adds its lines into its own [`Stats`] (the operation's tally); the writer merges
//! those into the run's total in input order, so the figures, and which groups are kept when
//! there are too many to keep, do not depend on the worker count.

use std::borrow::Borrow;
use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;

use super::arrivals::{self, Unit};
use super::fields::EnvelopeView;
use super::fingerprint::{Fingerprint, Fingerprinter};
use super::output;
use crate::diagnostic::{cut_text, Diagnostic};
use crate::envelope::formats::{push_timestamp, timestamp_bytes};
use crate::envelope::{Checker, EnvelopeRef, EnvelopeRules};
use crate::json::Value;
use crate::pipeline::Summary;
use crate::pipeline::{Action, ChunkOutput, LineOperation, SourceLine};
use crate::report::stats::{
    Arrivals, Bucket, CodeExamples, CreatedRange, Day, ErrorType, FingerprintGroup, Group, LineAt,
    QueueCount, StatsOverview, StatsReport, StatusCount, MAX_KEYS, REJECT_EXAMPLES,
};

/// The longest key a table keeps, in bytes: a longer one (an error type has no length rule of
/// its own) is cut with a `…(+N bytes)` marker, so that the tables are at most about
/// [`MAX_KEYS`] x 300 bytes whatever the envelope size limit.
pub(crate) const MAX_KEY_BYTES: usize = 256;

/// `--by outcome` of an envelope with no attempt.
pub const NO_ATTEMPTS: &str = "(no attempts)";
/// `--by outcome` of an envelope whose last attempt is in flight (its `outcome` is null).
pub const IN_FLIGHT: &str = "(in flight)";

const MS_PER_DAY: i64 = 86_400_000;
const MS_PER_HOUR: i64 = 3_600_000;
const MS_PER_MINUTE: i64 = 60_000;

/// What `stats --by` groups the envelopes by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GroupBy {
    /// `queue`.
    #[default]
    Queue,
    /// `handler_ref`.
    Handler,
    /// `status`.
    Status,
    /// The last attempt's `error.type`: what finally failed. Without one (or without an
    /// attempt) the group's key is `None`.
    ErrorType,
    /// The last attempt's `outcome`: [`IN_FLIGHT`] while it is in flight, [`NO_ATTEMPTS`]
    /// without an attempt.
    Outcome,
    /// The UTC day of `created_at`.
    Day,
    /// The last error's fingerprint (docs/cli.md#fingerprints), each group with its type,
    /// template, first and last time seen, top queues and first IDs. Without an error the
    /// group's key is `None`.
    Fingerprint,
}

impl GroupBy {
    /// Every grouping, in the order `--by` lists them.
    pub const ALL: [GroupBy; 7] = [
        GroupBy::Queue,
        GroupBy::Handler,
        GroupBy::Status,
        GroupBy::ErrorType,
        GroupBy::Outcome,
        GroupBy::Day,
        GroupBy::Fingerprint,
    ];

    /// The name `--by` takes and the report shows.
    pub fn name(self) -> &'static str {
        match self {
            GroupBy::Queue => "queue",
            GroupBy::Handler => "handler",
            GroupBy::Status => "status",
            GroupBy::ErrorType => "error_type",
            GroupBy::Outcome => "outcome",
            GroupBy::Day => "day",
            GroupBy::Fingerprint => "fingerprint",
        }
    }
}

/// Counts per key. A chunk's tally keeps every key it sees, with the order it first saw
/// each in (a chunk holds a bounded number of lines, so this is bounded too); the run's total
/// keeps at most [`MAX_KEYS`] keys, and counts the rest as `other`. Merging the chunks in input
/// order, each chunk's new keys in the order it saw them, keeps exactly the first
/// [`MAX_KEYS`] distinct keys of the input, whatever the chunks and the workers were.
#[derive(Debug, Clone)]
struct Counts<K, V> {
    /// Each key's count, and when the tally first saw it.
    by_key: HashMap<K, (u64, V), foldhash::fast::RandomState>,
    /// How many keys the tally has seen first (the next key's order).
    seen: u64,
    other: V,
}

impl<K, V: Default> Default for Counts<K, V> {
    fn default() -> Self {
        Counts {
            by_key: HashMap::default(),
            seen: 0,
            other: V::default(),
        }
    }
}

impl<K: Hash + Eq, V: Default + AddAssign> Counts<K, V> {
    /// A key's value to add to in place, with no cap, for a key that costs nothing to own.
    fn entry(&mut self, key: K) -> &mut V {
        let seen = &mut self.seen;
        let (_, value) = self.by_key.entry(key).or_insert_with(|| {
            *seen += 1;
            (*seen - 1, V::default())
        });
        value
    }

    /// Adds to a key's count, with no cap; allocates only for a key not seen before.
    fn add<Q>(&mut self, key: &Q, value: V)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        if let Some((_, slot)) = self.by_key.get_mut(key) {
            *slot += value;
        } else {
            self.by_key.insert(key.to_owned(), (self.seen, value));
            self.seen += 1;
        }
    }

    /// Adds to a key's count in a total: a key not among the first [`MAX_KEYS`] goes to
    /// `other`.
    fn add_capped(&mut self, key: K, value: V) {
        if let Some((_, slot)) = self.by_key.get_mut(&key) {
            *slot += value;
        } else if self.by_key.len() < MAX_KEYS {
            self.by_key.insert(key, (self.seen, value));
            self.seen += 1;
        } else {
            self.other += value;
        }
    }

    /// Moves the counts into `total` (which keeps at most [`MAX_KEYS`] keys), the keys in the
    /// order this tally first saw them, leaving `self` empty with its capacity kept.
    fn drain_into(&mut self, total: &mut Self) {
        if total.len() + self.len() <= MAX_KEYS {
            // Every key fits: the order does not matter.
            for (key, (_, value)) in self.by_key.drain() {
                total.add_capped(key, value);
            }
        } else {
            let mut keys: Vec<(K, (u64, V))> = self.by_key.drain().collect();
            keys.sort_unstable_by_key(|(_, (first, _))| *first);
            for (key, (_, value)) in keys {
                total.add_capped(key, value);
            }
        }
        self.seen = 0;
        total.other += std::mem::take(&mut self.other);
    }

    /// The keys and their counts, in no particular order.
    fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.by_key.iter().map(|(key, (_, value))| (key, value))
    }

    fn len(&self) -> usize {
        self.by_key.len()
    }
}

/// `+=` for the count types of [`Counts`]: a later tally's value added to an earlier one's.
trait AddAssign: std::ops::AddAssign + Sized {}
impl<T: std::ops::AddAssign> AddAssign for T {}

/// What `--by fingerprint` keeps of a group beside its count (docs/cli.md#stats).
#[derive(Debug, Default, Clone)]
struct Triage {
    /// The error type and template, cut to [`MAX_KEY_BYTES`]; empty for the group without an
    /// error (and until the first envelope is added).
    error_type: String,
    template: String,
    /// The first and last time seen, in milliseconds.
    seen: Option<(i64, i64)>,
    /// The first [`SAMPLE_IDS`] IDs, in input order.
    sample_ids: Vec<String>,
    /// Envelopes per `status`, in the order first seen: a handful at most (the statuses are a
    /// closed set), so a list searched in place costs less than a map.
    statuses: Vec<(String, u64)>,
}

/// How many IDs a fingerprint group keeps.
const SAMPLE_IDS: usize = 3;
/// How many queues a fingerprint group lists.
const TOP_QUEUES: usize = 3;

impl std::ops::AddAssign for Triage {
    /// `other` is a later tally's: its IDs come after these.
    fn add_assign(&mut self, other: Self) {
        if self.error_type.is_empty() {
            self.error_type = other.error_type;
            self.template = other.template;
        }
        self.seen = min_max(self.seen, other.seen);
        let room = SAMPLE_IDS.saturating_sub(self.sample_ids.len());
        self.sample_ids
            .extend(other.sample_ids.into_iter().take(room));
        for (status, count) in other.statuses {
            add_status(&mut self.statuses, &status, count);
        }
    }
}

/// Adds `count` envelopes of `status` to a fingerprint group's statuses; allocates only for a
/// status the group has not had.
fn add_status(statuses: &mut Vec<(String, u64)>, status: &str, count: u64) {
    match statuses.iter_mut().find(|(s, _)| s == status) {
        Some((_, n)) => *n += count,
        None => statuses.push((status.to_owned(), count)),
    }
}

/// The range of two ranges.
fn min_max(a: Option<(i64, i64)>, b: Option<(i64, i64)>) -> Option<(i64, i64)> {
    match (a, b) {
        (Some((f1, l1)), Some((f2, l2))) => Some((f1.min(f2), l1.max(l2))),
        (a, b) => a.or(b),
    }
}

/// Buffers reused from envelope to envelope by `--by fingerprint`.
#[derive(Debug, Default, Clone)]
struct Scratch {
    fingerprinter: Fingerprinter,
    /// A (fingerprint, queue) key of [`Stats::group_queues`].
    pair: String,
}

/// Failures with one error type.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct ErrorCounts {
    /// Attempts that failed with it.
    attempts: u64,
    /// Envelopes whose last attempt failed with it.
    last: u64,
}

impl std::ops::AddAssign for ErrorCounts {
    fn add_assign(&mut self, other: Self) {
        self.attempts += other.attempts;
        self.last += other.last;
    }
}

/// The aggregates of some valid envelopes. [`Stats::add`] keeps every key it is given (a
/// chunk's tally: bounded by the chunk's lines); [`Stats::drain_into`] adds them to a total
/// that keeps the first [`MAX_KEYS`] keys of each table, in the order the tallies are drained
/// and each tally saw them. Drain the tallies in input order and the kept keys are the
/// input's first ones, however it was cut into tallies.
#[derive(Debug, Default, Clone)]
pub struct Stats {
    envelopes: u64,
    /// By the group's key, one table per grouping the tally is given (in that order); `""`
    /// (which no group can be named) stands for none.
    groups: Vec<Counts<String, u64>>,
    /// By the number of attempt records (the whole history across redrives).
    attempts: Counts<u64, u64>,
    /// By `redrive_count`.
    redrives: Counts<u64, u64>,
    /// The first and last `created_at`, in milliseconds.
    created: Option<(i64, i64)>,
    error_types: Counts<String, ErrorCounts>,
    /// Arrivals by UTC day number (days since 1970-01-01).
    days: Counts<i64, u64>,
    /// Arrivals by minute and by hour since 1970 (only when asked: the arrivals chart).
    minutes: Counts<i64, u64>,
    hours: Counts<i64, u64>,
    /// `--by fingerprint`: each group's details, by the same keys in the same order as
    /// `groups` (`None` for no error), so that the cap keeps the same groups.
    triage: Counts<Option<Fingerprint>, Triage>,
    /// `--by fingerprint`: envelopes per group and queue, keyed by the group's 12 hex
    /// characters (or [`NO_FINGERPRINT`]), a space and the queue.
    group_queues: Counts<String, u64>,
    /// The first [`REJECT_EXAMPLES`] rejected lines of each error code, in input order: a
    /// fixed number per code, and the codes are a closed set, so this stays small.
    reject_examples: BTreeMap<&'static str, Vec<LineAt>>,
    scratch: Scratch,
}

/// The key of the group without an error in [`Stats::group_queues`]: not hex.
const NO_FINGERPRINT: &str = "------------";

impl Stats {
    /// Adds one valid envelope.
    pub fn add(&mut self, root: Value<'_>, by: GroupBy) {
        self.add_envelope(&EnvelopeRef::of_tape(root), by);
    }

    /// Adds one valid envelope, counted in the groups of each of `bys` (in that order: the
    /// first is the one [`Stats::report`] reports) and, with `fine_arrivals`, in arrivals per
    /// minute and per hour ([`Stats::arrivals`]). A tally must be given the same `bys` and
    /// `fine_arrivals` for every envelope.
    pub fn add_grouped(&mut self, root: Value<'_>, bys: &[GroupBy], fine_arrivals: bool) {
        self.add_envelope_grouped(&EnvelopeRef::of_tape(root), bys, fine_arrivals);
    }

    /// Adds one valid envelope, read from its tape or from the single pass.
    pub(crate) fn add_envelope<'a>(&mut self, envelope: &EnvelopeRef<'a>, by: GroupBy) {
        self.add_envelope_grouped(envelope, &[by], false);
    }

    /// [`Stats::add_grouped`], read from its tape or from the single pass.
    pub(crate) fn add_envelope_grouped<'a>(
        &mut self,
        envelope: &EnvelopeRef<'a>,
        bys: &[GroupBy],
        fine_arrivals: bool,
    ) {
        self.envelopes += 1;
        let created = envelope.created_ms();
        if let Some(ms) = created {
            self.created = Some(match self.created {
                Some((first, last)) => (first.min(ms), last.max(ms)),
                None => (ms, ms),
            });
            self.days.add(&ms.div_euclid(MS_PER_DAY), 1);
            if fine_arrivals {
                self.minutes.add(&ms.div_euclid(MS_PER_MINUTE), 1);
                self.hours.add(&ms.div_euclid(MS_PER_HOUR), 1);
            }
        }
        self.attempts.add(&(envelope.attempt_records() as u64), 1);
        let redrives = envelope.redrive_count();
        self.redrives.add(&redrives, 1);

        // Every error type, in attempt order; the last attempt's counts once more as the last.
        for kind in envelope.error_types() {
            let kind = cut_text(kind, MAX_KEY_BYTES);
            self.error_types.add(
                kind.as_ref(),
                ErrorCounts {
                    attempts: 1,
                    last: 0,
                },
            );
        }
        let last = envelope.last_attempt_facts();
        if let Some((Some(kind), _)) = last {
            let kind = cut_text(kind, MAX_KEY_BYTES);
            self.error_types.add(
                kind.as_ref(),
                ErrorCounts {
                    attempts: 0,
                    last: 1,
                },
            );
        }
        // The fingerprint group's details are gathered once, whatever the groupings.
        let fingerprint = bys
            .contains(&GroupBy::Fingerprint)
            .then(|| self.add_triage(envelope))
            .flatten();
        if self.groups.len() < bys.len() {
            self.groups.resize_with(bys.len(), Counts::default);
        }
        for (groups, &by) in self.groups.iter_mut().zip(bys) {
            let mut day = [0u8; 10];
            let hex;
            let key = match by {
                GroupBy::Queue => envelope.queue(),
                GroupBy::Handler => envelope.handler_ref(),
                GroupBy::Status => envelope.status().as_str(),
                // No error type is "" (`error.type` is never empty): null in the report, apart
                // from any real type, `(none)` included.
                GroupBy::ErrorType => last.and_then(|(kind, _)| kind).unwrap_or(""),
                GroupBy::Outcome => match last {
                    None => NO_ATTEMPTS,
                    // `outcome` is null exactly while the attempt is in flight.
                    Some((_, outcome)) => outcome.unwrap_or(IN_FLIGHT),
                },
                GroupBy::Day => match created {
                    Some(ms) => day_text(ms, &mut day),
                    None => "",
                },
                GroupBy::Fingerprint => match fingerprint {
                    Some(fingerprint) => {
                        hex = fingerprint.hex();
                        std::str::from_utf8(&hex).unwrap_or_default()
                    }
                    None => "",
                },
            };
            groups.add(cut_text(key, MAX_KEY_BYTES).as_ref(), 1);
        }
    }

    /// Adds an envelope to its fingerprint group's details: its last error's fingerprint.
    fn add_triage<'a>(&mut self, envelope: &EnvelopeRef<'a>) -> Option<Fingerprint> {
        let scratch = &mut self.scratch;
        let last = envelope.last_error();
        let (fingerprint, template) = match last {
            Some((error, _)) => {
                let (f, template) = scratch.fingerprinter.fingerprint(error.kind, error.message);
                (Some(f), template)
            }
            None => (None, ""),
        };
        let triage = self.triage.entry(fingerprint);
        if let Some((error, seen)) = last {
            if triage.error_type.is_empty() {
                triage.error_type = cut_text(error.kind, MAX_KEY_BYTES).into_owned();
                triage.template = cut_text(template, MAX_KEY_BYTES).into_owned();
            }
            triage.seen = min_max(triage.seen, Some((seen, seen)));
        }
        if triage.sample_ids.len() < SAMPLE_IDS {
            triage.sample_ids.push(envelope.id().to_owned());
        }
        add_status(&mut triage.statuses, envelope.status().as_str(), 1);
        scratch.pair.clear();
        match fingerprint {
            Some(f) => scratch
                .pair
                .push_str(std::str::from_utf8(&f.hex()).unwrap_or_default()),
            None => scratch.pair.push_str(NO_FINGERPRINT),
        }
        scratch.pair.push(' ');
        scratch.pair.push_str(envelope.queue());
        self.group_queues.add(scratch.pair.as_str(), 1);
        fingerprint
    }

    /// Moves `self`'s counts into `total`, leaving `self` empty with its capacity kept.
    pub fn drain_into(&mut self, total: &mut Stats) {
        total.envelopes += std::mem::take(&mut self.envelopes);
        if total.groups.len() < self.groups.len() {
            total.groups.resize_with(self.groups.len(), Counts::default);
        }
        for (mine, theirs) in self.groups.iter_mut().zip(&mut total.groups) {
            mine.drain_into(theirs);
        }
        self.attempts.drain_into(&mut total.attempts);
        self.redrives.drain_into(&mut total.redrives);
        if let Some((first, last)) = self.created.take() {
            total.created = Some(match total.created {
                Some((f, l)) => (f.min(first), l.max(last)),
                None => (first, last),
            });
        }
        self.error_types.drain_into(&mut total.error_types);
        self.days.drain_into(&mut total.days);
        self.minutes.drain_into(&mut total.minutes);
        self.hours.drain_into(&mut total.hours);
        self.triage.drain_into(&mut total.triage);
        self.group_queues.drain_into(&mut total.group_queues);
        // `self` is later in the input than what `total` holds: its lines come after.
        for (code, lines) in std::mem::take(&mut self.reject_examples) {
            let kept = total.reject_examples.entry(code).or_default();
            let room = REJECT_EXAMPLES.saturating_sub(kept.len());
            kept.extend(lines.into_iter().take(room));
        }
    }

    /// Notes a rejected line (line `line` of `source`) as an example of each of its codes that
    /// has fewer than [`REJECT_EXAMPLES`] so far; call it in input order.
    pub fn add_rejected(&mut self, source: &str, line: u64, errors: &[Diagnostic]) {
        for (i, error) in errors.iter().enumerate() {
            if errors[..i].iter().any(|e| e.code == error.code) {
                continue;
            }
            let kept = self.reject_examples.entry(error.code.as_str()).or_default();
            if kept.len() < REJECT_EXAMPLES {
                kept.push(LineAt {
                    source: source.to_owned(),
                    line,
                });
            }
        }
    }

    /// The first [`REJECT_EXAMPLES`] rejected lines of each code, by code.
    pub fn reject_examples(&self) -> Vec<CodeExamples> {
        self.reject_examples
            .iter()
            .map(|(&code, lines)| CodeExamples {
                code,
                lines: lines.clone(),
            })
            .collect()
    }

    /// The report: groups by count (largest first, then by key), the `top` error types by
    /// failed attempts, histograms and days in ascending order. `books` supplies the line
    /// counts. The groups are those of the first grouping the envelopes were added with
    /// (which is `by`).
    pub fn report(&self, by: GroupBy, top: usize, books: &Summary) -> StatsReport {
        self.report_of(0, by, top, books)
    }

    /// The arrivals over time, in buckets of the narrowest width that draws the `created_at`
    /// range in at most [`arrivals::MAX_ARRIVAL_BUCKETS`] bars: per minute or hour only if the envelopes
    /// were added with `fine_arrivals` (and the per-minute or per-hour table kept every key).
    pub fn arrivals(&self) -> Arrivals {
        let Some(range) = self.created else {
            return Arrivals::default();
        };
        let complete = |counts: &Counts<i64, u64>| counts.len() > 0 && counts.other == 0;
        let finest = if complete(&self.minutes) {
            Unit::Minute
        } else if complete(&self.hours) {
            Unit::Hour
        } else {
            Unit::Day
        };
        let source = match finest {
            Unit::Minute => &self.minutes,
            Unit::Hour => &self.hours,
            Unit::Day => &self.days,
        };
        arrivals::buckets(
            range,
            finest,
            source.iter().map(|(&k, &n)| (k, n)),
            source.other,
        )
    }

    /// The report of the grouping at `index` of those the envelopes were added with.
    fn report_of(&self, index: usize, by: GroupBy, top: usize, books: &Summary) -> StatsReport {
        let no_groups = Counts::default();
        let table = self.groups.get(index).unwrap_or(&no_groups);
        let timestamp = |ms: i64| {
            let mut text = Vec::with_capacity(24);
            push_timestamp(&mut text, ms);
            String::from_utf8(text).unwrap_or_default()
        };
        let mut queues = self.queues_by_group();
        let mut groups: Vec<Group> = table
            .iter()
            .map(|(key, &count)| Group {
                key: (!key.is_empty()).then(|| key.clone()),
                count,
                triage: (by == GroupBy::Fingerprint)
                    .then(|| self.group_triage(key, &mut queues, timestamp)),
            })
            .collect();
        groups.sort_unstable_by(|a, b| b.count.cmp(&a.count).then_with(|| a.key.cmp(&b.key)));
        let mut error_types: Vec<ErrorType> = self
            .error_types
            .iter()
            .map(|(key, counts)| ErrorType {
                error_type: key.clone(),
                attempts: counts.attempts,
                last_attempt: counts.last,
            })
            .collect();
        error_types.sort_unstable_by(|a, b| {
            (b.attempts, b.last_attempt)
                .cmp(&(a.attempts, a.last_attempt))
                .then_with(|| a.error_type.cmp(&b.error_type))
        });
        let distinct_error_types = error_types.len() as u64;
        error_types.truncate(top);
        StatsReport {
            lines: books.lines,
            blank: books.blank,
            rejected: books.rejected,
            envelopes: self.envelopes,
            by: by.name(),
            groups,
            groups_other: table.other,
            created_at: self.created.map(|(first, last)| CreatedRange {
                first: timestamp(first),
                last: timestamp(last),
            }),
            attempts: histogram(&self.attempts),
            attempts_other: self.attempts.other,
            redrives: histogram(&self.redrives),
            redrives_other: self.redrives.other,
            top_error_types: error_types,
            distinct_error_types,
            error_types_other: self.error_types.other.attempts,
            arrivals_other: self.days.other,
            arrivals_per_day: ascending(&self.days)
                .into_iter()
                .map(|(day, count)| Day {
                    day: day_text(day * MS_PER_DAY, &mut [0; 10]).to_owned(),
                    count,
                })
                .collect(),
        }
    }
}

impl Stats {
    /// Each fingerprint group's queues (by the group's key in `groups`), most envelopes first.
    fn queues_by_group(&self) -> HashMap<&str, Vec<QueueCount>> {
        let mut by_group: HashMap<&str, Vec<QueueCount>> = HashMap::new();
        for (pair, &count) in self.group_queues.iter() {
            let (group, queue) = pair.split_at(pair.len().min(NO_FINGERPRINT.len()));
            let group = if group == NO_FINGERPRINT { "" } else { group };
            by_group.entry(group).or_default().push(QueueCount {
                queue: queue.get(1..).unwrap_or_default().to_owned(),
                count,
            });
        }
        for queues in by_group.values_mut() {
            queues
                .sort_unstable_by(|a, b| b.count.cmp(&a.count).then_with(|| a.queue.cmp(&b.queue)));
            queues.truncate(TOP_QUEUES);
        }
        by_group
    }

    /// The details of the fingerprint group `key` (`""` for no error).
    fn group_triage(
        &self,
        key: &str,
        queues: &mut HashMap<&str, Vec<QueueCount>>,
        timestamp: impl Fn(i64) -> String,
    ) -> FingerprintGroup {
        let triage = match key {
            "" => self.triage.by_key.get(&None),
            _ => Fingerprint::parse(key).and_then(|f| self.triage.by_key.get(&Some(f))),
        };
        let (error_type, template, seen, sample_ids, statuses) = match triage {
            Some((_, t)) => (
                Some(t.error_type.clone()).filter(|t| !t.is_empty()),
                Some(t.template.clone()).filter(|_| !t.error_type.is_empty()),
                t.seen,
                t.sample_ids.clone(),
                t.statuses.clone(),
            ),
            None => (None, None, None, Vec::new(), Vec::new()),
        };
        let mut statuses: Vec<StatusCount> = statuses
            .into_iter()
            .map(|(status, count)| StatusCount { status, count })
            .collect();
        statuses
            .sort_unstable_by(|a, b| b.count.cmp(&a.count).then_with(|| a.status.cmp(&b.status)));
        FingerprintGroup {
            error_type,
            template,
            first_seen: seen.map(|(first, _)| timestamp(first)),
            last_seen: seen.map(|(_, last)| timestamp(last)),
            top_queues: queues.remove(key).unwrap_or_default(),
            sample_ids,
            statuses,
        }
    }
}

/// `YYYY-MM-DD` (UTC) of a time, written into `buffer`.
fn day_text(ms: i64, buffer: &mut [u8; 10]) -> &str {
    buffer.copy_from_slice(&timestamp_bytes(ms)[..10]);
    std::str::from_utf8(buffer).expect("digits and dashes are ASCII")
}

/// The counts of a histogram's values, or of days, by ascending key.
fn ascending<K: Ord + Copy + Hash>(counts: &Counts<K, u64>) -> Vec<(K, u64)> {
    let mut buckets: Vec<(K, u64)> = counts.iter().map(|(&k, &n)| (k, n)).collect();
    buckets.sort_unstable_by_key(|&(k, _)| k);
    buckets
}

fn histogram(counts: &Counts<u64, u64>) -> Vec<Bucket> {
    ascending(counts)
        .into_iter()
        .map(|(value, count)| Bucket { value, count })
        .collect()
}

/// The `stats` operation: every valid envelope added to the aggregates, invalid lines to the
/// rejects. Nothing goes to the primary output while it runs; [`StatsOp::report`] of the run's
/// total (what [`pipeline::run`](crate::pipeline::run) returns beside the books) is the result.
#[derive(Debug)]
pub struct StatsOp {
    /// The rules every line is judged by first.
    pub rules: EnvelopeRules,
    /// What the groups are.
    pub by: GroupBy,
    /// Write reject records.
    pub write_rejects: bool,
    /// The reader cap, for the `LINE_TOO_LONG` message.
    pub max_line_bytes: usize,
    /// The groupings counted beside `by` ([`StatsOp::overview`]), none twice, `by` not among
    /// them.
    also: Vec<GroupBy>,
    /// Count arrivals per minute and per hour ([`StatsOp::overview`]).
    fine_arrivals: bool,
}

impl StatsOp {
    /// A `stats` run grouping by `by`, with these defaults: no reject records
    /// (`write_rejects` off) and the reader's default cap as `max_line_bytes`.
    pub fn new(rules: EnvelopeRules, by: GroupBy) -> Self {
        StatsOp {
            rules,
            by,
            write_rejects: false,
            max_line_bytes: crate::framing::DEFAULT_MAX_LINE_BYTES,
            also: Vec::new(),
            fine_arrivals: false,
        }
    }

    /// Also counts the groups of each of `also` (those that are not `by` already), and the
    /// arrivals per minute and per hour, all in the same pass: what [`StatsOp::overview`]
    /// reports.
    pub fn with_overview(mut self, also: &[GroupBy]) -> Self {
        for &grouping in also {
            if grouping != self.by && !self.also.contains(&grouping) {
                self.also.push(grouping);
            }
        }
        self.fine_arrivals = true;
        self
    }

    /// The groupings counted: `by` first.
    fn groupings(&self) -> ([GroupBy; 8], usize) {
        let mut all = [self.by; 8];
        // At most the 6 groupings that are not `by`: `with_overview` keeps each once.
        let n = self.also.len().min(7);
        all[1..=n].copy_from_slice(&self.also[..n]);
        (all, n + 1)
    }

    /// The report of each grouping (`by`, then those of [`StatsOp::with_overview`]) and the
    /// arrivals over time, from what a run added up (its total).
    pub fn overview(&self, total: &Stats, top: usize, books: &Summary) -> StatsOverview {
        let (groupings, n) = self.groupings();
        StatsOverview {
            reports: groupings[..n]
                .iter()
                .enumerate()
                .map(|(index, &by)| total.report_of(index, by, top, books))
                .collect(),
            arrivals: total.arrivals(),
            reject_examples: total.reject_examples(),
        }
    }

    /// The report of what a run added up (its total).
    pub fn report(&self, total: &Stats, top: usize, books: &Summary) -> StatsReport {
        total.report(self.by, top, books)
    }
}

/// A worker's reusable state.
#[derive(Debug)]
pub struct StatsWorker {
    checker: Checker,
}

impl LineOperation for StatsOp {
    // The rejects (the report is written from the total once the run is over).
    const OUTPUTS: usize = output::REJECTS + 1;
    type Worker = StatsWorker;
    type Tally = Stats;
    type Total = Stats;

    fn worker(&self) -> Self::Worker {
        StatsWorker {
            // Groups compare texts: a line whose strings hold escapes is read from its tape,
            // which decodes them.
            checker: super::checker(&self.rules, self.max_line_bytes).with_plain_texts(),
        }
    }

    fn total(&self) -> Stats {
        Stats::default()
    }

    fn apply(
        &self,
        StatsWorker { checker }: &mut Self::Worker,
        SourceLine { source, line }: SourceLine<'_>,
        out: &mut ChunkOutput<Stats>,
    ) -> Action {
        let checked = checker.check_line(&line);
        let Some(envelope) = checked.envelope() else {
            out.tally
                .add_rejected(source, line.number, &checked.verdict().errors);
            let at = super::position(source, &line);
            return super::reject(checked.verdict(), at, &line, out, self.write_rejects);
        };
        out.summary.tally_warnings(envelope.warnings());
        let (groupings, n) = self.groupings();
        out.tally
            .add_envelope_grouped(&envelope, &groupings[..n], self.fine_arrivals);
        Action::Emit
    }

    fn merge(&self, total: &mut Stats, tally: &mut Stats) {
        tally.drain_into(total);
    }
}

#[cfg(test)]
mod tests {
    use super::{Counts, MAX_KEYS};

    #[test]
    fn a_chunk_keeps_every_key_and_the_total_the_first_max_keys_in_order() {
        let mut total = Counts::<u64, u64>::default();
        let mut chunk = Counts::<u64, u64>::default();
        for value in 0..MAX_KEYS as u64 + 3 {
            chunk.add(&value, 1);
        }
        chunk.add(&7, 2);
        assert_eq!(
            (chunk.len(), chunk.other),
            (MAX_KEYS + 3, 0),
            "no cap per chunk"
        );
        chunk.drain_into(&mut total);
        assert!(chunk.by_key.is_empty() && chunk.other == 0, "drained");
        assert_eq!(
            (total.len(), total.other, total.by_key[&7].1),
            (MAX_KEYS, 3, 3)
        );
        assert!(!total.by_key.contains_key(&(MAX_KEYS as u64)));
    }

    #[test]
    fn keys_past_the_cap_are_counted_as_other_in_the_order_first_seen() {
        let mut total = Counts::<String, u64>::default();
        let mut chunk = Counts::<String, u64>::default();
        for i in 0..MAX_KEYS - 2 {
            chunk.add(&format!("k{i}"), 1);
        }
        chunk.add("k0", 1);
        chunk.drain_into(&mut total);
        assert_eq!(
            (total.len(), total.other, total.by_key["k0"].1),
            (MAX_KEYS - 2, 0, 2)
        );
        // Two places left: the chunk's first two new keys take them, in the order the
        // chunk saw them (not the order of its hash map).
        for key in ["z", "k1", "y", "x", "w"] {
            chunk.add(key, 5);
        }
        chunk.drain_into(&mut total);
        assert_eq!(total.other, 10, "x and w came after the cap");
        assert_eq!(
            total.by_key["k1"].1, 6,
            "a known key still counts as itself"
        );
        assert!(total.by_key.contains_key("z") && total.by_key.contains_key("y"));
        assert!(!total.by_key.contains_key("x") && !total.by_key.contains_key("w"));
    }
}

#[cfg(test)]
mod single_pass_tests {
    use super::*;
    use crate::envelope::Verdict;
    use crate::json::JsonParser;
    use crate::RuleOptions;

    /// The same lines added up from their tapes and from the single pass's ranges give the
    /// same report, for every grouping.
    #[test]
    fn stats_are_the_same_from_the_ranges_and_from_the_tape() {
        let rules = EnvelopeRules::new(RuleOptions::default()).unwrap();
        let mut checker = Checker::new(rules.clone()).with_plain_texts();
        let (mut parser, mut verdict) = (JsonParser::new(), Verdict::default());
        let mut lines = Vec::new();
        for version in [1, 2] {
            for line in crate::generate::test_lines(33, version, 0.1, 1500) {
                lines.push(line);
            }
        }
        for by in GroupBy::ALL {
            let (mut on_tape, mut on_ranges, mut read) = (Stats::default(), Stats::default(), 0);
            for line in &lines {
                let checked = checker.check(line);
                if checked.document().is_some() || !checked.is_valid() {
                    continue;
                }
                read += 1;
                on_ranges.add_envelope(&checked.envelope().unwrap(), by);
                let doc = rules.check_line(&mut parser, line, &mut verdict).unwrap();
                on_tape.add(doc.root(), by);
            }
            assert!(read > 2000, "{read}");
            let books = Summary::default();
            assert_eq!(
                on_tape.report(by, 50, &books),
                on_ranges.report(by, 50, &books),
                "{by:?}"
            );
        }
    }

    /// Counted together in one pass, each grouping reports what it reports alone; the fine
    /// arrivals add up to the arrivals per day.
    #[test]
    fn an_overview_is_each_grouping_alone() {
        let rules = EnvelopeRules::new(RuleOptions::default()).unwrap();
        let mut parser = JsonParser::new();
        let mut verdict = Verdict::default();
        let all = [
            GroupBy::Outcome,
            GroupBy::Queue,
            GroupBy::Status,
            GroupBy::Fingerprint,
        ];
        let mut together = Stats::default();
        let mut alone: Vec<Stats> = all.iter().map(|_| Stats::default()).collect();
        for line in crate::generate::test_lines(34, 2, 0.05, 600) {
            let Some(doc) = rules.check_line(&mut parser, &line, &mut verdict) else {
                continue;
            };
            if !verdict.is_valid() {
                continue;
            }
            together.add_grouped(doc.root(), &all, true);
            for (stats, &by) in alone.iter_mut().zip(&all) {
                stats.add(doc.root(), by);
            }
        }
        let books = Summary::default();
        for (index, (stats, &by)) in alone.iter().zip(&all).enumerate() {
            assert_eq!(
                together.report_of(index, by, 10, &books),
                stats.report(by, 10, &books),
                "{by:?}"
            );
        }
        let arrivals = together.arrivals();
        let days = together
            .report(GroupBy::Outcome, 10, &books)
            .arrivals_per_day;
        assert!(!arrivals.buckets.is_empty() && arrivals.other == 0);
        assert_eq!(
            arrivals.buckets.iter().map(|b| b.count).sum::<u64>(),
            days.iter().map(|d| d.count).sum::<u64>()
        );
    }

    /// Cut into chunks of any size and drained in input order, the fingerprint groups' status
    /// counts and the rejected codes' example lines are those of one tally of everything: the
    /// examples the first of each code in input order, at most [`REJECT_EXAMPLES`].
    #[test]
    fn statuses_and_reject_examples_merge_as_one_chunk() {
        let rules = EnvelopeRules::new(RuleOptions::default()).unwrap();
        let (mut parser, mut verdict) = (JsonParser::new(), Verdict::default());
        let bys = [GroupBy::Fingerprint, GroupBy::Status];
        let lines = crate::generate::test_lines(35, 2, 0.2, 900);
        let tally = |stats: &mut Stats,
                     number: usize,
                     line: &[u8],
                     parser: &mut JsonParser,
                     verdict: &mut Verdict| {
            match rules.check_line(parser, line, verdict) {
                Some(doc) if verdict.is_valid() => stats.add_grouped(doc.root(), &bys, false),
                _ => stats.add_rejected("in.jsonl", number as u64 + 1, &verdict.errors),
            }
        };
        let mut whole = Stats::default();
        let mut by_code: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
        for (number, line) in lines.iter().enumerate() {
            tally(&mut whole, number, line, &mut parser, &mut verdict);
            if !verdict.is_valid() {
                let mut codes: Vec<&str> = verdict.errors.iter().map(|e| e.code.as_str()).collect();
                codes.sort_unstable();
                codes.dedup();
                for code in codes {
                    by_code.entry(code).or_default().push(number as u64 + 1);
                }
            }
        }
        let books = Summary::default();
        let one = whole.report(GroupBy::Fingerprint, 1000, &books);
        // The examples are each code's first lines, and some code has more than are kept.
        let examples = whole.reject_examples();
        assert!(
            by_code.values().any(|l| l.len() > REJECT_EXAMPLES),
            "{by_code:?}"
        );
        let want: Vec<(&str, Vec<u64>)> = by_code
            .iter()
            .map(|(code, l)| (*code, l.iter().take(REJECT_EXAMPLES).copied().collect()))
            .collect();
        let got: Vec<(&str, Vec<u64>)> = examples
            .iter()
            .map(|e| (e.code, e.lines.iter().map(|l| l.line).collect()))
            .collect();
        assert_eq!(got, want);
        // Each group's statuses add up to its count; some group has more than one status.
        for group in &one.groups {
            let statuses = &group.triage.as_ref().unwrap().statuses;
            assert_eq!(statuses.iter().map(|s| s.count).sum::<u64>(), group.count);
        }
        assert!(one
            .groups
            .iter()
            .any(|g| g.triage.as_ref().unwrap().statuses.len() > 1));
        for chunk in [1, 7, 64, 301] {
            let mut total = Stats::default();
            for (start, part) in lines.chunks(chunk).enumerate() {
                let mut tally_of_chunk = Stats::default();
                for (i, line) in part.iter().enumerate() {
                    tally(
                        &mut tally_of_chunk,
                        start * chunk + i,
                        line,
                        &mut parser,
                        &mut verdict,
                    );
                }
                tally_of_chunk.drain_into(&mut total);
            }
            assert_eq!(
                total.report(GroupBy::Fingerprint, 1000, &books),
                one,
                "{chunk}"
            );
            assert_eq!(total.reject_examples(), examples, "{chunk}");
        }
    }
}
