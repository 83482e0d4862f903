//! A strict RFC 8259 scanner for the lines simd-json refuses.
//!
//! simd-json is the fast path; it stops at the first problem and tells little about it (the same
//! error for an unpaired surrogate and a malformed `\u`, index 0 for UTF-8 errors), and it rejects
//! numbers that docs/envelope.md#numbers requires us to accept (`1e400`, 30-digit integers). This
//! scanner runs only after simd-json failed: it decides which rule of the JSON layer
//! (docs/envelope.md#the-json-layer) the line breaks, builds the pointers of the strings and
//! members at fault, and finds the numbers simd-json cannot hold so that the parser can retry with
//! stand-ins. It may allocate; it never recurses, so no input can overflow the stack.

use std::collections::HashSet;

use crate::diagnostic::{cut_text, push_pointer_token, MAX_DIAGNOSTICS_PER_LINE, MAX_PATH_BYTES};

/// The deepest nesting that is valid; the top-level object is depth 1
/// (docs/envelope.md#nesting-depth).
pub const MAX_DEPTH: usize = 128;

/// What the scanner concluded about a line's grammar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Grammar {
    /// One RFC 8259 value, nothing after it but white space.
    Json { root_is_object: bool },
    /// Not JSON: what was expected at `offset`.
    Malformed {
        offset: usize,
        expected: &'static str,
    },
    /// A container opened at `offset` is nested deeper than [`MAX_DEPTH`].
    TooDeep { offset: usize },
}

/// A number simd-json cannot represent, replaced by a stand-in for the retry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OddNumber {
    pub start: usize,
    pub end: usize,
    /// Position of the value on the tape.
    pub tape_index: usize,
    /// For an integer, its value saturated to `i128`; `None` for a fraction or exponent form.
    pub integer: Option<i128>,
}

/// Everything the scanner found in one line.
#[derive(Debug)]
pub(crate) struct Scan {
    pub grammar: Grammar,
    /// Pointers of the strings (or members, for keys) holding unpaired surrogate escapes: the
    /// first [`MAX_DIAGNOSTICS_PER_LINE`], cut as diagnostics' paths are.
    pub surrogates: Vec<String>,
    /// How many more strings hold them.
    pub more_surrogates: u64,
    /// Pointers of repeated members, one per repetition: the first
    /// [`MAX_DIAGNOSTICS_PER_LINE`], cut as diagnostics' paths are.
    pub duplicates: Vec<String>,
    /// How many more repetitions there are.
    pub more_duplicates: u64,
    pub odd_numbers: Vec<OddNumber>,
}

enum Frame {
    Object {
        keys: HashSet<Vec<u8>>,
        path_len: usize,
    },
    Array {
        next_index: usize,
        path_len: usize,
    },
}

struct Scanner<'a> {
    line: &'a [u8],
    pos: usize,
    /// Tape index the next value or key gets (simd-json's pre-order: keys are nodes too).
    tape_index: usize,
    /// Pointer of the value being scanned.
    path: String,
    stack: Vec<Frame>,
    key: Vec<u8>,
    found: Scan,
}

/// Scans `line`, which must already be valid UTF-8.
pub(crate) fn scan(line: &[u8]) -> Scan {
    let mut s = Scanner {
        line,
        pos: 0,
        tape_index: 0,
        path: String::new(),
        stack: Vec::new(),
        key: Vec::new(),
        found: Scan {
            grammar: Grammar::Json {
                root_is_object: false,
            },
            surrogates: Vec::new(),
            more_surrogates: 0,
            duplicates: Vec::new(),
            more_duplicates: 0,
            odd_numbers: Vec::new(),
        },
    };
    let root_is_object = {
        s.skip_ws();
        s.peek() == Some(b'{')
    };
    s.found.grammar = match s.run() {
        Ok(()) => Grammar::Json { root_is_object },
        Err(grammar) => grammar,
    };
    s.found
}

/// Keeps a copy of `path` (cut) while `kept` has room, else counts it in `more`: a line of many
/// defects under one long key must not copy that key once per defect.
fn keep_path(kept: &mut Vec<String>, more: &mut u64, path: &str) {
    if kept.len() < MAX_DIAGNOSTICS_PER_LINE {
        kept.push(cut_text(path, MAX_PATH_BYTES).into_owned());
    } else {
        *more += 1;
    }
}

#[inline]
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.line.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(is_ws) {
            self.pos += 1;
        }
    }

    fn malformed(&self, expected: &'static str) -> Grammar {
        Grammar::Malformed {
            offset: self.pos,
            expected,
        }
    }

    /// Points `self.path` at the member `key` (decoded in `self.key`) of the object whose
    /// pointer is `path_len` bytes long.
    fn enter_member(&mut self, path_len: usize) {
        self.path.truncate(path_len);
        push_pointer_token(&mut self.path, &wtf8_to_string(&self.key));
    }

    fn run(&mut self) -> Result<(), Grammar> {
        'value: loop {
            self.skip_ws();
            let Some(b) = self.peek() else {
                return Err(self.malformed("a value"));
            };
            self.tape_index += 1;
            match b {
                b'{' | b'[' => {
                    if self.stack.len() == MAX_DEPTH {
                        return Err(Grammar::TooDeep { offset: self.pos });
                    }
                    self.pos += 1;
                    self.skip_ws();
                    let path_len = self.path.len();
                    if b == b'{' {
                        self.stack.push(Frame::Object {
                            keys: HashSet::new(),
                            path_len,
                        });
                        if self.peek() == Some(b'}') {
                            self.pos += 1;
                            self.stack.pop();
                        } else {
                            self.member()?;
                            continue 'value;
                        }
                    } else {
                        self.stack.push(Frame::Array {
                            next_index: 1,
                            path_len,
                        });
                        if self.peek() == Some(b']') {
                            self.pos += 1;
                            self.stack.pop();
                        } else {
                            self.path.push_str("/0");
                            continue 'value;
                        }
                    }
                }
                b'"' => {
                    if self.string(false)? {
                        keep_path(
                            &mut self.found.surrogates,
                            &mut self.found.more_surrogates,
                            &self.path,
                        );
                    }
                }
                b'-' | b'0'..=b'9' => self.number()?,
                b't' => self.literal(b"true")?,
                b'f' => self.literal(b"false")?,
                b'n' => self.literal(b"null")?,
                _ => return Err(self.malformed("a value")),
            }
            // A value ended: close containers until one continues with another value.
            loop {
                self.skip_ws();
                let b = self.peek();
                match self.stack.last_mut() {
                    None => {
                        return match b {
                            None => Ok(()),
                            Some(_) => Err(self.malformed("the end of the line")),
                        };
                    }
                    Some(Frame::Object { .. }) => match b {
                        Some(b',') => {
                            self.pos += 1;
                            self.skip_ws();
                            self.member()?;
                            continue 'value;
                        }
                        Some(b'}') => {
                            self.pos += 1;
                            self.close();
                        }
                        _ => return Err(self.malformed("',' or '}'")),
                    },
                    Some(Frame::Array {
                        next_index,
                        path_len,
                    }) => match b {
                        Some(b',') => {
                            self.pos += 1;
                            let index = *next_index;
                            *next_index += 1;
                            let path_len = *path_len;
                            self.path.truncate(path_len);
                            self.path.push('/');
                            self.path.push_str(&index.to_string());
                            continue 'value;
                        }
                        Some(b']') => {
                            self.pos += 1;
                            self.close();
                        }
                        _ => return Err(self.malformed("',' or ']'")),
                    },
                }
            }
        }
    }

    fn close(&mut self) {
        if let Some(Frame::Object { path_len, .. } | Frame::Array { path_len, .. }) =
            self.stack.pop()
        {
            self.path.truncate(path_len);
        }
    }

    /// Scans `"key" :` of the innermost object, leaving `self.path` at the member.
    fn member(&mut self) -> Result<(), Grammar> {
        if self.peek() != Some(b'"') {
            return Err(self.malformed("a key"));
        }
        self.tape_index += 1;
        let lone_surrogate = self.string(true)?;
        let Some(Frame::Object { keys, path_len }) = self.stack.last_mut() else {
            unreachable!("member() runs inside an object");
        };
        let path_len = *path_len;
        let repeated = !keys.insert(self.key.clone());
        self.enter_member(path_len);
        if lone_surrogate {
            keep_path(
                &mut self.found.surrogates,
                &mut self.found.more_surrogates,
                &self.path,
            );
        }
        if repeated {
            keep_path(
                &mut self.found.duplicates,
                &mut self.found.more_duplicates,
                &self.path,
            );
        }
        self.skip_ws();
        if self.peek() != Some(b':') {
            return Err(self.malformed("':'"));
        }
        self.pos += 1;
        Ok(())
    }

    fn literal(&mut self, word: &'static [u8]) -> Result<(), Grammar> {
        if self.line[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(self.malformed("true, false or null"))
        }
    }

    /// Scans a string starting at its opening quote. With `decode`, its decoded bytes land in
    /// `self.key` (WTF-8: an unpaired surrogate is kept as its 3-byte generalized form, so two
    /// keys differing only there still differ). Returns whether it holds an unpaired
    /// surrogate escape.
    fn string(&mut self, decode: bool) -> Result<bool, Grammar> {
        self.pos += 1;
        self.key.clear();
        let mut lone_surrogate = false;
        loop {
            let Some(b) = self.peek() else {
                return Err(self.malformed("'\"'"));
            };
            match b {
                b'"' => {
                    self.pos += 1;
                    return Ok(lone_surrogate);
                }
                b'\\' => {
                    self.pos += 1;
                    let decoded: u32 = match self.peek() {
                        Some(b'"') => '"'.into(),
                        Some(b'\\') => '\\'.into(),
                        Some(b'/') => '/'.into(),
                        Some(b'b') => 0x08,
                        Some(b'f') => 0x0C,
                        Some(b'n') => '\n'.into(),
                        Some(b'r') => '\r'.into(),
                        Some(b't') => '\t'.into(),
                        Some(b'u') => {
                            let unit = self.hex4()?;
                            match unit {
                                0xD800..=0xDBFF => match self.low_surrogate_after() {
                                    Some(low) => 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00),
                                    None => {
                                        lone_surrogate = true;
                                        unit
                                    }
                                },
                                0xDC00..=0xDFFF => {
                                    lone_surrogate = true;
                                    unit
                                }
                                _ => unit,
                            }
                        }
                        _ => return Err(self.malformed("an escape")),
                    };
                    // Every escape leaves `pos` on its last byte.
                    self.pos += 1;
                    if decode {
                        push_wtf8(&mut self.key, decoded);
                    }
                }
                0x00..=0x1F => return Err(self.malformed("an escaped control character")),
                _ => {
                    if decode {
                        self.key.push(b);
                    }
                    self.pos += 1;
                }
            }
        }
    }

    /// At the `u` of `\uXXXX`: reads the four hex digits, leaving `pos` on the last one.
    fn hex4(&mut self) -> Result<u32, Grammar> {
        let digits = self.line.get(self.pos + 1..self.pos + 5);
        let value = digits.and_then(|d| {
            d.iter().try_fold(0u32, |acc, &c| {
                (c as char).to_digit(16).map(|v| acc * 16 + v)
            })
        });
        match value {
            Some(v) => {
                self.pos += 4;
                Ok(v)
            }
            None => {
                self.pos += 1;
                Err(self.malformed("four hex digits"))
            }
        }
    }

    /// After a high surrogate's last hex digit: consumes a following `\uDC00`–`\uDFFF`.
    fn low_surrogate_after(&mut self) -> Option<u32> {
        let rest = self.line.get(self.pos + 1..self.pos + 7)?;
        if rest[0] != b'\\' || rest[1] != b'u' {
            return None;
        }
        let low = rest[2..].iter().try_fold(0u32, |acc, &c| {
            (c as char).to_digit(16).map(|v| acc * 16 + v)
        })?;
        if (0xDC00..=0xDFFF).contains(&low) {
            self.pos += 6;
            Some(low)
        } else {
            None
        }
    }

    fn number(&mut self) -> Result<(), Grammar> {
        let start = self.pos;
        let tape_index = self.tape_index - 1;
        let integer = match number_grammar(&self.line[start..]) {
            Ok((len, integer)) => {
                self.pos += len;
                integer
            }
            Err(at) => {
                self.pos = start + at;
                return Err(self.malformed("a digit"));
            }
        };
        let text = &self.line[start..self.pos];
        let odd = if integer {
            let value = saturating_integer(text);
            let fits = (i128::from(i64::MIN)..=i128::from(u64::MAX)).contains(&value);
            (!fits).then_some(Some(value))
        } else {
            // Only an overflow to infinity stops simd-json; underflow and long mantissas it
            // reads (as 0 or the nearest double).
            let finite = std::str::from_utf8(text)
                .ok()
                .and_then(|t| t.parse::<f64>().ok())
                .is_some_and(f64::is_finite);
            (!finite).then_some(None)
        };
        if let Some(integer) = odd {
            self.found.odd_numbers.push(OddNumber {
                start,
                end: self.pos,
                tape_index,
                integer,
            });
        }
        Ok(())
    }
}

/// The integer `text` (an RFC 8259 int, sign included) saturated to `i128`.
fn saturating_integer(text: &[u8]) -> i128 {
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let mut value: i128 = 0;
    for &d in digits {
        let d = i128::from(d - b'0');
        value = match value.checked_mul(10).and_then(|v| v.checked_add(d)) {
            Some(v) => v,
            None => return if negative { i128::MIN } else { i128::MAX },
        };
    }
    if negative {
        -value
    } else {
        value
    }
}

/// A decoded key for a pointer: each unpaired surrogate becomes one U+FFFD.
fn wtf8_to_string(mut bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    loop {
        match std::str::from_utf8(bytes) {
            Ok(rest) => {
                out.push_str(rest);
                return out;
            }
            Err(e) => {
                let (valid, rest) = bytes.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                out.push(char::REPLACEMENT_CHARACTER);
                // Only surrogates' 3-byte forms can be here: the line itself was UTF-8.
                bytes = rest.get(3..).unwrap_or_default();
            }
        }
    }
}

/// Appends a code point in (generalized) UTF-8; surrogates get their 3-byte form.
fn push_wtf8(out: &mut Vec<u8>, cp: u32) {
    match cp {
        0..=0x7F => out.push(cp as u8),
        0x80..=0x7FF => out.extend_from_slice(&[0xC0 | (cp >> 6) as u8, 0x80 | (cp & 0x3F) as u8]),
        0x800..=0xFFFF => out.extend_from_slice(&[
            0xE0 | (cp >> 12) as u8,
            0x80 | ((cp >> 6) & 0x3F) as u8,
            0x80 | (cp & 0x3F) as u8,
        ]),
        _ => out.extend_from_slice(&[
            0xF0 | (cp >> 18) as u8,
            0x80 | ((cp >> 12) & 0x3F) as u8,
            0x80 | ((cp >> 6) & 0x3F) as u8,
            0x80 | (cp & 0x3F) as u8,
        ]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grammar(s: &str) -> Grammar {
        scan(s.as_bytes()).grammar
    }

    #[test]
    fn accepts_rfc8259_values() {
        for s in [
            r#"{}"#,
            r#"{"a":[1,-0,2.5e-3,1E+9,"x\u00e9\ud83d\ude00",true,false,null]}"#,
            " [ ] ",
            "\"\"",
            "-0",
            "1e400",
        ] {
            assert!(matches!(grammar(s), Grammar::Json { .. }), "{s}");
        }
        assert_eq!(
            grammar("{\"a\":1}"),
            Grammar::Json {
                root_is_object: true
            }
        );
        assert_eq!(
            grammar("[1]"),
            Grammar::Json {
                root_is_object: false
            }
        );
    }

    #[test]
    fn rejects_what_rfc8259_rejects() {
        for s in [
            "",
            " ",
            "{",
            "{]",
            "[1,]",
            "{\"a\":1,}",
            "01",
            "-",
            "1.",
            ".5",
            "1e",
            "+1",
            "tru",
            "nul",
            "\"\\x\"",
            "\"\\u12\"",
            "\"a\tb\"",
            "{\"a\" 1}",
            "{1:2}",
            "[1]x",
            "1 2",
            "\"abc",
            "[\"a\\\"]",
        ] {
            assert!(matches!(grammar(s), Grammar::Malformed { .. }), "{s:?}");
        }
    }

    #[test]
    fn depth_128_passes_and_129_fails() {
        let ok = "[".repeat(128) + &"]".repeat(128);
        assert!(matches!(grammar(&ok), Grammar::Json { .. }));
        let deep = "[".repeat(129) + &"]".repeat(129);
        assert_eq!(grammar(&deep), Grammar::TooDeep { offset: 128 });
        // Unbounded input never recurses: 100,000 brackets are a plain TooDeep.
        assert!(matches!(
            grammar(&"[".repeat(100_000)),
            Grammar::TooDeep { .. }
        ));
    }

    #[test]
    fn surrogates_are_located_per_string() {
        let s = scan(br#"{"a":["ok","\ud800x\udc00"],"\udfff":1,"b":"\ud83d\ude00"}"#);
        assert!(matches!(s.grammar, Grammar::Json { .. }));
        assert_eq!(s.surrogates, ["/a/1", "/\u{fffd}"]);
    }

    #[test]
    fn duplicates_are_found_behind_escapes_and_at_depth() {
        let s = scan(br#"{"status":1,"st\u0061tus":2,"x":{"k":[{"a/b":1,"a\/b":2,"a\/b":3}]}}"#);
        assert_eq!(s.duplicates, ["/status", "/x/k/0/a~1b", "/x/k/0/a~1b"]);
    }

    #[test]
    fn odd_numbers_carry_their_tape_index() {
        let s = scan(
            br#"{"a":1e400,"b":[123456789012345678901234567890,-99999999999999999999],"c":1.5}"#,
        );
        let found: Vec<_> = s
            .odd_numbers
            .iter()
            .map(|n| (n.tape_index, n.integer))
            .collect();
        // tape: 0 {, 1 "a", 2 1e400, 3 "b", 4 [, 5 big, 6 -big, 7 "c", 8 1.5
        assert_eq!(
            found,
            [
                (2, None),
                (5, Some(123456789012345678901234567890)),
                (6, Some(-99999999999999999999))
            ]
        );
        assert_eq!(saturating_integer(&[b'9'; 60]), i128::MAX);
    }
}

/// What a valid RFC 8259 number is, for the stand-ins of numbers simd-json cannot hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NumberKind {
    /// No fraction, no exponent; its value saturated to `i128`.
    Integer(i128),
    /// A fraction or an exponent.
    Float,
}

/// The RFC 8259 number `text` is, or `None` when it is not one (`01`, `1.`, `-`, `1e`).
pub(crate) fn number_kind(text: &[u8]) -> Option<NumberKind> {
    match number_grammar(text) {
        Ok((len, true)) if len == text.len() => Some(NumberKind::Integer(saturating_integer(text))),
        Ok((len, false)) if len == text.len() => Some(NumberKind::Float),
        _ => None,
    }
}

/// RFC 8259's `number` at the start of `text`: its length and whether it is an integer (no
/// fraction, no exponent), or the offset where a digit was expected.
fn number_grammar(text: &[u8]) -> Result<(usize, bool), usize> {
    let digits = |at: usize| {
        text.get(at..).map_or(0, |rest| {
            rest.iter().take_while(|b| b.is_ascii_digit()).count()
        })
    };
    let mut at = usize::from(text.first() == Some(&b'-'));
    match text.get(at) {
        Some(b'0') => at += 1,
        Some(b'1'..=b'9') => at += digits(at),
        _ => return Err(at),
    }
    let int_end = at;
    if text.get(at) == Some(&b'.') {
        at += 1;
        match digits(at) {
            0 => return Err(at),
            n => at += n,
        }
    }
    if matches!(text.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(text.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        match digits(at) {
            0 => return Err(at),
            n => at += n,
        }
    }
    Ok((at, at == int_end))
}

/// The byte range of the number token around `index` (where simd-json stopped inside or just
/// after it), when it stands where a value may: after a structural byte or white space, and
/// before one or the end.
pub(crate) fn number_around(line: &[u8], index: usize) -> Option<(usize, usize)> {
    let is_number_byte = |b: &u8| matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E');
    let index = index.min(line.len());
    let start = index
        - line[..index]
            .iter()
            .rev()
            .take_while(|b| is_number_byte(b))
            .count();
    let end = index
        + line[index..]
            .iter()
            .take_while(|b| is_number_byte(b))
            .count();
    let before_ok = start == 0
        || matches!(
            line[start - 1],
            b':' | b',' | b'[' | b' ' | b'\t' | b'\r' | b'\n'
        );
    let after_ok =
        end == line.len() || matches!(line[end], b',' | b']' | b'}' | b' ' | b'\t' | b'\r' | b'\n');
    (start < end && before_ok && after_ok).then_some((start, end))
}
