//! The single pass: every rule of docs/envelope.md checked in one walk over a line's structural
//! index (`json::stage1`), without building a tape.
//!
//! It answers one question, "is this line a valid envelope with nothing to warn about?", and
//! answers "yes" only when the tape path ([`super::EnvelopeRules::check_line`]) would find no
//! error and no warning. Anything else, a broken rule or only something unusual (an escape in
//! a field whose value a rule reads, a surrogate escape, a number a rule would have to read
//! beyond 18 digits), is "not sure", and the caller runs the tape path, which writes the
//! diagnostics. So messages, codes and pointers come from one place, and this walk only has
//! to be right about the lines it accepts; the differential tests hold it to that.
//!
//! Each field is read where the walk meets it, in any key order; the rules that depend on the
//! version or on several fields are decided once the object is closed, by asking the functions
//! of `laws.rs` that the tape path asks too.

use super::attempts::{MESSAGE_LIMIT, STACK_LIMIT};
use super::formats;
use super::laws::{self, Duration, ErrorObject, History, Numbering, Outcome, Stamp, Status};
use super::options::RuleOptions;
use super::shape::{moved_header, removal, AttemptShape, MemberSpan, Shape};
use crate::json::stage1::{Classifier, Index};
use crate::json::MAX_DEPTH;

/// A worker's reusable state for the single pass: the structural index, the keys of the
/// objects being walked (for duplicate keys) and the fields read. No allocation once grown.
#[derive(Debug)]
pub(crate) struct SinglePass {
    index: Index,
    keys: Vec<(u32, u32)>,
    fields: Fields,
    /// Where a migration's edits go, recorded when asked for ([`SinglePass::record_shape`]).
    shape: Option<Shape>,
    classifier: Classifier,
}

/// A byte range of the line: a string's content between its quotes.
pub(crate) type Range32 = (u32, u32);

/// What the DLQ commands read of an accepted line, as byte ranges of its strings (`filter`
/// through `ops::fields`). Valid only after [`SinglePass::check`] accepted the line.
#[derive(Debug, Default)]
pub(crate) struct Fields {
    pub id: Range32,
    pub queue: Range32,
    pub handler_ref: Range32,
    pub status: Range32,
    pub created_at: Range32,
    /// `created_at` in milliseconds.
    pub created: i64,
    /// `handler_version`, when a string.
    pub handler_version: Option<Range32>,
    pub payload_content_type: Range32,
    /// `attempt_count`.
    pub attempt_count: u64,
    /// `next_attempt_at` and `lease_expires_at`, when not `null`.
    pub next_attempt_at: Option<Range32>,
    pub lease_expires_at: Option<Range32>,
    /// `payload` (absent under a claim check).
    pub payload: Option<Range32>,
    /// `origin.source` and `origin.submitted_by` when they are strings.
    pub origin_source: Option<Range32>,
    pub origin_submitted_by: Option<Range32>,
    /// Every header's key and value.
    pub headers: Vec<(Range32, Range32)>,
    pub attempts: Vec<AttemptFields>,
    /// `redrive_count`.
    pub redrive_count: u64,
    /// No string above holds an escape: each range's bytes are its text.
    pub plain: bool,
}

/// What the DLQ commands read of one attempt.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct AttemptFields {
    /// `error.type`, when the attempt has an error.
    pub error_type: Option<Range32>,
    /// `outcome`, when not `null`.
    pub outcome: Option<Range32>,
    /// `error.message`, when the attempt has an error; its escapes are still in it when
    /// `message_escaped` (a message is read only by fingerprints and `--error-message`, which
    /// decode it: declining such lines would send most real ones to the tape).
    pub error_message: Range32,
    pub message_escaped: bool,
    /// `started_at` and `finished_at` (null in flight), in milliseconds.
    pub started: i64,
    pub finished: Option<i64>,
    /// The same two as the line's text (`export` writes the envelope's own form).
    pub started_text: Range32,
    pub finished_text: Option<Range32>,
}

impl Fields {
    fn clear(&mut self) {
        self.handler_version = None;
        self.next_attempt_at = None;
        self.lease_expires_at = None;
        self.payload = None;
        self.origin_source = None;
        self.origin_submitted_by = None;
        self.headers.clear();
        self.attempts.clear();
        self.plain = true;
    }
}

impl Default for SinglePass {
    fn default() -> Self {
        SinglePass::with_classifier(Classifier::detect())
    }
}

/// What the single pass knows of a line it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Clean {
    /// The line's `envelope_version`.
    pub version: u32,
    /// Its `status` is `DEAD`.
    pub dead: bool,
    /// Its `redrive_count`.
    pub redrive_count: u64,
    /// The bytes of its `queue` (a name: no escapes).
    pub queue: (u32, u32),
    /// How many attempt records it has, and the last one's `finished_at` in milliseconds.
    pub attempts: u64,
    pub last_finished: Option<i64>,
    /// The byte ranges of the values `redrive` rewrites: `status`, `attempt_count`,
    /// `redrive_count`, `next_attempt_at`, `lease_expires_at`, in that order.
    pub redrive_spans: [(u32, u32); 5],
}

impl SinglePass {
    /// A single pass whose stage 1 uses `classifier` (the tests compare them).
    pub(crate) fn with_classifier(classifier: Classifier) -> Self {
        SinglePass {
            index: Index::default(),
            keys: Vec::new(),
            fields: Fields::default(),
            shape: None,
            classifier,
        }
    }

    /// From now on, also records the shape a migration edits ([`SinglePass::shape`]).
    pub(crate) fn record_shape(&mut self) {
        self.shape.get_or_insert_with(Shape::default);
    }

    /// The shape of the line [`SinglePass::check`] last accepted, when recorded.
    pub(crate) fn shape(&self) -> Option<&Shape> {
        self.shape.as_ref()
    }

    /// `Some` when `line` is a valid envelope under `options` with no warning (exactly what
    /// the tape path would conclude); `None` when it is not, or when the walk is not sure.
    pub(crate) fn check(&mut self, options: &RuleOptions, line: &[u8]) -> Option<Clean> {
        if options.submit || !self.index.build(line, self.classifier) {
            return None;
        }
        self.keys.clear();
        self.fields.clear();
        if let Some(shape) = &mut self.shape {
            shape.clear();
        }
        let mut walk = Walk {
            line,
            index: &self.index,
            positions: self.index.positions(),
            at: 0,
            keys: &mut self.keys,
            fields: &mut self.fields,
            shape: self.shape.as_mut(),
            // No timestamp starts with a zero byte: the first one is parsed.
            last_day: ([0; 10], 0),
        };
        let top = walk.envelope()?;
        let queue = &line[top.queue.start as usize..top.queue.end as usize];
        if laws::over_size_limit(options, line.len(), || std::str::from_utf8(queue).ok()).is_some()
        {
            return None;
        }
        top.decide(options)
    }

    /// The fields of the line [`SinglePass::check`] last accepted.
    pub(crate) fn fields(&self) -> &Fields {
        &self.fields
    }
}

/// A string's content, between its quotes.
#[derive(Debug, Clone, Copy, Default)]
struct Span {
    start: u32,
    end: u32,
}

impl Span {
    fn len(self) -> usize {
        (self.end - self.start) as usize
    }
}

/// `origin`, as far as version 2 reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// An object whose `source` and `submitted_by`, where present, are strings.
    Good,
    /// Anything else: fine in version 1 (an unknown field), an error in version 2.
    Bad,
}

/// What the walk found at the top level, for the rules decided at the end.
#[derive(Debug, Default)]
struct Top {
    /// Which known keys were seen (bit per key): a second one is a duplicate.
    seen: u32,
    version: u32,
    id_time: Option<u64>,
    queue: Span,
    status: Option<Status>,
    attempt_count: u64,
    redrive_count: u64,
    next_attempt_at: Stamp,
    lease_expires_at: Stamp,
    created_at: i64,
    /// Where the values `redrive` rewrites are (see [`Clean::redrive_spans`]).
    redrive_spans: [(u32, u32); 5],
    /// `payload_ref` is a valid claim check (a set one that is not is declined at once).
    claim_check: bool,
    /// A header named `rdq.source` or `rdq.submitted_by` (moved to `origin` in version 2).
    moved_header: bool,
    origin: Option<Origin>,
    attempts: Attempts,
}

/// The attempts, as the walk reads them.
#[derive(Debug, Default)]
struct Attempts {
    /// What the status rules and the warnings read.
    history: History,
    /// Every attempt's `duration_ms` is what version 2 requires ([`laws::duration_v2`]).
    durations_v2: bool,
}

// The top-level keys the walk knows, as bits of `Top::seen`.
const ENVELOPE_VERSION: u32 = 1 << 0;
const ID: u32 = 1 << 1;
const QUEUE: u32 = 1 << 2;
const HANDLER_REF: u32 = 1 << 3;
const HANDLER_VERSION: u32 = 1 << 4;
const PAYLOAD: u32 = 1 << 5;
const PAYLOAD_REF: u32 = 1 << 6;
const CONTENT_TYPE: u32 = 1 << 7;
const HEADERS: u32 = 1 << 8;
const STATUS: u32 = 1 << 9;
const ATTEMPT_COUNT: u32 = 1 << 10;
const REDRIVE_COUNT: u32 = 1 << 11;
const NEXT_ATTEMPT_AT: u32 = 1 << 12;
const LEASE_EXPIRES_AT: u32 = 1 << 13;
const CREATED_AT: u32 = 1 << 14;
const ATTEMPTS: u32 = 1 << 15;
const ORIGIN: u32 = 1 << 16;

/// The keys every envelope of either version has (`payload` is required unless a version 2
/// claim check replaces it).
const REQUIRED: u32 = ENVELOPE_VERSION
    | ID
    | QUEUE
    | HANDLER_REF
    | CONTENT_TYPE
    | HEADERS
    | STATUS
    | ATTEMPT_COUNT
    | REDRIVE_COUNT
    | NEXT_ATTEMPT_AT
    | LEASE_EXPIRES_AT
    | CREATED_AT
    | ATTEMPTS;

impl Top {
    /// The rules that depend on the version or on several fields (`laws.rs`); `Some` when all
    /// hold and nothing would be warned about.
    fn decide(&self, options: &RuleOptions) -> Option<Clean> {
        let version = self.version;
        if self.seen & REQUIRED != REQUIRED
            || !laws::version_required(options.require_version, version)
            || !laws::payload_source(version, self.seen & PAYLOAD != 0, self.claim_check).is_none()
        {
            return None;
        }
        let status = self.status?;
        if !laws::status_in_version(status, version) {
            return None;
        }
        if !laws::header_in_version(self.moved_header, version)
            || (version >= 2 && (self.origin != Some(Origin::Good) || !self.attempts.durations_v2))
        {
            return None;
        }
        let h = self.attempts.history;
        let (next, lease) = (self.next_attempt_at, self.lease_expires_at);
        if !laws::status_consistency(status, next, lease, Some(h)).is_none()
            || !laws::attempt_count_within(self.attempt_count.into(), h.len)
            || !laws::restarts_within(h.restarts, self.redrive_count.into())
        {
            return None;
        }
        if options.warnings {
            let skewed = self
                .id_time
                .is_none_or(|t| laws::id_time_skew(t, self.created_at).is_some());
            if skewed || laws::created_after_start(self.created_at, h.first_started).is_some() {
                return None;
            }
        }
        Some(Clean {
            version,
            dead: status == Status::Dead,
            redrive_count: self.redrive_count,
            queue: (self.queue.start, self.queue.end),
            attempts: h.len,
            last_finished: h.last_finished.time(),
            redrive_spans: self.redrive_spans,
        })
    }
}

/// Which members of an object the walk records in the shape, when it records one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Record {
    Nothing,
    /// The envelope's, into [`Shape::top`].
    Top,
    /// An attempt's, into [`Shape::scratch`].
    Attempt,
}

/// The walk over one line's structural index.
struct Walk<'l, 'k> {
    line: &'l [u8],
    index: &'l Index,
    /// The index's positions.
    positions: &'l [u32],
    /// The next structural to read.
    at: usize,
    /// Keys of the objects being walked, for duplicates.
    keys: &'k mut Vec<(u32, u32)>,
    /// What the DLQ commands will read.
    fields: &'k mut Fields,
    /// What a migration edits, when recorded.
    shape: Option<&'k mut Shape>,
    /// The `YYYY-MM-DD` of the last timestamp read, and its day number.
    last_day: ([u8; 10], i64),
}

impl<'l> Walk<'l, '_> {
    /// The byte at the next structural (`None` at the end of the line).
    #[inline(always)]
    fn peek(&self) -> Option<u8> {
        let &position = self.positions.get(self.at)?;
        Some(self.line[position as usize])
    }

    /// Steps over the next structural when it is `byte`.
    #[inline(always)]
    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// A string: the next structurals are its opening and closing quotes.
    #[inline(always)]
    fn string(&mut self) -> Option<Span> {
        if self.peek()? != b'"' {
            return None;
        }
        let positions = self.positions;
        let (open, close) = (positions[self.at], *positions.get(self.at + 1)?);
        self.at += 2;
        Some(Span {
            start: open + 1,
            end: close,
        })
    }

    /// A string the DLQ commands read: its range, and [`Fields::plain`] cleared when it holds
    /// an escape.
    #[inline(always)]
    fn recorded_string(&mut self) -> Option<Range32> {
        let span = self.string()?;
        if self.fields.plain
            && self
                .index
                .has_backslash(self.line, span.start as usize, span.end as usize)
        {
            self.fields.plain = false;
        }
        Some((span.start, span.end))
    }

    /// A string whose bytes are its value: one without escapes (an escape would have to be
    /// decoded before a rule reads it, which the tape path does).
    #[inline(always)]
    fn plain_string(&mut self) -> Option<&'l [u8]> {
        let span = self.string()?;
        let (start, end) = (span.start as usize, span.end as usize);
        if self.index.has_backslash(self.line, start, end) {
            return None;
        }
        Some(&self.line[start..end])
    }

    /// A string whose rule's grammar has no backslash in it (a ULID, a name, a timestamp, an
    /// enumerated value, base64, hex): its raw bytes, not looked at for escapes. A string
    /// spelled with an escape has a backslash, so it fails the grammar and the line goes to
    /// the tape path, as it would after [`Walk::plain_string`]; this only skips that check.
    #[inline(always)]
    fn grammar_string(&mut self) -> Option<&'l [u8]> {
        let span = self.string()?;
        Some(&self.line[span.start as usize..span.end as usize])
    }

    /// A plain string that is a valid timestamp: its time. The day of the last one is kept:
    /// an envelope's timestamps mostly fall on one day.
    #[inline]
    fn timestamp(&mut self) -> Option<i64> {
        let text: &[u8; 24] = self.grammar_string()?.try_into().ok()?;
        let days = if text[..10] == self.last_day.0 {
            self.last_day.1
        } else {
            let days = formats::timestamp_days(text)?;
            self.last_day = (text[..10].try_into().ok()?, days);
            days
        };
        Some(days * 86_400_000 + formats::timestamp_time_ms(text)?)
    }

    /// `null` or a valid timestamp.
    fn nullable_timestamp(&mut self) -> Option<Stamp> {
        if self.peek()? == b'"' {
            return self.timestamp().map(|t| Stamp::Set(Some(t)));
        }
        self.literal(b"null")?;
        Some(Stamp::Null)
    }

    /// The token (number or literal) at the next structural: its bytes, up to the first byte
    /// that ends a token.
    #[inline(always)]
    fn token(&mut self) -> Option<&'l [u8]> {
        let start = *self.positions.get(self.at)? as usize;
        let rest = &self.line[start..];
        self.at += 1;
        Some(&rest[..token_len(rest)])
    }

    /// Exactly the literal `word`.
    #[inline(always)]
    fn literal(&mut self, word: &[u8]) -> Option<()> {
        (self.token()? == word).then_some(())
    }

    /// Whether the next value is `null` (stepped over when it is).
    #[inline(always)]
    fn null(&mut self) -> Option<bool> {
        if self.peek()? != b'n' {
            return Some(false);
        }
        self.literal(b"null")?;
        Some(true)
    }

    /// A JSON integer of at most 18 digits, not negative: its value. (Other integers, `-0`,
    /// fractions and exponents are left to the tape path.)
    #[inline(always)]
    fn small_unsigned(&mut self) -> Option<u64> {
        let start = *self.positions.get(self.at)? as usize;
        self.at += 1;
        let rest = &self.line[start..];
        // One pass: the value of the leading digits (19 at most, which cannot overflow), then
        // the token must end right after them.
        let (mut value, mut len) = (0u64, 0);
        for &byte in rest.iter().take(19) {
            let digit = byte.wrapping_sub(b'0');
            if digit > 9 {
                break;
            }
            value = value * 10 + u64::from(digit);
            len += 1;
        }
        let ends = rest.get(len).is_none_or(|&b| ENDS_TOKEN[usize::from(b)]);
        let fine = ends && (1..=18).contains(&len) && (rest[0] != b'0' || len == 1);
        fine.then_some(value)
    }

    /// Any value, checked for the JSON layer only: grammar, depth, duplicate keys. `depth` is
    /// the nesting of the value's container (the top-level object is 1).
    fn any_value(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' => self.any_object(depth + 1),
            b'[' => self.any_array(depth + 1),
            _ => {
                let token = self.token()?;
                let fine = matches!(token, b"true" | b"false" | b"null") || is_number(token);
                fine.then_some(())
            }
        }
    }

    fn any_object(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.object(depth, Record::Nothing, |_, _| Some(0))
            .map(drop)
    }

    /// An object at nesting `depth`, each member's key handed to `member`. For a key it knows,
    /// `member` reads the value and returns the key's bit (one per known key: a second
    /// member with it is a duplicate); for another key it returns 0, and the value is checked
    /// here for the JSON layer and the key joins the duplicate check. `None` from `member`:
    /// not sure. Returns the bits of the known keys seen.
    #[inline(always)]
    fn object(
        &mut self,
        depth: usize,
        record: Record,
        mut member: impl FnMut(&mut Self, (u32, u32)) -> Option<u32>,
    ) -> Option<u32> {
        self.eat(b'{')?;
        let frame = self.keys.len();
        let mut seen = 0;
        if self.eat(b'}').is_none() {
            loop {
                let key_at = self.at;
                // Not yet looked at for escapes: a key equal to one the rules know has none.
                let key = self.string()?;
                let key = (key.start, key.end);
                self.eat(b':')?;
                let value_at = self.at;
                match member(self, key)? {
                    0 => {
                        // Compared raw with the others: an escaped key is the tape path's.
                        if self.escaped(key) {
                            return None;
                        }
                        self.keys.push(key);
                        self.any_value(depth)?;
                    }
                    bit if seen & bit != 0 => return None,
                    bit => seen |= bit,
                }
                self.record_member(record, key_at, value_at);
                if self.end_of_member()? {
                    break;
                }
            }
        }
        self.distinct_keys(frame)?;
        Some(seen)
    }

    fn any_array(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.eat(b'[')?;
        if self.eat(b']').is_some() {
            return Some(());
        }
        loop {
            self.any_value(depth)?;
            if self.end_of_element()? {
                return Some(());
            }
        }
    }

    /// A key without escapes (keys are compared after unescaping: the tape path does that).
    #[inline(always)]
    fn key(&mut self) -> Option<(u32, u32)> {
        let span = self.string()?;
        let key = (span.start, span.end);
        (!self.escaped(key)).then_some(key)
    }

    /// Whether the string content `(start, end)` holds an escape.
    #[inline(always)]
    fn escaped(&self, (start, end): (u32, u32)) -> bool {
        self.index
            .has_backslash(self.line, start as usize, end as usize)
    }

    /// Notes, when a shape is recorded, the member of a `record` object whose key is at
    /// structural `key_at` and whose value, just walked, starts at `value_at`.
    #[inline(always)]
    fn record_member(&mut self, record: Record, key_at: usize, value_at: usize) {
        // `record` is a constant where this is inlined: most objects record nothing.
        if record == Record::Nothing {
            return;
        }
        let Some(shape) = self.shape.as_deref_mut() else {
            return;
        };
        let members = match record {
            Record::Top => &mut shape.top,
            _ => &mut shape.scratch,
        };
        let value_start = self.positions[value_at] as usize;
        // The value's last structural: its closing quote or bracket, or the token itself.
        let last = self.at - 1;
        let value_end = if last == value_at {
            value_start + token_len(&self.line[value_start..])
        } else {
            self.positions[last] as usize + 1
        };
        members.push(MemberSpan {
            key_start: self.positions[key_at] as usize,
            // A key is a string: its closing quote is the structural after its opening one.
            key_end: self.positions[key_at + 1] as usize + 1,
            value_start,
            value_end,
        });
    }

    /// After a member: `true` at the object's end, `false` before another member.
    #[inline(always)]
    fn end_of_member(&mut self) -> Option<bool> {
        match self.peek()? {
            b',' => {
                self.at += 1;
                Some(false)
            }
            b'}' => {
                self.at += 1;
                Some(true)
            }
            _ => None,
        }
    }

    /// After an element: `true` at the array's end, `false` before another element.
    #[inline(always)]
    fn end_of_element(&mut self) -> Option<bool> {
        match self.peek()? {
            b',' => {
                self.at += 1;
                Some(false)
            }
            b']' => {
                self.at += 1;
                Some(true)
            }
            _ => None,
        }
    }

    /// The keys pushed since `frame` are pairwise different; they are dropped.
    #[inline(always)]
    fn distinct_keys(&mut self, frame: usize) -> Option<()> {
        // Most objects pushed no key (every key known) or one.
        if self.keys.len() <= frame + 1 {
            self.keys.truncate(frame);
            return Some(());
        }
        self.distinct_keys_compared(frame)
    }

    /// [`Walk::distinct_keys`] when there are at least two keys to compare.
    fn distinct_keys_compared(&mut self, frame: usize) -> Option<()> {
        let line = self.line;
        let text = |(s, e): (u32, u32)| &line[s as usize..e as usize];
        let keys = &mut self.keys[frame..];
        let distinct = if keys.len() <= 16 {
            keys.iter()
                .enumerate()
                .all(|(i, &a)| keys[..i].iter().all(|&b| text(a) != text(b)))
        } else {
            keys.sort_unstable_by(|&a, &b| text(a).cmp(text(b)));
            keys.windows(2).all(|w| text(w[0]) != text(w[1]))
        };
        self.keys.truncate(frame);
        distinct.then_some(())
    }

    /// The whole line: one envelope object and nothing after it.
    fn envelope(&mut self) -> Option<Top> {
        let mut top = Top::default();
        top.seen = self.object(1, Record::Top, |walk, key| walk.top_member(&mut top, key))?;
        (self.at == self.positions.len()).then_some(top)
    }

    /// One top-level member's value, checked by its key's rules: the key's bit, 0 for a key
    /// the rules do not know.
    fn top_member(&mut self, top: &mut Top, (start, end): (u32, u32)) -> Option<u32> {
        let value_at = self.at;
        let bit = match &self.line[start as usize..end as usize] {
            b"envelope_version" => {
                top.version = match self.small_unsigned()? {
                    1 => 1,
                    2 => 2,
                    _ => return None,
                };
                let version = self.scalar_range(value_at);
                if let Some(shape) = self.shape.as_deref_mut() {
                    shape.version = (version.0 as usize, version.1 as usize);
                }
                ENVELOPE_VERSION
            }
            b"id" => {
                top.id_time = Some(formats::ulid_bytes_time_ms(self.grammar_string()?)?);
                ID
            }
            b"queue" => {
                let span = self.string()?;
                let name = &self.line[span.start as usize..span.end as usize];
                if !formats::is_name_bytes(name) {
                    return None;
                }
                top.queue = span;
                QUEUE
            }
            b"handler_ref" => {
                if !formats::is_name_bytes(self.grammar_string()?) {
                    return None;
                }
                HANDLER_REF
            }
            b"handler_version" => {
                if !self.null()? && !formats::is_handler_version_bytes(self.plain_string()?) {
                    return None;
                }
                HANDLER_VERSION
            }
            b"payload" => {
                let text = self.grammar_string()?;
                base64_simd::STANDARD.check(text).ok()?;
                PAYLOAD
            }
            b"payload_ref" => {
                // Set, it is an error in version 1 and a claim check in version 2
                // (docs/envelope.md#claim-check-payloads).
                if !self.null()? {
                    self.claim_check()?;
                    top.claim_check = true;
                    if let Some(shape) = self.shape.as_deref_mut() {
                        shape.downgrade_blocked = true;
                    }
                }
                PAYLOAD_REF
            }
            b"payload_content_type" => {
                if !formats::is_media_type_bytes(self.plain_string()?) {
                    return None;
                }
                CONTENT_TYPE
            }
            b"headers" => {
                self.headers(top)?;
                HEADERS
            }
            b"status" => {
                let status = Status::from_name(self.grammar_string()?)?;
                if status == Status::Cancelled {
                    if let Some(shape) = self.shape.as_deref_mut() {
                        shape.downgrade_blocked = true;
                    }
                }
                top.status = Some(status);
                STATUS
            }
            b"attempt_count" => {
                top.attempt_count = self.small_unsigned().filter(|&n| n <= u32::MAX.into())?;
                ATTEMPT_COUNT
            }
            b"redrive_count" => {
                top.redrive_count = self.small_unsigned().filter(|&n| n <= u32::MAX.into())?;
                REDRIVE_COUNT
            }
            b"next_attempt_at" => {
                top.next_attempt_at = self.nullable_timestamp()?;
                NEXT_ATTEMPT_AT
            }
            b"lease_expires_at" => {
                top.lease_expires_at = self.nullable_timestamp()?;
                LEASE_EXPIRES_AT
            }
            b"created_at" => {
                top.created_at = self.timestamp()?;
                self.fields.created = top.created_at;
                CREATED_AT
            }
            b"attempts" => {
                top.attempts = self.attempts()?;
                ATTEMPTS
            }
            b"origin" => {
                if let Some(shape) = self.shape.as_deref_mut() {
                    // The members before it are recorded: this is its index.
                    shape.origin_at = Some(shape.top.len());
                }
                top.origin = Some(self.origin()?);
                ORIGIN
            }
            _ => return Some(0),
        };
        // The strings the DLQ commands read, each a plain string here (a name, a ULID, ...):
        // its opening and closing quotes are the value's two structurals.
        let text = || (self.positions[value_at] + 1, self.positions[value_at + 1]);
        match bit {
            ID => self.fields.id = text(),
            QUEUE => self.fields.queue = text(),
            HANDLER_REF => self.fields.handler_ref = text(),
            STATUS => self.fields.status = text(),
            CREATED_AT => self.fields.created_at = text(),
            PAYLOAD => self.fields.payload = Some(text()),
            CONTENT_TYPE => self.fields.payload_content_type = text(),
            REDRIVE_COUNT => self.fields.redrive_count = top.redrive_count,
            ATTEMPT_COUNT => self.fields.attempt_count = top.attempt_count,
            // These three may be `null`: only a string has a text.
            HANDLER_VERSION | NEXT_ATTEMPT_AT | LEASE_EXPIRES_AT => {
                let value = (self.line[self.positions[value_at] as usize] == b'"').then(text);
                match bit {
                    HANDLER_VERSION => self.fields.handler_version = value,
                    NEXT_ATTEMPT_AT => self.fields.next_attempt_at = value,
                    _ => self.fields.lease_expires_at = value,
                }
            }
            _ => {}
        }
        let rewritten = match bit {
            STATUS => 0,
            ATTEMPT_COUNT => 1,
            REDRIVE_COUNT => 2,
            NEXT_ATTEMPT_AT => 3,
            LEASE_EXPIRES_AT => 4,
            _ => return Some(bit),
        };
        top.redrive_spans[rewritten] = self.scalar_range(value_at);
        Some(bit)
    }

    /// The bytes of the scalar value (string, number or literal) read from structural `at`.
    #[inline]
    fn scalar_range(&self, at: usize) -> (u32, u32) {
        let start = self.positions[at];
        let end = if self.line[start as usize] == b'"' {
            self.positions[at + 1] + 1
        } else {
            start + token_len(&self.line[start as usize..]) as u32
        };
        (start, end)
    }

    /// `headers`: an object of string values under non-empty keys.
    fn headers(&mut self, top: &mut Top) -> Option<()> {
        let open = self.at;
        self.eat(b'{')?;
        let frame = self.keys.len();
        if self.eat(b'}').is_none() {
            loop {
                let (start, end) = self.key()?;
                let key = &self.line[start as usize..end as usize];
                if key.is_empty() {
                    return None;
                }
                let moved = moved_header(key);
                top.moved_header |= moved.is_some();
                self.keys.push((start, end));
                self.eat(b':')?;
                let value = self.recorded_string()?;
                self.fields.headers.push(((start, end), value));
                if let Some(shape) = self.shape.as_deref_mut() {
                    // The key's and the value's quotes are the member's bytes.
                    shape.header_members.push(MemberSpan {
                        key_start: start as usize - 1,
                        key_end: end as usize + 1,
                        value_start: value.0 as usize - 1,
                        value_end: value.1 as usize + 1,
                    });
                    shape.header_moves.push(moved);
                }
                if self.end_of_member()? {
                    break;
                }
            }
        }
        if let Some(shape) = self.shape.as_deref_mut() {
            let close = self.positions[self.at - 1] as usize;
            shape.headers = (self.positions[open] as usize, close + 1);
        }
        self.distinct_keys(frame)
    }

    /// A set `payload_ref`: `{uri, sha256, size}` as version 2 requires.
    fn claim_check(&mut self) -> Option<()> {
        let seen = self.object(2, Record::Nothing, |walk, (start, end)| {
            Some(match &walk.line[start as usize..end as usize] {
                b"uri" => formats::is_payload_uri_bytes(walk.plain_string()?).then_some(1)?,
                b"sha256" => formats::is_sha256_hex_bytes(walk.grammar_string()?).then_some(2)?,
                b"size" => {
                    walk.small_unsigned()?;
                    4
                }
                _ => 0,
            })
        })?;
        (seen == 7).then_some(())
    }

    /// `origin`: whether it is what version 2 requires; any value is fine in version 1.
    fn origin(&mut self) -> Option<Origin> {
        if self.peek()? != b'{' {
            self.any_value(1)?;
            return Some(Origin::Bad);
        }
        let mut good = true;
        self.object(2, Record::Nothing, |walk, (start, end)| {
            let bit = match &walk.line[start as usize..end as usize] {
                b"source" => 1,
                b"submitted_by" => 2,
                _ => {
                    // Version 1 has no place for it.
                    if let Some(shape) = walk.shape.as_deref_mut() {
                        shape.downgrade_blocked = true;
                    }
                    return Some(0);
                }
            };
            if walk.peek()? == b'"' {
                let value = walk.recorded_string()?;
                if let Some(shape) = walk.shape.as_deref_mut() {
                    let quoted = (value.0 as usize - 1, value.1 as usize + 1);
                    shape.origin_moves.push((bit as usize - 1, quoted));
                }
                let value = Some(value);
                if bit == 1 {
                    walk.fields.origin_source = value;
                } else {
                    walk.fields.origin_submitted_by = value;
                }
            } else {
                good = false;
                walk.any_value(2)?;
            }
            Some(bit)
        })?;
        Some(if good { Origin::Good } else { Origin::Bad })
    }

    /// `attempts`: every record and the rules across them
    /// (docs/envelope.md#rules-across-attempts).
    fn attempts(&mut self) -> Option<Attempts> {
        self.eat(b'[')?;
        let mut attempts = Attempts {
            history: History::default(),
            durations_v2: true,
        };
        if self.eat(b']').is_some() {
            return Some(attempts);
        }
        let h = &mut attempts.history;
        // The previous attempt's number and start.
        let mut previous: Option<(u64, i64)> = None;
        loop {
            let a = self.attempt()?;
            let previous_no = previous.map(|(no, _)| i128::from(no));
            match laws::numbering(previous.is_none(), a.no.into(), previous_no) {
                Numbering::Next => {}
                Numbering::Restart => h.restarts += 1,
                Numbering::FirstNotOne | Numbering::Gap { .. } => return None,
            }
            if previous.is_none() {
                h.first_started = Some(a.started);
            }
            if !laws::started_in_order(previous.map(|(_, started)| started), Some(a.started)) {
                return None;
            }
            previous = Some((a.no, a.started));
            h.len += 1;
            h.any_in_flight |= a.finished.is_null();
            h.last_finished = a.finished;
            h.last_outcome = a.outcome;
            attempts.durations_v2 &= a.duration_v2;
            self.fields.attempts.push(a.fields);
            let is_last = self.end_of_element()?;
            if !laws::in_flight_only_last(a.finished, is_last)
                || !laws::success_only_last(a.outcome, is_last)
            {
                return None;
            }
            if is_last {
                return Some(attempts);
            }
        }
    }

    /// One attempt record, with the rules that read only it.
    fn attempt(&mut self) -> Option<Attempt> {
        let (mut no, mut started, mut finished, mut outcome) = (None, None, None, None);
        let mut error: Option<Option<ErrorFacts>> = None;
        let mut duration = Duration::Missing;
        let mut fields = AttemptFields::default();
        // Where `finished_at` and `duration_ms` are among the members, for the shape.
        let (mut finished_at, mut duration_at) = (None, None);
        if let Some(shape) = self.shape.as_deref_mut() {
            shape.scratch.clear();
        }
        self.object(3, Record::Attempt, |walk, (start, end)| {
            let value_at = walk.at;
            // This member's index among the attempt's, when a shape is recorded.
            let member_at = |walk: &Self| walk.shape.as_deref().map(|shape| shape.scratch.len());
            Some(match &walk.line[start as usize..end as usize] {
                b"attempt_no" => {
                    no = Some(
                        walk.small_unsigned()
                            .filter(|n| (1..=u32::MAX.into()).contains(n))?,
                    );
                    1
                }
                b"started_at" => {
                    started = Some(walk.timestamp()?);
                    let positions = walk.positions;
                    fields.started_text = (positions[value_at] + 1, positions[value_at + 1]);
                    2
                }
                b"finished_at" => {
                    finished = Some(walk.nullable_timestamp()?);
                    if walk.line[walk.positions[value_at] as usize] == b'"' {
                        let positions = walk.positions;
                        fields.finished_text =
                            Some((positions[value_at] + 1, positions[value_at + 1]));
                    }
                    finished_at = member_at(walk);
                    4
                }
                b"outcome" => {
                    let known = walk.outcome()?;
                    if known.is_some() {
                        let positions = walk.positions;
                        fields.outcome = Some((positions[value_at] + 1, positions[value_at + 1]));
                    }
                    outcome = Some(known);
                    8
                }
                b"error" => {
                    error = Some(if walk.null()? {
                        None
                    } else {
                        Some(walk.error_object()?)
                    });
                    16
                }
                b"duration_ms" => {
                    duration = walk.duration()?;
                    duration_at = member_at(walk);
                    32
                }
                _ => 0,
            })
        })?;
        let (no, started, finished, outcome) = (no?, started?, finished?, outcome?);
        if !laws::finished_after_start(Some(started), finished)
            || laws::outcome_when_finished(outcome.is_none(), finished).is_some()
        {
            return None;
        }
        let error = error.flatten();
        fields.error_type = error.map(|e| e.type_range);
        if let Some(e) = error {
            (fields.error_message, fields.message_escaped) = e.message;
        }
        fields.started = started;
        fields.finished = finished.time();
        let error_object = error.map_or(ErrorObject::Absent, |e| e.object);
        if !laws::success_without_error(outcome, error_object)
            || laws::lease_expired_error(outcome, error_object).is_some()
        {
            return None;
        }
        if let Some(shape) = self.shape.as_deref_mut() {
            let members = &shape.scratch;
            shape.attempts.push(AttemptShape {
                finished_end: finished_at.map(|at| members[at].value_end),
                duration_ms: finished.time().map(|f| f - started),
                duration_removal: duration_at.map(|at| removal(members, at)),
            });
        }
        let duration_v2 = laws::duration_v2(duration, Some(started), finished).is_none();
        Some(Attempt {
            no,
            started,
            finished,
            outcome,
            duration_v2,
            fields,
        })
    }

    /// `outcome`: `null` or one of the four.
    #[inline]
    fn outcome(&mut self) -> Option<Option<Outcome>> {
        if self.null()? {
            return Some(None);
        }
        Some(Some(Outcome::from_name(self.grammar_string()?)?))
    }

    /// `duration_ms`: `null`, a small integer, or (fine in version 1 only) anything else.
    #[inline]
    fn duration(&mut self) -> Option<Duration> {
        if self.null()? {
            return Some(Duration::Null);
        }
        let first = self.peek()?;
        if first.is_ascii_digit() {
            let at = self.at;
            if let Some(ms) = self.small_unsigned() {
                return Some(Duration::Integer(ms.into()));
            }
            self.at = at;
        }
        self.any_value(3)?;
        Some(Duration::Other)
    }

    /// An attempt's `error` object: `type` a non-empty string, `message` a string, `stack`
    /// absent, null or a string, the texts within their limits.
    fn error_object(&mut self) -> Option<ErrorFacts> {
        let mut facts = ErrorFacts {
            object: ErrorObject::Absent,
            type_range: (0, 0),
            message: ((0, 0), false),
        };
        let (mut lease_type, mut message_set, mut stack_set) = (false, false, false);
        let seen = self.object(4, Record::Nothing, |walk, (start, end)| {
            Some(match &walk.line[start as usize..end as usize] {
                b"type" => {
                    let (start, end) = walk.recorded_string()?;
                    if start == end {
                        return None;
                    }
                    facts.type_range = (start, end);
                    lease_type = &walk.line[start as usize..end as usize] == b"rdq.LeaseExpired";
                    1
                }
                b"message" => {
                    let span = walk.string()?;
                    if !walk.within_limit(span, MESSAGE_LIMIT) {
                        return None;
                    }
                    message_set = span.len() > 0;
                    let escaped =
                        walk.index
                            .has_backslash(walk.line, span.start as usize, span.end as usize);
                    facts.message = ((span.start, span.end), escaped);
                    2
                }
                b"stack" => {
                    if !walk.null()? {
                        let span = walk.string()?;
                        if !walk.within_limit(span, STACK_LIMIT) {
                            return None;
                        }
                        stack_set = true;
                    }
                    4
                }
                _ => 0,
            })
        })?;
        // `type` and `message` are required.
        if seen & 3 != 3 {
            return None;
        }
        // What docs/envelope.md#lease-expiry reads. (A `type` spelled with escapes is not
        // `rdq.LeaseExpired` here: such a line goes to the tape path.)
        facts.object = ErrorObject::Object {
            lease_type,
            message_set,
            stack_set,
        };
        Some(facts)
    }

    /// The truncation rule (docs/envelope.md#the-attempt-record) of a string: its decoded
    /// length is at most its raw length, so a raw length within the limit settles it; a longer
    /// one is checked on its bytes when it has no escape, and left to the tape path otherwise.
    fn within_limit(&self, span: Span, limit: usize) -> bool {
        if span.len() <= limit {
            return true;
        }
        let (start, end) = (span.start as usize, span.end as usize);
        if self.index.has_backslash(self.line, start, end) {
            return false;
        }
        std::str::from_utf8(&self.line[start..end])
            .is_ok_and(|text| formats::within_limit(text, limit))
    }
}

/// What the rules across attempts read of one attempt.
#[derive(Debug, Clone, Copy)]
struct Attempt {
    no: u64,
    started: i64,
    /// `Null` in flight.
    finished: Stamp,
    outcome: Option<Outcome>,
    duration_v2: bool,
    fields: AttemptFields,
}

#[derive(Debug, Clone, Copy)]
struct ErrorFacts {
    /// What the rules across attempts read of it.
    object: ErrorObject,
    /// Where `type` is.
    type_range: Range32,
    /// Where `message` is, and whether it holds an escape.
    message: (Range32, bool),
}

/// The bytes that end a token: white space, the structural characters and `"`.
const ENDS_TOKEN: [bool; 256] = {
    let mut table = [false; 256];
    let ends = b" \t\n\r,:{}[]\"";
    let mut i = 0;
    while i < ends.len() {
        table[ends[i] as usize] = true;
        i += 1;
    }
    table
};

/// The length of the token `rest` starts with: up to the first byte that ends a token.
#[inline(always)]
fn token_len(rest: &[u8]) -> usize {
    rest.iter()
        .position(|&b| ENDS_TOKEN[usize::from(b)])
        .unwrap_or(rest.len())
}

/// RFC 8259 number grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
fn is_number(text: &[u8]) -> bool {
    let mut at = usize::from(text.first() == Some(&b'-'));
    let digits = |at: &mut usize| {
        let start = *at;
        while text.get(*at).is_some_and(u8::is_ascii_digit) {
            *at += 1;
        }
        *at - start
    };
    match text.get(at) {
        Some(b'0') => at += 1,
        Some(b'1'..=b'9') => {
            digits(&mut at);
        }
        _ => return false,
    }
    if text.get(at) == Some(&b'.') {
        at += 1;
        if digits(&mut at) == 0 {
            return false;
        }
    }
    if matches!(text.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(text.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        if digits(&mut at) == 0 {
            return false;
        }
    }
    at == text.len()
}

#[cfg(test)]
mod tests;
