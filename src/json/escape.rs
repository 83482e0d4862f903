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
    let mut from = 0;
    let mut at = 0;
    while at < bytes.len() {
        // Eight bytes at a time while none needs escaping: stack traces are long.
        if let Some(word) = bytes.get(at..at + 8) {
            let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
            if !needs_escape(word) {
                at += 8;
                continue;
            }
        }
        let b = bytes[at];
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            b'\t' => b"\\t",
            b'\n' => b"\\n",
            0x0C => b"\\f",
            b'\r' => b"\\r",
            0..=0x1F => b"",
            _ => {
                at += 1;
                continue;
            }
        };
        out.extend_from_slice(&bytes[from..at]);
        if escape.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 15)]);
        } else {
            out.extend_from_slice(escape);
        }
        at += 1;
        from = at;
    }
    out.extend_from_slice(&bytes[from..]);
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Whether any of the eight bytes of `word` is `"`, `\\` or below 0x20 (SWAR: a byte is
/// flagged when subtracting turns its top bit on while it was off).
#[inline]
fn needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_in = |w: u64| w.wrapping_sub(ONES) & !w & HIGHS;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word & HIGHS;
    below_space != 0
        || zero_in(word ^ (ONES * u64::from(b'"'))) != 0
        || zero_in(word ^ (ONES * u64::from(b'\\'))) != 0
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
}
