//! Pretty-printing by re-indenting: only the white space between tokens changes, so every
//! string, escape and number keeps its exact spelling and every key its place (`show`).

/// The deepest level [`pretty`] indents: deeper levels are indented as this one, so that the
/// output stays within about 34 times the input whatever its nesting (a payload nested 27,000
/// deep once took 1.4 GB to show, issue 16).
pub const MAX_INDENT_LEVELS: usize = 32;

/// Appends `json`, a valid JSON text, indented by two spaces per level (up to
/// [`MAX_INDENT_LEVELS`]), one member or element per line, `"key": value`; empty objects and
/// arrays stay `{}` and `[]`. No newline at the end.
///
/// The input must be valid JSON (the caller has parsed it); on anything else the output is
/// some re-spacing of the same bytes, never a panic.
///
/// ```
/// use rdq_envelope::json::pretty;
/// let mut out = Vec::new();
/// pretty(br#"{"a":[1,2.50,{}], "b":"\u00e9\"","c":[ ]}"#, &mut out);
/// assert_eq!(
///     String::from_utf8(out).unwrap(),
///     "{\n  \"a\": [\n    1,\n    2.50,\n    {}\n  ],\n  \"b\": \"\\u00e9\\\"\",\n  \"c\": []\n}"
/// );
/// ```
pub fn pretty(json: &[u8], out: &mut Vec<u8>) {
    let mut depth = 0usize;
    let mut i = 0;
    while i < json.len() {
        let byte = json[i];
        match byte {
            b' ' | b'\t' | b'\n' | b'\r' => {}
            b'{' | b'[' => {
                let close = if byte == b'{' { b'}' } else { b']' };
                let next = next_token(json, i + 1);
                if json.get(next) == Some(&close) {
                    out.extend_from_slice(&[byte, close]);
                    i = next;
                } else {
                    depth += 1;
                    out.push(byte);
                    newline(out, depth);
                }
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                newline(out, depth);
                out.push(byte);
            }
            b',' => {
                out.push(b',');
                newline(out, depth);
            }
            b':' => out.extend_from_slice(b": "),
            b'"' => {
                let end = string_end(json, i);
                out.extend_from_slice(&json[i..end]);
                i = end;
                continue;
            }
            _ => {
                // A number or a literal: up to the next structural byte or white space.
                let end = json[i..]
                    .iter()
                    .position(|b| b",:{}[]\" \t\n\r".contains(b))
                    .map_or(json.len(), |n| i + n);
                out.extend_from_slice(&json[i..end]);
                i = end;
                continue;
            }
        }
        i += 1;
    }
}

/// Appends `json` without the white space between its tokens: the inverse of [`pretty`] (and
/// of any other re-spacing), every token kept as it is.
///
/// ```
/// use rdq_envelope::json::compact;
/// let mut out = Vec::new();
/// compact(b"{ \"a\" : [ 1 , \"b c\" ] }", &mut out);
/// assert_eq!(out, br#"{"a":[1,"b c"]}"#);
/// ```
pub fn compact(json: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    while i < json.len() {
        match json[i] {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'"' => {
                let end = string_end(json, i);
                out.extend_from_slice(&json[i..end]);
                i = end;
            }
            byte => {
                out.push(byte);
                i += 1;
            }
        }
    }
}

fn newline(out: &mut Vec<u8>, depth: usize) {
    out.push(b'\n');
    out.resize(out.len() + 2 * depth.min(MAX_INDENT_LEVELS), b' ');
}

/// The index of the first byte at or after `from` that is not white space.
fn next_token(json: &[u8], from: usize) -> usize {
    json[from.min(json.len())..]
        .iter()
        .position(|b| !b" \t\n\r".contains(b))
        .map_or(json.len(), |n| from + n)
}

/// The index just past the string that opens at `start` (or the end of the input).
fn string_end(json: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < json.len() {
        match json[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    json.len()
}

#[cfg(test)]
mod tests {
    use super::{compact, pretty};

    fn render(json: &str) -> String {
        let mut out = Vec::new();
        pretty(json.as_bytes(), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn only_white_space_between_tokens_changes() {
        let cases = [
            ("1e400", "1e400"),
            ("\"a\\\\\"", "\"a\\\\\""),
            ("[ ]", "[]"),
            ("{ }", "{}"),
            ("[[]]", "[\n  []\n]"),
            (
                "{\"a\":{\"b\":null}}",
                "{\n  \"a\": {\n    \"b\": null\n  }\n}",
            ),
            (" [true , false] ", "[\n  true,\n  false\n]"),
            ("{\"k,:{}\":\"v[]\"}", "{\n  \"k,:{}\": \"v[]\"\n}"),
        ];
        for (input, want) in cases {
            assert_eq!(render(input), want, "{input:?}");
        }
    }

    #[test]
    fn removing_the_added_white_space_gives_the_input_back() {
        let input = r#"{"n":-0.0e+1,"s":"tab\there \" \\","u":"é\u00e9","o":{"x":[1,[2,{}],[]]}}"#;
        let mut squeezed = Vec::new();
        compact(render(input).as_bytes(), &mut squeezed);
        assert_eq!(String::from_utf8(squeezed).unwrap(), input);
    }

    #[test]
    fn indentation_stops_growing_at_the_deepest_level() {
        let depth = 10_000;
        let input = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let out = render(&input);
        let widest = out.lines().map(|l| l.len()).max().unwrap();
        assert_eq!(widest, 2 * super::MAX_INDENT_LEVELS + 2, "the innermost []");
        assert!(out.len() < 2 * depth * (2 * super::MAX_INDENT_LEVELS + 2));
        let mut squeezed = Vec::new();
        compact(out.as_bytes(), &mut squeezed);
        assert_eq!(String::from_utf8(squeezed).unwrap(), input);
    }

    #[test]
    fn never_panics_on_broken_input() {
        for input in [
            "\"unterminated",
            "\"\\",
            "}}]]",
            "{\"a\":",
            ",,,",
            "[",
            "\u{0}",
        ] {
            let _ = render(input);
        }
    }
}
