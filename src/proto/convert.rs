//! The conversion both ways: an owned [`Envelope`] to its message, and a message to the
//! canonical JSON line it stands for.
//!
//! A message is read by writing the line it maps to (the canonical writer's order and escapes,
//! so that a message made from a canonical line gives that line back byte for byte) and then
//! judging that line with the checker: every rule of the contract is applied in one place, the
//! same as for JSON, and what comes back is a valid envelope or the rule it breaks. What only
//! a message can get wrong (an enum at 0, a timestamp between milliseconds, JSON text that is
//! not one value, an unknown member named like a known one) is refused here first, naming the
//! field.

use crate::envelope::{
    known, Attempt, AttemptError, Envelope, JsonText, Optional, Origin, PayloadRef, Timestamp,
    UnknownMembers,
};
use crate::envelope::{Outcome, Status};

use super::messages::{
    self, v1, v2, AttemptErrorSlot, HandlerVersion, Header, NullValue, Stack, UnknownMember,
};
use super::{ProtoEnvelope, ProtoError};

/// A timestamp as `google.protobuf.Timestamp`: seconds floored, nanoseconds non-negative.
pub(crate) fn timestamp_message(t: Timestamp) -> messages::Timestamp {
    let ms = t.unix_ms();
    messages::Timestamp {
        seconds: ms.div_euclid(1000),
        // 0..=999 milliseconds: at most 999,000,000, which fits an i32.
        nanos: (ms.rem_euclid(1000) * 1_000_000) as i32,
    }
}

/// A `google.protobuf.Timestamp` as an envelope's timestamp: whole milliseconds between
/// 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z.
pub(crate) fn timestamp_of(
    t: &messages::Timestamp,
    field: &Field<'_>,
) -> Result<Timestamp, ProtoError> {
    if !(0..1_000_000_000).contains(&t.nanos) {
        return Err(field.error("nanos is not in 0..=999999999"));
    }
    if t.nanos % 1_000_000 != 0 {
        return Err(field.error("is not a whole number of milliseconds (nanos % 1000000 != 0)"));
    }
    t.seconds
        .checked_mul(1000)
        .and_then(|ms| ms.checked_add(i64::from(t.nanos / 1_000_000)))
        .and_then(Timestamp::from_unix_ms)
        .ok_or_else(|| {
            field.error("is outside 0000-01-01T00:00:00.000Z..=9999-12-31T23:59:59.999Z")
        })
}

fn unknown_messages(members: &UnknownMembers) -> Vec<UnknownMember> {
    let mut canonical = Vec::new();
    members
        .iter()
        .map(|m| {
            canonical.clear();
            crate::json::push_string(&mut canonical, m.name());
            UnknownMember {
                name: m.name().to_owned(),
                json: m.value().as_str().to_owned(),
                spelling: (canonical != m.spelling().as_bytes()).then(|| m.spelling().to_owned()),
            }
        })
        .collect()
}

fn headers(envelope: &Envelope) -> Vec<Header> {
    envelope
        .headers
        .iter()
        .map(|(key, value)| Header {
            key: key.clone(),
            value: value.clone(),
        })
        .collect()
}

fn handler_version(version: &Optional<String>) -> Option<HandlerVersion> {
    match version {
        Optional::Absent => None,
        Optional::Null => Some(HandlerVersion::HandlerVersionNull(
            NullValue::NullValue as i32,
        )),
        Optional::Set(v) => Some(HandlerVersion::HandlerVersionValue(v.clone())),
    }
}

fn status_message(status: Status) -> i32 {
    (match status {
        Status::Pending => messages::Status::Pending,
        Status::InFlight => messages::Status::InFlight,
        Status::Succeeded => messages::Status::Succeeded,
        Status::Dead => messages::Status::Dead,
        Status::Cancelled => messages::Status::Cancelled,
    }) as i32
}

fn outcome_message(outcome: Outcome) -> i32 {
    (match outcome {
        Outcome::Success => messages::Outcome::Success,
        Outcome::RetryableFailure => messages::Outcome::RetryableFailure,
        Outcome::PermanentFailure => messages::Outcome::PermanentFailure,
        Outcome::LeaseExpired => messages::Outcome::LeaseExpired,
    }) as i32
}

fn attempt_message(a: &Attempt) -> messages::Attempt {
    messages::Attempt {
        attempt_no: a.attempt_no,
        started_at: Some(timestamp_message(a.started_at)),
        finished_at: a.finished_at.map(timestamp_message),
        outcome: a.outcome.map(outcome_message),
        error: match &a.error {
            Optional::Absent => None,
            Optional::Null => Some(AttemptErrorSlot::ErrorNull(NullValue::NullValue as i32)),
            Optional::Set(e) => Some(AttemptErrorSlot::ErrorValue(error_message(e))),
        },
        unknown_members: unknown_messages(&a.unknown),
    }
}

fn error_message(e: &AttemptError) -> messages::AttemptError {
    messages::AttemptError {
        r#type: e.kind.clone(),
        message: e.message.clone(),
        detail_json: e.detail.as_ref().map(|d| d.as_str().to_owned()),
        stack: match &e.stack {
            Optional::Absent => None,
            Optional::Null => Some(Stack::StackNull(NullValue::NullValue as i32)),
            Optional::Set(s) => Some(Stack::StackValue(s.clone())),
        },
        unknown_members: unknown_messages(&e.unknown),
    }
}

fn payload_ref_message(r: &PayloadRef) -> messages::PayloadRef {
    messages::PayloadRef {
        uri: r.uri.clone(),
        sha256: r.sha256.clone(),
        size: r.size,
        unknown_members: unknown_messages(&r.unknown),
    }
}

fn origin_message(o: &Origin) -> messages::Origin {
    messages::Origin {
        source: o.source.clone(),
        submitted_by: o.submitted_by.clone(),
        unknown_members: unknown_messages(&o.unknown),
    }
}

/// The message of an envelope: version 1's or version 2's, by its `envelope_version`.
pub(crate) fn to_message(e: &Envelope) -> ProtoEnvelope {
    let id = String::from_utf8_lossy(&e.id.to_bytes()).into_owned();
    let attempts = e.attempts.iter().map(attempt_message).collect();
    if e.version >= 2 {
        ProtoEnvelope::V2(v2::Envelope {
            envelope_version: e.version,
            id,
            queue: e.queue.clone(),
            handler_ref: e.handler_ref.clone(),
            handler_version: handler_version(&e.handler_version),
            payload: e.payload.clone(),
            payload_content_type: e.payload_content_type.clone(),
            payload_ref: match &e.payload_ref {
                Optional::Absent => None,
                Optional::Null => Some(v2::PayloadRefSlot::PayloadRefNull(
                    NullValue::NullValue as i32,
                )),
                Optional::Set(r) => {
                    Some(v2::PayloadRefSlot::PayloadRefValue(payload_ref_message(r)))
                }
            },
            headers: headers(e),
            origin: e.origin.as_ref().map(origin_message),
            status: status_message(e.status),
            attempt_count: e.attempt_count,
            redrive_count: e.redrive_count,
            next_attempt_at: e.next_attempt_at.map(timestamp_message),
            lease_expires_at: e.lease_expires_at.map(timestamp_message),
            created_at: Some(timestamp_message(e.created_at)),
            attempts,
            unknown_members: unknown_messages(&e.unknown),
        })
    } else {
        ProtoEnvelope::V1(v1::Envelope {
            envelope_version: e.version,
            id,
            queue: e.queue.clone(),
            handler_ref: e.handler_ref.clone(),
            handler_version: handler_version(&e.handler_version),
            payload: e.payload.clone().unwrap_or_default(),
            payload_content_type: e.payload_content_type.clone(),
            // Version 1 cannot hold a claim check: the owned envelope's setters refuse one.
            payload_ref: (!e.payload_ref.is_absent()).then_some(
                v1::PayloadRefSlot::PayloadRefNull(NullValue::NullValue as i32),
            ),
            headers: headers(e),
            status: status_message(e.status),
            attempt_count: e.attempt_count,
            redrive_count: e.redrive_count,
            next_attempt_at: e.next_attempt_at.map(timestamp_message),
            lease_expires_at: e.lease_expires_at.map(timestamp_message),
            created_at: Some(timestamp_message(e.created_at)),
            attempts,
            unknown_members: unknown_messages(&e.unknown),
        })
    }
}

/// Where in the message a value lies, for errors: `attempts[2].error_value.stack_null`.
pub(crate) struct Field<'a> {
    parent: Option<&'a Field<'a>>,
    name: &'static str,
    index: Option<usize>,
}

impl<'a> Field<'a> {
    pub(crate) fn top(name: &'static str) -> Field<'static> {
        Field {
            parent: None,
            name,
            index: None,
        }
    }

    fn child(&'a self, name: &'static str) -> Field<'a> {
        Field {
            parent: Some(self),
            name,
            index: None,
        }
    }

    fn item(&'a self, name: &'static str, index: usize) -> Field<'a> {
        Field {
            parent: Some(self),
            name,
            index: Some(index),
        }
    }

    fn path(&self, out: &mut String) {
        if let Some(parent) = self.parent {
            parent.path(out);
        }
        if !self.name.is_empty() {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(self.name);
        }
        if let Some(i) = self.index {
            out.push_str(&format!("[{i}]"));
        }
    }

    #[cold]
    fn error(&self, why: impl Into<String>) -> ProtoError {
        let mut field = String::new();
        self.path(&mut field);
        ProtoError::Field {
            field,
            why: why.into(),
        }
    }
}

/// The canonical JSON line a message stands for, without its terminator, appended to `out`.
/// Not yet judged: the caller hands it to a checker.
struct LineWriter<'o> {
    out: &'o mut Vec<u8>,
    first: bool,
}

impl LineWriter<'_> {
    fn open(&mut self, bracket: u8) {
        self.out.push(bracket);
        self.first = true;
    }

    fn close(&mut self, bracket: u8) {
        self.out.push(bracket);
        self.first = false;
    }

    fn key(&mut self, quoted: &[u8]) {
        if !std::mem::take(&mut self.first) {
            self.out.push(b',');
        }
        self.out.extend_from_slice(quoted);
        self.out.push(b':');
    }

    fn string(&mut self, text: &str) {
        crate::json::push_string(self.out, text);
    }

    fn integer(&mut self, n: impl itoa::Integer) {
        self.out
            .extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    }

    fn timestamp(&mut self, t: Timestamp) {
        self.out.push(b'"');
        self.out.extend_from_slice(&t.to_bytes());
        self.out.push(b'"');
    }

    fn null(&mut self) {
        self.out.extend_from_slice(b"null");
    }

    fn base64(&mut self, bytes: &[u8]) {
        self.out.push(b'"');
        let at = self.out.len();
        let len = base64_simd::STANDARD.encoded_length(bytes.len());
        self.out.resize(at + len, 0);
        // The encoder fills exactly the `len` bytes made room for.
        let _ =
            base64_simd::STANDARD.encode(bytes, base64_simd::Out::from_slice(&mut self.out[at..]));
        self.out.push(b'"');
    }

    /// An object's unknown members, after its known ones: each name checked against the
    /// object's known names (a member that took one would be read back as the known member),
    /// each value checked to be exactly one JSON value, each spelling to decode to the name.
    fn unknown(
        &mut self,
        members: &[UnknownMember],
        reserved: &[&str],
        field: &Field<'_>,
    ) -> Result<(), ProtoError> {
        let mut decoded = String::new();
        for (i, m) in members.iter().enumerate() {
            let at = field.item("unknown_members", i);
            if reserved.contains(&m.name.as_str()) {
                return Err(at.child("name").error(format!(
                    "{:?} is a known member here: it is carried in its own field",
                    m.name
                )));
            }
            let value = JsonText::parse(&m.json).map_err(|e| {
                at.child("json")
                    .error(format!("is not one JSON value: {e}"))
            })?;
            match &m.spelling {
                Some(spelling) => {
                    let quoted = JsonText::parse(spelling).ok().filter(|s| {
                        s.as_str().len() == spelling.len() && spelling.starts_with('"')
                    });
                    let Some(quoted) = quoted else {
                        return Err(at.child("spelling").error("is not a JSON string"));
                    };
                    let text = quoted.as_str();
                    crate::json::unescape(&text[1..text.len() - 1], &mut decoded);
                    if decoded != m.name {
                        return Err(at
                            .child("spelling")
                            .error(format!("does not spell the name {:?}", m.name)));
                    }
                    self.key(text.as_bytes());
                }
                None => {
                    if !std::mem::take(&mut self.first) {
                        self.out.push(b',');
                    }
                    self.string(&m.name);
                    self.out.push(b':');
                }
            }
            self.out.extend_from_slice(value.as_str().as_bytes());
        }
        Ok(())
    }
}

fn null_value(value: i32, field: &Field<'_>) -> Result<(), ProtoError> {
    if value == NullValue::NullValue as i32 {
        return Ok(());
    }
    Err(field.error(format!("{value} is not NULL_VALUE (0)")))
}

fn status_of(value: i32, field: &Field<'_>) -> Result<Status, ProtoError> {
    Ok(match messages::Status::try_from(value) {
        Ok(messages::Status::Pending) => Status::Pending,
        Ok(messages::Status::InFlight) => Status::InFlight,
        Ok(messages::Status::Succeeded) => Status::Succeeded,
        Ok(messages::Status::Dead) => Status::Dead,
        Ok(messages::Status::Cancelled) => Status::Cancelled,
        Ok(messages::Status::Unspecified) => {
            return Err(field.error("is STATUS_UNSPECIFIED (0): a status is required"))
        }
        Err(_) => return Err(field.error(format!("{value} is not a Status"))),
    })
}

fn outcome_of(value: i32, field: &Field<'_>) -> Result<Outcome, ProtoError> {
    Ok(match messages::Outcome::try_from(value) {
        Ok(messages::Outcome::Success) => Outcome::Success,
        Ok(messages::Outcome::RetryableFailure) => Outcome::RetryableFailure,
        Ok(messages::Outcome::PermanentFailure) => Outcome::PermanentFailure,
        Ok(messages::Outcome::LeaseExpired) => Outcome::LeaseExpired,
        Ok(messages::Outcome::Unspecified) => {
            return Err(field.error("is OUTCOME_UNSPECIFIED (0): leave it unset for null"))
        }
        Err(_) => return Err(field.error(format!("{value} is not an Outcome"))),
    })
}

/// The members both versions' messages hold, borrowed.
struct Common<'m> {
    version: u32,
    id: &'m str,
    queue: &'m str,
    handler_ref: &'m str,
    handler_version: &'m Option<HandlerVersion>,
    payload_content_type: &'m str,
    headers: &'m [Header],
    status: i32,
    attempt_count: u32,
    redrive_count: u32,
    next_attempt_at: &'m Option<messages::Timestamp>,
    lease_expires_at: &'m Option<messages::Timestamp>,
    created_at: &'m Option<messages::Timestamp>,
    attempts: &'m [messages::Attempt],
    unknown_members: &'m [UnknownMember],
}

/// What version 2 adds, borrowed; `None` for version 1.
struct Extra<'m> {
    payload_ref: &'m Option<v2::PayloadRefSlot>,
    origin: &'m Option<messages::Origin>,
}

/// The members both versions' messages hold under the same names and types: one list for
/// both (the two messages are distinct types, so a function would be written twice).
macro_rules! common {
    ($m:expr) => {{
        let m = $m;
        Common {
            version: m.envelope_version,
            id: &m.id,
            queue: &m.queue,
            handler_ref: &m.handler_ref,
            handler_version: &m.handler_version,
            payload_content_type: &m.payload_content_type,
            headers: &m.headers,
            status: m.status,
            attempt_count: m.attempt_count,
            redrive_count: m.redrive_count,
            next_attempt_at: &m.next_attempt_at,
            lease_expires_at: &m.lease_expires_at,
            created_at: &m.created_at,
            attempts: &m.attempts,
            unknown_members: &m.unknown_members,
        }
    }};
}

/// Writes the canonical JSON line of `message` (no terminator) into `out`, which is cleared
/// first; refuses what only a message can get wrong, naming the field. The line still has to
/// pass the checker.
pub(crate) fn write_line(message: &ProtoEnvelope, out: &mut Vec<u8>) -> Result<(), ProtoError> {
    out.clear();
    match message {
        ProtoEnvelope::V1(m) => {
            let payload_ref_null = m
                .payload_ref
                .as_ref()
                .map(|v1::PayloadRefSlot::PayloadRefNull(v)| *v);
            write_common(&common!(m), Some(&m.payload), payload_ref_null, None, out)
        }
        ProtoEnvelope::V2(m) => {
            let extra = Extra {
                payload_ref: &m.payload_ref,
                origin: &m.origin,
            };
            write_common(&common!(m), m.payload.as_deref(), None, Some(extra), out)
        }
    }
}

fn write_common(
    m: &Common<'_>,
    payload: Option<&[u8]>,
    v1_payload_ref_null: Option<i32>,
    extra: Option<Extra<'_>>,
    out: &mut Vec<u8>,
) -> Result<(), ProtoError> {
    let top = Field::top("");
    let expected = if extra.is_some() { 2 } else { 1 };
    if m.version != expected {
        return Err(top.child("envelope_version").error(format!(
            "is {}, but this is the version {expected} message",
            m.version
        )));
    }
    let mut w = LineWriter { out, first: true };
    w.open(b'{');
    w.key(b"\"envelope_version\"");
    w.integer(m.version);
    w.key(b"\"id\"");
    w.string(m.id);
    w.key(b"\"queue\"");
    w.string(m.queue);
    w.key(b"\"handler_ref\"");
    w.string(m.handler_ref);
    match m.handler_version {
        None => {}
        Some(HandlerVersion::HandlerVersionNull(v)) => {
            null_value(*v, &top.child("handler_version_null"))?;
            w.key(b"\"handler_version\"");
            w.null();
        }
        Some(HandlerVersion::HandlerVersionValue(v)) => {
            w.key(b"\"handler_version\"");
            w.string(v);
        }
    }
    if let Some(payload) = payload {
        w.key(b"\"payload\"");
        w.base64(payload);
    }
    w.key(b"\"payload_content_type\"");
    w.string(m.payload_content_type);
    if let Some(v) = v1_payload_ref_null {
        null_value(v, &top.child("payload_ref_null"))?;
        w.key(b"\"payload_ref\"");
        w.null();
    }
    if let Some(extra) = &extra {
        match extra.payload_ref {
            None => {}
            Some(v2::PayloadRefSlot::PayloadRefNull(v)) => {
                null_value(*v, &top.child("payload_ref_null"))?;
                w.key(b"\"payload_ref\"");
                w.null();
            }
            Some(v2::PayloadRefSlot::PayloadRefValue(r)) => {
                let field = top.child("payload_ref_value");
                w.key(b"\"payload_ref\"");
                w.open(b'{');
                w.key(b"\"uri\"");
                w.string(&r.uri);
                w.key(b"\"sha256\"");
                w.string(&r.sha256);
                w.key(b"\"size\"");
                w.integer(r.size);
                w.unknown(&r.unknown_members, known::PAYLOAD_REF, &field)?;
                w.close(b'}');
            }
        }
    }
    w.key(b"\"headers\"");
    w.open(b'{');
    for h in m.headers {
        if !std::mem::take(&mut w.first) {
            w.out.push(b',');
        }
        w.string(&h.key);
        w.out.push(b':');
        w.string(&h.value);
    }
    w.close(b'}');
    if let Some(extra) = &extra {
        let field = top.child("origin");
        w.key(b"\"origin\"");
        w.open(b'{');
        if let Some(o) = extra.origin {
            if let Some(source) = &o.source {
                w.key(b"\"source\"");
                w.string(source);
            }
            if let Some(by) = &o.submitted_by {
                w.key(b"\"submitted_by\"");
                w.string(by);
            }
            w.unknown(&o.unknown_members, known::ORIGIN, &field)?;
        }
        w.close(b'}');
    }
    let status = status_of(m.status, &top.child("status"))?;
    w.key(b"\"status\"");
    w.out.push(b'"');
    w.out.extend_from_slice(status.as_str().as_bytes());
    w.out.push(b'"');
    w.key(b"\"attempt_count\"");
    w.integer(m.attempt_count);
    w.key(b"\"redrive_count\"");
    w.integer(m.redrive_count);
    w.key(b"\"next_attempt_at\"");
    optional_timestamp(&mut w, m.next_attempt_at, &top.child("next_attempt_at"))?;
    w.key(b"\"lease_expires_at\"");
    optional_timestamp(&mut w, m.lease_expires_at, &top.child("lease_expires_at"))?;
    w.key(b"\"created_at\"");
    let created_at = top.child("created_at");
    let created = m
        .created_at
        .as_ref()
        .ok_or_else(|| created_at.error("is not set: it is required"))?;
    w.timestamp(timestamp_of(created, &created_at)?);
    w.key(b"\"attempts\"");
    w.open(b'[');
    for (i, a) in m.attempts.iter().enumerate() {
        if i > 0 {
            w.out.push(b',');
        }
        attempt_line(&mut w, a, m.version, &top.item("attempts", i))?;
    }
    w.close(b']');
    w.unknown(m.unknown_members, known::top(m.version), &top)?;
    w.close(b'}');
    Ok(())
}

fn optional_timestamp(
    w: &mut LineWriter<'_>,
    t: &Option<messages::Timestamp>,
    field: &Field<'_>,
) -> Result<Option<Timestamp>, ProtoError> {
    match t {
        None => {
            w.null();
            Ok(None)
        }
        Some(t) => {
            let t = timestamp_of(t, field)?;
            w.timestamp(t);
            Ok(Some(t))
        }
    }
}

fn attempt_line(
    w: &mut LineWriter<'_>,
    a: &messages::Attempt,
    version: u32,
    field: &Field<'_>,
) -> Result<(), ProtoError> {
    w.open(b'{');
    w.key(b"\"attempt_no\"");
    w.integer(a.attempt_no);
    let started_field = field.child("started_at");
    let started = a
        .started_at
        .as_ref()
        .ok_or_else(|| started_field.error("is not set: it is required"))?;
    let started = timestamp_of(started, &started_field)?;
    w.key(b"\"started_at\"");
    w.timestamp(started);
    w.key(b"\"finished_at\"");
    let finished = optional_timestamp(w, &a.finished_at, &field.child("finished_at"))?;
    if version >= 2 {
        // Derived, as the owned envelope does: the checker holds a line to the difference.
        w.key(b"\"duration_ms\"");
        match finished {
            Some(f) => w.integer(f.unix_ms() - started.unix_ms()),
            None => w.null(),
        }
    }
    w.key(b"\"outcome\"");
    match a.outcome {
        None => w.null(),
        Some(o) => {
            let outcome = outcome_of(o, &field.child("outcome"))?;
            w.out.push(b'"');
            w.out.extend_from_slice(outcome.as_str().as_bytes());
            w.out.push(b'"');
        }
    }
    match &a.error {
        None => {}
        Some(AttemptErrorSlot::ErrorNull(v)) => {
            null_value(*v, &field.child("error_null"))?;
            w.key(b"\"error\"");
            w.null();
        }
        Some(AttemptErrorSlot::ErrorValue(e)) => {
            let field = field.child("error_value");
            w.key(b"\"error\"");
            w.open(b'{');
            w.key(b"\"type\"");
            w.string(&e.r#type);
            w.key(b"\"message\"");
            w.string(&e.message);
            if let Some(detail) = &e.detail_json {
                let detail = JsonText::parse(detail).map_err(|err| {
                    field
                        .child("detail_json")
                        .error(format!("is not one JSON value: {err}"))
                })?;
                w.key(b"\"detail\"");
                w.out.extend_from_slice(detail.as_str().as_bytes());
            }
            match &e.stack {
                None => {}
                Some(Stack::StackNull(v)) => {
                    null_value(*v, &field.child("stack_null"))?;
                    w.key(b"\"stack\"");
                    w.null();
                }
                Some(Stack::StackValue(s)) => {
                    w.key(b"\"stack\"");
                    w.string(s);
                }
            }
            w.unknown(&e.unknown_members, known::ERROR, &field)?;
            w.close(b'}');
        }
    }
    w.unknown(&a.unknown_members, known::attempt(version), field)?;
    w.close(b'}');
    Ok(())
}
