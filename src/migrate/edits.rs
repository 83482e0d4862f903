//! A line rewritten as a few edits of byte ranges: everything between the edits is copied from
//! the input unchanged, which is what makes a migration lossless.

use std::ops::Range;

use crate::envelope::shape::MemberSpan;

/// Replacements of byte ranges of one line, applied in position order.
#[derive(Debug, Default)]
pub struct Edits {
    list: Vec<Edit>,
    /// The inserted bytes of every edit, back to back.
    text: Vec<u8>,
}

#[derive(Debug, Clone)]
struct Edit {
    replaced: Range<usize>,
    text: Range<usize>,
}

impl Edits {
    /// No edits, keeping the allocations.
    pub fn clear(&mut self) {
        self.list.clear();
        self.text.clear();
    }

    /// Replaces `replaced` with `text`.
    pub fn replace(&mut self, replaced: Range<usize>, text: &[u8]) {
        self.replace_with_parts(replaced, &[text]);
    }

    /// Replaces `replaced` with the concatenation of `parts`.
    pub fn replace_with_parts(&mut self, replaced: Range<usize>, parts: &[&[u8]]) {
        let start = self.text.len();
        for part in parts {
            self.text.extend_from_slice(part);
        }
        self.list.push(Edit {
            replaced,
            text: start..self.text.len(),
        });
    }

    /// Inserts at `at` the concatenation of `parts`.
    pub fn insert(&mut self, at: usize, parts: &[&[u8]]) {
        self.replace_with_parts(at..at, parts);
    }

    /// Inserts at `at` the bytes of `prefix` and then `n` in decimal.
    pub fn insert_number(&mut self, at: usize, prefix: &[u8], n: i64) {
        self.replace_with_number_after(at..at, prefix, n);
    }

    /// Replaces `replaced` with `n` in decimal.
    pub fn replace_with_number(&mut self, replaced: Range<usize>, n: i64) {
        self.replace_with_number_after(replaced, b"", n);
    }

    fn replace_with_number_after(&mut self, replaced: Range<usize>, prefix: &[u8], n: i64) {
        // Formatted on the stack: nothing allocated.
        let mut digits = itoa::Buffer::new();
        self.replace_with_parts(replaced, &[prefix, digits.format(n).as_bytes()]);
    }

    /// Deletes `range`.
    pub fn delete(&mut self, range: Range<usize>) {
        self.replace(range, b"");
    }

    /// Deletes the members of one object for which `remove` holds, with the separators that go
    /// with them, keeping every other byte: a member after another goes with the comma before
    /// it; a leading member with the comma after it.
    pub fn remove_members(&mut self, members: &[MemberSpan], remove: impl Fn(usize) -> bool) {
        let Some(first_kept) = (0..members.len()).find(|&i| !remove(i)) else {
            if let (Some(first), Some(last)) = (members.first(), members.last()) {
                self.delete(first.key_start..last.value_end);
            }
            return;
        };
        if first_kept > 0 {
            self.delete(members[0].key_start..members[first_kept].key_start);
        }
        for i in first_kept + 1..members.len() {
            if remove(i) {
                self.delete(members[i - 1].value_end..members[i].value_end);
            }
        }
    }

    /// Where the text of the edit that replaces from `start` lies in what [`apply`](Self::apply)
    /// last wrote, counted from the start of the edited line.
    #[cfg(feature = "stream")]
    pub fn output_position(&self, start: usize) -> usize {
        let mut shift = 0isize;
        for edit in self.list.iter().take_while(|e| e.replaced.start < start) {
            shift += edit.text.len() as isize - edit.replaced.len() as isize;
        }
        start.saturating_add_signed(shift)
    }

    /// Appends `line` with the edits applied to `out`. Edits must not overlap; insertions at one
    /// position keep the order they were made in.
    pub fn apply(&mut self, line: &[u8], out: &mut Vec<u8>) -> bool {
        self.list.sort_by_key(|e| e.replaced.start);
        let kept = out.len();
        out.reserve(line.len() + self.text.len());
        let mut at = 0;
        for edit in &self.list {
            if edit.replaced.start < at || edit.replaced.end > line.len() {
                // Overlapping edits: only a document that is not a valid envelope gets them.
                out.truncate(kept);
                return false;
            }
            out.extend_from_slice(&line[at..edit.replaced.start]);
            out.extend_from_slice(&self.text[edit.text.clone()]);
            at = edit.replaced.end;
        }
        out.extend_from_slice(&line[at..]);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::JsonParser;

    fn removed(line: &[u8], remove: &[usize]) -> String {
        let mut parser = JsonParser::new();
        let doc = parser.parse(line, &mut Vec::new()).unwrap();
        let (mut nodes, mut members) = (Vec::new(), Vec::new());
        doc.node_spans(line, &mut nodes);
        crate::envelope::spans::members(doc.root(), &nodes, &mut members);
        let mut edits = Edits::default();
        edits.remove_members(&members, |i| remove.contains(&i));
        let mut out = Vec::new();
        edits.apply(line, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn members_go_with_their_separators() {
        let line = br#"{ "a":1 , "b":2,"c":3 }"#;
        assert_eq!(removed(line, &[]), r#"{ "a":1 , "b":2,"c":3 }"#);
        assert_eq!(removed(line, &[0]), r#"{ "b":2,"c":3 }"#);
        assert_eq!(removed(line, &[1]), r#"{ "a":1,"c":3 }"#);
        assert_eq!(removed(line, &[2]), r#"{ "a":1 , "b":2 }"#);
        assert_eq!(removed(line, &[0, 1]), r#"{ "c":3 }"#);
        assert_eq!(removed(line, &[1, 2]), r#"{ "a":1 }"#);
        assert_eq!(removed(line, &[0, 2]), r#"{ "b":2 }"#);
        assert_eq!(removed(line, &[0, 1, 2]), r#"{  }"#);
    }

    #[test]
    fn insertions_at_one_place_keep_their_order() {
        let mut edits = Edits::default();
        edits.insert(1, &[b"x"]);
        edits.replace(2..3, b"Z");
        edits.insert(1, &[b"y", b"!"]);
        let mut out = Vec::new();
        edits.apply(b"abcd", &mut out);
        assert_eq!(out, b"axy!bZd");
    }
}
