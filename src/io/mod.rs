//! I/O: opening input streams (docs/envelope.md#byte-order-mark, docs/cli.md#inputs, #outputs) and
//! writing output files atomically.
//!
//! Compression is sniffed from a stream's first bytes, never from a file name.

mod alias;
mod decompress;
mod output;
mod reread;
mod temp;

pub use decompress::{decompressed, sniff, Compression};
pub use output::{commit_all, commit_all_then, OutputCompression, OutputFile};
pub(crate) use temp::{is_temporary_file_name, SpillFile};

// The command line's glue, not part of the API: the checks of paths given as arguments, inputs
// read twice (`dedupe --keep newest`), and the temporary files a signal handler removes.
#[doc(hidden)]
pub use alias::{check_aliases, AliasError, Named, Stream};
#[doc(hidden)]
pub use reread::{between_reads, Rereadable};
#[doc(hidden)]
pub use temp::remove_live_temporary_files;
