//! The messages of `proto/rdq/envelope/v1/envelope.proto` and `v2/envelope.proto`, derived by
//! hand with prost (so no `protoc` at build time): each field's name, number and type is the
//! `.proto`'s, a test (`tests/it/proto_schema.rs`) holds them to the files and the Python
//! cross-test holds both to a real protobuf runtime.
//!
//! The two files define the same messages but `Envelope` (version 2 adds `origin`, a claim
//! check and an optional payload); the rest is identical field for field, so one Rust type
//! serves both packages (the wire does not carry a package name).

/// `google.protobuf.Timestamp`: seconds since the Unix epoch and nanoseconds (`0..1e9`) after
/// them. The envelope's timestamps are whole milliseconds; year 0000 takes seconds below
/// Timestamp's nominal range (docs/proto.md#timestamps).
#[derive(Clone, Copy, PartialEq, Eq, Hash, prost::Message)]
pub struct Timestamp {
    /// Seconds since 1970-01-01T00:00:00Z.
    #[prost(int64, tag = "1")]
    pub seconds: i64,
    /// Nanoseconds after `seconds`, `0..=999_999_999`; a multiple of 1,000,000 here.
    #[prost(int32, tag = "2")]
    pub nanos: i32,
}

/// `google.protobuf.NullValue`: its one value, `NULL_VALUE`, marks a member that is `null`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum NullValue {
    /// `NULL_VALUE`.
    NullValue = 0,
}

/// `Status`: the envelope's status; `STATUS_UNSPECIFIED` (0) is refused on read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum Status {
    /// `STATUS_UNSPECIFIED`: refused.
    Unspecified = 0,
    /// `STATUS_PENDING`.
    Pending = 1,
    /// `STATUS_IN_FLIGHT`.
    InFlight = 2,
    /// `STATUS_SUCCEEDED`.
    Succeeded = 3,
    /// `STATUS_DEAD`.
    Dead = 4,
    /// `STATUS_CANCELLED` (version 2 only).
    Cancelled = 5,
}

/// `Outcome`: how an attempt ended; `OUTCOME_UNSPECIFIED` (0) is refused on read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum Outcome {
    /// `OUTCOME_UNSPECIFIED`: refused.
    Unspecified = 0,
    /// `OUTCOME_SUCCESS`.
    Success = 1,
    /// `OUTCOME_RETRYABLE_FAILURE`.
    RetryableFailure = 2,
    /// `OUTCOME_PERMANENT_FAILURE`.
    PermanentFailure = 3,
    /// `OUTCOME_LEASE_EXPIRED`.
    LeaseExpired = 4,
}

/// `Header`: one header, in the envelope's order.
#[derive(Clone, PartialEq, Eq, Hash, prost::Message)]
pub struct Header {
    /// Its key.
    #[prost(string, tag = "1")]
    pub key: String,
    /// Its value.
    #[prost(string, tag = "2")]
    pub value: String,
}

/// `UnknownMember`: a member the contract does not name, as JSON text.
#[derive(Clone, PartialEq, Eq, Hash, prost::Message)]
pub struct UnknownMember {
    /// The name, unescaped.
    #[prost(string, tag = "1")]
    pub name: String,
    /// The value: one JSON value as written.
    #[prost(string, tag = "2")]
    pub json: String,
    /// The key as written (quotes included) when it is not the name escaped the canonical way.
    #[prost(string, optional, tag = "3")]
    pub spelling: Option<String>,
}

/// `Attempt`: one attempt record (the same message in both versions; version 2's
/// `duration_ms` is derived, its number 8 reserved).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Attempt {
    /// `attempt_no`.
    #[prost(uint32, tag = "1")]
    pub attempt_no: u32,
    /// `started_at` (required).
    #[prost(message, optional, tag = "2")]
    pub started_at: Option<Timestamp>,
    /// `finished_at`; not set = `null`.
    #[prost(message, optional, tag = "3")]
    pub finished_at: Option<Timestamp>,
    /// `outcome` ([`Outcome`]); not set = `null`.
    #[prost(enumeration = "Outcome", optional, tag = "4")]
    pub outcome: Option<i32>,
    /// `error`: absent, `null` or set.
    #[prost(oneof = "AttemptErrorSlot", tags = "5, 6")]
    pub error: Option<AttemptErrorSlot>,
    /// The attempt's unknown members.
    #[prost(message, repeated, tag = "7")]
    pub unknown_members: Vec<UnknownMember>,
}

/// `Attempt.error`: `null` or an error object (neither = absent).
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum AttemptErrorSlot {
    /// `error_null` ([`NullValue`]).
    #[prost(enumeration = "NullValue", tag = "5")]
    ErrorNull(i32),
    /// `error_value`.
    #[prost(message, tag = "6")]
    ErrorValue(AttemptError),
}

/// `AttemptError`: an attempt's error object.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AttemptError {
    /// JSON's `type`.
    #[prost(string, tag = "1")]
    pub r#type: String,
    /// `message`.
    #[prost(string, tag = "2")]
    pub message: String,
    /// `detail` as JSON text; not set = absent.
    #[prost(string, optional, tag = "3")]
    pub detail_json: Option<String>,
    /// `stack`: absent, `null` or set.
    #[prost(oneof = "Stack", tags = "4, 5")]
    pub stack: Option<Stack>,
    /// The error's unknown members.
    #[prost(message, repeated, tag = "6")]
    pub unknown_members: Vec<UnknownMember>,
}

/// `AttemptError.stack`: `null` or the text (neither = absent).
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Stack {
    /// `stack_null` ([`NullValue`]).
    #[prost(enumeration = "NullValue", tag = "4")]
    StackNull(i32),
    /// `stack_value`.
    #[prost(string, tag = "5")]
    StackValue(String),
}

/// `Envelope.handler_version`: `null` or a version (neither = absent).
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum HandlerVersion {
    /// `handler_version_null` ([`NullValue`]).
    #[prost(enumeration = "NullValue", tag = "5")]
    HandlerVersionNull(i32),
    /// `handler_version_value`.
    #[prost(string, tag = "6")]
    HandlerVersionValue(String),
}

/// `PayloadRef`: version 2's claim check.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PayloadRef {
    /// `uri`.
    #[prost(string, tag = "1")]
    pub uri: String,
    /// `sha256`, 64 lower-case hex digits.
    #[prost(string, tag = "2")]
    pub sha256: String,
    /// `size` in bytes.
    #[prost(uint64, tag = "3")]
    pub size: u64,
    /// The claim check's unknown members.
    #[prost(message, repeated, tag = "4")]
    pub unknown_members: Vec<UnknownMember>,
}

/// `Origin`: version 2's `origin`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Origin {
    /// `source`; not set = absent.
    #[prost(string, optional, tag = "1")]
    pub source: Option<String>,
    /// `submitted_by`; not set = absent.
    #[prost(string, optional, tag = "2")]
    pub submitted_by: Option<String>,
    /// The origin's unknown members.
    #[prost(message, repeated, tag = "3")]
    pub unknown_members: Vec<UnknownMember>,
}

/// Version 1's message (`rdq.envelope.v1.Envelope`).
pub mod v1 {
    use super::{Attempt, Header, Timestamp, UnknownMember};

    /// `rdq.envelope.v1.Envelope`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Envelope {
        /// Always 1.
        #[prost(uint32, tag = "1")]
        pub envelope_version: u32,
        /// `id`, a ULID.
        #[prost(string, tag = "2")]
        pub id: String,
        /// `queue`.
        #[prost(string, tag = "3")]
        pub queue: String,
        /// `handler_ref`.
        #[prost(string, tag = "4")]
        pub handler_ref: String,
        /// `handler_version`: absent, `null` or set.
        #[prost(oneof = "super::HandlerVersion", tags = "5, 6")]
        pub handler_version: Option<super::HandlerVersion>,
        /// `payload`'s bytes.
        #[prost(bytes = "vec", tag = "7")]
        pub payload: Vec<u8>,
        /// `payload_content_type`.
        #[prost(string, tag = "8")]
        pub payload_content_type: String,
        /// `payload_ref`: absent or `null` in version 1.
        #[prost(oneof = "PayloadRefSlot", tags = "9")]
        pub payload_ref: Option<PayloadRefSlot>,
        /// `headers`, in order.
        #[prost(message, repeated, tag = "10")]
        pub headers: Vec<Header>,
        /// `status` ([`super::Status`]).
        #[prost(enumeration = "super::Status", tag = "11")]
        pub status: i32,
        /// `attempt_count`.
        #[prost(uint32, tag = "12")]
        pub attempt_count: u32,
        /// `redrive_count`.
        #[prost(uint32, tag = "13")]
        pub redrive_count: u32,
        /// `next_attempt_at`; not set = `null`.
        #[prost(message, optional, tag = "14")]
        pub next_attempt_at: Option<Timestamp>,
        /// `lease_expires_at`; not set = `null`.
        #[prost(message, optional, tag = "15")]
        pub lease_expires_at: Option<Timestamp>,
        /// `created_at` (required).
        #[prost(message, optional, tag = "16")]
        pub created_at: Option<Timestamp>,
        /// `attempts`, in order.
        #[prost(message, repeated, tag = "17")]
        pub attempts: Vec<Attempt>,
        /// The top level's unknown members.
        #[prost(message, repeated, tag = "18")]
        pub unknown_members: Vec<UnknownMember>,
    }

    /// `Envelope.payload_ref` in version 1: only `null` (not set = absent).
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum PayloadRefSlot {
        /// `payload_ref_null` ([`super::NullValue`]).
        #[prost(enumeration = "super::NullValue", tag = "9")]
        PayloadRefNull(i32),
    }
}

/// Version 2's message (`rdq.envelope.v2.Envelope`): version 1's field numbers and more.
pub mod v2 {
    use super::{Attempt, Header, Origin, PayloadRef, Timestamp, UnknownMember};

    /// `rdq.envelope.v2.Envelope`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Envelope {
        /// Always 2.
        #[prost(uint32, tag = "1")]
        pub envelope_version: u32,
        /// `id`, a ULID.
        #[prost(string, tag = "2")]
        pub id: String,
        /// `queue`.
        #[prost(string, tag = "3")]
        pub queue: String,
        /// `handler_ref`.
        #[prost(string, tag = "4")]
        pub handler_ref: String,
        /// `handler_version`: absent, `null` or set.
        #[prost(oneof = "super::HandlerVersion", tags = "5, 6")]
        pub handler_version: Option<super::HandlerVersion>,
        /// `payload`'s bytes; not set = absent (beside a set `payload_ref` only).
        #[prost(bytes = "vec", optional, tag = "7")]
        pub payload: Option<Vec<u8>>,
        /// `payload_content_type`.
        #[prost(string, tag = "8")]
        pub payload_content_type: String,
        /// `payload_ref`: absent, `null` or set.
        #[prost(oneof = "PayloadRefSlot", tags = "9, 19")]
        pub payload_ref: Option<PayloadRefSlot>,
        /// `headers`, in order.
        #[prost(message, repeated, tag = "10")]
        pub headers: Vec<Header>,
        /// `origin`; not set = `{}`.
        #[prost(message, optional, tag = "20")]
        pub origin: Option<Origin>,
        /// `status` ([`super::Status`]).
        #[prost(enumeration = "super::Status", tag = "11")]
        pub status: i32,
        /// `attempt_count`.
        #[prost(uint32, tag = "12")]
        pub attempt_count: u32,
        /// `redrive_count`.
        #[prost(uint32, tag = "13")]
        pub redrive_count: u32,
        /// `next_attempt_at`; not set = `null`.
        #[prost(message, optional, tag = "14")]
        pub next_attempt_at: Option<Timestamp>,
        /// `lease_expires_at`; not set = `null`.
        #[prost(message, optional, tag = "15")]
        pub lease_expires_at: Option<Timestamp>,
        /// `created_at` (required).
        #[prost(message, optional, tag = "16")]
        pub created_at: Option<Timestamp>,
        /// `attempts`, in order.
        #[prost(message, repeated, tag = "17")]
        pub attempts: Vec<Attempt>,
        /// The top level's unknown members.
        #[prost(message, repeated, tag = "18")]
        pub unknown_members: Vec<UnknownMember>,
    }

    /// `Envelope.payload_ref` in version 2: `null` or a claim check (neither = absent).
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum PayloadRefSlot {
        /// `payload_ref_null` ([`super::NullValue`]).
        #[prost(enumeration = "super::NullValue", tag = "9")]
        PayloadRefNull(i32),
        /// `payload_ref_value`.
        #[prost(message, tag = "19")]
        PayloadRefValue(PayloadRef),
    }
}

/// Field 1 alone: what a reader of a mixed stream decodes first to choose the message.
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct VersionProbe {
    /// `envelope_version`.
    #[prost(uint32, tag = "1")]
    pub envelope_version: u32,
}
