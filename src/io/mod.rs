//! I/O: opening input streams (ENVELOPE.md §1.2, CLI.md "Inputs and outputs").
//!
//! Compression is sniffed from a stream's first bytes, never from a file name.

mod decompress;

pub use decompress::{decompressed, sniff, Compression};
