//! Object storage: `s3://bucket/key` inputs and outputs, `http(s)://` inputs
//! (docs/cli.md#object-storage), through Apache Arrow's `object_store`.
//!
//! An input is read as a stream with range requests running ahead (`read.rs`); an output is a
//! multipart upload that becomes the object only in the commit's second phase (`write.rs`);
//! `batch` lists, reads and conditionally writes small objects through `objects`.

mod ending;
mod error;
pub mod objects;
mod read;
mod settings;
mod store;
mod write;

pub use super::location::Url;
pub use read::{
    check_http, open_http, open_s3, stat_s3, stream_s3, ObjectReader, RangedObject, Stamp,
};
pub use write::{abort_live_uploads, ObjectUpload};
