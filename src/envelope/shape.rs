//! Where the parts a migration edits lie in a line: what the steps of `migrate` read to write
//! their edits. The tape fills it ([`Shape::fill_from_tape`]) and so does the single pass while
//! it validates (`single_pass.rs`), so the edits are written by one piece of code. It lives
//! here, below `migrate`, because the single pass records it: imports only go down.

use super::formats::parse_timestamp;
use super::spans;
pub(crate) use super::spans::MemberSpan;
use crate::json::{Value, ValueKind};

/// The headers that move to `origin` in version 2, by their index here.
pub(crate) const MOVED_HEADERS: [&str; 2] = ["rdq.source", "rdq.submitted_by"];

/// Which of [`MOVED_HEADERS`] a header key is, if any: what both paths ask of a key, for
/// `laws::header_in_version` and for the steps' edits.
#[inline]
pub(crate) fn moved_header(key: &[u8]) -> Option<usize> {
    MOVED_HEADERS.iter().position(|name| name.as_bytes() == key)
}

/// The members of `origin` that are headers in version 1, in the order of
/// [`MOVED_HEADERS`].
pub(crate) const ORIGIN_MEMBERS: [&str; 2] = ["source", "submitted_by"];

/// The parts of a valid envelope that the steps between versions 1 and 2 edit, as byte
/// ranges of the line. Reused from line to line.
#[derive(Debug, Default)]
pub(crate) struct Shape {
    /// `envelope_version`'s value.
    pub version: (usize, usize),
    /// The top-level members, in order.
    pub top: Vec<MemberSpan>,
    /// Which of `top` is `origin`.
    pub origin_at: Option<usize>,
    /// `headers`' value.
    pub headers: (usize, usize),
    /// The headers, in order.
    pub header_members: Vec<MemberSpan>,
    /// For each header, the index in [`MOVED_HEADERS`] of one that moves.
    pub header_moves: Vec<Option<usize>>,
    /// The members of `origin` that become headers: the index in [`ORIGIN_MEMBERS`] and the
    /// value, in `origin`'s order.
    pub origin_moves: Vec<(usize, (usize, usize))>,
    pub attempts: Vec<AttemptShape>,
    /// Set by the single pass on a line that 2 → 1 refuses (status `CANCELLED`, a claim
    /// check, an unknown member of `origin`); the tape path finds and names the reasons.
    pub downgrade_blocked: bool,
    /// The members of the object being read, reused.
    pub scratch: Vec<MemberSpan>,
}

/// One attempt record, as the steps edit it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct AttemptShape {
    /// One past `finished_at`'s value, where 1 → 2 inserts `duration_ms` (`None` without it).
    pub finished_end: Option<usize>,
    /// `finished_at - started_at` in milliseconds, `None` while in flight.
    pub duration_ms: Option<i64>,
    /// The bytes that removing `duration_ms` deletes (with a separator), when it has one.
    pub duration_removal: Option<(usize, usize)>,
}

impl Shape {
    pub(crate) fn clear(&mut self) {
        self.origin_at = None;
        self.downgrade_blocked = false;
        self.top.clear();
        self.header_members.clear();
        self.header_moves.clear();
        self.origin_moves.clear();
        self.attempts.clear();
    }

    /// Fills the shape from a valid envelope's document, whose tape nodes lie at `nodes`
    /// ([`Document::node_spans`](crate::json::Document::node_spans)).
    pub(crate) fn fill_from_tape(&mut self, root: Value<'_>, nodes: &[(usize, usize)]) {
        self.clear();
        spans::members(root, nodes, &mut self.top);
        for (at, (key, value)) in root.members().enumerate() {
            match key {
                "envelope_version" => self.version = spans::of(value, nodes),
                "origin" => {
                    self.origin_at = Some(at);
                    self.origin_moves.clear();
                    if value.kind() == ValueKind::Object {
                        for (key, value) in value.members() {
                            if let Some(m) = ORIGIN_MEMBERS.iter().position(|&name| name == key) {
                                self.origin_moves.push((m, spans::of(value, nodes)));
                            }
                        }
                    }
                }
                "headers" => {
                    self.headers = spans::of(value, nodes);
                    spans::members(value, nodes, &mut self.header_members);
                    self.header_moves.clear();
                    self.header_moves
                        .extend(value.members().map(|(key, _)| moved_header(key.as_bytes())));
                }
                "attempts" => {
                    self.attempts.clear();
                    for attempt in value.elements() {
                        self.attempts
                            .push(attempt_from_tape(attempt, nodes, &mut self.scratch));
                    }
                }
                _ => {}
            }
        }
    }
}

fn attempt_from_tape(
    attempt: Value<'_>,
    nodes: &[(usize, usize)],
    scratch: &mut Vec<MemberSpan>,
) -> AttemptShape {
    let (mut started, mut finished, mut duration_at) = (None, None, None);
    for (i, (key, value)) in attempt.members().enumerate() {
        match key {
            "started_at" => started = Some(value),
            "finished_at" => finished = Some(value),
            "duration_ms" => duration_at = Some(i),
            _ => {}
        }
    }
    let ms = |v: Option<Value<'_>>| v.and_then(|v| v.as_str()).and_then(parse_timestamp);
    let duration_removal = duration_at.map(|at| {
        spans::members(attempt, nodes, scratch);
        removal(scratch, at)
    });
    AttemptShape {
        finished_end: finished.map(|f| spans::of(f, nodes).1),
        duration_ms: ms(started).zip(ms(finished)).map(|(s, f)| f - s),
        duration_removal,
    }
}

/// The bytes to delete to remove member `at` of an object whose members are `members`: the
/// member and one separator, so the rest stays well formed.
pub(crate) fn removal(members: &[MemberSpan], at: usize) -> (usize, usize) {
    let this = members[at];
    match (at.checked_sub(1), members.get(at + 1)) {
        // After another member: from the end of that one's value.
        (Some(before), _) => (members[before].value_end, this.value_end),
        // First, with more after it: up to the next one's key.
        (None, Some(next)) => (this.key_start, next.key_start),
        (None, None) => (this.key_start, this.value_end),
    }
}
