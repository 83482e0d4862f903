//! The attempt record (docs/envelope.md#the-attempt-record, #attempt-duration) and the rules
//! across attempts (docs/envelope.md#rules-across-attempts, `BAD_ATTEMPT`).

use crate::diagnostic::{quoted, ErrorCode};
use crate::json::{Value, ValueKind};

use super::judge::{Judge, Loc};
use super::laws::{
    self, Duration, DurationProblem, ErrorObject, History, LeaseProblem, Numbering, Outcome,
    OutcomeProblem, Stamp,
};

/// `message` limit in UTF-8 bytes, before the truncation marker.
pub const MESSAGE_LIMIT: usize = 4096;
/// `stack` limit in UTF-8 bytes, before the truncation marker.
pub const STACK_LIMIT: usize = 65_536;

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
    /// Checks every attempt and the rules across them (each in [`laws`]).
    pub(super) fn attempts(&mut self, attempts: Value<'a>, redrive_count: Option<i128>) -> History {
        let len = attempts.len();
        let mut history = History {
            len: len as u64,
            ..History::default()
        };
        let mut previous_no: Option<i128> = None;
        let mut previous_started: Option<i64> = None;
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
            let error = self.error_object(m.error, i);
            if self.version >= 2 {
                self.duration(m.duration_ms, i, started, finished);
            }
            if i == 0 {
                history.first_started = started;
            }

            if let Some(no) = no {
                let loc = Loc::AttemptField(i, "attempt_no");
                match laws::numbering(i == 0, no, previous_no) {
                    Numbering::Next => {}
                    Numbering::Restart => history.restarts += 1,
                    Numbering::FirstNotOne => {
                        self.bad(loc, format!("the first attempt must be number 1, not {no}"));
                    }
                    Numbering::Gap { previous } => self.bad(
                        loc,
                        format!(
                            "attempt {no} follows attempt {previous}: expected {} or 1",
                            previous.saturating_add(1)
                        ),
                    ),
                }
            }
            previous_no = no;
            if !laws::started_in_order(previous_started, started) {
                self.bad(
                    Loc::AttemptField(i, "started_at"),
                    "started before the previous attempt started",
                );
            }
            previous_started = started.or(previous_started);
            if !laws::finished_after_start(started, finished) {
                self.bad(
                    Loc::AttemptField(i, "finished_at"),
                    "finished before it started",
                );
            }
            history.any_in_flight |= finished.is_null();
            if !laws::in_flight_only_last(finished, is_last) {
                self.bad(
                    Loc::AttemptField(i, "finished_at"),
                    "only the last attempt may be in flight",
                );
            }
            if !laws::success_only_last(outcome, is_last) {
                self.bad(
                    Loc::AttemptField(i, "outcome"),
                    "SUCCESS is only possible on the last attempt",
                );
            }
            if !laws::success_without_error(outcome, error) {
                self.bad(
                    Loc::AttemptField(i, "error"),
                    "a SUCCESS attempt carries no error",
                );
            }
            if let Some(problem) = laws::lease_expired_error(outcome, error) {
                let message = match problem {
                    LeaseProblem::NoError => {
                        "a LEASE_EXPIRED attempt must carry an error of type rdq.LeaseExpired"
                    }
                    LeaseProblem::NotLeaseType => {
                        "a LEASE_EXPIRED attempt's error must have type rdq.LeaseExpired"
                    }
                    LeaseProblem::NoMessage => {
                        "a LEASE_EXPIRED attempt's error must have a non-empty message"
                    }
                    LeaseProblem::Stack => "a LEASE_EXPIRED attempt's error has no stack",
                };
                self.bad(Loc::AttemptField(i, "error"), message);
            }
            if is_last {
                history.last_finished = finished;
                history.last_outcome = outcome;
            }
        }
        if let Some(redrives) = redrive_count {
            if !laws::restarts_within(history.restarts, redrives) {
                let restarts = history.restarts;
                // Plural by hand: `report::noun` is a layer above the rules.
                let times = if restarts == 1 { "time" } else { "times" };
                self.bad(
                    Loc::Top("attempts"),
                    format!(
                        "attempt numbering restarts {restarts} {times} but redrive_count is {redrives}"
                    ),
                );
            }
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

    /// `outcome`: a required key, `null` exactly when `finished_at` is
    /// ([`laws::outcome_when_finished`]).
    fn outcome(&mut self, m: &Members<'a>, i: usize, finished: Stamp) -> Option<Outcome> {
        let loc = Loc::AttemptField(i, "outcome");
        let Some(v) = m.outcome else {
            self.missing(loc);
            return None;
        };
        let outcome_null = v.is_null();
        let mut known = None;
        if !outcome_null {
            match v.as_str() {
                Some(s) => {
                    known = Outcome::from_name(s.as_bytes());
                    if known.is_none() {
                        self.error(
                            ErrorCode::UnknownOutcome,
                            loc,
                            format!(
                                "{} is not SUCCESS, RETRYABLE_FAILURE, PERMANENT_FAILURE or LEASE_EXPIRED",
                                quoted(s)
                            ),
                        );
                    }
                }
                None => {
                    self.wrong_type(loc, "an outcome string or null", v);
                    return None;
                }
            }
        }
        if let Some(problem) = laws::outcome_when_finished(outcome_null, finished) {
            let message = match problem {
                OutcomeProblem::FinishedWithout => "a finished attempt must have an outcome",
                OutcomeProblem::InFlightWith => {
                    "an attempt in flight (finished_at null) has no outcome yet"
                }
            };
            self.bad(loc, message);
        }
        known
    }

    /// The error object of an attempt: `type`, `message`, `detail`, `stack`; what the rules
    /// across attempts read of it.
    fn error_object(&mut self, v: Option<Value<'a>>, i: usize) -> ErrorObject {
        let Some(v) = v.filter(|v| !v.is_null()) else {
            return ErrorObject::Absent;
        };
        if v.kind() != ValueKind::Object {
            self.wrong_type(Loc::AttemptField(i, "error"), "an error object or null", v);
            return ErrorObject::NotAnObject;
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
        ErrorObject::Object {
            lease_type: kind.and_then(|t| t.as_str()) == Some("rdq.LeaseExpired"),
            message_set: message
                .and_then(|m| m.as_str())
                .is_some_and(|m| !m.is_empty()),
            stack_set: stack.is_some_and(|s| !s.is_null()),
        }
    }

    /// v2 `duration_ms` ([`laws::duration_v2`]).
    fn duration(&mut self, v: Option<Value<'a>>, i: usize, started: Option<i64>, finished: Stamp) {
        let loc = Loc::AttemptField(i, "duration_ms");
        let duration = match v {
            None => Duration::Missing,
            Some(v) if v.is_null() => Duration::Null,
            Some(v) => v.as_integer().map_or(Duration::Other, Duration::Integer),
        };
        let Some(problem) = laws::duration_v2(duration, started, finished) else {
            return;
        };
        match problem {
            DurationProblem::Missing => self.missing(loc),
            DurationProblem::WrongType => {
                if let Some(v) = v {
                    self.wrong_type(loc, "a JSON integer or null", v);
                }
            }
            DurationProblem::FinishedWithout => {
                self.bad(loc, "a finished attempt must have its duration");
            }
            DurationProblem::InFlightWith => {
                self.bad(loc, "an attempt in flight has no duration yet (null)");
            }
            DurationProblem::Mismatch { ms, computed } => {
                self.bad(
                    loc,
                    format!("duration_ms is {ms} but finished_at - started_at is {computed} ms"),
                );
            }
        }
    }
}
