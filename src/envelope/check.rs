//! [`Checker`]: judges one line after another on one thread, by the fastest path that can
//! settle it, and hands back a typed view of a valid envelope.

use super::single_pass::{Clean, SinglePass};
use super::view::{EnvelopeRef, Repr};
use super::{EnvelopeRules, Verdict};
use crate::diagnostic::Diagnostic;
use crate::framing::{Line, LineKind, DEFAULT_MAX_LINE_BYTES};
use crate::json::{Document, JsonParser};

/// Judges lines against the rules, one at a time, reusing its buffers: make one per thread
/// (it is `Send`) and give it every line that thread reads.
///
/// Each line is tried first by the single pass, which settles a valid envelope with nothing
/// to warn about without building a tape; any other line is judged on its tape, where every
/// broken rule gets its diagnostic. Either way the answer is the same (the two paths are
/// tested against each other), and a valid line comes back as an [`EnvelopeRef`].
///
/// ```
/// use rdq_envelope::envelope::Checker;
/// use rdq_envelope::{EnvelopeRules, ErrorCode, RuleOptions};
///
/// let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
/// let checked = checker.check(br#"{"envelope_version":1,"id":"01hwt"}"#);
/// assert!(!checked.is_valid());
/// let codes: Vec<_> = checked.verdict().errors.iter().map(|d| (d.code, d.path.as_str())).collect();
/// assert!(codes.contains(&(ErrorCode::InvalidId, "/id")));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Checker {
    rules: EnvelopeRules,
    max_line_bytes: usize,
    plain_texts: bool,
    single: SinglePass,
    parser: JsonParser,
    verdict: Verdict,
}

impl Checker {
    /// A checker for `rules`, with the default reader cap
    /// ([`DEFAULT_MAX_LINE_BYTES`]).
    ///
    /// ```
    /// use rdq_envelope::envelope::Checker;
    /// use rdq_envelope::{EnvelopeRules, RuleOptions};
    ///
    /// let checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// assert_eq!(checker.rules().options().max_envelope_bytes, 1 << 20);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(rules: EnvelopeRules) -> Self {
        Checker {
            rules,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            plain_texts: false,
            single: SinglePass::default(),
            parser: JsonParser::new(),
            verdict: Verdict::default(),
        }
    }

    /// The reader cap: a longer line is `LINE_TOO_LONG` (docs/envelope.md#reader-cap).
    ///
    /// ```
    /// use rdq_envelope::envelope::Checker;
    /// use rdq_envelope::{EnvelopeRules, ErrorCode, RuleOptions};
    ///
    /// let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?).with_max_line_bytes(8);
    /// assert!(checker.check(b"{\"queue\":1}").verdict().has_error(ErrorCode::LineTooLong));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_max_line_bytes(mut self, max_line_bytes: usize) -> Self {
        self.max_line_bytes = max_line_bytes;
        self
    }

    /// Makes every [`Text`](super::Text) of the views plain: a valid line whose strings hold
    /// escapes is then read from its tape, which decodes them, instead of from the single
    /// pass's ranges (error messages excepted: their escapes are common, so they stay
    /// [`Text::Escaped`](super::Text::Escaped) there). For callers that compare many texts.
    ///
    /// ```
    /// use rdq_envelope::envelope::{Checker, Text};
    /// use rdq_envelope::{EnvelopeRules, RuleOptions};
    ///
    /// let line = br#"{"envelope_version":1,"id":"01HWT0D7G0F8ENKHRJHCSSPV8Q","queue":"mail","handler_ref":"send","payload":"e30=","payload_content_type":"application/json","headers":{"note":"caf\u00e9"},"status":"PENDING","attempt_count":0,"redrive_count":0,"next_attempt_at":"2024-05-01T12:00:00.000Z","lease_expires_at":null,"created_at":"2024-05-01T12:00:00.000Z","attempts":[]}"#;
    /// let rules = EnvelopeRules::new(RuleOptions::default())?;
    /// let mut fast = Checker::new(rules.clone());
    /// assert_eq!(fast.check(line).envelope().unwrap().header("note"), Some(Text::Escaped(r"caf\u00e9")));
    /// let mut plain = Checker::new(rules).with_plain_texts();
    /// assert_eq!(plain.check(line).envelope().unwrap().header("note"), Some(Text::Plain("café")));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_plain_texts(mut self) -> Self {
        self.plain_texts = true;
        self
    }

    /// The rules this checker judges by.
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// assert!(!checker.rules().options().submit);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn rules(&self) -> &EnvelopeRules {
        &self.rules
    }

    /// Judges `line` (its content, without terminator).
    ///
    /// ```
    /// use rdq_envelope::envelope::Checker;
    /// use rdq_envelope::{EnvelopeRules, RuleOptions};
    ///
    /// let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// let checked = checker.check(b"not json");
    /// assert!(!checked.is_valid() && checked.envelope().is_none());
    /// assert_eq!(checked.verdict().errors[0].code.as_str(), "MALFORMED_JSON");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn check<'c>(&'c mut self, line: &'c [u8]) -> Checked<'c> {
        if line.len() > self.max_line_bytes {
            return self.too_long(line.len() as u64);
        }
        self.judge(line)
    }

    /// Judges a line from a [`LineReader`](crate::framing::LineReader): one over the reader
    /// cap (kept only in part) is `LINE_TOO_LONG`. A blank line should not be judged: the
    /// rules call it invalid JSON, where a stream skips it (docs/envelope.md#blank-lines).
    ///
    /// ```
    /// use rdq_envelope::envelope::Checker;
    /// use rdq_envelope::framing::LineReader;
    /// use rdq_envelope::{EnvelopeRules, ErrorCode, RuleOptions};
    ///
    /// let mut reader = LineReader::with_max_line_bytes(&b"[1, 2, 3]\n"[..], 4);
    /// let line = reader.next_line()?.expect("a line");
    /// let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?).with_max_line_bytes(4);
    /// assert!(checker.check_line(&line).verdict().has_error(ErrorCode::LineTooLong));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn check_line<'c>(&'c mut self, line: &Line<'c>) -> Checked<'c> {
        if line.kind == LineKind::TooLong {
            let checked = self.too_long(line.len);
            number_cold(checked.verdict, line.number);
            return checked;
        }
        // The reader held the line to its own cap already.
        let checked = self.judge(line.content);
        if !checked.verdict.errors.is_empty() || !checked.verdict.warnings.is_empty() {
            number_cold(checked.verdict, line.number);
        }
        checked
    }

    /// Judges `line` on its tape, even when the single pass could settle it: for a caller that
    /// reads what the view does not hold (members the rules do not know, through
    /// [`Checked::document`]), or whose own fast path declined the line. The reader cap, a
    /// limit of reading, is not applied (the line may have been made in memory); the size
    /// limits are.
    ///
    /// ```
    /// use rdq_envelope::envelope::{Checker, JsonText, Producer, Submit};
    /// use rdq_envelope::{EnvelopeRules, RuleOptions};
    ///
    /// // A task with a member the rules do not know.
    /// let t0 = "2024-05-01T12:00:00.000Z".parse()?;
    /// let mut task = Producer::with_clock(move || t0).submit(Submit::new("mail", "send", b"{}".to_vec(), "application/json")?)?;
    /// task.insert_unknown("x-tenant", JsonText::string("acme"))?;
    /// let line = task.to_json();
    /// let line = line.as_bytes();
    /// let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// let checked = checker.check_on_tape(line);
    /// assert!(checked.is_valid());
    /// let tenant = checked.document().and_then(|doc| doc.root().get("x-tenant")?.as_str().map(str::to_owned));
    /// assert_eq!(tenant.as_deref(), Some("acme"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn check_on_tape<'c>(&'c mut self, line: &'c [u8]) -> Checked<'c> {
        let Checker {
            rules,
            parser,
            verdict,
            ..
        } = self;
        let judged = match rules.check_line(parser, line, verdict) {
            Some(doc) => Judged::Tape(doc),
            None => Judged::Unparsed,
        };
        Checked {
            judged,
            verdict,
            line,
        }
    }

    /// From now on, also records where the members a migration edits are, for the lines the
    /// single pass accepts ([`Checked::single_pass`]).
    #[cfg(feature = "stream")]
    pub(crate) fn record_shape(&mut self) {
        self.single.record_shape();
    }

    #[cold]
    fn too_long(&mut self, len: u64) -> Checked<'_> {
        self.verdict.clear();
        self.verdict
            .errors
            .push(Diagnostic::line_too_long(len, self.max_line_bytes));
        Checked {
            judged: Judged::Unparsed,
            verdict: &mut self.verdict,
            line: &[],
        }
    }

    fn judge<'c>(&'c mut self, line: &'c [u8]) -> Checked<'c> {
        if let Some(clean) = self.rules.clean(&mut self.single, line) {
            if !self.plain_texts || self.single.fields().plain {
                self.verdict.clear();
                self.verdict.version = Some(clean.version);
                return Checked {
                    judged: Judged::Clean {
                        line,
                        single: &self.single,
                        clean,
                        rules: &self.rules,
                        parser: &mut self.parser,
                    },
                    verdict: &mut self.verdict,
                    line,
                };
            }
        }
        self.check_on_tape(line)
    }
}

/// Gives every diagnostic of `verdict` its line's `number`: for a line that has something to
/// report, so that a valid line costs nothing more.
#[cold]
fn number_cold(verdict: &mut Verdict, number: u64) {
    for d in verdict.errors.iter_mut().chain(verdict.warnings.iter_mut()) {
        d.line = Some(number);
    }
}

/// A [`Checker`]'s judgement of one line: the verdict, and a view of the envelope when it is
/// valid. It borrows the checker until it is dropped.
#[derive(Debug)]
pub struct Checked<'c> {
    judged: Judged<'c>,
    verdict: &'c mut Verdict,
    /// The line judged.
    line: &'c [u8],
}

/// How the line was judged.
#[derive(Debug)]
enum Judged<'c> {
    /// The single pass accepted it; the rules and the parser are kept to judge it again on
    /// its tape ([`Checked::on_tape`]).
    // Only the stream layer's operations (`migrate`, `redrive`) ask for them again.
    #[cfg_attr(not(feature = "stream"), allow(dead_code))]
    Clean {
        line: &'c [u8],
        single: &'c SinglePass,
        clean: Clean,
        rules: &'c EnvelopeRules,
        parser: &'c mut JsonParser,
    },
    /// On its tape (valid or not).
    Tape(Document<'c>),
    /// Not parsed: over the reader cap or a size limit, or not JSON.
    Unparsed,
}

impl<'c> Checked<'c> {
    /// Whether the line is a valid envelope (warnings allowed).
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// assert!(checked.is_valid());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_valid(&self) -> bool {
        self.verdict.is_valid()
    }

    /// The errors and warnings, and the version when it is a supported one. The errors are
    /// empty exactly when the line is valid.
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// assert!(checked.verdict().errors.is_empty());
    /// assert_eq!(checked.verdict().version, Some(2));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn verdict(&self) -> &Verdict {
        self.verdict
    }

    /// The verdict, for an operation that adds its own reasons to reject a valid line (a
    /// migration's refusal, a size limit after rewriting), and the tape when there is one.
    #[cfg(feature = "stream")]
    pub(crate) fn verdict_mut(&mut self) -> (&mut Verdict, Option<&Document<'c>>) {
        let doc = match &self.judged {
            Judged::Tape(doc) => Some(doc),
            _ => None,
        };
        (self.verdict, doc)
    }

    /// A typed view of the envelope, when the line is valid.
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// assert_eq!(checked.envelope().map(|e| e.status().as_str()), Some("DEAD"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn envelope(&self) -> Option<EnvelopeRef<'_>> {
        if !self.is_valid() {
            return None;
        }
        let version = self.verdict.version.unwrap_or(1);
        let repr = match &self.judged {
            Judged::Clean { line, single, .. } => Repr::Ranges {
                line,
                fields: single.fields(),
            },
            Judged::Tape(doc) => Repr::Tape(doc.root()),
            Judged::Unparsed => return None,
        };
        Some(EnvelopeRef::new(
            repr,
            version,
            &self.verdict.warnings,
            self.line,
        ))
    }

    /// The line's parsed JSON, when it was judged on its tape (valid or not): a line the
    /// single pass settled, or one that is not JSON, has none.
    ///
    /// ```
    /// # use rdq_envelope::{envelope::Checker, EnvelopeRules, RuleOptions};
    /// # let line = &rdq_envelope::test_support::dead_v2_line()[..];
    /// # let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
    /// # let checked = checker.check(line);
    /// // The single pass settled this line: it has no tape.
    /// assert!(checked.document().is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn document(&self) -> Option<&Document<'c>> {
        match &self.judged {
            Judged::Tape(doc) => Some(doc),
            _ => None,
        }
    }

    /// The line judged again on its tape, when the single pass settled it: for an operation
    /// whose own fast path declined the line (a migration refused, a redrive not possible),
    /// so that the tape path says why. Any other judgement is returned as it is.
    #[cfg(feature = "stream")]
    pub(crate) fn on_tape(self) -> Checked<'c> {
        let Checked {
            judged,
            verdict,
            line: judged_line,
        } = self;
        let judged = match judged {
            Judged::Clean {
                line,
                rules,
                parser,
                ..
            } => match rules.check_line(parser, line, verdict) {
                Some(doc) => Judged::Tape(doc),
                None => Judged::Unparsed,
            },
            other => other,
        };
        Checked {
            judged,
            verdict,
            line: judged_line,
        }
    }

    /// What the single pass knew of a line it accepted, and the pass itself (its fields and
    /// shape).
    #[cfg(feature = "stream")]
    pub(crate) fn single_pass(&self) -> Option<(Clean, &SinglePass)> {
        match &self.judged {
            Judged::Clean { single, clean, .. } => Some((*clean, single)),
            _ => None,
        }
    }
}
