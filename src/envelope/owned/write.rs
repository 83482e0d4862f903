//! The canonical writer (docs/library.md#the-canonical-form): one JSON line per envelope, the
//! known members in the contract's order, strings escaped one way, unknown members after the
//! known ones in their order and spelling.
//!
//! One walk over the envelope writes into a [`Sink`]: a `Vec<u8>` (the line) or a [`Count`]
//! (its length, for the size limit, without writing it).

use std::io;

use super::{
    Attempt, AttemptError, Envelope, JsonText, Optional, Origin, PayloadRef, UnknownMembers,
};
use crate::envelope::types::Timestamp;

/// Where the writer puts bytes.
pub(crate) trait Sink {
    fn bytes(&mut self, bytes: &[u8]);
    /// `text` as a JSON string, quotes included.
    fn string(&mut self, text: &str);
    /// `bytes` as a base64 JSON string, quotes included.
    fn base64(&mut self, bytes: &[u8]);
}

impl Sink for Vec<u8> {
    #[inline]
    fn bytes(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
    #[inline]
    fn string(&mut self, text: &str) {
        crate::json::push_string(self, text);
    }
    fn base64(&mut self, bytes: &[u8]) {
        self.push(b'"');
        let at = self.len();
        let len = base64_simd::STANDARD.encoded_length(bytes.len());
        self.resize(at + len, 0);
        // The encoder fills exactly the `len` bytes made room for.
        let _ = base64_simd::STANDARD.encode(bytes, base64_simd::Out::from_slice(&mut self[at..]));
        self.push(b'"');
    }
}

/// The length of what would be written.
#[derive(Default)]
pub(crate) struct Count(pub usize);

impl Sink for Count {
    fn bytes(&mut self, bytes: &[u8]) {
        self.0 += bytes.len();
    }
    fn string(&mut self, text: &str) {
        self.0 += 2 + text.len();
        for b in text.bytes() {
            self.0 += match b {
                b'"' | b'\\' | 0x08 | b'\t' | b'\n' | 0x0C | b'\r' => 1,
                0..=0x1F => 5,
                _ => 0,
            };
        }
    }
    fn base64(&mut self, bytes: &[u8]) {
        self.0 += 2 + base64_simd::STANDARD.encoded_length(bytes.len());
    }
}

/// Writes `"key":` (the comma before it when it is not the object's first member).
#[inline]
fn key(out: &mut impl Sink, first: &mut bool, quoted_key: &[u8]) {
    if !std::mem::take(first) {
        out.bytes(b",");
    }
    out.bytes(quoted_key);
    out.bytes(b":");
}

fn timestamp(out: &mut impl Sink, t: Timestamp) {
    let mut quoted = [b'"'; 26];
    quoted[1..25].copy_from_slice(&t.to_bytes());
    out.bytes(&quoted);
}

fn optional_timestamp(out: &mut impl Sink, t: Option<Timestamp>) {
    match t {
        Some(t) => timestamp(out, t),
        None => out.bytes(b"null"),
    }
}

fn integer(out: &mut impl Sink, n: impl itoa::Integer) {
    out.bytes(itoa::Buffer::new().format(n).as_bytes());
}

fn unknown(out: &mut impl Sink, first: &mut bool, members: &UnknownMembers) {
    for member in members.iter() {
        key(out, first, member.spelling().as_bytes());
        out.bytes(member.value().as_str().as_bytes());
    }
}

fn raw(out: &mut impl Sink, value: &JsonText) {
    out.bytes(value.as_str().as_bytes());
}

impl Envelope {
    /// Writes the envelope, canonical, into any sink.
    pub(crate) fn write_into(&self, out: &mut impl Sink) {
        let first = &mut true;
        out.bytes(b"{");
        key(out, first, b"\"envelope_version\"");
        integer(out, self.version);
        key(out, first, b"\"id\"");
        let mut id = [b'"'; 28];
        id[1..27].copy_from_slice(&self.id.to_bytes());
        out.bytes(&id);
        key(out, first, b"\"queue\"");
        out.string(&self.queue);
        key(out, first, b"\"handler_ref\"");
        out.string(&self.handler_ref);
        match &self.handler_version {
            Optional::Absent => {}
            Optional::Null => {
                key(out, first, b"\"handler_version\"");
                out.bytes(b"null");
            }
            Optional::Set(v) => {
                key(out, first, b"\"handler_version\"");
                out.string(v);
            }
        }
        if let Some(payload) = &self.payload {
            key(out, first, b"\"payload\"");
            out.base64(payload);
        }
        key(out, first, b"\"payload_content_type\"");
        out.string(&self.payload_content_type);
        match &self.payload_ref {
            Optional::Absent => {}
            Optional::Null => {
                key(out, first, b"\"payload_ref\"");
                out.bytes(b"null");
            }
            Optional::Set(r) => {
                key(out, first, b"\"payload_ref\"");
                payload_ref(out, r);
            }
        }
        key(out, first, b"\"headers\"");
        out.bytes(b"{");
        for (i, (k, v)) in self.headers.iter().enumerate() {
            if i > 0 {
                out.bytes(b",");
            }
            out.string(k);
            out.bytes(b":");
            out.string(v);
        }
        out.bytes(b"}");
        if let Some(o) = &self.origin {
            key(out, first, b"\"origin\"");
            origin(out, o);
        }
        key(out, first, b"\"status\"");
        out.bytes(b"\"");
        out.bytes(self.status.as_str().as_bytes());
        out.bytes(b"\"");
        key(out, first, b"\"attempt_count\"");
        integer(out, self.attempt_count);
        key(out, first, b"\"redrive_count\"");
        integer(out, self.redrive_count);
        key(out, first, b"\"next_attempt_at\"");
        optional_timestamp(out, self.next_attempt_at);
        key(out, first, b"\"lease_expires_at\"");
        optional_timestamp(out, self.lease_expires_at);
        key(out, first, b"\"created_at\"");
        timestamp(out, self.created_at);
        key(out, first, b"\"attempts\"");
        out.bytes(b"[");
        for (i, a) in self.attempts.iter().enumerate() {
            if i > 0 {
                out.bytes(b",");
            }
            attempt(out, a, self.version);
        }
        out.bytes(b"]");
        unknown(out, first, &self.unknown);
        out.bytes(b"}");
    }

    /// Appends the envelope as one canonical JSON line, its LF included
    /// (docs/library.md#the-canonical-form).
    ///
    /// ```
    /// # use rdq_envelope::envelope::{Producer, Submit, Timestamp};
    /// # let t0: Timestamp = "2024-05-01T12:00:00.000Z".parse()?;
    /// # let envelope = Producer::with_clock(move || t0).with_seed(1).submit(Submit::new("q", "h", vec![], "text/plain")?)?;
    /// let mut out = Vec::new();
    /// envelope.write_vec(&mut out);
    /// envelope.write_vec(&mut out);
    /// assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_vec(&self, out: &mut Vec<u8>) {
        self.write_into(out);
        out.push(b'\n');
    }

    /// Writes the envelope as one canonical JSON line, its LF included, to `writer` (in one
    /// `write_all`: wrap an unbuffered writer in a `BufWriter` only for many envelopes).
    ///
    /// ```
    /// # use rdq_envelope::envelope::{Producer, Submit};
    /// # let envelope = Producer::new().submit(Submit::new("q", "h", vec![], "text/plain")?)?;
    /// let mut stdout = std::io::stdout().lock();
    /// envelope.write(&mut stdout)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write(&self, mut writer: impl io::Write) -> io::Result<()> {
        let mut line = Vec::with_capacity(self.encoded_len() + 1);
        self.write_vec(&mut line);
        writer.write_all(&line)
    }

    /// The envelope as canonical JSON, without a line terminator.
    ///
    /// ```
    /// # use rdq_envelope::envelope::{Producer, Submit, Timestamp};
    /// # let t0: Timestamp = "2024-05-01T12:00:00.000Z".parse()?;
    /// let envelope = Producer::with_clock(move || t0).with_seed(1)
    ///     .submit(Submit::new("mail", "send", b"{}".to_vec(), "application/json")?)?;
    /// assert!(envelope.to_json().starts_with(r#"{"envelope_version":1,"id":"01HWT0D7G0"#));
    /// assert!(envelope.to_json().ends_with(r#""created_at":"2024-05-01T12:00:00.000Z","attempts":[]}"#));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_json(&self) -> String {
        let mut out = Vec::with_capacity(self.encoded_len());
        self.write_into(&mut out);
        // Every piece written is UTF-8: ASCII around strings that are `str`s and JSON text
        // read from valid UTF-8.
        String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    /// The length in bytes of the line [`Envelope::write`] writes, its LF excluded: what the
    /// size limit is compared with.
    ///
    /// ```
    /// # use rdq_envelope::envelope::{Producer, Submit};
    /// # let envelope = Producer::new().submit(Submit::new("q", "h", vec![7; 100], "text/plain")?)?;
    /// assert_eq!(envelope.encoded_len(), envelope.to_json().len());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn encoded_len(&self) -> usize {
        let mut count = Count::default();
        self.write_into(&mut count);
        count.0
    }
}

fn payload_ref(out: &mut impl Sink, r: &PayloadRef) {
    let first = &mut true;
    out.bytes(b"{");
    key(out, first, b"\"uri\"");
    out.string(&r.uri);
    key(out, first, b"\"sha256\"");
    out.string(&r.sha256);
    key(out, first, b"\"size\"");
    integer(out, r.size);
    unknown(out, first, &r.unknown);
    out.bytes(b"}");
}

fn origin(out: &mut impl Sink, o: &Origin) {
    let first = &mut true;
    out.bytes(b"{");
    if let Some(source) = &o.source {
        key(out, first, b"\"source\"");
        out.string(source);
    }
    if let Some(by) = &o.submitted_by {
        key(out, first, b"\"submitted_by\"");
        out.string(by);
    }
    unknown(out, first, &o.unknown);
    out.bytes(b"}");
}

fn attempt(out: &mut impl Sink, a: &Attempt, version: u32) {
    let first = &mut true;
    out.bytes(b"{");
    key(out, first, b"\"attempt_no\"");
    integer(out, a.attempt_no);
    key(out, first, b"\"started_at\"");
    timestamp(out, a.started_at);
    key(out, first, b"\"finished_at\"");
    optional_timestamp(out, a.finished_at);
    if version >= 2 {
        key(out, first, b"\"duration_ms\"");
        match a.duration_ms() {
            Some(ms) => integer(out, ms),
            None => out.bytes(b"null"),
        }
    }
    key(out, first, b"\"outcome\"");
    match a.outcome {
        Some(o) => {
            out.bytes(b"\"");
            out.bytes(o.as_str().as_bytes());
            out.bytes(b"\"");
        }
        None => out.bytes(b"null"),
    }
    match &a.error {
        Optional::Absent => {}
        Optional::Null => {
            key(out, first, b"\"error\"");
            out.bytes(b"null");
        }
        Optional::Set(e) => {
            key(out, first, b"\"error\"");
            error(out, e);
        }
    }
    unknown(out, first, &a.unknown);
    out.bytes(b"}");
}

fn error(out: &mut impl Sink, e: &AttemptError) {
    let first = &mut true;
    out.bytes(b"{");
    key(out, first, b"\"type\"");
    out.string(&e.kind);
    key(out, first, b"\"message\"");
    out.string(&e.message);
    if let Some(detail) = &e.detail {
        key(out, first, b"\"detail\"");
        raw(out, detail);
    }
    match &e.stack {
        Optional::Absent => {}
        Optional::Null => {
            key(out, first, b"\"stack\"");
            out.bytes(b"null");
        }
        Optional::Set(s) => {
            key(out, first, b"\"stack\"");
            out.string(s);
        }
    }
    unknown(out, first, &e.unknown);
    out.bytes(b"}");
}
