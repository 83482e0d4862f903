//! What a file's name says by its endings: a compression (`.zst`, `.gz`) and, before it, a
//! format (`.jsonl`, `.csv`, `.parquet`). Read here alone, for every output and for `batch`'s
//! shards, with one rule about letter case: none (`.ZST`, `.Csv.Gz` and `.JSONL` are `.zst`,
//! `.csv.gz` and `.jsonl`), as people type names (docs/cli.md#outputs).

use std::path::Path;

use super::Compression;

/// A name's endings. `-` (standard output) and a name without a dot have none; a name that
/// begins with its only dot (`.hidden`) is a name, not an ending.
///
/// ```
/// use std::path::Path;
/// use rdq_envelope::io::{Compression, Endings};
///
/// let endings = Endings::of(Path::new("out/Rows.CSV.Gz"));
/// assert_eq!(endings.compression, Compression::Gzip);
/// assert_eq!(endings.format.as_deref(), Some("csv"));
/// assert!(endings.format_is("csv"));
/// assert_eq!(endings.stem, "Rows");
/// assert_eq!(Endings::of(Path::new("r.ZST")).compression, Compression::Zstd);
/// assert_eq!(Endings::of(Path::new("r.ZST")).format, None);
/// assert_eq!(Endings::of(Path::new("-")).compression, Compression::None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Endings<'a> {
    /// The name (its last component) without the endings below: `Rows` of `out/Rows.CSV.Gz`.
    pub stem: &'a str,
    /// The ending that may name a format, without its dot, in lower case: `csv`.
    pub format: Option<String>,
    /// The compression the last ending names: `.zst` zstd, `.gz` gzip, else none.
    pub compression: Compression,
}

impl<'a> Endings<'a> {
    /// The endings of `path`'s last component (of a URL's key alike).
    pub fn of(path: &'a Path) -> Endings<'a> {
        let none = Endings {
            stem: "",
            format: None,
            compression: Compression::None,
        };
        if path.as_os_str() == "-" {
            return none;
        }
        match path.file_name().and_then(|n| n.to_str()) {
            Some(name) => Self::of_name(name),
            None => none,
        }
    }

    /// The endings of a file name (no folder before it).
    pub fn of_name(name: &'a str) -> Endings<'a> {
        let (mut stem, compression) = match split_ending(name) {
            Some((stem, ending)) if ending.eq_ignore_ascii_case("zst") => (stem, Compression::Zstd),
            Some((stem, ending)) if ending.eq_ignore_ascii_case("gz") => (stem, Compression::Gzip),
            _ => (name, Compression::None),
        };
        let format = split_ending(stem).map(|(before, ending)| {
            stem = before;
            ending.to_ascii_lowercase()
        });
        Endings {
            stem,
            format,
            compression,
        }
    }

    /// Whether the format ending is `ending` (lower case, without its dot), in any letter case.
    pub fn format_is(&self, ending: &str) -> bool {
        self.format.as_deref() == Some(ending)
    }
}

/// `name` split at its last dot, when there is a name before the dot and an ending after it.
fn split_ending(name: &str) -> Option<(&str, &str)> {
    let (stem, ending) = name.rsplit_once('.')?;
    (!stem.is_empty() && !ending.is_empty()).then_some((stem, ending))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endings_in_any_letter_case_are_one() {
        for (name, stem, format, compression) in [
            ("r.json.ZST", "r", Some("json"), Compression::Zstd),
            ("r.json.Zst", "r", Some("json"), Compression::Zstd),
            ("r.csv.GZ", "r", Some("csv"), Compression::Gzip),
            ("x.Parquet", "x", Some("parquet"), Compression::None),
            ("a.b.JSONL", "a.b", Some("jsonl"), Compression::None),
            ("A.CSV.GZ", "A", Some("csv"), Compression::Gzip),
            ("out.zst", "out", None, Compression::Zstd),
            (".zst", ".zst", None, Compression::None),
            (".hidden.gz", ".hidden", None, Compression::Gzip),
            ("part-0001", "part-0001", None, Compression::None),
            ("trailing.", "trailing.", None, Compression::None),
            ("x.gz.zst", "x", Some("gz"), Compression::Zstd),
        ] {
            let endings = Endings::of_name(name);
            assert_eq!(endings.stem, stem, "{name}");
            assert_eq!(endings.format.as_deref(), format, "{name}");
            assert_eq!(endings.compression, compression, "{name}");
        }
        assert!(Endings::of(Path::new("s3://bkt/dir.v2/Out.JSONL.GZ")).format_is("jsonl"));
        assert_eq!(Endings::of(Path::new("dir.csv/")).stem, "dir");
        assert_eq!(Endings::of(Path::new("-")).format, None);
    }
}
