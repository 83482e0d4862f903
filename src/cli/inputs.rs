//! Opening the inputs: files or standard input, each decompressed and framed on its own.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use anyhow::{bail, Context};

use rdq_envelope::framing::LineReader;

/// One input, ready to be read line by line.
pub struct Input {
    /// The path as given, or `<stdin>`.
    pub source: String,
    pub reader: LineReader<Box<dyn Read>>,
}

/// The inputs of `files` in order: `-` (or none at all) is standard input.
pub fn sources(files: &[std::path::PathBuf]) -> Vec<&Path> {
    if files.is_empty() {
        vec![Path::new("-")]
    } else {
        files.iter().map(|p| p.as_path()).collect()
    }
}

/// Opens `path` and wraps it in decompression and the line reader.
pub fn open(path: &Path, max_line_bytes: usize) -> anyhow::Result<Input> {
    let (source, raw): (String, Box<dyn Read>) = if path.as_os_str() == "-" {
        ("<stdin>".to_owned(), Box::new(io::stdin()))
    } else {
        let source = path.display().to_string();
        if path.is_dir() {
            bail!("{source}: is a directory, not an input file");
        }
        let file = File::open(path).with_context(|| format!("{source}: cannot open"))?;
        (source, Box::new(file))
    };
    let (_, stream) =
        rdq_envelope::io::decompressed(raw).with_context(|| format!("{source}: cannot read"))?;
    Ok(Input {
        source,
        reader: LineReader::with_max_line_bytes(stream, max_line_bytes),
    })
}
