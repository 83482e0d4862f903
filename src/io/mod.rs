//! I/O: opening input streams (ENVELOPE.md §1.2, CLI.md "Inputs and outputs") and writing
//! output files atomically.
//!
//! Compression is sniffed from a stream's first bytes, never from a file name.

mod decompress;
mod output;

pub use decompress::{decompressed, sniff, Compression};
pub use output::{OutputCompression, OutputFile};
