//! Why the owned envelope refused a change: each refusal names the rule the change would
//! have broken, as the code and pointer the checker would have reported.

use crate::diagnostic::ErrorCode;

use super::super::types::{Outcome, Status};

/// A change to an [`Envelope`](super::Envelope) that was refused, because the envelope it
/// would make breaks a rule: [`EnvelopeError::code`] is the code the checker would report for
/// it, [`EnvelopeError::pointer`] where. The envelope is left as it was.
///
/// ```
/// use rdq_envelope::envelope::{Envelope, EnvelopeError, Submit, Timestamp};
/// use rdq_envelope::ErrorCode;
///
/// let err = Submit::new("Mail", "send", b"{}".to_vec(), "application/json").unwrap_err();
/// assert!(matches!(err, EnvelopeError::InvalidName { field: "queue", .. }));
/// assert_eq!((err.code(), err.pointer().as_str()), (ErrorCode::InvalidName, "/queue"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EnvelopeError {
    /// `queue` or `handler_ref` is not 1-240 characters of `[a-z0-9._-]`.
    #[error("{field} {value:?} is not 1-240 characters of a-z, 0-9, '.', '_' and '-'")]
    InvalidName {
        /// `queue` or `handler_ref`.
        field: &'static str,
        /// The value refused (its first 64 bytes).
        value: String,
    },
    /// `handler_version` is empty, over 240 bytes or holds a control character.
    #[error("handler_version {value:?} is not 1-240 bytes without control characters")]
    InvalidHandlerVersion {
        /// The value refused (its first 64 bytes).
        value: String,
    },
    /// `payload_content_type` is not a media type of the contract's grammar, or is over 255
    /// bytes.
    #[error("payload_content_type {value:?} is not a media type (type/subtype; parameters)")]
    InvalidContentType {
        /// The value refused (its first 64 bytes).
        value: String,
    },
    /// A header key is empty, or is one of the keys version 2 moved into `origin`.
    #[error("header {key:?} {why}")]
    InvalidHeader {
        /// The key refused.
        key: String,
        /// Why.
        why: &'static str,
    },
    /// A header key of a submission starts with `rdq.`: the server's keys.
    #[error("header {key:?} starts with \"rdq.\": the server's keys are not submitted")]
    ReservedHeader {
        /// The key refused.
        key: String,
    },
    /// An error's `type` is empty.
    #[error("an error's type must not be empty")]
    EmptyErrorType,
    /// A `LEASE_EXPIRED` attempt's error is not `rdq.LeaseExpired` with a message and no
    /// stack.
    #[error(
        "a LEASE_EXPIRED attempt's error is type rdq.LeaseExpired, with a message and no stack"
    )]
    LeaseExpiredError,
    /// A `SUCCESS` attempt was given an error.
    #[error("a SUCCESS attempt carries no error")]
    ErrorOnSuccess,
    /// A `payload_ref` member is not of its form.
    #[error("payload_ref's {member} {why}")]
    InvalidPayloadRef {
        /// `uri` or `sha256`.
        member: &'static str,
        /// Why.
        why: &'static str,
    },
    /// A version that has no claim-checked payloads was given one, or the payload was asked
    /// of an envelope that has none.
    #[error("{why}")]
    PayloadRefNotAllowed {
        /// Why.
        why: &'static str,
    },
    /// Text given as a JSON value is not one.
    #[error("not one JSON value: {reason}")]
    InvalidJson {
        /// What the JSON layer said.
        reason: String,
    },
    /// A JSON value nests deeper than its place in the envelope allows (the line's limit is
    /// 128 levels).
    #[error("the value nests {depth} levels deep; {allowed} are left where it goes")]
    NestingTooDeep {
        /// How deeply the value nests.
        depth: usize,
        /// How deeply it may nest there.
        allowed: usize,
    },
    /// An unknown member would repeat a name of its object.
    #[error("the object already has a member {name:?}")]
    DuplicateMember {
        /// The name.
        name: String,
    },
    /// The transition cannot start from the envelope's status.
    #[error("cannot {transition} a {status} envelope")]
    NotFromStatus {
        /// What was asked (`lease`, `redrive`, ...).
        transition: &'static str,
        /// The envelope's status.
        status: Status,
    },
    /// `redrive` of an envelope that is not `DEAD`.
    #[error("only a DEAD envelope is redriven; this one is {status}")]
    NotDead {
        /// The envelope's status.
        status: Status,
    },
    /// The transition is only for version 2 envelopes (`CANCELLED`).
    #[error("{transition} needs envelope_version 2; this envelope is version {version}")]
    NeedsVersion2 {
        /// What was asked.
        transition: &'static str,
        /// The envelope's version.
        version: u32,
    },
    /// How the attempt was finished does not allow the next status (a retry after `SUCCESS`,
    /// success after a failure).
    #[error("cannot {transition} after an attempt that ended {outcome}")]
    NotAfterOutcome {
        /// What was asked.
        transition: &'static str,
        /// How the attempt ended.
        outcome: Outcome,
    },
    /// A time earlier than one the rules order it after.
    #[error("{what} {at} is before {after} {earlier}")]
    TimeGoesBack {
        /// Which time.
        what: &'static str,
        /// It.
        at: String,
        /// Which time it must not precede.
        after: &'static str,
        /// That time.
        earlier: String,
        /// Where the rule is checked.
        #[doc(hidden)]
        pointer: String,
    },
    /// A count would pass 4294967295.
    #[error("{field} would pass 4294967295")]
    CountOverflow {
        /// `attempt_count`, `redrive_count` or an `attempt_no`.
        field: &'static str,
    },
    /// The millisecond of a new ULID has no random value left (2^80 IDs in one millisecond),
    /// or the time is outside the ULID's range (1970 to 10889).
    #[error("no ULID can be made at {at}: {why}")]
    NoUlid {
        /// The time.
        at: String,
        /// Why.
        why: &'static str,
    },
    /// The envelope would be longer than its size limit.
    #[error("the envelope would be {bytes} bytes, over its {limit}-byte limit")]
    TooLarge {
        /// Its length as written.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// The version asked is not one this library writes.
    #[error("envelope_version {version} is not supported (1 and 2 are)")]
    UnsupportedVersion {
        /// The version asked.
        version: u32,
    },
    /// A migration to version 2 would overwrite an unknown member of version 1.
    #[error("version 2 would overwrite the unknown member at {pointer}")]
    MigrationConflict {
        /// The member (`/origin`, `/attempts/i/duration_ms`).
        pointer: String,
    },
    /// Version 1 cannot hold what this version 2 envelope has.
    #[error("version 1 cannot hold {pointer}: {why}")]
    CannotDowngrade {
        /// The value (`/status`, `/payload_ref`, `/origin/<key>`).
        pointer: String,
        /// Why.
        why: &'static str,
    },
    /// A line given to be read is not a valid envelope: the checker's first error.
    #[error("not a valid envelope: {pointer}: {code}: {message}")]
    Invalid {
        /// The error's code.
        code: ErrorCode,
        /// Its pointer.
        pointer: String,
        /// Its message.
        message: String,
    },
}

impl EnvelopeError {
    /// The code the checker reports for the rule the change would have broken.
    ///
    /// ```
    /// use rdq_envelope::envelope::EnvelopeError;
    /// use rdq_envelope::ErrorCode;
    /// assert_eq!(EnvelopeError::EmptyErrorType.code(), ErrorCode::WrongType);
    /// ```
    pub fn code(&self) -> ErrorCode {
        use EnvelopeError::*;
        match self {
            InvalidName { .. } | InvalidHandlerVersion { .. } => ErrorCode::InvalidName,
            InvalidContentType { .. } => ErrorCode::InvalidContentType,
            InvalidHeader { .. } => ErrorCode::InvalidHeader,
            ReservedHeader { .. } => ErrorCode::ReservedHeader,
            EmptyErrorType => ErrorCode::WrongType,
            LeaseExpiredError | ErrorOnSuccess | TimeGoesBack { .. } => ErrorCode::BadAttempt,
            InvalidPayloadRef { .. } | PayloadRefNotAllowed { .. } => ErrorCode::InvalidPayloadRef,
            InvalidJson { .. } => ErrorCode::MalformedJson,
            NestingTooDeep { .. } => ErrorCode::NestingTooDeep,
            DuplicateMember { .. } => ErrorCode::DuplicateKey,
            NotFromStatus { .. } | NotAfterOutcome { .. } => ErrorCode::InconsistentState,
            NeedsVersion2 { .. } => ErrorCode::UnknownStatus,
            NotDead { .. } => ErrorCode::NotDead,
            CountOverflow { .. } => ErrorCode::OutOfRange,
            NoUlid { .. } => ErrorCode::InvalidId,
            TooLarge { .. } => ErrorCode::PayloadTooLarge,
            UnsupportedVersion { .. } => ErrorCode::UnsupportedVersion,
            MigrationConflict { .. } => ErrorCode::MigrationConflict,
            CannotDowngrade { .. } => ErrorCode::CannotDowngrade,
            Invalid { code, .. } => *code,
        }
    }

    /// The JSON pointer of the value the rule is about (`""` for the whole envelope).
    ///
    /// ```
    /// use rdq_envelope::envelope::EnvelopeError;
    /// let err = EnvelopeError::InvalidHeader { key: "a/b".into(), why: "is empty" };
    /// assert_eq!(err.pointer(), "/headers/a~1b");
    /// ```
    pub fn pointer(&self) -> String {
        use EnvelopeError::*;
        let header = |key: &str| format!("/headers/{}", key.replace('~', "~0").replace('/', "~1"));
        match self {
            InvalidName { field, .. } => format!("/{field}"),
            InvalidHandlerVersion { .. } => "/handler_version".into(),
            InvalidContentType { .. } => "/payload_content_type".into(),
            InvalidHeader { key, .. } | ReservedHeader { key } => header(key),
            EmptyErrorType | LeaseExpiredError | ErrorOnSuccess => "/attempts/-/error".into(),
            InvalidPayloadRef { member, .. } => format!("/payload_ref/{member}"),
            PayloadRefNotAllowed { .. } => "/payload_ref".into(),
            InvalidJson { .. } | NestingTooDeep { .. } | DuplicateMember { .. } => String::new(),
            NotFromStatus { .. } | NotDead { .. } | NeedsVersion2 { .. } => "/status".into(),
            NotAfterOutcome { .. } => "/attempts/-/outcome".into(),
            TimeGoesBack { pointer, .. } => pointer.clone(),
            CountOverflow { field } => format!("/{field}"),
            NoUlid { .. } => "/id".into(),
            TooLarge { .. } => String::new(),
            UnsupportedVersion { .. } => "/envelope_version".into(),
            MigrationConflict { pointer } | CannotDowngrade { pointer, .. } => pointer.clone(),
            Invalid { pointer, .. } => pointer.clone(),
        }
    }
}
