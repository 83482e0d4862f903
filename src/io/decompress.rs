//! Transparent decompression: gzip and zstd, sniffed from magic bytes (docs/cli.md#inputs).

use std::io::{self, Read};

/// How an input stream is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Not compressed (or not in a format we know): the bytes are read as they are.
    None,
    /// gzip (RFC 1952), possibly several members.
    Gzip,
    /// Zstandard, possibly several frames, skippable frames included.
    Zstd,
}

/// Sniff from magic bytes, never names: gzip 1F 8B, zstd 28 B5 2F FD, and a zstd skippable frame
/// (50..=5F 2A 4D 18) counts as zstd.
///
/// ```
/// use rdq_envelope::io::{sniff, Compression};
///
/// assert_eq!(sniff(b"\x1f\x8b\x08\x00"), Compression::Gzip);
/// assert_eq!(sniff(b"\x28\xb5\x2f\xfd"), Compression::Zstd);
/// assert_eq!(sniff(b"{\"id\""), Compression::None);
/// assert_eq!(sniff(b"\x28\xb5"), Compression::None); // too short to be zstd
/// ```
pub fn sniff(prefix: &[u8]) -> Compression {
    match prefix {
        [0x1F, 0x8B, ..] => Compression::Gzip,
        [0x28, 0xB5, 0x2F, 0xFD, ..] => Compression::Zstd,
        [0x50..=0x5F, 0x2A, 0x4D, 0x18, ..] => Compression::Zstd,
        _ => Compression::None,
    }
}

/// Wraps any reader: peeks its first bytes (without losing them), and returns a reader of the
/// decompressed stream: every gzip member (`GzipMembers`, trailing zero padding allowed), zstd's stream decoder for
/// zstd (all concatenated frames), or the bytes as they are.
///
/// A truncated or corrupt compressed stream is an [`io::Error`] from `read`, with a message that
/// names the format (`truncated zstd stream: ...`); errors of `rdr` itself come through as
/// they are.
///
/// ```
/// use std::io::Read;
/// use rdq_envelope::io::{decompressed, Compression};
///
/// let (compression, mut rdr) = decompressed(&b"{}\n"[..])?;
/// assert_eq!(compression, Compression::None);
/// let mut text = String::new();
/// rdr.read_to_string(&mut text)?;
/// assert_eq!(text, "{}\n");
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn decompressed<'a, R: Read + 'a>(mut rdr: R) -> io::Result<(Compression, Box<dyn Read + 'a>)> {
    let mut magic = [0; 6];
    // Up to four bytes, but no more once those read can begin no format we know: a JSON line
    // starts with `{` (or a BOM, or white space), and an interactive producer's first line, however
    // short, is not waited on to tell it from compression (docs/cli.md#latency).
    let mut n = read_prefix(&mut rdr, &mut magic[..4], may_begin_magic)?;
    // Two bytes more only where the first four may begin a format that needs six to be told.
    if n == 4 && (magic[..4] == XZ[..4] || magic.starts_with(b"BZh")) {
        n += read_prefix(&mut rdr, &mut magic[4..], |_| true)?;
    }
    if let Some(format) = unsupported(&magic[..n]) {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!("{format} input is not supported; decompress it first ({format} -dc FILE | rdq-envelope ...)"),
        ));
    }
    let compression = sniff(&magic[..n]);
    // Put the peeked bytes back in front of the rest.
    let whole = io::Cursor::new(magic).take(n as u64).chain(rdr);
    Ok((compression, super::decoders::decoder(compression, whole)?))
}

/// The xz magic: FD '7zXZ' 00.
const XZ: [u8; 6] = [0xFD, b'7', b'z', b'X', b'Z', 0x00];

/// Compressed formats that are recognised but not read: named, so that their bytes are not
/// judged as lines of garbage. bzip2 is `BZh`, a block size digit, then a block's or the end's
/// magic; lz4 frames (and the legacy format) have magic numbers of their own.
pub(super) fn unsupported(prefix: &[u8]) -> Option<&'static str> {
    match prefix {
        p if p == XZ => Some("xz"),
        [b'B', b'Z', b'h', b'1'..=b'9', 0x31, 0x41]
        | [b'B', b'Z', b'h', b'1'..=b'9', 0x17, 0x72] => Some("bzip2"),
        [0x04, 0x22, 0x4D, 0x18, ..] | [0x02, 0x21, 0x4C, 0x18, ..] => Some("lz4"),
        _ => None,
    }
}

/// Whether `prefix` (up to four bytes) may be the start of a magic number we tell apart:
/// gzip's, zstd's (a frame or a skippable frame), or one of the formats refused by name.
fn may_begin_magic(prefix: &[u8]) -> bool {
    const ANY_DIGIT: (u8, u8) = (b'1', b'9');
    const MAGICS: [&[(u8, u8)]; 7] = [
        &[(0x1F, 0x1F), (0x8B, 0x8B)],
        &[(0x28, 0x28), (0xB5, 0xB5), (0x2F, 0x2F), (0xFD, 0xFD)],
        &[(0x50, 0x5F), (0x2A, 0x2A), (0x4D, 0x4D), (0x18, 0x18)],
        &[(0xFD, 0xFD), (b'7', b'7'), (b'z', b'z'), (b'X', b'X')],
        &[(b'B', b'B'), (b'Z', b'Z'), (b'h', b'h'), ANY_DIGIT],
        &[(0x04, 0x04), (0x22, 0x22), (0x4D, 0x4D), (0x18, 0x18)],
        &[(0x02, 0x02), (0x21, 0x21), (0x4C, 0x4C), (0x18, 0x18)],
    ];
    MAGICS.iter().any(|magic| {
        prefix
            .iter()
            .zip(magic.iter())
            .all(|(&b, &(low, high))| (low..=high).contains(&b))
    })
}

/// Reads until `buf` is full, the stream ends, or the bytes read so far fail `go_on`; returns
/// how many bytes it holds.
pub(super) fn read_prefix<R: Read>(
    rdr: &mut R,
    buf: &mut [u8],
    go_on: fn(&[u8]) -> bool,
) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match rdr.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => {
                n += k.min(buf.len() - n);
                if !go_on(&buf[..n]) {
                    break;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const TEXT: &[u8] = b"{\"a\":1}\n{\"b\":2}\r\n\xEF\xBB\xBF\n";

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    fn zstd(data: &[u8]) -> Vec<u8> {
        zstd::stream::encode_all(data, 3).unwrap()
    }

    fn read_all(input: &[u8]) -> (Compression, io::Result<Vec<u8>>) {
        let (compression, mut rdr) = decompressed(input).unwrap();
        let mut out = Vec::new();
        let res = rdr.read_to_end(&mut out).map(|_| out);
        (compression, res)
    }

    /// A reader handing out one byte at a time, with an `Interrupted` before each.
    struct Trickle<'a>(&'a [u8], bool);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.1 = !self.1;
            if self.1 {
                return Err(io::ErrorKind::Interrupted.into());
            }
            let n = buf.len().min(self.0.len()).min(1);
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn sniffs_magic_bytes() {
        assert_eq!(sniff(b""), Compression::None);
        assert_eq!(sniff(b"\x1f"), Compression::None);
        assert_eq!(sniff(b"\x1f\x8b"), Compression::Gzip);
        assert_eq!(sniff(b"\x28\xb5\x2f"), Compression::None);
        assert_eq!(sniff(b"\x28\xb5\x2f\xfd"), Compression::Zstd);
        assert_eq!(sniff(b"\x28\xb5\x2f\xfc"), Compression::None);
        for first in 0x50..=0x5F {
            assert_eq!(sniff(&[first, 0x2A, 0x4D, 0x18]), Compression::Zstd);
        }
        assert_eq!(sniff(&[0x4F, 0x2A, 0x4D, 0x18]), Compression::None);
        assert_eq!(sniff(&[0x60, 0x2A, 0x4D, 0x18]), Compression::None);
        assert_eq!(sniff(b"\xEF\xBB\xBF{"), Compression::None);
    }

    #[test]
    fn plain_input_passes_through() {
        for input in [
            &b""[..],
            b"a",
            b"ab",
            b"abc",
            b"\x28\xb5\x2f",
            b"abcd",
            TEXT,
        ] {
            let (compression, out) = read_all(input);
            assert_eq!(compression, Compression::None);
            assert_eq!(out.unwrap(), input);
        }
    }

    #[test]
    fn gzip_round_trip_and_members() {
        let (compression, out) = read_all(&gzip(TEXT));
        assert_eq!(
            (compression, out.unwrap()),
            (Compression::Gzip, TEXT.to_vec())
        );
        let two = [gzip(b"first\n"), gzip(b"second\n")].concat();
        assert_eq!(read_all(&two).1.unwrap(), b"first\nsecond\n");
        let (compression, out) = read_all(&gzip(b""));
        assert_eq!((compression, out.unwrap()), (Compression::Gzip, Vec::new()));
    }

    #[test]
    fn zstd_round_trip_and_frames() {
        let (compression, out) = read_all(&zstd(TEXT));
        assert_eq!(
            (compression, out.unwrap()),
            (Compression::Zstd, TEXT.to_vec())
        );
        let two = [zstd(b"first\n"), zstd(b"second\n")].concat();
        assert_eq!(read_all(&two).1.unwrap(), b"first\nsecond\n");
        let (compression, out) = read_all(&zstd(b""));
        assert_eq!((compression, out.unwrap()), (Compression::Zstd, Vec::new()));
    }

    #[test]
    fn zstd_skippable_frame_first() {
        // Magic 0x184D2A53 (little-endian), 4-byte size, that many bytes of anything.
        let skippable = [&[0x53, 0x2A, 0x4D, 0x18, 3, 0, 0, 0][..], b"xyz"].concat();
        let input = [skippable, zstd(b"after\n")].concat();
        let (compression, out) = read_all(&input);
        assert_eq!(
            (compression, out.unwrap()),
            (Compression::Zstd, b"after\n".to_vec())
        );
    }

    #[test]
    fn short_reads_and_interrupts_lose_nothing() {
        for input in [gzip(TEXT), zstd(TEXT), TEXT.to_vec()] {
            let (_, mut rdr) = decompressed(Trickle(&input, false)).unwrap();
            let mut out = Vec::new();
            rdr.read_to_end(&mut out).unwrap();
            assert_eq!(out, TEXT);
        }
    }

    #[test]
    fn a_short_first_line_is_not_waited_on() {
        /// Hands out its bytes in one read, then panics: on a quiet pipe another read would
        /// wait for the producer's next line.
        struct Once(Option<&'static [u8]>);
        impl Read for Once {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let bytes = self
                    .0
                    .take()
                    .expect("read again: the sniff waited for more");
                buf[..bytes.len()].copy_from_slice(bytes);
                Ok(bytes.len())
            }
        }
        // (`[` and `Z` may begin a skippable zstd frame, 0x50 to 0x5F: those read on.)
        for first in [
            &b"1\n"[..],
            b"{}\n",
            b"\xEF\xBB",
            b" ",
            b"[\n",
            b"B\n",
            b"\x28\xB5\n",
        ] {
            let (compression, _) = decompressed(Once(Some(first))).unwrap();
            assert_eq!(compression, Compression::None, "{first:?}");
        }
    }

    #[test]
    fn magic_numbers_arriving_a_byte_at_a_time_are_still_told() {
        let refused: [&[u8]; 4] = [
            b"\xFD7zXZ\x00rest",
            b"BZh91AY&SY",
            b"\x04\x22\x4D\x18rest",
            b"\x02\x21\x4C\x18rest",
        ];
        for input in refused {
            let err = decompressed(Trickle(input, false)).map(|_| ()).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::Unsupported, "{input:?}");
        }
        let skippable = [&b"\x5A\x2A\x4D\x18\x00\x00\x00\x00"[..], &zstd(TEXT)].concat();
        let (compression, _) = decompressed(Trickle(&skippable, false)).unwrap();
        assert_eq!(compression, Compression::Zstd);
    }

    /// Every proper prefix of a compressed stream (that still sniffs as compressed) must fail
    /// to read, never end quietly short.
    fn assert_truncations_fail(full: &[u8], format: &str, min: usize) {
        for cut in min..full.len() {
            let (_, out) = read_all(&full[..cut]);
            let err = out.expect_err(&format!(
                "{format} cut at {cut} of {} read fine",
                full.len()
            ));
            let msg = err.to_string();
            assert!(msg.contains(format), "cut at {cut}: {msg}");
        }
    }

    #[test]
    fn truncated_gzip_is_an_error() {
        assert_truncations_fail(&gzip(TEXT), "gzip", 2);
        // A second member cut short too.
        let two = [gzip(b"first\n"), gzip(b"second\n")].concat();
        let first = gzip(b"first\n").len();
        assert_truncations_fail(&two[..], "gzip", first + 1);
    }

    #[test]
    fn truncated_zstd_is_an_error() {
        assert_truncations_fail(&zstd(TEXT), "zstd", 4);
        let two = [zstd(b"first\n"), zstd(b"second\n")].concat();
        let first = zstd(b"first\n").len();
        assert_truncations_fail(&two[..], "zstd", first + 1);
        let (_, out) = read_all(&zstd(TEXT)[..10]);
        let err = out.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        assert_eq!(
            err.to_string(),
            "truncated zstd stream: incomplete frame \
             (the decoder had decoded 1 bytes from 10 compressed bytes read)"
        );
    }

    #[test]
    fn corrupt_streams_are_errors() {
        // Without a checksum, zstd cannot see a corrupt literal, so break the frame header.
        let mut bad = zstd(TEXT);
        bad[4..].fill(0xFF);
        assert!(read_all(&bad).1.unwrap_err().to_string().contains("zstd"));
        let mut bad = gzip(TEXT);
        bad[10..].fill(0xFF);
        assert!(read_all(&bad).1.unwrap_err().to_string().contains("gzip"));
        // Zero padding after the last gzip member ends it, as `gzip -d` has it; anything else
        // after a member or frame is not silently ignored, and the message says what it is.
        let padded = [gzip(TEXT), vec![0; 70_000]].concat();
        assert_eq!(read_all(&padded).1.unwrap(), TEXT);
        let two = [gzip(b"a\n"), vec![0; 3], gzip(b"b\n")].concat();
        let err = read_all(&two).1.unwrap_err().to_string();
        assert!(
            err.contains("after the last member and zero bytes of padding"),
            "{err}"
        );
        let err = read_all(&[gzip(TEXT), b"junk".to_vec()].concat())
            .1
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("corrupt gzip stream: trailing garbage after the last member"),
            "{err}"
        );
        assert!(read_all(&[gzip(TEXT), b"junk".to_vec()].concat())
            .1
            .is_err());
        assert!(read_all(&[zstd(TEXT), b"junk".to_vec()].concat())
            .1
            .is_err());
    }

    #[test]
    fn errors_of_the_input_come_through_untouched() {
        struct Failing(Vec<u8>);
        impl Read for Failing {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.0.is_empty() {
                    return Err(io::Error::new(
                        io::ErrorKind::PermissionDenied,
                        "disk on fire",
                    ));
                }
                let n = buf.len().min(self.0.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0.drain(..n);
                Ok(n)
            }
        }
        for input in [gzip(TEXT), zstd(TEXT)] {
            let cut = input[..input.len() - 3].to_vec();
            let (_, mut rdr) = decompressed(Failing(cut)).unwrap();
            let err = rdr.read_to_end(&mut Vec::new()).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
            assert_eq!(err.to_string(), "disk on fire");
        }
        // An error while peeking is returned at once.
        assert!(decompressed(Failing(Vec::new())).is_err());
    }
}
