//! The owned envelope's promises: reading a valid line and writing it back gives a line the
//! checker accepts with the same value (the same bytes for a canonical line), and no sequence
//! of calls makes an envelope the checker rejects.

use proptest::prelude::*;

use crate::envelope::{Checker, Envelope, EnvelopeRules, RuleOptions};
use crate::generate::{GenOptions, Generator};
use crate::test_support::drive_lifecycle;

fn checker() -> Checker {
    Checker::new(EnvelopeRules::new(RuleOptions::default()).unwrap())
}

/// Every line `gen` writes (both versions, long stacks) is canonical: read and written back,
/// it is the same bytes.
#[test]
fn gen_lines_are_written_back_byte_for_byte() {
    let mut checker = checker();
    let mut count = 0;
    for (version, stack_bytes) in [(1, None), (2, None), (1, Some(60_000)), (2, Some(20_000))] {
        let mut gen = Generator::new(GenOptions {
            seed: 11,
            version,
            stack_bytes,
            ..GenOptions::default()
        });
        for _ in 0..300 {
            let mut line = Vec::new();
            gen.next_line(&mut line);
            let checked = checker.check(&line);
            let owned = checked
                .envelope()
                .expect("gen writes valid lines")
                .to_owned();
            assert_eq!(owned.to_json().as_bytes(), &line[..], "v{version}");
            assert_eq!(Envelope::from_json(&line).as_ref(), Ok(&owned));
            count += 1;
        }
    }
    assert_eq!(count, 1200);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// No sequence of calls makes an envelope the checker rejects (the fuzz target
    /// `lifecycle` drives the same calls).
    #[test]
    fn no_sequence_of_calls_makes_an_invalid_envelope(data in proptest::collection::vec(any::<u8>(), 0..400)) {
        drive_lifecycle(&data);
    }
}

/// The driver's calls reach every transition and are refused often enough to test refusals:
/// a property test over calls that all fail would prove little.
#[test]
fn the_driver_applies_and_refuses() {
    let (mut applied, mut refused) = (0, 0);
    let mut state = 7u64;
    for _ in 0..60 {
        let data: Vec<u8> = (0..300)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                (state >> 56) as u8
            })
            .collect();
        let drive = drive_lifecycle(&data);
        applied += drive.applied;
        refused += drive.refused;
    }
    assert!(
        applied > 600 && refused > 600,
        "{applied} applied, {refused} refused"
    );
}
