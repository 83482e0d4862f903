//! [`Source`]: where an input comes from, as the pipeline reads it.

use std::io::Read;
use std::path::PathBuf;

/// Where the input comes from.
pub enum Source {
    /// Standard input, named `<stdin>`.
    Stdin,
    /// A file, named by its path as given (or an `s3://` or `http(s)://` URL, with the `s3`
    /// feature). With two workers or more, a regular file, a zstd file of several frames and an
    /// `s3://` object with a seek table are read by the workers themselves, in pieces
    /// (docs/cli.md#inputs, "Read in parallel"); the lines are the same.
    Path(PathBuf),
    /// Any byte stream (tests, embedders), with the name diagnostics give it.
    Reader {
        /// The name in diagnostics.
        name: String,
        /// The stream, compressed or not.
        reader: Box<dyn Read + Send>,
    },
}

impl Source {
    /// The name diagnostics give this source (docs/cli.md#inputs: the path as given, or `<stdin>`).
    ///
    /// ```
    /// use rdq_envelope::pipeline::Source;
    ///
    /// assert_eq!(Source::Stdin.name(), "<stdin>");
    /// assert_eq!(Source::Path("dlq/a.jsonl".into()).name(), "dlq/a.jsonl");
    /// ```
    pub fn name(&self) -> String {
        match self {
            Source::Stdin => "<stdin>".to_owned(),
            Source::Path(path) => path.display().to_string(),
            Source::Reader { name, .. } => name.clone(),
        }
    }
}
