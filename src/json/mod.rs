//! The strict JSON layer (docs/envelope.md#the-json-layer): one line in, a navigable
//! [`Document`] or the JSON layer's diagnostics out.
//!
//! The fast path is simd-json's tape, parsed from a reused, padded copy of the line with
//! reused buffers, so a valid line costs no allocation. Only a line simd-json refuses goes to
//! the cold path (`scan`), which classifies the failure or, when the line is valid JSON with
//! numbers simd-json cannot hold, retries with same-length stand-ins for those numbers.

mod duplicates;
mod escape;
mod locate;
mod numbers;
mod pretty;
mod scan;
pub(crate) mod stage1;
mod value;

#[cfg(any(test, feature = "generate"))]
pub(crate) use escape::push_string_contents;
pub(crate) use escape::{push_string, unescape};
pub(crate) use locate::locate_all;
pub use pretty::{compact, pretty, MAX_INDENT_LEVELS};
pub use scan::MAX_DEPTH;
pub use value::{Elements, Members, Value, ValueKind};

use simd_json::{Buffers, Node, Tape};

use crate::diagnostic::{pointer, push_capped, push_omitted, Diagnostic, ErrorCode};
use duplicates::{duplicate_key, duplicate_key_diagnostics, has_duplicate_keys, KeyTable};
use numbers::{apply_number_patches, NumberPatch, NumberTrial};
use scan::Grammar;
use value::subtree_len;

/// A byte classifier of the validator's single pass (stage 1) that this CPU runs: what
/// `rdq-envelope --version` reports, and what `RDQ_ENVELOPE_SIMD` chooses among.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SimdPath {
    /// Its name, as `RDQ_ENVELOPE_SIMD` spells it: `portable`, `sse4.2`, `avx2` or `neon`.
    pub name: &'static str,
    /// The CPU features it needs (`["avx2", "bmi1", "pclmulqdq", "popcnt"]`); none for the
    /// portable one.
    pub features: &'static [&'static str],
    /// Whether this process uses it: the fastest, unless `RDQ_ENVELOPE_SIMD` names another.
    pub in_use: bool,
}

/// The names `RDQ_ENVELOPE_SIMD` may give, on any CPU (a classifier the CPU lacks is passed
/// over for the fastest it has).
pub const SIMD_NAMES: &[&str] = &["portable", "sse4.2", "avx2", "neon"];

/// Every stage-1 classifier this CPU runs, fastest first, the one in use marked. The results
/// never depend on it; only the speed does.
///
/// ```
/// let paths = rdq_envelope::json::simd_paths();
/// assert_eq!(paths.iter().filter(|p| p.in_use).count(), 1);
/// assert_eq!(paths.last().map(|p| p.name), Some("portable"));
/// ```
pub fn simd_paths() -> Vec<SimdPath> {
    let in_use = stage1::Classifier::detect();
    stage1::Classifier::all()
        .into_iter()
        .rev()
        .map(|c| SimdPath {
            name: c.name(),
            features: c.features(),
            in_use: c == in_use,
        })
        .collect()
}

/// Objects with more keys than this are checked for duplicates with a hash table, not pairwise.
const PAIRWISE_KEYS: usize = 8;

/// A per-thread parser: owns the scratch copy, simd-json's buffers and the tape, all reused.
///
/// ```
/// use rdq_envelope::json::JsonParser;
///
/// let mut parser = JsonParser::new();
/// let mut errors = Vec::new();
/// let doc = parser.parse(br#"{"queue":"billing","n":1e400}"#, &mut errors).unwrap();
/// assert_eq!(doc.root().get("queue").and_then(|v| v.as_str()), Some("billing"));
/// drop(doc);
/// assert!(parser.parse(br#"{"a":1,"a":2}"#, &mut errors).is_none());
/// assert_eq!(errors[0].code.as_str(), "DUPLICATE_KEY");
/// ```
pub struct JsonParser {
    /// The line, copied (simd-json unescapes in place) with simd-json's padding after it.
    input: Vec<u8>,
    /// The cold path's copy, with stand-ins for numbers simd-json cannot hold.
    retry_input: Vec<u8>,
    buffers: Buffers,
    /// Empty between parses; lent to the [`Document`] while one is alive.
    tape: Tape<'static>,
    key_scratch: Vec<usize>,
    key_table: KeyTable,
    big_ints: Vec<(usize, i128)>,
    /// The trials' copy of a line with stand-ins for numbers simd-json cannot hold.
    trial_input: Vec<u8>,
    number_patches: Vec<NumberPatch>,
}

impl Default for JsonParser {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for JsonParser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonParser").finish_non_exhaustive()
    }
}

/// A line that passed the JSON layer: one object, no repeated key, depth at most 128.
pub struct Document<'p> {
    tape: Tape<'p>,
    home: &'p mut Tape<'static>,
    big_ints: &'p [(usize, i128)],
    /// simd-json's stage-1 output for this line: the byte offset of every structural
    /// character and of every scalar's first byte (stand-ins keep every offset).
    structurals: &'p [u32],
}

impl Drop for Document<'_> {
    fn drop(&mut self) {
        // Give the tape's allocation back to the parser for the next line.
        let tape = std::mem::replace(&mut self.tape, Tape(Vec::new()));
        *self.home = tape.reset();
    }
}

impl std::fmt::Debug for Document<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Document({} nodes)", self.tape.0.len())
    }
}

impl Document<'_> {
    /// The top-level object.
    pub fn root(&self) -> Value<'_> {
        Value::new(&self.tape.0, 0, self.big_ints)
    }

    /// Where every tape node lies in `line` (the line this document was parsed from): node
    /// `i` (see [`Value::tape_index`]) spans `spans[i].0..spans[i].1`, a key its quoted string.
    /// Built from simd-json's structural indexes in one pass over them, with no scan of the
    /// bytes but for white space before a separator: what a splicing migration needs.
    ///
    /// ```
    /// use rdq_envelope::json::JsonParser;
    ///
    /// let line = br#"{"a" : [1, {"b":"x\"y"}] ,"c":-0.5 }"#;
    /// let mut parser = JsonParser::new();
    /// let doc = parser.parse(line, &mut Vec::new()).unwrap();
    /// let mut spans = Vec::new();
    /// doc.node_spans(line, &mut spans);
    /// let text = |i: usize| &line[spans[i].0..spans[i].1];
    /// assert_eq!(text(0), line.trim_ascii());
    /// assert_eq!(text(1), br#""a""#);
    /// assert_eq!(text(2), br#"[1, {"b":"x\"y"}]"#);
    /// assert_eq!(text(5), br#""b""#);
    /// assert_eq!(text(8), b"-0.5");
    /// ```
    pub fn node_spans(&self, line: &[u8], spans: &mut Vec<(usize, usize)>) {
        spans.clear();
        spans.resize(self.tape.0.len(), (0, 0));
        // Open containers, innermost last; the depth limit bounds it.
        let mut open = [0usize; MAX_DEPTH + 1];
        let mut depth = 0;
        let mut node = 0;
        for (k, &at) in self.structurals.iter().enumerate() {
            let at = at as usize;
            let Some(&byte) = line.get(at) else {
                continue;
            };
            match byte {
                b'{' | b'[' => {
                    spans[node].0 = at;
                    open[depth] = node;
                    depth += 1;
                    node += 1;
                }
                b'}' | b']' => {
                    depth -= 1;
                    spans[open[depth]].1 = at + 1;
                }
                b':' | b',' => {}
                _ => {
                    // A scalar ends where white space before the next structural begins.
                    let next = self
                        .structurals
                        .get(k + 1)
                        .map_or(line.len(), |&n| n as usize);
                    let end = at + line[at..next.min(line.len())].trim_ascii_end().len();
                    spans[node] = (at, end);
                    node += 1;
                }
            }
        }
        debug_assert_eq!(node, self.tape.0.len(), "one span per tape node");
    }

    /// Number of tape nodes (keys included): a measure of the parse's cost.
    pub fn node_count(&self) -> usize {
        self.tape.0.len()
    }
}

impl JsonParser {
    /// A parser with empty buffers; they grow to the largest line seen and stay.
    pub fn new() -> Self {
        JsonParser {
            input: Vec::new(),
            retry_input: Vec::new(),
            buffers: Buffers::with_max_depth(4096, MAX_DEPTH),
            tape: Tape(Vec::new()),
            key_scratch: Vec::new(),
            key_table: KeyTable::new(),
            big_ints: Vec::new(),
            trial_input: Vec::new(),
            number_patches: Vec::new(),
        }
    }

    /// Parses one line (without its terminator). On success returns the document; otherwise pushes
    /// the JSON layer's diagnostics (docs/envelope.md#the-json-layer) onto `errors` and returns
    /// `None`.
    pub fn parse<'p>(
        &'p mut self,
        line: &[u8],
        errors: &mut Vec<Diagnostic>,
    ) -> Option<Document<'p>> {
        // Borrowing the fields apart lets the fast path lend `input` to the returned tape
        // while the cold path works on `retry_input`.
        let JsonParser {
            input,
            retry_input,
            buffers,
            tape: home,
            key_scratch,
            key_table,
            big_ints,
            trial_input,
            number_patches,
        } = self;
        copy_padded(input, line);
        let mut tape = std::mem::replace(home, Tape(Vec::new())).reset();
        let Err(error) = simd_json::fill_tape_padded(input, line.len(), buffers, &mut tape) else {
            if !matches!(tape.0.first(), Some(Node::Object { .. })) {
                errors.push(not_an_object());
            } else if has_duplicate_keys(&tape.0, key_scratch, key_table) {
                duplicate_key_diagnostics(&tape.0, errors);
            } else {
                return Some(Document {
                    tape,
                    home,
                    big_ints: &[],
                    structurals: buffers.structural_indexes(),
                });
            }
            *home = tape.reset();
            return None;
        };
        *home = tape.reset();

        // Numbers simd-json cannot hold (`1e400`, 30-digit integers) are the one way a valid
        // line fails it. Patch them where simd-json stopped and parse again: far cheaper than
        // the strict scanner, which stays for everything else.
        let trial = NumberTrial {
            scratch: trial_input,
            buffers,
            home,
            key_scratch,
            key_table,
        };
        if trial.run(line, error, number_patches, big_ints) {
            apply_number_patches(retry_input, line, number_patches);
        } else {
            big_ints.clear();
            // The strict scanner classifies the failure, or finds the line valid after all
            // (numbers past the trials' budget) and writes the stand-ins itself.
            if !parse_cold(line, errors, retry_input, big_ints) {
                return None;
            }
        }
        let mut tape = std::mem::replace(home, Tape(Vec::new())).reset();
        if simd_json::fill_tape_padded(retry_input, line.len(), buffers, &mut tape).is_err() {
            *home = tape.reset();
            errors.push(Diagnostic::new(
                ErrorCode::MalformedJson,
                "",
                "the JSON parser refused a line the strict scanner accepted",
            ));
            return None;
        }
        Some(Document {
            tape,
            home,
            big_ints,
            structurals: buffers.structural_indexes(),
        })
    }
}

/// `buf` becomes `line` followed by simd-json's padding, reusing its allocation.
fn copy_padded(buf: &mut Vec<u8>, line: &[u8]) {
    buf.clear();
    buf.reserve(line.len() + simd_json::INPUT_PADDING);
    buf.extend_from_slice(line);
    buf.resize(line.len() + simd_json::INPUT_PADDING, 0);
}

/// The lines simd-json refused: pushes their JSON-layer diagnostics, or returns `true` when the
/// line is valid after all (numbers simd-json cannot hold), with `retry` holding the line with
/// same-length stand-ins for them (`0` or `0.0`, then spaces) and `big_ints` the integers' real
/// values by tape index.
#[cold]
fn parse_cold(
    line: &[u8],
    errors: &mut Vec<Diagnostic>,
    retry: &mut Vec<u8>,
    big_ints: &mut Vec<(usize, i128)>,
) -> bool {
    if let Err(e) = std::str::from_utf8(line) {
        errors.push(
            Diagnostic::new(
                ErrorCode::InvalidUtf8,
                "",
                format!(
                    "bytes that are not UTF-8 at byte {} of the line",
                    e.valid_up_to()
                ),
            )
            .at_offset(e.valid_up_to() as u64),
        );
        return false;
    }
    let found = scan::scan(line);
    match found.grammar {
        Grammar::Malformed { offset, expected } => {
            let message = if offset >= line.len() {
                format!("not JSON: the line ends where {expected} was expected")
            } else {
                format!("not JSON: expected {expected} at byte {offset} of the line")
            };
            errors.push(
                Diagnostic::new(ErrorCode::MalformedJson, "", message)
                    .at_offset(offset.min(line.len()) as u64),
            );
            return false;
        }
        Grammar::TooDeep { offset } => {
            errors.push(
                Diagnostic::new(
                    ErrorCode::NestingTooDeep,
                    "",
                    format!("nesting deeper than {MAX_DEPTH} at byte {offset} of the line"),
                )
                .at_offset(offset as u64),
            );
            return false;
        }
        Grammar::Json { root_is_object } => {
            let rejected =
                !root_is_object || !found.surrogates.is_empty() || !found.duplicates.is_empty();
            if !root_is_object {
                errors.push(not_an_object());
            }
            // The scanner kept the first pointers of each kind and counted the rest.
            for path in found.surrogates {
                push_capped(errors, ErrorCode::InvalidUtf8, || {
                    Diagnostic::new(
                        ErrorCode::InvalidUtf8,
                        path,
                        "an unpaired surrogate escape: the string is not Unicode",
                    )
                });
            }
            push_omitted(errors, ErrorCode::InvalidUtf8, found.more_surrogates);
            for path in found.duplicates {
                push_capped(errors, ErrorCode::DuplicateKey, || duplicate_key(path));
            }
            push_omitted(errors, ErrorCode::DuplicateKey, found.more_duplicates);
            if rejected {
                return false;
            }
        }
    }
    copy_padded(retry, line);
    for n in &found.odd_numbers {
        let slot = &mut retry[n.start..n.end];
        slot.fill(b' ');
        match n.integer {
            Some(value) => {
                slot[0] = b'0';
                big_ints.push((n.tape_index, value));
            }
            // Every fraction or exponent form is at least three bytes long (`1e9`).
            None => slot[..3].copy_from_slice(b"0.0"),
        }
    }
    true
}

#[cold]
fn not_an_object() -> Diagnostic {
    Diagnostic::new(
        ErrorCode::NotAnObject,
        "",
        "the line is a JSON value but not an object",
    )
}

#[cfg(test)]
mod tests {
    use super::duplicates::{key_class, object_key_indexes, repeats_by_sorting};
    use super::numbers::MAX_NUMBER_PATCHES;
    use super::*;

    fn codes(line: &[u8]) -> Vec<(ErrorCode, String)> {
        let mut parser = JsonParser::new();
        let mut errors = Vec::new();
        let ok = parser.parse(line, &mut errors).is_some();
        assert_eq!(ok, errors.is_empty(), "{errors:?}");
        errors.into_iter().map(|d| (d.code, d.path)).collect()
    }

    #[test]
    fn valid_objects_pass() {
        assert!(codes(br#"{"a":{"b":[1,2,{"c":null}]},"d":"\u00e9"}"#).is_empty());
        assert!(codes(b" {} ").is_empty());
    }

    #[test]
    fn invalid_utf8_is_one_diagnostic_for_the_line() {
        assert_eq!(
            codes(b"{\"a\":\"\xff\"}"),
            [(ErrorCode::InvalidUtf8, String::new())]
        );
    }

    #[test]
    fn unpaired_surrogates_point_at_their_string() {
        assert_eq!(
            codes(br#"{"a":"\udc00","b":["\ud800"]}"#),
            [
                (ErrorCode::InvalidUtf8, "/a".into()),
                (ErrorCode::InvalidUtf8, "/b/0".into())
            ]
        );
    }

    #[test]
    fn malformed_and_trailing_data() {
        for line in [
            &b"{"[..],
            b"{\"a\":1}{}",
            b"{\"a\":1} x",
            b"",
            b"{\"a\":01}",
        ] {
            assert_eq!(
                codes(line),
                [(ErrorCode::MalformedJson, String::new())],
                "{line:?}"
            );
        }
    }

    #[test]
    fn not_an_object() {
        for line in [&b"[]"[..], b"1", b"\"x\"", b"null", b"1e400"] {
            assert_eq!(codes(line), [(ErrorCode::NotAnObject, String::new())]);
        }
    }

    #[test]
    fn duplicates_fast_and_cold_agree() {
        let fast = codes(br#"{"status":1,"st\u0061tus":2,"h":{"x":1,"x":2,"x":3}}"#);
        assert_eq!(
            fast,
            [
                (ErrorCode::DuplicateKey, "/status".into()),
                (ErrorCode::DuplicateKey, "/h/x".into()),
                (ErrorCode::DuplicateKey, "/h/x".into())
            ]
        );
        // A huge number sends the same line down the cold path.
        let cold = codes(br#"{"status":1,"st\u0061tus":2,"h":{"x":1,"x":2,"x":1e400}}"#);
        assert_eq!(cold, fast);
    }

    #[test]
    fn many_keys_use_the_sorted_check() {
        let mut line = String::from("{");
        for i in 0..1000 {
            line.push_str(&format!("\"k{i}\":{i},"));
        }
        line.push_str("\"k7\":0}");
        assert_eq!(
            codes(line.as_bytes()),
            [(ErrorCode::DuplicateKey, "/k7".into())]
        );
    }

    #[test]
    fn the_sorting_fallback_finds_repeats() {
        let mut errors = Vec::new();
        let mut parser = JsonParser::new();
        let doc = parser
            .parse(br#"{"a":{"x":1,"y":2,"x":3}}"#, &mut errors)
            .map(|_| ())
            .is_none();
        assert!(doc);
        let mut input = br#"{"b":1,"a":2,"c":3,"a":4}"#.to_vec();
        let len = input.len();
        input.resize(len + simd_json::INPUT_PADDING, 0);
        let mut tape = Tape(Vec::new());
        let mut buffers = Buffers::new(len);
        simd_json::fill_tape_padded(&mut input, len, &mut buffers, &mut tape).unwrap();
        let mut keys = Vec::new();
        object_key_indexes(&tape.0, 0, &mut keys);
        assert!(repeats_by_sorting(&tape.0, &mut keys));
        // Without the second "a" (the last key in document order) all keys differ.
        object_key_indexes(&tape.0, 0, &mut keys);
        keys.pop();
        assert!(!repeats_by_sorting(&tape.0, &mut keys));
    }

    #[test]
    fn depth_limit() {
        let ok = format!("{{\"a\":{}{}}}", "[".repeat(127), "]".repeat(127));
        assert!(codes(ok.as_bytes()).is_empty());
        let deep = format!("{{\"a\":{}{}}}", "[".repeat(128), "]".repeat(128));
        assert_eq!(
            codes(deep.as_bytes()),
            [(ErrorCode::NestingTooDeep, String::new())]
        );
    }

    #[test]
    fn numbers_simd_json_refuses_are_accepted_with_their_integer_values() {
        let mut parser = JsonParser::new();
        let mut errors = Vec::new();
        let line = br#"{"big":123456789012345678901234567890,"neg":-123456789012345678901234567890,"inf":1e400,"z":-0,"f":1.0,"s":"\n"}"#;
        let doc = parser.parse(line, &mut errors).expect("valid");
        let root = doc.root();
        let int = |k: &str| root.get(k).unwrap().as_integer();
        assert_eq!(int("big"), Some(123456789012345678901234567890));
        assert_eq!(int("neg"), Some(-123456789012345678901234567890));
        assert_eq!(int("inf"), None);
        assert_eq!(root.get("inf").unwrap().kind(), ValueKind::Number);
        assert_eq!(int("z"), Some(0));
        assert_eq!(int("f"), None);
        assert_eq!(root.get("s").unwrap().as_str(), Some("\n"));
    }

    #[test]
    fn number_stand_ins_agree_with_the_strict_scanner() {
        // The number trials take the first line; the stand-in's own value, or more refused
        // numbers than the trials' budget, send the same members through the strict scanner.
        let base = r#"{"a":[1,{"big":123456789012345678901234567890}],"inf":-1e400,"neg":-99999999999999999999"#;
        let sentinel = r#","s":-9223372036854775807"#;
        let budget = format!(
            r#","more":[{}]"#,
            ["1E+999"; MAX_NUMBER_PATCHES + 1].join(",")
        );
        for extra in ["", sentinel, budget.as_str()] {
            let line = format!("{base}{extra}}}");
            let mut parser = JsonParser::new();
            let mut errors = Vec::new();
            let doc = parser.parse(line.as_bytes(), &mut errors).expect(&line);
            let root = doc.root();
            let element = root.get("a").unwrap().elements().nth(1).unwrap();
            let big = element.get("big").unwrap();
            assert_eq!(
                big.as_integer(),
                Some(123456789012345678901234567890),
                "{line}"
            );
            assert_eq!(
                root.get("neg").unwrap().as_integer(),
                Some(-99999999999999999999)
            );
            assert_eq!(root.get("inf").unwrap().as_integer(), None);
            if extra == sentinel {
                assert_eq!(
                    root.get("s").unwrap().as_integer(),
                    Some(i128::from(i64::MIN + 1))
                );
            }
        }
    }

    #[test]
    fn refused_numbers_beside_other_defects_get_the_others_codes() {
        let big = "123456789012345678901234567890";
        let empty = String::new;
        let cases = [
            (
                format!(r#"{{"a":{big},"a":1}}"#),
                ErrorCode::DuplicateKey,
                "/a".to_owned(),
            ),
            (
                format!(r#"{{"a":{big},"b":"\ud800"}}"#),
                ErrorCode::InvalidUtf8,
                "/b".to_owned(),
            ),
            (format!("[{big},1e400]"), ErrorCode::NotAnObject, empty()),
            (
                format!(r#"{{"a":{big}}} x"#),
                ErrorCode::MalformedJson,
                empty(),
            ),
            (
                format!(r#"{{"a":{big}x}}"#),
                ErrorCode::MalformedJson,
                empty(),
            ),
            (
                format!(r#"{{"a":0{big}}}"#),
                ErrorCode::MalformedJson,
                empty(),
            ),
            (
                format!(r#"{{"a":-{big}.}}"#),
                ErrorCode::MalformedJson,
                empty(),
            ),
            (
                r#"{"a":1e400e1}"#.to_owned(),
                ErrorCode::MalformedJson,
                empty(),
            ),
            (
                r#"{"a":--1e400}"#.to_owned(),
                ErrorCode::MalformedJson,
                empty(),
            ),
            (
                r#"{"a":"x"1e400}"#.to_owned(),
                ErrorCode::MalformedJson,
                empty(),
            ),
        ];
        for (line, code, path) in cases {
            assert_eq!(codes(line.as_bytes()), [(code, path)], "{line}");
        }
    }

    #[test]
    fn keys_of_one_class_are_still_told_apart() {
        // Two different keys that share a class fall through to the exact check.
        let names: Vec<String> = (b'a'..=b'z')
            .flat_map(|x| (b'a'..=b'z').map(move |y| String::from_utf8(vec![x, y, b'k']).unwrap()))
            .collect();
        let (a, b) = names
            .iter()
            .enumerate()
            .find_map(|(i, a)| {
                names[i + 1..]
                    .iter()
                    .find(|b| key_class(a) == key_class(b))
                    .map(|b| (a, b))
            })
            .expect("256 classes for 676 names");
        assert!(codes(format!(r#"{{"{a}":1,"{b}":2}}"#).as_bytes()).is_empty());
        assert_eq!(
            codes(format!(r#"{{"{a}":1,"{b}":2,"{a}":3}}"#).as_bytes()),
            [(ErrorCode::DuplicateKey, format!("/{a}"))]
        );
    }

    #[test]
    fn the_parser_is_reusable_across_lines() {
        let mut parser = JsonParser::new();
        let mut errors = Vec::new();
        for i in 0..3 {
            let line = format!("{{\"i\":{i}}}");
            let doc = parser.parse(line.as_bytes(), &mut errors).unwrap();
            assert_eq!(doc.root().get("i").unwrap().as_integer(), Some(i));
        }
        assert!(parser.parse(b"[", &mut errors).is_none());
        assert!(parser.parse(b"{\"x\":1e999}", &mut errors).is_some());
        let doc = parser.parse(b"{\"x\":5}", &mut errors).unwrap();
        assert_eq!(doc.root().get("x").unwrap().as_integer(), Some(5));
    }
}
