//! A valid line costs no allocation once the parser's buffers have grown (the hot path's
//! promise): counted with a global allocator that counts.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use rdq_envelope::framing::LineReader;
use rdq_envelope::{EnvelopeRules, JsonParser, RuleOptions, Verdict};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
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

    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let mut lines = 0;
    while let Some(line) = reader.next_line().unwrap() {
        let doc = rules.check_line(&mut parser, line.content, &mut verdict);
        assert!(doc.is_some() && verdict.is_valid());
        lines += 1;
    }
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
    assert_eq!(lines, 199);
    assert_eq!(
        allocations, 0,
        "{allocations} allocations for {lines} valid lines"
    );

    // The counter does count: a rejected line's diagnostics are allocated.
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    rules.check_line(&mut parser, b"{\"queue\":1}", &mut verdict);
    assert!(!verdict.is_valid());
    assert!(ALLOCATIONS.load(Ordering::Relaxed) > before);
}
