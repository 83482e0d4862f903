//! The storage plugins' compliance kit (docs/plugins.md): the round-trip fixtures a plugin must
//! store and give back, and the comparison that says what it lost.
//!
//! A storage plugin may take an envelope apart into native structures (columns, hashes,
//! documents), but what it reads back must be the envelope it was given: `read(write(e)) == e`,
//! unknown members included. The kit holds the fixtures that find the usual losses
//! ([`fixtures`]), compares one envelope given back with the one sent ([`Comparer`]) and a
//! store's whole output with the set sent ([`judge`]).
//!
//! - `fixtures.rs`: the fixture set, each fixture with the loss it is there to find;
//! - `compare.rs`: the two equalities (the contract's JSON value, or the same bytes) and the
//!   differences, each with a JSON pointer and a class.
//!
//! ```
//! use rdq_envelope::compliance::{fixtures, judge, Equality};
//!
//! // A store that keeps every line as it was given passes, in any order.
//! let set = fixtures();
//! let mut stored: Vec<u8> = Vec::new();
//! for fixture in set.iter().rev() {
//!     stored.extend_from_slice(&fixture.line);
//!     stored.push(b'\n');
//! }
//! let report = judge(&set, &stored, Equality::Exact);
//! assert!(report.passed());
//! ```

mod compare;
pub mod fixtures;

use std::collections::HashMap;

use crate::envelope::{Checker, EnvelopeRules, RuleOptions};

pub use compare::{
    excerpt, Class, Comparer, Difference, Differences, Equality, NotAnObject, DIFFERENCES_KEPT,
    EXCERPT_BYTES,
};
pub use fixtures::{fixtures, Fixture};

/// What a store gave back, judged against the set it was given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Judgement {
    /// One result per fixture sent, in the set's order.
    pub fixtures: Vec<FixtureResult>,
    /// The lines given back that match no fixture: an id not sent, an id given back again,
    /// a line that is not a JSON object with a string `id`.
    pub strays: Vec<Stray>,
}

impl Judgement {
    /// Whether every fixture came back equal and nothing else came back.
    pub fn passed(&self) -> bool {
        self.strays.is_empty() && self.fixtures.iter().all(FixtureResult::passed)
    }

    /// How many fixtures did not come back equal.
    pub fn failed_fixtures(&self) -> usize {
        self.fixtures.iter().filter(|f| !f.passed()).count()
    }

    /// The number of differences of each class, strays included, in [`Class::ALL`]'s order
    /// (classes with none left out).
    pub fn by_class(&self) -> Vec<(Class, usize)> {
        let mut counts: HashMap<Class, usize> = HashMap::new();
        for result in &self.fixtures {
            if result.missing {
                *counts.entry(Class::EnvelopeMissing).or_default() += 1;
            }
            for difference in &result.differences.kept {
                *counts.entry(difference.class).or_default() += 1;
            }
        }
        for stray in &self.strays {
            *counts.entry(stray.class).or_default() += 1;
        }
        Class::ALL
            .iter()
            .filter_map(|class| counts.get(class).map(|&n| (*class, n)))
            .collect()
    }
}

/// How one fixture came back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixtureResult {
    /// The fixture's name.
    pub name: &'static str,
    /// The fixture's `id`.
    pub id: String,
    /// The store did not give it back.
    pub missing: bool,
    /// The 1-based line of the read command's output that held it (the first, if several).
    pub line: Option<usize>,
    /// What differs, when it came back.
    pub differences: Differences,
}

impl FixtureResult {
    /// Whether it came back, equal.
    pub fn passed(&self) -> bool {
        !self.missing && self.differences.is_empty()
    }
}

/// A line given back that matches no fixture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stray {
    /// Its 1-based line in the read command's output.
    pub line: usize,
    /// [`Class::EnvelopeExtra`], [`Class::Duplicate`] or [`Class::Unreadable`].
    pub class: Class,
    /// Its `id`, when it has a string one.
    pub id: Option<String>,
    /// Why it matches none, in words (what the JSON layer said, for an unreadable line).
    pub reason: String,
    /// The start of the line.
    pub excerpt: String,
}

/// Judges a store's output (`found`: JSON Lines, any order; blank lines and a final line
/// without LF as in any JSON Lines input) against the fixtures it was given: each fixture
/// matched by `id` and compared under `equality`.
///
/// An envelope given back that breaks a rule is reported too ([`Class::InvalidEnvelope`], one
/// difference per broken rule): the checker sees what the store would hand its next reader. Its
/// size is not held to a queue's limit, only to the reader's cap: a store may spell a line
/// longer, and the value is what is compared.
pub fn judge(sent: &[Fixture], found: &[u8], equality: Equality) -> Judgement {
    let mut comparer = Comparer::new();
    let mut checker = validity_checker();
    // Each fixture's id, from its line (the set's ids are unique; a fixture whose line has
    // none is reported missing rather than trusted).
    let mut by_id: HashMap<String, usize> = HashMap::with_capacity(sent.len());
    let mut results: Vec<FixtureResult> = Vec::with_capacity(sent.len());
    for (at, fixture) in sent.iter().enumerate() {
        let id = comparer
            .id_of(&fixture.line)
            .ok()
            .flatten()
            .unwrap_or_default();
        by_id.entry(id.clone()).or_insert(at);
        results.push(FixtureResult {
            name: fixture.name,
            id,
            missing: true,
            line: None,
            differences: Differences::default(),
        });
    }
    let mut strays = Vec::new();
    for (number, line) in lines(found) {
        let stray = |class, id: Option<String>, reason: String| Stray {
            line: number,
            class,
            id,
            reason,
            excerpt: excerpt(line),
        };
        let id = match comparer.id_of(line) {
            Err(not_an_object) => {
                strays.push(stray(Class::Unreadable, None, not_an_object.to_string()));
                continue;
            }
            Ok(None) => {
                let reason = "no string member \"id\" to match it by".to_string();
                strays.push(stray(Class::Unreadable, None, reason));
                continue;
            }
            Ok(Some(id)) => id,
        };
        let Some(&at) = by_id.get(&id) else {
            strays.push(stray(
                Class::EnvelopeExtra,
                Some(id),
                "no fixture has this id".into(),
            ));
            continue;
        };
        let result = &mut results[at];
        if let Some(first) = result.line {
            let reason = format!("given back again (first on line {first})");
            strays.push(stray(Class::Duplicate, Some(id), reason));
            continue;
        }
        result.missing = false;
        result.line = Some(number);
        match comparer.compare(&sent[at].line, line, equality) {
            Ok(mut differences) => {
                if line != sent[at].line.as_slice() {
                    for error in &checker.check(line).verdict().errors {
                        differences.push(Difference {
                            pointer: error.path.to_string(),
                            class: Class::InvalidEnvelope,
                            sent: None,
                            found: Some(format!("{}: {}", error.code.as_str(), error.message)),
                        });
                    }
                }
                result.differences = differences
            }
            // `id_of` parsed the line as an object; only a fixture that is not one lands here.
            Err(not_an_object) => strays.push(stray(
                Class::Unreadable,
                Some(id),
                not_an_object.to_string(),
            )),
        }
    }
    Judgement {
        fixtures: results,
        strays,
    }
}

/// The checker of what comes back: every rule, the size against the reader's cap only.
fn validity_checker() -> Checker {
    let mut options = RuleOptions::default();
    options.max_envelope_bytes = crate::framing::DEFAULT_MAX_LINE_BYTES as u64;
    options.warnings = false;
    let rules =
        EnvelopeRules::new(options).expect("the default options with a larger limit are valid");
    Checker::new(rules)
}

/// The non-blank lines of JSON Lines text with their 1-based numbers: LF or CR LF ends a line,
/// a final line may lack it.
fn lines(text: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    let text = text.strip_suffix(b"\n").unwrap_or(text);
    text.split(|&b| b == b'\n')
        .enumerate()
        .map(|(i, line)| (i + 1, line.strip_suffix(b"\r").unwrap_or(line)))
        .filter(|(_, line)| !line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A valid envelope whose id ends in `id`, with `extra` members.
    fn line(id: &str, extra: &str) -> Vec<u8> {
        format!(
            r#"{{"envelope_version":1,"id":"01ARZ3NDEKTSV4RRFFQ69G5FA{id}","queue":"q","handler_ref":"h","payload":"","payload_content_type":"text/plain","headers":{{}},"status":"PENDING","attempt_count":0,"redrive_count":0,"next_attempt_at":"2024-01-01T00:00:00.000Z","lease_expires_at":null,"created_at":"2024-01-01T00:00:00.000Z","attempts":[]{extra}}}"#
        )
        .into_bytes()
    }

    fn set() -> Vec<Fixture> {
        ["A", "B", "C"]
            .into_iter()
            .zip(["a", "b", "c"])
            .map(|(id, name)| Fixture {
                name,
                purpose: "test",
                line: line(id, r#","x":1.0"#),
            })
            .collect()
    }

    #[test]
    fn a_store_is_judged_whole() {
        let set = set();
        let mut found = Vec::new();
        for (id, extra) in [
            ("C", r#","x":1"#),
            ("A", r#","x":1.0"#),
            ("A", ""),
            ("Z", ""),
        ] {
            found.extend_from_slice(&line(id, extra));
            found.extend_from_slice(b"\r\n\n");
        }
        found.extend_from_slice(b"garbage\n{\"id\":7}");
        let judgement = judge(&set, &found, Equality::Value);
        assert!(!judgement.passed());
        let [a, b, c] = &judgement.fixtures[..] else {
            panic!()
        };
        assert!(a.passed() && a.line == Some(3));
        assert!(b.missing && !b.passed());
        assert!(c.passed() && c.line == Some(1));
        let strays: Vec<(usize, Class)> =
            judgement.strays.iter().map(|s| (s.line, s.class)).collect();
        assert_eq!(
            strays,
            [
                (5, Class::Duplicate),
                (7, Class::EnvelopeExtra),
                (9, Class::Unreadable),
                (10, Class::Unreadable)
            ]
        );
        assert_eq!(judgement.failed_fixtures(), 1);
        assert_eq!(
            judgement.by_class(),
            [
                (Class::EnvelopeMissing, 1),
                (Class::EnvelopeExtra, 1),
                (Class::Duplicate, 1),
                (Class::Unreadable, 2)
            ]
        );
        // `1.0` given back as `1`: the same value, another spelling.
        let exact = judge(&set, &found, Equality::Exact);
        assert_eq!(
            exact.fixtures[2].differences.kept[0].class,
            Class::NumberSpelling
        );
    }

    #[test]
    fn an_equal_value_that_breaks_a_rule_is_reported() {
        let set = set();
        let mut found = Vec::new();
        for id in ["A", "B", "C"] {
            let line = String::from_utf8(line(id, r#","x":1.0"#)).unwrap();
            let line = line.replace(r#""attempt_count":0"#, r#""attempt_count":0.0"#);
            found.extend_from_slice(line.as_bytes());
            found.push(b'\n');
        }
        let judgement = judge(&set, &found, Equality::Value);
        let d = &judgement.fixtures[0].differences.kept;
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(
            (d[0].pointer.as_str(), d[0].class),
            ("/attempt_count", Class::InvalidEnvelope)
        );
        assert!(d[0].found.as_deref().unwrap().starts_with("WRONG_TYPE"));
    }

    #[test]
    fn an_empty_store_misses_everything() {
        let judgement = judge(&set(), b"", Equality::Value);
        assert!(judgement.fixtures.iter().all(|f| f.missing));
        assert_eq!(judgement.by_class(), [(Class::EnvelopeMissing, 3)]);
    }
}
