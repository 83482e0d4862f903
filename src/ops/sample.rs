//! `sample`: a uniform random sample of N valid lines (docs/cli.md#sample), by reservoir
//! sampling (Algorithm R) in input order on the writer's thread, so the same seed gives the
//! same sample for any `-j`; written in input order at the end. Memory: the N lines (N per
//! queue with `--by queue`).

use std::collections::HashMap;

use foldhash::fast::FixedState;
use rand_pcg::rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::output;
use crate::envelope::{Checker, EnvelopeRules};
use crate::pipeline::{Action, ChunkOutput, LineOperation, SourceLine};

/// The `sample` operation: nothing is written while the lines stream; the run's total
/// ([`SampleTotal::into_sample`]) gives the chosen lines, in input order, at the end. The books count them as emitted and
/// the other valid lines as filtered out.
#[derive(Debug)]
#[non_exhaustive]
pub struct SampleOp {
    rules: EnvelopeRules,
    size: usize,
    by_queue: bool,
    /// Write reject records.
    pub write_rejects: bool,
    /// The reader cap, for the `LINE_TOO_LONG` message.
    pub max_line_bytes: usize,
    /// The random numbers' seed.
    seed: u64,
}

/// The writer's state, the run's total: the random numbers, in input order, and the
/// reservoirs.
#[derive(Debug)]
pub struct SampleTotal {
    rng: Pcg64Mcg,
    /// Valid lines seen so far (their numbers order the sample).
    valid: u64,
    all: Reservoir,
    by_queue: HashMap<Vec<u8>, Reservoir, FixedState>,
}

/// Up to `size` lines, each with its number among the valid lines.
#[derive(Debug, Default)]
struct Reservoir {
    /// Lines offered so far.
    seen: u64,
    lines: Vec<(u64, Vec<u8>)>,
}

impl Reservoir {
    /// Algorithm R: the i-th line offered (from 0) goes in while there is room, else replaces
    /// a uniformly chosen one with probability size / (i + 1). Returns whether it went in and
    /// whether it evicted another.
    fn offer(&mut self, size: usize, rng: &mut Pcg64Mcg, number: u64, line: &[u8]) -> (bool, bool) {
        let i = self.seen;
        self.seen += 1;
        if self.lines.len() < size {
            self.lines.push((number, line.to_vec()));
            return (true, false);
        }
        let slot = below(rng, i + 1);
        let Some((kept_number, kept)) = self.lines.get_mut(slot as usize) else {
            return (false, false);
        };
        *kept_number = number;
        kept.clear();
        kept.extend_from_slice(line);
        (true, true)
    }
}

/// A uniform number in `0..n` (n ≥ 1): Lemire's multiply-and-reject, exact.
fn below(rng: &mut Pcg64Mcg, n: u64) -> u64 {
    let threshold = n.wrapping_neg() % n;
    loop {
        let wide = u128::from(rng.next_u64()) * u128::from(n);
        if (wide as u64) >= threshold {
            return (wide >> 64) as u64;
        }
    }
}

impl SampleOp {
    /// A sample of `size` lines (per queue when `by_queue`) drawn with the random numbers of
    /// `seed`; no reject records and the reader's default cap, which the fields can change.
    pub fn new(rules: EnvelopeRules, size: usize, by_queue: bool, seed: u64) -> Self {
        SampleOp {
            rules,
            size,
            by_queue,
            write_rejects: false,
            max_line_bytes: crate::framing::DEFAULT_MAX_LINE_BYTES,
            seed,
        }
    }
}

impl SampleTotal {
    /// The sampled lines, without terminators, in input order.
    pub fn into_sample(self) -> Vec<Vec<u8>> {
        let mut lines = self.all.lines;
        for (_, reservoir) in self.by_queue {
            lines.extend(reservoir.lines);
        }
        lines.sort_unstable_by_key(|(number, _)| *number);
        lines.into_iter().map(|(_, line)| line).collect()
    }
}

/// A worker's reusable state.
#[derive(Debug)]
pub struct SampleWorker {
    checker: Checker,
}

/// A chunk's valid lines, back to back in `bytes`, each with its range and its queue's.
#[derive(Debug, Default)]
pub struct SampleTally {
    bytes: Vec<u8>,
    lines: Vec<[usize; 4]>,
}

impl LineOperation for SampleOp {
    // The rejects (the sample is written from the total once the run is over).
    const OUTPUTS: usize = output::REJECTS + 1;
    type Worker = SampleWorker;
    type Tally = SampleTally;
    type Total = SampleTotal;

    fn worker(&self) -> SampleWorker {
        SampleWorker {
            checker: super::checker(&self.rules, self.max_line_bytes),
        }
    }

    fn total(&self) -> SampleTotal {
        SampleTotal {
            rng: Pcg64Mcg::seed_from_u64(self.seed),
            valid: 0,
            all: Reservoir::default(),
            by_queue: HashMap::default(),
        }
    }

    fn apply(
        &self,
        w: &mut SampleWorker,
        line: SourceLine<'_>,
        out: &mut ChunkOutput<SampleTally>,
    ) -> Action {
        let SourceLine { source, line } = line;
        let checked = w.checker.check_line(&line);
        let Some(envelope) = checked.envelope() else {
            let at = super::position(source, &line);
            return super::reject(checked.verdict(), at, &line, out, self.write_rejects);
        };
        out.summary.tally_warnings(envelope.warnings());
        // The line, then its queue's text (a name: a few bytes).
        let start = out.tally.bytes.len();
        out.tally.bytes.extend_from_slice(line.content);
        let end = out.tally.bytes.len();
        out.tally
            .bytes
            .extend_from_slice(envelope.queue().as_bytes());
        let queue_end = out.tally.bytes.len();
        out.tally.lines.push([start, end, end, queue_end]);
        Action::FilterOut
    }

    fn settle(&self, total: &mut SampleTotal, out: &mut ChunkOutput<SampleTally>) {
        let SampleTotal {
            rng,
            valid,
            all,
            by_queue,
        } = total;
        for &[start, end, queue_start, queue_end] in &out.tally.lines {
            let line = &out.tally.bytes[start..end];
            let number = *valid;
            *valid += 1;
            let reservoir = if self.by_queue {
                let queue = &out.tally.bytes[queue_start..queue_end];
                if !by_queue.contains_key(queue) {
                    by_queue.insert(queue.to_vec(), Reservoir::default());
                }
                by_queue.get_mut(queue).expect("just inserted")
            } else {
                &mut *all
            };
            // The worker counted the line as filtered out; one that goes in without taking
            // another's place is emitted instead (an eviction moves a line back).
            if let (true, false) = reservoir.offer(self.size, rng, number, line) {
                out.summary.filtered_out -= 1;
                out.summary.emitted += 1;
            }
        }
        out.tally.bytes.clear();
        out.tally.lines.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::{self, Outputs, PipelineOptions, Source};
    use crate::RuleOptions;

    /// The sample of `lines` with `seed`, as indexes into `lines`.
    fn sample(
        lines: &[Vec<u8>],
        size: usize,
        by_queue: bool,
        seed: u64,
        jobs: usize,
    ) -> Vec<usize> {
        let op = SampleOp::new(
            EnvelopeRules::new(RuleOptions::default()).unwrap(),
            size,
            by_queue,
            seed,
        );
        let input: Vec<u8> = lines
            .iter()
            .flat_map(|l| l.iter().chain(b"\n"))
            .copied()
            .collect();
        let options = PipelineOptions {
            jobs,
            chunk_bytes: 1,
            ..PipelineOptions::default()
        };
        let sources = vec![Source::Reader {
            name: "t".into(),
            reader: Box::new(std::io::Cursor::new(input)),
        }];
        let none = Outputs::none();
        let (books, total) = pipeline::run(sources, &op, options, none, None).unwrap();
        let taken = total.into_sample();
        assert_eq!(books.emitted as usize, taken.len());
        assert_eq!(books.filtered_out as usize, lines.len() - taken.len());
        taken
            .iter()
            .map(|line| lines.iter().position(|l| l == line).unwrap())
            .collect()
    }

    /// Every line is equally likely to be sampled (a chi-square test over 2,000 seeds), the
    /// sample is in input order, and a seed gives the same sample for any `-j`.
    #[test]
    fn the_sample_is_uniform_ordered_and_deterministic() {
        let lines = crate::generate::test_lines(2, 2, 0.0, 20);
        let mut counts = [0u32; 20];
        for seed in 0..2000 {
            let taken = sample(&lines, 5, false, seed, 1);
            assert_eq!(taken.len(), 5);
            assert!(taken.windows(2).all(|w| w[0] < w[1]), "input order");
            for i in taken {
                counts[i] += 1;
            }
        }
        // 2,000 × 5 / 20 = 500 each; 19 degrees of freedom, 43.8 at 0.1%.
        let chi: f64 = counts
            .iter()
            .map(|&n| (f64::from(n) - 500.0).powi(2) / 500.0)
            .sum();
        assert!(chi < 43.8, "{counts:?}: chi-square {chi:.1}");
        for seed in [0, 7, 99] {
            let one = sample(&lines, 6, true, seed, 1);
            assert_eq!(sample(&lines, 6, true, seed, 3), one);
            assert_eq!(sample(&lines, 6, true, seed, 8), one);
        }
        assert_eq!(
            sample(&lines, 50, false, 1, 2),
            (0..20).collect::<Vec<_>>(),
            "all when fewer"
        );
    }

    #[test]
    fn below_is_in_range_for_every_bound() {
        let mut rng = Pcg64Mcg::seed_from_u64(5);
        for n in [1, 2, 3, 7, 1 << 32, u64::MAX / 3, u64::MAX] {
            for _ in 0..1000 {
                assert!(below(&mut rng, n) < n);
            }
        }
    }
}
