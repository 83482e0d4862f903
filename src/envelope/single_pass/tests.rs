//! The single pass against the tape path: on every line it accepts, the tape path must find
//! the line valid with no warning and the same version; on the lines the tape path finds clean,
//! it should accept nearly all (else it saves nothing).

use super::*;
use crate::envelope::{EnvelopeRules, Verdict};
use crate::gen::{GenOptions, Generator};
use crate::json::stage1::Classifier;
use crate::json::JsonParser;

/// Judges `line` both ways under `options`, with every stage-1 classifier; panics on a line the
/// single pass accepts that the tape path does not find clean. Returns whether the tape path
/// found it clean and whether the single pass accepted it.
pub(crate) fn compare(options: &RuleOptions, line: &[u8]) -> (bool, bool) {
    let rules = EnvelopeRules::new(options.clone()).unwrap();
    let mut parser = JsonParser::new();
    let mut verdict = Verdict::default();
    rules.check_line(&mut parser, line, &mut verdict);
    let clean = verdict.is_valid() && verdict.warnings.is_empty();
    let mut accepted = None;
    for classifier in Classifier::all() {
        let mut single = SinglePass::with_classifier(classifier);
        let fast = rules.clean_version(&mut single, line);
        if let Some(version) = fast {
            assert!(
                clean && verdict.version == Some(version),
                "the single pass ({}) accepts a line the tape path judges {:?}:\n{}",
                classifier.name(),
                verdict,
                String::from_utf8_lossy(line)
            );
        }
        // Every classifier gives the same answer.
        assert!(
            accepted.is_none_or(|a| a == fast.is_some()),
            "classifiers disagree"
        );
        accepted = Some(fast.is_some());
    }
    (clean, accepted.unwrap_or(false))
}

fn gen_lines(seed: u64, version: u32, invalid_rate: f64, count: usize) -> Vec<Vec<u8>> {
    let mut generator = Generator::new(GenOptions {
        seed,
        version,
        invalid_rate,
        ..GenOptions::default()
    });
    (0..count)
        .map(|_| {
            let mut line = Vec::new();
            generator.next_line(&mut line);
            line
        })
        .collect()
}

#[test]
fn accepts_what_the_tape_path_finds_clean_and_nothing_else() {
    let options = RuleOptions::default();
    for version in [1, 2] {
        let (mut clean, mut accepted) = (0, 0);
        for line in gen_lines(5, version, 0.3, 3000) {
            let (c, a) = compare(&options, &line);
            clean += usize::from(c);
            accepted += usize::from(a);
            if c && !a {
                eprintln!("declined: {}", String::from_utf8_lossy(&line));
            }
        }
        assert!(clean > 1500, "{clean}");
        assert_eq!(
            accepted, clean,
            "version {version}: accepted {accepted} of {clean} clean lines"
        );
    }
}
