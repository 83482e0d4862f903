//! Byte mutations: a byte deleted, duplicated, or replaced by each byte that means something to
//! JSON or to a rule (and some that are not allowed at all), at every position of the hand-made
//! bases and at a stride over many gen lines, clean and with defects.

use super::semantic::bases;
use super::{gen_lines, Tally};
use crate::envelope::RuleOptions;
use crate::test_support::{byte_mutation as mutate, BYTE_MUTATIONS as KINDS};

#[test]
fn every_byte_mutation_of_four_bases() {
    let mut tally = Tally::new(&RuleOptions::default());
    let bases = bases();
    // Both catalogue lines, version 1 in flight (a stack with escapes, detail, an unknown
    // member), version 2 with a claim check.
    for base in [&bases[0], &bases[1], &bases[3], &bases[6]] {
        let base = base.as_bytes();
        for at in 0..base.len() {
            for kind in 0..KINDS {
                tally.add(&mutate(base, at, kind));
            }
        }
    }
    tally.assert_share("byte mutations of four bases", 3000, 0.95);
}

#[test]
fn byte_mutations_of_gen_lines_at_a_stride() {
    let mut tally = Tally::new(&RuleOptions::default());
    let mut lines = Vec::new();
    for version in [1, 2] {
        lines.extend(gen_lines(21, version, 0.0, 45));
        lines.extend(gen_lines(22, version, 1.0, 30));
    }
    for (i, line) in lines.iter().enumerate() {
        // Every 43rd byte, from a different start on each line, each time another mutation.
        let mut at = i % 43;
        while at < line.len() {
            tally.add(&mutate(line, at, (at + i) % KINDS));
            at += 43;
        }
    }
    tally.assert_share("byte mutations of gen lines", 2000, 0.95);
}
