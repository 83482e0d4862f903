//! The field rules of one envelope: docs/envelope.md#version-1,
//! docs/envelope.md#status-consistency, #size-limit, #warnings, #the-submit-subset, #version-2.

use crate::diagnostic::{quoted, Diagnostic, ErrorCode};
use crate::json::{Value, ValueKind};

use super::formats;
use super::judge::{describe, Judge, Loc};
use super::laws::{self, AttemptsProblem, History, Must, Stamp, Status};
use super::options::{supported_versions, RuleOptions};
use super::shape::moved_header;
use super::Verdict;

/// The top-level members the rules know, found in one pass over the object (also what the
/// DLQ commands read: `filter`, `stats`).
#[derive(Default, Clone, Copy)]
pub(crate) struct Top<'a> {
    pub(crate) envelope_version: Option<Value<'a>>,
    pub(crate) id: Option<Value<'a>>,
    pub(crate) queue: Option<Value<'a>>,
    pub(crate) handler_ref: Option<Value<'a>>,
    pub(crate) handler_version: Option<Value<'a>>,
    pub(crate) payload: Option<Value<'a>>,
    pub(crate) payload_content_type: Option<Value<'a>>,
    pub(crate) payload_ref: Option<Value<'a>>,
    pub(crate) headers: Option<Value<'a>>,
    pub(crate) status: Option<Value<'a>>,
    pub(crate) attempt_count: Option<Value<'a>>,
    pub(crate) redrive_count: Option<Value<'a>>,
    pub(crate) next_attempt_at: Option<Value<'a>>,
    pub(crate) lease_expires_at: Option<Value<'a>>,
    pub(crate) created_at: Option<Value<'a>>,
    pub(crate) attempts: Option<Value<'a>>,
    pub(crate) origin: Option<Value<'a>>,
}

impl<'a> Top<'a> {
    /// The members of `root`; a valid envelope has no duplicate keys, so each is found once.
    pub(crate) fn of(root: Value<'a>) -> Self {
        let mut top = Top::default();
        for (key, value) in root.members() {
            let slot = match key {
                "envelope_version" => &mut top.envelope_version,
                "id" => &mut top.id,
                "queue" => &mut top.queue,
                "handler_ref" => &mut top.handler_ref,
                "handler_version" => &mut top.handler_version,
                "payload" => &mut top.payload,
                "payload_content_type" => &mut top.payload_content_type,
                "payload_ref" => &mut top.payload_ref,
                "headers" => &mut top.headers,
                "status" => &mut top.status,
                "attempt_count" => &mut top.attempt_count,
                "redrive_count" => &mut top.redrive_count,
                "next_attempt_at" => &mut top.next_attempt_at,
                "lease_expires_at" => &mut top.lease_expires_at,
                "created_at" => &mut top.created_at,
                "attempts" => &mut top.attempts,
                "origin" => &mut top.origin,
                _ => continue,
            };
            *slot = Some(value);
        }
        top
    }
}

#[cold]
pub(super) fn too_large(len: usize, limit: u64, queue: Option<&str>) -> Diagnostic {
    let whose = match queue {
        Some(q) => format!("the limit of queue {q:?}"),
        None => "the envelope size limit".to_owned(),
    };
    Diagnostic::new(
        ErrorCode::PayloadTooLarge,
        "",
        format!("the line is {len} bytes, over {whose} of {limit} bytes"),
    )
}

/// Judges `root` (a line that passed the JSON layer) into `out`.
pub(super) fn check(options: &RuleOptions, root: Value<'_>, line_len: usize, out: &mut Verdict) {
    let top = Top::of(root);
    let queue = top.queue.and_then(|v| v.as_str());
    if let Some(over) = laws::over_size_limit(options, line_len, || queue) {
        out.errors.push(too_large(line_len, over.limit, over.queue));
    }
    let mut c = Judge {
        options,
        version: 1,
        out,
    };
    if options.submit {
        c.submit(&top);
        return;
    }
    let Some(version) = c.version(top.envelope_version) else {
        return;
    };
    c.version = version;
    c.out.version = Some(version);
    c.envelope(&top);
}

const SERVER_ASSIGNED: [&str; 9] = [
    "envelope_version",
    "id",
    "status",
    "attempt_count",
    "redrive_count",
    "next_attempt_at",
    "lease_expires_at",
    "created_at",
    "attempts",
];

/// Which header rules apply.
#[derive(Clone, Copy, PartialEq, Eq)]
enum HeaderRules {
    Envelope,
    Submit,
}

impl<'a> Judge<'_, '_> {
    /// `envelope_version`: the version whose rules apply, or `None` when it ends the checks.
    fn version(&mut self, v: Option<Value<'a>>) -> Option<u32> {
        let loc = Loc::Top("envelope_version");
        let Some(v) = v else {
            self.missing(loc);
            return None;
        };
        let Some(n) = v.as_integer() else {
            self.wrong_type(loc, "a JSON integer", v);
            return None;
        };
        let version = u32::try_from(n)
            .ok()
            .filter(|n| super::SUPPORTED_VERSIONS.contains(n));
        let Some(version) = version else {
            self.error(
                ErrorCode::UnsupportedVersion,
                loc,
                format!(
                    "version {n} is not supported (supported: {})",
                    supported_versions()
                ),
            );
            return None;
        };
        if let Some(required) = self.options.require_version {
            if !laws::version_required(Some(required), version) {
                self.error(
                    ErrorCode::UnsupportedVersion,
                    loc,
                    format!("version {version}; --require-version {required}"),
                );
            }
        }
        Some(version)
    }

    fn envelope(&mut self, top: &Top<'a>) {
        let id_time = self.id(top.id);
        self.name(top.queue, Loc::Top("queue"));
        self.name(top.handler_ref, Loc::Top("handler_ref"));
        self.handler_version(top.handler_version);
        self.payload_source(top);
        self.content_type(top.payload_content_type);
        self.headers(top.headers, HeaderRules::Envelope, true);
        if self.version >= 2 {
            self.origin(top.origin);
        }
        let status = self.status(top.status);
        let attempt_count = self.integer(
            top.attempt_count,
            Loc::Top("attempt_count"),
            0,
            u32::MAX.into(),
        );
        let redrive_count = self.integer(
            top.redrive_count,
            Loc::Top("redrive_count"),
            0,
            u32::MAX.into(),
        );
        let next = self.nullable_timestamp(top.next_attempt_at, Loc::Top("next_attempt_at"));
        let lease = self.nullable_timestamp(top.lease_expires_at, Loc::Top("lease_expires_at"));
        let created = self.timestamp(top.created_at, Loc::Top("created_at"));
        let history = match top.attempts {
            None => {
                self.missing(Loc::Top("attempts"));
                None
            }
            Some(v) if v.kind() != ValueKind::Array => {
                self.wrong_type(Loc::Top("attempts"), "an array of attempt records", v);
                None
            }
            Some(v) => Some(self.attempts(v, redrive_count)),
        };
        if let Some(status) = status {
            self.consistency(status, next, lease, history);
        }
        if let (Some(count), Some(h)) = (attempt_count, history) {
            if !laws::attempt_count_within(count, h.len) {
                self.error(
                    ErrorCode::InconsistentState,
                    Loc::Top("attempt_count"),
                    format!(
                        "attempt_count is {count} but there are {} attempt records",
                        h.len
                    ),
                );
            }
        }
        if self.options.warnings {
            self.warnings(id_time, created, history);
        }
    }

    /// `id`: its ULID time when it is a canonical ULID.
    fn id(&mut self, v: Option<Value<'a>>) -> Option<u64> {
        let loc = Loc::Top("id");
        let s = self.string(v, loc)?;
        let t = formats::ulid_time_ms(s);
        if t.is_none() {
            self.error(
                ErrorCode::InvalidId,
                loc,
                format!("{} is not a canonical ULID (26 upper-case Crockford base32 characters, the first 0-7)", quoted(s)),
            );
        }
        t
    }

    fn name(&mut self, v: Option<Value<'a>>, loc: Loc<'_>) {
        if let Some(s) = self.string(v, loc) {
            if !formats::is_name(s) {
                self.error(
                    ErrorCode::InvalidName,
                    loc,
                    format!("{} is not 1-240 characters of a-z 0-9 . _ -", quoted(s)),
                );
            }
        }
    }

    fn handler_version(&mut self, v: Option<Value<'a>>) {
        let loc = Loc::Top("handler_version");
        match v {
            None => {}
            Some(v) if v.is_null() => {}
            Some(v) => match v.as_str() {
                Some(s) if !formats::is_handler_version(s) => self.error(
                    ErrorCode::InvalidName,
                    loc,
                    "must be 1-240 bytes with no control characters",
                ),
                Some(_) => {}
                None => self.wrong_type(loc, "a string or null", v),
            },
        }
    }

    /// `payload` where it is the payload: a base64 string.
    fn payload(&mut self, v: Value<'a>) {
        let loc = Loc::Top("payload");
        if let Some(s) = self.string(Some(v), loc) {
            if base64_simd::STANDARD.check(s.as_bytes()).is_err() {
                self.error(
                    ErrorCode::InvalidBase64,
                    loc,
                    "not canonical standard base64 (A-Z a-z 0-9 + /, = padding, no white space, unused bits zero)",
                );
            }
        }
    }

    /// `payload` and `payload_ref` ([`laws::payload_source`]): in version 1 (and submit)
    /// `payload_ref` is reserved; in version 2 a set one is a claim check that replaces
    /// `payload` (docs/envelope.md#claim-check-payloads).
    fn payload_source(&mut self, top: &Top<'a>) {
        let claim_check = top.payload_ref.filter(|v| !v.is_null());
        let problems =
            laws::payload_source(self.version, top.payload.is_some(), claim_check.is_some());
        if problems.missing {
            self.missing(Loc::Top("payload"));
        } else if problems.beside_claim_check {
            self.error(
                ErrorCode::InvalidPayloadRef,
                Loc::Top("payload"),
                "payload must be absent when payload_ref is set",
            );
        } else if let Some(payload) = top.payload {
            self.payload(payload);
        }
        let Some(r) = claim_check else {
            return;
        };
        if problems.reserved_ref {
            self.error(
                ErrorCode::PayloadRefReserved,
                Loc::Top("payload_ref"),
                format!(
                    "payload_ref is reserved in version 1 and must be absent or null, found {}",
                    describe(r)
                ),
            );
        } else {
            self.claim_check(r);
        }
    }

    /// A version 2 claim check's shape (docs/envelope.md#claim-check-payloads).
    fn claim_check(&mut self, r: Value<'a>) {
        let bad = ErrorCode::InvalidPayloadRef;
        if r.kind() != ValueKind::Object {
            self.error(
                bad,
                Loc::Top("payload_ref"),
                format!(
                    "expected an object {{uri, sha256, size}} or null, found {}",
                    describe(r)
                ),
            );
            return;
        }
        let string_member = |name: &str, shape: fn(&str) -> bool| {
            r.get(name).and_then(|v| v.as_str()).is_some_and(shape)
        };
        let members = [
            (
                "uri",
                string_member("uri", formats::is_payload_uri),
                "expected a URI string (scheme \":\" then RFC 3986 characters)",
            ),
            (
                "sha256",
                string_member("sha256", formats::is_sha256_hex),
                "expected 64 lower-case hex digits",
            ),
            (
                "size",
                r.get("size")
                    .and_then(|v| v.as_integer())
                    .is_some_and(|n| (0..=i128::from(u64::MAX)).contains(&n)),
                "expected a JSON integer from 0 to 2^64-1",
            ),
        ];
        for (member, ok, message) in members {
            if !ok {
                self.error(bad, Loc::PayloadRef(member), message);
            }
        }
    }

    fn content_type(&mut self, v: Option<Value<'a>>) {
        let loc = Loc::Top("payload_content_type");
        if let Some(s) = self.string(v, loc) {
            if !formats::is_media_type(s) {
                self.error(
                    ErrorCode::InvalidContentType,
                    loc,
                    format!("{} is not a media type such as application/json; charset=utf-8 (at most 255 bytes)", quoted(s)),
                );
            }
        }
    }

    fn headers(&mut self, v: Option<Value<'a>>, rules: HeaderRules, required: bool) {
        let loc = Loc::Top("headers");
        let Some(v) = v else {
            if required {
                self.missing(loc);
            }
            return;
        };
        if v.kind() != ValueKind::Object {
            self.wrong_type(loc, "an object of string values", v);
            return;
        }
        for (key, value) in v.members() {
            let loc = Loc::Header(key);
            if key.is_empty() {
                self.error(
                    ErrorCode::InvalidHeader,
                    loc,
                    "a header key must not be empty",
                );
            } else if rules == HeaderRules::Submit
                && key
                    .as_bytes()
                    .get(..4)
                    .is_some_and(|p| p.eq_ignore_ascii_case(b"rdq."))
            {
                self.error(
                    ErrorCode::ReservedHeader,
                    loc,
                    "rdq.* headers are set by the server, not by a submitter",
                );
            } else if !laws::header_in_version(moved_header(key.as_bytes()).is_some(), self.version)
            {
                self.error(
                    ErrorCode::InvalidHeader,
                    loc,
                    format!("in version 2 {key} moved to origin.{}", &key[4..]),
                );
            }
            if value.as_str().is_none() {
                self.wrong_type(loc, "a string", value);
            }
        }
    }

    /// v2: the typed origin (docs/envelope.md#typed-origin).
    fn origin(&mut self, v: Option<Value<'a>>) {
        let loc = Loc::Top("origin");
        let Some(v) = v else {
            self.missing(loc);
            return;
        };
        if v.kind() != ValueKind::Object {
            self.wrong_type(loc, "an object", v);
            return;
        }
        for (key, value) in v.members() {
            let field = match key {
                "source" => "source",
                "submitted_by" => "submitted_by",
                _ => continue,
            };
            if value.as_str().is_none() {
                self.wrong_type(Loc::Origin(field), "a string", value);
            }
        }
    }

    fn status(&mut self, v: Option<Value<'a>>) -> Option<Status> {
        let loc = Loc::Top("status");
        let s = self.string(v, loc)?;
        let status = Status::from_name(s.as_bytes())
            .filter(|&status| laws::status_in_version(status, self.version));
        match status {
            Some(status) => Some(status),
            None => {
                let known = if self.version >= 2 {
                    "PENDING, IN_FLIGHT, SUCCEEDED, DEAD or CANCELLED"
                } else {
                    "PENDING, IN_FLIGHT, SUCCEEDED or DEAD"
                };
                self.error(
                    ErrorCode::UnknownStatus,
                    loc,
                    format!(
                        "{} is not a status of version {}: expected {known}",
                        quoted(s),
                        self.version
                    ),
                );
                None
            }
        }
    }

    /// docs/envelope.md#status-consistency and #cancellation ([`laws::status_consistency`]).
    fn consistency(&mut self, status: Status, next: Stamp, lease: Stamp, history: Option<History>) {
        let bad = ErrorCode::InconsistentState;
        let name = status.as_str();
        let problems = laws::status_consistency(status, next, lease, history);
        let must = |must: Must| match must {
            Must::BeSet => "set",
            Must::BeNull => "null",
        };
        if let Some(m) = problems.next_attempt_at {
            self.error(
                bad,
                Loc::Top("next_attempt_at"),
                format!("a {name} task must have next_attempt_at {}", must(m)),
            );
        }
        if let Some(m) = problems.lease_expires_at {
            self.error(
                bad,
                Loc::Top("lease_expires_at"),
                format!("a {name} task must have lease_expires_at {}", must(m)),
            );
        }
        if let Some(problem) = problems.attempts {
            let problem = match problem {
                AttemptsProblem::InFlight => "no attempt may be in flight",
                AttemptsProblem::Empty => "there must be at least one attempt",
                AttemptsProblem::LastFinished => "the last attempt must be in flight",
                AttemptsProblem::LastInFlight => "the last attempt must be finished",
                AttemptsProblem::LastNotSuccess => "the last attempt must have outcome SUCCESS",
                AttemptsProblem::LastSuccess => "the last attempt must not have outcome SUCCESS",
            };
            self.error(
                bad,
                Loc::Top("attempts"),
                format!("status is {name}: {problem}"),
            );
        }
    }

    /// docs/envelope.md#warnings ([`laws::id_time_skew`], [`laws::created_after_start`]).
    fn warnings(&mut self, id_time: Option<u64>, created: Option<i64>, history: Option<History>) {
        let Some(created) = created else {
            return;
        };
        if let Some(skew) = id_time.and_then(|t| laws::id_time_skew(t, created)) {
            self.out.warnings.push(Diagnostic::new(
                ErrorCode::IdTimeMismatch,
                "/id",
                format!("the ULID's time and created_at differ by {skew} ms"),
            ));
        }
        let first_started = history.and_then(|h| h.first_started);
        if let Some(after) = laws::created_after_start(created, first_started) {
            self.out.warnings.push(Diagnostic::new(
                ErrorCode::CreatedAfterStart,
                "/created_at",
                format!("created_at is {after} ms after the first attempt started"),
            ));
        }
    }

    /// The submit subset (docs/envelope.md#the-submit-subset).
    fn submit(&mut self, top: &Top<'a>) {
        let present: [Option<Value<'a>>; 9] = [
            top.envelope_version,
            top.id,
            top.status,
            top.attempt_count,
            top.redrive_count,
            top.next_attempt_at,
            top.lease_expires_at,
            top.created_at,
            top.attempts,
        ];
        for (field, value) in SERVER_ASSIGNED.iter().zip(present) {
            if value.is_some() {
                self.error(
                    ErrorCode::ServerAssignedField,
                    Loc::Top(field),
                    format!("{field} is assigned by the server and must not be submitted"),
                );
            }
        }
        self.name(top.queue, Loc::Top("queue"));
        self.name(top.handler_ref, Loc::Top("handler_ref"));
        self.handler_version(top.handler_version);
        self.payload_source(top);
        self.content_type(top.payload_content_type);
        self.headers(top.headers, HeaderRules::Submit, false);
    }
}
