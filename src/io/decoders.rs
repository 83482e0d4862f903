//! The gzip and zstd decoders under [`decompressed`](super::decompressed) (feature
//! `compression`).

use std::cell::Cell;
use std::error::Error;
use std::fmt;
use std::io::{self, BufRead, Read};
use std::rc::Rc;

use flate2::bufread::GzDecoder;

use super::Compression;

/// The reader of the decompressed stream.
pub(super) fn decoder<'a, R: Read + 'a>(
    compression: Compression,
    whole: R,
) -> io::Result<Box<dyn Read + 'a>> {
    let read = Rc::new(Cell::new(0));
    let source = Source {
        inner: whole,
        read: Rc::clone(&read),
    };
    Ok(match compression {
        Compression::None => Box::new(source.inner),
        Compression::Gzip => Box::new(Decoding {
            inner: GzipMembers::new(io::BufReader::new(source)),
            format: "gzip",
            read,
            decoded: 0,
        }),
        Compression::Zstd => Box::new(Decoding {
            inner: zstd::stream::read::Decoder::new(source)?,
            format: "zstd",
            read,
            decoded: 0,
        }),
    })
}

/// Every member of a gzip file, as `gzip -d` reads one: members back to back, then possibly
/// zero bytes (the padding a tape or a block device adds), which end the stream as the end of
/// the file would. Any other byte after a member is an error that says so, where
/// `MultiGzDecoder` would read it as a broken header ("invalid gzip header").
struct GzipMembers<R> {
    /// The member being read; `None` once the stream has ended.
    member: Option<GzDecoder<R>>,
}

impl<R: BufRead> GzipMembers<R> {
    fn new(input: R) -> Self {
        GzipMembers {
            member: Some(GzDecoder::new(input)),
        }
    }
}

impl<R: BufRead> Read for GzipMembers<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let Some(member) = self.member.as_mut() else {
                return Ok(0);
            };
            let n = member.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            let Some(mut rest) = self.member.take().map(GzDecoder::into_inner) else {
                return Ok(0);
            };
            if after_member(&mut rest)? {
                self.member = Some(GzDecoder::new(rest));
            }
        }
    }
}

/// What follows a gzip member: true for another member (its magic, or anything the decoder
/// will judge as a header), false for the end or zero padding to the end.
fn after_member(rest: &mut impl BufRead) -> io::Result<bool> {
    let next = rest.fill_buf()?;
    match next.first() {
        None => return Ok(false),
        Some(0) => {}
        Some(0x1F) => return Ok(true),
        Some(_) => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "trailing garbage after the last member (a byte that begins no gzip member)",
            ))
        }
    }
    loop {
        let zeros = rest.fill_buf()?;
        if zeros.is_empty() {
            return Ok(false);
        }
        if zeros.iter().any(|&b| b != 0) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "trailing garbage after the last member and zero bytes of padding",
            ));
        }
        let len = zeros.len();
        rest.consume(len);
    }
}

/// The compressed input under a decoder: marks its errors, so that [`Decoding`] can tell them
/// from the decoder's own and pass them on untouched.
/// It also counts the compressed bytes read, for the decoder's messages.
struct Source<R> {
    inner: R,
    read: Rc<Cell<u64>>,
}

impl<R: Read> Read for Source<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.inner.read(buf) {
            Ok(n) => {
                self.read.set(self.read.get() + n as u64);
                Ok(n)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => Err(io::Error::new(e.kind(), SourceError(e))),
        }
    }
}

/// An error of the compressed input itself, on its way through a decoder.
#[derive(Debug)]
struct SourceError(io::Error);

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Error for SourceError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&self.0)
    }
}

/// A decoder whose own errors say which format was corrupt or truncated: the decoders' messages
/// alone ("incomplete frame", "corrupt deflate stream") do not.
/// They also say where the decoder was: how much it had decoded, and how much compressed input
/// it had read (the lines already framed lag behind both).
struct Decoding<D> {
    inner: D,
    format: &'static str,
    read: Rc<Cell<u64>>,
    decoded: u64,
}

impl<D: Read> Read for Decoding<D> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.inner.read(buf) {
            Ok(n) => {
                self.decoded += n as u64;
                Ok(n)
            }
            Err(e) => Err(self.describe(e)),
        }
    }
}

impl<D> Decoding<D> {
    fn describe(&self, e: io::Error) -> io::Error {
        let kind = e.kind();
        if kind == io::ErrorKind::Interrupted {
            return e;
        }
        if e.get_ref().is_some_and(|inner| inner.is::<SourceError>()) {
            return match e.into_inner().map(|inner| inner.downcast::<SourceError>()) {
                Some(Ok(source)) => source.0,
                // Not reached: the check above saw a SourceError.
                _ => io::Error::from(kind),
            };
        }
        let what = if kind == io::ErrorKind::UnexpectedEof {
            "truncated"
        } else {
            "corrupt"
        };
        io::Error::new(
            kind,
            format!(
                "{what} {} stream: {e} (the decoder had decoded {} bytes from {} compressed bytes read)",
                self.format,
                self.decoded,
                self.read.get()
            ),
        )
    }
}
