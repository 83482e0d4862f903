//! The proto mapping (docs/proto.md): the envelope as protocol buffers, for gRPC surfaces
//! and pipelines that carry envelopes as protobuf. Feature `proto`.
//!
//! `proto/rdq/envelope/v1/envelope.proto` and `v2/envelope.proto` are the schema; the
//! messages are derived by hand with prost in [`messages`], so no `protoc` is needed to build.
//! JSON is the arbiter: a message stands for exactly one canonical JSON line, and reading one
//! judges that line with the checker, so what comes back is a valid [`Envelope`] or the rule
//! it breaks. Unknown members and an error's `detail` travel as JSON text, exactly as written.
//!
//! - [`Envelope::to_proto`] and [`Envelope::from_proto`]: one envelope, one message;
//! - [`ProtoEnvelope`]: a decoded message of either version (dispatched on field 1);
//! - [`json_line`]: a message's canonical JSON line, judged by a checker of one's own;
//! - [`DelimitedReader`] and [`write_delimited`]: streams of messages, each after its
//!   length as a varint (Java's `writeDelimitedTo`, Go's `protodelim`).
//!
//! ```
//! use rdq_envelope::envelope::Envelope;
//! use rdq_envelope::proto::{write_delimited, DelimitedReader};
//!
//! let line = rdq_envelope::test_support::dead_v2_line();
//! let envelope = Envelope::from_json(&line)?;
//! let bytes = envelope.to_proto();
//! assert_eq!(Envelope::from_proto(&bytes)?, envelope);
//!
//! // A stream: a varint length before each message.
//! let mut stream = Vec::new();
//! write_delimited(&bytes, &mut stream);
//! write_delimited(&bytes, &mut stream);
//! let mut reader = DelimitedReader::new(&stream[..]);
//! let mut count = 0;
//! while let Some(frame) = reader.next_message()? {
//!     assert_eq!(Envelope::from_proto(frame.bytes)?.to_json().into_bytes(), line);
//!     count += 1;
//! }
//! assert_eq!(count, 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub(crate) mod convert;
pub mod messages;
mod stream;

use prost::Message;

use crate::envelope::{Checker, Envelope, EnvelopeError};

pub use stream::{write_delimited, DelimitedReader, Frame, StreamError, DEFAULT_MAX_MESSAGE_BYTES};

/// What reading a message refuses.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProtoError {
    /// The bytes are not a protobuf message of the schema (prost's reason).
    #[error("not an envelope message: {0}")]
    Decode(String),
    /// Field 1, `envelope_version`, names a version this build has no message for.
    #[error("envelope_version {0} has no message here (versions 1 and 2 are mapped)")]
    UnsupportedVersion(u32),
    /// A field holds what no envelope can (an enum at 0, a timestamp between milliseconds,
    /// JSON text that is not one value, ...).
    #[error("{field}: {why}")]
    Field {
        /// The field's path in the message, e.g. `attempts[0].started_at`.
        field: String,
        /// What is wrong with it.
        why: String,
    },
    /// The envelope the message stands for breaks a rule of the contract: the checker's first
    /// error (its code and the member's JSON pointer, which names the same field).
    #[error("{0}")]
    Invalid(EnvelopeError),
}

impl ProtoError {
    /// The checker's code for the refusal: the rule's for [`ProtoError::Invalid`], else
    /// `MALFORMED_JSON` (the bytes do not stand for one JSON envelope), or
    /// `UNSUPPORTED_VERSION`.
    ///
    /// ```
    /// use rdq_envelope::proto::ProtoError;
    /// assert_eq!(ProtoError::UnsupportedVersion(9).code().as_str(), "UNSUPPORTED_VERSION");
    /// ```
    pub fn code(&self) -> crate::ErrorCode {
        match self {
            ProtoError::Invalid(e) => e.code(),
            ProtoError::UnsupportedVersion(_) => crate::ErrorCode::UnsupportedVersion,
            ProtoError::Decode(_) | ProtoError::Field { .. } => crate::ErrorCode::MalformedJson,
        }
    }
}

/// A decoded message of either version: `rdq.envelope.v1.Envelope` or
/// `rdq.envelope.v2.Envelope`.
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub enum ProtoEnvelope {
    /// Version 1's message.
    V1(messages::v1::Envelope),
    /// Version 2's message.
    V2(messages::v2::Envelope),
}

impl std::fmt::Debug for ProtoEnvelope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProtoEnvelope::V1(m) => m.fmt(f),
            ProtoEnvelope::V2(m) => m.fmt(f),
        }
    }
}

impl ProtoEnvelope {
    /// Decodes one message (no length before it), choosing the version's message by field 1,
    /// `envelope_version`. Nothing is judged yet: see [`ProtoEnvelope::to_json_line`].
    ///
    /// ```
    /// use rdq_envelope::proto::ProtoEnvelope;
    /// let envelope = rdq_envelope::envelope::Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// let message = ProtoEnvelope::decode(&envelope.to_proto())?;
    /// assert_eq!(message.version(), 2);
    /// assert!(ProtoEnvelope::decode(b"\x08\x07").is_err()); // envelope_version 7
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn decode(bytes: &[u8]) -> Result<ProtoEnvelope, ProtoError> {
        let decode_error = |e: prost::DecodeError| ProtoError::Decode(e.to_string());
        let (message, len) = match version_of(bytes)? {
            1 => {
                let m = messages::v1::Envelope::decode(bytes).map_err(decode_error)?;
                let len = m.encoded_len();
                (ProtoEnvelope::V1(m), len)
            }
            2 => {
                let m = messages::v2::Envelope::decode(bytes).map_err(decode_error)?;
                let len = m.encoded_len();
                (ProtoEnvelope::V2(m), len)
            }
            other => return Err(ProtoError::UnsupportedVersion(other)),
        };
        // prost skips fields a message does not have: a longer input held some (a version 2
        // message labelled 1, a newer schema), which no JSON member could carry. Refused rather
        // than dropped. (Protobuf writers encode canonically, so lengths agree otherwise.)
        if len != bytes.len() {
            return Err(ProtoError::Decode(format!(
                "{} bytes, of which the version {} message reads {len}: it holds fields this \
                 mapping does not have (refused rather than dropped), or repeats one",
                bytes.len(),
                message.version()
            )));
        }
        Ok(message)
    }

    /// Its `envelope_version` (field 1).
    ///
    /// ```
    /// use rdq_envelope::proto::{messages, ProtoEnvelope};
    /// let message = ProtoEnvelope::V1(messages::v1::Envelope { envelope_version: 1, ..Default::default() });
    /// assert_eq!(message.version(), 1);
    /// ```
    pub fn version(&self) -> u32 {
        match self {
            ProtoEnvelope::V1(m) => m.envelope_version,
            ProtoEnvelope::V2(m) => m.envelope_version,
        }
    }

    /// The message's bytes (no length before them).
    ///
    /// ```
    /// use rdq_envelope::proto::ProtoEnvelope;
    /// let envelope = rdq_envelope::envelope::Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// let message = envelope.to_proto_message();
    /// assert_eq!(message.encode_to_vec(), envelope.to_proto());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn encode_to_vec(&self) -> Vec<u8> {
        match self {
            ProtoEnvelope::V1(m) => m.encode_to_vec(),
            ProtoEnvelope::V2(m) => m.encode_to_vec(),
        }
    }

    /// Appends the message's length as a varint, then the message, to `out`.
    ///
    /// ```
    /// use rdq_envelope::proto::{DelimitedReader, ProtoEnvelope};
    /// let envelope = rdq_envelope::envelope::Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// let mut out = Vec::new();
    /// envelope.to_proto_message().encode_delimited(&mut out);
    /// let mut reader = DelimitedReader::new(&out[..]);
    /// let frame = reader.next_message()?.unwrap();
    /// assert_eq!(frame.bytes, envelope.to_proto());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn encode_delimited(&self, out: &mut Vec<u8>) {
        let len = match self {
            ProtoEnvelope::V1(m) => m.encoded_len(),
            ProtoEnvelope::V2(m) => m.encoded_len(),
        };
        out.reserve(len + 10);
        prost::encoding::encode_varint(len as u64, out);
        // A Vec grows as needed: encoding into one cannot run out of room.
        let _ = match self {
            ProtoEnvelope::V1(m) => m.encode(out),
            ProtoEnvelope::V2(m) => m.encode(out),
        };
    }

    /// The canonical JSON line (no terminator) the message stands for, judged by `checker`
    /// (its options: the size limit, `--require-version`); written into `out`, which is
    /// cleared first. On an error, `out` holds nothing of use.
    ///
    /// ```
    /// use rdq_envelope::envelope::{Checker, Envelope};
    /// use rdq_envelope::proto::ProtoEnvelope;
    /// use rdq_envelope::{EnvelopeRules, RuleOptions};
    ///
    /// let line = rdq_envelope::test_support::dead_v2_line();
    /// let message = Envelope::from_json(&line)?.to_proto_message();
    /// let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// let mut out = Vec::new();
    /// message.to_json_line(&mut checker, &mut out)?;
    /// assert_eq!(out, line);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_json_line(&self, checker: &mut Checker, out: &mut Vec<u8>) -> Result<(), ProtoError> {
        self.judged(checker, out, |_| ())
    }

    /// Writes the line into `out` and judges it: `take` of its view when valid, else the
    /// checker's first error.
    fn judged<T>(
        &self,
        checker: &mut Checker,
        out: &mut Vec<u8>,
        take: impl FnOnce(crate::envelope::EnvelopeRef<'_>) -> T,
    ) -> Result<T, ProtoError> {
        convert::write_line(self, out)?;
        let checked = checker.check(out);
        if let Some(view) = checked.envelope() {
            return Ok(take(view));
        }
        let first = checked.verdict().errors.first();
        Err(ProtoError::Invalid(EnvelopeError::Invalid {
            code: first.map_or(crate::ErrorCode::MalformedJson, |d| d.code),
            pointer: first.map(|d| d.path.clone()).unwrap_or_default(),
            message: first.map(|d| d.message.clone()).unwrap_or_default(),
        }))
    }
}

/// Field 1 of a message: read from its first bytes when a writer put it first (as every
/// protobuf library does, in field order), else by decoding the message for it alone.
fn version_of(bytes: &[u8]) -> Result<u32, ProtoError> {
    if let Some((&0x08, rest)) = bytes.split_first() {
        let mut rest = rest;
        if let Ok(v) = prost::encoding::decode_varint(&mut rest) {
            if let Ok(v) = u32::try_from(v) {
                return Ok(v);
            }
        }
    }
    let probe =
        messages::VersionProbe::decode(bytes).map_err(|e| ProtoError::Decode(e.to_string()))?;
    Ok(probe.envelope_version)
}

/// A message's canonical JSON line (no terminator) into `out`, judged by `checker`:
/// [`ProtoEnvelope::decode`] then [`ProtoEnvelope::to_json_line`].
///
/// ```
/// use rdq_envelope::envelope::{Checker, Envelope};
/// use rdq_envelope::{EnvelopeRules, RuleOptions};
///
/// let line = rdq_envelope::test_support::dead_v2_line();
/// let bytes = Envelope::from_json(&line)?.to_proto();
/// let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
/// let mut out = Vec::new();
/// rdq_envelope::proto::json_line(&mut checker, &bytes, &mut out)?;
/// assert_eq!(out, line);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn json_line(checker: &mut Checker, bytes: &[u8], out: &mut Vec<u8>) -> Result<(), ProtoError> {
    ProtoEnvelope::decode(bytes)?.to_json_line(checker, out)
}

/// The proto mapping of the owned envelope (feature `proto`).
impl Envelope {
    /// The envelope as its message (`rdq.envelope.v1.Envelope` or `v2`, by its version).
    ///
    /// ```
    /// use rdq_envelope::envelope::Envelope;
    /// use rdq_envelope::proto::ProtoEnvelope;
    /// let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// let ProtoEnvelope::V2(message) = envelope.to_proto_message() else { unreachable!() };
    /// assert_eq!(message.queue, envelope.queue());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_proto_message(&self) -> ProtoEnvelope {
        convert::to_message(self)
    }

    /// The envelope as the bytes of its message (no length before them).
    ///
    /// ```
    /// use rdq_envelope::envelope::Envelope;
    /// let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// assert_eq!(Envelope::from_proto(&envelope.to_proto())?, envelope);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_proto(&self) -> Vec<u8> {
        self.to_proto_message().encode_to_vec()
    }

    /// Reads the bytes of one message (no length before them) as an envelope, checked against
    /// every rule with [`RuleOptions::default`](crate::RuleOptions::default); never panics on
    /// any bytes.
    ///
    /// ```
    /// use rdq_envelope::envelope::Envelope;
    /// use rdq_envelope::proto::ProtoError;
    /// assert!(matches!(Envelope::from_proto(b"\xff\xff"), Err(ProtoError::Decode(_))));
    /// // envelope_version 1 and nothing else: no status.
    /// let err = Envelope::from_proto(b"\x08\x01").unwrap_err();
    /// assert_eq!(err.to_string(), "status: is STATUS_UNSPECIFIED (0): a status is required");
    /// ```
    pub fn from_proto(bytes: &[u8]) -> Result<Envelope, ProtoError> {
        let rules = crate::EnvelopeRules::new(crate::RuleOptions::default())
            .map_err(|e| ProtoError::Decode(e.to_string()))?;
        Envelope::from_proto_with(&mut Checker::new(rules), bytes)
    }

    /// [`Envelope::from_proto`] with a checker of one's own (its options and buffers).
    ///
    /// ```
    /// use rdq_envelope::envelope::{Checker, Envelope};
    /// use rdq_envelope::{EnvelopeRules, RuleOptions};
    /// let envelope = Envelope::from_json(&rdq_envelope::test_support::dead_v2_line())?;
    /// let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// assert_eq!(Envelope::from_proto_with(&mut checker, &envelope.to_proto())?, envelope);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_proto_with(checker: &mut Checker, bytes: &[u8]) -> Result<Envelope, ProtoError> {
        let mut line = Vec::new();
        ProtoEnvelope::decode(bytes)?.judged(checker, &mut line, |view| view.to_owned())
    }
}

/// docs/proto.md's Rust examples, run as doctests: the page cannot drift from the code.
#[cfg(doctest)]
#[doc = include_str!("../../docs/proto.md")]
pub struct ProtoDocs;

#[cfg(test)]
mod tests;
