//! One typical DLQ line (about 3 KB, three attempts with stack traces) through the JSON layer
//! and every rule, and through the single pass, beside simd-json's bare tape parse of the same
//! line with the same reuse of buffers: the ratios are what validation costs against parsing.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use rdq_envelope::{EnvelopeRules, JsonParser, RuleOptions, Verdict};

const LINE: &[u8] = include_bytes!("../tests/data/dlq_line.json");

fn rules(c: &mut Criterion) {
    let mut group = c.benchmark_group("dlq_line");
    group.throughput(Throughput::Bytes(LINE.len() as u64));

    let mut input = Vec::with_capacity(LINE.len() + simd_json::INPUT_PADDING);
    let mut buffers = simd_json::Buffers::with_max_depth(LINE.len(), 128);
    let mut tape = simd_json::Tape(Vec::new());
    group.bench_function("simd_json_tape", |b| {
        b.iter(|| {
            // The same work the JSON layer's fast path does before its own checks: copy the
            // line next to padding (simd-json unescapes in place) and fill a reused tape.
            input.clear();
            input.extend_from_slice(black_box(LINE));
            input.resize(LINE.len() + simd_json::INPUT_PADDING, 0);
            let mut t = std::mem::replace(&mut tape, simd_json::Tape(Vec::new())).reset();
            simd_json::fill_tape_padded(&mut input, LINE.len(), &mut buffers, &mut t)
                .expect("valid line");
            black_box(t.0.len());
            tape = t.reset();
        })
    });

    let rules = EnvelopeRules::new(RuleOptions::default()).expect("default options");
    let mut parser = JsonParser::new();
    let mut verdict = Verdict::default();
    group.bench_function("json_layer_and_rules", |b| {
        b.iter(|| {
            let doc = rules.check_line(&mut parser, black_box(LINE), &mut verdict);
            assert!(doc.is_some() && verdict.is_valid());
        })
    });

    // The single pass, which settles such a line without a tape (`validate`'s hot path).
    let mut single = rdq_envelope::test_support::SinglePassAlone::new(&RuleOptions::default());
    group.bench_function("single_pass", |b| {
        b.iter(|| assert!(single.accepts(black_box(LINE))))
    });
    group.finish();
}

criterion_group!(benches, rules);
criterion_main!(benches);
