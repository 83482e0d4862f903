//! `filter`: the valid lines that match every predicate, byte-identical (docs/cli.md#filter).

use memchr::memmem;

use super::fields::{error_type, text};
use crate::envelope::formats::parse_timestamp;
use crate::envelope::{EnvelopeRules, Top, Verdict};
use crate::json::{JsonParser, Value};
use crate::pipeline::{Action, ChunkOutput, LineOperation, SourceLine};

/// A glob of `*` (any run of characters, the empty one included) and `?` (exactly one
/// character), matched case-sensitively against the whole value.
///
/// ```
/// use rdq_envelope::ops::Glob;
/// assert!(Glob::new("billing.*").matches("billing.invoices"));
/// assert!(Glob::new("java.*Time?utException").matches("java.net.SocketTimeoutException"));
/// assert!(!Glob::new("billing").matches("billing.invoices"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob(Vec<char>);

impl Glob {
    /// The glob `pattern`.
    pub fn new(pattern: &str) -> Self {
        Glob(pattern.chars().collect())
    }

    /// Whether `text` matches as a whole. Linear in practice: only the last `*` is retried.
    /// Walks `text` in place (no allocation per line).
    pub fn matches(&self, text: &str) -> bool {
        let p: &[char] = &self.0;
        // `ti` is a byte index on a char boundary of `text`.
        let (mut pi, mut ti) = (0, 0);
        let mut star: Option<(usize, usize)> = None;
        let char_at = |i: usize| text[i..].chars().next();
        while let Some(c) = char_at(ti) {
            match p.get(pi) {
                Some('*') => {
                    star = Some((pi, ti));
                    pi += 1;
                }
                Some(&want) if want == '?' || want == c => {
                    pi += 1;
                    ti += c.len_utf8();
                }
                _ => match star {
                    Some((sp, st)) => {
                        // Let the last `*` swallow one more character and try again.
                        let swallowed = char_at(st).map_or(1, char::len_utf8);
                        pi = sp + 1;
                        ti = st + swallowed;
                        star = Some((sp, ti));
                    }
                    None => return false,
                },
            }
        }
        p[pi.min(p.len())..].iter().all(|&c| c == '*')
    }
}

/// What a line must match; each list is an OR within itself, and all must hold. Start from
/// [`Predicates::default`] (every list empty, every bound open: everything matches) and set
/// the ones wanted.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Predicates {
    /// `--queue`.
    pub queue: Vec<Glob>,
    /// `--handler`.
    pub handler: Vec<Glob>,
    /// `--status`.
    pub status: Vec<String>,
    /// `--error-type`: any attempt's `error.type`.
    pub error_type: Vec<Glob>,
    /// `--last-error-type`: the last attempt's `error.type`.
    pub last_error_type: Vec<Glob>,
    /// `--outcome`: the last attempt's outcome.
    pub outcome: Vec<String>,
    /// `--since`, in milliseconds: `created_at` at or after it.
    pub since: Option<i64>,
    /// `--until`, in milliseconds: `created_at` before it.
    pub until: Option<i64>,
    /// `--id`.
    pub id: Vec<String>,
    /// `--header KEY=GLOB`.
    pub header: Vec<(String, Glob)>,
    /// `--min-attempts`, `--max-attempts`: the number of attempt records.
    pub min_attempts: Option<u64>,
    /// See `min_attempts`.
    pub max_attempts: Option<u64>,
    /// `--min-redrives`.
    pub min_redrives: Option<u64>,
    /// `--payload-contains`, on the decoded payload.
    pub payload_contains: Vec<String>,
}

impl Predicates {
    /// Whether a valid envelope of `version` matches. Each predicate reads only what it needs,
    /// from one walk over the envelope's members, and only the members its version defines.
    fn matches(&self, root: Value<'_>, version: u32, payload: &mut Vec<u8>) -> bool {
        let f = Top::of(root);
        let any = |globs: &[Glob], value: Option<Value<'_>>| {
            globs.is_empty() || globs.iter().any(|g| g.matches(text(value)))
        };
        let one_of = |wanted: &[String], value: Option<Value<'_>>| {
            wanted.is_empty() || wanted.iter().any(|w| w == text(value))
        };
        if !any(&self.queue, f.queue)
            || !any(&self.handler, f.handler_ref)
            || !one_of(&self.status, f.status)
            || !one_of(&self.id, f.id)
        {
            return false;
        }
        if self.since.is_some() || self.until.is_some() {
            let created = parse_timestamp(text(f.created_at)).unwrap_or_default();
            if self.since.is_some_and(|t| created < t) || self.until.is_some_and(|t| created >= t) {
                return false;
            }
        }
        let count = f.attempts.map_or(0, |a| a.len()) as u64;
        if self.min_attempts.is_some_and(|n| count < n)
            || self.max_attempts.is_some_and(|n| count > n)
        {
            return false;
        }
        if let Some(min) = self.min_redrives {
            let redrives = f.redrive_count.and_then(|v| v.as_integer()).unwrap_or(0);
            if redrives < i128::from(min) {
                return false;
            }
        }
        let attempts = || f.attempts.into_iter().flat_map(|a| a.elements());
        if !self.error_type.is_empty() {
            let found = attempts()
                .filter_map(error_type)
                .any(|t| self.error_type.iter().any(|g| g.matches(t)));
            if !found {
                return false;
            }
        }
        if !self.last_error_type.is_empty() || !self.outcome.is_empty() {
            let last = f.attempts.and_then(|a| a.last_element());
            if !self.last_error_type.is_empty() {
                let last_type = last.and_then(error_type);
                if !last_type.is_some_and(|t| self.last_error_type.iter().any(|g| g.matches(t))) {
                    return false;
                }
            }
            if !self.outcome.is_empty() {
                let outcome = last.and_then(|a| a.get("outcome")).and_then(|o| o.as_str());
                if !outcome.is_some_and(|o| self.outcome.iter().any(|want| want == o)) {
                    return false;
                }
            }
        }
        for (key, glob) in &self.header {
            if !header_matches(&f, version, key, glob) {
                return false;
            }
        }
        if !self.payload_contains.is_empty() {
            // A claim-checked envelope (v2 `payload_ref`) has no `payload`: its payload is
            // elsewhere, so it contains nothing that can be seen (not even "").
            let Some(encoded) = f.payload.and_then(|p| p.as_str()) else {
                return false;
            };
            payload.clear();
            if base64_simd::STANDARD
                .decode_append(encoded, payload)
                .is_err()
            {
                return false;
            }
            let found = self
                .payload_contains
                .iter()
                .any(|needle| memmem::find(payload, needle.as_bytes()).is_some());
            if !found {
                return false;
            }
        }
        true
    }
}

/// A header's value matches; `rdq.source` and `rdq.submitted_by` also match their moved
/// values in a v2 `origin` (in v1, `origin` is an unknown field like any other).
fn header_matches(f: &Top<'_>, version: u32, key: &str, glob: &Glob) -> bool {
    let in_headers = f
        .headers
        .and_then(|h| h.get(key))
        .and_then(|v| v.as_str())
        .is_some_and(|v| glob.matches(v));
    let moved = match key {
        _ if version < 2 => None,
        "rdq.source" => Some("source"),
        "rdq.submitted_by" => Some("submitted_by"),
        _ => None,
    };
    in_headers
        || moved.is_some_and(|m| {
            f.origin
                .and_then(|o| o.get(m))
                .and_then(|v| v.as_str())
                .is_some_and(|v| glob.matches(v))
        })
}

/// The `filter` operation: matching lines (byte-identical) to the primary output, or only
/// counted with `count_only`; invalid lines to the rejects.
///
/// Built with [`FilterOp::new`]; the fields it leaves at their defaults can be set after.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FilterOp {
    /// The rules every line is judged by first.
    pub rules: EnvelopeRules,
    /// What a line must match.
    pub predicates: Predicates,
    /// Emit the lines that do not match instead (`--invert`).
    pub invert: bool,
    /// Count the matches without writing them (`--count`).
    pub count_only: bool,
    /// Write reject records.
    pub write_rejects: bool,
    /// The reader cap, for the `LINE_TOO_LONG` message.
    pub max_line_bytes: usize,
}

/// A worker's reusable state.
#[derive(Debug, Default)]
pub struct FilterWorker {
    parser: JsonParser,
    verdict: Verdict,
    payload: Vec<u8>,
}

impl FilterOp {
    /// The valid lines that match `predicates`, with these defaults: the matches are written
    /// (`invert` and `count_only` off), no reject records (`write_rejects` off), and the
    /// reader's default cap as `max_line_bytes`.
    pub fn new(rules: EnvelopeRules, predicates: Predicates) -> Self {
        FilterOp {
            rules,
            predicates,
            invert: false,
            count_only: false,
            write_rejects: false,
            max_line_bytes: crate::framing::DEFAULT_MAX_LINE_BYTES,
        }
    }
}

impl LineOperation for FilterOp {
    type Worker = FilterWorker;
    type Tally = ();

    fn worker(&self) -> Self::Worker {
        FilterWorker::default()
    }

    fn apply(&self, w: &mut FilterWorker, line: SourceLine<'_>, out: &mut ChunkOutput) -> Action {
        let SourceLine { source, line } = line;
        let doc = super::judge(
            &self.rules,
            &mut w.parser,
            &line,
            self.max_line_bytes,
            &mut w.verdict,
        );
        match doc {
            Some(doc) if w.verdict.is_valid() => {
                // A valid line has a supported version.
                let version = w.verdict.version.unwrap_or(1);
                let matched =
                    self.predicates.matches(doc.root(), version, &mut w.payload) != self.invert;
                // Counted on every valid line, kept or filtered out (the summary's rule).
                out.summary.tally_warnings(&w.verdict.warnings);
                if !matched {
                    return Action::FilterOut;
                }
                if !self.count_only {
                    out.primary.extend_from_slice(line.content);
                    out.primary.push(b'\n');
                }
                Action::Emit
            }
            _ => {
                let at = super::position(source, &line);
                super::reject(&w.verdict, at, &line, out, self.write_rejects)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Glob;
    use proptest::prelude::*;

    /// The definition, by recursion over characters: slow, obviously right.
    fn reference(p: &[char], t: &[char]) -> bool {
        match p.split_first() {
            None => t.is_empty(),
            Some(('*', rest)) => (0..=t.len()).any(|skip| reference(rest, &t[skip..])),
            Some((&c, rest)) => {
                t.first().is_some_and(|&tc| c == '?' || c == tc) && reference(rest, &t[1..])
            }
        }
    }

    proptest! {
        #[test]
        fn globs_match_their_definition(p in "[ab*?é]{0,8}", t in "[abé]{0,10}") {
            let want = reference(&p.chars().collect::<Vec<_>>(), &t.chars().collect::<Vec<_>>());
            prop_assert_eq!(Glob::new(&p).matches(&t), want);
        }
    }

    #[test]
    fn globs() {
        let cases = [
            ("", "", true),
            ("", "a", false),
            ("*", "", true),
            ("*", "anything at all", true),
            ("?", "é", true),
            ("?", "", false),
            ("a*b*c", "axxbyyc", true),
            ("a*b*c", "axxbyy", false),
            ("*ab", "aab", true),
            ("a?c", "abc", true),
            ("a?c", "ac", false),
            ("A*", "abc", false),
            ("**x", "yx", true),
        ];
        for (pattern, text, want) in cases {
            assert_eq!(
                Glob::new(pattern).matches(text),
                want,
                "{pattern:?} ~ {text:?}"
            );
        }
    }
}
