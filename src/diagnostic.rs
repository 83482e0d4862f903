//! Error codes and diagnostics: the data every layer reports, rendered for people only at the
//! edge (docs/envelope.md#diagnostics).

use std::fmt;

/// Whether a code rejects a line or is only reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Severity {
    /// The line is invalid and never emitted.
    Error,
    /// Reported, never a reason to reject (docs/envelope.md#warnings).
    Warning,
}

macro_rules! error_codes {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, $severity:ident; )*) => {
        /// Every code of docs/envelope.md#error-codes and #warning-codes.
        ///
        /// The spelling on the wire is [`ErrorCode::as_str`]; [`ErrorCode::ALL`] lists them in
        /// the order of the spec.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum ErrorCode {
            $( $(#[$doc])* $variant, )*
        }

        impl ErrorCode {
            /// Every code, in the order of docs/envelope.md#error-codes and #warning-codes.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant),*];

            /// The code as the spec spells it (`"INVALID_ID"`).
            pub const fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$variant => $name,)* }
            }

            /// Whether the code rejects a line.
            pub const fn severity(self) -> Severity {
                match self { $(ErrorCode::$variant => Severity::$severity,)* }
            }

            /// Parses the spec spelling; `None` for an unknown code.
            pub fn from_name(name: &str) -> Option<ErrorCode> {
                match name { $($name => Some(ErrorCode::$variant),)* _ => None }
            }
        }
    };
}

error_codes! {
    /// The line's content is longer than the reader cap (docs/envelope.md#reader-cap).
    LineTooLong = "LINE_TOO_LONG", Error;
    /// Bytes that are not UTF-8, or an unpaired surrogate escape (docs/envelope.md#encoding).
    InvalidUtf8 = "INVALID_UTF8", Error;
    /// Not RFC 8259 JSON, or data after the value (docs/envelope.md#encoding).
    MalformedJson = "MALFORMED_JSON", Error;
    /// One well-formed value that is not an object (docs/envelope.md#one-object-per-line).
    NotAnObject = "NOT_AN_OBJECT", Error;
    /// An object repeats a key (docs/envelope.md#duplicate-keys).
    DuplicateKey = "DUPLICATE_KEY", Error;
    /// Arrays and objects nested deeper than 128 (docs/envelope.md#nesting-depth).
    NestingTooDeep = "NESTING_TOO_DEEP", Error;
    /// A required member is absent.
    MissingField = "MISSING_FIELD", Error;
    /// A value of the wrong JSON type.
    WrongType = "WRONG_TYPE", Error;
    /// An integer outside its range.
    OutOfRange = "OUT_OF_RANGE", Error;
    /// An `envelope_version` this engine does not read (or not the required one).
    UnsupportedVersion = "UNSUPPORTED_VERSION", Error;
    /// `id` is not a canonical ULID.
    InvalidId = "INVALID_ID", Error;
    /// A queue, handler or handler version that breaks its charset or length.
    InvalidName = "INVALID_NAME", Error;
    /// `payload` is not canonical standard base64.
    InvalidBase64 = "INVALID_BASE64", Error;
    /// `payload_content_type` is not a media type of the strict grammar.
    InvalidContentType = "INVALID_CONTENT_TYPE", Error;
    /// A v1 `payload_ref` that is set (reserved in v1).
    PayloadRefReserved = "PAYLOAD_REF_RESERVED", Error;
    /// A v2 `payload_ref` of the wrong shape, or a `payload` beside it.
    InvalidPayloadRef = "INVALID_PAYLOAD_REF", Error;
    /// An empty header key, or (v2) a header that moved into `origin`.
    InvalidHeader = "INVALID_HEADER", Error;
    /// A submitted header key in the `rdq.` namespace.
    ReservedHeader = "RESERVED_HEADER", Error;
    /// A submitted field that only the server assigns.
    ServerAssignedField = "SERVER_ASSIGNED_FIELD", Error;
    /// A `status` outside the version's set.
    UnknownStatus = "UNKNOWN_STATUS", Error;
    /// An attempt `outcome` outside the set.
    UnknownOutcome = "UNKNOWN_OUTCOME", Error;
    /// Not a `YYYY-MM-DDTHH:MM:SS.mmmZ` timestamp of a real date and time.
    InvalidTimestamp = "INVALID_TIMESTAMP", Error;
    /// An error `message` or `stack` over its limit and not truncated by the rule.
    FieldTooLong = "FIELD_TOO_LONG", Error;
    /// The attempt history breaks a rule across attempts.
    BadAttempt = "BAD_ATTEMPT", Error;
    /// `status` disagrees with the timestamps, the counts or the attempts.
    InconsistentState = "INCONSISTENT_STATE", Error;
    /// The line is larger than its queue's envelope size limit.
    PayloadTooLarge = "PAYLOAD_TOO_LARGE", Error;
    /// A 2 → 1 migration of an envelope that v1 cannot represent.
    CannotDowngrade = "CANNOT_DOWNGRADE", Error;
    /// A 1 → 2 migration that would overwrite an unknown field.
    MigrationConflict = "MIGRATION_CONFLICT", Error;
    /// A redrive of a task that is not dead.
    NotDead = "NOT_DEAD", Error;
    /// A redrive of a task already redriven `--max-redrives` times.
    RedriveLimit = "REDRIVE_LIMIT", Error;
    /// The ULID's time and `created_at` differ by more than a second.
    IdTimeMismatch = "ID_TIME_MISMATCH", Warning;
    /// `created_at` is later than the first attempt's start.
    CreatedAfterStart = "CREATED_AFTER_START", Warning;
    /// A ChokaQ value that rdq had to bound (docs/chokaq.md#chokaq-limits).
    ChokaqLimit = "CHOKAQ_LIMIT", Warning;
}

impl ErrorCode {
    /// Whether the code is a warning.
    pub const fn is_warning(self) -> bool {
        matches!(self.severity(), Severity::Warning)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One broken rule: `{"code", "path", "message"}` of docs/envelope.md#diagnostics, and where
/// in the input it was found, as data.
///
/// The position is in fields of its own, so that a program reads it without parsing the
/// message: `offset` is the byte within the line where the offending value begins (for a
/// line that is not JSON, where reading stopped), `line` the line's number where the reader
/// knew it. How a person reads all this is decided at the edge ([`Diagnostic`]'s `Display`,
/// the command line's renderings), and the JSON renderings keep the three members above.
///
/// ```
/// use rdq_envelope::envelope::Checker;
/// use rdq_envelope::framing::LineReader;
/// use rdq_envelope::{EnvelopeRules, ErrorCode, RuleOptions};
///
/// let mut reader = LineReader::new(&b"{}\n{\"envelope_version\": 1, \"queue\": 7}\n"[..]);
/// let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
/// reader.next_line()?;
/// let line = reader.next_line()?.expect("a second line");
/// let checked = checker.check_line(&line);
/// let wrong = checked.verdict().errors.iter().find(|d| d.code == ErrorCode::WrongType).expect("WRONG_TYPE");
/// assert_eq!((wrong.path.as_str(), wrong.offset, wrong.line), ("/queue", Some(33), Some(2)));
/// assert!(wrong.to_string().starts_with("line 2, byte 33: /queue: WRONG_TYPE: "));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Diagnostic {
    /// What rule was broken.
    pub code: ErrorCode,
    /// RFC 6901 pointer of the offending value; `""` for the whole line.
    pub path: String,
    /// What a person reads.
    pub message: String,
    /// The byte of the line (0 its first, a BOM and the terminator not counted) where the
    /// value at `path` begins; for a member that is missing, the deepest value on `path` the
    /// line has (the object's `{`); for a line that is not JSON or not UTF-8, the byte where
    /// reading stopped. `None` where nothing in the line is to blame (the summary of a capped
    /// line) or the diagnostic was made without the line (see [`Diagnostic::at_offset`]).
    pub offset: Option<u64>,
    /// The line's 1-based number in its stream, where the reader that judged it knew it
    /// ([`Checker::check_line`](crate::envelope::Checker::check_line)); `None` for a line
    /// judged on its own ([`Checker::check`](crate::envelope::Checker::check)).
    pub line: Option<u64>,
}

/// `line L, byte B: POINTER: CODE: message` (the position's parts that are known; an empty
/// pointer as `<line>`): the rendering for a person, made from the fields. The command line's
/// rows (`SOURCE:LINE: POINTER: CODE: message`) are made the same way, with the source.
impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.offset) {
            (Some(line), Some(offset)) => write!(f, "line {line}, byte {offset}: ")?,
            (Some(line), None) => write!(f, "line {line}: ")?,
            (None, Some(offset)) => write!(f, "byte {offset}: ")?,
            (None, None) => {}
        }
        write!(f, "{}: {}: {}", self.shown_path(), self.code, self.message)
    }
}

impl std::error::Error for Diagnostic {}

/// The most diagnostics one line lists before the rest are summed up (see `push_capped`).
pub const MAX_DIAGNOSTICS_PER_LINE: usize = 100;

/// The longest `path` a diagnostic carries; a longer one is cut (see `cut_text`).
pub const MAX_PATH_BYTES: usize = 256;

/// The longest `message` a diagnostic carries; a longer one is cut (see `cut_text`).
pub const MAX_MESSAGE_BYTES: usize = 1024;

/// The longest marker `cut_text` adds: `…(+N bytes)` for any N of 20 digits or fewer.
const MARKER_ROOM: usize = "…(+".len() + 20 + " bytes)".len();

/// The most of an offending value that a message quotes (see `quoted`).
pub const MAX_QUOTED_BYTES: usize = 64;

/// `text` cut to its first `max` bytes (moved back to a character boundary), followed by
/// `…(+N bytes)`, N the bytes left out; `text` itself when it is no longer than `max`.
///
/// A diagnostic's path and message are cut this way ([`MAX_PATH_BYTES`],
/// [`MAX_MESSAGE_BYTES`]), so that what a line's diagnostics hold is bounded whatever the
/// line: a cut path is no longer a pointer to a value, the marker says so.
pub(crate) fn cut_text(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max {
        return text.into();
    }
    let cut = floor_char_boundary(text, max);
    format!("{}…(+{} bytes)", &text[..cut], text.len() - cut).into()
}

fn floor_char_boundary(text: &str, max: usize) -> usize {
    let mut cut = max.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    cut
}

fn cut_in_place(text: &mut String, max: usize) {
    if text.len() > max {
        *text = cut_text(text, max).into_owned();
    }
}

/// A value quoted in a message: Rust's `{:?}` form of its first [`MAX_QUOTED_BYTES`] bytes,
/// then `…(+N bytes)` when it is longer.
pub(crate) fn quoted(value: &str) -> impl fmt::Display + '_ {
    struct Quoted<'a>(&'a str);
    impl fmt::Display for Quoted<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            let cut = floor_char_boundary(self.0, MAX_QUOTED_BYTES);
            write!(f, "{:?}", &self.0[..cut])?;
            if cut < self.0.len() {
                write!(f, "…(+{} bytes)", self.0.len() - cut)?;
            }
            Ok(())
        }
    }
    Quoted(value)
}

const SUMMARY_PREFIX: &str = "... and ";
const SUMMARY_SUFFIX: &str = " more diagnostics on this line";

/// How many diagnostics `d` stands for when it is the summary of a capped line.
fn summed_up(d: &Diagnostic) -> Option<u64> {
    let n = d.message.strip_prefix(SUMMARY_PREFIX)?;
    n.strip_suffix(SUMMARY_SUFFIX)?.parse().ok()
}

/// Whether `d` is the summary diagnostic of a capped line ([`push_capped`]), and how many
/// diagnostics it stands for.
pub(crate) fn omitted_count(d: &Diagnostic) -> Option<u64> {
    if d.path.is_empty() {
        summed_up(d)
    } else {
        None
    }
}

/// Adds a diagnostic of `code`, built by `make` only when it is kept, to one line's `list`,
/// keeping the list bounded:
///
/// - the first [`MAX_DIAGNOSTICS_PER_LINE`] diagnostics are kept;
/// - past them, a diagnostic is still kept when it is the first of its code, so that every
///   code the line breaks is listed (and counted in a summary's `by_code`): at most one more
///   per code;
/// - every other one is only counted, in one last diagnostic that sums them up: the code of
///   the first one left out (a code the list already has), the path `""` and the message
///   `... and N more diagnostics on this line`.
pub(crate) fn push_capped(
    list: &mut Vec<Diagnostic>,
    code: ErrorCode,
    make: impl FnOnce() -> Diagnostic,
) {
    if list.len() < MAX_DIAGNOSTICS_PER_LINE {
        list.push(make());
        return;
    }
    let summary = list.iter().rposition(|d| omitted_count(d).is_some());
    if !list.iter().any(|d| d.code == code) {
        let d = make();
        match summary {
            Some(at) => list.insert(at, d),
            None => list.push(d),
        }
        return;
    }
    omit(list, summary, code, 1);
}

/// Counts `n` more diagnostics of `code` left out of `list` (past the cap of [`push_capped`],
/// with one of that code already kept).
pub(crate) fn push_omitted(list: &mut Vec<Diagnostic>, code: ErrorCode, n: u64) {
    if n > 0 {
        let summary = list.iter().rposition(|d| omitted_count(d).is_some());
        omit(list, summary, code, n);
    }
}

#[cold]
fn omit(list: &mut Vec<Diagnostic>, summary: Option<usize>, code: ErrorCode, n: u64) {
    use std::fmt::Write as _;
    match summary {
        Some(at) => {
            let d = &mut list[at];
            let total = summed_up(d).unwrap_or(0) + n;
            d.message.clear();
            let _ = write!(d.message, "{SUMMARY_PREFIX}{total}{SUMMARY_SUFFIX}");
        }
        None => list.push(Diagnostic::new(
            code,
            "",
            format!("{SUMMARY_PREFIX}{n}{SUMMARY_SUFFIX}"),
        )),
    }
}

impl Diagnostic {
    /// A diagnostic of `code` at `path`. A path over [`MAX_PATH_BYTES`] or a message over
    /// [`MAX_MESSAGE_BYTES`] is cut (`cut_text`).
    pub fn new(code: ErrorCode, path: impl Into<String>, message: impl Into<String>) -> Self {
        let (mut path, mut message) = (path.into(), message.into());
        // A path from `pointer` or `cut_text` is cut already, and its marker takes it past
        // MAX_PATH_BYTES by at most MARKER_ROOM: cut it again and the marker would lie.
        if path.len() > MAX_PATH_BYTES + MARKER_ROOM {
            cut_in_place(&mut path, MAX_PATH_BYTES);
        }
        cut_in_place(&mut message, MAX_MESSAGE_BYTES);
        Diagnostic {
            code,
            path,
            message,
            offset: None,
            line: None,
        }
    }

    /// `path` as people read it: the empty pointer (the whole line) as `<line>`.
    pub(crate) fn shown_path(&self) -> &str {
        if self.path.is_empty() {
            "<line>"
        } else {
            &self.path
        }
    }

    /// The diagnostic with its byte `offset` within the line set.
    ///
    /// ```
    /// use rdq_envelope::{Diagnostic, ErrorCode};
    /// let d = Diagnostic::new(ErrorCode::WrongType, "/queue", "expected a string").at_offset(10);
    /// assert_eq!(d.offset, Some(10));
    /// ```
    pub fn at_offset(mut self, offset: u64) -> Self {
        self.offset = Some(offset);
        self
    }

    /// The diagnostic with its line's 1-based `number` set.
    ///
    /// ```
    /// use rdq_envelope::{Diagnostic, ErrorCode};
    /// let d = Diagnostic::new(ErrorCode::MalformedJson, "", "not JSON").on_line(3);
    /// assert_eq!(d.to_string(), "line 3: <line>: MALFORMED_JSON: not JSON");
    /// ```
    pub fn on_line(mut self, number: u64) -> Self {
        self.line = Some(number);
        self
    }

    /// The reader's verdict on a line longer than its cap (docs/envelope.md#reader-cap).
    #[cold]
    pub fn line_too_long(len: u64, max_line_bytes: usize) -> Self {
        Diagnostic::new(
            ErrorCode::LineTooLong,
            "",
            format!("line is {len} bytes, over the reader cap of {max_line_bytes} bytes"),
        )
        // The first byte over the cap.
        .at_offset(max_line_bytes as u64)
    }
}

/// Appends `token` to an RFC 6901 pointer as one reference token (`~` → `~0`, `/` → `~1`).
pub(crate) fn push_pointer_token(pointer: &mut String, token: &str) {
    pointer.push('/');
    for c in token.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// `prefix` with `token` appended as a reference token: `pointer("/headers", "a/b")` is
/// `/headers/a~1b`. Cut as a diagnostic's path is ([`MAX_PATH_BYTES`], [`cut_text`]), without
/// building the whole pointer first.
pub(crate) fn pointer(prefix: &str, token: &str) -> String {
    let escapes = token.bytes().filter(|&b| b == b'~' || b == b'/').count();
    let full = prefix.len() + 1 + token.len() + escapes;
    if full <= MAX_PATH_BYTES {
        let mut p = String::with_capacity(full);
        p.push_str(prefix);
        push_pointer_token(&mut p, token);
        return p;
    }
    // Enough of the pointer for the cut: the prefix's head, then the token's.
    let mut p = String::with_capacity(MAX_PATH_BYTES + 8);
    p.push_str(&prefix[..floor_char_boundary(prefix, MAX_PATH_BYTES + 4)]);
    if p.len() == prefix.len() {
        let room = MAX_PATH_BYTES + 4 - p.len();
        push_pointer_token(&mut p, &token[..floor_char_boundary(token, room)]);
    }
    let cut = floor_char_boundary(&p, MAX_PATH_BYTES);
    p.truncate(cut);
    p.push_str(&format!("…(+{} bytes)", full - cut));
    p
}

#[cfg(test)]
mod tests {
    #[test]
    fn cut_text_examples() {
        use crate::diagnostic::cut_text;
        assert_eq!(cut_text("/headers/abcdef", 11), "/headers/ab…(+4 bytes)");
        assert_eq!(cut_text("/a/é", 4), "/a/…(+2 bytes)");
        assert_eq!(cut_text("/a", 4), "/a");
    }

    #[test]
    fn quoted_examples() {
        use crate::diagnostic::quoted;
        assert_eq!(quoted("a\"b").to_string(), r#""a\"b""#);
        assert_eq!(
            quoted(&"x".repeat(70)).to_string(),
            format!("{:?}…(+6 bytes)", "x".repeat(64))
        );
    }

    #[test]
    fn push_capped_examples() {
        use crate::diagnostic::{push_capped, Diagnostic, ErrorCode, MAX_DIAGNOSTICS_PER_LINE};
        let mut list = Vec::new();
        for i in 0..MAX_DIAGNOSTICS_PER_LINE + 5 {
            push_capped(&mut list, ErrorCode::DuplicateKey, || {
                Diagnostic::new(ErrorCode::DuplicateKey, format!("/k{i}"), "repeated")
            });
        }
        push_capped(&mut list, ErrorCode::WrongType, || {
            Diagnostic::new(ErrorCode::WrongType, "/queue", "expected a string")
        });
        assert_eq!(list.len(), MAX_DIAGNOSTICS_PER_LINE + 2);
        assert_eq!(list[MAX_DIAGNOSTICS_PER_LINE].code, ErrorCode::WrongType);
        let last = list.last().unwrap();
        assert_eq!(
            (last.code, last.path.as_str()),
            (ErrorCode::DuplicateKey, "")
        );
        assert_eq!(last.message, "... and 5 more diagnostics on this line");
    }

    use super::*;

    #[test]
    fn every_code_round_trips_its_name() {
        for &code in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_name(code.as_str()), Some(code));
        }
        assert_eq!(ErrorCode::from_name("NOPE"), None);
    }

    #[test]
    fn warnings_are_the_three_of_the_spec() {
        let warnings: Vec<_> = ErrorCode::ALL
            .iter()
            .filter(|c| c.is_warning())
            .map(|c| c.as_str())
            .collect();
        assert_eq!(
            warnings,
            ["ID_TIME_MISMATCH", "CREATED_AFTER_START", "CHOKAQ_LIMIT"]
        );
    }

    #[test]
    fn long_pointers_are_cut_as_a_built_and_cut_one_would_be() {
        for (prefix, token) in [
            ("", "k".repeat(80_000)),
            ("/headers", "a/b~".repeat(100)),
            (&*"/x".repeat(200), "y".to_owned()),
            ("/é", "é".repeat(300)),
            (&*format!("/{}", "é".repeat(127)), "~~".to_owned()),
        ] {
            let mut whole = prefix.to_owned();
            push_pointer_token(&mut whole, &token);
            let got = pointer(prefix, &token);
            assert_eq!(got, cut_text(&whole, MAX_PATH_BYTES), "{prefix} {token}");
            assert!(got.len() <= MAX_PATH_BYTES + 24);
        }
    }

    #[test]
    fn the_cap_keeps_the_first_of_every_code_and_sums_up_the_rest() {
        let d = |code, i: usize| move || Diagnostic::new(code, format!("/k{i}"), "m");
        let mut list = Vec::new();
        for i in 0..1000 {
            push_capped(
                &mut list,
                ErrorCode::DuplicateKey,
                d(ErrorCode::DuplicateKey, i),
            );
            if i == 500 {
                push_capped(
                    &mut list,
                    ErrorCode::InvalidUtf8,
                    d(ErrorCode::InvalidUtf8, i),
                );
            }
        }
        push_omitted(&mut list, ErrorCode::DuplicateKey, 7);
        assert_eq!(list.len(), MAX_DIAGNOSTICS_PER_LINE + 2);
        assert_eq!(list[MAX_DIAGNOSTICS_PER_LINE].code, ErrorCode::InvalidUtf8);
        let last = list.last().unwrap();
        assert_eq!(omitted_count(last), Some(1000 - 100 + 7));
        assert_eq!(last.message, "... and 907 more diagnostics on this line");
        assert_eq!(
            (last.code, last.path.as_str()),
            (ErrorCode::DuplicateKey, "")
        );
    }

    #[test]
    fn long_paths_and_messages_are_cut() {
        let d = Diagnostic::new(ErrorCode::WrongType, "/".repeat(300), "m".repeat(2000));
        assert_eq!(d.path, format!("{}…(+44 bytes)", "/".repeat(256)));
        let cut = pointer("", &"k".repeat(80_000));
        assert_eq!(
            Diagnostic::new(ErrorCode::DuplicateKey, cut.clone(), "m").path,
            cut
        );
        assert_eq!(d.message, format!("{}…(+976 bytes)", "m".repeat(1024)));
    }

    #[test]
    fn pointer_tokens_are_escaped() {
        assert_eq!(pointer("/headers", "a/b~c"), "/headers/a~1b~0c");
        assert_eq!(pointer("/headers", ""), "/headers/");
        assert_eq!(pointer("", "x"), "/x");
    }
}
