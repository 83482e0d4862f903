//! Where the members of an object and the elements of an array lie in the line's bytes, from
//! the document's node spans ([`Document::node_spans`](crate::json::Document::node_spans)):
//! no second parse and no scan of the line.

#[cfg(feature = "filter")]
use crate::json::Document;
use crate::json::Value;

/// One member of an object: `"key"` spans `key_start..key_end` (quotes included), its value
/// `value_start..value_end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemberSpan {
    /// The key's opening quote.
    pub key_start: usize,
    /// One past the key's closing quote.
    pub key_end: usize,
    /// The value's first byte.
    pub value_start: usize,
    /// One past the value's last byte.
    pub value_end: usize,
}

/// The members of `object`, in order, into `out`.
pub fn members(object: Value<'_>, nodes: &[(usize, usize)], out: &mut Vec<MemberSpan>) {
    out.clear();
    out.extend(object.members().map(|(_, value)| {
        let at = value.tape_index();
        MemberSpan {
            // A member's key is the node right before its value.
            key_start: nodes[at - 1].0,
            key_end: nodes[at - 1].1,
            value_start: nodes[at].0,
            value_end: nodes[at].1,
        }
    }));
}

/// Each member's key and value as text of `line`, for members whose keys hold no escape (the
/// single pass's: it sends a line with an escaped key to the tape). For `--where`.
#[cfg(feature = "filter")]
pub fn texts<'l>(
    line: &'l [u8],
    members: &'l [MemberSpan],
) -> impl Iterator<Item = (&'l str, &'l [u8])> + 'l {
    members.iter().map(move |m| {
        let key = &line[m.key_start + 1..m.key_end - 1];
        // The single pass checked the line is UTF-8.
        let key = std::str::from_utf8(key).unwrap_or_default();
        (key, &line[m.value_start..m.value_end])
    })
}

/// Each top-level member of `doc` (parsed from `line`) with its value's text in `line`, from
/// the document's node spans (filled into `nodes`). For `--where`.
#[cfg(feature = "filter")]
pub fn member_texts<'a>(
    doc: &'a Document<'_>,
    line: &'a [u8],
    nodes: &'a mut Vec<(usize, usize)>,
) -> impl Iterator<Item = (&'a str, &'a [u8])> + 'a {
    doc.node_spans(line, nodes);
    let nodes: &'a [(usize, usize)] = nodes;
    doc.root().members().map(move |(key, value)| {
        let (start, end) = of(value, nodes);
        (key, &line[start..end])
    })
}

/// The byte range of `value`.
pub fn of(value: Value<'_>, nodes: &[(usize, usize)]) -> (usize, usize) {
    nodes[value.tape_index()]
}
