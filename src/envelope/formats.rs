//! The strict string formats of docs/envelope.md#version-1 and #version-2, checked by hand:
//! each is a small fixed grammar, and the general-purpose crates (ULID, media type, URI parsers)
//! accept more than the rules allow, so a crate would need a second check on top.

/// The marker a writer appends to a cut `message` or `stack` (U+2026 then `[truncated]`).
pub const TRUNCATION_MARKER: &str = "…[truncated]";

/// Milliseconds since 1970-01-01T00:00:00.000Z of a `YYYY-MM-DDTHH:MM:SS.mmmZ` timestamp, or
/// `None` when the text is not exactly that shape or not a real date and time (no leap second).
///
/// ```
/// use rdq_envelope::envelope::formats::parse_timestamp;
/// assert_eq!(parse_timestamp("1970-01-01T00:00:01.500Z"), Some(1500));
/// assert_eq!(parse_timestamp("2023-02-29T00:00:00.000Z"), None);
/// assert_eq!(parse_timestamp("2024-02-29T00:00:00.000z"), None);
/// ```
pub fn parse_timestamp(s: &str) -> Option<i64> {
    let b: &[u8; 24] = s.as_bytes().try_into().ok()?;
    Some(timestamp_days(b)? * 86_400_000 + timestamp_time_ms(b)?)
}

/// The day (since 1970-01-01) of a timestamp's `YYYY-MM-DD`, when it is a real date. Split
/// from the time of day so that a reader of many timestamps of one day (the attempts of an
/// envelope) can reuse the day.
///
/// Both halves read the text as little-endian words (SWAR: every digit and separator of a word
/// checked at once, without a branch per byte). Every envelope carries several timestamps, and
/// the single pass spent about a tenth of its instructions on them byte by byte.
#[inline]
pub(crate) fn timestamp_days(b: &[u8; 24]) -> Option<i64> {
    // `YYYY-MM-`: digits in bytes 0-3 and 5-6, `-` in 4 and 7.
    let ymd = word_digits(word(b, 0), 0x00FF_FF00_FFFF_FFFF, 0x2D00_002D_0000_0000)?;
    // `DDTHH:MM`: only the `DD` here.
    let dd = word_digits(word(b, 8), 0x0000_0000_0000_FFFF, 0)?;
    let year = pair(ymd, 0) * 100 + pair(ymd, 2);
    let (month, day) = (pair(ymd, 5), pair(dd, 0));
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    Some(days_from_civil(year, month, day))
}

/// The milliseconds into its day of a timestamp's `THH:MM:SS.mmmZ`, when it is a real time of
/// day (no leap second).
#[inline]
pub(crate) fn timestamp_time_ms(b: &[u8; 24]) -> Option<i64> {
    // `DDTHH:MM`: `T` in byte 2, digits in 3-4 and 6-7, `:` in 5 (the `DD` is the date's).
    let hm = word_digits(word(b, 8), 0xFFFF_00FF_FF00_0000, 0x0000_3A00_0054_0000)?;
    // `:SS.mmmZ`: `:` in byte 0, digits in 1-2 and 4-6, `.` in 3, `Z` in 7.
    let sm = word_digits(word(b, 16), 0x00FF_FFFF_00FF_FF00, 0x5A00_0000_2E00_003A)?;
    let (hour, minute, second) = (pair(hm, 3), pair(hm, 6), pair(sm, 1));
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let milli = byte(sm, 4) * 100 + pair(sm, 5);
    Some(((hour * 60 + minute) * 60 + second) * 1000 + milli)
}

/// The eight bytes of `b` from `at`, byte `at` the least significant.
#[inline(always)]
fn word(b: &[u8; 24], at: usize) -> u64 {
    let mut eight = [0; 8];
    eight.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(eight)
}

/// `word` with its digit bytes (0xFF in `digits`) replaced by their values and its other bytes
/// zeroed, when the digit bytes are ASCII digits and each non-zero byte of `separators` is the
/// byte of `word` in its place (the bytes that are neither are not looked at).
#[inline(always)]
fn word_digits(word: u64, digits: u64, separators: u64) -> Option<u64> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    // 0x01 in each digit byte.
    let ones = digits & ONES;
    let text = word & digits;
    // A digit byte is 0x30..=0x39: its high nibble is 3, and still 3 after adding 6. The
    // addition cannot carry out of a byte whose high nibble is 3 (at most 0x3F + 6), and when
    // some high nibble is not 3 the first test already fails.
    let high = ones * 0xF0;
    let zeros = ones * 0x30;
    let separator_bytes = byte_mask(separators) & !digits;
    let fine = ((word & separator_bytes) == separators)
        & ((text & high) == zeros)
        & ((text.wrapping_add(ones * 6) & high) == zeros);
    fine.then(|| text - zeros)
}

/// 0xFF in every byte of `x` that is not zero.
#[inline(always)]
const fn byte_mask(x: u64) -> u64 {
    let mut mask = 0;
    let mut at = 0;
    while at < 64 {
        if (x >> at) & 0xFF != 0 {
            mask |= 0xFF << at;
        }
        at += 8;
    }
    mask
}

/// Byte `at` of a word of digit values.
#[inline(always)]
fn byte(digits: u64, at: u32) -> i64 {
    ((digits >> (8 * at)) & 0xFF) as i64
}

/// The two-digit number in bytes `at` and `at + 1` of a word of digit values.
#[inline(always)]
fn pair(digits: u64, at: u32) -> i64 {
    byte(digits, at) * 10 + byte(digits, at + 1)
}

/// The decimal number `digits` spell, when they are all ASCII digits.
// For `generate`'s defects and the ChokaQ import's times (`calendar_ms`).
#[cfg(any(test, feature = "generate", feature = "stream"))]
pub(crate) fn decimal(digits: &[u8]) -> Option<i64> {
    digits.iter().try_fold(0i64, |acc, &d| {
        d.is_ascii_digit().then(|| acc * 10 + i64::from(d - b'0'))
    })
}

/// Milliseconds since the epoch of `YYYY-MM-DD?HH:MM:SS` at the start of `b` (the separators
/// already checked) plus `milli`, when it is a real proleptic-Gregorian date and time of day
/// (no leap second).
#[cfg(any(test, feature = "stream"))]
pub(crate) fn calendar_ms(b: &[u8], milli: i64) -> Option<i64> {
    let (year, month, day) = (decimal(&b[0..4])?, decimal(&b[5..7])?, decimal(&b[8..10])?);
    let (hour, minute, second) = (
        decimal(&b[11..13])?,
        decimal(&b[14..16])?,
        decimal(&b[17..19])?,
    );
    if !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some(((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + milli)
}

/// Appends `ms` (milliseconds since the epoch, years 0000–9999) as `YYYY-MM-DDTHH:MM:SS.mmmZ`,
/// the inverse of [`parse_timestamp`].
///
/// ```
/// use rdq_envelope::envelope::formats::push_timestamp;
/// let mut out = Vec::new();
/// push_timestamp(&mut out, 1_714_564_800_123);
/// assert_eq!(out, b"2024-05-01T12:00:00.123Z");
/// ```
pub fn push_timestamp(out: &mut Vec<u8>, ms: i64) {
    out.extend_from_slice(&timestamp_bytes(ms));
}

/// `ms` as a timestamp (`YYYY-MM-DDTHH:MM:SS.mmmZ`), on the stack: its first 10 bytes are the
/// UTC day (`YYYY-MM-DD`).
pub(crate) fn timestamp_bytes(ms: i64) -> [u8; 24] {
    let days = ms.div_euclid(86_400_000);
    let in_day = ms.rem_euclid(86_400_000);
    let (year, month, day) = civil_from_days(days);
    let (hour, minute) = (in_day / 3_600_000, in_day / 60_000 % 60);
    let (second, milli) = (in_day / 1000 % 60, in_day % 1000);
    let two = |n: i64| [b'0' + (n / 10) as u8, b'0' + (n % 10) as u8];
    let [y0, y1] = two(year / 100);
    let [y2, y3] = two(year % 100);
    let [mo0, mo1] = two(month);
    let [d0, d1] = two(day);
    let [h0, h1] = two(hour);
    let [mi0, mi1] = two(minute);
    let [s0, s1] = two(second);
    let m0 = b'0' + (milli / 100) as u8;
    let [m1, m2] = two(milli % 100);
    [
        y0, y1, y2, y3, b'-', mo0, mo1, b'-', d0, d1, b'T', h0, h1, b':', mi0, mi1, b':', s0, s1,
        b'.', m0, m1, m2, b'Z',
    ]
}

/// Appends `ms` as a quoted timestamp, or `null` for `None`: a JSON value.
// For `generate` and the ChokaQ import.
#[cfg(any(test, feature = "generate", feature = "stream"))]
pub(crate) fn push_optional_timestamp(out: &mut Vec<u8>, ms: Option<i64>) {
    match ms {
        Some(ms) => {
            out.push(b'"');
            push_timestamp(out, ms);
            out.push(b'"');
        }
        None => out.extend_from_slice(b"null"),
    }
}

/// The proleptic-Gregorian date of a day number since 1970-01-01 (inverse of
/// `days_from_civil`, Howard Hinnant's algorithm).
pub(crate) fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic-Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Crockford base32 digit values by byte; 0xFF for bytes that are not canonical digits.
const CROCKFORD_VALUE: [u8; 256] = {
    let digits = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let mut table = [0xFF; 256];
    let mut i = 0;
    while i < digits.len() {
        table[digits[i] as usize] = i as u8;
        i += 1;
    }
    table
};

/// The 48-bit millisecond time of a canonical ULID (26 upper-case Crockford base32
/// characters, the first `0`–`7`), or `None` when `s` is not one.
///
/// ```
/// use rdq_envelope::envelope::formats::ulid_time_ms;
/// // 2024-05-01T12:00:00.000Z
/// assert_eq!(ulid_time_ms("01HWT0D7G0Q8V9W2R4T6Y8A0B2"), Some(1_714_564_800_000));
/// assert_eq!(ulid_time_ms("01arz3ndektsv4rrffq69g5fav"), None);
/// assert_eq!(ulid_time_ms("81ARZ3NDEKTSV4RRFFQ69G5FAV"), None);
/// ```
pub fn ulid_time_ms(s: &str) -> Option<u64> {
    ulid_bytes_time_ms(s.as_bytes())
}

/// [`ulid_time_ms`] of raw bytes.
#[inline]
pub(crate) fn ulid_bytes_time_ms(b: &[u8]) -> Option<u64> {
    if b.len() != 26 || !(b'0'..=b'7').contains(&b[0]) {
        return None;
    }
    let mut time = 0u64;
    for (i, &c) in b.iter().enumerate() {
        let digit = CROCKFORD_VALUE[usize::from(c)];
        if digit == 0xFF {
            return None;
        }
        if i < 10 {
            time = time << 5 | u64::from(digit);
        }
    }
    Some(time)
}

/// The 128-bit value of a canonical ULID (26 Crockford base32 characters, the first 0-7).
pub(crate) fn ulid_value(b: &[u8]) -> Option<u128> {
    if b.len() != 26 || !(b'0'..=b'7').contains(&b[0]) {
        return None;
    }
    b.iter().try_fold(0u128, |value, &c| {
        let digit = CROCKFORD_VALUE[usize::from(c)];
        (digit != 0xFF).then(|| value << 5 | u128::from(digit))
    })
}

/// `queue` and `handler_ref`: 1–240 characters, each of `[a-z0-9._-]`.
pub fn is_name(s: &str) -> bool {
    is_name_bytes(s.as_bytes())
}

/// [`is_name`] of bytes, the one definition both paths ask: the single pass reads a name's raw
/// bytes, which is sound because no character of a name can be spelled by an escape (a
/// backslash is not one of them, so an escaped name goes to the tape path).
#[inline]
pub(crate) fn is_name_bytes(b: &[u8]) -> bool {
    // A table, not a `matches!` of ranges: one load a byte on `validate`'s hot path.
    const NAME_BYTE: [bool; 256] = {
        let mut table = [false; 256];
        let mut b = 0;
        while b < 256 {
            let c = b as u8;
            table[b] = matches!(c, b'a'..=b'z' | b'0'..=b'9' | b'.' | b'_' | b'-');
            b += 1;
        }
        table
    };
    (1..=240).contains(&b.len()) && b.iter().all(|&c| NAME_BYTE[usize::from(c)])
}

/// `handler_version`: 1–240 bytes with no control character (Unicode Cc).
pub fn is_handler_version(s: &str) -> bool {
    is_handler_version_bytes(s.as_bytes())
}

/// [`is_handler_version`] of UTF-8 bytes: the control characters (Unicode Cc) are U+0000 to
/// U+001F, U+007F, and U+0080 to U+009F, which UTF-8 spells `C2 80` to `C2 9F`.
#[inline]
pub(crate) fn is_handler_version_bytes(b: &[u8]) -> bool {
    (1..=240).contains(&b.len())
        && !b.iter().any(|&c| c < 0x20 || c == 0x7F)
        && !b
            .windows(2)
            .any(|w| w[0] == 0xC2 && (0x80..=0x9F).contains(&w[1]))
}

/// RFC 9110 `tchar`, by byte: a table, since every byte of a content type is looked up.
const TCHAR: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'!' | b'#'
                    | b'$'
                    | b'%'
                    | b'&'
                    | b'\''
                    | b'*'
                    | b'+'
                    | b'-'
                    | b'.'
                    | b'^'
                    | b'_'
                    | b'`'
                    | b'|'
                    | b'~'
            );
        b += 1;
    }
    table
};

#[inline(always)]
fn is_tchar(b: u8) -> bool {
    TCHAR[usize::from(b)]
}

/// `payload_content_type`: at most 255 bytes of `token "/" token` then zero or more
/// `OWS ";" OWS token "=" (token / quoted-string)` (RFC 9110's pieces; no empty parameters).
///
/// ```
/// use rdq_envelope::envelope::formats::is_media_type;
/// assert!(is_media_type("application/json; charset=\"utf-8\""));
/// assert!(!is_media_type("text/plain;"));
/// ```
pub fn is_media_type(s: &str) -> bool {
    is_media_type_bytes(s.as_bytes())
}

/// [`is_media_type`] of raw bytes.
pub(crate) fn is_media_type_bytes(b: &[u8]) -> bool {
    if b.len() > 255 {
        return false;
    }
    let mut at = 0;
    let token = |at: &mut usize| {
        let start = *at;
        while *at < b.len() && is_tchar(b[*at]) {
            *at += 1;
        }
        *at > start
    };
    let ows = |at: &mut usize| {
        while *at < b.len() && matches!(b[*at], b' ' | b'\t') {
            *at += 1;
        }
    };
    if !token(&mut at) || b.get(at) != Some(&b'/') {
        return false;
    }
    at += 1;
    if !token(&mut at) {
        return false;
    }
    while at < b.len() {
        ows(&mut at);
        if b.get(at) != Some(&b';') {
            return false;
        }
        at += 1;
        ows(&mut at);
        if !token(&mut at) || b.get(at) != Some(&b'=') {
            return false;
        }
        at += 1;
        if b.get(at) == Some(&b'"') {
            if !quoted_string(b, &mut at) {
                return false;
            }
        } else if !token(&mut at) {
            return false;
        }
    }
    true
}

/// RFC 9110 quoted-string starting at the opening quote; obs-text (any byte ≥ 0x80) allowed.
fn quoted_string(b: &[u8], at: &mut usize) -> bool {
    *at += 1;
    while let Some(&c) = b.get(*at) {
        match c {
            b'"' => {
                *at += 1;
                return true;
            }
            b'\\' => match b.get(*at + 1) {
                Some(&q) if q == b'\t' || (0x20..=0x7E).contains(&q) || q >= 0x80 => *at += 2,
                _ => return false,
            },
            b'\t' | 0x20..=0x7E | 0x80..=0xFF => *at += 1,
            _ => return false,
        }
    }
    false
}

/// `payload_ref.uri` (v2): a scheme, `:`, then RFC 3986 unreserved or reserved characters or
/// `%HH` escapes (a fragment is allowed; white space and non-ASCII are not).
///
/// ```
/// use rdq_envelope::envelope::formats::is_payload_uri;
/// assert!(is_payload_uri("s3://bucket/key%20x?v=1#frag"));
/// assert!(!is_payload_uri("s3://bucket/a b"));
/// assert!(!is_payload_uri("1s3:x"));
/// ```
pub fn is_payload_uri(s: &str) -> bool {
    is_payload_uri_bytes(s.as_bytes())
}

/// [`is_payload_uri`] of raw bytes.
pub(crate) fn is_payload_uri_bytes(b: &[u8]) -> bool {
    let Some(colon) = b.iter().position(|&c| c == b':') else {
        return false;
    };
    let (scheme, rest) = (&b[..colon], &b[colon + 1..]);
    let scheme_ok = scheme.first().is_some_and(u8::is_ascii_alphabetic)
        && scheme
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'));
    if !scheme_ok {
        return false;
    }
    let mut i = 0;
    while i < rest.len() {
        let c = rest[i];
        if c == b'%' {
            let hex = rest.get(i + 1..i + 3);
            if !hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                return false;
            }
            i += 3;
            continue;
        }
        let allowed = c.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=".contains(&c);
        if !allowed {
            return false;
        }
        i += 1;
    }
    true
}

/// `payload_ref.sha256`: exactly 64 lower-case hex digits.
pub fn is_sha256_hex(s: &str) -> bool {
    is_sha256_hex_bytes(s.as_bytes())
}

/// [`is_sha256_hex`] of raw bytes.
pub(crate) fn is_sha256_hex_bytes(b: &[u8]) -> bool {
    b.len() == 64 && b.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The truncation rule of `message` and `stack`: at most `limit` bytes, or a prefix of
/// `limit`−3 to `limit` bytes followed by [`TRUNCATION_MARKER`].
///
/// ```
/// use rdq_envelope::envelope::formats::within_limit;
/// assert!(within_limit("abcd", 4));
/// assert!(!within_limit("abcde", 4));
/// assert!(within_limit("abcd…[truncated]", 4));
/// assert!(!within_limit("a…[truncated]", 5));
/// ```
pub fn within_limit(s: &str, limit: usize) -> bool {
    if s.len() <= limit {
        return true;
    }
    match s.strip_suffix(TRUNCATION_MARKER) {
        Some(kept) => kept.len() <= limit && kept.len() + 3 >= limit,
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_the_strict_profile() {
        assert_eq!(parse_timestamp("1970-01-01T00:00:00.000Z"), Some(0));
        assert_eq!(parse_timestamp("1969-12-31T23:59:59.999Z"), Some(-1));
        assert!(parse_timestamp("0000-01-01T00:00:00.000Z").is_some());
        assert!(parse_timestamp("9999-12-31T23:59:59.999Z").is_some());
        assert!(parse_timestamp("2000-02-29T12:00:00.000Z").is_some());
        assert_eq!(
            parse_timestamp("2024-03-01T00:00:00.000Z").unwrap()
                - parse_timestamp("2024-02-28T00:00:00.000Z").unwrap(),
            2 * 86_400_000
        );
        for bad in [
            "1900-02-29T00:00:00.000Z",
            "2023-02-29T00:00:00.000Z",
            "2024-04-31T00:00:00.000Z",
            "2024-00-10T00:00:00.000Z",
            "2024-13-10T00:00:00.000Z",
            "2024-01-00T00:00:00.000Z",
            "2024-01-01T24:00:00.000Z",
            "2024-01-01T23:60:00.000Z",
            "2024-01-01T23:59:60.000Z",
            "2024-01-01t00:00:00.000Z",
            "2024-01-01T00:00:00.000z",
            "2024-01-01T00:00:00.00Z",
            "2024-01-01T00:00:00.0000Z",
            "2024-01-01T00:00:00Z",
            "2024-01-01T00:00:00.000+00:00",
            "2024-01-01 00:00:00.000Z",
            "+024-01-01T00:00:00.000Z",
            "2024-1-01T00:00:00.000Z",
            "２024-01-01T00:00:00.000Z",
            "",
        ] {
            assert_eq!(parse_timestamp(bad), None, "{bad}");
        }
    }

    #[test]
    fn timestamps_round_trip() {
        let mut out = Vec::new();
        for ms in [
            0,
            -1,
            951_782_400_000,
            1_709_164_800_000,
            253_402_300_799_999,
            -62_167_219_200_000,
        ] {
            out.clear();
            push_timestamp(&mut out, ms);
            let text = std::str::from_utf8(&out).unwrap();
            assert_eq!(parse_timestamp(text), Some(ms), "{text}");
        }
    }

    #[test]
    fn ulids_are_canonical_only() {
        assert_eq!(ulid_time_ms("00000000000000000000000000"), Some(0));
        assert_eq!(
            ulid_time_ms("7ZZZZZZZZZZZZZZZZZZZZZZZZZ"),
            Some((1 << 48) - 1)
        );
        for bad in [
            "8ZZZZZZZZZZZZZZZZZZZZZZZZZ",
            "01ARZ3NDEKTSV4RRFFQ69G5FA",
            "01ARZ3NDEKTSV4RRFFQ69G5FAVX",
            "01ARZ3NDEKTSV4RRFFQ69G5FAI",
            "01ARZ3NDEKTSV4RRFFQ69G5FAL",
            "01ARZ3NDEKTSV4RRFFQ69G5FAO",
            "01ARZ3NDEKTSV4RRFFQ69G5FAU",
            "01ARZ3NDEKTSV4RRFFQ69G5Fav",
        ] {
            assert_eq!(ulid_time_ms(bad), None, "{bad}");
        }
    }

    #[test]
    fn names() {
        assert!(is_name("billing.invoices-v2_x"));
        assert!(is_name(&"a".repeat(240)));
        assert!(!is_name(&"a".repeat(241)));
        assert!(!is_name(""));
        assert!(!is_name("Billing"));
        assert!(!is_name("a b"));
        assert!(!is_name("é"));
        assert!(is_handler_version("1.2.3 (build é)"));
        assert!(is_handler_version(&"é".repeat(120)));
        assert!(!is_handler_version(&"é".repeat(121)));
        assert!(!is_handler_version(""));
        assert!(!is_handler_version("a\u{0}"));
        assert!(!is_handler_version("a\u{7f}"));
        assert!(!is_handler_version("a\u{85}"));
        assert!(is_handler_version("a\u{a0}"));
    }

    #[test]
    fn media_types() {
        for ok in [
            "application/json",
            "text/plain;charset=utf-8",
            "text/plain ; charset=utf-8;\tformat=flowed",
            "application/vnd.rdq+json; v=\"a \\\" b\"",
            "x/y; q=\"é\"",
            "a/b;c=\"\"",
        ] {
            assert!(is_media_type(ok), "{ok}");
        }
        for bad in [
            "",
            "json",
            "text/",
            "/plain",
            "text/plain;",
            "text/plain; ",
            "text/plain ",
            " text/plain",
            "text /plain",
            "text/plain; charset",
            "text/plain; charset=",
            "text/plain; charset = utf-8",
            "text/plain; a=\"unterminated",
            "text/plain; a=é",
            "text/plain; a=\"\u{1}\"",
            "té/plain",
        ] {
            assert!(!is_media_type(bad), "{bad}");
        }
        let long = format!("a/{}", "b".repeat(253));
        assert!(is_media_type(&long));
        assert!(!is_media_type(&format!("{long}b")));
    }

    #[test]
    fn uris_and_digests() {
        assert!(is_payload_uri("s3:"));
        assert!(is_payload_uri("a+b-c.d:x"));
        for bad in [
            "", ":x", "s3//x", "s3:%2", "s3:%zz", "s3:é", "s3:a\tb", "s3:<x>", "s_3:x",
        ] {
            assert!(!is_payload_uri(bad), "{bad}");
        }
        assert!(is_sha256_hex(&"ab".repeat(32)));
        assert!(!is_sha256_hex(&"AB".repeat(32)));
        assert!(!is_sha256_hex(&"ab".repeat(31)));
    }

    #[test]
    fn truncation_edges() {
        let limit = 8;
        let m = TRUNCATION_MARKER;
        assert!(within_limit(&"x".repeat(limit), limit));
        assert!(!within_limit(&"x".repeat(limit + 1), limit));
        for kept in limit - 3..=limit {
            assert!(
                within_limit(&format!("{}{m}", "x".repeat(kept)), limit),
                "{kept}"
            );
        }
        assert!(!within_limit(
            &format!("{}{m}", "x".repeat(limit - 4)),
            limit
        ));
        assert!(!within_limit(
            &format!("{}{m}", "x".repeat(limit + 1)),
            limit
        ));
    }
}

#[cfg(test)]
mod byte_form_tests {
    use super::*;

    /// The timestamp rule spelled plainly: the shape, then the calendar (as `calendar_ms`,
    /// which the ChokaQ import shares, reads it).
    fn parse_plainly(b: &[u8]) -> Option<i64> {
        let shape = b.len() == 24 && [b[4], b[7], b[10], b[13], b[16], b[19], b[23]] == *b"--T::.Z";
        if !shape {
            return None;
        }
        calendar_ms(b, decimal(&b[20..23])?)
    }

    #[test]
    fn the_word_at_a_time_timestamps_equal_the_bytewise_ones() {
        // Every byte of valid timestamps replaced by every byte value (each separator and digit
        // by its neighbours in the ASCII table, by 0x80 and up, by the other separators), then
        // random bytes drawn from the timestamp alphabet.
        let valid = [
            *b"2024-05-01T12:00:06.704Z",
            *b"0000-01-01T00:00:00.000Z",
            *b"9999-12-31T23:59:59.999Z",
            *b"2000-02-29T19:09:39.909Z",
            *b"1900-02-28T00:00:00.000Z",
        ];
        let mut checked = 0;
        for text in valid {
            assert!(parse_plainly(&text).is_some());
            for at in 0..24 {
                for value in 0..=255u8 {
                    let mut b = text;
                    b[at] = value;
                    let fast = timestamp_days(&b).zip(timestamp_time_ms(&b));
                    let fast = fast.map(|(days, ms)| days * 86_400_000 + ms);
                    assert_eq!(fast, parse_plainly(&b), "{:?}", String::from_utf8_lossy(&b));
                    checked += 1;
                }
            }
        }
        let alphabet = b"0123456789-T:.Z/;Sz\x80";
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut valid_drawn = 0;
        for _ in 0..300_000 {
            let mut b = valid[0];
            for byte in &mut b {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                // Mostly the valid byte, sometimes another: near misses of the shape.
                if state.is_multiple_of(5) {
                    *byte = alphabet[(state >> 8) as usize % alphabet.len()];
                }
            }
            let fast = timestamp_days(&b).zip(timestamp_time_ms(&b));
            let fast = fast.map(|(days, ms)| days * 86_400_000 + ms);
            assert_eq!(fast, parse_plainly(&b), "{:?}", String::from_utf8_lossy(&b));
            valid_drawn += usize::from(fast.is_some());
        }
        assert_eq!(checked, valid.len() * 24 * 256);
        // Both verdicts were drawn, many times.
        assert!((1_000..299_000).contains(&valid_drawn), "{valid_drawn}");
    }

    #[test]
    fn the_split_parser_agrees_with_the_plain_rule() {
        // Every field at and around its bounds, and bytes next to the digits.
        let years = [
            "0000", "1969", "1970", "2000", "2023", "2024", "2100", "9999", "2O24", "-024",
        ];
        let months = ["00", "01", "02", "09", "10", "12", "13", "1/", ":1"];
        let days = ["00", "01", "28", "29", "30", "31", "32", "3:"];
        let times = [
            "00:00:00.000",
            "23:59:59.999",
            "24:00:00.000",
            "12:60:00.000",
            "12:00:60.000",
            "12:00:00.00/",
            "12:00:00:000",
            "1 :00:00.000",
        ];
        let mut checked = 0;
        for y in years {
            for m in months {
                for d in days {
                    for t in times {
                        for (sep, end) in [("T", "Z"), ("t", "Z"), ("T", "z"), (" ", "Z")] {
                            let s = format!("{y}-{m}-{d}{sep}{t}{end}");
                            assert_eq!(parse_timestamp(&s), parse_plainly(s.as_bytes()), "{s}");
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(checked > 10_000);
        assert_eq!(
            parse_timestamp("2024-02-29T00:00:00.000Z"),
            Some(1_709_164_800_000)
        );
    }

    #[test]
    fn handler_version_bytes_agree_with_the_char_rule() {
        for c in ('\0'..='\u{3ff}').chain(['\u{2028}', '\u{feff}', '\u{10ffff}']) {
            for s in [format!("{c}"), format!("v1{c}"), format!("{c}\u{85}x")] {
                let by_chars = (1..=240).contains(&s.len()) && !s.chars().any(char::is_control);
                assert_eq!(is_handler_version(&s), by_chars, "{s:?}");
            }
        }
    }
}
