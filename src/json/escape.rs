//! Writing JSON strings: the one escaper of the crate, for every string it writes (the ChokaQ
//! import's envelopes, `gen`'s lines).

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

#[cfg(test)]
mod tests {
    #[test]
    fn push_string_examples() {
        let mut out = Vec::new();
        crate::json::push_string(&mut out, "a\"b\\c\n\u{1}é");
        assert_eq!(String::from_utf8(out).unwrap(), r#""a\"b\\c\n\u0001é""#);
    }
}
