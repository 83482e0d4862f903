//! `validate`'s work on `gen` output, single-threaded: the reader over an in-memory stream,
//! the JSON layer and every rule on each line, beside the reader alone on the same bytes.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use rdq_envelope::framing::{LineKind, LineReader};
use rdq_envelope::generate::{GenOptions, Generator};
use rdq_envelope::{EnvelopeRules, JsonParser, RuleOptions, Verdict};

/// About 16 MB: large enough that the stream does not sit in the L2 cache.
const STREAM_BYTES: usize = 16 << 20;

fn stream(invalid_rate: f64) -> Vec<u8> {
    let mut generator = Generator::new({
        let mut o = GenOptions::default();
        o.seed = 1;
        o.version = 2;
        o.invalid_rate = invalid_rate;
        o
    });
    let mut out = Vec::with_capacity(STREAM_BYTES + (64 << 10));
    while out.len() < STREAM_BYTES {
        generator.next_line(&mut out);
        out.push(b'\n');
    }
    out
}

fn validate(c: &mut Criterion) {
    let rules = EnvelopeRules::new(RuleOptions::default()).expect("default options");
    let mut group = c.benchmark_group("validate_gen");
    group.sample_size(20);
    for (name, rate) in [("valid", 0.0), ("invalid_rate_0.05", 0.05)] {
        let data = stream(rate);
        group.throughput(Throughput::Bytes(data.len() as u64));
        group.bench_function(format!("reader_only/{name}"), |b| {
            b.iter(|| {
                let mut reader = LineReader::new(black_box(&data[..]));
                let mut lines = 0u64;
                while let Some(line) = reader.next_line().expect("in-memory read") {
                    lines += u64::from(line.kind == LineKind::Content);
                }
                lines
            })
        });
        let mut parser = JsonParser::new();
        let mut verdict = Verdict::default();
        group.bench_function(format!("reader_and_rules/{name}"), |b| {
            b.iter(|| {
                let mut reader = LineReader::new(black_box(&data[..]));
                let mut valid = 0u64;
                while let Some(line) = reader.next_line().expect("in-memory read") {
                    if line.kind == LineKind::Content {
                        rules.check_line(&mut parser, line.content, &mut verdict);
                        valid += u64::from(verdict.is_valid());
                    }
                }
                valid
            })
        });
    }
    group.finish();
}

criterion_group!(benches, validate);
criterion_main!(benches);
