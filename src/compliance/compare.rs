//! What a store gave back against what it was given: the contract's equality (the same JSON
//! value) or the same bytes, and every difference with its JSON pointer and class.
//!
//! The walk goes over both lines' parsed trees at once, with each value's text at hand (the
//! parser's node spans), so that a number is compared as an exact decimal from its spelling
//! (`1e2` is `100`, `1.0` is `1`; `9007199254740993` is not `9007199254740992`, which a store
//! that reads numbers as doubles gives back), and `--exact` can say which spelling changed.

use std::fmt;

use crate::diagnostic::Diagnostic;
use crate::envelope::owned::known;
use crate::json::{JsonParser, Value, ValueKind};

/// Which equality a round trip is held to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Equality {
    /// The contract's: the same JSON value. Member order is free, numbers are equal when they
    /// are the same exact decimal (`1e2` and `100`, `-0` and `0`), strings when they are the
    /// same after unescaping, and every member, unknown ones included, must be there.
    #[default]
    Value,
    /// The same bytes. A store that passes this gives back the very line it was given; the
    /// differences name what moved (member order, a number's or a string's spelling, white
    /// space) as well as what changed.
    Exact,
}

/// What kind of difference: the report's words for what the store did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Class {
    /// A member the contract knows is not there.
    MemberLost,
    /// A member the contract does not know (at any level, or inside `detail` or another
    /// unknown member) is not there: the loss the kit exists to find.
    UnknownMemberLost,
    /// A member that was not sent is there.
    MemberAdded,
    /// An array has fewer elements (an attempt lost, say).
    ElementLost,
    /// An array has more elements.
    ElementAdded,
    /// A string or a boolean has another value.
    ValueChanged,
    /// A number is another decimal (rounded through a double, truncated, ...).
    NumberChanged,
    /// A value has another JSON type (a number given back as a string, `null` for absent).
    TypeChanged,
    /// `--exact`: the same number spelled otherwise (`1e2` given back as `100`).
    NumberSpelling,
    /// `--exact`: the same string (or member name) escaped otherwise (`\u00e9` as `é`).
    StringSpelling,
    /// `--exact`: the same members in another order.
    MemberOrder,
    /// `--exact`: the same tokens with other white space between them.
    WhiteSpace,
    /// A fixture the store did not give back.
    EnvelopeMissing,
    /// An envelope the store gave back that was not sent.
    EnvelopeExtra,
    /// The same `id` given back more than once.
    Duplicate,
    /// A line of the read command's output that is not a JSON object with a string `id`.
    Unreadable,
    /// An envelope given back that breaks a rule of the contract (its code is the difference's
    /// `found`): a value may be equal and still not valid there, as `3.0` is to `3` in an
    /// integer member.
    InvalidEnvelope,
}

impl Class {
    /// Every class, in the report's order.
    pub const ALL: [Class; 17] = [
        Class::MemberLost,
        Class::UnknownMemberLost,
        Class::MemberAdded,
        Class::ElementLost,
        Class::ElementAdded,
        Class::ValueChanged,
        Class::NumberChanged,
        Class::TypeChanged,
        Class::NumberSpelling,
        Class::StringSpelling,
        Class::MemberOrder,
        Class::WhiteSpace,
        Class::EnvelopeMissing,
        Class::EnvelopeExtra,
        Class::Duplicate,
        Class::Unreadable,
        Class::InvalidEnvelope,
    ];

    /// The class in words, as the human report prints it (`unknown member lost`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Class::MemberLost => "member lost",
            Class::UnknownMemberLost => "unknown member lost",
            Class::MemberAdded => "member added",
            Class::ElementLost => "element lost",
            Class::ElementAdded => "element added",
            Class::ValueChanged => "value changed",
            Class::NumberChanged => "number changed",
            Class::TypeChanged => "type changed",
            Class::NumberSpelling => "number spelling changed",
            Class::StringSpelling => "string spelling changed",
            Class::MemberOrder => "member order changed",
            Class::WhiteSpace => "white space changed",
            Class::EnvelopeMissing => "envelope missing",
            Class::EnvelopeExtra => "envelope extra",
            Class::Duplicate => "duplicate",
            Class::Unreadable => "unreadable line",
            Class::InvalidEnvelope => "invalid envelope",
        }
    }

    /// The class as a name for machines (`unknown_member_lost`): the JSON report's `class`.
    pub const fn name(self) -> &'static str {
        match self {
            Class::MemberLost => "member_lost",
            Class::UnknownMemberLost => "unknown_member_lost",
            Class::MemberAdded => "member_added",
            Class::ElementLost => "element_lost",
            Class::ElementAdded => "element_added",
            Class::ValueChanged => "value_changed",
            Class::NumberChanged => "number_changed",
            Class::TypeChanged => "type_changed",
            Class::NumberSpelling => "number_spelling_changed",
            Class::StringSpelling => "string_spelling_changed",
            Class::MemberOrder => "member_order_changed",
            Class::WhiteSpace => "white_space_changed",
            Class::EnvelopeMissing => "envelope_missing",
            Class::EnvelopeExtra => "envelope_extra",
            Class::Duplicate => "duplicate",
            Class::Unreadable => "unreadable_line",
            Class::InvalidEnvelope => "invalid_envelope",
        }
    }

    /// Whether only [`Equality::Exact`] finds it: the value is the same.
    pub const fn is_spelling(self) -> bool {
        matches!(
            self,
            Class::NumberSpelling | Class::StringSpelling | Class::MemberOrder | Class::WhiteSpace
        )
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One difference: where (an RFC 6901 pointer into the envelope, `""` for the whole line), what
/// kind, and excerpts of the two texts there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// The pointer of the value that differs (of the object, for [`Class::MemberOrder`]).
    pub pointer: String,
    /// What kind of difference.
    pub class: Class,
    /// The text sent there, cut to [`EXCERPT_BYTES`] (`None` where nothing was).
    pub sent: Option<String>,
    /// The text given back there, cut likewise (`None` where nothing is).
    pub found: Option<String>,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() {
            "<line>"
        } else {
            &self.pointer
        };
        write!(f, "{pointer}: {}", self.class)?;
        match (&self.sent, &self.found) {
            (Some(sent), Some(found)) => write!(f, ": sent {sent}, found {found}"),
            (Some(sent), None) => write!(f, ": sent {sent}"),
            (None, Some(found)) => write!(f, ": found {found}"),
            (None, None) => Ok(()),
        }
    }
}

/// How much of a value's text a difference quotes.
pub const EXCERPT_BYTES: usize = 80;

/// How many differences one envelope's comparison keeps; the rest are only counted (a store
/// that mangles every one of a thousand headers needs one line per kind, not a thousand).
pub const DIFFERENCES_KEPT: usize = 64;

/// What one comparison found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Differences {
    /// The first [`DIFFERENCES_KEPT`] differences, in the sent line's order.
    pub kept: Vec<Difference>,
    /// How many there were in all.
    pub total: usize,
}

impl Differences {
    /// Whether the two were equal.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    pub(crate) fn push(&mut self, difference: Difference) {
        self.total += 1;
        if self.kept.len() < DIFFERENCES_KEPT {
            self.kept.push(difference);
        }
    }
}

/// A line given back that is not JSON, or not an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotAnObject {
    /// What the JSON layer said (`MALFORMED_JSON`, `DUPLICATE_KEY` at `/x`, ...).
    pub diagnostics: Vec<Diagnostic>,
}

impl fmt::Display for NotAnObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, diagnostic) in self.diagnostics.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{}: {}", diagnostic.code.as_str(), diagnostic.message)?;
            if !diagnostic.path.is_empty() {
                write!(f, " (at {})", diagnostic.path)?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for NotAnObject {}

/// Compares envelopes as sent with envelopes as given back. Holds its parsers and buffers, so
/// that a run of comparisons allocates only for what it reports.
///
/// ```
/// use rdq_envelope::compliance::{Class, Comparer, Equality};
///
/// let sent = br#"{"envelope_version":1,"n":1e2,"x":{"a":1,"b":[true]}}"#;
/// let back = br#"{"x":{"b":[true]},"envelope_version":1,"n":100}"#;
/// let mut comparer = Comparer::new();
/// let found = comparer.compare(sent, back, Equality::Value)?;
/// assert_eq!(found.total, 1);
/// assert_eq!(found.kept[0].pointer, "/x/a");
/// assert_eq!(found.kept[0].class, Class::UnknownMemberLost);
///
/// let found = comparer.compare(sent, back, Equality::Exact)?;
/// let classes: Vec<Class> = found.kept.iter().map(|d| d.class).collect();
/// assert_eq!(classes, [Class::MemberOrder, Class::NumberSpelling, Class::UnknownMemberLost]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct Comparer {
    sent_parser: JsonParser,
    found_parser: JsonParser,
    sent_spans: Vec<(usize, usize)>,
    found_spans: Vec<(usize, usize)>,
    diagnostics: Vec<Diagnostic>,
    pointer: String,
}

impl Comparer {
    /// A comparer with empty buffers.
    pub fn new() -> Comparer {
        Comparer::default()
    }

    /// Checks that `found` is one JSON object, as [`Comparer::compare`] needs, and returns its
    /// `id` member when that is a string.
    pub fn id_of(&mut self, found: &[u8]) -> Result<Option<String>, NotAnObject> {
        self.diagnostics.clear();
        match self.found_parser.parse(found, &mut self.diagnostics) {
            Some(doc) => Ok(doc
                .root()
                .get("id")
                .and_then(|v| v.as_str().map(String::from))),
            None => Err(NotAnObject {
                diagnostics: std::mem::take(&mut self.diagnostics),
            }),
        }
    }

    /// Compares the line given back (`found`) with the line sent (`sent`, a valid envelope):
    /// every difference `equality` sees. An error when `found` is not one JSON object (or
    /// `sent` is not: a caller's mistake, reported alike).
    pub fn compare(
        &mut self,
        sent: &[u8],
        found: &[u8],
        equality: Equality,
    ) -> Result<Differences, NotAnObject> {
        let mut differences = Differences::default();
        if equality == Equality::Exact && sent == found {
            return Ok(differences);
        }
        let Comparer {
            sent_parser,
            found_parser,
            sent_spans,
            found_spans,
            diagnostics,
            pointer,
        } = self;
        diagnostics.clear();
        let not_an_object = |diagnostics: &mut Vec<Diagnostic>| NotAnObject {
            diagnostics: std::mem::take(diagnostics),
        };
        let Some(sent_doc) = sent_parser.parse(sent, diagnostics) else {
            return Err(not_an_object(diagnostics));
        };
        let Some(found_doc) = found_parser.parse(found, diagnostics) else {
            return Err(not_an_object(diagnostics));
        };
        sent_doc.node_spans(sent, sent_spans);
        found_doc.node_spans(found, found_spans);
        let version = sent_doc
            .root()
            .get("envelope_version")
            .and_then(|v| v.as_integer())
            .and_then(|v| u32::try_from(v).ok())
            .unwrap_or(1);
        pointer.clear();
        let mut walk = Walk {
            sent: Side {
                line: sent,
                spans: sent_spans,
            },
            found: Side {
                line: found,
                spans: found_spans,
            },
            equality,
            pointer,
            differences: &mut differences,
        };
        walk.value(sent_doc.root(), found_doc.root(), Level::Top(version));
        if equality == Equality::Exact && differences.is_empty() {
            // Every token the same, in the same order: what is left is the white space,
            // quoted from a little before the first byte that differs.
            let parted = sent.iter().zip(found).take_while(|(a, b)| a == b).count();
            let mut from = parted.saturating_sub(16);
            while from > 0 && sent.get(from).is_some_and(|b| b & 0xC0 == 0x80) {
                from -= 1;
            }
            let quoted = |line: &[u8]| match from {
                0 => excerpt(line),
                _ => format!("…{}", excerpt(&line[from..])),
            };
            differences.push(Difference {
                pointer: String::new(),
                class: Class::WhiteSpace,
                sent: Some(quoted(sent)),
                found: Some(quoted(found)),
            });
        }
        Ok(differences)
    }
}

/// One line and where its values lie in it.
struct Side<'a> {
    line: &'a [u8],
    spans: &'a [(usize, usize)],
}

impl<'a> Side<'a> {
    fn text(&self, value: &Value<'_>) -> &'a [u8] {
        self.spans
            .get(value.tape_index())
            .and_then(|&(from, to)| self.line.get(from..to))
            .unwrap_or_default()
    }

    /// The text of the key before the member value `value` (its quoted spelling).
    fn key_text(&self, value: &Value<'_>) -> &'a [u8] {
        value
            .tape_index()
            .checked_sub(1)
            .and_then(|at| self.spans.get(at))
            .and_then(|&(from, to)| self.line.get(from..to))
            .unwrap_or_default()
    }
}

/// Which object of the contract a value is in: what a lost member is called, and where the
/// contract's own members end and the data it carries begins.
#[derive(Debug, Clone, Copy)]
enum Level {
    Top(u32),
    PayloadRef,
    Origin,
    Headers,
    Attempts(u32),
    Attempt(u32),
    Error,
    /// Inside an unknown member or `detail`: everything here is data the contract carries.
    Data,
}

impl Level {
    /// Whether `name` is a member the contract knows at this level.
    fn knows(self, name: &str) -> bool {
        match self {
            Level::Top(version) => known::top(version).contains(&name),
            Level::PayloadRef => known::PAYLOAD_REF.contains(&name),
            Level::Origin => known::ORIGIN.contains(&name),
            Level::Attempt(version) => known::attempt(version).contains(&name),
            Level::Error => known::ERROR.contains(&name),
            // Headers are the contract's, whatever their keys.
            Level::Headers => true,
            Level::Attempts(_) | Level::Data => false,
        }
    }

    /// The level of the member `name`'s value.
    fn member(self, name: &str) -> Level {
        if !self.knows(name) {
            return Level::Data;
        }
        match (self, name) {
            (Level::Top(_), "payload_ref") => Level::PayloadRef,
            (Level::Top(_), "origin") => Level::Origin,
            (Level::Top(_), "headers") => Level::Headers,
            (Level::Top(v), "attempts") => Level::Attempts(v),
            (Level::Attempt(_), "error") => Level::Error,
            // `detail` holds any JSON: its members are data like unknown ones.
            (Level::Error, "detail") => Level::Data,
            (level, _) => level,
        }
    }

    fn element(self) -> Level {
        match self {
            Level::Attempts(version) => Level::Attempt(version),
            _ => Level::Data,
        }
    }

    fn lost(self, name: &str) -> Class {
        match self.knows(name) {
            true => Class::MemberLost,
            false => Class::UnknownMemberLost,
        }
    }
}

struct Walk<'w> {
    sent: Side<'w>,
    found: Side<'w>,
    equality: Equality,
    pointer: &'w mut String,
    differences: &'w mut Differences,
}

impl Walk<'_> {
    fn report(&mut self, class: Class, sent: Option<&[u8]>, found: Option<&[u8]>) {
        self.differences.push(Difference {
            pointer: self.pointer.clone(),
            class,
            sent: sent.map(excerpt),
            found: found.map(excerpt),
        });
    }

    fn value(&mut self, sent: Value<'_>, found: Value<'_>, level: Level) {
        let (sent_text, found_text) = (self.sent.text(&sent), self.found.text(&found));
        if sent.kind() != found.kind() {
            return self.report(Class::TypeChanged, Some(sent_text), Some(found_text));
        }
        match sent.kind() {
            ValueKind::Object => self.object(sent, found, level),
            ValueKind::Array => self.array(sent, found, level),
            ValueKind::Number => match (Decimal::parse(sent_text), Decimal::parse(found_text)) {
                (Some(a), Some(b)) if a == b => {
                    self.spelling(Class::NumberSpelling, sent_text, found_text)
                }
                _ => self.report(Class::NumberChanged, Some(sent_text), Some(found_text)),
            },
            ValueKind::String => match sent.as_str() == found.as_str() {
                true => self.spelling(Class::StringSpelling, sent_text, found_text),
                false => self.report(Class::ValueChanged, Some(sent_text), Some(found_text)),
            },
            ValueKind::Bool | ValueKind::Null => {
                if sent_text != found_text {
                    self.report(Class::ValueChanged, Some(sent_text), Some(found_text));
                }
            }
        }
    }

    /// Under [`Equality::Exact`], the same value spelled otherwise.
    fn spelling(&mut self, class: Class, sent: &[u8], found: &[u8]) {
        if self.equality == Equality::Exact && sent != found {
            self.report(class, Some(sent), Some(found));
        }
    }

    fn object(&mut self, sent: Value<'_>, found: Value<'_>, level: Level) {
        let depth = self.pointer.len();
        // A store's object is matched by name: a linear search while objects are small, a
        // map of names for large ones (a thousand headers against a store's thousand).
        let found_members: Vec<(&str, Value<'_>)> = found.members().collect();
        let index: Option<std::collections::HashMap<&str, usize>> = (found_members.len() > 16)
            .then(|| {
                found_members
                    .iter()
                    .enumerate()
                    .map(|(i, (k, _))| (*k, i))
                    .collect()
            });
        let position = |name: &str| match &index {
            Some(index) => index.get(name).copied(),
            None => found_members.iter().position(|(k, _)| *k == name),
        };
        let mut seen = vec![false; found_members.len()];
        // Sent members' positions among the store's, to tell a reordering under `Exact`.
        let mut order = Vec::new();
        for (name, sent_value) in sent.members() {
            push_token(self.pointer, name);
            match position(name) {
                None => self.report(level.lost(name), Some(self.sent.text(&sent_value)), None),
                Some(at) => {
                    seen[at] = true;
                    order.push(at);
                    let found_value = found_members[at].1;
                    if self.equality == Equality::Exact {
                        let (a, b) = (
                            self.sent.key_text(&sent_value),
                            self.found.key_text(&found_value),
                        );
                        if a != b {
                            self.report(Class::StringSpelling, Some(a), Some(b));
                        }
                    }
                    self.value(sent_value, found_value, level.member(name));
                }
            }
            self.pointer.truncate(depth);
        }
        for (at, (name, found_value)) in found_members.iter().enumerate() {
            if !seen[at] {
                push_token(self.pointer, name);
                self.report(Class::MemberAdded, None, Some(self.found.text(found_value)));
                self.pointer.truncate(depth);
            }
        }
        if self.equality == Equality::Exact && order.windows(2).any(|w| w[0] > w[1]) {
            let sent_names: Vec<&str> = sent.members().map(|(k, _)| k).collect();
            let found_names: Vec<&str> = found_members.iter().map(|(k, _)| *k).collect();
            // Both orders from the first place they part: in a long object the excerpt
            // would otherwise show only the members that agree.
            let first = sent_names
                .iter()
                .zip(&found_names)
                .take_while(|(a, b)| a == b)
                .count();
            let names = |names: &[&str]| {
                let listed: Vec<String> = names[first..].iter().map(|k| format!("{k:?}")).collect();
                match first {
                    0 => listed.join(","),
                    _ => format!("…,{}", listed.join(",")),
                }
            };
            let (sent_order, found_order) = (names(&sent_names), names(&found_names));
            // Reported before the members' own differences: the object's pointer is theirs'
            // prefix, and the report reads top down.
            let first_of_this_object = self.differences.kept.iter().position(|d| {
                d.pointer.len() > depth && d.pointer.starts_with(self.pointer.as_str())
            });
            let difference = Difference {
                pointer: self.pointer.clone(),
                class: Class::MemberOrder,
                sent: Some(excerpt(sent_order.as_bytes())),
                found: Some(excerpt(found_order.as_bytes())),
            };
            self.differences.total += 1;
            match first_of_this_object {
                Some(at) => self.differences.kept.insert(at, difference),
                None => self.differences.kept.push(difference),
            }
            self.differences.kept.truncate(DIFFERENCES_KEPT);
        }
    }

    fn array(&mut self, sent: Value<'_>, found: Value<'_>, level: Level) {
        let depth = self.pointer.len();
        let mut found_elements = found.elements();
        for (i, sent_element) in sent.elements().enumerate() {
            push_index(self.pointer, i);
            match found_elements.next() {
                Some(found_element) => self.value(sent_element, found_element, level.element()),
                None => self.report(
                    Class::ElementLost,
                    Some(self.sent.text(&sent_element)),
                    None,
                ),
            }
            self.pointer.truncate(depth);
        }
        for (i, found_element) in found_elements.enumerate() {
            push_index(self.pointer, sent.len() + i);
            self.report(
                Class::ElementAdded,
                None,
                Some(self.found.text(&found_element)),
            );
            self.pointer.truncate(depth);
        }
    }
}

/// Appends `/name` to a JSON pointer, escaped as RFC 6901 says (`~` as `~0`, `/` as `~1`).
fn push_token(pointer: &mut String, name: &str) {
    pointer.push('/');
    for c in name.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

fn push_index(pointer: &mut String, index: usize) {
    use std::fmt::Write;
    let _ = write!(pointer, "/{index}");
}

/// A value's text for a report: up to [`EXCERPT_BYTES`], cut at a character boundary, with
/// `…` where it was cut; bytes that are not UTF-8, and control characters (JSON text may hold
/// DEL and the C1 controls raw, and a store's output anything: a terminal would obey them),
/// shown as U+FFFD.
pub fn excerpt(text: &[u8]) -> String {
    let text: String = String::from_utf8_lossy(text)
        .chars()
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .collect();
    if text.len() <= EXCERPT_BYTES {
        return text;
    }
    let mut cut = EXCERPT_BYTES;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}… ({} bytes)", &text[..cut], text.len())
}

/// A JSON number as an exact decimal: its sign, its significant digits (no leading or trailing
/// zeros), and the power of ten of its last digit. Zero has no digits and no sign (`-0` is
/// `0`). Built from the spelling, so nothing is rounded: `1e400` and `1e-400` are exact.
#[derive(Debug, PartialEq, Eq)]
struct Decimal<'a> {
    negative: bool,
    /// The significant digits, as written but for the point: `int` then `frac`, zeros at
    /// either end dropped.
    digits: Vec<u8>,
    /// The exponent of the last digit.
    exponent: Exponent<'a>,
}

/// An exponent: small ones as numbers; one of more than 30 digits (which no two different
/// spellings of a number can tell apart by arithmetic here) by its digits and the shift the
/// point made, compared as they are.
#[derive(Debug, PartialEq, Eq)]
enum Exponent<'a> {
    Small(i128),
    Large {
        negative: bool,
        digits: &'a [u8],
        shift: i128,
    },
}

impl<'a> Decimal<'a> {
    fn parse(text: &'a [u8]) -> Option<Decimal<'a>> {
        let (negative, rest) = match text.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, text),
        };
        let mantissa_end = rest
            .iter()
            .position(|&b| b == b'e' || b == b'E')
            .unwrap_or(rest.len());
        let (mantissa, exponent) = rest.split_at(mantissa_end);
        let (int, frac) = match mantissa.iter().position(|&b| b == b'.') {
            Some(at) => (&mantissa[..at], &mantissa[at + 1..]),
            None => (mantissa, &[][..]),
        };
        if int.is_empty() || !int.iter().chain(frac).all(u8::is_ascii_digit) {
            return None;
        }
        let (exp_negative, exp_digits) = match exponent.get(1..) {
            None => (false, &[][..]),
            Some([b'-', digits @ ..]) => (true, digits),
            Some([b'+', digits @ ..]) => (false, digits),
            Some(digits) => (false, digits),
        };
        if !exponent.is_empty()
            && (exp_digits.is_empty() || !exp_digits.iter().all(u8::is_ascii_digit))
        {
            return None;
        }
        let mut digits: Vec<u8> = int.iter().chain(frac).copied().collect();
        let leading = digits.iter().take_while(|&&d| d == b'0').count();
        digits.drain(..leading);
        let trailing = digits.iter().rev().take_while(|&&d| d == b'0').count();
        digits.truncate(digits.len() - trailing);
        if digits.is_empty() {
            return Some(Decimal {
                negative: false,
                digits,
                exponent: Exponent::Small(0),
            });
        }
        // The lengths are those of a line in memory: far inside i128.
        let shift = trailing as i128 - frac.len() as i128;
        let exp_digits = &exp_digits[exp_digits.iter().take_while(|&&d| d == b'0').count()..];
        let exponent = match exp_digits.len() {
            0..=30 => {
                let magnitude = exp_digits
                    .iter()
                    .fold(0i128, |n, &d| n * 10 + i128::from(d - b'0'));
                Exponent::Small(if exp_negative { -magnitude } else { magnitude } + shift)
            }
            _ => Exponent::Large {
                negative: exp_negative,
                digits: exp_digits,
                shift,
            },
        };
        Some(Decimal {
            negative,
            digits,
            exponent,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decimal(text: &str) -> Decimal<'_> {
        Decimal::parse(text.as_bytes()).unwrap()
    }

    #[test]
    fn numbers_are_equal_as_exact_decimals() {
        for (a, b) in [
            ("1e2", "100"),
            ("1E+2", "100.0"),
            ("-0", "0"),
            ("-0.0", "0e5"),
            ("0.1", "1e-1"),
            ("1.0", "1"),
            (
                "123456789012345678901234567890.5",
                "1234567890123456789012345678905e-1",
            ),
            ("1e400", "10e399"),
            ("1e-400", "0.1e-399"),
            ("1e0000000000000000000000000000000000002", "100"),
        ] {
            assert_eq!(decimal(a), decimal(b), "{a} = {b}");
        }
        for (a, b) in [
            ("9007199254740993", "9007199254740992"),
            ("0.30000000000000004", "0.3"),
            ("1", "-1"),
            ("12345678901234567890", "12345678901234567000"),
            ("1e400", "1e401"),
            (
                "1e1000000000000000000000000000000000000",
                "1e1000000000000000000000000000000000001",
            ),
        ] {
            assert_ne!(decimal(a), decimal(b), "{a} != {b}");
        }
    }

    fn classes(sent: &str, found: &str, equality: Equality) -> Vec<(String, Class)> {
        Comparer::new()
            .compare(sent.as_bytes(), found.as_bytes(), equality)
            .unwrap()
            .kept
            .into_iter()
            .map(|d| (d.pointer, d.class))
            .collect()
    }

    fn at(pointer: &str, class: Class) -> (String, Class) {
        (pointer.to_string(), class)
    }

    const V2: &str = r#"{"envelope_version":2,"headers":{"A":"1","a":"2"},"origin":{"source":"x","o":1},"payload_ref":{"uri":"s3://b/k","z":null},"attempts":[{"attempt_no":1,"u":[1,{"k":"v"}],"error":{"type":"T","detail":{"d":1e2},"w":true}}],"top":"x"}"#;

    #[test]
    fn the_same_value_in_another_spelling_and_order_is_equal() {
        let found = r#"{"top":"\u0078","attempts":[{"error":{"w":true,"detail":{"d":100},"type":"T"},"u":[1,{"k":"v"}],"attempt_no":1}],"envelope_version":2,"payload_ref":{"z":null,"uri":"s3:\/\/b/k"},"origin":{"o":1.0,"source":"x"},"headers":{"a":"2","A":"1"}}"#;
        assert_eq!(classes(V2, found, Equality::Value), []);
        assert_eq!(classes(V2, V2, Equality::Exact), []);
        let exact = classes(V2, found, Equality::Exact);
        assert!(exact.contains(&at("", Class::MemberOrder)));
        assert!(exact.contains(&at("/top", Class::StringSpelling)));
        assert!(exact.contains(&at("/attempts/0/error/detail/d", Class::NumberSpelling)));
        assert!(exact.contains(&at("/origin/o", Class::NumberSpelling)));
        assert!(exact.contains(&at("/payload_ref/uri", Class::StringSpelling)));
        assert!(exact.iter().all(|(_, class)| class.is_spelling()));
    }

    #[test]
    fn a_lost_member_is_named_known_or_unknown_at_every_level() {
        let found = r#"{"envelope_version":2,"headers":{"A":"1"},"origin":{"o":1},"payload_ref":{"uri":"s3://b/k"},"attempts":[{"attempt_no":1,"u":[1,{}],"error":{"type":"T","detail":{}}}]}"#;
        assert_eq!(
            classes(V2, found, Equality::Value),
            [
                at("/headers/a", Class::MemberLost),
                at("/origin/source", Class::MemberLost),
                at("/payload_ref/z", Class::UnknownMemberLost),
                at("/attempts/0/u/1/k", Class::UnknownMemberLost),
                at("/attempts/0/error/detail/d", Class::UnknownMemberLost),
                at("/attempts/0/error/w", Class::UnknownMemberLost),
                at("/top", Class::UnknownMemberLost),
            ]
        );
    }

    #[test]
    fn changes_are_told_apart() {
        let sent = r#"{"envelope_version":1,"n":9007199254740993,"s":"é","t":1,"a":[1,2],"b":[1],"z":null,"k":true}"#;
        let found = r#"{"envelope_version":1,"n":9007199254740992,"s":"e","t":"1","a":[1],"b":[1,2],"z":false,"k":true,"new":0}"#;
        assert_eq!(
            classes(sent, found, Equality::Value),
            [
                at("/n", Class::NumberChanged),
                at("/s", Class::ValueChanged),
                at("/t", Class::TypeChanged),
                at("/a/1", Class::ElementLost),
                at("/b/1", Class::ElementAdded),
                at("/z", Class::TypeChanged),
                at("/new", Class::MemberAdded),
            ]
        );
    }

    #[test]
    fn white_space_is_what_is_left_under_exact() {
        let sent = r#"{"envelope_version":1,"a":[1,2]}"#;
        let found = r#"{"envelope_version": 1, "a": [1, 2]}"#;
        assert_eq!(classes(sent, found, Equality::Value), []);
        assert_eq!(
            classes(sent, found, Equality::Exact),
            [at("", Class::WhiteSpace)]
        );
    }

    #[test]
    fn pointers_escape_names_and_keys_spelled_otherwise_are_named() {
        let sent = r#"{"envelope_version":1,"a/b":{"~":1},"\u00e9":2}"#;
        let found = r#"{"envelope_version":1,"a/b":{"~":2},"é":2}"#;
        assert_eq!(
            classes(sent, found, Equality::Value),
            [at("/a~1b/~0", Class::NumberChanged)]
        );
        assert!(classes(sent, found, Equality::Exact).contains(&at("/é", Class::StringSpelling)));
    }

    #[test]
    fn many_differences_are_counted_and_some_kept() {
        let members = |value: &str| {
            let list: Vec<String> = (0..1000).map(|i| format!(r#""m{i}":{value}"#)).collect();
            format!(r#"{{"envelope_version":1,{}}}"#, list.join(","))
        };
        let found = Comparer::new()
            .compare(
                members("1").as_bytes(),
                members("2").as_bytes(),
                Equality::Value,
            )
            .unwrap();
        assert_eq!(found.total, 1000);
        assert_eq!(found.kept.len(), DIFFERENCES_KEPT);
    }

    #[test]
    fn what_is_not_an_object_is_said() {
        let mut comparer = Comparer::new();
        let sent = br#"{"envelope_version":1}"#;
        for garbage in [&b"not json"[..], b"[1]", br#"{"a":1,"a":2}"#, b"\xff"] {
            let error = comparer
                .compare(sent, garbage, Equality::Value)
                .unwrap_err();
            assert!(!error.diagnostics.is_empty(), "{garbage:?}");
            assert!(comparer.id_of(garbage).is_err());
        }
        assert_eq!(
            comparer.id_of(br#"{"id":"X"}"#).unwrap().as_deref(),
            Some("X")
        );
        assert_eq!(comparer.id_of(br#"{"id":1}"#).unwrap(), None);
    }

    #[test]
    fn excerpts_are_cut_at_a_character() {
        let long = "é".repeat(100);
        let cut = excerpt(long.as_bytes());
        assert!(cut.ends_with("… (200 bytes)"), "{cut}");
        assert_eq!(excerpt(b"\xffx"), "\u{fffd}x");
        assert_eq!(
            excerpt("a\u{1b}[31m\u{9b}\u{7f}".as_bytes()),
            "a\u{fffd}[31m\u{fffd}\u{fffd}"
        );
    }
}
