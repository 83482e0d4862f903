//! Length-delimited streams: each message after its length as a varint, as Java's
//! `writeDelimitedTo`/`parseDelimitedFrom` and Go's `protodelim` write and read them.
//!
//! The reader holds one message at a time, checks each length against a limit before it
//! reads a byte of the message, and grows its buffer only as bytes arrive, so a length that
//! lies costs nothing: memory is bounded by the limit whatever the stream says.

use std::io::{self, BufRead, BufReader, Read};

use crate::envelope::DEFAULT_MAX_ENVELOPE_BYTES;

/// The longest message [`DelimitedReader`] reads by default: twice the default envelope size
/// limit (a message is never longer than its JSON line but for a few bytes of tags: payloads
/// are raw bytes rather than base64, strings unescaped).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 2 * DEFAULT_MAX_ENVELOPE_BYTES as usize;

/// The longest varint: ten bytes hold 64 bits.
const MAX_VARINT_BYTES: usize = 10;

/// Appends `message` to `out` after its length as a varint.
///
/// ```
/// let mut out = Vec::new();
/// rdq_envelope::proto::write_delimited(b"\x08\x01", &mut out);
/// assert_eq!(out, b"\x02\x08\x01");
/// ```
pub fn write_delimited(message: &[u8], out: &mut Vec<u8>) {
    prost::encoding::encode_varint(message.len() as u64, out);
    out.extend_from_slice(message);
}

/// One message read from a stream, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Frame<'a> {
    /// Its index in the stream, from 0.
    pub index: u64,
    /// The byte offset of its length prefix in the stream.
    pub offset: u64,
    /// The message's bytes (without the length).
    pub bytes: &'a [u8],
}

/// Why a stream cannot be read on: after any of these, where the next message starts is
/// unknown, so the reader stops.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StreamError {
    /// Reading failed.
    #[error("message {index} at byte {offset}: {source}")]
    Io {
        /// The message's index.
        index: u64,
        /// The byte offset of its length prefix.
        offset: u64,
        /// The error.
        source: io::Error,
    },
    /// The length prefix is not a varint of at most ten bytes.
    #[error("message {index} at byte {offset}: the length prefix is not a varint")]
    BadLength {
        /// The message's index.
        index: u64,
        /// The byte offset of its length prefix.
        offset: u64,
    },
    /// The length prefix is over the limit: refused before reading the message.
    #[error(
        "message {index} at byte {offset}: its length {length} is over the limit of {limit} bytes"
    )]
    TooLarge {
        /// The message's index.
        index: u64,
        /// The byte offset of its length prefix.
        offset: u64,
        /// The length the prefix gives.
        length: u64,
        /// The limit.
        limit: usize,
    },
    /// The stream ends inside a length prefix or a message.
    #[error(
        "message {index} at byte {offset}: the stream ends after {got} of its {expected} bytes"
    )]
    Truncated {
        /// The message's index.
        index: u64,
        /// The byte offset of its length prefix.
        offset: u64,
        /// How many bytes the prefix (or, inside the prefix, its varint) asked for.
        expected: u64,
        /// How many came.
        got: u64,
    },
}

impl StreamError {
    /// The index of the message the error is about.
    ///
    /// ```
    /// use rdq_envelope::proto::DelimitedReader;
    /// let err = DelimitedReader::new(&b"\x05\x08"[..]).next_message().unwrap_err();
    /// assert_eq!((err.index(), err.offset()), (0, 0));
    /// ```
    pub fn index(&self) -> u64 {
        match self {
            StreamError::Io { index, .. }
            | StreamError::BadLength { index, .. }
            | StreamError::TooLarge { index, .. }
            | StreamError::Truncated { index, .. } => *index,
        }
    }

    /// The byte offset of the message's length prefix.
    ///
    /// ```
    /// use rdq_envelope::proto::DelimitedReader;
    /// let mut reader = DelimitedReader::new(&b"\x01\x08\xff"[..]);
    /// reader.next_message()?;
    /// assert_eq!(reader.next_message().unwrap_err().offset(), 2);
    /// # Ok::<(), rdq_envelope::proto::StreamError>(())
    /// ```
    pub fn offset(&self) -> u64 {
        match self {
            StreamError::Io { offset, .. }
            | StreamError::BadLength { offset, .. }
            | StreamError::TooLarge { offset, .. }
            | StreamError::Truncated { offset, .. } => *offset,
        }
    }
}

/// Reads a length-delimited stream message by message into one reused buffer.
///
/// ```
/// use rdq_envelope::proto::DelimitedReader;
/// let stream = b"\x02\x08\x01\x00\x02\x08\x02";
/// let mut reader = DelimitedReader::new(&stream[..]);
/// let mut lengths = Vec::new();
/// while let Some(frame) = reader.next_message()? {
///     lengths.push((frame.index, frame.offset, frame.bytes.len()));
/// }
/// assert_eq!(lengths, [(0, 0, 2), (1, 3, 0), (2, 4, 2)]);
/// # Ok::<(), rdq_envelope::proto::StreamError>(())
/// ```
pub struct DelimitedReader<R> {
    reader: BufReader<R>,
    buffer: Vec<u8>,
    limit: usize,
    index: u64,
    offset: u64,
    failed: bool,
}

impl<R: Read> DelimitedReader<R> {
    /// A reader of `reader`'s messages, each at most [`DEFAULT_MAX_MESSAGE_BYTES`].
    ///
    /// ```
    /// use rdq_envelope::proto::DelimitedReader;
    /// assert!(DelimitedReader::new(&b""[..]).next_message()?.is_none());
    /// # Ok::<(), rdq_envelope::proto::StreamError>(())
    /// ```
    pub fn new(reader: R) -> DelimitedReader<R> {
        DelimitedReader {
            reader: BufReader::with_capacity(1 << 16, reader),
            buffer: Vec::new(),
            limit: DEFAULT_MAX_MESSAGE_BYTES,
            index: 0,
            offset: 0,
            failed: false,
        }
    }

    /// With messages of at most `bytes` each.
    ///
    /// ```
    /// use rdq_envelope::proto::{DelimitedReader, StreamError};
    /// let mut reader = DelimitedReader::new(&b"\x03abc"[..]).max_message_bytes(2);
    /// assert!(matches!(reader.next_message(), Err(StreamError::TooLarge { length: 3, .. })));
    /// ```
    pub fn max_message_bytes(mut self, bytes: usize) -> DelimitedReader<R> {
        self.limit = bytes;
        self
    }

    /// The byte offset of the next length prefix: after the last message read, the stream's
    /// length read so far.
    ///
    /// ```
    /// use rdq_envelope::proto::DelimitedReader;
    /// let mut reader = DelimitedReader::new(&b"\x01\x00"[..]);
    /// reader.next_message()?;
    /// assert_eq!(reader.offset(), 2);
    /// # Ok::<(), rdq_envelope::proto::StreamError>(())
    /// ```
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The next message; `None` at the end of the stream (only between messages). After an
    /// error, always `None`: the stream cannot be framed on.
    ///
    /// ```
    /// use rdq_envelope::proto::{DelimitedReader, StreamError};
    /// let mut reader = DelimitedReader::new(&b"\x04\x08"[..]);
    /// assert!(matches!(reader.next_message(), Err(StreamError::Truncated { expected: 4, got: 1, .. })));
    /// assert!(reader.next_message()?.is_none());
    /// # Ok::<(), StreamError>(())
    /// ```
    pub fn next_message(&mut self) -> Result<Option<Frame<'_>>, StreamError> {
        if self.failed {
            return Ok(None);
        }
        let result = self.read_frame();
        if !matches!(result, Ok(Some(_))) {
            self.failed = true;
        }
        match result {
            Ok(Some(prefix)) => {
                let frame = Frame {
                    index: self.index,
                    offset: self.offset,
                    bytes: &self.buffer,
                };
                self.offset += (prefix + self.buffer.len()) as u64;
                self.index += 1;
                Ok(Some(frame))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Reads the next frame into the buffer: the length prefix's size in bytes (a writer may
    /// pad a varint), `None` at a clean end.
    fn read_frame(&mut self) -> Result<Option<usize>, StreamError> {
        let (index, offset) = (self.index, self.offset);
        let io_error = |source| StreamError::Io {
            index,
            offset,
            source,
        };
        let mut length: u64 = 0;
        let mut used = 0;
        loop {
            let byte = match self.read_byte().map_err(io_error)? {
                Some(b) => b,
                None if used == 0 => return Ok(None),
                None => {
                    return Err(StreamError::Truncated {
                        index,
                        offset,
                        expected: used as u64 + 1,
                        got: used as u64,
                    })
                }
            };
            if used == MAX_VARINT_BYTES - 1 && byte > 1 {
                return Err(StreamError::BadLength { index, offset });
            }
            length |= u64::from(byte & 0x7F) << (7 * used);
            used += 1;
            if byte & 0x80 == 0 {
                break;
            }
        }
        if length > self.limit as u64 {
            return Err(StreamError::TooLarge {
                index,
                offset,
                length,
                limit: self.limit,
            });
        }
        self.buffer.clear();
        // `take` stops at the length; the buffer grows only with what arrives.
        let got = (&mut self.reader)
            .take(length)
            .read_to_end(&mut self.buffer)
            .map_err(io_error)? as u64;
        if got < length {
            return Err(StreamError::Truncated {
                index,
                offset,
                expected: length,
                got,
            });
        }
        Ok(Some(used))
    }

    fn read_byte(&mut self) -> io::Result<Option<u8>> {
        loop {
            match self.reader.fill_buf() {
                Ok([]) => return Ok(None),
                Ok(bytes) => {
                    let b = bytes[0];
                    self.reader.consume(1);
                    return Ok(Some(b));
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }
}
