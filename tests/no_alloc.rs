// Stands alone, outside tests/it/: a `#[global_allocator]` is the allocator of its whole test
// binary, and this counting one would slow every other test there.

//! A valid line costs no allocation once the parser's buffers have grown (the hot path's
//! promise): counted with a global allocator that counts.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use rdq_envelope::framing::LineReader;
use rdq_envelope::{EnvelopeRules, JsonParser, RuleOptions, Verdict};

struct Counting;

thread_local! {
    /// This thread's allocations: the tests run in parallel, each counts only its own.
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn allocations_so_far() -> usize {
    ALLOCATIONS.with(Cell::get)
}

fn count_one() {
    // `try_with`: the thread-local may be gone while a thread is torn down.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const LINE: &[u8] = include_bytes!("data/dlq_line.json");

#[test]
fn a_valid_line_allocates_nothing() {
    let rules = EnvelopeRules::new(RuleOptions::default()).unwrap();
    let mut parser = JsonParser::new();
    let mut verdict = Verdict::default();
    let stream: Vec<u8> = std::iter::repeat_n([LINE, b"\r\n"].concat(), 200)
        .flatten()
        .collect();
    // Warm up: the buffers grow to the line's size once.
    rules.check_line(&mut parser, LINE, &mut verdict);
    assert!(verdict.is_valid());
    let mut reader = LineReader::new(&stream[..]);
    reader.next_line().unwrap();

    let before = allocations_so_far();
    let mut lines = 0;
    while let Some(line) = reader.next_line().unwrap() {
        let doc = rules.check_line(&mut parser, line.content, &mut verdict);
        assert!(doc.is_some() && verdict.is_valid());
        lines += 1;
    }
    let allocations = allocations_so_far() - before;
    assert_eq!(lines, 199);
    assert_eq!(
        allocations, 0,
        "{allocations} allocations for {lines} valid lines"
    );

    // The counter does count: a rejected line's diagnostics are allocated.
    let before = allocations_so_far();
    rules.check_line(&mut parser, b"{\"queue\":1}", &mut verdict);
    assert!(!verdict.is_valid());
    assert!(allocations_so_far() > before);
}

/// The operations' hot path, the single pass included, allocates nothing per line either:
/// `validate` (keeping the valid lines), `filter`, `stats`, `redrive` and `migrate` both ways
/// (the line read as version 1 and, rewritten, as version 2), each applying the
/// same valid line again and again once its buffers have grown.
#[test]
fn the_operations_allocate_nothing_per_valid_line() {
    use rdq_envelope::framing::Line;
    use rdq_envelope::ops::{
        output, FilterOp, Glob, GroupBy, MigrateOp, MigrateSource, Predicates, RedriveOp, StatsOp,
        ValidateOp,
    };
    use rdq_envelope::pipeline::{Action, ChunkOutput, LineOperation, SourceLine};

    fn per_line_allocations<Op: LineOperation>(op: &Op) -> usize {
        per_line_allocations_on(op, LINE)
    }
    fn per_line_allocations_on<Op: LineOperation>(op: &Op, line: &[u8]) -> usize {
        let stream: Vec<u8> = std::iter::repeat_n([line, b"\n"].concat(), 300)
            .flatten()
            .collect();
        let mut worker = op.worker();
        let mut out = ChunkOutput::<Op::Tally>::new(Op::OUTPUTS);
        // Room for every output, so that only per-line work could allocate.
        for buffer in out.buffers() {
            buffer.reserve(4 * stream.len());
        }
        let mut reader = LineReader::new(&stream[..]);
        let mut apply = |line: Line<'_>, out: &mut ChunkOutput<Op::Tally>| {
            let action = op.apply(&mut worker, SourceLine { source: "x", line }, out);
            assert!(matches!(action, Action::Emit | Action::FilterOut));
        };
        // Warm up: the first lines grow the worker's buffers and the tallies' tables.
        for _ in 0..2 {
            apply(reader.next_line().unwrap().unwrap(), &mut out);
        }
        let before = allocations_so_far();
        while let Some(line) = reader.next_line().unwrap() {
            apply(line, &mut out);
        }
        allocations_so_far() - before
    }

    let rules = || EnvelopeRules::new(RuleOptions::default()).unwrap();
    let mut validate = ValidateOp::new(rules());
    validate.keep_valid = true;
    assert_eq!(per_line_allocations(&validate), 0, "validate");
    let mut predicates = Predicates::default();
    predicates.queue = vec![Glob::new("*")];
    predicates.error_type = vec![Glob::new("java.*")];
    assert_eq!(
        per_line_allocations(&FilterOp::new(rules(), predicates)),
        0,
        "filter"
    );
    for by in [GroupBy::Queue, GroupBy::ErrorType, GroupBy::Day] {
        assert_eq!(
            per_line_allocations(&StatsOp::new(rules(), by)),
            0,
            "stats {by:?}"
        );
    }
    let redrive = RedriveOp::new(rules(), "2026-01-01T00:00:00.000Z").unwrap();
    assert_eq!(per_line_allocations(&redrive), 0, "redrive");
    let to_v2 = MigrateOp::new(rules(), MigrateSource::Rdq, 2).unwrap();
    assert_eq!(per_line_allocations(&to_v2), 0, "migrate 1 -> 2");
    // The same line as version 2, from the migration itself.
    let mut v2 = Vec::new();
    let mut out = ChunkOutput::<()>::new(MigrateOp::OUTPUTS);
    let mut reader = LineReader::new(LINE);
    let line = reader.next_line().unwrap().unwrap();
    to_v2.apply(
        &mut to_v2.worker(),
        SourceLine { source: "x", line },
        &mut out,
    );
    v2.extend_from_slice(out.bytes(output::PRIMARY).strip_suffix(b"\n").unwrap());
    let to_v1 = MigrateOp::new(rules(), MigrateSource::Rdq, 1).unwrap();
    assert_eq!(per_line_allocations_on(&to_v1, &v2), 0, "migrate 2 -> 1");
}
