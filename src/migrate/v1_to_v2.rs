//! 1 → 2 (ENVELOPE.md §5): `envelope_version` 2; `rdq.source` and `rdq.submitted_by` move out of
//! `headers` into a new `origin` right after it (in their order, values byte for byte);
//! `duration_ms` goes in right after every attempt's `finished_at`. A v1 envelope that already
//! has a top-level `origin` or an attempt's `duration_ms` (unknown fields in v1) is refused
//! with `MIGRATION_CONFLICT`: the upgrade would overwrite them.

use super::{spans, Context};
use crate::diagnostic::{Diagnostic, ErrorCode};
use crate::envelope::formats::parse_timestamp;

/// The headers that move, and their members inside `origin`.
const MOVED: [(&str, &[u8]); 2] = [
    ("rdq.source", b"\"source\":"),
    ("rdq.submitted_by", b"\"submitted_by\":"),
];

pub(super) fn step(cx: &mut Context<'_>) -> bool {
    if !no_conflicts(cx) {
        return false;
    }
    cx.set_version(2);
    move_headers_to_origin(cx);
    insert_durations(cx);
    true
}

fn no_conflicts(cx: &mut Context<'_>) -> bool {
    let before = cx.errors.len();
    if cx.root.get("origin").is_some() {
        cx.errors.push(conflict(
            "/origin".to_owned(),
            "this v1 envelope has an unknown field origin, which version 2 would overwrite",
        ));
    }
    if let Some(attempts) = cx.root.get("attempts") {
        for (i, attempt) in attempts.elements().enumerate() {
            if attempt.get("duration_ms").is_some() {
                cx.errors.push(conflict(
                    format!("/attempts/{i}/duration_ms"),
                    "this attempt has an unknown field duration_ms, which version 2 would overwrite",
                ));
            }
        }
    }
    cx.errors.len() == before
}

#[cold]
fn conflict(path: String, message: &str) -> Diagnostic {
    Diagnostic::new(ErrorCode::MigrationConflict, path, message)
}

fn move_headers_to_origin(cx: &mut Context<'_>) {
    let (_, headers) = cx
        .top_member("headers")
        .expect("a valid v1 envelope has headers");
    let (_, after_headers) = spans::of(headers, &cx.scratch.nodes);
    spans::members(headers, &cx.scratch.nodes, &mut cx.scratch.inner);
    let moved = |key: &str| MOVED.iter().position(|(name, _)| *name == key);

    let edits = &mut cx.scratch.edits;
    edits.insert(after_headers, &[b",\"origin\":{"]);
    let mut first = true;
    for ((key, _), span) in headers.members().zip(cx.scratch.inner.iter()) {
        if let Some(m) = moved(key) {
            let separator: &[u8] = if first { b"" } else { b"," };
            first = false;
            let value = &cx.line[span.value_start..span.value_end];
            edits.insert(after_headers, &[separator, MOVED[m].1, value]);
        }
    }
    edits.insert(after_headers, &[b"}"]);
    let removed = &mut cx.scratch.removed;
    removed.clear();
    removed.extend(headers.members().map(|(key, _)| moved(key).is_some()));
    edits.remove_members(&cx.scratch.inner, |i| removed[i]);
}

fn insert_durations(cx: &mut Context<'_>) {
    let Some((_, attempts)) = cx.top_member("attempts") else {
        return;
    };
    for attempt in attempts.elements() {
        let finished = attempt
            .get("finished_at")
            .expect("a valid attempt has finished_at");
        let (_, end) = spans::of(finished, &cx.scratch.nodes);
        let started = attempt.get("started_at").and_then(|v| v.as_str());
        match (
            started.and_then(parse_timestamp),
            finished.as_str().and_then(parse_timestamp),
        ) {
            (Some(started), Some(finished)) => {
                cx.scratch
                    .edits
                    .insert_number(end, b",\"duration_ms\":", finished - started);
            }
            // In flight: `finished_at` is null (a valid line has no other case).
            _ => cx.scratch.edits.insert(end, &[b",\"duration_ms\":null"]),
        }
    }
}
