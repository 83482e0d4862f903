//! The attempt record (docs/envelope.md#the-attempt-record, #attempt-duration) and the rules
//! across attempts (docs/envelope.md#rules-across-attempts, `BAD_ATTEMPT`).

use crate::diagnostic::{quoted, ErrorCode};
use crate::json::{Value, ValueKind};

use super::judge::{Judge, Loc, Stamp};

/// `message` limit in UTF-8 bytes, before the truncation marker.
pub const MESSAGE_LIMIT: usize = 4096;
/// `stack` limit in UTF-8 bytes, before the truncation marker.
pub const STACK_LIMIT: usize = 65_536;

const OUTCOMES: [&str; 4] = [
    "SUCCESS",
    "RETRYABLE_FAILURE",
    "PERMANENT_FAILURE",
    "LEASE_EXPIRED",
];

/// What the status rules need to know of one attempt.
#[derive(Debug, Clone, Copy)]
pub(super) struct AttemptFacts<'a> {
    pub finished: Stamp,
    /// The outcome when it is one of the four.
    pub outcome: Option<&'a str>,
}

/// What the status rules need to know of the history.
#[derive(Debug, Clone, Copy)]
pub(super) struct History<'a> {
    pub len: usize,
    pub any_in_flight: bool,
    /// The last attempt, when it is an object.
    pub last: Option<AttemptFacts<'a>>,
    pub first_started: Option<i64>,
}

/// The members of an attempt the rules know, found in one pass.
#[derive(Default)]
struct Members<'a> {
    attempt_no: Option<Value<'a>>,
    started_at: Option<Value<'a>>,
    finished_at: Option<Value<'a>>,
    outcome: Option<Value<'a>>,
    error: Option<Value<'a>>,
    duration_ms: Option<Value<'a>>,
}

impl<'a> Judge<'_, '_> {
    /// Checks every attempt and the rules across them.
    pub(super) fn attempts(
        &mut self,
        attempts: Value<'a>,
        redrive_count: Option<i128>,
    ) -> History<'a> {
        let len = attempts.len();
        let mut history = History {
            len,
            any_in_flight: false,
            last: None,
            first_started: None,
        };
        let mut previous_no: Option<i128> = None;
        let mut previous_started: Option<i64> = None;
        let mut restarts: i128 = 0;
        for (i, attempt) in attempts.elements().enumerate() {
            let is_last = i + 1 == len;
            if attempt.kind() != ValueKind::Object {
                self.wrong_type(Loc::Attempt(i), "an attempt record object", attempt);
                previous_no = None;
                continue;
            }
            let m = Self::attempt_members(attempt);
            let no = self.integer(
                m.attempt_no,
                Loc::AttemptField(i, "attempt_no"),
                1,
                u32::MAX.into(),
            );
            let started = self.timestamp(m.started_at, Loc::AttemptField(i, "started_at"));
            let finished =
                self.nullable_timestamp(m.finished_at, Loc::AttemptField(i, "finished_at"));
            let outcome = self.outcome(&m, i, finished);
            self.error_object(m.error, i);
            if self.version >= 2 {
                self.duration(m.duration_ms, i, started, finished);
            }
            if i == 0 {
                history.first_started = started;
            }

            // Rule 1: numbering starts at 1 and goes up by one, or restarts at 1 after a redrive.
            if let Some(no) = no {
                if i == 0 && no != 1 {
                    self.bad(
                        Loc::AttemptField(i, "attempt_no"),
                        format!("the first attempt must be number 1, not {no}"),
                    );
                } else if i > 0 && no == 1 {
                    restarts += 1;
                // Saturating: out-of-range numbers take part too, up to i128::MAX (a fuzzer
                // found the overflow).
                } else if let Some(prev) = previous_no.filter(|&p| no != p.saturating_add(1)) {
                    self.bad(
                        Loc::AttemptField(i, "attempt_no"),
                        format!(
                            "attempt {no} follows attempt {prev}: expected {} or 1",
                            prev.saturating_add(1)
                        ),
                    );
                }
            }
            previous_no = no;
            // Rule 2: starts never go back; a finish is not before its start.
            if let (Some(s), Some(prev)) = (started, previous_started) {
                if s < prev {
                    self.bad(
                        Loc::AttemptField(i, "started_at"),
                        "started before the previous attempt started",
                    );
                }
            }
            previous_started = started.or(previous_started);
            if let (Some(f), Some(s)) = (finished.time(), started) {
                if f < s {
                    self.bad(
                        Loc::AttemptField(i, "finished_at"),
                        "finished before it started",
                    );
                }
            }
            // Rule 3: only the last attempt may be in flight.
            if finished.is_null() {
                history.any_in_flight = true;
                if !is_last {
                    self.bad(
                        Loc::AttemptField(i, "finished_at"),
                        "only the last attempt may be in flight",
                    );
                }
            }
            // Rules 4 and 5: what SUCCESS and LEASE_EXPIRED say of the record.
            match outcome {
                Some("SUCCESS") => {
                    if !is_last {
                        self.bad(
                            Loc::AttemptField(i, "outcome"),
                            "SUCCESS is only possible on the last attempt",
                        );
                    }
                    if m.error.is_some_and(|e| !e.is_null()) {
                        self.bad(
                            Loc::AttemptField(i, "error"),
                            "a SUCCESS attempt carries no error",
                        );
                    }
                }
                Some("LEASE_EXPIRED") => self.lease_expired_error(m.error, i),
                _ => {}
            }
            if is_last {
                history.last = Some(AttemptFacts { finished, outcome });
            }
        }
        if let Some(redrives) = redrive_count.filter(|&r| restarts > r) {
            self.bad(
                Loc::Top("attempts"),
                format!(
                    "attempt numbering restarts {restarts} {} but redrive_count is {redrives}",
                    crate::report::noun(u64::try_from(restarts).unwrap_or(0), "time")
                ),
            );
        }
        history
    }

    fn attempt_members(attempt: Value<'a>) -> Members<'a> {
        let mut m = Members::default();
        for (key, value) in attempt.members() {
            match key {
                "attempt_no" => m.attempt_no = Some(value),
                "started_at" => m.started_at = Some(value),
                "finished_at" => m.finished_at = Some(value),
                "outcome" => m.outcome = Some(value),
                "error" => m.error = Some(value),
                "duration_ms" => m.duration_ms = Some(value),
                _ => {}
            }
        }
        m
    }

    #[cold]
    fn bad(&mut self, loc: Loc<'_>, message: impl Into<String>) {
        self.error(ErrorCode::BadAttempt, loc, message);
    }

    /// `outcome`: a required key, `null` exactly when `finished_at` is.
    fn outcome(&mut self, m: &Members<'a>, i: usize, finished: Stamp) -> Option<&'a str> {
        let loc = Loc::AttemptField(i, "outcome");
        let Some(v) = m.outcome else {
            self.missing(loc);
            return None;
        };
        let outcome_null = v.is_null();
        let mut known = None;
        if !outcome_null {
            match v.as_str() {
                Some(s) if OUTCOMES.contains(&s) => known = Some(s),
                Some(s) => self.error(
                    ErrorCode::UnknownOutcome,
                    loc,
                    format!(
                        "{} is not SUCCESS, RETRYABLE_FAILURE, PERMANENT_FAILURE or LEASE_EXPIRED",
                        quoted(s)
                    ),
                ),
                None => {
                    self.wrong_type(loc, "an outcome string or null", v);
                    return None;
                }
            }
        }
        if finished != Stamp::Unknown && outcome_null != finished.is_null() {
            let message = if outcome_null {
                "a finished attempt must have an outcome"
            } else {
                "an attempt in flight (finished_at null) has no outcome yet"
            };
            self.bad(loc, message);
        }
        known
    }

    /// The error object of an attempt: `type`, `message`, `detail`, `stack`.
    fn error_object(&mut self, v: Option<Value<'a>>, i: usize) {
        let Some(v) = v.filter(|v| !v.is_null()) else {
            return;
        };
        if v.kind() != ValueKind::Object {
            self.wrong_type(Loc::AttemptField(i, "error"), "an error object or null", v);
            return;
        }
        let (mut kind, mut message, mut stack) = (None, None, None);
        for (key, value) in v.members() {
            match key {
                "type" => kind = Some(value),
                "message" => message = Some(value),
                "stack" => stack = Some(value),
                _ => {}
            }
        }
        let type_loc = Loc::AttemptError(i, "type");
        match kind {
            None => self.missing(type_loc),
            Some(t) if t.as_str().is_some_and(|s| !s.is_empty()) => {}
            Some(t) => self.wrong_type(type_loc, "a non-empty string", t),
        }
        let message_loc = Loc::AttemptError(i, "message");
        if let Some(s) = self.string(message, message_loc) {
            self.truncatable(s, MESSAGE_LIMIT, message_loc);
        }
        let stack_loc = Loc::AttemptError(i, "stack");
        match stack {
            None => {}
            Some(s) if s.is_null() => {}
            Some(s) => match s.as_str() {
                Some(text) => self.truncatable(text, STACK_LIMIT, stack_loc),
                None => self.wrong_type(stack_loc, "a string or null", s),
            },
        }
    }

    /// Rule 5: a `LEASE_EXPIRED` attempt carries the lease error, with a message, no stack.
    fn lease_expired_error(&mut self, error: Option<Value<'a>>, i: usize) {
        let error = error.filter(|e| !e.is_null());
        let problem = match error {
            None => Some("a LEASE_EXPIRED attempt must carry an error of type rdq.LeaseExpired"),
            Some(e) if e.kind() != ValueKind::Object => None, // WRONG_TYPE already says it
            Some(e) => {
                if e.get("type").and_then(|t| t.as_str()) != Some("rdq.LeaseExpired") {
                    Some("a LEASE_EXPIRED attempt's error must have type rdq.LeaseExpired")
                } else if e
                    .get("message")
                    .and_then(|m| m.as_str())
                    .is_none_or(str::is_empty)
                {
                    Some("a LEASE_EXPIRED attempt's error must have a non-empty message")
                } else if e.get("stack").is_some_and(|s| !s.is_null()) {
                    Some("a LEASE_EXPIRED attempt's error has no stack")
                } else {
                    None
                }
            }
        };
        if let Some(problem) = problem {
            self.bad(Loc::AttemptField(i, "error"), problem);
        }
    }

    /// v2 `duration_ms`: `finished_at − started_at` in ms when finished, `null` in flight.
    fn duration(&mut self, v: Option<Value<'a>>, i: usize, started: Option<i64>, finished: Stamp) {
        let loc = Loc::AttemptField(i, "duration_ms");
        let Some(v) = v else {
            self.missing(loc);
            return;
        };
        if v.is_null() {
            if finished.is_set() {
                self.bad(loc, "a finished attempt must have its duration");
            }
            return;
        }
        let Some(ms) = v.as_integer() else {
            self.wrong_type(loc, "a JSON integer or null", v);
            return;
        };
        match (finished, started) {
            (Stamp::Null, _) => self.bad(loc, "an attempt in flight has no duration yet (null)"),
            (Stamp::Set(Some(f)), Some(s)) if ms != i128::from(f - s) => self.bad(
                loc,
                format!(
                    "duration_ms is {ms} but finished_at - started_at is {} ms",
                    f - s
                ),
            ),
            _ => {}
        }
    }
}
