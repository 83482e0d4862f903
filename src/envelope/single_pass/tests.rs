//! The single pass against the tape path: on every line it accepts, the tape path must find
//! the line valid with no warning and the same version; on the lines the tape path finds clean,
//! it should accept nearly all (else it saves nothing).
//!
//! The check itself is `crate::test_support` (shared with the fuzz target `single_pass`); the
//! lines come from `gen` (here), byte mutations (`tests/bytes.rs`), field and member mutations
//! (`tests/semantic.rs`, on the JSON trees of `tests/tree.rs`), hand-made edge cases
//! (`tests/edges.rs`), other options (`tests/option_variants.rs`) and the compliance fixtures
//! and JSONTestSuite (`tests/corpora.rs`).

mod bytes;
mod corpora;
mod edges;
mod option_variants;
mod semantic;
mod tree;

use crate::envelope::RuleOptions;
use crate::test_support::{single_pass_agrees, Agreement, SinglePassCheck};

/// Judges `line` both ways under `options`, with every stage-1 classifier, fresh and warm; panics
/// on a line the single pass accepts that the tape path does not find clean. Returns whether the
/// tape path found it clean and whether the single pass accepted it.
pub(crate) fn compare(options: &RuleOptions, line: &[u8]) -> (bool, bool) {
    let Agreement {
        tape_clean,
        accepted,
    } = single_pass_agrees(options, line);
    (tape_clean, accepted)
}

pub(crate) use crate::generate::test_lines as gen_lines;

/// Many lines through one reused [`SinglePassCheck`], counted.
pub(crate) struct Tally {
    check: SinglePassCheck,
    pub lines: usize,
    pub clean: usize,
    pub accepted: usize,
    /// A few clean lines the single pass declined, for the message.
    declined: Vec<String>,
}

impl Tally {
    pub fn new(options: &RuleOptions) -> Self {
        Tally {
            check: SinglePassCheck::new(options),
            lines: 0,
            clean: 0,
            accepted: 0,
            declined: Vec::new(),
        }
    }

    /// Compares `line` (panics on a false accept); returns what was found.
    pub fn add(&mut self, line: &[u8]) -> Agreement {
        let a = self.check.compare(line);
        self.lines += 1;
        self.clean += usize::from(a.tape_clean);
        self.accepted += usize::from(a.accepted);
        if a.tape_clean && !a.accepted && self.declined.len() < 5 {
            self.declined
                .push(String::from_utf8_lossy(line).into_owned());
        }
        a
    }

    /// The share of clean lines the single pass accepted.
    pub fn share(&self) -> f64 {
        self.accepted as f64 / self.clean.max(1) as f64
    }

    /// At least `min_clean` lines were clean and at least `min_share` of them were accepted:
    /// the test is not vacuous. Prints the counts (`cargo test -- --nocapture`).
    pub fn assert_share(&self, what: &str, min_clean: usize, min_share: f64) {
        eprintln!(
            "{what}: {} lines, {} clean, {} accepted ({:.1}%)",
            self.lines,
            self.clean,
            self.accepted,
            100.0 * self.share()
        );
        assert!(
            self.clean >= min_clean,
            "{what}: only {} clean lines of {}",
            self.clean,
            self.lines
        );
        assert!(
            self.share() >= min_share,
            "{what}: accepted {} of {} clean lines; declined e.g.:\n{}",
            self.accepted,
            self.clean,
            self.declined.join("\n")
        );
    }
}

#[test]
fn accepts_what_the_tape_path_finds_clean_and_nothing_else() {
    for version in [1, 2] {
        let mut tally = Tally::new(&RuleOptions::default());
        for line in gen_lines(5, version, 0.3, 3000) {
            tally.add(&line);
        }
        assert!(tally.clean > 1500, "{}", tally.clean);
        tally.assert_share(&format!("gen lines of version {version}"), 1500, 1.0);
    }
}
