//! [`OutputFile`](super::OutputFile) without the `compression` feature: no encoder exists, and
//! asking for one is an `Unsupported` error.

use std::io::{self, Write};
use std::marker::PhantomData;

use super::without_compression;

/// No encoder: a value of this type cannot be made.
pub(super) enum Encoder<W: Write> {
    #[allow(dead_code)] // The type parameter's only use.
    Never(std::convert::Infallible, PhantomData<W>),
}

impl<W: Write> Encoder<W> {
    pub(super) fn zstd(_: W, _: u32, _: u32) -> io::Result<Self> {
        Err(without_compression("a zstd output"))
    }

    pub(super) fn gzip(_: W) -> io::Result<Self> {
        Err(without_compression("a gzip output"))
    }

    pub(super) fn writer(&mut self) -> &mut dyn Write {
        match *self {
            Encoder::Never(never, _) => match never {},
        }
    }

    pub(super) fn finish(self) -> io::Result<W> {
        match self {
            Encoder::Never(never, _) => match never {},
        }
    }
}
