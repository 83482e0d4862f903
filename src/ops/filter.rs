//! `filter`: the valid lines that match every predicate, byte-identical (docs/cli.md#filter).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use memchr::memmem;
use regex::Regex;
use serde::Serialize;

use super::fields::EnvelopeView;
use super::fingerprint::{Fingerprint, Fingerprinter};
use super::jq::{EvalSlot, EvalWatch, Where, WhereVerdict};
use super::output::{self, PRIMARY};
use crate::envelope::{spans, Checker, EnvelopeRef, EnvelopeRules};
use crate::framing::Line;
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
pub struct Glob {
    pattern: Vec<char>,
    /// Without a `?`, the literal runs between the `*`s (one run: no `*` at all), matched on
    /// bytes: the usual `java.net.*` is then a prefix comparison.
    runs: Option<Vec<String>>,
}

impl Glob {
    /// The glob `pattern`.
    pub fn new(pattern: &str) -> Self {
        Glob {
            pattern: pattern.chars().collect(),
            runs: (!pattern.contains('?')).then(|| pattern.split('*').map(str::to_owned).collect()),
        }
    }

    /// Whether `text` matches as a whole. Linear in practice: only the last `*` is retried.
    /// Walks `text` in place (no allocation per line).
    pub fn matches(&self, text: &str) -> bool {
        match &self.runs {
            Some(runs) => matches_runs(runs, text.as_bytes()),
            None => self.matches_chars(text),
        }
    }

    fn matches_chars(&self, text: &str) -> bool {
        let p: &[char] = &self.pattern;
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

/// A glob of literal `runs` joined by `*`s, against `text`: the first run begins it, the last
/// ends it, and the runs between are found in order, each at its leftmost place (a later
/// place leaves less room for the rest, never more). On bytes: UTF-8 text and runs match
/// only on character boundaries.
fn matches_runs(runs: &[String], text: &[u8]) -> bool {
    let [first, middle @ .., last] = runs else {
        return text == runs.first().map_or(&b""[..], |run| run.as_bytes());
    };
    let (first, last) = (first.as_bytes(), last.as_bytes());
    if text.len() < first.len() + last.len() || !text.starts_with(first) || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for run in middle {
        match memmem::find(rest, run.as_bytes()) {
            Some(at) => rest = &rest[at + run.len()..],
            None => return false,
        }
    }
    true
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
    /// `--fingerprint`: the last error's fingerprint.
    pub fingerprint: Vec<Fingerprint>,
    /// `--error-message`: some attempt's decoded `error.message` matches (unanchored).
    pub error_message: Vec<Regex>,
    /// `--failed-since`, in milliseconds: the last attempt's `finished_at` at or after it.
    pub failed_since: Option<i64>,
    /// `--failed-until`, in milliseconds: the last attempt's `finished_at` before it.
    pub failed_until: Option<i64>,
    /// `--where`: a jq expression, run only on the lines every other predicate kept.
    pub where_expr: Option<Where>,
}

/// Buffers a worker reuses from line to line for the predicates that decode text.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    payload: Vec<u8>,
    decoded: String,
    fingerprinter: Fingerprinter,
}

impl Predicates {
    /// Whether a valid envelope of `version` matches. Each predicate reads only what it needs,
    /// and only the members its version defines; `envelope` reads them from the tape or from
    /// the single pass, the same way.
    pub(crate) fn matches<'a>(
        &self,
        envelope: &EnvelopeRef<'a>,
        version: u32,
        scratch: &mut Scratch,
    ) -> bool {
        let any = |globs: &[Glob], value: &str| {
            globs.is_empty() || globs.iter().any(|g| g.matches(value))
        };
        let one_of =
            |wanted: &[String], value: &str| wanted.is_empty() || wanted.iter().any(|w| w == value);
        if !any(&self.queue, envelope.queue())
            || !any(&self.handler, envelope.handler_ref())
            || !one_of(&self.status, envelope.status().as_str())
            || !one_of(&self.id, envelope.id())
        {
            return false;
        }
        if self.since.is_some() || self.until.is_some() {
            let created = envelope.created_ms().unwrap_or_default();
            if self.since.is_some_and(|t| created < t) || self.until.is_some_and(|t| created >= t) {
                return false;
            }
        }
        let count = envelope.attempt_records() as u64;
        if self.min_attempts.is_some_and(|n| count < n)
            || self.max_attempts.is_some_and(|n| count > n)
        {
            return false;
        }
        if self
            .min_redrives
            .is_some_and(|min| envelope.redrive_count() < min)
        {
            return false;
        }
        if !self.error_type.is_empty() {
            let found = envelope
                .error_types()
                .any(|t| self.error_type.iter().any(|g| g.matches(t)));
            if !found {
                return false;
            }
        }
        if !self.last_error_type.is_empty() || !self.outcome.is_empty() {
            let (last_type, outcome) = envelope.last_attempt_facts().unwrap_or((None, None));
            if !self.last_error_type.is_empty()
                && !last_type.is_some_and(|t| self.last_error_type.iter().any(|g| g.matches(t)))
            {
                return false;
            }
            if !self.outcome.is_empty()
                && !outcome.is_some_and(|o| self.outcome.iter().any(|want| want == o))
            {
                return false;
            }
        }
        for (key, glob) in &self.header {
            if !header_matches(envelope, version, key, glob) {
                return false;
            }
        }
        if !self.payload_contains.is_empty() {
            // A claim-checked envelope (v2 `payload_ref`) has no `payload`: its payload is
            // elsewhere, so it contains nothing that can be seen (not even "").
            let Some(encoded) = envelope.payload() else {
                return false;
            };
            let payload = &mut scratch.payload;
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
        if self.failed_since.is_some() || self.failed_until.is_some() {
            let Some(finished) = envelope.last_finished_at() else {
                return false;
            };
            if self.failed_since.is_some_and(|t| finished < t)
                || self.failed_until.is_some_and(|t| finished >= t)
            {
                return false;
            }
        }
        if !self.error_message.is_empty() {
            let found = envelope.errors().any(|e| {
                let message = e.message.decode(&mut scratch.decoded);
                self.error_message.iter().any(|r| r.is_match(message))
            });
            if !found {
                return false;
            }
        }
        if !self.fingerprint.is_empty() {
            let Some((error, _)) = envelope.last_error() else {
                return false;
            };
            let (fingerprint, _) = scratch.fingerprinter.fingerprint(error.kind, error.message);
            if !self.fingerprint.contains(&fingerprint) {
                return false;
            }
        }
        true
    }
}

/// A header's value matches; `rdq.source` and `rdq.submitted_by` also match their moved
/// values in a v2 `origin` (in v1, `origin` is an unknown field like any other).
fn header_matches<'a>(envelope: &EnvelopeRef<'a>, version: u32, key: &str, glob: &Glob) -> bool {
    let in_headers = envelope.header_text(key).is_some_and(|v| glob.matches(v));
    let moved = match key {
        _ if version < 2 => None,
        "rdq.source" => Some("source"),
        "rdq.submitted_by" => Some("submitted_by"),
        _ => None,
    };
    in_headers || moved.is_some_and(|m| envelope.origin(m).is_some_and(|v| glob.matches(v)))
}

/// The `filter` operation: matching lines (byte-identical) to the primary output, or only
/// counted with `count_only`; invalid lines to the rejects.
///
/// Built with [`FilterOp::new`]; the fields it leaves at their defaults can be set after.
#[derive(Debug)]
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
    /// `--limit`: emit at most this many lines, the first ones, and stop reading soon after.
    /// The pipeline's writer may be handed a few lines past the limit (workers decide ahead
    /// of it): write the output through [`LimitedLines`] and settle the books with
    /// [`FilterOp::settle`].
    pub limit: Option<u64>,
    /// Where each worker is in its `--where` evaluations, for a watchdog (`None`: unwatched).
    pub watch: Option<Arc<EvalWatch>>,
    /// Lines emitted by the chunks merged so far (in input order), under a limit. Not a book
    /// (those are the run's [`FilterTotal`]) but a signal from the writer to the workers, which
    /// read it while the run goes on to stop at the limit without waiting for the writer; the
    /// run's total resets it as the run starts ([`LineOperation::total`]).
    merged: AtomicU64,
}

impl Clone for FilterOp {
    fn clone(&self) -> Self {
        let mut op = FilterOp::new(self.rules.clone(), self.predicates.clone());
        op.invert = self.invert;
        op.count_only = self.count_only;
        op.write_rejects = self.write_rejects;
        op.max_line_bytes = self.max_line_bytes;
        op.limit = self.limit;
        op.watch = self.watch.clone();
        op
    }
}

/// What one chunk adds up beside the books.
#[derive(Debug, Default)]
pub struct FilterTally {
    /// Lines emitted.
    emitted: u64,
    /// Lines on which `--where` failed.
    where_errors: u64,
    /// A match past the limit was seen.
    cut: bool,
}

/// What a run adds up beside the books, in the chunks merged so far: read it with
/// [`FilterOp::settle`] once the run is over.
#[derive(Debug, Default)]
pub struct FilterTotal {
    /// Lines on which `--where` failed.
    where_errors: u64,
    /// A worker saw a match past the limit.
    cut: bool,
}

/// What `filter` adds to the run's summary (docs/cli.md#filter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct FilterNotes {
    /// Lines on which `--where` failed (a type error): not kept. `None` without `--where`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub where_errors: Option<u64>,
    /// `--limit`: whether matches were left out (the run stopped early, or its output was cut).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit_reached: Option<bool>,
}

/// A worker's reusable state.
#[derive(Debug)]
pub struct FilterWorker {
    checker: Checker,
    /// Where each tape node lies in the line, for `--where` on a line judged on its tape.
    nodes: Vec<(usize, usize)>,
    scratch: Scratch,
    /// This worker's slot in [`FilterOp::watch`].
    slot: Option<Arc<EvalSlot>>,
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
            limit: None,
            watch: None,
            merged: AtomicU64::new(0),
        }
    }

    /// Settles the books after a run, from its total: with a limit, the lines emitted past it
    /// (which [`LimitedLines`] kept out of the output) count as filtered out. Returns what the
    /// summary adds.
    pub fn settle(&self, total: &FilterTotal, books: &mut crate::pipeline::Summary) -> FilterNotes {
        let mut notes = FilterNotes {
            where_errors: None,
            limit_reached: None,
        };
        if self.predicates.where_expr.is_some() {
            notes.where_errors = Some(total.where_errors);
        }
        if let Some(limit) = self.limit {
            let past = books.emitted.saturating_sub(limit);
            books.emitted -= past;
            books.filtered_out += past;
            notes.limit_reached = Some(past > 0 || total.cut);
        }
        notes
    }
}

/// Runs `eval` on line `number` of `source`, noted in `slot` while it runs.
fn watched<T>(slot: Option<&EvalSlot>, source: &str, number: u64, eval: impl FnOnce() -> T) -> T {
    let Some(slot) = slot else {
        return eval();
    };
    slot.begin(source, number);
    let verdict = eval();
    slot.end();
    verdict
}

/// A writer that passes on the first lines it is given and drops the rest: `filter`'s
/// primary output under a `--limit` ([`FilterOp::limit`]).
#[derive(Debug)]
pub struct LimitedLines<W> {
    out: W,
    left: u64,
}

impl<W> LimitedLines<W> {
    /// `out`, taking at most `lines` lines (every line with `None`).
    pub fn new(out: W, lines: Option<u64>) -> Self {
        LimitedLines {
            out,
            left: lines.unwrap_or(u64::MAX),
        }
    }
}

impl<W: std::io::Write> std::io::Write for LimitedLines<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.left == u64::MAX {
            return self.out.write(buf);
        }
        let mut end = 0;
        while self.left > 0 && end < buf.len() {
            match memchr::memchr(b'\n', &buf[end..]) {
                Some(at) => {
                    end += at + 1;
                    self.left -= 1;
                }
                None => end = buf.len(),
            }
        }
        self.out.write_all(&buf[..end])?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

impl FilterOp {
    /// Emits a valid line whose cheap predicates gave `matches` (then `--where` decides;
    /// inverted with `invert`), or filters it out.
    fn keep(
        &self,
        matches: bool,
        (source, line): (&str, &Line<'_>),
        slot: Option<&EvalSlot>,
        out: &mut ChunkOutput<FilterTally>,
        eval: impl FnOnce(&Where) -> WhereVerdict,
    ) -> Action {
        let matches = matches
            && match &self.predicates.where_expr {
                None => true,
                Some(expr) => match watched(slot, source, line.number, || eval(expr)) {
                    WhereVerdict::Keep => true,
                    WhereVerdict::Drop => false,
                    WhereVerdict::Error => {
                        out.tally.where_errors += 1;
                        false
                    }
                },
            };
        if matches == self.invert {
            return Action::FilterOut;
        }
        if let Some(limit) = self.limit {
            // The chunks merged so far come before this one: when they and this chunk's
            // matches reach the limit, this match is certainly past it, and so is the rest of
            // the input. (Otherwise it may still be: the writer cuts the output.)
            if self.merged.load(Ordering::Relaxed) + out.tally.emitted >= limit {
                out.tally.cut = true;
                out.stop = true;
                return Action::FilterOut;
            }
            out.tally.emitted += 1;
        }
        if !self.count_only {
            out.buffer(PRIMARY).extend_from_slice(line.content);
            out.buffer(PRIMARY).push(b'\n');
        }
        Action::Emit
    }
}

impl LineOperation for FilterOp {
    // The matches, the rejects.
    const OUTPUTS: usize = output::REJECTS + 1;
    type Worker = FilterWorker;
    type Tally = FilterTally;
    type Total = FilterTotal;

    fn worker(&self) -> Self::Worker {
        // The predicates compare texts: a line whose strings hold escapes is read from its
        // tape, which decodes them.
        let mut checker = super::checker(&self.rules, self.max_line_bytes).with_plain_texts();
        let where_members = self.predicates.where_expr.as_ref();
        if where_members.is_some_and(|w| w.members_read().is_some()) {
            // `--where` builds the members it reads from where the single pass found them.
            checker.record_shape();
        }
        FilterWorker {
            checker,
            nodes: Vec::new(),
            scratch: Scratch::default(),
            slot: self.watch.as_ref().map(|watch| watch.slot()),
        }
    }

    fn worker_stack_bytes(&self) -> Option<usize> {
        self.predicates
            .where_expr
            .as_ref()
            .map(|_| super::jq::EVAL_STACK_BYTES)
    }

    fn total(&self) -> FilterTotal {
        self.merged.store(0, Ordering::Relaxed);
        FilterTotal::default()
    }

    fn merge(&self, total: &mut FilterTotal, tally: &mut FilterTally) {
        let FilterTally {
            emitted,
            where_errors,
            cut,
        } = std::mem::take(tally);
        self.merged.fetch_add(emitted, Ordering::Relaxed);
        total.where_errors += where_errors;
        total.cut |= cut;
    }

    fn apply(
        &self,
        w: &mut FilterWorker,
        line: SourceLine<'_>,
        out: &mut ChunkOutput<FilterTally>,
    ) -> Action {
        let SourceLine { source, line } = line;
        let checked = w.checker.check_line(&line);
        let Some(envelope) = checked.envelope() else {
            let at = super::position(source, &line);
            return super::reject(checked.verdict(), at, &line, out, self.write_rejects);
        };
        // Counted on every valid line, kept or filtered out (the summary's rule).
        out.summary.tally_warnings(envelope.warnings());
        let version = envelope.version();
        let matches = self.predicates.matches(&envelope, version, &mut w.scratch);
        let nodes = &mut w.nodes;
        // The members the expression reads, from where the single pass or the parser found
        // them (an expression that reads the whole envelope parses the line itself).
        let eval = |expr: &Where| {
            let shape = checked.single_pass().and_then(|(_, single)| single.shape());
            match (shape, checked.document()) {
                _ if expr.members_read().is_none() => expr.eval(line.content),
                (Some(shape), _) => {
                    expr.eval_members(line.content, spans::texts(line.content, &shape.top))
                }
                (None, Some(doc)) => {
                    expr.eval_members(line.content, spans::member_texts(doc, line.content, nodes))
                }
                (None, None) => expr.eval(line.content),
            }
        };
        self.keep(matches, (source, &line), w.slot.as_deref(), out, eval)
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

        #[test]
        fn globs_of_stars_alone_match_their_definition(p in "[ab*é]{0,8}", t in "[abé]{0,12}") {
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
            ("a*a", "a", false),
            ("ab*ba", "aba", false),
            ("java.net.*", "java.net.SocketTimeoutException", true),
            ("java.net.*", "java.lang.IllegalStateException", false),
            ("*Exception", "java.net.SocketTimeoutException", true),
            ("*.net.*", "java.net.SocketTimeoutException", true),
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

#[cfg(test)]
mod single_pass_tests {
    use super::*;
    use crate::envelope::SinglePass;
    use crate::json::JsonParser;
    use crate::RuleOptions;

    /// Predicates of every kind, built from the envelope's own values (so that some match) and
    /// from values it does not have.
    fn predicates_for(view: &EnvelopeRef<'_>) -> Vec<Predicates> {
        let mut all = Vec::new();
        let mut add = |f: &dyn Fn(&mut Predicates)| {
            let mut p = Predicates::default();
            f(&mut p);
            all.push(p);
        };
        let (queue, status, id) = (view.queue(), view.status(), view.id());
        add(&|p| p.queue = vec![Glob::new(queue)]);
        add(&|p| p.queue = vec![Glob::new("billing.*")]);
        add(&|p| p.handler = vec![Glob::new("*.*")]);
        add(&|p| p.status = vec![status.as_str().to_owned()]);
        add(&|p| p.status = vec!["DEAD".into(), "PENDING".into()]);
        add(&|p| p.id = vec![id.to_owned()]);
        add(&|p| p.since = Some(1_714_564_900_000));
        add(&|p| p.until = Some(1_714_564_900_000));
        add(&|p| p.min_attempts = Some(2));
        add(&|p| p.max_attempts = Some(1));
        add(&|p| p.min_redrives = Some(1));
        for t in view.error_types() {
            add(&|p| p.error_type = vec![Glob::new(t)]);
        }
        add(&|p| p.error_type = vec![Glob::new("java.net.*")]);
        if let Some((last_type, outcome)) = view.last_attempt_facts() {
            if let Some(t) = last_type {
                add(&|p| p.last_error_type = vec![Glob::new(t)]);
            }
            if let Some(o) = outcome {
                add(&|p| p.outcome = vec![o.to_owned()]);
            }
        }
        add(&|p| p.outcome = vec!["SUCCESS".into()]);
        for key in [
            "rdq.source",
            "rdq.submitted_by",
            "tenant",
            "traceparent",
            "absent",
        ] {
            let value = view.header_text(key).unwrap_or("x").to_owned();
            add(&|p| p.header = vec![(key.to_owned(), Glob::new(&value))]);
            add(&|p| p.header = vec![(key.to_owned(), Glob::new("*"))]);
        }
        if let Some((error, _)) = view.last_error() {
            let message = error.message.decode(&mut String::new()).to_owned();
            let fingerprint = Fingerprint::of(error.kind, &message);
            add(&|p| p.fingerprint = vec![fingerprint]);
            let word = message.split(' ').next().unwrap_or_default();
            add(&|p| p.error_message = vec![Regex::new(&regex::escape(word)).unwrap()]);
        }
        add(&|p| p.error_message = vec![Regex::new("\"[a-z.]+\"").unwrap()]);
        add(&|p| p.error_message = vec![Regex::new("Zoë|東京|\\n at").unwrap()]);
        add(&|p| p.failed_since = Some(1_714_564_900_000));
        add(&|p| p.failed_until = Some(1_714_564_900_000));
        add(&|p| p.payload_contains = vec!["\"".into()]);
        add(&|p| p.payload_contains = vec!["items".into(), "nothing-like-this".into()]);
        all
    }

    /// What the triage predicates read of an envelope: every error (its message decoded), the
    /// last error and when it was seen, the last attempt's end.
    type Facts = (Vec<(String, String)>, Option<(String, i64)>, Option<i64>);
    fn facts(view: &EnvelopeRef<'_>) -> Facts {
        let mut scratch = String::new();
        let errors = view
            .errors()
            .map(|e| (e.kind.to_owned(), e.message.decode(&mut scratch).to_owned()))
            .collect();
        let last = view
            .last_error()
            .map(|(e, seen)| (e.message.decode(&mut scratch).to_owned(), seen));
        (errors, last, view.last_finished_at())
    }

    /// `--where` gives every line the same verdict from the members the single pass found
    /// as from the members the parser finds (and as from the whole line).
    #[test]
    fn where_reads_the_same_members_from_the_single_pass_and_the_parser() {
        let rules = EnvelopeRules::new(RuleOptions::default()).unwrap();
        let mut single = SinglePass::default();
        single.record_shape();
        let exprs = [
            r#".status == "DEAD" and .attempt_count > 2"#,
            r#".headers.tenant // "none" | startswith("a")"#,
            r#"(.attempts | last | .error.message // "") | test("time")"#,
            ".origin.source == null or .redrive_count > 0",
        ]
        .map(|e| Where::new(e).unwrap());
        let mut compared = 0;
        for version in [1, 2] {
            for line in crate::generate::test_lines(22, version, 0.1, 600) {
                if rules.clean(&mut single, &line).is_none() {
                    continue;
                }
                let shape = single.shape().unwrap();
                for expr in &exprs {
                    assert!(expr.members_read().is_some());
                    let fast = expr.eval_members(&line, spans::texts(&line, &shape.top));
                    assert_eq!(fast, expr.eval(&line), "{}", String::from_utf8_lossy(&line));
                    assert_eq!(fast, expr.eval_whole(&line));
                    compared += 1;
                }
            }
        }
        assert!(compared > 3000, "{compared}");
    }

    /// On every line the single pass reads, every predicate matches as it does on the tape.
    #[test]
    fn predicates_match_the_same_on_the_ranges_and_on_the_tape() {
        let rules = EnvelopeRules::new(RuleOptions::default()).unwrap();
        let mut checker = Checker::new(rules).with_plain_texts();
        let (mut parser, mut scratch) = (JsonParser::new(), Scratch::default());
        let (mut compared, mut lines) = (0, 0);
        for version in [1, 2] {
            for line in crate::generate::test_lines(21, version, 0.1, 1500) {
                let checked = checker.check(&line);
                if checked.document().is_some() || !checked.is_valid() {
                    continue;
                }
                let ranges = checked.envelope().unwrap();
                lines += 1;
                let doc = parser.parse(&line, &mut Vec::new()).unwrap();
                let tape = EnvelopeRef::on_tape(doc.root(), version);
                assert_eq!(
                    facts(&tape),
                    facts(&ranges),
                    "{}",
                    String::from_utf8_lossy(&line)
                );
                for p in predicates_for(&tape) {
                    let on_tape = p.matches(&tape, version, &mut scratch);
                    let on_ranges = p.matches(&ranges, version, &mut scratch);
                    assert_eq!(
                        on_tape,
                        on_ranges,
                        "{p:?}\n{}",
                        String::from_utf8_lossy(&line)
                    );
                    compared += 1;
                }
            }
        }
        assert!(
            lines > 2000 && compared > 50_000,
            "{lines} lines, {compared} comparisons"
        );
    }
}
