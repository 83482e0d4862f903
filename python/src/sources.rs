//! The inputs as the Python package hands them over: `("path", str)`, `("bytes", bytes, name)`
//! or `("file", object, name)` (a binary file-like object, read through its `read`).

use std::io::{self, Read};
use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use rdq_envelope::io::{Named, Skipped, Stream};
use rdq_envelope::pipeline::Source;

/// One input, as the package described it.
pub(crate) enum Input {
    Path(PathBuf),
    Data(Vec<u8>, String),
    File(Py<PyAny>, String),
}

impl<'py> FromPyObject<'_, 'py> for Input {
    type Error = PyErr;

    fn extract(described: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        let (kind, value, name): (String, Bound<'py, PyAny>, Option<String>) =
            described.extract()?;
        let name = || name.clone().unwrap_or_else(|| "<input>".to_owned());
        match kind.as_str() {
            "path" => Ok(Input::Path(value.extract()?)),
            "bytes" => Ok(Input::Data(value.extract()?, name())),
            "file" => Ok(Input::File(value.unbind(), name())),
            _ => Err(crate::error(
                "INTERNAL",
                format!("an input of kind {kind:?}"),
            )),
        }
    }
}

impl Input {
    /// The pipeline's source: a path (a file, `s3://` or `http(s)://`), or a stream.
    pub(crate) fn into_source(self) -> Source {
        match self {
            Input::Path(path) => Source::Path(path),
            Input::Data(bytes, name) => Source::Reader {
                name,
                reader: Box::new(io::Cursor::new(bytes)),
            },
            Input::File(object, name) => Source::Reader {
                name,
                reader: Box::new(PythonReader { object }),
            },
        }
    }

    /// The input as the alias check sees it: only paths can be an output too.
    pub(crate) fn named(&self) -> Option<Named> {
        match self {
            Input::Path(path) => Some(Named::new("input", Stream::Path(path.clone()))),
            _ => None,
        }
    }
}

/// Replaces each folder (or `s3://` prefix) among the path inputs by the files it holds, in
/// place and in order, as the command line does (`rdq_envelope::io::expand_folders`); returns
/// what the folders held that is not read, for the books.
pub(crate) fn expand_folders(inputs: &mut Vec<Input>) -> PyResult<Vec<Skipped>> {
    let mut skipped = Vec::new();
    let mut expanded = Vec::with_capacity(inputs.len());
    for input in std::mem::take(inputs) {
        match input {
            Input::Path(path) => {
                let mut paths = vec![path];
                let left_out = rdq_envelope::io::expand_folders(&mut paths)
                    .map_err(|e| crate::error("INPUT", e))?;
                skipped.extend(left_out);
                expanded.extend(paths.into_iter().map(Input::Path));
            }
            other => expanded.push(other),
        }
    }
    *inputs = expanded;
    Ok(skipped)
}

/// All of them, and the paths among them for the alias check.
pub(crate) fn into_sources(inputs: Vec<Input>) -> (Vec<Source>, Vec<Named>) {
    let named = inputs.iter().filter_map(Input::named).collect();
    (inputs.into_iter().map(Input::into_source).collect(), named)
}

/// A Python binary file-like object as a [`Read`]: each read calls its `read(n)` with the GIL
/// held (the pipeline's reader thread takes it; the caller's thread has released it).
struct PythonReader {
    object: Py<PyAny>,
}

impl Read for PythonReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Python::attach(|py| {
            let data = self
                .object
                .call_method1(py, "read", (buf.len(),))
                .map_err(|e| io::Error::other(format!("its read() raised {e}")))?;
            let data = data.bind(py);
            let Ok(bytes) = data.cast::<PyBytes>() else {
                let kind = data
                    .get_type()
                    .name()
                    .map_or_else(|_| "?".to_owned(), |n| n.to_string());
                return Err(io::Error::other(format!(
                    "its read() gave {kind}, not bytes: open the file in binary mode ('rb')"
                )));
            };
            let bytes = bytes.as_bytes();
            if bytes.len() > buf.len() {
                return Err(io::Error::other(format!(
                    "its read({}) gave {} bytes, more than asked for",
                    buf.len(),
                    bytes.len()
                )));
            }
            buf[..bytes.len()].copy_from_slice(bytes);
            Ok(bytes.len())
        })
    }
}
