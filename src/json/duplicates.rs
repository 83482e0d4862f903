//! Duplicate keys: found on the tape in one pass (pairwise in small objects, a hash table or a
//! sort in large ones), keys compared after unescaping; reported with their pointers, capped.

use simd_json::Node;

use super::*;

#[cold]
pub(super) fn duplicate_key(path: String) -> Diagnostic {
    Diagnostic::new(
        ErrorCode::DuplicateKey,
        path,
        "this key appears more than once in its object",
    )
}

/// Whether any object on the tape repeats a key. Visits each node once; keys are compared
/// after unescaping (simd-json's strings are decoded).
pub(super) fn has_duplicate_keys(
    nodes: &[Node<'_>],
    keys: &mut Vec<usize>,
    table: &mut KeyTable,
) -> bool {
    nodes.iter().enumerate().any(|(at, node)| match *node {
        Node::Object { len, .. } if len >= 2 && !keys_surely_distinct(nodes, at, len) => {
            object_key_indexes(nodes, at, keys);
            repeats(nodes, keys, table)
        }
        _ => false,
    })
}

/// A filter in front of the exact check: true when the object's keys have pairwise different
/// [`key_class`]es, which proves them distinct. The classes were chosen so that the keys of
/// an envelope and its parts never share one; any other shared class only costs the exact
/// check.
#[inline]
fn keys_surely_distinct(nodes: &[Node<'_>], at: usize, len: usize) -> bool {
    let mut seen = [0u64; 4];
    let mut key = at + 1;
    for _ in 0..len {
        let class = key_class(key_at(nodes, key));
        let (word, bit) = (class >> 6, 1u64 << (class & 63));
        if seen[word] & bit != 0 {
            return false;
        }
        seen[word] |= bit;
        key += 1 + subtree_len(nodes, key + 1);
    }
    true
}

/// One of 256 classes of a key, from its length and its first, middle and last bytes.
#[inline]
pub(super) fn key_class(key: &str) -> usize {
    let b = key.as_bytes();
    match (b.first(), b.last()) {
        (Some(&first), Some(&last)) => {
            (b.len() + usize::from(first) + usize::from(last) + 5 * usize::from(b[b.len() / 2]))
                & 255
        }
        _ => 0,
    }
}

/// The tape indexes of the keys of the object at `at`, in order.
pub(super) fn object_key_indexes(nodes: &[Node<'_>], at: usize, keys: &mut Vec<usize>) {
    keys.clear();
    let Node::Object { len, .. } = nodes[at] else {
        return;
    };
    let mut key = at + 1;
    for _ in 0..len {
        keys.push(key);
        key += 1 + subtree_len(nodes, key + 1);
    }
}

fn key_at<'a>(nodes: &[Node<'a>], at: usize) -> &'a str {
    match nodes[at] {
        Node::String(s) => s,
        _ => "",
    }
}

/// Whether `keys` (tape indexes of one object's keys) holds the same key twice.
fn repeats(nodes: &[Node<'_>], keys: &mut [usize], scratch: &mut KeyTable) -> bool {
    if keys.len() <= PAIRWISE_KEYS {
        return keys.iter().enumerate().any(|(i, &a)| {
            keys[i + 1..]
                .iter()
                .any(|&b| key_at(nodes, a) == key_at(nodes, b))
        });
    }
    match scratch.repeats(nodes, keys) {
        Some(found) => found,
        // Too many collisions for a hash table (crafted keys): sorting is n log n whatever
        // the keys are.
        None => repeats_by_sorting(nodes, keys),
    }
}

pub(super) fn repeats_by_sorting(nodes: &[Node<'_>], keys: &mut [usize]) -> bool {
    keys.sort_unstable_by_key(|&k| key_at(nodes, k));
    keys.windows(2)
        .any(|w| key_at(nodes, w[0]) == key_at(nodes, w[1]))
}

/// A reusable open-addressing set of key positions, with a per-parser random seed.
pub(super) struct KeyTable {
    slots: Vec<u32>,
    hasher: foldhash::fast::RandomState,
}

impl KeyTable {
    const EMPTY: u32 = u32::MAX;

    pub(super) fn new() -> Self {
        KeyTable {
            slots: Vec::new(),
            hasher: foldhash::fast::RandomState::default(),
        }
    }

    /// `Some(true)` at the first repeated key, `Some(false)` when all differ, `None` when the
    /// probes ran over their budget of a few per key.
    fn repeats(&mut self, nodes: &[Node<'_>], keys: &[usize]) -> Option<bool> {
        use std::hash::BuildHasher;
        let size = (keys.len() * 2).next_power_of_two();
        let mask = size - 1;
        self.slots.clear();
        self.slots.resize(size, Self::EMPTY);
        let mut budget = keys.len() * 8;
        for (i, &k) in keys.iter().enumerate() {
            let key = key_at(nodes, k);
            let mut at = self.hasher.hash_one(key) as usize & mask;
            loop {
                let slot = self.slots[at];
                if slot == Self::EMPTY {
                    self.slots[at] = i as u32;
                    break;
                }
                if key_at(nodes, keys[slot as usize]) == key {
                    return Some(true);
                }
                budget = budget.checked_sub(1)?;
                at = (at + 1) & mask;
            }
        }
        Some(false)
    }
}

/// One diagnostic per repeated member, with its pointer. Walks with an explicit path so the
/// cost is linear in the tape whatever the number of repetitions.
#[cold]
pub(super) fn duplicate_key_diagnostics(nodes: &[Node<'_>], errors: &mut Vec<Diagnostic>) {
    fn walk(nodes: &[Node<'_>], at: usize, path: &mut String, errors: &mut Vec<Diagnostic>) {
        let len_before = path.len();
        match nodes[at] {
            Node::Object { .. } => {
                let mut keys = Vec::new();
                object_key_indexes(nodes, at, &mut keys);
                let mut seen = std::collections::HashSet::with_capacity(keys.len());
                for key in keys {
                    let name = key_at(nodes, key);
                    if !seen.insert(name) {
                        push_capped(errors, ErrorCode::DuplicateKey, || {
                            duplicate_key(pointer(path, name))
                        });
                    }
                    crate::diagnostic::push_pointer_token(path, name);
                    walk(nodes, key + 1, path, errors);
                    path.truncate(len_before);
                }
            }
            Node::Array { len, .. } => {
                let mut element = at + 1;
                for i in 0..len {
                    path.push('/');
                    path.push_str(&i.to_string());
                    walk(nodes, element, path, errors);
                    path.truncate(len_before);
                    element += subtree_len(nodes, element);
                }
            }
            _ => {}
        }
    }
    // Recursion is bounded: simd-json refused anything nested deeper than MAX_DEPTH.
    walk(nodes, 0, &mut String::new(), errors);
}
