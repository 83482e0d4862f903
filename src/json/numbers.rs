//! Numbers simd-json refuses (beyond i64/u64, or whose value does not fit a double): the line
//! is valid JSON, so it is parsed again with same-length stand-ins for those numbers, and the
//! stand-ins are found again on the tape.

use simd_json::{Buffers, Node, Tape};

use super::*;

/// How many numbers one line may have patched before the strict scanner takes over: each
/// patch costs a parse of the whole line, so a line of many huge numbers would be quadratic.
pub(super) const MAX_NUMBER_PATCHES: usize = 8;

/// A big integer's stand-in: it fits every slot (a refused integer is beyond i64 and u64, so
/// at least 20 bytes long) and is found again on the tape by its value ([`locate_big_ints`]).
const BIG_INT_STAND_IN: i64 = i64::MIN + 1;
const BIG_INT_STAND_IN_TEXT: &[u8] = b"-9223372036854775807";

/// Trial parses of a line that simd-json refused, with stand-ins for the numbers it cannot
/// hold. The trials parse a scratch copy (simd-json unescapes strings into its input), so the
/// caller then parses a clean copy for the tape it keeps.
pub(super) struct NumberTrial<'a> {
    pub(super) scratch: &'a mut Vec<u8>,
    pub(super) buffers: &'a mut Buffers,
    pub(super) home: &'a mut Tape<'static>,
    pub(super) key_scratch: &'a mut Vec<usize>,
    pub(super) key_table: &'a mut KeyTable,
}

impl NumberTrial<'_> {
    /// Whether the line passes the JSON layer once its refused numbers have stand-ins:
    /// `patches` then lists them and `big_ints` holds the integers' tape indexes and values.
    /// False sends the line to the strict scanner, which says what is wrong with it.
    pub(super) fn run(
        self,
        line: &[u8],
        mut error: simd_json::Error,
        patches: &mut Vec<NumberPatch>,
        big_ints: &mut Vec<(usize, i128)>,
    ) -> bool {
        patches.clear();
        while patches.len() < MAX_NUMBER_PATCHES {
            let Some(patch) = number_patch(line, &error) else {
                return false;
            };
            patches.push(patch);
            apply_number_patches(self.scratch, line, patches);
            let mut tape = std::mem::replace(self.home, Tape(Vec::new())).reset();
            let parsed =
                simd_json::fill_tape_padded(self.scratch, line.len(), self.buffers, &mut tape);
            let passed = parsed.is_ok()
                && matches!(tape.0.first(), Some(Node::Object { .. }))
                && !has_duplicate_keys(&tape.0, self.key_scratch, self.key_table)
                && locate_big_ints(&tape.0, patches, big_ints);
            *self.home = tape.reset();
            match parsed {
                Ok(()) => return passed,
                Err(next) => error = next,
            }
        }
        false
    }
}

/// A number simd-json refused: its byte range in the line, and for an integer its value.
#[derive(Debug, Clone, Copy)]
pub(super) struct NumberPatch {
    start: usize,
    end: usize,
    integer: Option<i128>,
}

/// The patch for simd-json's `error`, when it is about a number that is valid RFC 8259 JSON
/// (so simd-json only could not hold it); `None` for any other error.
fn number_patch(line: &[u8], error: &simd_json::Error) -> Option<NumberPatch> {
    use simd_json::ErrorType;
    if !matches!(
        error.error(),
        ErrorType::InvalidNumber | ErrorType::InvalidExponent | ErrorType::Overflow
    ) {
        return None;
    }
    let (start, end) = scan::number_around(line, error.index())?;
    let integer = match scan::number_kind(&line[start..end])? {
        scan::NumberKind::Integer(value) => Some(value),
        scan::NumberKind::Float => None,
    };
    Some(NumberPatch {
        start,
        end,
        integer,
    })
}

/// `retry` becomes the padded line with same-length stand-ins for the patched numbers: an
/// integer's [`BIG_INT_STAND_IN`] or a float's `0.0`, then spaces.
pub(super) fn apply_number_patches(retry: &mut Vec<u8>, line: &[u8], patches: &[NumberPatch]) {
    copy_padded(retry, line);
    for patch in patches {
        let slot = &mut retry[patch.start..patch.end];
        let stand_in: &[u8] = match patch.integer {
            Some(_) => BIG_INT_STAND_IN_TEXT,
            // Every fraction or exponent form is at least three bytes long (`1e9`).
            None => b"0.0",
        };
        slot.fill(b' ');
        slot[..stand_in.len()].copy_from_slice(stand_in);
    }
}

/// Fills `big_ints` with the tape index and value of every patched integer, found by its
/// stand-in's value in tape order. False when the counts differ (the line holds the stand-in's
/// value itself): the strict scanner then counts tape positions the slow way.
fn locate_big_ints(
    nodes: &[Node<'_>],
    patches: &[NumberPatch],
    big_ints: &mut Vec<(usize, i128)>,
) -> bool {
    big_ints.clear();
    // simd-json parses left to right, so the patches are in line order, as the tape is.
    let mut values = patches.iter().filter_map(|p| p.integer);
    for (index, node) in nodes.iter().enumerate() {
        if matches!(
            node,
            Node::Static(simd_json::StaticNode::I64(BIG_INT_STAND_IN))
        ) {
            match values.next() {
                Some(value) => big_ints.push((index, value)),
                None => return false,
            }
        }
    }
    values.next().is_none()
}
