//! Read-only navigation over a parsed line's simd-json tape.
//!
//! A [`Value`] is a tape index plus the tape: copying it is free, and skipping a subtree is
//! O(1) because container nodes carry their subtree size (`count`).

use simd_json::{Node, StaticNode};

/// The JSON type of a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// `null`
    Null,
    /// `true` or `false`
    Bool,
    /// Any number, integer or not.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

impl ValueKind {
    /// The name used in messages (`"a number"`).
    pub const fn described(self) -> &'static str {
        match self {
            ValueKind::Null => "null",
            ValueKind::Bool => "a boolean",
            ValueKind::Number => "a number",
            ValueKind::String => "a string",
            ValueKind::Array => "an array",
            ValueKind::Object => "an object",
        }
    }
}

/// A value inside a parsed line.
#[derive(Clone, Copy)]
pub struct Value<'a> {
    nodes: &'a [Node<'a>],
    index: usize,
    /// Integers simd-json could not hold, by tape index (sorted); empty on the fast path.
    big_ints: &'a [(usize, i128)],
}

impl std::fmt::Debug for Value<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Value({:?} at {})", self.kind(), self.index)
    }
}

/// Number of tape nodes the value at `index` spans, itself included.
#[inline]
pub(crate) fn subtree_len(nodes: &[Node<'_>], index: usize) -> usize {
    match nodes[index] {
        Node::Object { count, .. } | Node::Array { count, .. } => count + 1,
        _ => 1,
    }
}

impl<'a> Value<'a> {
    pub(crate) fn new(nodes: &'a [Node<'a>], index: usize, big_ints: &'a [(usize, i128)]) -> Self {
        Value {
            nodes,
            index,
            big_ints,
        }
    }

    /// The value's position on the tape (document order, keys counted as nodes).
    pub fn tape_index(&self) -> usize {
        self.index
    }

    /// The value's JSON type.
    #[inline]
    pub fn kind(&self) -> ValueKind {
        match self.nodes[self.index] {
            Node::String(_) => ValueKind::String,
            Node::Object { .. } => ValueKind::Object,
            Node::Array { .. } => ValueKind::Array,
            Node::Static(StaticNode::Null) => ValueKind::Null,
            Node::Static(StaticNode::Bool(_)) => ValueKind::Bool,
            Node::Static(_) => ValueKind::Number,
        }
    }

    /// Whether the value is `null`.
    #[inline]
    pub fn is_null(&self) -> bool {
        matches!(self.nodes[self.index], Node::Static(StaticNode::Null))
    }

    /// The decoded string, if the value is a string.
    #[inline]
    pub fn as_str(&self) -> Option<&'a str> {
        match self.nodes[self.index] {
            Node::String(s) => Some(s),
            _ => None,
        }
    }

    /// The value of a JSON integer: a number written without fraction or exponent
    /// (docs/envelope.md#json-integers; `-0` is 0). Integers beyond `i128` saturate to `i128::MIN`
    /// or `i128::MAX`, which is out of every range the spec names. `None` for any other value,
    /// `1.0` and `1e0` included.
    #[inline]
    pub fn as_integer(&self) -> Option<i128> {
        match self.nodes[self.index] {
            Node::Static(StaticNode::U64(_)) | Node::Static(StaticNode::I64(_))
                if !self.big_ints.is_empty() =>
            {
                self.big_int().or(self.small_int())
            }
            _ => self.small_int(),
        }
    }

    #[inline]
    fn small_int(&self) -> Option<i128> {
        match self.nodes[self.index] {
            Node::Static(StaticNode::U64(n)) => Some(i128::from(n)),
            Node::Static(StaticNode::I64(n)) => Some(i128::from(n)),
            _ => None,
        }
    }

    #[cold]
    fn big_int(&self) -> Option<i128> {
        self.big_ints
            .binary_search_by_key(&self.index, |&(i, _)| i)
            .ok()
            .map(|at| self.big_ints[at].1)
    }

    /// Number of members of an object or elements of an array; 0 for anything else.
    pub fn len(&self) -> usize {
        match self.nodes[self.index] {
            Node::Object { len, .. } | Node::Array { len, .. } => len,
            _ => 0,
        }
    }

    /// Whether [`Value::len`] is 0.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The members of an object, in input order; nothing for any other value.
    pub fn members(&self) -> Members<'a> {
        let remaining = match self.nodes[self.index] {
            Node::Object { len, .. } => len,
            _ => 0,
        };
        Members {
            nodes: self.nodes,
            next: self.index + 1,
            remaining,
            big_ints: self.big_ints,
        }
    }

    /// The elements of an array, in order; nothing for any other value.
    pub fn elements(&self) -> Elements<'a> {
        let remaining = match self.nodes[self.index] {
            Node::Array { len, .. } => len,
            _ => 0,
        };
        Elements {
            nodes: self.nodes,
            next: self.index + 1,
            remaining,
            big_ints: self.big_ints,
        }
    }

    /// The member named `key` (compared after unescaping), if this is an object that has it.
    pub fn get(&self, key: &str) -> Option<Value<'a>> {
        self.members().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// The last element of an array.
    pub fn last_element(&self) -> Option<Value<'a>> {
        self.elements().last()
    }
}

/// Iterator over an object's `(key, value)` pairs.
pub struct Members<'a> {
    nodes: &'a [Node<'a>],
    next: usize,
    remaining: usize,
    big_ints: &'a [(usize, i128)],
}

impl<'a> Iterator for Members<'a> {
    type Item = (&'a str, Value<'a>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let key = match self.nodes[self.next] {
            Node::String(s) => s,
            // simd-json's tape always has a string node before each member value.
            _ => "",
        };
        let value_at = self.next + 1;
        self.next = value_at + subtree_len(self.nodes, value_at);
        Some((key, Value::new(self.nodes, value_at, self.big_ints)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

/// Iterator over an array's elements.
pub struct Elements<'a> {
    nodes: &'a [Node<'a>],
    next: usize,
    remaining: usize,
    big_ints: &'a [(usize, i128)],
}

impl<'a> Iterator for Elements<'a> {
    type Item = Value<'a>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let at = self.next;
        self.next = at + subtree_len(self.nodes, at);
        Some(Value::new(self.nodes, at, self.big_ints))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for Members<'_> {}
impl ExactSizeIterator for Elements<'_> {}

impl Value<'_> {
    /// Appends the value as JSON, from the tape alone: strings escaped as the crate's escaper
    /// does, numbers as the tape holds them (an integer's digits; another number in Rust's
    /// shortest form, which may differ from the line's spelling). For a view with no line
    /// at hand; with the line, its bytes are the value's exact text.
    pub(crate) fn write_json(&self, out: &mut Vec<u8>) {
        match self.nodes[self.index] {
            Node::String(s) => super::push_string(out, s),
            Node::Static(StaticNode::Null) => out.extend_from_slice(b"null"),
            Node::Static(StaticNode::Bool(b)) => {
                out.extend_from_slice(if b { b"true" } else { b"false" })
            }
            // Debug spells every finite f64 as a JSON number (`15.0`, `1e300`).
            Node::Static(StaticNode::F64(f)) if f.is_finite() => {
                out.extend_from_slice(format!("{f:?}").as_bytes())
            }
            Node::Static(StaticNode::F64(_)) => out.push(b'0'),
            Node::Static(_) => {
                let n = self.as_integer().unwrap_or_default();
                out.extend_from_slice(n.to_string().as_bytes());
            }
            Node::Object { .. } => {
                out.push(b'{');
                for (i, (key, value)) in self.members().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    super::push_string(out, key);
                    out.push(b':');
                    value.write_json(out);
                }
                out.push(b'}');
            }
            Node::Array { .. } => {
                out.push(b'[');
                for (i, value) in self.elements().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    value.write_json(out);
                }
                out.push(b']');
            }
        }
    }
}

/// The tape of `{}`: a value for a view that has nothing to read.
static EMPTY_OBJECT: [Node<'static>; 1] = [Node::Object { len: 0, count: 0 }];

impl Value<'static> {
    /// `{}`.
    pub(crate) fn empty_object() -> Value<'static> {
        Value::new(&EMPTY_OBJECT, 0, &[])
    }
}
