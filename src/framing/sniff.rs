//! What an input that is not JSON Lines looks like, from its first lines: the one hint a person
//! needs when every line of a pretty-printed array, a CSV export, a UTF-16 file or a binary
//! file is rejected one by one.
//!
//! Only a source whose first line was rejected is sniffed, and every rule below needs a first
//! line no envelope can start: a valid JSON Lines file never gets a hint.

/// The kind of file an input looks like instead of JSON Lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputKind {
    /// A JSON array of envelopes (`[` first), pretty or on one line.
    JsonArray,
    /// One pretty-printed JSON document (a `{` alone on the first line).
    JsonDocument,
    /// Comma- or tab-separated rows (a header such as `id,queue,status`).
    Csv,
    /// Text in UTF-16 or UTF-32 (PowerShell's `>` and `Out-File` write UTF-16 with a BOM), told
    /// by its byte-order mark or, without one, by the NUL bytes of its first characters.
    Unicode(Unicode),
    /// Not text at all: NUL bytes, or many control bytes, after any decompression.
    Binary,
}

/// A Unicode encoding other than UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Unicode {
    /// Bytes per code unit: 2 (UTF-16) or 4 (UTF-32).
    pub unit: u8,
    /// Big-endian (the most significant byte first).
    pub big_endian: bool,
    /// Whether the text begins with a byte-order mark.
    pub bom: bool,
}

impl Unicode {
    /// Its name as iconv knows it: `UTF-16` with a BOM (iconv reads the order from it and
    /// drops it), else `UTF-16LE` or `UTF-16BE` (without a BOM, iconv's `UTF-16` guesses).
    pub fn iconv_name(self) -> String {
        let bits = u32::from(self.unit) * 8;
        match (self.bom, self.big_endian) {
            (true, _) => format!("UTF-{bits}"),
            (false, true) => format!("UTF-{bits}BE"),
            (false, false) => format!("UTF-{bits}LE"),
        }
    }
}

/// How many first bytes the encoding and binary rules look at.
const SAMPLE: usize = 512;

impl InputKind {
    /// The kind `first` (an input's first non-blank line, UTF-8 BOM and terminator removed)
    /// suggests, if any.
    pub fn sniff(first: &[u8]) -> Option<InputKind> {
        if let Some(unicode) = by_bom(first).or_else(|| by_nuls(first)) {
            return Some(InputKind::Unicode(unicode));
        }
        let line = first.trim_ascii();
        // An object, broken or not, is a line of JSON Lines, whatever bytes it holds.
        if line.first() != Some(&b'{') && binary(&first[..first.len().min(SAMPLE)]) {
            return Some(InputKind::Binary);
        }
        match line.first()? {
            b'[' => Some(InputKind::JsonArray),
            b'{' if line.len() == 1 => Some(InputKind::JsonDocument),
            // An object, broken or not, is a line of JSON Lines; so is one JSON string.
            b'{' => None,
            b'"' if one_string(line) => None,
            _ if memchr::memchr2(b',', b'\t', line).is_some() => Some(InputKind::Csv),
            _ => None,
        }
    }

    /// What it looks like, for a sentence: "a JSON array".
    pub fn looks_like(self) -> String {
        match self {
            InputKind::JsonArray => "a JSON array".to_owned(),
            InputKind::JsonDocument => "a pretty-printed JSON document".to_owned(),
            InputKind::Csv => "CSV (comma- or tab-separated rows)".to_owned(),
            InputKind::Unicode(u) => format!(
                "UTF-{} text ({}, {})",
                u32::from(u.unit) * 8,
                match u.big_endian {
                    true => "big-endian",
                    false => "little-endian",
                },
                match u.bom {
                    true => "with a byte-order mark",
                    false => "without a byte-order mark",
                }
            ),
            InputKind::Binary => "binary data, not text (NUL or control bytes)".to_owned(),
        }
    }

    /// The jq filter that turns such an input into JSON Lines (`jq -c FILTER`), if one does:
    /// rows cannot be made into envelopes again.
    pub fn jq_filter(self) -> Option<&'static str> {
        match self {
            InputKind::JsonArray => Some(".[]"),
            InputKind::JsonDocument => Some("."),
            InputKind::Csv | InputKind::Unicode(_) | InputKind::Binary => None,
        }
    }
}

/// UTF-32 or UTF-16 by a byte-order mark at the start (UTF-32 LE's begins with UTF-16 LE's, so
/// it is asked first).
fn by_bom(first: &[u8]) -> Option<Unicode> {
    let (unit, big_endian) = match first {
        [0xFF, 0xFE, 0, 0, ..] => (4, false),
        [0, 0, 0xFE, 0xFF, ..] => (4, true),
        [0xFF, 0xFE, ..] => (2, false),
        [0xFE, 0xFF, ..] => (2, true),
        _ => return None,
    };
    Some(Unicode {
        unit,
        big_endian,
        bom: true,
    })
}

/// UTF-32 or UTF-16 without a byte-order mark, by where the NULs are among the first code
/// units: text of envelopes, JSON and CSV is mostly ASCII, whose characters are one byte and
/// then NULs (little-endian) or NULs and then one byte (big-endian). At least three in four of
/// the first units (up to 256 bytes) must have that shape, and UTF-8 text has no NUL at all.
fn by_nuls(first: &[u8]) -> Option<Unicode> {
    let sample = &first[..first.len().min(SAMPLE / 2)];
    if !sample.contains(&0) {
        return None;
    }
    for unit in [4u8, 2] {
        let units = sample.chunks_exact(usize::from(unit));
        let total = units.len();
        let (mut little, mut big) = (0usize, 0usize);
        for u in units {
            // The unit's high half NUL (in UTF-32, no code point of the first characters of a
            // text is above U+FFFF), its low half not: the second half in little-endian order,
            // the first in big-endian.
            let (first, second) = u.split_at(u.len() / 2);
            let nul = |half: &[u8]| half.iter().all(|&b| b == 0);
            if nul(second) && !nul(first) {
                little += 1;
            } else if nul(first) && !nul(second) {
                big += 1;
            }
        }
        for (count, big_endian) in [(little, false), (big, true)] {
            if total > 0 && count * 4 >= total * 3 {
                return Some(Unicode {
                    unit,
                    big_endian,
                    bom: false,
                });
            }
        }
    }
    None
}

/// Whether `sample` is not text: a NUL (UTF-16 and UTF-32 were told apart before), or a
/// control byte other than white space and ESC in every sixteen bytes or more, or PNG's
/// signature (whose first line, cut at its CR LF, is `\x89PNG` alone). Compressed data never
/// gets here as it is: gzip and zstd are undone before, and xz, bzip2 and lz4 refused.
fn binary(sample: &[u8]) -> bool {
    if sample.starts_with(b"\x89PNG") {
        return true;
    }
    let controls = sample
        .iter()
        .filter(|&&b| matches!(b, 0..=0x08 | 0x0E..=0x1A | 0x1C..=0x1F | 0x7F))
        .count();
    sample.contains(&0) || (controls > 0 && controls * 16 >= sample.len())
}

/// Whether `line` (starting with `"`) is one JSON string and nothing after it: its first
/// unescaped `"` after the opening one is its last byte. A scan, not a parse: the line may be
/// anything, of any length.
fn one_string(line: &[u8]) -> bool {
    let mut escaped = false;
    for (at, &byte) in line.iter().enumerate().skip(1) {
        match (escaped, byte) {
            (false, b'\\') => escaped = true,
            (false, b'"') => return at == line.len() - 1,
            _ => escaped = false,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_documents_and_rows_are_told_apart_from_lines() {
        let cases: [(&[u8], Option<InputKind>); 18] = [
            (b"[", Some(InputKind::JsonArray)),
            (b"  [{\"id\":1},{\"id\":2}]", Some(InputKind::JsonArray)),
            (b"[]", Some(InputKind::JsonArray)),
            (b"{", Some(InputKind::JsonDocument)),
            (b"  {  \r", Some(InputKind::JsonDocument)),
            (b"id,queue,status", Some(InputKind::Csv)),
            (b"id\tqueue\tstatus", Some(InputKind::Csv)),
            (b"\"id\",\"queue\"", Some(InputKind::Csv)),
            // Lines of JSON Lines, broken or not: the usual diagnostics say enough.
            (b"{\"id\":\"x\",\"queue\":\"q\"}", None),
            (b"{\"id\":\"x\",", None),
            (b"\"a,b\"", None),
            (b"\"a\\\",b\"", None),
            (b"42", None),
            (b"hello world", None),
            (b"", None),
            // A line of JSON Lines with a NUL is a broken line, not binary data.
            (b"{\"id\":\"a\x00b\x00c\x00d\"}", None),
            // Latin-1 and an ANSI colour are text.
            (b"caf\xe9,cr\xe8me", Some(InputKind::Csv)),
            (b"\x1b[31mERROR\x1b[0m: disk", None),
        ];
        for (line, kind) in cases {
            assert_eq!(
                InputKind::sniff(line),
                kind,
                "{:?}",
                String::from_utf8_lossy(line)
            );
        }
    }

    /// `text` in UTF-16 or UTF-32, with or without a BOM, as an input's first line reaches the
    /// sniffer: up to its first LF byte (whose other bytes stay behind).
    fn encoded(text: &str, unit: u8, big_endian: bool, bom: bool) -> Vec<u8> {
        let mut bytes = Vec::new();
        let chars = bom.then_some('\u{feff}').into_iter().chain(text.chars());
        for c in chars {
            let units: Vec<u32> = match unit {
                2 => {
                    let mut buf = [0u16; 2];
                    c.encode_utf16(&mut buf)
                        .iter()
                        .map(|&u| u32::from(u))
                        .collect()
                }
                _ => vec![u32::from(c)],
            };
            for u in units {
                let be = u.to_be_bytes();
                let be = &be[4 - usize::from(unit)..];
                match big_endian {
                    true => bytes.extend_from_slice(be),
                    false => bytes.extend(be.iter().rev()),
                }
            }
        }
        let end = memchr::memchr(b'\n', &bytes).unwrap_or(bytes.len());
        bytes.truncate(end);
        bytes
    }

    #[test]
    fn utf16_and_utf32_with_and_without_a_bom_and_binary_are_named() {
        let line = "{\"envelope_version\":1,\"id\":\"01J\u{e9}\",\"queue\":\"billing\"}\n";
        for unit in [2, 4] {
            for big_endian in [false, true] {
                for bom in [true, false] {
                    for text in [
                        line,
                        "[\n",
                        "id,queue\n",
                        "\u{417}\u{430}\u{43f}\u{440}\u{43e}\u{441},x\n",
                    ] {
                        let first = encoded(text, unit, big_endian, bom);
                        let expected = Unicode {
                            unit,
                            big_endian,
                            bom,
                        };
                        // Cyrillic without a BOM has no NULs to tell it by in UTF-16.
                        if text.starts_with('\u{417}') && !bom && unit == 2 {
                            continue;
                        }
                        assert_eq!(
                            InputKind::sniff(&first),
                            Some(InputKind::Unicode(expected)),
                            "{text:?} {unit} {big_endian} {bom}: {first:02x?}"
                        );
                    }
                }
            }
        }
        let le = Unicode {
            unit: 2,
            big_endian: false,
            bom: true,
        };
        assert_eq!(le.iconv_name(), "UTF-16");
        assert_eq!(Unicode { bom: false, ..le }.iconv_name(), "UTF-16LE");
        assert_eq!(
            Unicode {
                unit: 4,
                big_endian: true,
                bom: false
            }
            .iconv_name(),
            "UTF-32BE"
        );
        for binary in [
            &b"\x89PNG\r\x1a"[..],
            b"\x89PNG",
            b"PK\x03\x04\x14\x00\x00\x00\x08\x00",
            b"PAR1\x15\x04\x15\x80\x01",
            b"\x00\x00\x00\x00\x00\x00",
            b"\x01\x02\x03 some text",
        ] {
            assert_eq!(
                InputKind::sniff(binary),
                Some(InputKind::Binary),
                "{binary:02x?}"
            );
        }
    }
}
