//! What an owned envelope keeps without knowing it: JSON values as their exact text
//! ([`JsonText`]: unknown members, an error's `detail`) and the unknown members of each object
//! ([`UnknownMembers`]), in their order and spelling.

use std::fmt;

use crate::json::{JsonParser, MAX_DEPTH};

use super::error::EnvelopeError;

/// One JSON value, kept as the exact text it was read as (or given as): numbers, escapes and
/// member order are written back byte for byte.
///
/// ```
/// use rdq_envelope::envelope::JsonText;
///
/// let detail = JsonText::parse(r#"{"retry_after_s":1.5e1,"code":-0}"#)?;
/// assert_eq!(detail.as_str(), r#"{"retry_after_s":1.5e1,"code":-0}"#);
/// assert!(JsonText::parse("[1,").is_err());
/// assert!(JsonText::parse(r#"{"a":1,"a":2}"#).is_err());
/// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct JsonText {
    text: Box<str>,
    /// How deeply arrays and objects nest inside it (0 for a scalar): where it may go.
    depth: u16,
}

impl JsonText {
    /// `text` when it is one JSON value as the envelope's JSON layer accepts it (RFC 8259, no
    /// repeated key in any object, no unpaired surrogate escape, nesting within the limit);
    /// white space around it is dropped.
    ///
    /// ```
    /// use rdq_envelope::envelope::JsonText;
    /// assert_eq!(JsonText::parse(" null ")?.as_str(), "null");
    /// assert!(JsonText::parse(r#""\ud800""#).is_err());
    /// assert!(JsonText::parse(r#"1,"queue":"x""#).is_err());
    /// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
    /// ```
    pub fn parse(text: &str) -> Result<JsonText, EnvelopeError> {
        let text = text.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r'));
        // The JSON layer judges objects: the value is judged as the one member of one.
        let mut wrapped = Vec::with_capacity(text.len() + 6);
        wrapped.extend_from_slice(b"{\"v\":");
        wrapped.extend_from_slice(text.as_bytes());
        wrapped.push(b'}');
        let mut errors = Vec::new();
        let mut parser = JsonParser::new();
        // One member, or the text held more than one value (`1,"queue":"x"` would otherwise
        // pass as the wrapper's second member).
        let parsed = parser
            .parse(&wrapped, &mut errors)
            .is_some_and(|doc| doc.root().len() == 1);
        if !parsed || text.is_empty() {
            let why = errors
                .first()
                .map_or_else(|| "not one JSON value".to_owned(), |d| d.message.clone());
            return Err(EnvelopeError::InvalidJson { reason: why });
        }
        Ok(JsonText {
            depth: nesting(text.as_bytes()),
            text: text.into(),
        })
    }

    /// Text the JSON layer already accepted, read from a valid line.
    pub(crate) fn trusted(text: &str) -> JsonText {
        JsonText {
            depth: nesting(text.as_bytes()),
            text: text.into(),
        }
    }

    /// The JSON text.
    ///
    /// ```
    /// use rdq_envelope::envelope::JsonText;
    /// assert_eq!(JsonText::parse("[1, 2]")?.as_str(), "[1, 2]");
    /// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
    /// ```
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// How deeply arrays and objects nest inside it: 0 for a scalar, 1 for `[]`.
    ///
    /// ```
    /// use rdq_envelope::envelope::JsonText;
    /// assert_eq!(JsonText::parse(r#"{"a":[1]}"#)?.depth(), 2);
    /// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
    /// ```
    pub fn depth(&self) -> usize {
        usize::from(self.depth)
    }

    /// A JSON string holding `text`.
    ///
    /// ```
    /// use rdq_envelope::envelope::JsonText;
    /// assert_eq!(JsonText::string("a\"b").as_str(), r#""a\"b""#);
    /// ```
    pub fn string(text: &str) -> JsonText {
        let mut out = Vec::with_capacity(text.len() + 2);
        crate::json::push_string(&mut out, text);
        // The escaper writes ASCII around the text's own UTF-8.
        JsonText::trusted(&String::from_utf8_lossy(&out))
    }

    /// `null`.
    ///
    /// ```
    /// use rdq_envelope::envelope::JsonText;
    /// assert_eq!(JsonText::null().as_str(), "null");
    /// ```
    pub fn null() -> JsonText {
        JsonText::trusted("null")
    }
}

impl fmt::Debug for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JsonText({})", self.text)
    }
}

impl fmt::Display for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// How deeply arrays and objects nest in valid JSON `text` (brackets outside strings).
fn nesting(text: &[u8]) -> u16 {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0u16, 0u16, false, false);
    for &b in text {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth = depth.saturating_add(1);
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// One member an envelope's object holds beyond the ones the contract names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UnknownMember {
    name: Box<str>,
    /// The key as written, quotes included (its escapes kept).
    spelling: Box<str>,
    value: JsonText,
}

impl UnknownMember {
    /// The member's name, unescaped.
    ///
    /// ```
    /// use rdq_envelope::envelope::{JsonText, UnknownMembers};
    /// let mut members = UnknownMembers::default();
    /// members.insert("x-export", JsonText::parse("1")?)?;
    /// assert_eq!(members.iter().next().map(|m| m.name()), Some("x-export"));
    /// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The member's value.
    ///
    /// ```
    /// use rdq_envelope::envelope::{JsonText, UnknownMembers};
    /// let mut members = UnknownMembers::default();
    /// members.insert("n", JsonText::parse("1e2")?)?;
    /// assert_eq!(members.iter().next().unwrap().value().as_str(), "1e2");
    /// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
    /// ```
    pub fn value(&self) -> &JsonText {
        &self.value
    }

    /// The key as written (quotes included): escapes read from a line are kept.
    ///
    /// ```
    /// use rdq_envelope::envelope::Envelope;
    /// let line = rdq_envelope::test_support::dead_v2_line();
    /// let text = String::from_utf8(line)?.replacen("}]}", r#"}],"x\u002dy":1}"#, 1);
    /// let envelope = Envelope::from_json(text.as_bytes())?;
    /// let member = envelope.unknown().iter().next().unwrap();
    /// assert_eq!((member.name(), member.spelling()), ("x-y", r#""x\u002dy""#));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn spelling(&self) -> &str {
        &self.spelling
    }
}

/// The unknown members of one object of an envelope, in their order: read from a line, they
/// are written back after the known members, each byte for byte.
///
/// An object's unknown members never repeat a name nor take the name of one of its known
/// members, and their values nest no deeper than the object's place allows: the owned
/// envelope checks both when a member is inserted.
///
/// ```
/// use rdq_envelope::envelope::{JsonText, UnknownMembers};
///
/// let mut members = UnknownMembers::default();
/// members.insert("x_export", JsonText::parse(r#"{"batch":7}"#)?)?;
/// assert_eq!(members.get("x_export").map(|v| v.as_str()), Some(r#"{"batch":7}"#));
/// assert!(members.insert("x_export", JsonText::null()).is_err());
/// assert_eq!(members.len(), 1);
/// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct UnknownMembers {
    members: Vec<UnknownMember>,
    /// The names this object's known members take (empty for a free-standing set).
    reserved: &'static [&'static str],
    /// How deep the object holding these members is (the line's object is 1).
    at_depth: u16,
}

impl UnknownMembers {
    pub(crate) fn for_object(reserved: &'static [&'static str], at_depth: usize) -> Self {
        UnknownMembers {
            members: Vec::new(),
            reserved,
            at_depth: at_depth as u16,
        }
    }

    /// The names taken by known members, and the depth, of the object these are in.
    pub(crate) fn place(&mut self, reserved: &'static [&'static str], at_depth: usize) {
        self.reserved = reserved;
        self.at_depth = at_depth as u16;
    }

    /// A member read from a valid line (its key as written).
    pub(crate) fn push_trusted(&mut self, name: &str, spelling: &str, value: JsonText) {
        self.members.push(UnknownMember {
            name: name.into(),
            spelling: spelling.into(),
            value,
        });
    }

    /// Adds `name` with `value` after the others, refused when the name is taken (by another
    /// unknown member or by a known member of the object) or the value nests too deep for
    /// where it goes.
    ///
    /// ```
    /// use rdq_envelope::envelope::{JsonText, UnknownMembers};
    /// let mut members = UnknownMembers::default();
    /// members.insert("tenant", JsonText::string("acme"))?;
    /// assert_eq!(members.get("tenant").unwrap().as_str(), r#""acme""#);
    /// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
    /// ```
    pub fn insert(&mut self, name: &str, value: JsonText) -> Result<(), EnvelopeError> {
        if self.reserved.contains(&name) || self.get(name).is_some() {
            return Err(EnvelopeError::DuplicateMember { name: name.into() });
        }
        // The object is at `at_depth`; a container value one deeper, and its own nesting.
        let allowed = MAX_DEPTH.saturating_sub(usize::from(self.at_depth.max(1)));
        if value.depth() > allowed {
            return Err(EnvelopeError::NestingTooDeep {
                depth: value.depth(),
                allowed,
            });
        }
        let mut spelling = Vec::with_capacity(name.len() + 2);
        crate::json::push_string(&mut spelling, name);
        self.members.push(UnknownMember {
            name: name.into(),
            spelling: String::from_utf8_lossy(&spelling).into(),
            value,
        });
        Ok(())
    }

    /// Removes the member `name` and returns its value.
    ///
    /// ```
    /// use rdq_envelope::envelope::{JsonText, UnknownMembers};
    /// let mut members = UnknownMembers::default();
    /// members.insert("a", JsonText::null())?;
    /// assert_eq!(members.remove("a"), Some(JsonText::null()));
    /// assert!(members.is_empty());
    /// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
    /// ```
    pub fn remove(&mut self, name: &str) -> Option<JsonText> {
        let at = self.members.iter().position(|m| &*m.name == name)?;
        Some(self.members.remove(at).value)
    }

    /// The value of the member `name`.
    ///
    /// ```
    /// use rdq_envelope::envelope::{JsonText, UnknownMembers};
    /// let mut members = UnknownMembers::default();
    /// members.insert("a", JsonText::parse("[1]")?)?;
    /// assert_eq!(members.get("a").map(|v| v.as_str()), Some("[1]"));
    /// assert!(members.get("b").is_none());
    /// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
    /// ```
    pub fn get(&self, name: &str) -> Option<&JsonText> {
        self.members
            .iter()
            .find(|m| &*m.name == name)
            .map(|m| &m.value)
    }

    /// The members, in order.
    ///
    /// ```
    /// use rdq_envelope::envelope::{JsonText, UnknownMembers};
    /// let mut members = UnknownMembers::default();
    /// members.insert("b", JsonText::null())?;
    /// members.insert("a", JsonText::null())?;
    /// assert_eq!(members.iter().map(|m| m.name()).collect::<Vec<_>>(), ["b", "a"]);
    /// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
    /// ```
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &UnknownMember> {
        self.members.iter()
    }

    /// How many there are.
    ///
    /// ```
    /// use rdq_envelope::envelope::{JsonText, UnknownMembers};
    /// let mut members = UnknownMembers::default();
    /// members.insert("a", JsonText::null())?;
    /// assert_eq!(members.len(), 1);
    /// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether there are none.
    ///
    /// ```
    /// use rdq_envelope::envelope::UnknownMembers;
    /// assert!(UnknownMembers::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Whether a member is named `name`.
    pub(crate) fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_counts_brackets_outside_strings() {
        assert_eq!(nesting(b"1"), 0);
        assert_eq!(nesting(br#"{"a":"[[[{"}"#), 1);
        assert_eq!(nesting(br#"[[1],{"b":["\"]"]}]"#), 3);
    }

    #[test]
    fn a_value_too_deep_for_its_place_is_refused() {
        let mut members = UnknownMembers::for_object(&[], 4);
        let deep = JsonText::parse(&format!("{}{}", "[".repeat(124), "]".repeat(124))).unwrap();
        assert!(members.insert("ok", deep).is_ok());
        let deeper = JsonText::parse(&format!("{}{}", "[".repeat(125), "]".repeat(125))).unwrap();
        assert!(matches!(
            members.insert("no", deeper),
            Err(EnvelopeError::NestingTooDeep { .. })
        ));
    }

    #[test]
    fn a_known_name_is_not_an_unknown_member() {
        let mut members = UnknownMembers::for_object(&["queue"], 1);
        assert!(members.insert("queue", JsonText::null()).is_err());
    }
}
