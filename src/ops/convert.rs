//! `convert` (docs/proto.md#convert): JSON Lines to length-delimited protobuf messages
//! ([`ToProtoOp`]) and back ([`FromProtoOp`]), both run by the parallel pipeline.
//!
//! The pipeline reads lines; a protobuf stream has none (a message holds any byte). So the
//! stream is framed on the reader's thread ([`ProtoFrames`]: the varint lengths, the limit,
//! where each message lies) and handed on as one text line per message, `OFFSET BASE64`, which
//! the workers decode in parallel. The line's number is the message's index + 1, and a stream
//! that cannot be framed on (cut short, a length over the limit, a length that is no varint)
//! ends in one line, `!OFFSET why`, that the workers reject. Base64 costs a few percent of a
//! conversion (docs/performance.md) and buys the pipeline whole: `-j`, rejects, the books,
//! atomic and compressed outputs, the same bytes for any `-j`.

use std::io::{self, Read};

use serde::Serialize;

use super::output::{PRIMARY, REJECTS};
use crate::diagnostic::Diagnostic;
use crate::envelope::{Checker, EnvelopeRules, Verdict};
use crate::pipeline::{Action, ChunkOutput, LineOperation, SourceLine};
use crate::proto::{DelimitedReader, ProtoEnvelope, StreamError};
use crate::ErrorCode;

/// `convert --to proto`: each valid line as its message, after its length as a varint, on the
/// primary output; invalid lines to the rejects, as every command rejects them.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToProtoOp {
    /// The rules, configured once.
    pub rules: EnvelopeRules,
    /// Write reject records (`--rejects`).
    pub write_rejects: bool,
    /// The reader cap, for the `LINE_TOO_LONG` message.
    pub max_line_bytes: usize,
}

impl ToProtoOp {
    /// Conversion to protobuf under `rules`, without reject records, with the reader's
    /// default cap as `max_line_bytes`.
    ///
    /// ```
    /// use rdq_envelope::ops::ToProtoOp;
    /// use rdq_envelope::pipeline::{self, Outputs, PipelineOptions, Source};
    /// use rdq_envelope::{EnvelopeRules, RuleOptions};
    ///
    /// let op = ToProtoOp::new(EnvelopeRules::new(RuleOptions::default())?);
    /// let mut input = rdq_envelope::test_support::dead_v2_line();
    /// input.push(b'\n');
    /// let sources = vec![Source::Reader { name: "demo".into(), reader: Box::new(std::io::Cursor::new(input)) }];
    /// let mut messages = Vec::new();
    /// let mut outputs = Outputs::none();
    /// outputs.set(0, Some(&mut messages));
    /// let (summary, ()) = pipeline::run(sources, &op, PipelineOptions::default(), outputs, None)?;
    /// assert_eq!(summary.emitted, 1);
    /// let mut reader = rdq_envelope::proto::DelimitedReader::new(&messages[..]);
    /// let frame = reader.next_message()?.unwrap();
    /// assert_eq!(rdq_envelope::envelope::Envelope::from_proto(frame.bytes)?.status().as_str(), "DEAD");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(rules: EnvelopeRules) -> Self {
        ToProtoOp {
            rules,
            write_rejects: false,
            max_line_bytes: crate::framing::DEFAULT_MAX_LINE_BYTES,
        }
    }
}

/// A worker's reusable state for [`ToProtoOp`].
#[derive(Debug)]
pub struct ToProtoWorker {
    checker: Checker,
    /// The parser that reads a valid line again into the owned envelope, kept between lines.
    reread: crate::envelope::owned::read::Reread,
}

impl LineOperation for ToProtoOp {
    // The messages, no second output, the rejects.
    const OUTPUTS: usize = REJECTS + 1;
    type Worker = ToProtoWorker;
    type Tally = ();
    type Total = ();

    fn worker(&self) -> Self::Worker {
        ToProtoWorker {
            checker: super::checker(&self.rules, self.max_line_bytes),
            reread: Default::default(),
        }
    }

    fn total(&self) {}

    fn apply(
        &self,
        w: &mut Self::Worker,
        SourceLine { source, line }: SourceLine<'_>,
        out: &mut ChunkOutput,
    ) -> Action {
        let checked = w.checker.check_line(&line);
        match checked.envelope() {
            Some(view) => {
                out.summary.tally_warnings(&checked.verdict().warnings);
                view.to_owned_with(&mut w.reread)
                    .to_proto_message()
                    .encode_delimited(out.buffer(PRIMARY));
                Action::Emit
            }
            None => super::reject(
                checked.verdict(),
                super::position(source, &line),
                &line,
                out,
                self.write_rejects,
            ),
        }
    }
}

/// Turns a length-delimited stream into the text lines [`FromProtoOp`] reads: `OFFSET BASE64`
/// per message (`OFFSET` the byte offset of its length prefix), and at a point the stream
/// cannot be framed past, a last line `!OFFSET why`. Read errors stay read errors.
///
/// ```
/// use std::io::Read;
/// use rdq_envelope::ops::ProtoFrames;
/// let mut text = String::new();
/// ProtoFrames::new(&b"\x02\x08\x01\x05\x08"[..], 1 << 20).read_to_string(&mut text)?;
/// assert_eq!(text, "0 CAE=\n!3 message 1 at byte 3: the stream ends after 1 of its 5 bytes\n");
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct ProtoFrames<R> {
    frames: DelimitedReader<R>,
    pending: Vec<u8>,
    at: usize,
}

impl<R: Read> ProtoFrames<R> {
    /// The frames of `reader`, each message at most `max_message_bytes`.
    pub fn new(reader: R, max_message_bytes: usize) -> Self {
        ProtoFrames {
            frames: DelimitedReader::new(reader).max_message_bytes(max_message_bytes),
            pending: Vec::new(),
            at: 0,
        }
    }

    /// The next line into `pending`; empty at the end.
    fn refill(&mut self) -> io::Result<()> {
        self.pending.clear();
        self.at = 0;
        match self.frames.next_message() {
            Ok(None) => {}
            Ok(Some(frame)) => {
                let mut offset = itoa::Buffer::new();
                self.pending
                    .extend_from_slice(offset.format(frame.offset).as_bytes());
                self.pending.push(b' ');
                let at = self.pending.len();
                let len = base64_simd::STANDARD.encoded_length(frame.bytes.len());
                self.pending.resize(at + len, 0);
                // The encoder fills exactly the `len` bytes made room for.
                let _ = base64_simd::STANDARD.encode(
                    frame.bytes,
                    base64_simd::Out::from_slice(&mut self.pending[at..]),
                );
                self.pending.push(b'\n');
            }
            Err(StreamError::Io { source, .. }) => return Err(source),
            Err(e) => {
                self.pending.push(b'!');
                self.pending
                    .extend_from_slice(itoa::Buffer::new().format(e.offset()).as_bytes());
                self.pending.push(b' ');
                self.pending.extend_from_slice(e.to_string().as_bytes());
                self.pending.push(b'\n');
            }
        }
        Ok(())
    }
}

impl<R: Read> Read for ProtoFrames<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at == self.pending.len() {
            self.refill()?;
        }
        let n = buf.len().min(self.pending.len() - self.at);
        buf[..n].copy_from_slice(&self.pending[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// `convert --from proto`: each message of the lines [`ProtoFrames`] made as its canonical
/// JSON line on the primary output, judged by the rules; a message that is not a valid
/// envelope (or a stream that cannot be framed on) to the rejects, with its index and offset.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FromProtoOp {
    /// The rules, configured once.
    pub rules: EnvelopeRules,
    /// Write reject records (`--rejects`).
    pub write_rejects: bool,
}

impl FromProtoOp {
    /// Conversion from protobuf under `rules`, without reject records.
    ///
    /// ```
    /// use rdq_envelope::envelope::Envelope;
    /// use rdq_envelope::ops::{FromProtoOp, ProtoFrames};
    /// use rdq_envelope::pipeline::{self, Outputs, PipelineOptions, Source};
    /// use rdq_envelope::{EnvelopeRules, RuleOptions};
    ///
    /// let line = rdq_envelope::test_support::dead_v2_line();
    /// let mut stream = Vec::new();
    /// Envelope::from_json(&line)?.to_proto_message().encode_delimited(&mut stream);
    /// let frames = ProtoFrames::new(std::io::Cursor::new(stream), 1 << 20);
    /// let sources = vec![Source::Reader { name: "demo.pb".into(), reader: Box::new(frames) }];
    /// let op = FromProtoOp::new(EnvelopeRules::new(RuleOptions::default())?);
    /// let mut json = Vec::new();
    /// let mut outputs = Outputs::none();
    /// outputs.set(0, Some(&mut json));
    /// pipeline::run(sources, &op, PipelineOptions::default(), outputs, None)?;
    /// assert_eq!(json, [&line[..], b"\n"].concat());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(rules: EnvelopeRules) -> Self {
        FromProtoOp {
            rules,
            write_rejects: false,
        }
    }
}

/// A worker's reusable state for [`FromProtoOp`].
#[derive(Debug)]
pub struct FromProtoWorker {
    checker: Checker,
    message: Vec<u8>,
    line: Vec<u8>,
}

/// A reject record of `convert --from proto`: where the message lies in its stream (its
/// index from 0 and the byte offset of its length prefix), why, and its bytes.
#[derive(Serialize)]
struct MessageReject<'a> {
    source: &'a str,
    message: u64,
    offset: u64,
    errors: &'a [Diagnostic],
    #[serde(skip_serializing_if = "Option::is_none")]
    raw_base64: Option<&'a str>,
}

impl LineOperation for FromProtoOp {
    // The JSON lines, no second output, the rejects.
    const OUTPUTS: usize = REJECTS + 1;
    type Worker = FromProtoWorker;
    type Tally = ();
    type Total = ();

    fn worker(&self) -> Self::Worker {
        FromProtoWorker {
            checker: Checker::new(self.rules.clone()),
            message: Vec::new(),
            line: Vec::new(),
        }
    }

    fn total(&self) {}

    fn apply(
        &self,
        w: &mut Self::Worker,
        SourceLine { source, line }: SourceLine<'_>,
        out: &mut ChunkOutput,
    ) -> Action {
        let index = line.number.saturating_sub(1);
        let text = line.content;
        // `!OFFSET why`: the stream could not be framed on.
        if let Some(rest) = text.strip_prefix(b"!") {
            let (offset, why) = split_offset(rest);
            let diagnostic = Diagnostic::new(ErrorCode::MalformedJson, "", why);
            return self.reject(source, index, offset, None, vec![diagnostic], out);
        }
        let (offset, base64) = split_offset(text);
        w.message.clear();
        let decoded = base64_simd::STANDARD
            .decode_append(base64.as_bytes(), &mut w.message)
            .is_ok();
        if !decoded {
            // ProtoFrames wrote the line: only a line from elsewhere gets here.
            let diagnostic = Diagnostic::new(
                ErrorCode::MalformedJson,
                "",
                "not a line of convert's framed form (OFFSET BASE64)",
            );
            return self.reject(source, index, offset, None, vec![diagnostic], out);
        }
        let converted = ProtoEnvelope::decode(&w.message)
            .and_then(|m| crate::proto::convert::write_line(&m, &mut w.line));
        if let Err(e) = converted {
            let diagnostic = Diagnostic::new(e.code(), "", e.to_string());
            return self.reject(source, index, offset, Some(base64), vec![diagnostic], out);
        }
        let checked = w.checker.check(&w.line);
        let verdict: &Verdict = checked.verdict();
        if verdict.is_valid() {
            out.summary.tally_warnings(&verdict.warnings);
            let primary = out.buffer(PRIMARY);
            primary.extend_from_slice(&w.line);
            primary.push(b'\n');
            return Action::Emit;
        }
        let errors = verdict.errors.clone();
        self.reject(source, index, offset, Some(base64), errors, out)
    }
}

impl FromProtoOp {
    /// Counts a refused message's codes and, with `write_rejects`, writes its record.
    fn reject(
        &self,
        source: &str,
        index: u64,
        offset: u64,
        base64: Option<&str>,
        errors: Vec<Diagnostic>,
        out: &mut ChunkOutput,
    ) -> Action {
        out.summary.tally_errors(&errors);
        if self.write_rejects {
            let record = MessageReject {
                source,
                message: index,
                offset,
                errors: &errors,
                raw_base64: base64,
            };
            let rejects = out.buffer(REJECTS);
            // Writing into a Vec cannot fail.
            let _ = serde_json::to_writer(&mut *rejects, &record);
            rejects.push(b'\n');
        }
        Action::Reject
    }
}

/// `OFFSET rest` as the offset and the rest (0 and the whole when there is no offset).
fn split_offset(text: &[u8]) -> (u64, &str) {
    let text = std::str::from_utf8(text).unwrap_or("");
    match text.split_once(' ') {
        Some((offset, rest)) => (offset.parse().unwrap_or(0), rest),
        None => (0, text),
    }
}
