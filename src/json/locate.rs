//! Where in a line the values that diagnostics point at begin: the byte offsets a
//! [`Diagnostic`] carries as data (docs/envelope.md#diagnostics).
//!
//! Cold: it runs only for a line that has something to report. One walk over the line serves
//! every diagnostic of it, and a value on no diagnostic's path is skipped without being read,
//! so a crafted line with a hundred diagnostics costs one pass over its bytes, not a hundred.

use crate::diagnostic::{omitted_count, push_pointer_token, Diagnostic, ErrorCode};

use super::escape::unescape;
use super::scan::MAX_DEPTH;

/// Sets the `offset` of each diagnostic in `list` that has none (and is not the summary of a
/// capped line) to where its path's value begins in `line`. A path the line does not hold
/// whole (a member that is missing, a path that was cut) gets the offset of the deepest value
/// on the path that the line has: for `MISSING_FIELD` at `/queue`, the object's `{`.
pub(crate) fn locate_all(list: &mut [Diagnostic], line: &[u8]) {
    if list
        .iter()
        .all(|d| d.offset.is_some() || omitted_count(d).is_some())
    {
        return;
    }
    let mut walk = Walk {
        line,
        wanted: list
            .iter()
            .enumerate()
            .filter(|(_, d)| d.offset.is_none() && omitted_count(d).is_none())
            .map(|(i, d)| Wanted {
                index: i,
                // A missing member is not in the line: its object is what the line has, and
                // finding that is a walk only as deep as the object (for a member missing
                // from the envelope itself, none).
                path: match d.code {
                    ErrorCode::MissingField => parent(&d.path),
                    _ => d.path.as_str(),
                },
                found: None,
                exact: false,
            })
            .collect(),
        key: String::new(),
    };
    let start = skip_space(line, 0);
    if start < line.len() {
        let mut pointer = String::new();
        walk.value(start, &mut pointer, 0);
    }
    let found: Vec<(usize, Option<usize>)> =
        walk.wanted.iter().map(|w| (w.index, w.found)).collect();
    for (index, offset) in found {
        list[index].offset = offset.map(|o| o as u64);
    }
}

/// The pointer to the value that holds the one at `path`.
fn parent(path: &str) -> &str {
    path.rfind('/').map_or("", |at| &path[..at])
}

struct Wanted<'d> {
    index: usize,
    path: &'d str,
    /// The offset of the deepest value on `path` seen so far.
    found: Option<usize>,
    /// Whether `found` is the value at `path` itself.
    exact: bool,
}

struct Walk<'l, 'd> {
    line: &'l [u8],
    wanted: Vec<Wanted<'d>>,
    /// The member key being read, decoded; reused from member to member.
    key: String,
}

impl Walk<'_, '_> {
    /// Visits the value at `at`, whose pointer is `pointer`, and returns where it ends (or the
    /// line's length when it does not end). Descends only where a wanted path goes on.
    fn value(&mut self, at: usize, pointer: &mut String, depth: usize) -> usize {
        let mut descend = false;
        for w in &mut self.wanted {
            if w.exact {
                continue;
            }
            if w.path == pointer.as_str() {
                w.found = Some(at);
                w.exact = true;
            } else if w.path.starts_with(pointer.as_str())
                && w.path.as_bytes().get(pointer.len()) == Some(&b'/')
            {
                w.found = Some(at);
                descend = true;
            }
        }
        let line = self.line;
        if !descend && self.wanted.iter().all(|w| w.exact) {
            // Every diagnostic is placed: the rest of the line need not be read.
            return line.len();
        }
        match line.get(at) {
            Some(b'{') if descend && depth < MAX_DEPTH => self.object(at, pointer, depth + 1),
            Some(b'[') if descend && depth < MAX_DEPTH => self.array(at, pointer, depth + 1),
            _ => skip_value(line, at),
        }
    }

    /// The reference tokens that the wanted paths going on past `pointer` take next, decoded
    /// (`~1` is `/`, `~0` is `~`): what a member's key or an element's index must be for the
    /// walk to go into it. Every other member or element is stepped over unread.
    fn next_tokens(&self, pointer: &str) -> Vec<String> {
        let mut tokens: Vec<String> = Vec::new();
        for w in &self.wanted {
            if w.exact || !w.path.starts_with(pointer) {
                continue;
            }
            let Some(rest) = w.path[pointer.len()..].strip_prefix('/') else {
                continue;
            };
            let raw = rest.split('/').next().unwrap_or_default();
            let token = raw.replace("~1", "/").replace("~0", "~");
            if !tokens.contains(&token) {
                tokens.push(token);
            }
        }
        tokens
    }

    fn object(&mut self, open: usize, pointer: &mut String, depth: usize) -> usize {
        let line = self.line;
        let tokens = self.next_tokens(pointer);
        let mut at = skip_space(line, open + 1);
        if line.get(at) == Some(&b'}') {
            return at + 1;
        }
        loop {
            if line.get(at) != Some(&b'"') {
                return line.len();
            }
            let key_end = skip_string(line, at);
            let raw = line
                .get(at + 1..key_end.saturating_sub(1))
                .unwrap_or_default();
            // A key without escapes is copied as it is (the decoder finds nothing to decode).
            unescape(&String::from_utf8_lossy(raw), &mut self.key);
            let wanted = tokens.contains(&self.key);
            at = skip_space(line, key_end);
            if line.get(at) != Some(&b':') {
                return line.len();
            }
            at = skip_space(line, at + 1);
            if wanted {
                let parent = pointer.len();
                push_pointer_token(pointer, &self.key);
                at = self.value(at, pointer, depth);
                pointer.truncate(parent);
            } else {
                at = skip_value(line, at);
            }
            at = skip_space(line, at);
            match line.get(at) {
                Some(b',') => at = skip_space(line, at + 1),
                Some(b'}') => return at + 1,
                _ => return line.len(),
            }
        }
    }

    fn array(&mut self, open: usize, pointer: &mut String, depth: usize) -> usize {
        let line = self.line;
        let indexes: Vec<u64> = self
            .next_tokens(pointer)
            .iter()
            .filter_map(|t| t.parse().ok())
            .collect();
        let mut at = skip_space(line, open + 1);
        if line.get(at) == Some(&b']') {
            return at + 1;
        }
        let mut index = 0u64;
        loop {
            if indexes.contains(&index) {
                let parent = pointer.len();
                pointer.push('/');
                pointer.push_str(itoa::Buffer::new().format(index));
                at = self.value(at, pointer, depth);
                pointer.truncate(parent);
            } else {
                at = skip_value(line, at);
            }
            index += 1;
            at = skip_space(line, at);
            match line.get(at) {
                Some(b',') => at = skip_space(line, at + 1),
                Some(b']') => return at + 1,
                _ => return line.len(),
            }
        }
    }
}

fn skip_space(line: &[u8], mut at: usize) -> usize {
    while matches!(line.get(at), Some(b' ' | b'\t' | b'\r' | b'\n')) {
        at += 1;
    }
    at
}

/// Where the string that opens at `at` ends (after its closing quote), or the line's length.
fn skip_string(line: &[u8], at: usize) -> usize {
    let mut i = at + 1;
    while let Some(found) = memchr::memchr2(b'"', b'\\', line.get(i..).unwrap_or_default()) {
        i += found;
        if line[i] == b'\\' {
            i += 2;
        } else {
            return i + 1;
        }
    }
    line.len()
}

/// Where the value that begins at `at` ends, without reading it: strings are stepped over
/// whole, brackets counted. The line was parsed before (a diagnostic past the JSON layer), but
/// nothing here trusts that: on bytes that are not JSON it stops at the line's end.
fn skip_value(line: &[u8], at: usize) -> usize {
    let mut depth = 0usize;
    let mut i = at;
    while let Some(&b) = line.get(i) {
        match b {
            b'"' => {
                i = skip_string(line, i);
                if depth == 0 {
                    return i;
                }
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                if depth == 0 {
                    return i;
                }
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            b',' | b':' | b' ' | b'\t' | b'\r' | b'\n' if depth == 0 => return i,
            _ => {}
        }
        i += 1;
    }
    line.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offsets(line: &str, paths: &[&str]) -> Vec<Option<u64>> {
        let mut list: Vec<Diagnostic> = paths
            .iter()
            .map(|p| Diagnostic::new(ErrorCode::WrongType, *p, "m"))
            .collect();
        locate_all(&mut list, line.as_bytes());
        list.iter().map(|d| d.offset).collect()
    }

    #[test]
    fn values_members_and_elements_are_found() {
        let line = r#" {"a": 1, "b": {"c/d": [true, "x\"y", {"e~f": null}]}, "g": "h"}"#;
        assert_eq!(
            offsets(
                line,
                &[
                    "",
                    "/a",
                    "/b",
                    "/b/c~1d",
                    "/b/c~1d/1",
                    "/b/c~1d/2/e~0f",
                    "/g"
                ]
            ),
            [1, 7, 15, 23, 30, 46, 60].map(Some)
        );
    }

    #[test]
    fn a_missing_member_or_element_points_at_the_deepest_value_there_is() {
        let line = r#"{"a": {"b": [1]}, "c": 2}"#;
        assert_eq!(
            offsets(line, &["/queue", "/a/x", "/a/b/5", "/c/d"]),
            [0, 6, 12, 23].map(Some)
        );
    }

    #[test]
    fn a_missing_field_points_at_its_object() {
        let line = r#" {"a": [{"b": 1}], "c": 2}"#;
        let mut list = vec![
            Diagnostic::new(ErrorCode::MissingField, "/queue", "m"),
            Diagnostic::new(ErrorCode::MissingField, "/a/0/outcome", "m"),
        ];
        locate_all(&mut list, line.as_bytes());
        assert_eq!((list[0].offset, list[1].offset), (Some(1), Some(8)));
    }

    #[test]
    fn escaped_keys_are_compared_decoded() {
        let line = r#"{"\u0071ueue": 5, "a\\b": 6}"#;
        assert_eq!(offsets(line, &["/queue", "/a\\b"]), [15, 26].map(Some));
    }

    #[test]
    fn a_duplicate_key_is_found_at_its_first_member() {
        let line = r#"{"k": 1, "k": 2}"#;
        assert_eq!(offsets(line, &["/k"]), [Some(6)]);
    }

    #[test]
    fn set_offsets_and_summaries_are_left_as_they_are() {
        let mut list = vec![
            Diagnostic::new(ErrorCode::MalformedJson, "", "m").at_offset(3),
            Diagnostic::new(
                ErrorCode::DuplicateKey,
                "",
                "... and 5 more diagnostics on this line",
            ),
        ];
        locate_all(&mut list, b"{\"a\": 1}");
        assert_eq!((list[0].offset, list[1].offset), (Some(3), None));
    }

    #[test]
    fn bytes_that_are_not_json_end_the_walk_without_a_panic() {
        for line in [
            "{",
            "{\"a",
            "{\"a\":",
            "[1,",
            "{\"a\" 1}",
            "\"",
            "{\"a\":[[[[",
            "}",
            "]]",
            "\\",
        ] {
            offsets(line, &["/a/0", "", "/x"]);
        }
        let deep = "[".repeat(10_000);
        assert_eq!(offsets(&deep, &["/0/0/0"]), [Some(3)]);
    }
}
