//! The rules that relate several facts of an envelope, each written once: a pure function over
//! small facts that both paths gather. The single pass (`single_pass.rs`) asks whether a rule
//! holds and declines the line when it does not; the tape path (`rules.rs`, `attempts.rs`)
//! turns the same answer into its diagnostics, with their messages and pointers. The checks of
//! one value (a string's format, a timestamp, a name) stay where each path reads the value.
//!
//! Each function is `#[inline]` over `Copy` facts and allocates nothing: the single pass is
//! `validate`'s hot path.

use super::options::RuleOptions;

pub(super) use super::types::{Outcome, Status};

/// A required-key timestamp that may be `null` (`next_attempt_at`, `finished_at`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum Stamp {
    /// Missing or of the wrong type: rules that need it are skipped.
    #[default]
    Unknown,
    Null,
    /// Set; the time when the text is a valid timestamp.
    Set(Option<i64>),
}

impl Stamp {
    // `matches!`, not `==`: the derived comparison also reads the payload (the single pass
    // asks this once per attempt).
    #[inline]
    pub(super) fn is_null(self) -> bool {
        matches!(self, Stamp::Null)
    }
    #[inline]
    pub(super) fn is_set(self) -> bool {
        matches!(self, Stamp::Set(_))
    }
    #[inline]
    pub(super) fn time(self) -> Option<i64> {
        match self {
            Stamp::Set(t) => t,
            _ => None,
        }
    }
}

/// What the status rules and the warnings read of the attempts.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct History {
    /// How many records, objects or not.
    pub len: u64,
    /// Some attempt is in flight (`finished_at` null).
    pub any_in_flight: bool,
    /// The last record's `finished_at` ([`Stamp::Unknown`] when there is none or it is not an
    /// object).
    pub last_finished: Stamp,
    /// The last record's outcome, when it is one of the four.
    pub last_outcome: Option<Outcome>,
    /// The first record's `started_at`, when valid.
    pub first_started: Option<i64>,
    /// How many times the numbering restarts at 1 ([`Numbering::Restart`]).
    pub restarts: u64,
}

/// docs/envelope.md#envelope_version: a line of another version than `--require-version`'s is
/// `UNSUPPORTED_VERSION`. Whether `version` is the one required, if any.
#[inline]
pub(super) fn version_required(required: Option<u32>, version: u32) -> bool {
    required.is_none_or(|r| r == version)
}

/// docs/envelope.md#invalid_header: version 2 moved the headers `rdq.source` and
/// `rdq.submitted_by` into `origin`, so in version 2 one of them is `INVALID_HEADER`. Whether
/// a header may be there, given whether it is one that moved (`shape::moved_header`).
#[inline]
pub(super) fn header_in_version(moved: bool, version: u32) -> bool {
    !moved || version < 2
}

/// docs/envelope.md#cancellation: `CANCELLED` is a status of version 2 only (in version 1 it is
/// `UNKNOWN_STATUS`).
#[inline]
pub(super) fn status_in_version(status: Status, version: u32) -> bool {
    status != Status::Cancelled || version >= 2
}

/// What is wrong with where the payload is, by docs/envelope.md#payload,
/// #payload_ref-in-version-1 and #claim-check-payloads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct PayloadProblems {
    /// `payload` is required and absent (`MISSING_FIELD`).
    pub missing: bool,
    /// Version 2: `payload` is present beside a set `payload_ref` (`INVALID_PAYLOAD_REF`).
    pub beside_claim_check: bool,
    /// Version 1: `payload_ref` is set (`PAYLOAD_REF_RESERVED`).
    pub reserved_ref: bool,
}

impl PayloadProblems {
    /// Nothing is wrong.
    #[inline]
    pub(super) fn is_none(self) -> bool {
        self == PayloadProblems::default()
    }
}

/// docs/envelope.md#claim-check-payloads: a line carries exactly one of `payload` and a set
/// `payload_ref` (present and not `null`), and only version 2 has the latter. `payload` and
/// `claim_check` say which are present; the submit subset is judged as version 1.
#[inline]
pub(super) fn payload_source(version: u32, payload: bool, claim_check: bool) -> PayloadProblems {
    if version >= 2 {
        PayloadProblems {
            missing: !payload && !claim_check,
            beside_claim_check: payload && claim_check,
            reserved_ref: false,
        }
    } else {
        PayloadProblems {
            missing: !payload,
            beside_claim_check: false,
            reserved_ref: claim_check,
        }
    }
}

/// A line over its size limit: the limit, and the queue when the limit is that queue's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Oversize<'q> {
    pub limit: u64,
    pub queue: Option<&'q str>,
}

/// docs/envelope.md#size-limit: a line of `len` bytes against its queue's own limit, or the
/// global one. `queue` (the line's `queue` when it is a string) is only asked for when some
/// queue has a limit of its own: the single pass's UTF-8 check of the name cost 130
/// instructions a line.
#[inline]
pub(super) fn over_size_limit<'q>(
    options: &RuleOptions,
    len: usize,
    queue: impl FnOnce() -> Option<&'q str>,
) -> Option<Oversize<'q>> {
    let (limit, queue) = if options.queue_limits.is_empty() {
        (options.max_envelope_bytes, None)
    } else {
        let queue = queue();
        match queue.and_then(|q| options.queue_limits.get(q)) {
            Some(&own) => (own, queue),
            None => (options.max_envelope_bytes, None),
        }
    };
    (len as u64 > limit).then_some(Oversize { limit, queue })
}

/// What a status requires of a nullable timestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Must {
    BeSet,
    BeNull,
}

/// What a status says of the attempts that they do not show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AttemptsProblem {
    /// `PENDING`, `CANCELLED`: an attempt is in flight.
    InFlight,
    /// `IN_FLIGHT`, `SUCCEEDED`, `DEAD`: there is none.
    Empty,
    /// `IN_FLIGHT`: the last one is finished.
    LastFinished,
    /// `SUCCEEDED`, `DEAD`: the last one is in flight.
    LastInFlight,
    /// `SUCCEEDED`: the last one finished with another outcome.
    LastNotSuccess,
    /// `DEAD`: the last one finished with `SUCCESS`.
    LastSuccess,
}

/// Where an envelope disagrees with its status; each is `INCONSISTENT_STATE` at its member.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct StatusProblems {
    pub next_attempt_at: Option<Must>,
    pub lease_expires_at: Option<Must>,
    pub attempts: Option<AttemptsProblem>,
}

impl StatusProblems {
    /// The envelope agrees with its status.
    #[inline]
    pub(super) fn is_none(self) -> bool {
        self == StatusProblems::default()
    }
}

/// docs/envelope.md#status-consistency and #cancellation: what each status says of
/// `next_attempt_at`, `lease_expires_at` and the attempts (`None` when `attempts` is not an
/// array). What is unknown is not judged.
#[inline]
pub(super) fn status_consistency(
    status: Status,
    next: Stamp,
    lease: Stamp,
    history: Option<History>,
) -> StatusProblems {
    let (next_set, lease_set) = match status {
        Status::Pending => (Some(true), false),
        Status::InFlight => (None, true),
        _ => (Some(false), false),
    };
    let next_attempt_at = match next_set {
        Some(true) if next.is_null() => Some(Must::BeSet),
        Some(false) if next.is_set() => Some(Must::BeNull),
        _ => None,
    };
    let lease_expires_at = if lease_set && lease.is_null() {
        Some(Must::BeSet)
    } else if !lease_set && lease.is_set() {
        Some(Must::BeNull)
    } else {
        None
    };
    let attempts = history.and_then(|h| {
        let last_in_flight = match h.last_finished {
            Stamp::Unknown => None,
            f => Some(f.is_null()),
        };
        match status {
            Status::Pending | Status::Cancelled if h.any_in_flight => {
                Some(AttemptsProblem::InFlight)
            }
            Status::InFlight | Status::Succeeded | Status::Dead if h.len == 0 => {
                Some(AttemptsProblem::Empty)
            }
            Status::InFlight if last_in_flight == Some(false) => {
                Some(AttemptsProblem::LastFinished)
            }
            Status::Succeeded | Status::Dead if last_in_flight == Some(true) => {
                Some(AttemptsProblem::LastInFlight)
            }
            Status::Succeeded
                if last_in_flight == Some(false)
                    && h.last_outcome.is_some_and(|o| o != Outcome::Success) =>
            {
                Some(AttemptsProblem::LastNotSuccess)
            }
            Status::Dead
                if last_in_flight == Some(false) && h.last_outcome == Some(Outcome::Success) =>
            {
                Some(AttemptsProblem::LastSuccess)
            }
            _ => None,
        }
    });
    StatusProblems {
        next_attempt_at,
        lease_expires_at,
        attempts,
    }
}

/// docs/envelope.md#status-consistency, "always": `attempt_count` is at most the number of
/// attempt records. (An out-of-range count is still compared.)
#[inline]
pub(super) fn attempt_count_within(attempt_count: i128, records: u64) -> bool {
    attempt_count <= i128::from(records)
}

/// docs/envelope.md#numbering: the numbering restarts at most `redrive_count` times. (An
/// out-of-range `redrive_count` is still compared.)
#[inline]
pub(super) fn restarts_within(restarts: u64, redrive_count: i128) -> bool {
    i128::from(restarts) <= redrive_count
}

/// What an attempt's number says, against the previous one's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Numbering {
    /// 1 first, or the previous number plus 1 (or no valid previous number to compare with).
    Next,
    /// 1 again after the first: a redrive.
    Restart,
    /// The first attempt's number is not 1.
    FirstNotOne,
    /// Neither the previous number plus 1 nor 1.
    Gap { previous: i128 },
}

/// docs/envelope.md#numbering: `attempts[0].attempt_no` is 1; each later one is the previous
/// one plus 1, or 1 again. `previous` is the number of the record before, when valid.
#[inline]
pub(super) fn numbering(first: bool, no: i128, previous: Option<i128>) -> Numbering {
    if first && no != 1 {
        Numbering::FirstNotOne
    } else if !first && no == 1 {
        Numbering::Restart
    // Saturating: out-of-range numbers take part too, up to i128::MAX (a fuzzer found the
    // overflow).
    } else if let Some(previous) = previous.filter(|&p| no != p.saturating_add(1)) {
        Numbering::Gap { previous }
    } else {
        Numbering::Next
    }
}

/// docs/envelope.md#start-order: a start is not before the last valid start before it.
#[inline]
pub(super) fn started_in_order(previous_start: Option<i64>, started: Option<i64>) -> bool {
    !matches!((started, previous_start), (Some(s), Some(p)) if s < p)
}

/// docs/envelope.md#start-order: a set `finished_at` is not before its own `started_at`.
#[inline]
pub(super) fn finished_after_start(started: Option<i64>, finished: Stamp) -> bool {
    !matches!((finished.time(), started), (Some(f), Some(s)) if f < s)
}

/// docs/envelope.md#only-the-last-in-flight: only the last attempt may be in flight.
#[inline]
pub(super) fn in_flight_only_last(finished: Stamp, is_last: bool) -> bool {
    is_last || !finished.is_null()
}

/// What is wrong with an attempt's `outcome` against its `finished_at`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum OutcomeProblem {
    /// Finished, with an outcome of `null`.
    FinishedWithout,
    /// In flight, with an outcome.
    InFlightWith,
}

/// docs/envelope.md#the-attempt-record: `outcome` is `null` exactly when `finished_at` is
/// (not judged when `finished_at` is unknown).
#[inline]
pub(super) fn outcome_when_finished(outcome_null: bool, finished: Stamp) -> Option<OutcomeProblem> {
    if matches!(finished, Stamp::Unknown) || outcome_null == finished.is_null() {
        None
    } else if outcome_null {
        Some(OutcomeProblem::FinishedWithout)
    } else {
        Some(OutcomeProblem::InFlightWith)
    }
}

/// docs/envelope.md#success-comes-last: `SUCCESS` only on the last attempt.
#[inline]
pub(super) fn success_only_last(outcome: Option<Outcome>, is_last: bool) -> bool {
    is_last || outcome != Some(Outcome::Success)
}

/// An attempt's `error`, as the rules across attempts read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ErrorObject {
    /// Absent or `null`.
    Absent,
    /// Another JSON type (`WRONG_TYPE` says so).
    NotAnObject,
    Object {
        /// `type` is `rdq.LeaseExpired`.
        lease_type: bool,
        /// `message` is a non-empty string.
        message_set: bool,
        /// `stack` is present and not `null`.
        stack_set: bool,
    },
}

/// docs/envelope.md#success-comes-last: a `SUCCESS` attempt carries no error (of any type).
#[inline]
pub(super) fn success_without_error(outcome: Option<Outcome>, error: ErrorObject) -> bool {
    outcome != Some(Outcome::Success) || error == ErrorObject::Absent
}

/// What a `LEASE_EXPIRED` attempt's error lacks, the first found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LeaseProblem {
    NoError,
    NotLeaseType,
    NoMessage,
    Stack,
}

/// docs/envelope.md#lease-expiry: a `LEASE_EXPIRED` attempt carries an error of type
/// `rdq.LeaseExpired` with a non-empty message and no stack. An error of the wrong JSON type
/// gets only its `WRONG_TYPE`.
#[inline]
pub(super) fn lease_expired_error(
    outcome: Option<Outcome>,
    error: ErrorObject,
) -> Option<LeaseProblem> {
    if outcome != Some(Outcome::LeaseExpired) {
        return None;
    }
    match error {
        ErrorObject::Absent => Some(LeaseProblem::NoError),
        ErrorObject::NotAnObject => None,
        ErrorObject::Object {
            lease_type,
            message_set,
            stack_set,
        } => {
            if !lease_type {
                Some(LeaseProblem::NotLeaseType)
            } else if !message_set {
                Some(LeaseProblem::NoMessage)
            } else if stack_set {
                Some(LeaseProblem::Stack)
            } else {
                None
            }
        }
    }
}

/// An attempt's `duration_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Duration {
    Missing,
    Null,
    Integer(i128),
    /// Any other value (and, for the single pass, an integer it does not read).
    Other,
}

/// What is wrong with a version 2 `duration_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DurationProblem {
    /// `MISSING_FIELD`.
    Missing,
    /// `WRONG_TYPE`.
    WrongType,
    /// `null`, and the attempt is finished.
    FinishedWithout,
    /// A number, and the attempt is in flight.
    InFlightWith,
    /// `ms`, not `finished_at − started_at` (`computed`).
    Mismatch { ms: i128, computed: i64 },
}

/// docs/envelope.md#attempt-duration: in version 2, `duration_ms` is `finished_at −
/// started_at` when the attempt is finished, `null` in flight; not compared when either
/// timestamp is invalid.
#[inline]
pub(super) fn duration_v2(
    duration: Duration,
    started: Option<i64>,
    finished: Stamp,
) -> Option<DurationProblem> {
    match duration {
        Duration::Missing => Some(DurationProblem::Missing),
        Duration::Other => Some(DurationProblem::WrongType),
        Duration::Null => finished
            .is_set()
            .then_some(DurationProblem::FinishedWithout),
        Duration::Integer(ms) => match (finished, started) {
            (Stamp::Null, _) => Some(DurationProblem::InFlightWith),
            (Stamp::Set(Some(f)), Some(s)) if ms != i128::from(f - s) => {
                Some(DurationProblem::Mismatch {
                    ms,
                    computed: f - s,
                })
            }
            _ => None,
        },
    }
}

/// docs/envelope.md#warnings, `ID_TIME_MISMATCH`: the ULID's time and `created_at` differ by
/// more than a second; the difference in ms then.
#[inline]
pub(super) fn id_time_skew(id_time: u64, created: i64) -> Option<u64> {
    let skew = (id_time as i64).abs_diff(created);
    (skew > 1000).then_some(skew)
}

/// docs/envelope.md#warnings, `CREATED_AFTER_START`: `created_at` is later than the first
/// attempt's start; by how many ms then.
#[inline]
pub(super) fn created_after_start(created: i64, first_started: Option<i64>) -> Option<i64> {
    first_started
        .filter(|&started| created > started)
        .map(|started| created - started)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SET: Stamp = Stamp::Set(Some(1_000));

    fn history(len: u64, last_finished: Stamp, last_outcome: Option<Outcome>) -> History {
        History {
            len,
            any_in_flight: last_finished == Stamp::Null,
            last_finished,
            last_outcome,
            ..History::default()
        }
    }

    #[test]
    fn names() {
        for status in [
            Status::Pending,
            Status::InFlight,
            Status::Succeeded,
            Status::Dead,
            Status::Cancelled,
        ] {
            assert_eq!(Status::from_name(status.as_str().as_bytes()), Some(status));
        }
        assert_eq!(Status::from_name(b"pending"), None);
        assert_eq!(Outcome::from_name(b"SUCCESS"), Some(Outcome::Success));
        assert_eq!(
            Outcome::from_name(b"RETRYABLE_FAILURE"),
            Some(Outcome::RetryableFailure)
        );
        assert_eq!(
            Outcome::from_name(b"PERMANENT_FAILURE"),
            Some(Outcome::PermanentFailure)
        );
        assert_eq!(
            Outcome::from_name(b"LEASE_EXPIRED"),
            Some(Outcome::LeaseExpired)
        );
        assert_eq!(Outcome::from_name(b"TIMEOUT"), None);
    }

    #[test]
    fn stamps() {
        assert!(Stamp::Null.is_null() && !Stamp::Null.is_set());
        assert!(Stamp::Set(None).is_set() && Stamp::Set(None).time().is_none());
        assert_eq!(SET.time(), Some(1_000));
        assert!(!Stamp::Unknown.is_null() && !Stamp::Unknown.is_set());
        assert_eq!(Stamp::default(), Stamp::Unknown);
    }

    #[test]
    fn required_version() {
        assert!(version_required(None, 1));
        assert!(version_required(Some(2), 2));
        assert!(!version_required(Some(2), 1));
    }

    #[test]
    fn cancelled_is_version_2() {
        assert!(!status_in_version(Status::Cancelled, 1));
        assert!(status_in_version(Status::Cancelled, 2));
        assert!(status_in_version(Status::Dead, 1));
    }

    #[test]
    fn payload_or_claim_check() {
        let none = PayloadProblems::default();
        assert!(payload_source(1, true, false).is_none());
        let v1_missing = payload_source(1, false, false);
        assert!(v1_missing.missing && !v1_missing.is_none());
        assert_eq!(
            payload_source(1, true, true),
            PayloadProblems {
                reserved_ref: true,
                ..none
            }
        );
        assert_eq!(
            payload_source(1, false, true),
            PayloadProblems {
                missing: true,
                reserved_ref: true,
                ..none
            }
        );
        assert!(payload_source(2, true, false).is_none());
        assert!(payload_source(2, false, true).is_none());
        assert_eq!(
            payload_source(2, true, true),
            PayloadProblems {
                beside_claim_check: true,
                ..none
            }
        );
        assert_eq!(
            payload_source(2, false, false),
            PayloadProblems {
                missing: true,
                ..none
            }
        );
    }

    #[test]
    fn size_limit() {
        let mut options = RuleOptions {
            max_envelope_bytes: 10,
            ..RuleOptions::default()
        };
        let never = || -> Option<&str> { panic!("no queue has its own limit") };
        assert_eq!(over_size_limit(&options, 10, never), None);
        assert_eq!(
            over_size_limit(&options, 11, never),
            Some(Oversize {
                limit: 10,
                queue: None
            })
        );
        options.queue_limits.insert("big".into(), 20);
        assert_eq!(over_size_limit(&options, 20, || Some("big")), None);
        assert_eq!(
            over_size_limit(&options, 21, || Some("big")),
            Some(Oversize {
                limit: 20,
                queue: Some("big")
            })
        );
        assert_eq!(
            over_size_limit(&options, 11, || Some("other")),
            Some(Oversize {
                limit: 10,
                queue: None
            })
        );
        assert_eq!(
            over_size_limit(&options, 11, || None),
            Some(Oversize {
                limit: 10,
                queue: None
            })
        );
    }

    #[test]
    fn status_timestamps() {
        let check = |status, next, lease| status_consistency(status, next, lease, None);
        assert!(check(Status::Pending, SET, Stamp::Null).is_none());
        assert_eq!(
            check(Status::Pending, Stamp::Null, SET),
            StatusProblems {
                next_attempt_at: Some(Must::BeSet),
                lease_expires_at: Some(Must::BeNull),
                attempts: None
            }
        );
        // In flight: next_attempt_at may be anything, the lease is set.
        assert!(check(Status::InFlight, Stamp::Null, SET).is_none());
        assert!(check(Status::InFlight, SET, Stamp::Set(None)).is_none());
        assert_eq!(
            check(Status::InFlight, SET, Stamp::Null).lease_expires_at,
            Some(Must::BeSet)
        );
        for status in [Status::Succeeded, Status::Dead, Status::Cancelled] {
            assert!(check(status, Stamp::Null, Stamp::Null).is_none());
            let both = check(status, Stamp::Set(None), SET);
            assert_eq!(both.next_attempt_at, Some(Must::BeNull));
            assert_eq!(both.lease_expires_at, Some(Must::BeNull));
        }
        // Unknown timestamps are not judged.
        assert!(check(Status::Pending, Stamp::Unknown, Stamp::Unknown).is_none());
        assert!(check(Status::InFlight, Stamp::Unknown, Stamp::Unknown).is_none());
        assert!(check(Status::Dead, Stamp::Unknown, Stamp::Unknown).is_none());
    }

    #[test]
    fn status_attempts() {
        let attempts = |status, h: History| {
            status_consistency(status, Stamp::Unknown, Stamp::Unknown, Some(h)).attempts
        };
        let empty = History::default();
        let in_flight = history(1, Stamp::Null, None);
        let succeeded = history(2, SET, Some(Outcome::Success));
        let failed = history(1, SET, Some(Outcome::PermanentFailure));
        let unknown_last = history(1, Stamp::Unknown, None);
        let unknown_outcome = history(1, SET, None);
        use AttemptsProblem as P;

        assert_eq!(attempts(Status::Pending, empty), None);
        assert_eq!(attempts(Status::Pending, failed), None);
        assert_eq!(attempts(Status::Pending, in_flight), Some(P::InFlight));
        assert_eq!(attempts(Status::Cancelled, succeeded), None);
        assert_eq!(attempts(Status::Cancelled, in_flight), Some(P::InFlight));
        // An earlier attempt in flight counts too.
        let earlier = History {
            any_in_flight: true,
            ..failed
        };
        assert_eq!(attempts(Status::Pending, earlier), Some(P::InFlight));

        for status in [Status::InFlight, Status::Succeeded, Status::Dead] {
            assert_eq!(attempts(status, empty), Some(P::Empty));
            assert_eq!(attempts(status, unknown_last), None);
        }
        assert_eq!(attempts(Status::InFlight, in_flight), None);
        assert_eq!(attempts(Status::InFlight, failed), Some(P::LastFinished));
        assert_eq!(
            attempts(Status::Succeeded, in_flight),
            Some(P::LastInFlight)
        );
        assert_eq!(attempts(Status::Dead, in_flight), Some(P::LastInFlight));
        assert_eq!(attempts(Status::Succeeded, succeeded), None);
        assert_eq!(attempts(Status::Succeeded, failed), Some(P::LastNotSuccess));
        assert_eq!(attempts(Status::Succeeded, unknown_outcome), None);
        assert_eq!(attempts(Status::Dead, failed), None);
        assert_eq!(attempts(Status::Dead, succeeded), Some(P::LastSuccess));
        assert_eq!(attempts(Status::Dead, unknown_outcome), None);
    }

    #[test]
    fn counts() {
        assert!(attempt_count_within(2, 2));
        assert!(attempt_count_within(-1, 0));
        assert!(!attempt_count_within(3, 2));
        assert!(restarts_within(0, 0));
        assert!(restarts_within(2, 2));
        assert!(!restarts_within(3, 2));
        // An out-of-range redrive_count is still compared.
        assert!(!restarts_within(0, -1));
    }

    #[test]
    fn numbers() {
        assert_eq!(numbering(true, 1, None), Numbering::Next);
        assert_eq!(numbering(true, 2, None), Numbering::FirstNotOne);
        assert_eq!(numbering(false, 2, Some(1)), Numbering::Next);
        assert_eq!(numbering(false, 1, Some(4)), Numbering::Restart);
        assert_eq!(numbering(false, 3, Some(1)), Numbering::Gap { previous: 1 });
        // No valid number before it: nothing to compare with.
        assert_eq!(numbering(false, 7, None), Numbering::Next);
        assert_eq!(
            numbering(false, 5, Some(i128::MAX)),
            Numbering::Gap {
                previous: i128::MAX
            }
        );
    }

    #[test]
    fn start_order() {
        assert!(started_in_order(None, Some(5)));
        assert!(started_in_order(Some(5), None));
        assert!(started_in_order(Some(5), Some(5)));
        assert!(!started_in_order(Some(5), Some(4)));
        assert!(finished_after_start(Some(5), Stamp::Set(Some(5))));
        assert!(!finished_after_start(Some(5), Stamp::Set(Some(4))));
        assert!(finished_after_start(None, Stamp::Set(Some(4))));
        assert!(finished_after_start(Some(5), Stamp::Set(None)));
        assert!(finished_after_start(Some(5), Stamp::Null));
        assert!(finished_after_start(Some(5), Stamp::Unknown));
    }

    #[test]
    fn in_flight() {
        assert!(in_flight_only_last(Stamp::Null, true));
        assert!(!in_flight_only_last(Stamp::Null, false));
        assert!(in_flight_only_last(SET, false));
        assert!(in_flight_only_last(Stamp::Unknown, false));
    }

    #[test]
    fn outcome_and_finish() {
        assert_eq!(outcome_when_finished(true, Stamp::Null), None);
        assert_eq!(outcome_when_finished(false, SET), None);
        assert_eq!(outcome_when_finished(false, Stamp::Set(None)), None);
        assert_eq!(
            outcome_when_finished(true, SET),
            Some(OutcomeProblem::FinishedWithout)
        );
        assert_eq!(
            outcome_when_finished(false, Stamp::Null),
            Some(OutcomeProblem::InFlightWith)
        );
        assert_eq!(outcome_when_finished(true, Stamp::Unknown), None);
        assert_eq!(outcome_when_finished(false, Stamp::Unknown), None);
    }

    #[test]
    fn success() {
        let success = Some(Outcome::Success);
        assert!(success_only_last(success, true));
        assert!(!success_only_last(success, false));
        assert!(success_only_last(Some(Outcome::RetryableFailure), false));
        assert!(success_only_last(None, false));
        assert!(success_without_error(success, ErrorObject::Absent));
        assert!(!success_without_error(success, ErrorObject::NotAnObject));
        let object = ErrorObject::Object {
            lease_type: false,
            message_set: true,
            stack_set: false,
        };
        assert!(!success_without_error(success, object));
        assert!(success_without_error(
            Some(Outcome::PermanentFailure),
            object
        ));
    }

    #[test]
    fn lease_expiry() {
        let lease = Some(Outcome::LeaseExpired);
        let error = |lease_type, message_set, stack_set| ErrorObject::Object {
            lease_type,
            message_set,
            stack_set,
        };
        assert_eq!(lease_expired_error(lease, error(true, true, false)), None);
        assert_eq!(
            lease_expired_error(lease, ErrorObject::Absent),
            Some(LeaseProblem::NoError)
        );
        assert_eq!(lease_expired_error(lease, ErrorObject::NotAnObject), None);
        assert_eq!(
            lease_expired_error(lease, error(false, true, false)),
            Some(LeaseProblem::NotLeaseType)
        );
        assert_eq!(
            lease_expired_error(lease, error(true, false, true)),
            Some(LeaseProblem::NoMessage)
        );
        assert_eq!(
            lease_expired_error(lease, error(true, true, true)),
            Some(LeaseProblem::Stack)
        );
        assert_eq!(
            lease_expired_error(Some(Outcome::RetryableFailure), ErrorObject::Absent),
            None
        );
        assert_eq!(lease_expired_error(None, ErrorObject::Absent), None);
    }

    #[test]
    fn durations() {
        use DurationProblem as P;
        let finished = Stamp::Set(Some(1_250));
        let started = Some(1_000);
        assert_eq!(
            duration_v2(Duration::Missing, started, finished),
            Some(P::Missing)
        );
        assert_eq!(
            duration_v2(Duration::Other, started, finished),
            Some(P::WrongType)
        );
        assert_eq!(duration_v2(Duration::Null, started, Stamp::Null), None);
        assert_eq!(
            duration_v2(Duration::Null, started, finished),
            Some(P::FinishedWithout)
        );
        assert_eq!(
            duration_v2(Duration::Null, started, Stamp::Set(None)),
            Some(P::FinishedWithout)
        );
        assert_eq!(duration_v2(Duration::Null, started, Stamp::Unknown), None);
        assert_eq!(duration_v2(Duration::Integer(250), started, finished), None);
        assert_eq!(
            duration_v2(Duration::Integer(-5), started, finished),
            Some(P::Mismatch {
                ms: -5,
                computed: 250
            })
        );
        assert_eq!(
            duration_v2(Duration::Integer(0), started, Stamp::Null),
            Some(P::InFlightWith)
        );
        // Not compared when either timestamp is invalid or unknown.
        assert_eq!(duration_v2(Duration::Integer(9), None, finished), None);
        assert_eq!(
            duration_v2(Duration::Integer(9), started, Stamp::Set(None)),
            None
        );
        assert_eq!(
            duration_v2(Duration::Integer(9), started, Stamp::Unknown),
            None
        );
    }

    #[test]
    fn warnings() {
        assert_eq!(id_time_skew(5_000, 4_000), None);
        assert_eq!(id_time_skew(5_000, 6_000), None);
        assert_eq!(id_time_skew(5_000, 3_999), Some(1_001));
        assert_eq!(id_time_skew(5_000, 6_001), Some(1_001));
        assert_eq!(created_after_start(10, None), None);
        assert_eq!(created_after_start(10, Some(10)), None);
        assert_eq!(created_after_start(10, Some(11)), None);
        assert_eq!(created_after_start(10, Some(4)), Some(6));
    }
}
