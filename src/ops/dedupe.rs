//! `dedupe`: one copy per `id` (docs/cli.md#dedupe), the kept copies in input order and byte
//! for byte, the dropped ones counted as filtered out (and written to `--dropped`).
//!
//! `--keep first` streams: the writer, which sees the lines in input order, keeps a copy when
//! its ID is new. `--keep newest` reads the input twice: [`DedupeScan`] finds, for every ID,
//! the copy with the most history, then [`DedupeOp`] keeps exactly those copies. Both passes
//! number the valid lines in input order the same way, so the second knows the first's choice
//! from a bit per line.

use std::collections::HashMap;

use foldhash::fast::FixedState;

use super::output::{self, PRIMARY, SECONDARY};
use crate::envelope::formats::ulid_value;
use crate::envelope::{Checker, EnvelopeRef, EnvelopeRules};
use crate::pipeline::{Action, ChunkOutput, LineOperation, SourceLine};

/// How much history a copy holds: `--keep newest` keeps the greatest, comparing
/// `redrive_count`, then the number of attempts, then the last attempt's `finished_at` (an
/// attempt in flight, or none, comes first), then the position (the later line wins).
///
/// 16 bytes, so that an entry of `--keep newest`'s table is 40: `redrive_count` is at most
/// 2^32 - 1 in a valid envelope, and the number of attempt records saturates at 2^32 - 1, which
/// no line that fits in memory reaches (a record takes well over 100 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct History {
    redrive_count: u32,
    attempts: u32,
    last_finished: i64,
}

impl History {
    fn new(redrive_count: u64, attempts: u64, last_finished: Option<i64>) -> Option<History> {
        Some(History {
            redrive_count: u32::try_from(redrive_count).ok()?,
            attempts: u32::try_from(attempts).unwrap_or(u32::MAX),
            last_finished: last_finished.unwrap_or(i64::MIN),
        })
    }
}

/// An ID as a table key: two words rather than a `u128`, whose 16-byte alignment would pad
/// `--keep newest`'s 40-byte entries to 48.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key([u64; 2]);

impl Key {
    fn of(id: u128) -> Key {
        Key([(id >> 64) as u64, id as u64])
    }
}

/// How many parts [`IdTable`] splits its IDs into.
const PARTS: usize = 256;

/// A table keyed by ID, split 256 ways by the ID's last bits (random in a ULID). A hash table
/// that doubles holds its old and new arrays at once, 1.5 times its size; split, only one small
/// part grows at a time, so the peak stays near the table's size: about 19 to 39 bytes per
/// distinct ID for `--keep first` (17 bytes a slot, filled 44 to 87.5%), 47 to 93 for `--keep
/// newest` (41 bytes a slot). Input whose IDs share their last bits lands in one part and
/// costs what one table would: more memory at the peak, never a wrong answer.
#[derive(Debug)]
struct IdTable<V> {
    parts: Vec<HashMap<Key, V, FixedState>>,
}

impl<V> Default for IdTable<V> {
    fn default() -> Self {
        IdTable {
            parts: (0..PARTS).map(|_| HashMap::default()).collect(),
        }
    }
}

impl<V> IdTable<V> {
    fn part(&mut self, id: u128) -> &mut HashMap<Key, V, FixedState> {
        &mut self.parts[id as usize % PARTS]
    }

    fn into_values(self) -> impl Iterator<Item = V> {
        self.parts.into_iter().flat_map(HashMap::into_values)
    }
}

/// A valid line's ID (as its 128-bit value) and history.
#[derive(Debug, Clone, Copy)]
struct Sighting {
    id: u128,
    history: History,
}

/// A worker's reusable state, for both passes.
#[derive(Debug)]
pub struct DedupeWorker {
    checker: Checker,
}

impl DedupeWorker {
    fn new(rules: &EnvelopeRules, max_line_bytes: usize) -> Self {
        DedupeWorker {
            checker: super::checker(rules, max_line_bytes),
        }
    }
}

/// A valid envelope's ID and history.
fn read_copy(envelope: &EnvelopeRef<'_>) -> Option<Sighting> {
    let last_finished = envelope.last_attempt().and_then(|a| a.finished_at_ms());
    Some(Sighting {
        id: ulid_value(envelope.id().as_bytes())?,
        history: History::new(
            envelope.redrive_count(),
            envelope.attempts().count() as u64,
            last_finished,
        )?,
    })
}

/// The first pass of `--keep newest`: for every ID, which valid line (by its number among the
/// valid lines, in input order) holds the copy with the most history. Writes nothing.
#[derive(Debug)]
pub struct DedupeScan {
    rules: EnvelopeRules,
    max_line_bytes: usize,
}

/// What the first pass of `--keep newest` finds, in input order: the run's total, whose
/// [`DedupeScanTotal::kept`] [`DedupeOp::keep_chosen`] takes.
#[derive(Debug, Default)]
pub struct DedupeScanTotal {
    /// Valid lines seen so far.
    valid: u64,
    /// For every ID, the best copy's history and valid-line number.
    best: IdTable<(History, u64)>,
}

impl DedupeScan {
    /// A first pass judging lines by `rules`, lines over `max_line_bytes` being too long.
    pub fn new(rules: EnvelopeRules, max_line_bytes: usize) -> Self {
        DedupeScan {
            rules,
            max_line_bytes,
        }
    }
}

impl DedupeScanTotal {
    /// The copies to keep: bit `k` is set when the k-th valid line is one.
    pub fn kept(self) -> Vec<u64> {
        let mut kept = vec![0u64; self.valid.div_ceil(64) as usize];
        for (_, number) in self.best.into_values() {
            kept[(number / 64) as usize] |= 1 << (number % 64);
        }
        kept
    }
}

impl LineOperation for DedupeScan {
    // Reads the copies and writes nothing.
    const OUTPUTS: usize = 0;
    type Worker = DedupeWorker;
    /// The chunk's valid lines' copies, in order.
    type Tally = Vec<(u128, History)>;
    type Total = DedupeScanTotal;

    fn worker(&self) -> DedupeWorker {
        DedupeWorker::new(&self.rules, self.max_line_bytes)
    }

    fn total(&self) -> DedupeScanTotal {
        DedupeScanTotal::default()
    }

    fn apply(
        &self,
        w: &mut DedupeWorker,
        line: SourceLine<'_>,
        out: &mut ChunkOutput<Self::Tally>,
    ) -> Action {
        let checked = w.checker.check_line(&line.line);
        match checked.envelope().as_ref().and_then(read_copy) {
            Some(copy) => {
                out.tally.push((copy.id, copy.history));
                Action::FilterOut
            }
            None => Action::Reject,
        }
    }

    fn merge(&self, scan: &mut DedupeScanTotal, tally: &mut Self::Tally) {
        for (id, history) in tally.drain(..) {
            let number = scan.valid;
            scan.valid += 1;
            scan.best
                .part(id)
                .entry(Key::of(id))
                .and_modify(|best| *best = (*best).max((history, number)))
                .or_insert((history, number));
        }
    }
}

/// Which copy of an ID `dedupe` keeps.
#[derive(Debug)]
enum Keeping {
    /// The first in input order.
    First,
    /// The ones [`DedupeScan`] chose, by valid-line number.
    Chosen { kept: Vec<u64> },
}

/// What `dedupe`'s writer knows of the lines before the chunk it settles: the run's total.
#[derive(Debug, Default)]
pub struct DedupeTotal {
    /// `--keep first`: the IDs seen so far.
    seen: IdTable<()>,
    /// `--keep newest`: the valid lines settled so far.
    valid: u64,
}

/// The `dedupe` operation: kept copies to the primary output, dropped ones to the secondary
/// (`--dropped`), invalid lines to the rejects.
#[derive(Debug)]
#[non_exhaustive]
pub struct DedupeOp {
    rules: EnvelopeRules,
    keeping: Keeping,
    /// Write the dropped copies to the secondary output.
    pub write_dropped: bool,
    /// Write reject records.
    pub write_rejects: bool,
    /// The reader cap, for the `LINE_TOO_LONG` message.
    pub max_line_bytes: usize,
}

impl DedupeOp {
    /// `--keep first`: keeps the first copy of every ID, streaming.
    pub fn keep_first(rules: EnvelopeRules) -> Self {
        Self::with(rules, Keeping::First)
    }

    /// Keeps the copies a [`DedupeScan`] chose (its run's [`DedupeScanTotal::kept`]), for the
    /// same input read again under the same rules.
    pub fn keep_chosen(rules: EnvelopeRules, kept: Vec<u64>) -> Self {
        Self::with(rules, Keeping::Chosen { kept })
    }

    fn with(rules: EnvelopeRules, keeping: Keeping) -> Self {
        DedupeOp {
            rules,
            keeping,
            write_dropped: false,
            write_rejects: false,
            max_line_bytes: crate::framing::DEFAULT_MAX_LINE_BYTES,
        }
    }
}

/// A valid line written to the primary output, for the writer to keep or drop.
#[derive(Debug, Clone, Copy)]
pub struct Written {
    id: u128,
    start: usize,
    end: usize,
}

impl LineOperation for DedupeOp {
    // The kept lines, the dropped copies (`--dropped`), the rejects.
    const OUTPUTS: usize = output::REJECTS + 1;
    type Worker = DedupeWorker;
    type Tally = Vec<Written>;
    type Total = DedupeTotal;

    fn worker(&self) -> DedupeWorker {
        DedupeWorker::new(&self.rules, self.max_line_bytes)
    }

    fn total(&self) -> DedupeTotal {
        DedupeTotal::default()
    }

    fn apply(
        &self,
        w: &mut DedupeWorker,
        line: SourceLine<'_>,
        out: &mut ChunkOutput<Self::Tally>,
    ) -> Action {
        let SourceLine { source, line } = line;
        let checked = w.checker.check_line(&line);
        let Some(copy) = checked.envelope().as_ref().and_then(read_copy) else {
            let at = super::position(source, &line);
            return super::reject(checked.verdict(), at, &line, out, self.write_rejects);
        };
        // Kept until the writer, which alone knows the copies before it, says otherwise.
        let start = out.buffer(PRIMARY).len();
        out.buffer(PRIMARY).extend_from_slice(line.content);
        out.buffer(PRIMARY).push(b'\n');
        let end = out.buffer(PRIMARY).len();
        out.summary.tally_warnings(&checked.verdict().warnings);
        out.tally.push(Written {
            id: copy.id,
            start,
            end,
        });
        Action::Emit
    }

    fn settle(&self, total: &mut DedupeTotal, out: &mut ChunkOutput<Self::Tally>) {
        let mut kept_to = 0;
        let mut dropped = 0;
        let mut decide = |id: u128| match &self.keeping {
            Keeping::First => total.seen.part(id).insert(Key::of(id), ()).is_none(),
            Keeping::Chosen { kept } => {
                let k = total.valid;
                total.valid += 1;
                kept.get((k / 64) as usize)
                    .is_some_and(|bits| bits >> (k % 64) & 1 == 1)
            }
        };
        // Taken for the loop and put back, capacity and all: nothing is allocated.
        let mut tally = std::mem::take(&mut out.tally);
        let (lines, dropped_copies) = match out.buffers().split_at_mut(SECONDARY) {
            (first, [second, ..]) => (&mut first[PRIMARY], second),
            _ => unreachable!("DedupeOp declares its second output"),
        };
        // The kept lines move up over the dropped ones, in order.
        for written in tally.drain(..) {
            if decide(written.id) {
                lines.copy_within(written.start..written.end, kept_to);
                kept_to += written.end - written.start;
            } else {
                dropped += 1;
                if self.write_dropped {
                    dropped_copies.extend_from_slice(&lines[written.start..written.end]);
                }
            }
        }
        lines.truncate(kept_to);
        out.tally = tally;
        out.summary.emitted -= dropped;
        out.summary.filtered_out += dropped;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RuleOptions;

    /// IDs that share their last bits all land in one part and are still told apart; IDs
    /// that differ only in the first word too.
    #[test]
    fn the_id_table_tells_every_id_apart() {
        let mut table = IdTable::<u32>::default();
        let ids: Vec<u128> = (0..5_000u128)
            .flat_map(|i| [i << 8, (i << 64) | 7, i * 0x9E37_79B9_7F4A_7C15_F39D])
            .collect();
        let mut distinct = ids.clone();
        distinct.sort_unstable();
        distinct.dedup();
        for (n, &id) in ids.iter().enumerate() {
            table.part(id).entry(Key::of(id)).or_insert(n as u32);
        }
        let mut firsts: Vec<u32> = table.into_values().collect();
        firsts.sort_unstable();
        let want: Vec<u32> = distinct
            .iter()
            .map(|d| ids.iter().position(|id| id == d).unwrap() as u32)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        assert_eq!(firsts, want);
        assert_eq!(std::mem::size_of::<(Key, (History, u64))>(), 40);
    }

    /// The single pass and the tape read the same ID and history from every valid gen line.
    #[test]
    fn the_single_pass_reads_copies_as_the_tape_does() {
        let rules = EnvelopeRules::new(RuleOptions::default()).unwrap();
        let mut checker = Checker::new(rules);
        let mut parser = crate::json::JsonParser::new();
        let mut fast = 0;
        for version in [1, 2] {
            for content in crate::generate::test_lines(3, version, 0.1, 1500) {
                let checked = checker.check(&content);
                if checked.document().is_some() || !checked.is_valid() {
                    continue;
                }
                fast += 1;
                let by_pass = read_copy(&checked.envelope().unwrap()).unwrap();
                let doc = parser.parse(&content, &mut Vec::new()).unwrap();
                let by_tape = read_copy(&EnvelopeRef::on_tape(doc.root(), version)).unwrap();
                assert_eq!((by_pass.id, by_pass.history), (by_tape.id, by_tape.history));
            }
        }
        assert!(fast > 2000, "{fast}");
    }
}
