//! JSON strings: the one escaper of the crate, for every string it writes (the ChokaQ
//! import's envelopes, `gen`'s lines, the owned envelope), and the one decoder of escapes.

/// Appends `text` as a JSON string: only `"`, `\` and characters below U+0020 are escaped
/// (`\b \t \n \f \r`, else `\u00XX` in lower-case hex); everything else is copied as it is.
pub(crate) fn push_string(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    push_string_contents(out, text);
    out.push(b'"');
}

/// Like [`push_string`], without the quotes: for text spliced into a string.
pub(crate) fn push_string_contents(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    // Most strings need room for themselves and a few escapes: one reservation.
    out.reserve(bytes.len() + 8);
    let mut from = 0;
    let mut at = 0;
    while at < bytes.len() {
        // Eight bytes at a time, straight to the first that needs escaping: stack traces are
        // long, with a `\n\tat ` every line (docs/performance.md#the-codec).
        if let Some(word) = bytes.get(at..at + 8) {
            let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
            let flags = escape_flags(word);
            if flags == 0 {
                at += 8;
                continue;
            }
            at += (flags.trailing_zeros() / 8) as usize;
        }
        let b = bytes[at];
        // The letter of a two-byte escape (`\n`), 0 for `\u00XX`; `None` for a byte that
        // needs none (only in the tail of fewer than eight bytes).
        let letter = match b {
            b'"' => b'"',
            b'\\' => b'\\',
            0x08 => b'b',
            b'\t' => b't',
            b'\n' => b'n',
            0x0C => b'f',
            b'\r' => b'r',
            0..=0x1F => 0,
            _ => {
                at += 1;
                continue;
            }
        };
        out.extend_from_slice(&bytes[from..at]);
        // Fixed lengths: the compiler writes them in place, where a slice of either length
        // was a call to memcpy per escape (the stack traces have two a line).
        if letter == 0 {
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 15)],
            ]);
        } else {
            out.extend_from_slice(&[b'\\', letter]);
        }
        at += 1;
        from = at;
    }
    out.extend_from_slice(&bytes[from..]);
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The bytes of `word` (little-endian) that are `"`, `\\` or below 0x20, each flagged by its
/// top bit (SWAR: a byte is flagged when subtracting turns its top bit on while it was off).
/// A borrow may flag a byte above a flagged one falsely, never below: the lowest flag is
/// exact, which is all the escaper asks.
#[inline]
fn escape_flags(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_in = |w: u64| w.wrapping_sub(ONES) & !w & HIGHS;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word & HIGHS;
    below_space
        | zero_in(word ^ (ONES * u64::from(b'"')))
        | zero_in(word ^ (ONES * u64::from(b'\\')))
}

/// Decodes the content of a JSON string (what is between its quotes) into `out`, for strings
/// that were parsed before (so every escape in them is well formed). Anything else, which
/// such a string cannot hold, decodes as U+FFFD rather than panicking.
pub(crate) fn unescape(raw: &str, out: &mut String) {
    out.clear();
    let mut rest = raw;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let hex4 = |from: usize| {
            rest.get(from..from + 4)
                .and_then(|h| u32::from_str_radix(h, 16).ok())
        };
        let (ch, used) = match rest.as_bytes().get(at + 1) {
            Some(b'"') => ('"', 2),
            Some(b'\\') => ('\\', 2),
            Some(b'/') => ('/', 2),
            Some(b'b') => ('\u{8}', 2),
            Some(b'f') => ('\u{c}', 2),
            Some(b'n') => ('\n', 2),
            Some(b'r') => ('\r', 2),
            Some(b't') => ('\t', 2),
            Some(b'u') => match hex4(at + 2) {
                Some(high @ 0xD800..=0xDBFF) => {
                    let low = (rest.get(at + 6..at + 8) == Some("\\u"))
                        .then(|| hex4(at + 8))
                        .flatten()
                        .filter(|low| (0xDC00..=0xDFFF).contains(low));
                    match low {
                        Some(low) => {
                            let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                            (char::from_u32(code).unwrap_or('\u{FFFD}'), 12)
                        }
                        None => ('\u{FFFD}', 6),
                    }
                }
                Some(code) => (char::from_u32(code).unwrap_or('\u{FFFD}'), 6),
                None => ('\u{FFFD}', 2),
            },
            _ => ('\u{FFFD}', 1),
        };
        out.push(ch);
        rest = rest.get(at + used..).unwrap_or_default();
    }
    out.push_str(rest);
}

#[cfg(test)]
mod tests {
    #[test]
    fn push_string_examples() {
        let mut out = Vec::new();
        crate::json::push_string(&mut out, "a\"b\\c\n\u{1}é");
        assert_eq!(String::from_utf8(out).unwrap(), r#""a\"b\\c\n\u0001é""#);
    }

    /// The escaper, written a byte at a time: what the word-at-a-time one must equal.
    fn reference(text: &str) -> Vec<u8> {
        let mut out = vec![b'"'];
        for c in text.chars() {
            match c {
                '"' => out.extend_from_slice(b"\\\""),
                '\\' => out.extend_from_slice(b"\\\\"),
                '\u{8}' => out.extend_from_slice(b"\\b"),
                '\t' => out.extend_from_slice(b"\\t"),
                '\n' => out.extend_from_slice(b"\\n"),
                '\u{c}' => out.extend_from_slice(b"\\f"),
                '\r' => out.extend_from_slice(b"\\r"),
                c if (c as u32) < 0x20 => {
                    out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes())
                }
                c => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
            }
        }
        out.push(b'"');
        out
    }

    /// Every byte that needs escaping at every position of a word, next to each other and to
    /// bytes of 0x80 and above (where a SWAR borrow could mislead the escaper).
    #[test]
    fn the_word_at_a_time_escaper_equals_the_bytewise_one() {
        let specials = [
            '"', '\\', '\n', '\t', '\u{0}', '\u{1f}', '\u{8}', '\r', ' ', '!', 'é', '\u{7f}',
            '\u{ff}',
        ];
        let mut out = Vec::new();
        for len in 0..20 {
            for at in 0..len {
                for &a in &specials {
                    for &b in &specials {
                        let mut chars: Vec<char> = "xyzé".chars().cycle().take(len).collect();
                        chars.insert(at, a);
                        let text: String = [b].into_iter().chain(chars).chain([b]).collect();
                        out.clear();
                        crate::json::push_string(&mut out, &text);
                        assert_eq!(out, reference(&text), "{text:?}");
                    }
                }
            }
        }
    }

    /// Random texts, mostly plain letters so that whole clean words occur, over every ASCII
    /// byte and a few wider characters.
    #[test]
    fn the_word_at_a_time_escaper_equals_the_bytewise_one_on_random_texts() {
        let alphabet: Vec<char> = (0u8..0x80)
            .map(char::from)
            .chain(['é', '😀', '\u{7f}', '…'])
            .collect();
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for len in 0..200 {
            let text: String = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    // Mostly plain letters, so whole clean words occur.
                    if state.is_multiple_of(4) {
                        alphabet[(state >> 8) as usize % alphabet.len()]
                    } else {
                        'a'
                    }
                })
                .collect();
            let mut out = Vec::new();
            crate::json::push_string(&mut out, &text);
            assert_eq!(out, reference(&text), "{text:?}");
        }
    }
}
