//! The small text formats of a ChokaQ row (docs/chokaq.md#the-rows): `datetime2(7)` times, names,
//! IDs, percent-encoding, .NET exception texts, and the importer's JSON string form.

use sha2::{Digest, Sha256};

use crate::envelope::formats::calendar_ms;

/// A `datetime2(7)` time in UTC (`2026-04-30T14:32:07.1234567`, `T` or a space, 0–7 fraction
/// digits, an optional upper-case `Z`), cut to milliseconds since the Unix epoch.
pub fn parse_datetime2(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 19
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let mut rest = &b[19..];
    let mut milli = 0;
    if let Some(fraction) = rest.strip_prefix(b".") {
        let digits = fraction.iter().take_while(|d| d.is_ascii_digit()).count();
        if !(1..=7).contains(&digits) {
            return None;
        }
        // Cut, not rounded: the first three digits, padded.
        for place in 0..3 {
            milli = milli * 10
                + fraction
                    .get(place)
                    .filter(|_| place < digits)
                    .map_or(0, |d| i64::from(d - b'0'));
        }
        rest = &fraction[digits..];
    }
    // Year 0000 is not a datetime2 year.
    if !(rest.is_empty() || rest == b"Z") || &b[..4] == b"0000" {
        return None;
    }
    calendar_ms(b, milli)
}

const ULID_ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// A ChokaQ `Id` that is already a canonical ULID ignoring case, upper-cased.
pub fn ulid_ignoring_case(id: &str) -> Option<String> {
    let upper = id.to_ascii_uppercase();
    let b = upper.as_bytes();
    (b.len() == 26 && (b'0'..=b'7').contains(&b[0]) && b.iter().all(|c| ULID_ALPHABET.contains(c)))
        .then_some(upper)
}

/// The deterministic ULID of a job: `created_ms` as its time, the first 10 bytes of
/// SHA-256("chokaq:" + Id) as its randomness.
pub fn derived_ulid(id: &str, created_ms: u64) -> String {
    let digest = Sha256::new()
        .chain_update(b"chokaq:")
        .chain_update(id.as_bytes())
        .finalize();
    let mut value = u128::from(created_ms & 0xFFFF_FFFF_FFFF) << 80;
    for (i, byte) in digest[..10].iter().enumerate() {
        value |= u128::from(*byte) << (72 - 8 * i);
    }
    (0..26)
        .rev()
        .map(|i| char::from(ULID_ALPHABET[((value >> (i * 5)) & 31) as usize]))
        .collect()
}

/// A queue or handler name from a column value: an assembly-qualified type keeps its type
/// name; ASCII letters are lower-cased, every other character outside `[a-z0-9._-]` becomes
/// `-`; past 240 characters, the first 231 plus `-` and 8 hex digits of the value's SHA-256.
pub fn normalize_name(value: &str, is_type: bool) -> String {
    let kept = if is_type {
        value.split(", ").next().unwrap_or(value)
    } else {
        value
    };
    let mut name: String = kept
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    // Every character is ASCII now: bytes are characters.
    if name.len() > 240 {
        name.truncate(231);
        name.push('-');
        let digest = Sha256::digest(value.as_bytes());
        for byte in &digest[..4] {
            name.push_str(&format!("{byte:02x}"));
        }
    }
    name
}

/// Each byte outside RFC 3986's unreserved characters as `%HH` (upper-case hex).
pub fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for &b in text.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Length as .NET's `string.Length` counts it: UTF-16 code units.
pub fn utf16_len(text: &str) -> usize {
    text.chars().map(char::len_utf16).sum()
}

/// A .NET `Exception.ToString()`: its type, message and stack, when it has that shape.
#[derive(Debug, PartialEq, Eq)]
pub struct DotNetException<'a> {
    /// The exception's full type name (`System.InvalidOperationException`).
    pub type_name: &'a str,
    /// The message, which may span lines, up to the stack.
    pub message: &'a str,
    /// From the first `   at ` or ` ---> ` line on, unchanged.
    pub stack: Option<&'a str>,
}

/// Parses a .NET exception text (docs/chokaq.md#dlq-errors).
pub fn parse_dotnet_exception(text: &str) -> Option<DotNetException<'_>> {
    let first_line_end = text.find('\n').unwrap_or(text.len());
    let first_line = text[..first_line_end]
        .strip_suffix('\r')
        .unwrap_or(&text[..first_line_end]);
    let colon = first_line.find(": ")?;
    let type_name = &first_line[..colon];
    let type_ok = type_name.contains('.')
        && type_name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'+' | b'`'));
    if !type_ok {
        return None;
    }
    let body = &text[colon + 2..];
    // The first later line that starts the stack: scan the line starts after the first line.
    let mut line_start = first_line_end + 1;
    while line_start <= text.len() && first_line_end < text.len() {
        let line = &text[line_start..];
        if line.starts_with("   at ") || line.starts_with(" ---> ") {
            let mut message_end = line_start - 1;
            if text[..message_end].ends_with('\r') {
                message_end -= 1;
            }
            return Some(DotNetException {
                type_name,
                message: &text[colon + 2..message_end.max(colon + 2)],
                stack: Some(line),
            });
        }
        match line.find('\n') {
            Some(next) => line_start += next + 1,
            None => break,
        }
    }
    Some(DotNetException {
        type_name,
        message: body,
        stack: None,
    })
}

/// `text` cut at the last character boundary at or below `limit` bytes, with the truncation
/// marker, when it is longer (docs/envelope.md#truncation): [`crate::envelope::truncate`].
pub fn truncated(text: &str, limit: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= limit {
        return text.into();
    }
    crate::envelope::truncate(text, limit).into()
}

/// Appends `text` as a JSON string in the importer's output form (see
/// [`crate::json::push_string`]).
pub fn push_json_string(out: &mut Vec<u8>, text: &str) {
    crate::json::push_string(out, text);
}

#[cfg(test)]
mod tests {
    #[test]
    fn parse_datetime2_examples() {
        use crate::chokaq::parse_datetime2;
        assert_eq!(parse_datetime2("1970-01-01 00:00:01.9999999"), Some(1999));
        assert_eq!(parse_datetime2("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_datetime2("1970-01-01t00:00:00"), None);
    }

    #[test]
    fn parse_dotnet_exception_examples() {
        use crate::chokaq::parse_dotnet_exception;
        let text = "System.TimeoutException: took too long\r\nafter 3 tries\r\n   at A.B()";
        let e = parse_dotnet_exception(text).unwrap();
        assert_eq!(
            (e.type_name, e.message, e.stack),
            (
                "System.TimeoutException",
                "took too long\r\nafter 3 tries",
                Some("   at A.B()")
            )
        );
    }

    use super::*;

    #[test]
    fn datetime2_spellings_and_fractions() {
        let base = parse_datetime2("2026-04-30T14:32:07").unwrap();
        for (text, extra) in [
            ("2026-04-30 14:32:07", 0),
            ("2026-04-30T14:32:07Z", 0),
            ("2026-04-30T14:32:07.1", 100),
            ("2026-04-30T14:32:07.12", 120),
            ("2026-04-30T14:32:07.123", 123),
            ("2026-04-30 14:32:07.1239999", 123),
            ("2026-04-30T14:32:07.9999999Z", 999),
        ] {
            assert_eq!(parse_datetime2(text), Some(base + extra), "{text}");
        }
        for bad in [
            "2026-04-30T14:32:07.",
            "2026-04-30T14:32:07.12345678",
            "2026-04-30T14:32:07+00:00",
            "2026-04-30T14:32:07z",
            "2026-04-30t14:32:07",
            "2026-02-29T00:00:00",
            "0000-01-01T00:00:00",
            "2026-04-30T24:00:00",
            "2026-04-30T23:59:60",
            "2026-4-30T14:32:07",
        ] {
            assert_eq!(parse_datetime2(bad), None, "{bad}");
        }
        assert_eq!(
            parse_datetime2("0001-01-01T00:00:00"),
            Some(-62_135_596_800_000)
        );
        assert!(parse_datetime2("2024-02-29 00:00:00").is_some());
    }

    #[test]
    fn ids() {
        assert_eq!(
            ulid_ignoring_case("01hwt0d7g0q8v9w2r4t6y8a0b2").as_deref(),
            Some("01HWT0D7G0Q8V9W2R4T6Y8A0B2")
        );
        assert_eq!(ulid_ignoring_case("81HWT0D7G0Q8V9W2R4T6Y8A0B2"), None);
        assert_eq!(ulid_ignoring_case("01HWT0D7G0Q8V9W2R4T6Y8A0BU"), None);
        let a = derived_ulid("3f2504e0-4f89-11d3-9a0c-0305e82c3301", 1_714_564_800_000);
        assert_eq!(
            a,
            derived_ulid("3f2504e0-4f89-11d3-9a0c-0305e82c3301", 1_714_564_800_000)
        );
        assert_eq!(
            crate::envelope::formats::ulid_time_ms(&a),
            Some(1_714_564_800_000)
        );
        assert_ne!(
            a,
            derived_ulid("3f2504e0-4f89-11d3-9a0c-0305e82c3302", 1_714_564_800_000)
        );
    }

    #[test]
    fn names() {
        assert_eq!(
            normalize_name(
                "Acme.Billing.SendInvoice, Acme.Billing, Version=1.0.0.0",
                true
            ),
            "acme.billing.sendinvoice"
        );
        assert_eq!(
            normalize_name("Emails Hoch Priorität", false),
            "emails-hoch-priorit-t"
        );
        assert_eq!(normalize_name("a, b", false), "a--b");
        let long = "Q".repeat(300);
        let name = normalize_name(&long, false);
        assert_eq!(name.len(), 240);
        assert!(name.starts_with(&"q".repeat(231)) && name.as_bytes()[231] == b'-');
        assert!(name[232..]
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        assert_eq!(percent_encode("a b/é~"), "a%20b%2F%C3%A9~");
        assert_eq!(utf16_len("a😀é"), 4);
    }

    #[test]
    fn dotnet_exceptions() {
        let nested = "System.InvalidOperationException: outer\n ---> System.IO.IOException: inner\n   at X.Y()\n   --- End of inner exception stack trace ---\n   at A.B()";
        let e = parse_dotnet_exception(nested).unwrap();
        assert_eq!(e.type_name, "System.InvalidOperationException");
        assert_eq!(e.message, "outer");
        assert!(e
            .stack
            .unwrap()
            .starts_with(" ---> System.IO.IOException: inner\n"));
        let no_stack = parse_dotnet_exception("Acme.Errors+Nested`1: boom\nsecond line").unwrap();
        assert_eq!(
            (no_stack.message, no_stack.stack),
            ("boom\nsecond line", None)
        );
        for not in [
            "plain text",
            "NoDot: x",
            "Sys tem.X: y",
            "System.Exception:no space",
        ] {
            assert_eq!(parse_dotnet_exception(not), None, "{not}");
        }
        let empty_message = parse_dotnet_exception("System.Exception: \n   at A.B()").unwrap();
        assert_eq!(
            (empty_message.message, empty_message.stack),
            ("", Some("   at A.B()"))
        );
    }

    #[test]
    fn output_strings_and_truncation() {
        let mut out = Vec::new();
        push_json_string(&mut out, "a\"b\\c\u{1}\u{8}\u{c}\n\r\té/");
        assert_eq!(out, "\"a\\\"b\\\\c\\u0001\\b\\f\\n\\r\\té/\"".as_bytes());
        assert_eq!(truncated("abcdef", 6), "abcdef");
        assert_eq!(truncated("abcdef", 4), "abcd…[truncated]");
        assert_eq!(truncated("aé", 2), "a…[truncated]");
    }
}
