//! The inputs of a command that reads envelopes, as its run names them: the sources in order,
//! the streams the alias checks compare, their size for the progress bar, and what to say when
//! standard input is a terminal.

use std::io::Write;
use std::path::PathBuf;

use rdq_envelope::io::{Named, Stream};
use rdq_envelope::pipeline::Source;

/// The inputs in order: `-` (or none at all) is standard input.
pub fn sources(files: &[PathBuf]) -> Vec<Source> {
    if files.is_empty() {
        return vec![Source::Stdin];
    }
    files
        .iter()
        .map(|path| {
            if path.as_os_str() == "-" {
                Source::Stdin
            } else {
                Source::Path(path.clone())
            }
        })
        .collect()
}

/// The inputs as streams, for [`check_aliases`](rdq_envelope::io::check_aliases): `-` (or none at all) is standard input.
pub fn input_streams(files: &[PathBuf]) -> Vec<Named> {
    if files.is_empty() {
        return vec![Named::new("input", Stream::Stdin)];
    }
    files
        .iter()
        .map(|path| Named::path("input", path, false))
        .collect()
}

/// The inputs' stored size, when every input is a regular file (for percent and ETA).
pub fn total_size(files: &[PathBuf]) -> Option<u64> {
    if files.is_empty() {
        return None;
    }
    files.iter().try_fold(0u64, |total, path| {
        let meta = std::fs::metadata(path).ok().filter(|m| m.is_file())?;
        Some(total + meta.len())
    })
}

/// With no input named (or `-`) and a terminal on standard input, says on standard error what
/// the run waits for and how to end it, before it waits: a command that sits silent on a
/// terminal looks hung (`zstd` goes further and refuses a console on standard input; envelopes
/// pasted into a terminal are a fair use, so this only says so). Nothing with `--quiet`.
pub fn say_if_reading_a_terminal(files: &[PathBuf], quiet: bool) {
    use std::io::IsTerminal;
    let reads_stdin = files.is_empty() || files.iter().any(|f| f.as_os_str() == "-");
    if quiet || !reads_stdin || !std::io::stdin().is_terminal() {
        return;
    }
    let _ = writeln!(
        std::io::stderr(),
        "rdq-envelope: reading envelopes from standard input (a terminal): paste JSON Lines and \
         end with Ctrl-D, or name the files to read (rdq-envelope COMMAND FILE...)"
    );
}
