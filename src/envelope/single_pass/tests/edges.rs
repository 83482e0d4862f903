//! Hand-made edge cases around the limits the single pass checks itself: nesting depth 127 to
//! 131 in every place an unknown value may be, `message` and `stack` around their limits with
//! and without the truncation marker, duplicate keys spelled differently and in objects of more
//! than 16 keys, a BOM and white space around and between tokens, escapes and tokens across
//! stage 1's 64-byte blocks, and attempt numbering.

use super::semantic::bases;
use super::tree::{containers, follow, J};
use super::Tally;
use crate::catalogue::{VALID_V1, VALID_V2};
use crate::envelope::formats::TRUNCATION_MARKER;
use crate::envelope::{RuleOptions, MESSAGE_LIMIT, STACK_LIMIT};
use crate::json::stage1::against_simd_json::same_as_simd_json;
use crate::json::MAX_DEPTH;

/// Compares every line and checks stage 1 against simd-json on it; returns the tally.
fn run(lines: impl IntoIterator<Item = String>) -> Tally {
    let mut tally = Tally::new(&RuleOptions::default());
    for line in lines {
        tally.add(line.as_bytes());
        same_as_simd_json(line.as_bytes());
    }
    tally
}

fn parse(text: &str) -> J {
    J::parse(text).expect("a base parses")
}

/// `n` levels of nesting in three shapes: arrays, objects, both in turn.
fn nested(n: usize) -> [String; 3] {
    let arrays = format!("{}{}", "[".repeat(n), "]".repeat(n));
    let objects = format!("{}1{}", "{\"a\":".repeat(n), "}".repeat(n));
    let mut mixed = String::new();
    for i in 0..n {
        mixed.push_str(if i % 2 == 0 { "[" } else { "{\"k\":" });
    }
    mixed.push_str("null");
    for i in (0..n).rev() {
        mixed.push(if i % 2 == 0 { ']' } else { '}' });
    }
    [arrays, objects, mixed]
}

#[test]
fn nesting_around_the_depth_limit_everywhere() {
    let bases = bases();
    let (v1_deep, v2_cancelled, v2_claim) = (&bases[3], &bases[5], &bases[6]);
    // (base, where the value goes, the depth of its container).
    type Place = fn(&mut J, J);
    let places: [(&str, Place, usize); 8] = [
        (
            v1_deep,
            |t, v| {
                t.set("x_deep", v);
            },
            1,
        ),
        (
            v1_deep,
            |t, v| {
                t.set("origin", v);
            },
            1,
        ),
        (
            v1_deep,
            |t, v| {
                let attempt = t.get_mut("attempts").unwrap().item_mut(0).unwrap();
                attempt.set("x_deep", v);
            },
            3,
        ),
        (
            v1_deep,
            |t, v| {
                let attempt = t.get_mut("attempts").unwrap().item_mut(0).unwrap();
                attempt.set("duration_ms", v);
            },
            3,
        ),
        (
            v1_deep,
            |t, v| {
                let attempt = t.get_mut("attempts").unwrap().item_mut(0).unwrap();
                attempt.get_mut("error").unwrap().set("detail", v);
            },
            4,
        ),
        (
            v2_cancelled,
            |t, v| {
                t.get_mut("origin").unwrap().set("x", v);
            },
            2,
        ),
        (
            v2_claim,
            |t, v| {
                t.get_mut("payload_ref").unwrap().set("x", v);
            },
            2,
        ),
        (
            v2_cancelled,
            |t, v| {
                let attempt = t.get_mut("attempts").unwrap().item_mut(0).unwrap();
                attempt.set("x", v);
            },
            3,
        ),
    ];
    let mut lines = Vec::new();
    for (base, place, container) in places {
        for total in MAX_DEPTH - 2..=MAX_DEPTH + 3 {
            for value in nested(total - container) {
                let mut tree = parse(base);
                place(&mut tree, J::Raw(value));
                lines.push(tree.text());
            }
        }
    }
    let tally = run(lines);
    // At depth 126 to 128 the lines are fine (those with a deep `origin` or `duration_ms`
    // only in version 1, as here).
    tally.assert_share("nesting around the limit", 60, 1.0);
}

#[test]
fn message_and_stack_around_their_limits() {
    let mut lines = Vec::new();
    for (field, limit) in [("message", MESSAGE_LIMIT), ("stack", STACK_LIMIT)] {
        let mut texts = Vec::new();
        for len in limit - 4..=limit + 1 {
            let x = "x".repeat(len);
            texts.push(x.clone());
            texts.push(format!("{x}{TRUNCATION_MARKER}"));
            texts.push(format!("{x}\\u2026[truncated]"));
            texts.push(format!("{x}{TRUNCATION_MARKER}{TRUNCATION_MARKER}"));
            texts.push(format!("{x}…[truncated"));
            texts.push(format!("{}\\u0078{TRUNCATION_MARKER}", "x".repeat(len - 1)));
            texts.push(format!("{}\\u0078", "x".repeat(len - 1)));
            texts.push(format!("{}\\n", "x".repeat(len - 1)));
        }
        // Cut before a character of 2, 3 and 4 bytes: the kept part is limit-3 to limit bytes.
        for ch in ["é", "€", "😀"] {
            for pad in 0..5 {
                let whole = ch.repeat((limit - pad) / ch.len());
                let kept = format!("{whole}{}", "x".repeat(limit - pad - whole.len()));
                texts.push(format!("{kept}{TRUNCATION_MARKER}"));
                texts.push(format!("{kept}{ch}"));
                texts.push(kept);
            }
        }
        for base in [VALID_V1, VALID_V2] {
            for text in &texts {
                let mut tree = parse(base);
                let attempt = tree.get_mut("attempts").unwrap().item_mut(0).unwrap();
                let error = attempt.get_mut("error").unwrap();
                error.set_raw(field, &format!("\"{text}\""));
                lines.push(tree.text());
            }
        }
    }
    run(lines).assert_share("message and stack around their limits", 40, 0.6);
}

/// The other spelling of a key: `\u` escapes for all its characters.
fn escaped(key: &str) -> String {
    key.chars()
        .map(|c| format!("\\u{:04x}", u32::from(c)))
        .collect()
}

#[test]
fn duplicate_keys_spelled_differently_and_in_large_objects() {
    let mut lines = Vec::new();
    for base in bases() {
        let tree = parse(&base);
        // Each member of each object again, under an escaped spelling of its key, before and
        // after the original.
        for path in containers(&tree) {
            let J::Obj(members) = follow(&mut tree.clone(), &path).clone() else {
                continue;
            };
            for (key, value) in members {
                if key.contains('\\') {
                    continue;
                }
                for front in [false, true] {
                    let mut copy = tree.clone();
                    if let J::Obj(m) = follow(&mut copy, &path) {
                        let member = (escaped(&key), value.clone());
                        if front {
                            m.insert(0, member);
                        } else {
                            m.push(member);
                        }
                    }
                    lines.push(copy.text());
                }
            }
        }
    }
    // Objects of 17 to 40 keys (stage 1's sorted comparison), with a duplicate at the ends,
    // in the middle, and spelled with an escape.
    for n in [16, 17, 18, 40] {
        let keys: Vec<String> = (0..n).map(|i| format!("k{:02}", n - i)).collect();
        let object = |extra: Option<(usize, String)>| {
            let mut members: Vec<String> = keys.iter().map(|k| format!("\"{k}\":\"v\"")).collect();
            if let Some((at, key)) = extra {
                members.insert(at, format!("\"{key}\":\"w\""));
            }
            format!("{{{}}}", members.join(","))
        };
        let mut values = vec![object(None)];
        for (at, copy_of) in [(0, n - 1), (n, 0), (n / 2, n / 3), (n, n - 1)] {
            values.push(object(Some((at, keys[copy_of].clone()))));
            values.push(object(Some((at, escaped(&keys[copy_of])))));
            values.push(object(Some((at, format!("{}_", keys[copy_of])))));
        }
        for value in values {
            for base in [VALID_V1, VALID_V2] {
                let mut tree = parse(base);
                tree.set_raw("headers", &value);
                lines.push(tree.text());
                let mut tree = parse(base);
                tree.set_raw("x_object", &value);
                lines.push(tree.text());
                // The top level itself, past 16 keys.
                let mut tree = parse(base);
                if let (J::Obj(top), J::Obj(extra)) = (&mut tree, parse(&value)) {
                    top.extend(extra);
                }
                lines.push(tree.text());
            }
        }
    }
    run(lines).assert_share("duplicate keys", 50, 0.5);
}

#[test]
fn bom_and_white_space_around_and_between_tokens() {
    let mut lines = Vec::new();
    for base in bases() {
        for prefix in [
            "", "\u{feff}", " ", "\t", "\r", "\n", " \t\r\n", "\u{0}", "x",
        ] {
            for suffix in [
                "", " ", "\t", "\r", "\r\n", "\n", "\u{feff}", "\u{0}", "x", "}", ",", "{}",
            ] {
                if prefix.is_empty() && suffix.is_empty() {
                    continue;
                }
                lines.push(format!("{prefix}{base}{suffix}"));
            }
        }
        // White space after every structural byte outside strings.
        for white in [" ", "\t", "\r", "\n", " \r\n\t", "\u{a0}", "\u{b}", "\u{c}"] {
            let mut spaced = String::new();
            let mut in_string = false;
            let mut escaped = false;
            for c in base.chars() {
                spaced.push(c);
                if in_string {
                    in_string = escaped || c != '"';
                    escaped = !escaped && c == '\\';
                } else if c == '"' {
                    in_string = true;
                } else if "{}[]:,".contains(c) {
                    spaced.push_str(white);
                }
            }
            lines.push(spaced);
        }
    }
    run(lines).assert_share("white space", 50, 0.95);
}

#[test]
fn escapes_strings_and_tokens_across_block_boundaries() {
    const PATTERNS: &[&str] = &[
        "\\\\",
        "\\\"",
        "\\\\\\\"",
        "\\\\\\\\",
        "\\/",
        "\\u00e9",
        "\\u00E9",
        "\\ud83d\\ude00",
        "\\ud83d\\ude0",
        "\\ud83d",
        "\\ude00",
        "\\ude00\\ud83d",
        "\\u12",
        "\\x",
        "\u{1f}",
        "\u{7f}",
        "é",
        "😀",
        "\\",
    ];
    let mut lines = Vec::new();
    for shift in 0..140 {
        let pad = "p".repeat(shift);
        for pattern in PATTERNS {
            // In a value and in a key of an unknown member, and in a message.
            lines.push(VALID_V2.replacen('{', &format!("{{\"x\":\"{pad}{pattern}\","), 1));
            lines.push(VALID_V2.replacen('{', &format!("{{\"{pad}{pattern}\":1,"), 1));
            lines.push(VALID_V1.replace("\"boom\"", &format!("\"{pad}{pattern}\"")));
        }
        // Numbers and literals cut by a block boundary, and lines that end at every offset.
        for token in ["-12.5e+3", "true", "false", "null", "0", "tru", "1.", "-"] {
            lines.push(VALID_V1.replacen('{', &format!("{{\"{pad}\":{token},"), 1));
            let open = &VALID_V2[..VALID_V2.len() - 1];
            lines.push(format!("{open},\"{pad}\":{token}}}"));
        }
    }
    run(lines).assert_share("block boundaries", 1000, 0.5);
}

#[test]
fn attempt_numbering_and_history() {
    let at = |s: usize| format!("\"2024-05-01T12:{:02}:{:02}.000Z\"", s / 60, s % 60);
    let sequences: &[&[u64]] = &[
        &[1],
        &[2],
        &[0],
        &[1, 2],
        &[1, 3],
        &[1, 1],
        &[1, 2, 1],
        &[1, 2, 1, 2],
        &[1, 1, 1],
        &[1, 2, 3, 4, 5, 6],
        &[1, 2, 2],
        &[1, 4294967295],
    ];
    let mut lines = Vec::new();
    for version in [1, 2] {
        for seq in sequences {
            for redrive in 0..3 {
                for order in ["forward", "backward", "same"] {
                    let attempts: Vec<String> = seq
                        .iter()
                        .enumerate()
                        .map(|(i, no)| {
                            let start = match order {
                                "forward" => 10 * i + 1,
                                "backward" => 10 * (seq.len() - i),
                                _ => 1,
                            };
                            let duration = if version == 2 { ",\"duration_ms\":1000" } else { "" };
                            format!(
                                r#"{{"attempt_no":{no},"started_at":{},"finished_at":{}{duration},"outcome":"RETRYABLE_FAILURE"}}"#,
                                at(start),
                                at(start + 1)
                            )
                        })
                        .collect();
                    let mut tree = parse(if version == 1 { VALID_V1 } else { VALID_V2 });
                    tree.set_raw("attempts", &format!("[{}]", attempts.join(",")));
                    tree.set_raw("redrive_count", &redrive.to_string());
                    tree.set_raw("attempt_count", &seq.len().to_string());
                    lines.push(tree.text());
                }
            }
        }
    }
    run(lines).assert_share("attempt numbering", 20, 1.0);
}

/// Every order of `items`, each once (Heap's algorithm).
fn permutations<T: Clone>(items: &[T]) -> Vec<Vec<T>> {
    fn heap<T: Clone>(k: usize, items: &mut Vec<T>, out: &mut Vec<Vec<T>>) {
        if k <= 1 {
            out.push(items.clone());
            return;
        }
        for i in 0..k {
            heap(k - 1, items, out);
            let j = if k.is_multiple_of(2) { i } else { 0 };
            items.swap(j, k - 1);
        }
    }
    let mut out = Vec::new();
    heap(items.len(), &mut items.to_vec(), &mut out);
    out
}

#[test]
fn attempt_members_in_every_order_missing_doubled_unknown_and_escaped() {
    // The walk reads an attempt's members in any order: every order of the six, a member
    // missing, doubled, unknown or spelled with an escape, as the only attempt and as the
    // second one (after one in the usual order, and before the rest of the envelope). Kept
    // from a try at reading the usual order first (measured no faster), which it guarded.
    let members = |no: u32, second: u32| {
        vec![
            format!(r#""attempt_no":{no}"#),
            format!(r#""started_at":"2024-05-01T12:00:{second:02}.000Z""#),
            format!(r#""finished_at":"2024-05-01T12:00:{second:02}.250Z""#),
            r#""duration_ms":250"#.to_owned(),
            r#""outcome":"PERMANENT_FAILURE""#.to_owned(),
            r#""error":{"type":"java.lang.IllegalStateException","message":"boom","x":[1]}"#
                .to_owned(),
        ]
    };
    let object = |members: &[String]| format!("{{{}}}", members.join(","));
    // The variants, and apart those with a key spelled with an escape: the tape path finds
    // them clean and the single pass leaves every escaped key to it (declines them).
    let variants = |no: u32, second: u32| {
        let usual = members(no, second);
        let mut out: Vec<String> = permutations(&usual).iter().map(|m| object(m)).collect();
        let mut spelled = Vec::new();
        for i in 0..usual.len() {
            let mut dropped = usual.clone();
            dropped.remove(i);
            out.push(object(&dropped));
            let mut doubled = usual.clone();
            doubled.insert(i + 1, usual[i].clone());
            out.push(object(&doubled));
            doubled = usual.clone();
            doubled.push(usual[i].clone());
            out.push(object(&doubled));
            let mut escaped = usual.clone();
            escaped[i] = escaped[i]
                .replacen('_', "\\u005f", 1)
                .replacen('t', "\\u0074", 1);
            spelled.push(object(&escaped));
        }
        for i in 0..=usual.len() {
            let mut unknown = usual.clone();
            unknown.insert(i, r#""attempt_host":"w-1""#.to_owned());
            out.push(object(&unknown));
        }
        (out, spelled)
    };
    let first = object(&members(1, 1));
    let (mut lines, mut escaped) = (Vec::new(), Vec::new());
    for base in [VALID_V1, VALID_V2] {
        let (alone, alone_escaped) = variants(1, 1);
        let (second, second_escaped) = variants(2, 5);
        for (attempts, into) in [(alone, &mut lines), (alone_escaped, &mut escaped)] {
            for attempt in attempts {
                let mut tree = parse(base);
                tree.set_raw("attempts", &format!("[{attempt}]"));
                into.push(tree.text());
            }
        }
        for (attempts, into) in [(second, &mut lines), (second_escaped, &mut escaped)] {
            for attempt in attempts {
                let mut tree = parse(base);
                tree.set_raw("attempts", &format!("[{first},{attempt}]"));
                tree.set_raw("attempt_count", "2");
                into.push(tree.text());
            }
        }
    }
    // Every order of the six members is clean, in both places and both versions, and accepted.
    run(lines).assert_share("attempt members", 4 * 720, 1.0);
    // No false accept among the escaped (`run` panics on one); the tape path judges them.
    let escaped = run(escaped);
    assert_eq!((escaped.clean, escaped.accepted), (escaped.lines, 0));
}
