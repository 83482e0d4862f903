//! Where the members of an object and the elements of an array lie in the line's bytes, from
//! the document's node spans ([`Document::node_spans`](crate::json::Document::node_spans)):
//! no second parse and no scan of the line.

use crate::json::Value;

/// One member of an object: `"key"` starts at `key_start`, its value spans
/// `value_start..value_end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemberSpan {
    /// The key's opening quote.
    pub key_start: usize,
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
            value_start: nodes[at].0,
            value_end: nodes[at].1,
        }
    }));
}

/// The byte range of `value`.
pub fn of(value: Value<'_>, nodes: &[(usize, usize)]) -> (usize, usize) {
    nodes[value.tape_index()]
}
