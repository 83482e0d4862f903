//! 2 → 1 (docs/migrations.md#2--1), the inverse of 1 → 2: `envelope_version` 1; `origin` goes, its
//! `source` and `submitted_by` are appended to `headers` as `rdq.source` and
//! `rdq.submitted_by` in `origin`'s order (values byte for byte); every attempt's `duration_ms`
//! goes. Refused with `CANNOT_DOWNGRADE`, naming each value that blocks it, for what version 1
//! cannot hold: status `CANCELLED`, a set `payload_ref`, unknown fields inside `origin`.

use super::edits::Edits;
use crate::diagnostic::{pointer, push_capped, quoted, Diagnostic, ErrorCode};
use crate::envelope::shape::{removal, Shape, ORIGIN_MEMBERS};
use crate::json::Value;

/// The headers `origin`'s members become, by their index in [`ORIGIN_MEMBERS`].
const HEADER_KEYS: [&[u8]; 2] = [b"\"rdq.source\":", b"\"rdq.submitted_by\":"];

/// Pushes a `CANNOT_DOWNGRADE` for every value version 1 cannot hold; `true` when there is
/// one. Read from the tape: the reasons name keys as the tape spells them.
pub(super) fn refused(root: Value<'_>, errors: &mut Vec<Diagnostic>) -> bool {
    let before = errors.len();
    if root.get("status").and_then(|v| v.as_str()) == Some("CANCELLED") {
        errors.push(blocked(
            "/status".to_owned(),
            "status CANCELLED does not exist in version 1".to_owned(),
        ));
    }
    if root.get("payload_ref").is_some_and(|v| !v.is_null()) {
        errors.push(blocked(
            "/payload_ref".to_owned(),
            "a claim-check payload_ref cannot be written in version 1, where it is reserved"
                .to_owned(),
        ));
    }
    if let Some(origin) = root.get("origin") {
        for (key, _) in origin.members() {
            if !ORIGIN_MEMBERS.contains(&key) {
                push_capped(errors, ErrorCode::CannotDowngrade, || {
                    blocked(
                        pointer("/origin", key),
                        format!(
                            "origin member {} has no place in version 1, which keeps only \
                             origin.source and origin.submitted_by (as headers)",
                            quoted(key)
                        ),
                    )
                });
            }
        }
    }
    errors.len() > before
}

#[cold]
fn blocked(path: String, message: String) -> Diagnostic {
    Diagnostic::new(ErrorCode::CannotDowngrade, path, message)
}

pub(super) fn edits(shape: &Shape, line: &[u8], edits: &mut Edits) {
    let (start, end) = shape.version;
    edits.replace_with_number(start..end, 1);
    move_origin_to_headers(shape, line, edits);
    for attempt in &shape.attempts {
        if let Some((start, end)) = attempt.duration_removal {
            edits.delete(start..end);
        }
    }
}

fn move_origin_to_headers(shape: &Shape, line: &[u8], edits: &mut Edits) {
    // `precondition` saw it.
    let Some(origin_at) = shape.origin_at else {
        return;
    };
    // Appended after the last header, or right after `{` when there is none.
    let (append_at, mut first) = match shape.header_members.last() {
        Some(last) => (last.value_end, false),
        None => (shape.headers.0 + 1, true),
    };
    for &(m, (start, end)) in &shape.origin_moves {
        let separator: &[u8] = if first { b"" } else { b"," };
        first = false;
        edits.insert(append_at, &[separator, HEADER_KEYS[m], &line[start..end]]);
    }
    let (start, end) = removal(&shape.top, origin_at);
    edits.delete(start..end);
}
