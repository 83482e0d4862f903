//! 1 → 2 (docs/migrations.md#1--2): `envelope_version` 2; `rdq.source` and `rdq.submitted_by` move
//! out of `headers` into a new `origin` right after it (in their order, values byte for byte);
//! `duration_ms` goes in right after every attempt's `finished_at`. A v1 envelope that already has
//! a top-level `origin` or an attempt's `duration_ms` (unknown fields in v1) is refused with
//! `MIGRATION_CONFLICT`: the upgrade would overwrite them.

use super::edits::Edits;
use crate::diagnostic::{push_capped, Diagnostic, ErrorCode};
use crate::envelope::shape::Shape;

/// `origin`'s members, for the headers that move, by their index in
/// [`MOVED_HEADERS`](crate::envelope::shape::MOVED_HEADERS).
const ORIGIN_KEYS: [&[u8]; 2] = [b"\"source\":", b"\"submitted_by\":"];

/// Whether the upgrade would overwrite a member: a top-level `origin` or an attempt's
/// `duration_ms`.
pub(super) fn would_overwrite(shape: &Shape) -> bool {
    shape.origin_at.is_some() || shape.attempts.iter().any(|a| a.duration_removal.is_some())
}

/// Pushes a `MIGRATION_CONFLICT` for every member the upgrade would overwrite; `true` when
/// there is one.
pub(super) fn refused(shape: &Shape, errors: &mut Vec<Diagnostic>) -> bool {
    if !would_overwrite(shape) {
        return false;
    }
    if shape.origin_at.is_some() {
        errors.push(conflict(
            "/origin".to_owned(),
            "this v1 envelope has an unknown field origin, which version 2 would overwrite",
        ));
    }
    for (i, attempt) in shape.attempts.iter().enumerate() {
        if attempt.duration_removal.is_some() {
            push_capped(errors, ErrorCode::MigrationConflict, || {
                conflict(
                    format!("/attempts/{i}/duration_ms"),
                    "this attempt has an unknown field duration_ms, which version 2 would overwrite",
                )
            });
        }
    }
    true
}

#[cold]
fn conflict(path: String, message: &str) -> Diagnostic {
    Diagnostic::new(ErrorCode::MigrationConflict, path, message)
}

pub(super) fn edits(shape: &Shape, line: &[u8], edits: &mut Edits) {
    for attempt in &shape.attempts {
        // `precondition` saw it.
        let Some(end) = attempt.finished_end else {
            continue;
        };
        match attempt.duration_ms {
            Some(ms) => edits.insert_number(end, b",\"duration_ms\":", ms),
            // In flight: `finished_at` is null (a valid line has no other case).
            None => edits.insert(end, &[b",\"duration_ms\":null"]),
        }
    }
    let (start, end) = shape.version;
    edits.replace_with_number(start..end, 2);
    move_headers_to_origin(shape, line, edits);
}

fn move_headers_to_origin(shape: &Shape, line: &[u8], edits: &mut Edits) {
    let after_headers = shape.headers.1;
    edits.insert(after_headers, &[b",\"origin\":{"]);
    let mut first = true;
    for (span, moved) in shape.header_members.iter().zip(&shape.header_moves) {
        if let Some(m) = *moved {
            let separator: &[u8] = if first { b"" } else { b"," };
            first = false;
            let value = &line[span.value_start..span.value_end];
            edits.insert(after_headers, &[separator, ORIGIN_KEYS[m], value]);
        }
    }
    edits.insert(after_headers, &[b"}"]);
    edits.remove_members(&shape.header_members, |i| shape.header_moves[i].is_some());
}
