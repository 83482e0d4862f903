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
mod endings;
/// Folders given as inputs, expanded into their files.
mod folders;
/// Groups of whole zstd frames for the workers to decode.
#[cfg(feature = "compression")]
mod frames;
mod location;
mod output;
pub(crate) mod pieces;
/// Object storage (feature `s3`): `s3://` inputs and outputs, `http(s)://` inputs.
#[cfg(feature = "s3")]
pub mod remote;
mod reread;
/// The zstd seekable format of `.zst` outputs, under [`OutputFile`]'s zstd encoder.
#[cfg(feature = "compression")]
mod seekable;
mod source;
mod temp;
mod waits;

pub use decompress::{decompressed, sniff, Compression};
pub use endings::Endings;
pub use folders::{expand_folders, Skipped};
pub use location::{is_url, parse as parse_url, parse_object as parse_object_url, Url};
pub use output::{
    commit_all, commit_all_then, OutputCompression, OutputFile, ZSTD_FRAME_BYTES_DEFAULT,
    ZSTD_FRAME_BYTES_MAX, ZSTD_FRAME_BYTES_MIN,
};
pub use source::Source;
#[cfg(feature = "batch")]
pub(crate) use temp::is_temporary_file_name;
pub(crate) use temp::SpillFile;
pub(crate) use waits::{path_may_wait, Waits};

// The command line's glue, not part of the API: the checks of paths given as arguments, inputs
// read twice (`dedupe --keep newest`), and the temporary files a signal handler removes.
#[doc(hidden)]
pub use alias::{check_aliases, AliasError, Named, Stream};
#[doc(hidden)]
pub use folders::note as skipped_note;
#[doc(hidden)]
pub use pieces::check_reader_setting;
#[doc(hidden)]
pub use reread::{between_reads, Rereadable};
#[doc(hidden)]
pub use temp::{forget_removal, remove_when_the_run_fails, temporary_folder};

/// What [`release_everything`] returns: the commit's lock, held until the process ends, so that
/// no output is renamed into place or completed after the run has let everything go.
#[doc(hidden)]
#[must_use = "hold it until the process ends: an output could be committed after the release"]
pub struct Released(#[allow(dead_code)] std::sync::MutexGuard<'static, Vec<std::path::PathBuf>>);

/// The one way out of a run that does not succeed, whatever ends it (a signal, the `--where`
/// watchdog, a stack overflow, an error in any thread, a failed commit, a panic): everything
/// the run began and would leave behind is removed. That is every temporary file of an
/// output, every `s3://` output's multipart upload (also one whose creation the store is still
/// answering), every object the run holds only while it lives (a `batch` lock) and every such
/// file (a `batch` lock file). The outputs' paths and objects are left as they were before the
/// run. It waits at most about 30 s for the stores; what they do not answer by then a bucket
/// lifecycle rule cleans up.
///
/// Safe to call from any thread, more than once, and after the run's values have been dropped
/// (each of them cleans up after itself on the way out of an error; this is also for the
/// endings that leave no time to unwind).
#[doc(hidden)]
pub fn release_everything() -> Released {
    let live = temp::remove_live_temporary_files();
    #[cfg(feature = "s3")]
    remote::abort_live_uploads();
    // Last: a rerun may take the folder as soon as its lock file is gone.
    temp::remove_held_files();
    Released(live)
}

/// Checks every URL among a run's streams before anything is read or created: each is well
/// formed, no output is an `http(s)://` URL (those are read-only), and each `s3://` input
/// exists and may be read (a HEAD request). The error names the URL and says why.
pub fn check_urls(inputs: &[Named], outputs: &[Named]) -> std::io::Result<()> {
    for (named, output) in inputs
        .iter()
        .map(|n| (n, false))
        .chain(outputs.iter().map(|n| (n, true)))
    {
        let Stream::Path(path) = &named.stream else {
            continue;
        };
        match (location::parse_object(path)?, output) {
            (None, _) => {}
            (Some(Url::Http(url)), true) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("{url} ({}): http(s) URLs are read-only inputs; write to s3://BUCKET/KEY or a file", named.role),
                ))
            }
            #[cfg(feature = "s3")]
            (Some(Url::S3 { bucket, key }), false) => {
                remote::stat_s3(bucket, key)?;
            }
            #[cfg(feature = "s3")]
            (Some(Url::Http(url)), false) => {
                remote::check_http(url)?;
            }
            #[cfg(feature = "s3")]
            (Some(Url::S3 { .. }), _) => {}
            #[cfg(not(feature = "s3"))]
            (Some(url), _) => return Err(without_object_storage(&url.to_string())),
        }
    }
    Ok(())
}

/// A URL in a library built without the `s3` feature.
#[cfg(not(feature = "s3"))]
fn without_object_storage(url: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        format!("{url}: URLs need rdq-envelope's `s3` feature"),
    )
}

/// Opens `path` to read it as stored (nothing decompressed): a local file, an `s3://` object or
/// an `http(s)://` URL. For the small files the command line reads whole (`--queue-limits`,
/// `batch --assemble`), so that they take a URL as every input does.
#[doc(hidden)]
pub fn open_stored(path: &std::path::Path) -> std::io::Result<Box<dyn std::io::Read + Send>> {
    match open_url(path)? {
        Some(object) => Ok(object),
        None => Ok(Box::new(std::fs::File::open(path)?)),
    }
}

/// Opens a URL written as a path for reading: `None` when `path` is not a URL.
pub(crate) fn open_url(
    path: &std::path::Path,
) -> std::io::Result<Option<Box<dyn std::io::Read + Send>>> {
    let Some(url) = location::parse_object(path)? else {
        return Ok(None);
    };
    #[cfg(feature = "s3")]
    {
        Ok(Some(match url {
            Url::S3 { bucket, key } => Box::new(remote::open_s3(bucket, key, None)?),
            Url::Http(url) => Box::new(remote::open_http(url)?),
        }))
    }
    #[cfg(not(feature = "s3"))]
    Err(without_object_storage(&url.to_string()))
}

/// A compressed input or output in a library built without the `compression` feature.
#[cfg(not(feature = "compression"))]
fn without_compression(what: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        format!("{what} needs rdq-envelope's `compression` feature"),
    )
}
