//! I/O: opening input streams (docs/envelope.md#byte-order-mark, docs/cli.md#inputs, #outputs) and
//! writing output files atomically.
//!
//! Compression is sniffed from a stream's first bytes, never from a file name.

mod alias;
/// The gzip and zstd decoders of [`decompressed`].
#[cfg(feature = "compression")]
mod decoders;
/// Without the `compression` feature: no decoder, and a compressed input is an error.
#[cfg(not(feature = "compression"))]
#[path = "no_decoders.rs"]
mod decoders;
mod decompress;
/// The zstd and gzip encoders of [`OutputFile`].
#[cfg(feature = "compression")]
mod encoders;
/// Without the `compression` feature: no encoder, and asking for one is an error.
#[cfg(not(feature = "compression"))]
#[path = "no_encoders.rs"]
mod encoders;
mod output;
mod reread;
mod source;
mod temp;

pub use decompress::{decompressed, sniff, Compression};
pub use output::{commit_all, commit_all_then, OutputCompression, OutputFile};
pub use source::Source;
#[cfg(feature = "batch")]
pub(crate) use temp::is_temporary_file_name;
pub(crate) use temp::SpillFile;

// The command line's glue, not part of the API: the checks of paths given as arguments, inputs
// read twice (`dedupe --keep newest`), and the temporary files a signal handler removes.
#[doc(hidden)]
pub use alias::{check_aliases, AliasError, Named, Stream};
#[doc(hidden)]
pub use reread::{between_reads, Rereadable};
#[doc(hidden)]
pub use temp::remove_live_temporary_files;

/// A compressed input or output in a library built without the `compression` feature.
#[cfg(not(feature = "compression"))]
fn without_compression(what: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        format!("{what} needs rdq-envelope's `compression` feature"),
    )
}
