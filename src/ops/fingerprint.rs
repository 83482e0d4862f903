//! Error fingerprints, version 1 (docs/cli.md#fingerprints): an envelope's last error, its
//! `type` plus its `message` with the variable parts replaced, hashed to 12 hex characters, so
//! that failures that differ only in IDs, addresses and numbers fall into one group.
//!
//! The normaliser is one left-to-right scan over the message's bytes: it runs on every line
//! of files of gigabytes, so it allocates nothing (the caller owns the output buffer) and
//! compiles no pattern. At each place where a token can start it tries the classes in the
//! order the definition gives (UUID, ULID, e-mail, IPv4, hex, number): the first that matches
//! wins, which is what replacing them in that order gives on every text where they overlap.
//!
//! Changing anything here changes fingerprints that people keep in scripts and tickets: bump
//! [`FINGERPRINT_VERSION`] and say so in docs/cli.md.

use std::fmt;
use std::hash::BuildHasher;

use sha2::{Digest, Sha256};

use super::fields::Text;

/// The version of the algorithm below, as docs/cli.md#fingerprints describes it.
pub const FINGERPRINT_VERSION: u32 = 1;

/// An error fingerprint: the first 6 bytes of the SHA-256 of `type + "\n" + template`, shown
/// as 12 lower-case hex characters.
///
/// ```
/// use rdq_envelope::ops::Fingerprint;
/// let a = Fingerprint::of("java.io.IOException", "read 4096 bytes from 10.0.0.7:5432");
/// let b = Fingerprint::of("java.io.IOException", "read 12 bytes from  192.168.1.20:6543 ");
/// assert_eq!(a, b);
/// assert_eq!(a.to_string().len(), 12);
/// assert_eq!(Fingerprint::parse(&a.to_string()), Some(a));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fingerprint([u8; 6]);

impl Fingerprint {
    /// The fingerprint of an error `type` and its (decoded) `message`.
    pub fn of(error_type: &str, message: &str) -> Self {
        let mut template = String::new();
        normalise(message, &mut template);
        Fingerprint::of_template(error_type, &template)
    }

    /// The fingerprint of an error `type` and a message already normalised with
    /// [`normalise`].
    pub fn of_template(error_type: &str, template: &str) -> Self {
        let mut hash = Sha256::new();
        hash.update(error_type.as_bytes());
        hash.update(b"\n");
        hash.update(template.as_bytes());
        let digest = hash.finalize();
        let mut bytes = [0; 6];
        bytes.copy_from_slice(&digest[..6]);
        Fingerprint(bytes)
    }

    /// A fingerprint written as 12 hex characters (either case), as `filter --fingerprint`
    /// takes it.
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.as_bytes();
        if text.len() != 12 {
            return None;
        }
        let mut bytes = [0; 6];
        for (byte, pair) in bytes.iter_mut().zip(text.chunks_exact(2)) {
            let digit = |c: u8| (c as char).to_digit(16);
            *byte = u8::try_from(digit(pair[0])? * 16 + digit(pair[1])?).ok()?;
        }
        Some(Fingerprint(bytes))
    }

    /// The 12 hex characters, without allocating.
    pub fn hex(&self) -> [u8; 12] {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut out = [0; 12];
        for (i, byte) in self.0.iter().enumerate() {
            out[2 * i] = DIGITS[usize::from(byte >> 4)];
            out[2 * i + 1] = DIGITS[usize::from(byte & 15)];
        }
        out
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The digits are ASCII.
        f.write_str(std::str::from_utf8(&self.hex()).unwrap_or_default())
    }
}

/// How many messages a [`Fingerprinter`] remembers, and the longest it remembers: DLQ exports
/// repeat the same messages, and the cache stays small whatever the messages are.
const CACHE_SLOTS: usize = 64;
const CACHE_MESSAGE_BYTES: usize = 512;

/// Fingerprints errors for one worker, remembering the last few messages (direct-mapped by a
/// hash of the type and the message's text): a message seen again costs a hash and a compare
/// instead of a scan and a SHA-256. Allocates only while its slots grow to their largest.
/// A second level: messages that differ only in their variable parts (an ID, a number) miss
/// the first level, but normalise to a template seen before; remembering templates saves the
/// SHA-256, which measured at about a fifth of `stats --by fingerprint`'s instructions.
#[derive(Debug, Default, Clone)]
pub(crate) struct Fingerprinter {
    slots: Vec<Slot>,
    templates: Vec<Known>,
    decoded: String,
    /// The template of a message too long to remember.
    template: String,
}

/// A template remembered with its type and fingerprint.
#[derive(Debug, Default, Clone)]
struct Known {
    kind: String,
    template: String,
    fingerprint: Option<Fingerprint>,
}

/// The fingerprint of `template`, from `known` when it holds it, else computed and
/// remembered there (direct-mapped, as the messages are).
fn template_fingerprint(known: &mut Vec<Known>, kind: &str, template: &str) -> Fingerprint {
    if template.len() > CACHE_MESSAGE_BYTES {
        return Fingerprint::of_template(kind, template);
    }
    if known.is_empty() {
        known.resize_with(CACHE_SLOTS, Known::default);
    }
    let hash = foldhash::fast::FixedState::with_seed(23).hash_one((kind, template));
    let slot = &mut known[hash as usize % CACHE_SLOTS];
    match slot.fingerprint {
        Some(fingerprint) if slot.kind == kind && slot.template == template => fingerprint,
        _ => {
            let fingerprint = Fingerprint::of_template(kind, template);
            slot.kind.clear();
            slot.kind.push_str(kind);
            slot.template.clear();
            slot.template.push_str(template);
            slot.fingerprint = Some(fingerprint);
            fingerprint
        }
    }
}

#[derive(Debug, Default, Clone)]
struct Slot {
    kind: String,
    /// `message` is a JSON string's content with its escapes, not text.
    escaped: bool,
    message: String,
    fingerprint: Option<Fingerprint>,
    template: String,
}

impl Fingerprinter {
    /// The fingerprint and template of an error of type `kind` and message `message`.
    pub(crate) fn fingerprint(&mut self, kind: &str, message: Text<'_>) -> (Fingerprint, &str) {
        let (escaped, raw) = match message {
            Text::Plain(text) => (false, text),
            Text::Escaped(raw) => (true, raw),
        };
        if raw.len() > CACHE_MESSAGE_BYTES {
            normalise(message.decode(&mut self.decoded), &mut self.template);
            return (
                template_fingerprint(&mut self.templates, kind, &self.template),
                &self.template,
            );
        }
        if self.slots.is_empty() {
            self.slots.resize_with(CACHE_SLOTS, Slot::default);
        }
        let hash = foldhash::fast::FixedState::with_seed(19).hash_one((kind, escaped, raw));
        let slot = &mut self.slots[hash as usize % CACHE_SLOTS];
        let hit = slot.fingerprint.is_some()
            && slot.escaped == escaped
            && slot.kind == kind
            && slot.message == raw;
        if !hit {
            normalise(message.decode(&mut self.decoded), &mut slot.template);
            let fingerprint = template_fingerprint(&mut self.templates, kind, &slot.template);
            slot.fingerprint = Some(fingerprint);
            slot.kind.clear();
            slot.kind.push_str(kind);
            slot.message.clear();
            slot.message.push_str(raw);
            slot.escaped = escaped;
        }
        let fingerprint = slot.fingerprint.unwrap_or(Fingerprint([0; 6]));
        (fingerprint, &slot.template)
    }
}

/// Writes `message` normalised into `out` (emptied first): UUIDs become `<uuid>`, ULIDs
/// `<ulid>`, e-mail addresses `<email>`, IPv4 addresses with an optional port `<ip>`, runs of
/// 8 or more hex digits `<hex>`, decimal numbers `<n>`; every run of white space becomes one
/// space, and the ends are trimmed. Everything else, quotes and the text between them
/// included, is kept as it is. The exact boundaries are in docs/cli.md#fingerprints.
///
/// ```
/// use rdq_envelope::ops::normalise;
/// let mut out = String::new();
/// normalise("user 6f1c2a4e-98b1-4c9f-a1d2-0e5b7c3d9f10 not found\tin  'orders' after 2.5e3 ms", &mut out);
/// assert_eq!(out, "user <uuid> not found in 'orders' after <n> ms");
/// normalise("lease of 30000 ms expired (worker w-15)", &mut out);
/// assert_eq!(out, "lease of <n> ms expired (worker w-<n>)");
/// ```
pub fn normalise(message: &str, out: &mut String) {
    out.clear();
    let b = message.as_bytes();
    // E-mail addresses are looked for only in messages that have an `@` at all.
    let has_at = memchr::memchr(b'@', b).is_some();
    let mut space = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() || c == 0x0b {
            space = true;
            i += 1;
            continue;
        }
        if c >= 0x80 {
            // A character of several bytes: white space (U+00A0, U+3000, ...) or text.
            let ch = char_at(b, i).unwrap_or(' ');
            let len = ch.len_utf8();
            if ch.is_whitespace() {
                space = true;
            } else {
                push_space(out, &mut space);
                out.push_str(&message[i..i + len]);
            }
            i += len;
            continue;
        }
        let word = c.is_ascii_alphanumeric() || c == b'_';
        if word || matches!(c, b'+' | b'-' | b'.') {
            if let Some((end, placeholder)) = token(b, i, has_at) {
                push_space(out, &mut space);
                out.push_str(placeholder);
                i = end;
                continue;
            }
        }
        push_space(out, &mut space);
        if word {
            // Every token needs a character that is not a word's before it, so none starts
            // inside this word: the rest of its ASCII goes out as it is, in one copy.
            let end = run(b, i, |c| c.is_ascii_alphanumeric() || c == b'_');
            out.push_str(&message[i..end]);
            i = end;
        } else {
            out.push(char::from(c));
            i += 1;
        }
    }
}

/// The one space a run of white space becomes, unless the run led the message.
#[inline]
fn push_space(out: &mut String, space: &mut bool) {
    if std::mem::take(space) && !out.is_empty() {
        out.push(' ');
    }
}

/// A letter or digit of any script, or `_`: the characters of a word. A token starts only
/// where the character before it is not one of these, so `user42`, `utf8` and `Zoë9` stay.
fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The character before byte `i` (a character boundary of a `str`'s bytes).
fn before(b: &[u8], i: usize) -> Option<char> {
    let first = i.checked_sub(1)?;
    if b[first] < 0x80 {
        return Some(char::from(b[first]));
    }
    let start = (first.saturating_sub(3)..=first).find(|&s| b[s] & 0xC0 != 0x80)?;
    std::str::from_utf8(&b[start..i]).ok()?.chars().next_back()
}

/// Whether byte `i` ends a token: the end of the message, or a character that is not a word
/// character.
fn ends_word(b: &[u8], i: usize) -> bool {
    match b.get(i) {
        None => true,
        Some(&c) if c < 0x80 => !(c.is_ascii_alphanumeric() || c == b'_'),
        Some(_) => char_at(b, i).is_none_or(|c| !is_word(c)),
    }
}

/// The character at byte `i`, a character boundary of a `str`'s bytes.
fn char_at(b: &[u8], i: usize) -> Option<char> {
    let len = match *b.get(i)? {
        c if c < 0x80 => 1,
        c if c >= 0xF0 => 4,
        c if c >= 0xE0 => 3,
        _ => 2,
    };
    std::str::from_utf8(b.get(i..i + len)?).ok()?.chars().next()
}

/// The token that starts at byte `i`, if any: where it ends and what replaces it.
#[inline]
fn token(b: &[u8], i: usize, has_at: bool) -> Option<(usize, &'static str)> {
    let c = b[i];
    let starts = c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.');
    if !starts {
        return None;
    }
    let prev = before(b, i);
    let at_word = !prev.is_some_and(is_word);
    if at_word && c.is_ascii_hexdigit() {
        if let Some(end) = uuid(b, i) {
            return Some((end, "<uuid>"));
        }
    }
    if at_word && matches!(c, b'0'..=b'7') {
        if let Some(end) = ulid(b, i) {
            return Some((end, "<ulid>"));
        }
    }
    if has_at && !prev.is_some_and(|p| is_word(p) || p.is_ascii() && is_local(p as u8)) {
        if let Some(end) = email(b, i) {
            return Some((end, "<email>"));
        }
    }
    if at_word && prev != Some('.') && c.is_ascii_digit() {
        if let Some(end) = ipv4(b, i) {
            return Some((end, "<ip>"));
        }
    }
    if at_word && c.is_ascii_hexdigit() {
        if let Some(end) = hex(b, i) {
            return Some((end, "<hex>"));
        }
    }
    if at_word {
        if let Some(end) = number(b, i, prev) {
            return Some((end, "<n>"));
        }
    }
    None
}

/// The bytes `b[i..]` start with `n` bytes of which `pred` holds: the index after them.
fn run(b: &[u8], i: usize, pred: impl Fn(u8) -> bool) -> usize {
    i + b[i..].iter().take_while(|&&c| pred(c)).count()
}

/// `8-4-4-4-12` hex digits, either case, ending a word.
fn uuid(b: &[u8], i: usize) -> Option<usize> {
    let mut at = i;
    for (n, len) in [8, 4, 4, 4, 12].into_iter().enumerate() {
        if n > 0 {
            (b.get(at) == Some(&b'-')).then_some(())?;
            at += 1;
        }
        let end = run(b, at, |c| c.is_ascii_hexdigit());
        (end - at >= len).then_some(())?;
        at += len;
    }
    ends_word(b, at).then_some(at)
}

/// 26 characters of Crockford's base 32 (`I`, `L`, `O` and `U` left out), either case, the
/// first `0` to `7`, ending a word.
fn ulid(b: &[u8], i: usize) -> Option<usize> {
    let crockford = |c: u8| {
        c.is_ascii_digit()
            || c.is_ascii_alphabetic()
                && !matches!(c.to_ascii_uppercase(), b'I' | b'L' | b'O' | b'U')
    };
    let end = i + 26;
    (end <= b.len() && b[i..end].iter().all(|&c| crockford(c)) && ends_word(b, end)).then_some(end)
}

/// A byte of an e-mail address's local part.
fn is_local(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'%' | b'+' | b'-')
}

/// `local@domain`: a local part of letters, digits and `._%+-`; a domain of at least two
/// labels of letters, digits and `-`, the last all letters and at least two long.
fn email(b: &[u8], i: usize) -> Option<usize> {
    let at = run(b, i, is_local);
    (at > i && b.get(at) == Some(&b'@')).then_some(())?;
    let mut end = run(b, at + 1, |c| {
        c.is_ascii_alphanumeric() || c == b'.' || c == b'-'
    });
    // A sentence's full stop (or a dash) after the address is not part of it.
    while end > at + 1 && matches!(b[end - 1], b'.' | b'-') {
        end -= 1;
    }
    let domain = &b[at + 1..end];
    let last = domain.rsplit(|&c| c == b'.').next()?;
    let good = domain.contains(&b'.')
        && !domain.starts_with(b".")
        && !domain.windows(2).any(|w| w == b"..")
        && last.len() >= 2
        && last.iter().all(u8::is_ascii_alphabetic);
    (good && ends_word(b, end)).then_some(end)
}

/// Four decimal octets (0 to 255, at most 3 digits each) and an optional `:port` (1 to 65535),
/// not followed by a word character or another `.digit`.
fn ipv4(b: &[u8], i: usize) -> Option<usize> {
    let mut at = i;
    for n in 0..4 {
        if n > 0 {
            (b.get(at) == Some(&b'.')).then_some(())?;
            at += 1;
        }
        let end = run(b, at, |c| c.is_ascii_digit());
        let octet = b.get(at..end).filter(|d| (1..=3).contains(&d.len()))?;
        (decimal(octet)? <= 255).then_some(())?;
        at = end;
    }
    let followed_by_digit = |at: usize| b.get(at + 1).is_some_and(u8::is_ascii_digit);
    if !ends_word(b, at) || b.get(at) == Some(&b'.') && followed_by_digit(at) {
        return None;
    }
    if b.get(at) == Some(&b':') && followed_by_digit(at) {
        let end = run(b, at + 1, |c| c.is_ascii_digit());
        let port = &b[at + 1..end];
        if port.len() <= 5 && (1..=65535).contains(&decimal(port)?) && ends_word(b, end) {
            return Some(end);
        }
    }
    Some(at)
}

fn decimal(digits: &[u8]) -> Option<u32> {
    digits.iter().try_fold(0u32, |n, &d| {
        n.checked_mul(10)?.checked_add(u32::from(d - b'0'))
    })
}

/// 8 or more hex digits ending a word: after `0x` (or `0X`) any such run; without it, a run
/// that has a digit and a letter (`deadbeef` is a word, `12345678` a number).
fn hex(b: &[u8], i: usize) -> Option<usize> {
    let prefixed = b[i] == b'0' && matches!(b.get(i + 1), Some(b'x' | b'X'));
    let start = if prefixed { i + 2 } else { i };
    let end = run(b, start, |c| c.is_ascii_hexdigit());
    let digits = &b[start..end];
    let good = digits.len() >= 8
        && (prefixed
            || digits.iter().any(u8::is_ascii_digit) && digits.iter().any(u8::is_ascii_alphabetic));
    (good && ends_word(b, end)).then_some(end)
}

/// A decimal number: an optional sign, digits with any `.digits` groups after them (`1.5`,
/// and `1.5.2`, a version, as one), or `.digits`; then an optional exponent. A sign counts
/// only when no word is before it (`-5` but `a-5` is `a-<n>`); a number right after `word.`
/// is part of that word (`v1.5`). Letters may follow it (`30s`, `500ms` are `<n>s`, `<n>ms`).
fn number(b: &[u8], i: usize, prev: Option<char>) -> Option<usize> {
    let digit_at = |at: usize| b.get(at).is_some_and(u8::is_ascii_digit);
    // `x.5`, `v1.5`: the `.` joins the number to the word before it.
    let after_word_dot =
        |at: usize| at >= 2 && b[at - 1] == b'.' && before(b, at - 1).is_some_and(is_word);
    let mut at = i;
    if matches!(b[at], b'+' | b'-') {
        at += 1;
    }
    if b[at..].first() == Some(&b'.') {
        if prev.is_some_and(is_word) || !digit_at(at + 1) {
            return None;
        }
    } else if !digit_at(at) || at == i && after_word_dot(i) {
        return None;
    }
    at = run(b, at, |c| c.is_ascii_digit());
    while b.get(at) == Some(&b'.') && digit_at(at + 1) {
        at = run(b, at + 1, |c| c.is_ascii_digit());
    }
    if matches!(b.get(at), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(b.get(at + 1), Some(b'+' | b'-')));
        if digit_at(at + 1 + sign) {
            at = run(b, at + 1 + sign, |c| c.is_ascii_digit());
        }
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(message: &str) -> String {
        let mut out = String::from("left over");
        normalise(message, &mut out);
        out
    }

    #[test]
    fn each_class() {
        let cases = [
            // UUIDs, either case.
            (
                "id 123e4567-e89b-12d3-a456-426614174000 gone",
                "id <uuid> gone",
            ),
            ("ID=123E4567-E89B-12D3-A456-426614174000.", "ID=<uuid>."),
            // ULIDs (Crockford's base 32, the first character 0-7), either case.
            (
                "envelope 01HWT0DD088F8ENKHRJHCSSPV8 late",
                "envelope <ulid> late",
            ),
            ("envelope 01hwt0dd088f8enkhrjhcsspv8", "envelope <ulid>"),
            // E-mail addresses, a full stop after them kept.
            ("send to jane.doe+dlq@mail.example.com.", "send to <email>."),
            ("<bob@example.org>", "<<email>>"),
            // IPv4 with and without a port.
            ("connect 10.0.0.7:5432 refused", "connect <ip> refused"),
            ("from 192.168.1.255, retry", "from <ip>, retry"),
            ("host 255.255.255.255:65535", "host <ip>"),
            // Hex runs of 8 or more with a digit and a letter, or after 0x.
            ("commit a1b2c3d4e5f6 missing", "commit <hex> missing"),
            ("at 0x7ffe12ab9c40 and 0xDEADBEEF", "at <hex> and <hex>"),
            ("sha256:9f86d081884c7d659a2feaa0c55ad015", "sha256:<hex>"),
            // Decimal numbers with sign, fraction and exponent.
            ("took 1500 ms", "took <n> ms"),
            ("balance -12.50 below +3", "balance <n> below <n>"),
            ("rate 6.02e23 and 1E-9 and .5", "rate <n> and <n> and <n>"),
            ("retry after 30s, 500ms", "retry after <n>s, <n>ms"),
            ("line 1, column 7]", "line <n>, column <n>]"),
            ("version 1.5.2 found", "version <n> found"),
            // White space.
            ("  a \t\n b\u{a0}\u{3000}c  ", "a b c"),
            ("", ""),
            ("   ", ""),
        ];
        for (message, want) in cases {
            assert_eq!(n(message), want, "{message:?}");
        }
    }

    #[test]
    fn boundaries() {
        let cases = [
            // A number inside a word is part of the word.
            ("user42 and utf8 and http2", "user42 and utf8 and http2"),
            ("Zoë9 東京42 _7", "Zoë9 東京42 _7"),
            ("v1.5 and x.5", "v1.5 and x.5"),
            // After a dash or other punctuation it is a number.
            ("worker w-15", "worker w-<n>"),
            ("range 1-5", "range <n>-<n>"),
            ("(7)", "(<n>)"),
            ("«12»", "«<n>»"),
            // Eight digits are a number, not hex; a hex word without a digit stays.
            ("order 12345678 and 1714564900000", "order <n> and <n>"),
            ("deadbeefcafe", "deadbeefcafe"),
            // Hex inside a word stays; a shorter hex run is a number and letters.
            ("ERR_a1b2c3d4e5", "ERR_a1b2c3d4e5"),
            ("0x1f", "<n>x1f"),
            // Not an IP: five groups, an octet over 255; a bad port is left out.
            ("1.2.3.4.5", "<n>"),
            ("300.1.1.1", "<n>"),
            ("10.0.0.1:99999", "<ip>:<n>"),
            // Not an e-mail: no dot in the domain, a numeric top-level label.
            ("user@localhost", "user@localhost"),
            ("a@b.c1", "a@b.c1"),
            // A UUID too long in a group is no UUID.
            (
                "123e4567-e89b-12d3-a456-4266141740001",
                "<hex>-e89b-<n>d3-a456-<n>",
            ),
            // Quoted text is kept (see also the documented examples), and normalised.
            (
                "field 'name' rejected: '42'",
                "field 'name' rejected: '<n>'",
            ),
            // A sign after a word is not a sign.
            ("x-1 y +1 z -1.5e+3", "x-<n> y <n> z <n>"),
        ];
        for (message, want) in cases {
            assert_eq!(n(message), want, "{message:?}");
        }
    }

    #[test]
    fn pairs_that_must_stay_apart() {
        let apart = [
            (("a.B", "failed"), ("a.C", "failed")),
            (("T", "user42 not found"), ("T", "user43 not found")),
            (
                ("T", "field 'name' rejected"),
                ("T", "field 'email' rejected"),
            ),
            (("T", "a b"), ("T", "ab")),
            (("T", "x 7"), ("T", "x <hex>")),
            (("T", "deadbeef"), ("T", "deadbee1")),
            (("T\nx", "y"), ("T", "x\ny")),
        ];
        for ((t1, m1), (t2, m2)) in apart {
            assert_ne!(
                Fingerprint::of(t1, m1),
                Fingerprint::of(t2, m2),
                "{t1:?} {m1:?} / {t2:?} {m2:?}"
            );
        }
        let together = [
            ("read 4096 bytes", "read 12 bytes"),
            ("user a@b.io", "user c.d@e.fr"),
            ("  x   y ", "x y"),
            (
                "id 01HWT0DD088F8ENKHRJHCSSPV8",
                "id 7ZZZZZZZZZZZZZZZZZZZZZZZZZ",
            ),
        ];
        for (m1, m2) in together {
            assert_eq!(Fingerprint::of("T", m1), Fingerprint::of("T", m2), "{m1:?}");
        }
    }

    /// The table of docs/cli.md#fingerprints: version 1 must not change.
    #[test]
    fn the_documented_examples() {
        assert_eq!(FINGERPRINT_VERSION, 1);
        let rows = [
            (
                "java.net.SocketTimeoutException",
                "Read timed out after 30000 ms (10.0.0.7:5432)",
                "Read timed out after <n> ms (<ip>)",
                "30a64a2dfdea",
            ),
            (
                "rdq.LeaseExpired",
                "lease of 30000 ms expired without a heartbeat (worker w-15)",
                "lease of <n> ms expired without a heartbeat (worker w-<n>)",
                "fbc8bd3cd791",
            ),
            (
                "java.lang.NullPointerException",
                r#"Cannot invoke "String.length()" because "customer.email" is null"#,
                r#"Cannot invoke "String.length()" because "customer.email" is null"#,
                "69e295b464dd",
            ),
            (
                "com.acme.NotFound",
                "user 6f1c2a4e-98b1-4c9f-a1d2-0e5b7c3d9f10 (jane@example.com) not found",
                "user <uuid> (<email>) not found",
                "b67909c1cbf5",
            ),
        ];
        let docs = include_str!("../../docs/cli.md");
        for (kind, message, template, fingerprint) in rows {
            assert_eq!(n(message), template);
            assert_eq!(Fingerprint::of(kind, message).to_string(), fingerprint);
            assert!(docs.contains(fingerprint), "{fingerprint} in docs/cli.md");
        }
    }

    #[test]
    fn parse_and_show() {
        let f = Fingerprint::of("T", "m");
        assert_eq!(Fingerprint::parse(&f.to_string().to_uppercase()), Some(f));
        for bad in ["", "abc", "0123456789ag", "0123456789abc", "+123456789ab"] {
            assert_eq!(Fingerprint::parse(bad), None, "{bad:?}");
        }
    }

    /// The two cache levels give what the algorithm gives: messages with the same template
    /// share a fingerprint, the type still tells them apart, and colliding slots are
    /// overwritten, never confused.
    #[test]
    fn the_caches_give_the_uncached_fingerprint() {
        let mut f = Fingerprinter::default();
        for round in 0..3 {
            for i in 0..500u32 {
                let kind = ["A", "B", "java.io.IOException"][(i % 3) as usize];
                let message = format!(
                    "job {} failed at step {} of template {}",
                    i * 7 + round,
                    i,
                    i % 90
                );
                let (got, template) = f.fingerprint(kind, Text::Plain(&message));
                assert_eq!(template, n(&message));
                assert_eq!(got, Fingerprint::of(kind, &message), "{kind} {message}");
            }
        }
    }

    proptest::proptest! {
        /// Never a panic, and normalising again changes nothing but placeholders' own text.
        #[test]
        fn any_text(message in "\\PC{0,40}|[0-9a-f.:@x+\\- ]{0,40}") {
            let once = n(&message);
            proptest::prop_assert!(!once.starts_with(' ') && !once.ends_with(' '));
            proptest::prop_assert!(!once.contains("  "));
        }
    }
}
