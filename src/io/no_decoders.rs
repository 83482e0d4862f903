//! [`decompressed`](super::decompressed) without the `compression` feature: only uncompressed
//! bytes are read, and a gzip or zstd stream is an `Unsupported` error.

use std::io::{self, Read};

use super::{without_compression, Compression};

pub(super) fn decoder<'a, R: Read + 'a>(
    compression: Compression,
    whole: R,
) -> io::Result<Box<dyn Read + 'a>> {
    match compression {
        Compression::None => Ok(Box::new(whole)),
        Compression::Gzip => Err(without_compression("gzip input")),
        Compression::Zstd => Err(without_compression("zstd input")),
    }
}
