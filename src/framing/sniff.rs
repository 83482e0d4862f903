//! What an input that is not JSON Lines looks like, from its first lines: the one hint a person
//! needs when every line of a pretty-printed array or a CSV export is rejected one by one.
//!
//! Only a source whose first line was rejected is sniffed, and every rule below needs a first
//! line no envelope can start: a valid JSON Lines file never gets a hint.

/// The kind of file an input looks like instead of JSON Lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// A JSON array of envelopes (`[` first), pretty or on one line.
    JsonArray,
    /// One pretty-printed JSON document (a `{` alone on the first line).
    JsonDocument,
    /// Comma- or tab-separated rows (a header such as `id,queue,status`).
    Csv,
}

impl InputKind {
    /// The kind `first` (an input's first non-blank line, BOM and terminator removed) suggests,
    /// if any.
    pub fn sniff(first: &[u8]) -> Option<InputKind> {
        let line = first.trim_ascii();
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
    pub fn looks_like(self) -> &'static str {
        match self {
            InputKind::JsonArray => "a JSON array",
            InputKind::JsonDocument => "a pretty-printed JSON document",
            InputKind::Csv => "CSV (comma- or tab-separated rows)",
        }
    }

    /// The jq filter that turns such an input into JSON Lines (`jq -c FILTER`), if one does:
    /// rows cannot be made into envelopes again.
    pub fn jq_filter(self) -> Option<&'static str> {
        match self {
            InputKind::JsonArray => Some(".[]"),
            InputKind::JsonDocument => Some("."),
            InputKind::Csv => None,
        }
    }
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
        let cases: [(&[u8], Option<InputKind>); 15] = [
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
}
