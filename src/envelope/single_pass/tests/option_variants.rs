//! The same lines under other rule options: warnings off, a required version, size limits (a
//! global one and a queue's own, just below, at and just above the line's length), and the
//! submit subset.

use super::semantic::{alternatives, bases};
use super::tree::{mutated_texts, J};
use super::{gen_lines, Tally};
use crate::catalogue::{VALID_V1, VALID_V2};
use crate::envelope::RuleOptions;

/// Lines of every kind: the bases, some of their mutations, lines with only a warning, gen
/// lines clean and with defects, and submitted tasks.
fn lines() -> Vec<String> {
    let mut lines = bases();
    for base in bases() {
        // Without the mutations that add escapes (the single pass leaves most to the tape path).
        let backslashes = |s: &str| s.matches('\\').count();
        let tree = J::parse(&base).expect("a base parses");
        lines.extend(
            mutated_texts(&tree, &alternatives, 5)
                .into_iter()
                .filter(|text| backslashes(text) == backslashes(&base)),
        );
    }
    // Only a warning: the ULID's time far from created_at, created_at after the first start.
    lines.push(VALID_V1.replace("01HWT0D7G0", "01HWT0D7G2"));
    lines.push(VALID_V2.replace("01HWT0D7G0", "01ARZ3NDEK"));
    lines.push(VALID_V2.replace(
        "\"created_at\":\"2024-05-01T12:00:00.000Z\"",
        "\"created_at\":\"2024-05-01T12:00:01.001Z\"",
    ));
    for version in [1, 2] {
        for (seed, rate) in [(31, 0.0), (32, 1.0)] {
            for line in gen_lines(seed, version, rate, 40) {
                lines.push(String::from_utf8_lossy(&line).into_owned());
            }
        }
    }
    lines.push(
        r#"{"queue":"mail","handler_ref":"send","payload":"e30=","payload_content_type":"application/json","headers":{"traceparent":"00-abc"}}"#
            .to_owned(),
    );
    lines.push(r#"{"queue":"mail","handler_ref":"send","payload":"e30=","payload_content_type":"application/json"}"#.to_owned());
    lines
}

fn options(edit: impl FnOnce(&mut RuleOptions)) -> RuleOptions {
    let mut options = RuleOptions::default();
    edit(&mut options);
    options
}

#[test]
fn the_same_lines_under_other_options() {
    let lines = lines();
    let cases = [
        ("warnings off", options(|o| o.warnings = false)),
        (
            "version 1 required",
            options(|o| o.require_version = Some(1)),
        ),
        (
            "version 2 required",
            options(|o| o.require_version = Some(2)),
        ),
        (
            "version 2 required, warnings off",
            options(|o| {
                o.require_version = Some(2);
                o.warnings = false;
            }),
        ),
        ("a 600-byte limit", options(|o| o.max_envelope_bytes = 600)),
        ("a 0-byte limit", options(|o| o.max_envelope_bytes = 0)),
        (
            "a 600-byte limit, billing.invoices 1 MiB",
            options(|o| {
                o.max_envelope_bytes = 600;
                o.queue_limits.insert("billing.invoices".into(), 1 << 20);
            }),
        ),
        (
            "billing.invoices 600 bytes",
            options(|o| {
                o.queue_limits.insert("billing.invoices".into(), 600);
                o.queue_limits.insert("q".into(), 2 << 20);
            }),
        ),
        ("submit", options(|o| o.submit = true)),
        (
            "submit, warnings off",
            options(|o| {
                o.submit = true;
                o.warnings = false;
            }),
        ),
    ];
    for (what, options) in cases {
        let mut tally = Tally::new(&options);
        for line in &lines {
            tally.add(line.as_bytes());
        }
        // Nothing is clean under a 0-byte limit; the submit subset is left to the tape path.
        if options.max_envelope_bytes == 0 {
            tally.assert_share(what, 0, 0.0);
            assert_eq!(tally.clean, 0);
        } else if options.submit {
            tally.assert_share(what, 1, 0.0);
        } else {
            tally.assert_share(what, 10, 0.8);
        }
    }
}

#[test]
fn size_limits_just_below_at_and_above_the_line() {
    let mut lines = bases();
    lines.extend(
        gen_lines(33, 1, 0.0, 10)
            .into_iter()
            .chain(gen_lines(34, 2, 0.0, 10))
            .map(|l| String::from_utf8(l).unwrap()),
    );
    let (mut clean, mut accepted) = (0, 0);
    for line in &lines {
        let J::Raw(queue) = J::parse(line).unwrap().get_mut("queue").unwrap().clone() else {
            panic!("a string queue");
        };
        let queue = queue.trim_matches('"').to_owned();
        let len = line.len() as u64;
        for limit in [len - 1, len, len + 1] {
            let cases = [
                options(|o| o.max_envelope_bytes = limit),
                options(|o| {
                    o.queue_limits.insert(queue.clone(), limit);
                }),
                options(|o| {
                    o.max_envelope_bytes = 10;
                    o.queue_limits.insert(queue.clone(), limit);
                }),
                options(|o| {
                    o.max_envelope_bytes = limit;
                    o.queue_limits.insert(format!("{queue}x"), u64::MAX);
                }),
                options(|o| {
                    o.queue_limits.insert(format!("{queue}x"), limit);
                }),
            ];
            for options in cases {
                let (c, a) = super::compare(&options, line.as_bytes());
                clean += usize::from(c);
                accepted += usize::from(a);
            }
        }
    }
    assert!(clean > 100, "{clean}");
    assert_eq!(accepted, clean);
}
