//! 1 → 2 (docs/migrations.md#1--2): `envelope_version` 2; `rdq.source` and `rdq.submitted_by` move
//! out of `headers` into a new `origin` right after it (in their order, values byte for byte);
//! `duration_ms` goes in right after every attempt's `finished_at`. A v1 envelope that already has
//! a top-level `origin` or an attempt's `duration_ms` (unknown fields in v1) is refused with
//! `MIGRATION_CONFLICT`: the upgrade would overwrite them.

use super::{spans, Context, Top};
use crate::diagnostic::{push_capped, Diagnostic, ErrorCode};
use crate::envelope::formats::parse_timestamp;
use crate::json::Value;

/// The headers that move, and their members inside `origin`.
const MOVED: [(&str, &[u8]); 2] = [
    ("rdq.source", b"\"source\":"),
    ("rdq.submitted_by", b"\"submitted_by\":"),
];

pub(super) fn step(cx: &mut Context<'_>) -> bool {
    let top = cx.top();
    let before = cx.errors.len();
    if top.origin.is_some() {
        cx.errors.push(conflict(
            "/origin".to_owned(),
            "this v1 envelope has an unknown field origin, which version 2 would overwrite",
        ));
    }
    // Edits are only kept when the step succeeds, so conflicts can be found on the way.
    if let Some((_, attempts)) = top.attempts {
        insert_durations(cx, attempts);
    }
    if cx.errors.len() > before {
        return false;
    }
    cx.set_version(&top, 2);
    move_headers_to_origin(cx, &top);
    true
}

#[cold]
fn conflict(path: String, message: &str) -> Diagnostic {
    Diagnostic::new(ErrorCode::MigrationConflict, path, message)
}

fn move_headers_to_origin(cx: &mut Context<'_>, top: &Top<'_>) {
    // `precondition` saw it.
    let Some((_, headers)) = top.headers else {
        return;
    };
    let (_, after_headers) = spans::of(headers, &cx.scratch.nodes);
    spans::members(headers, &cx.scratch.nodes, &mut cx.scratch.inner);
    let moved = |key: &str| MOVED.iter().position(|(name, _)| *name == key);

    let edits = &mut cx.scratch.edits;
    edits.insert(after_headers, &[b",\"origin\":{"]);
    let removed = &mut cx.scratch.removed;
    removed.clear();
    let mut first = true;
    for ((key, _), span) in headers.members().zip(cx.scratch.inner.iter()) {
        let m = moved(key);
        if let Some(m) = m {
            let separator: &[u8] = if first { b"" } else { b"," };
            first = false;
            let value = &cx.line[span.value_start..span.value_end];
            edits.insert(after_headers, &[separator, MOVED[m].1, value]);
        }
        removed.push(m.is_some());
    }
    edits.insert(after_headers, &[b"}"]);
    edits.remove_members(&cx.scratch.inner, |i| removed[i]);
}

/// Inserts every attempt's `duration_ms`, or reports a conflict for one that has it already.
fn insert_durations(cx: &mut Context<'_>, attempts: Value<'_>) {
    for (i, attempt) in attempts.elements().enumerate() {
        let (mut started, mut finished, mut has_duration) = (None, None, false);
        for (key, value) in attempt.members() {
            match key {
                "started_at" => started = Some(value),
                "finished_at" => finished = Some(value),
                "duration_ms" => has_duration = true,
                _ => {}
            }
        }
        if has_duration {
            push_capped(cx.errors, ErrorCode::MigrationConflict, || {
                conflict(
                    format!("/attempts/{i}/duration_ms"),
                    "this attempt has an unknown field duration_ms, which version 2 would overwrite",
                )
            });
            continue;
        }
        // `precondition` saw it.
        let Some(finished) = finished else { continue };
        let (_, end) = spans::of(finished, &cx.scratch.nodes);
        let ms = |v: Option<Value<'_>>| v.and_then(|v| v.as_str()).and_then(parse_timestamp);
        match (ms(started), ms(Some(finished))) {
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
