//! The realistic defects `gen --invalid-rate` mixes in: each spoils a good line so that the
//! validator reports exactly its code.

use std::ops::Range;

use memchr::memmem;

use super::Generator;
use crate::diagnostic::ErrorCode;
use crate::envelope::formats::decimal;

/// The defects [`Generator`] can mix in, each with the code it must draw.
pub(super) const DEFECTS: &[ErrorCode] = &[
    ErrorCode::MalformedJson,
    ErrorCode::InvalidUtf8,
    ErrorCode::NotAnObject,
    ErrorCode::DuplicateKey,
    ErrorCode::NestingTooDeep,
    ErrorCode::MissingField,
    ErrorCode::WrongType,
    ErrorCode::OutOfRange,
    ErrorCode::UnsupportedVersion,
    ErrorCode::InvalidId,
    ErrorCode::InvalidName,
    ErrorCode::InvalidBase64,
    ErrorCode::InvalidContentType,
    ErrorCode::PayloadRefReserved,
    ErrorCode::InvalidPayloadRef,
    ErrorCode::InvalidHeader,
    ErrorCode::UnknownStatus,
    ErrorCode::UnknownOutcome,
    ErrorCode::InvalidTimestamp,
    ErrorCode::FieldTooLong,
    ErrorCode::BadAttempt,
    ErrorCode::InconsistentState,
];

impl Generator {
    /// Applies `code`'s defect to the line at `out[start..]`; false when the line has nothing
    /// the defect can spoil (then it is left as it was).
    pub(super) fn spoil(&mut self, out: &mut Vec<u8>, start: usize, code: ErrorCode) -> bool {
        let v2 = self.options.version != 1;
        let line = &out[start..];
        let find = |needle: &[u8]| memmem::find(line, needle).map(|at| start + at);
        let edit = |out: &mut Vec<u8>, range: Range<usize>, with: &[u8]| {
            out.splice(range, with.iter().copied());
        };
        match code {
            ErrorCode::MalformedJson => {
                // An export cut short: keep at least half, and never split a UTF-8 character
                // (that would be INVALID_UTF8 instead).
                let len = out.len() - start;
                let mut cut = start + len / 2 + self.below(len / 2);
                while out[cut] & 0xC0 == 0x80 {
                    cut -= 1;
                }
                out.truncate(cut);
            }
            ErrorCode::InvalidUtf8 => {
                // A tenant written by a Latin-1 client: `é` as the lone byte 0xE9.
                let Some(at) = find(b"\"tenant\":\"") else {
                    return false;
                };
                edit(out, at + 10..at + 10, b"caf\xE9-");
            }
            ErrorCode::NotAnObject => {
                out.insert(start, b'[');
                out.push(b']');
            }
            ErrorCode::DuplicateKey => {
                // A hand-patched line: the new status added, the old one left in place.
                out.pop();
                out.extend_from_slice(b",\"st\\u0061tus\":\"PENDING\"}");
            }
            ErrorCode::NestingTooDeep => {
                out.pop();
                out.extend_from_slice(b",\"x_trace\":");
                out.extend(std::iter::repeat_n(b'[', 200));
                out.extend(std::iter::repeat_n(b']', 200));
                out.push(b'}');
            }
            ErrorCode::MissingField => {
                let Some(at) = find(b",\"created_at\":\"") else {
                    return false;
                };
                // `,"created_at":"` (15 bytes), the timestamp (24) and its closing quote.
                edit(out, at..at + 40, b"");
            }
            ErrorCode::WrongType => {
                let Some(digits) = integer_after(out, start, b"\"attempt_count\":") else {
                    return false;
                };
                out.insert(digits.end, b'"');
                out.insert(digits.start, b'"');
            }
            ErrorCode::OutOfRange => {
                let Some(digits) = integer_after(out, start, b"\"redrive_count\":") else {
                    return false;
                };
                edit(out, digits, b"4294967296");
            }
            ErrorCode::UnsupportedVersion => {
                let Some(at) = find(b"\"envelope_version\":") else {
                    return false;
                };
                edit(out, at + 19..at + 20, b"3");
            }
            ErrorCode::InvalidId => {
                let Some(at) = find(b"\"id\":\"") else {
                    return false;
                };
                out[at + 6..at + 32].make_ascii_lowercase();
            }
            ErrorCode::InvalidName => {
                let Some(at) = find(b"\"queue\":\"") else {
                    return false;
                };
                out[at + 9].make_ascii_uppercase();
            }
            ErrorCode::InvalidBase64 => {
                // A payload wrapped at 76 columns by a MIME encoder.
                let Some(at) = find(b"\"payload\":\"") else {
                    return false;
                };
                let wrap = at + 11 + 60;
                edit(out, wrap..wrap, b"\\r\\n");
            }
            ErrorCode::InvalidContentType => {
                let Some(at) = find(b"\"payload_content_type\":\"application/json") else {
                    return false;
                };
                let end = at + 40;
                let close = end + out[end..].iter().position(|&b| b == b'"').unwrap_or(0);
                edit(out, end..close, b";");
            }
            ErrorCode::PayloadRefReserved if !v2 => {
                let Some(at) = find(b"\"payload_ref\":null") else {
                    return false;
                };
                edit(out, at + 14..at + 18, b"{\"uri\":\"s3://legacy/blob\"}");
            }
            ErrorCode::InvalidPayloadRef if v2 => {
                let Some(at) = find(b"\"payload_ref\":null") else {
                    return false;
                };
                edit(out, at + 14..at + 18, b"\"s3://rdq-payloads/blob.json\"");
            }
            ErrorCode::PayloadRefReserved | ErrorCode::InvalidPayloadRef => return false,
            ErrorCode::InvalidHeader => {
                let Some(at) = find(b"\"headers\":{") else {
                    return false;
                };
                let with: &[u8] = if v2 {
                    b"\"rdq.source\":\"legacy-importer\","
                } else {
                    b"\"\":\"orphan value\","
                };
                edit(out, at + 11..at + 11, with);
            }
            ErrorCode::UnknownStatus => {
                return replace_string_value(out, start, b"\"status\":\"", b"FAILED");
            }
            ErrorCode::UnknownOutcome => {
                return replace_string_value(out, start, b"\"outcome\":\"", b"TIMEOUT");
            }
            ErrorCode::InvalidTimestamp => {
                // A producer that writes offsets instead of `Z`.
                let Some(at) = find(b"\"created_at\":\"") else {
                    return false;
                };
                let zone = at + 14 + 23;
                edit(out, zone..zone + 1, b"+00:00");
            }
            ErrorCode::FieldTooLong => {
                // An upstream's whole HTML error page as the message, not truncated.
                let Some(at) = find(b"\"message\":\"") else {
                    return false;
                };
                let value = at + 11;
                let page =
                    b"<html><body><h1>502 Bad Gateway</h1><p>upstream closed</p></body></html>";
                let repeated: Vec<u8> = page.iter().copied().cycle().take(5_000).collect();
                edit(out, value..value, &repeated);
            }
            ErrorCode::BadAttempt => {
                let Some(at) = find(b"{\"attempt_no\":1,") else {
                    return false;
                };
                edit(out, at + 14..at + 15, b"2");
            }
            ErrorCode::InconsistentState => {
                let Some(digits) = integer_after(out, start, b"\"attempt_count\":") else {
                    return false;
                };
                let count = decimal(&out[digits.clone()]).unwrap_or(0);
                edit(out, digits, (count + 10).to_string().as_bytes());
            }
            _ => return false,
        }
        true
    }
}

/// Where the digits of the integer right after `member` (a key and its colon) lie, in the
/// line at `out[start..]`.
fn integer_after(out: &[u8], start: usize, member: &[u8]) -> Option<Range<usize>> {
    let at = start + memmem::find(&out[start..], member)? + member.len();
    let len = out[at..].iter().take_while(|b| b.is_ascii_digit()).count();
    Some(at..at + len)
}

/// Replaces the text of the first string value that follows `member` (a key, its colon and
/// the opening quote) in the line at `out[start..]`; false when there is none.
fn replace_string_value(out: &mut Vec<u8>, start: usize, member: &[u8], with: &[u8]) -> bool {
    let Some(at) = memmem::find(&out[start..], member) else {
        return false;
    };
    let value = start + at + member.len();
    let close = value + out[value..].iter().position(|&b| b == b'"').unwrap_or(0);
    out.splice(value..close, with.iter().copied());
    true
}
