//! 2 → 1 (docs/migrations.md#2--1), the inverse of 1 → 2: `envelope_version` 1; `origin` goes, its
//! `source` and `submitted_by` are appended to `headers` as `rdq.source` and
//! `rdq.submitted_by` in `origin`'s order (values byte for byte); every attempt's `duration_ms`
//! goes. Refused with `CANNOT_DOWNGRADE`, naming each value that blocks it, for what version 1
//! cannot hold: status `CANCELLED`, a set `payload_ref`, unknown fields inside `origin`.

use super::{spans, Context, Top};
use crate::diagnostic::{pointer, push_capped, quoted, Diagnostic, ErrorCode};
use crate::json::Value;

/// `origin`'s members and the headers they become.
const MOVED: [(&str, &[u8]); 2] = [
    ("source", b"\"rdq.source\":"),
    ("submitted_by", b"\"rdq.submitted_by\":"),
];

pub(super) fn step(cx: &mut Context<'_>) -> bool {
    let top = cx.top();
    if !representable(cx, &top) {
        return false;
    }
    cx.set_version(&top, 1);
    move_origin_to_headers(cx, &top);
    remove_durations(cx, &top);
    true
}

fn value<'a>(member: Option<(usize, Value<'a>)>) -> Option<Value<'a>> {
    member.map(|(_, value)| value)
}

fn representable(cx: &mut Context<'_>, top: &Top<'_>) -> bool {
    let before = cx.errors.len();
    if value(top.status).and_then(|v| v.as_str()) == Some("CANCELLED") {
        cx.errors.push(blocked(
            "/status".to_owned(),
            "status CANCELLED does not exist in version 1".to_owned(),
        ));
    }
    if value(top.payload_ref).is_some_and(|v| !v.is_null()) {
        cx.errors.push(blocked(
            "/payload_ref".to_owned(),
            "a claim-check payload_ref cannot be written in version 1, where it is reserved"
                .to_owned(),
        ));
    }
    if let Some(origin) = value(top.origin) {
        for (key, _) in origin.members() {
            if !MOVED.iter().any(|(name, _)| *name == key) {
                push_capped(cx.errors, ErrorCode::CannotDowngrade, || {
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
    cx.errors.len() == before
}

#[cold]
fn blocked(path: String, message: String) -> Diagnostic {
    Diagnostic::new(ErrorCode::CannotDowngrade, path, message)
}

fn move_origin_to_headers(cx: &mut Context<'_>, top: &Top<'_>) {
    // `precondition` saw both.
    let (Some((origin_at, origin)), Some((_, headers))) = (top.origin, top.headers) else {
        return;
    };
    // Appended after the last header, or right after `{` when there is none.
    spans::members(headers, &cx.scratch.nodes, &mut cx.scratch.inner);
    let (append_at, mut first) = match cx.scratch.inner.last() {
        Some(last) => (last.value_end, false),
        None => (spans::of(headers, &cx.scratch.nodes).0 + 1, true),
    };
    for (key, value) in origin.members() {
        let Some((_, header)) = MOVED.iter().find(|(name, _)| *name == key) else {
            continue;
        };
        let separator: &[u8] = if first { b"" } else { b"," };
        first = false;
        let (start, end) = spans::of(value, &cx.scratch.nodes);
        cx.scratch
            .edits
            .insert(append_at, &[separator, header, &cx.line[start..end]]);
    }
    let top_spans = &cx.scratch.top;
    cx.scratch
        .edits
        .remove_members(top_spans, |i| i == origin_at);
}

fn remove_durations(cx: &mut Context<'_>, top: &Top<'_>) {
    let Some(attempts) = value(top.attempts) else {
        return;
    };
    for attempt in attempts.elements() {
        if let Some(duration) = attempt.members().position(|(key, _)| key == "duration_ms") {
            spans::members(attempt, &cx.scratch.nodes, &mut cx.scratch.inner);
            let members = &cx.scratch.inner;
            cx.scratch.edits.remove_members(members, |i| i == duration);
        }
    }
}
