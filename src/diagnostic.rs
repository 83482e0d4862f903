//! Error codes and diagnostics: the data every layer reports, rendered for people only at the
//! edge (ENVELOPE.md §6).

use std::fmt;

/// Whether a code rejects a line or is only reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Severity {
    /// The line is invalid and never emitted.
    Error,
    /// Reported, never a reason to reject (ENVELOPE.md §3.4).
    Warning,
}

macro_rules! error_codes {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, $severity:ident; )*) => {
        /// Every code of ENVELOPE.md §6, errors and warnings.
        ///
        /// The spelling on the wire is [`ErrorCode::as_str`]; [`ErrorCode::ALL`] lists them in
        /// the order of the spec.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum ErrorCode {
            $( $(#[$doc])* $variant, )*
        }

        impl ErrorCode {
            /// Every code, in the order of ENVELOPE.md §6.
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
    /// The line's content is longer than the reader cap (§1.5).
    LineTooLong = "LINE_TOO_LONG", Error;
    /// Bytes that are not UTF-8, or an unpaired surrogate escape (§2.1).
    InvalidUtf8 = "INVALID_UTF8", Error;
    /// Not RFC 8259 JSON, or data after the value (§2.1).
    MalformedJson = "MALFORMED_JSON", Error;
    /// One well-formed value that is not an object (§2.2).
    NotAnObject = "NOT_AN_OBJECT", Error;
    /// An object repeats a key (§2.3).
    DuplicateKey = "DUPLICATE_KEY", Error;
    /// Arrays and objects nested deeper than 128 (§2.4).
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
    /// The ULID's time and `created_at` differ by more than a second.
    IdTimeMismatch = "ID_TIME_MISMATCH", Warning;
    /// `created_at` is later than the first attempt's start.
    CreatedAfterStart = "CREATED_AFTER_START", Warning;
    /// A ChokaQ value that rdq had to bound (CHOKAQ.md).
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

/// One broken rule: `{"code", "path", "message"}` of ENVELOPE.md §6.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// What rule was broken.
    pub code: ErrorCode,
    /// RFC 6901 pointer of the offending value; `""` for the whole line.
    pub path: String,
    /// What a person reads.
    pub message: String,
}

impl Diagnostic {
    /// A diagnostic of `code` at `path`.
    pub fn new(code: ErrorCode, path: impl Into<String>, message: impl Into<String>) -> Self {
        Diagnostic {
            code,
            path: path.into(),
            message: message.into(),
        }
    }

    /// The reader's verdict on a line longer than its cap (§1.5).
    #[cold]
    pub fn line_too_long(len: u64, max_line_bytes: usize) -> Self {
        Diagnostic::new(
            ErrorCode::LineTooLong,
            "",
            format!("line is {len} bytes, over the reader cap of {max_line_bytes} bytes"),
        )
    }
}

/// Appends `token` to an RFC 6901 pointer as one reference token (`~` → `~0`, `/` → `~1`).
pub fn push_pointer_token(pointer: &mut String, token: &str) {
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
/// `/headers/a~1b`.
pub fn pointer(prefix: &str, token: &str) -> String {
    let mut p = String::with_capacity(prefix.len() + token.len() + 1);
    p.push_str(prefix);
    push_pointer_token(&mut p, token);
    p
}

#[cfg(test)]
mod tests {
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
    fn pointer_tokens_are_escaped() {
        assert_eq!(pointer("/headers", "a/b~c"), "/headers/a~1b~0c");
        assert_eq!(pointer("/headers", ""), "/headers/");
        assert_eq!(pointer("", "x"), "/x");
    }
}
