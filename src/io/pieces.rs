//! Inputs the workers read for themselves (docs/performance.md#reading-in-parallel): a regular
//! file in ranges of about a chunk, and a zstd file or `s3://` object of several frames in groups
//! of whole frames, each decoded by the worker that takes it. The reader thread only says which
//! bytes each chunk is made of ([`Piece`]); it copies none of them.
//!
//! What is not read this way is read as a stream, as before: standard input, pipes and other
//! sources whose reads may wait, an empty file (a file of `/proc` says 0 bytes and has more),
//! gzip, a zstd file of one frame, and an object without a seek table.
//!
//! Lines cross the pieces' edges: each worker frames the lines that lie wholly inside its piece,
//! and the writer joins the line that crosses each edge from the tail of one piece and the head
//! of the next, in input order (`pipeline::chunk`).

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::sync::Arc;

use super::decompress::{sniff, Compression};

/// A stored input that can be read at any offset: a regular file, or an object in storage.
pub(crate) trait Positioned: Send + Sync {
    /// Fills `buf` with the bytes from `offset` on; an error if fewer are there (the input
    /// shrank or changed while it was read).
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
}

#[cfg(unix)]
impl Positioned for File {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(self, buf, offset).map_err(|e| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "the file ended before byte offset {}: it shrank while it was read",
                        offset + buf.len() as u64
                    ),
                )
            } else {
                e
            }
        })
    }
}

/// How large pieces are: `piece`, about a chunk; `group`, the most a group of zstd frames may
/// decode to (a frame larger than that is not decoded alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sizes {
    pub piece: usize,
    pub group: usize,
}

/// The bytes of one chunk, as the reader hands them to a worker.
// Without `compression`, no frames and no stream of the rest of a file are ever made.
#[cfg_attr(not(feature = "compression"), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Piece {
    /// `len` bytes of a plain input, from offset `at`.
    Plain { at: u64, len: usize },
    /// Whole zstd frames: `compressed` bytes from offset `at`, which decode to `decoded` bytes
    /// exactly (from a seek table) or, walked, to at most `bound`.
    Frames {
        at: u64,
        compressed: usize,
        decoded: Decoded,
    },
    /// Bytes the reader already decoded into the chunk (the rest of a file, past a frame too
    /// large to be decoded alone), or none: the end of the source.
    Filled,
}

/// What a group of frames decodes to.
#[cfg_attr(not(feature = "compression"), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decoded {
    /// This many bytes, as the seek table says: anything else is a damaged table or frame.
    Exactly(usize),
    /// At most this many bytes (zstd's bound from the frames' headers).
    AtMost(usize),
}

/// How a source is read in pieces: the input, and what comes next.
pub(crate) struct Ranged {
    input: Arc<dyn Positioned>,
    plan: Plan,
}

#[cfg_attr(not(feature = "compression"), allow(dead_code))]
enum Plan {
    /// A plain input: pieces of `piece_bytes` from `next` up to `size`.
    Plain {
        next: u64,
        size: u64,
        piece_bytes: usize,
    },
    /// Groups of frames.
    #[cfg(feature = "compression")]
    Frames(super::frames::Groups),
    /// The rest decoded as a stream by the reader, into the chunks themselves.
    Stream(Box<dyn Read + Send>),
    /// Nothing more.
    Done,
}

/// What [`Ranged::next`] gives the reader.
pub(crate) enum Next {
    /// A piece for a worker to read; the stored bytes it covers (for progress).
    Piece(Piece, u64),
    /// The reader filled `into` with this many decoded bytes.
    Filled(usize),
    /// The source is read.
    End,
}

impl Ranged {
    /// The input the pieces are read from.
    pub(crate) fn input(&self) -> &Arc<dyn Positioned> {
        &self.input
    }

    /// The next piece; `into` (a chunk's buffer) is filled only when the rest of the source is
    /// decoded as a stream here, with at most `piece_bytes` bytes.
    pub(crate) fn next(&mut self, into: &mut Vec<u8>, piece_bytes: usize) -> io::Result<Next> {
        loop {
            match &mut self.plan {
                Plan::Plain {
                    next,
                    size,
                    piece_bytes,
                } => {
                    if *next >= *size {
                        self.plan = Plan::Done;
                        continue;
                    }
                    let len = (*size - *next).min(*piece_bytes as u64);
                    let piece = Piece::Plain {
                        at: *next,
                        len: len as usize,
                    };
                    *next += len;
                    return Ok(Next::Piece(piece, len));
                }
                #[cfg(feature = "compression")]
                Plan::Frames(groups) => match groups.next(&self.input)? {
                    super::frames::Step::Group(piece, stored) => {
                        return Ok(Next::Piece(piece, stored))
                    }
                    super::frames::Step::Rest(stream) => self.plan = Plan::Stream(stream),
                    super::frames::Step::End => self.plan = Plan::Done,
                },
                Plan::Stream(stream) => {
                    let n = fill(stream, into, piece_bytes)?;
                    if n == 0 {
                        self.plan = Plan::Done;
                        continue;
                    }
                    return Ok(Next::Filled(n));
                }
                Plan::Done => return Ok(Next::End),
            }
        }
    }
}

/// Reads up to `want` bytes of `stream` into the front of `into`: fewer only at its end.
fn fill(mut stream: &mut dyn Read, into: &mut Vec<u8>, want: usize) -> io::Result<usize> {
    if into.len() < want {
        into.resize(want, 0);
    }
    super::decompress::read_prefix(&mut stream, &mut into[..want], |_| true)
}

/// The variable that chooses how inputs are read: `pieces` (the default) or `stream`, every
/// input as a stream on the reader thread, as before pieces (to compare the two,
/// docs/cli.md#environment).
pub const READER_ENV: &str = "RDQ_ENVELOPE_READER";

/// Whether inputs may be read in pieces at all (`RDQ_ENVELOPE_READER` is not `stream`).
pub(crate) fn pieces_allowed() -> bool {
    std::env::var_os(READER_ENV).is_none_or(|v| v != "stream")
}

/// `RDQ_ENVELOPE_READER`'s value, unless it is unset, empty, `pieces` or `stream`: the command
/// line refuses it (a usage error naming the variable).
pub fn check_reader_setting() -> Result<(), String> {
    match std::env::var_os(READER_ENV) {
        Some(v) if !v.is_empty() && v != "pieces" && v != "stream" => Err(format!(
            "{READER_ENV}={:?}: how inputs are read is `pieces` (the default) or `stream`",
            v.to_string_lossy()
        )),
        _ => Ok(()),
    }
}

/// How a source is read: in pieces, or as a stream the probe already opened (an object in
/// storage, whose first bytes were read to tell its compression), or as the stream reader opens
/// it.
// Without `s3`, no object is probed, so no stream is opened here.
#[cfg_attr(not(feature = "s3"), allow(dead_code))]
pub(crate) enum Opened {
    Pieces(Ranged),
    Stream(Box<dyn Read + Send>),
    NotYet,
}

/// How `path` is read in pieces of `sizes`, or as a stream: see the module's documentation for
/// which inputs are which.
pub(crate) fn ranged(path: &Path, sizes: Sizes) -> io::Result<Opened> {
    if !pieces_allowed() {
        return Ok(Opened::NotYet);
    }
    if let Some(url) = super::location::parse_object(path)? {
        return ranged_object(url, sizes);
    }
    Ok(match ranged_file(path, sizes)? {
        Some(ranged) => Opened::Pieces(ranged),
        None => Opened::NotYet,
    })
}

/// A local file in pieces, or `None`. (Positioned reads of a file are Unix's `pread`; elsewhere
/// files are read as a stream.)
#[cfg(not(unix))]
fn ranged_file(_: &Path, _: Sizes) -> io::Result<Option<Ranged>> {
    Ok(None)
}

/// A local file in pieces, or `None`.
#[cfg(unix)]
fn ranged_file(path: &Path, sizes: Sizes) -> io::Result<Option<Ranged>> {
    // Asked of the path, not the opened file: opening a FIFO would wait for its writer.
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(None);
    };
    if !meta.is_file() || meta.len() == 0 {
        return Ok(None);
    }
    let file = File::open(path)?;
    let size = file.metadata()?.len();
    if size == 0 {
        return Ok(None);
    }
    ranged_input(Arc::new(file), size, sizes)
}

/// The plan for a file of `size` bytes.
fn ranged_input(input: Arc<dyn Positioned>, size: u64, sizes: Sizes) -> io::Result<Option<Ranged>> {
    // Six bytes tell every format the stream reader tells (xz needs six).
    let mut magic = [0u8; 6];
    let head = &mut magic[..size.min(6) as usize];
    input.read_exact_at(head, 0)?;
    let plan = match sniff(head) {
        // A format that is named and refused goes the stream's way, which says so.
        Compression::None if super::decompress::unsupported(head).is_none() => Plan::Plain {
            next: 0,
            size,
            piece_bytes: sizes.piece.max(1),
        },
        #[cfg(feature = "compression")]
        Compression::Zstd => {
            // A file's frames may be walked when it has no seek table.
            match super::frames::Groups::plan(&*input, size, sizes, true)? {
                Some(groups) => Plan::Frames(groups),
                None => return Ok(None),
            }
        }
        _ => return Ok(None),
    };
    Ok(Some(Ranged { input, plan }))
}

/// An object in storage: an `s3://` object with a seek table in pieces; any other read as one
/// stream, from the request that read its first bytes (no request more than the stream's own
/// for an object that is not zstd).
#[cfg(feature = "s3")]
fn ranged_object(url: super::Url<'_>, sizes: Sizes) -> io::Result<Opened> {
    let super::Url::S3 { bucket, key } = url else {
        // An http(s) URL is read as one streamed GET: it may not answer a range.
        return Ok(Opened::NotYet);
    };
    let object = super::remote::RangedObject::open(bucket, key)?;
    let size = object.size();
    let mut stream = object.stream()?;
    let mut magic = [0u8; 4];
    let n = super::decompress::read_prefix(&mut stream, &mut magic, |_| true)?;
    #[cfg(feature = "compression")]
    if sniff(&magic[..n]) == Compression::Zstd {
        if let Some(groups) = super::frames::Groups::plan(&object, size, sizes, false)? {
            let plan = Plan::Frames(groups);
            return Ok(Opened::Pieces(Ranged {
                input: Arc::new(object),
                plan,
            }));
        }
    }
    let _ = (size, sizes);
    let first = io::Cursor::new(magic).take(n as u64);
    Ok(Opened::Stream(Box::new(first.chain(stream))))
}

#[cfg(not(feature = "s3"))]
fn ranged_object(_: super::Url<'_>, _: Sizes) -> io::Result<Opened> {
    Ok(Opened::NotYet)
}

/// A worker's means to read pieces, reused from one to the next: a buffer for stored bytes and
/// a zstd decoder.
#[derive(Default)]
pub(crate) struct PieceReader {
    #[cfg(feature = "compression")]
    stored: Vec<u8>,
    #[cfg(feature = "compression")]
    decoder: Option<zstd::bulk::Decompressor<'static>>,
}

impl PieceReader {
    /// Reads `piece` of `input` into the front of `into` (grown as needed, never shrunk):
    /// the number of bytes it holds.
    pub(crate) fn read(
        &mut self,
        input: &dyn Positioned,
        piece: Piece,
        into: &mut Vec<u8>,
    ) -> io::Result<usize> {
        match piece {
            Piece::Plain { at, len } => {
                if into.len() < len {
                    into.resize(len, 0);
                }
                input.read_exact_at(&mut into[..len], at)?;
                Ok(len)
            }
            #[cfg(feature = "compression")]
            Piece::Frames {
                at,
                compressed,
                decoded,
            } => {
                if self.stored.len() < compressed {
                    self.stored.resize(compressed, 0);
                }
                input.read_exact_at(&mut self.stored[..compressed], at)?;
                let decoder = match &mut self.decoder {
                    Some(decoder) => decoder,
                    empty => empty.insert(zstd::bulk::Decompressor::new()?),
                };
                super::frames::decode(decoder, &self.stored[..compressed], at, decoded, into)
            }
            #[cfg(not(feature = "compression"))]
            Piece::Frames { .. } => Err(super::without_compression("a zstd input")),
            // The reader filled it; how much, the chunk says.
            Piece::Filled => Ok(0),
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_shrank_is_an_error_that_says_so() {
        let path = std::env::temp_dir().join(format!("rdq-pieces-shrank-{}", std::process::id()));
        std::fs::write(&path, b"0123456789").unwrap();
        let file = File::open(&path).unwrap();
        let mut buf = [0u8; 8];
        file.read_exact_at(&mut buf, 2).unwrap();
        assert_eq!(&buf, b"23456789");
        let error = Positioned::read_exact_at(&file, &mut buf, 4).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::UnexpectedEof);
        assert!(
            error
                .to_string()
                .contains("before byte offset 12: it shrank"),
            "{error}"
        );
        std::fs::remove_file(path).unwrap();
    }
}
