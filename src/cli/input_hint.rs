//! The one line a run says about an input that is not JSON Lines at all (docs/cli.md#inputs):
//! what it is, and the command line that reads it as meant, this run's own with the input
//! turned into JSON Lines first (jq for a JSON array or document, iconv for UTF-16 or UTF-32).

use std::io::Read;
use std::path::Path;

use rdq_envelope::framing::InputKind;
use rdq_envelope::io::{Compression, Endings, Url};
use rdq_envelope::pipeline::{NotJsonLinesHook, Source};
use rdq_envelope::report::shell::{shell_path, shell_word};

/// The pipeline's hook that says it as soon as an input's first line shows it (before any of
/// the input's diagnostics). A standard error that cannot take it fails the run's closing line.
pub fn hook() -> NotJsonLinesHook {
    NotJsonLinesHook(std::sync::Arc::new(|source, kind| {
        let _ = say_what_an_input_looks_like(source, kind);
    }))
}

/// The line for an input whose first line says it is another kind of file. Its lines are
/// still judged one by one; this says why they are all rejected, and what to run instead.
fn say_what_an_input_looks_like(source: &str, kind: InputKind) -> std::io::Result<()> {
    let looks_like = kind.looks_like();
    match kind {
        InputKind::Unicode(unicode) => {
            let iconv = format!("iconv -f {} -t UTF-8", unicode.iconv_name());
            super::say(format_args!(
                "{source} looks like {looks_like}, not JSON Lines, which are UTF-8; try: {}",
                through(source, &iconv)
            ))?
        }
        InputKind::Binary => super::say(format_args!(
            "{source} looks like {looks_like}, so not JSON Lines: name the JSON Lines \
             file itself (an archive such as zip extracted first)"
        ))?,
        _ => match kind.jq_filter() {
            Some(filter) => super::say(format_args!(
                "{source} looks like {looks_like}, not JSON Lines (one envelope per line); \
                 try: {}",
                through(source, &format!("jq -c {}", shell_word(filter)))
            ))?,
            None => super::say(format_args!(
                "{source} looks like {looks_like}, not JSON Lines (one envelope per line); \
                 rows cannot be made into envelopes again: read the JSON Lines they came from"
            ))?,
        },
    }
    Ok(())
}

/// This run's command line with `source` read from standard input through `tool` (a command
/// that reads a file named after it, or its standard input): `tool FILE | rdq-envelope ... -`.
/// What the run decompressed is decompressed first (`gzip -dc FILE | tool | ...`), since the
/// tool reads the bytes as stored.
fn through(source: &str, tool: &str) -> String {
    // A stream given by name (`<(...)`, /dev/stdin) is gone once read: the tool reads what
    // made it.
    let stream = ["/dev/stdin", "/dev/fd/", "/proc/self/fd/"]
        .iter()
        .any(|prefix| source.starts_with(prefix));
    let stdin = source == Source::Stdin.name();
    let mut replaced = stdin;
    let mut words = vec!["rdq-envelope".to_owned()];
    for arg in super::args_after_name() {
        let arg = arg.to_string_lossy();
        if !replaced && arg == source {
            replaced = true;
            words.push("-".to_owned());
        } else {
            words.push(shell_word(&arg));
        }
    }
    let read = match (stdin, stream) {
        (true, _) => tool.to_owned(),
        (false, true) => format!("(what made {source}) | {tool}"),
        (false, false) => match reading(source) {
            Reading::Itself => format!("{tool} {}", shell_path(source)),
            Reading::By(command) => format!("{command} | {tool}"),
        },
    };
    format!("{read} | {}", words.join(" "))
}

/// How a shell command reads a named input's bytes as this run read them.
enum Reading {
    /// The tool reads the file itself.
    Itself,
    /// This command writes them: a decompressor, a download, or both.
    By(String),
}

/// How `source` is read: a local file by the tool, unless it is compressed (told from its
/// first bytes, as the run told it); an object by `aws s3 cp` or `curl`, decompressed as its
/// name's ending says (it is not fetched again for a hint).
fn reading(source: &str) -> Reading {
    let path = Path::new(source);
    let decompress = |compression: Compression| match compression {
        Compression::Gzip => Some("gzip -dc"),
        Compression::Zstd => Some("zstd -dc"),
        _ => None,
    };
    let fetch = match rdq_envelope::io::parse_url(path) {
        Ok(Some(Url::S3 { .. })) => format!("aws s3 cp {} -", shell_word(source)),
        Ok(Some(Url::Http(_))) => format!("curl -fsS {}", shell_word(source)),
        _ => {
            return match decompress(first_bytes_say(path)) {
                Some(command) => Reading::By(format!("{command} {}", shell_path(source))),
                None => Reading::Itself,
            }
        }
    };
    match decompress(Endings::of(path).compression) {
        Some(command) => Reading::By(format!("{fetch} | {command}")),
        None => Reading::By(fetch),
    }
}

/// The compression of a local file by its first bytes (none if it cannot be read).
fn first_bytes_say(path: &Path) -> Compression {
    let mut magic = Vec::with_capacity(4);
    match std::fs::File::open(path).and_then(|f| f.take(4).read_to_end(&mut magic)) {
        Ok(_) => rdq_envelope::io::sniff(&magic),
        Err(_) => Compression::None,
    }
}
