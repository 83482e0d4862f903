//! `gen` is held to its promise: every line it calls valid validates, every defect it mixes in
//! draws the code it meant, the same options give the same bytes, and the lines look like a DLQ
//! export (mostly DEAD, about 3 KB on average).

use rdq_envelope::generate::{GenOptions, Generator};
use rdq_envelope::{EnvelopeRules, ErrorCode, JsonParser, RuleOptions, Verdict};

fn lines(options: GenOptions, count: usize) -> Vec<(Vec<u8>, Option<ErrorCode>)> {
    let mut generator = Generator::new(options);
    (0..count)
        .map(|_| {
            let mut line = Vec::new();
            let meant = generator.next_line(&mut line);
            (line, meant)
        })
        .collect()
}

/// Checks every line of `count` from `options` against what gen meant; returns the codes drawn.
fn judge_as_meant(options: GenOptions, count: usize) -> std::collections::BTreeSet<&'static str> {
    let rules = EnvelopeRules::new(RuleOptions::default()).unwrap();
    let mut parser = JsonParser::new();
    let mut verdict = Verdict::default();
    let what = format!("{options:?}");
    let mut drawn = std::collections::BTreeSet::new();
    for (index, (line, meant)) in lines(options, count).into_iter().enumerate() {
        rules.check_line(&mut parser, &line, &mut verdict);
        let shown = String::from_utf8_lossy(&line[..line.len().min(300)]).into_owned();
        match meant {
            None => assert!(
                verdict.is_valid(),
                "{what} line {index} should be valid: {:?}\n{shown}",
                verdict.errors
            ),
            Some(code) => {
                assert!(
                    verdict.has_error(code),
                    "{what} line {index} should draw {code:?}, drew {:?}\n{shown}",
                    verdict.errors
                );
                drawn.insert(code.as_str());
            }
        }
        assert!(line.last() != Some(&b'\n') && !line.contains(&b'\n'));
    }
    drawn
}

#[test]
fn every_line_is_judged_as_gen_meant() {
    for version in [1, 2] {
        for seed in [0, 1, 42] {
            let mut options = GenOptions::default();
            options.seed = seed;
            options.version = version;
            options.invalid_rate = 0.3;
            let drawn = judge_as_meant(options, 1500);
            // 450 defects over about twenty families: each family shows up.
            assert!(drawn.len() >= 18, "v{version} seed {seed}: only {drawn:?}");
        }
    }
}

/// Stacks padded up to the limit leave every line as gen meant it, defects included.
#[test]
fn padded_stacks_keep_lines_as_meant() {
    for version in [1, 2] {
        let mut options = GenOptions::default();
        options.version = version;
        options.invalid_rate = 0.3;
        options.stack_bytes = Some(rdq_envelope::envelope::STACK_LIMIT);
        let drawn = judge_as_meant(options, 300);
        assert!(drawn.len() >= 12, "v{version}: only {drawn:?}");
    }
}

#[test]
fn the_same_options_give_the_same_bytes() {
    let mut options = GenOptions::default();
    options.seed = 7;
    options.version = 1;
    options.invalid_rate = 0.1;
    assert_eq!(lines(options.clone(), 200), lines(options.clone(), 200));
    let mut other = options.clone();
    other.seed = 8;
    assert_ne!(lines(options, 20), lines(other, 20));
}

#[test]
fn lines_are_dlq_shaped() {
    let generated = lines(GenOptions::default(), 2000);
    let total: usize = generated.iter().map(|(line, _)| line.len()).sum();
    let mean = total / generated.len();
    assert!((2500..4000).contains(&mean), "mean line {mean} bytes");
    let dead = generated
        .iter()
        .filter(|(line, _)| {
            line.windows(15)
                .any(|window| window == b"\"status\":\"DEAD\"")
        })
        .count();
    assert!(dead * 100 / generated.len() >= 75, "{dead} DEAD of 2000");
    assert!(generated.iter().all(|(_, meant)| meant.is_none()));
}

#[test]
fn v1_and_v2_differ_where_the_versions_do() {
    let v1 = lines(
        {
            let mut o = GenOptions::default();
            o.version = 1;
            o
        },
        50,
    );
    let v2 = lines(GenOptions::default(), 50);
    let has = |line: &[u8], needle: &[u8]| line.windows(needle.len()).any(|w| w == needle);
    assert!(v1.iter().all(|(line, _)| !has(line, b"\"origin\"")
        && !has(line, b"duration_ms")
        && has(line, b"\"rdq.source\"")));
    assert!(v2
        .iter()
        .all(|(line, _)| has(line, b"\"origin\":{") && !has(line, b"\"rdq.source\"")));
}
