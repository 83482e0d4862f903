//! The reader alone (lines/s) and the whole parallel pipeline running `validate` (MB/s) at one
//! and two workers, over 16 MB of `gen` output held in memory. One line's validation is in
//! `benches/rules.rs`; the end-to-end figures with files, zstd and baselines come from
//! `benches/throughput.sh`.

use std::io::Cursor;
use std::sync::Arc;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use rdq_envelope::framing::LineReader;
use rdq_envelope::generate::{GenOptions, Generator};
use rdq_envelope::ops::{output, ReportFormat, ValidateOp};
use rdq_envelope::pipeline::{self, Outputs, PipelineOptions, Source};
use rdq_envelope::{EnvelopeRules, RuleOptions};

const STREAM_BYTES: usize = 16 << 20;

fn stream() -> (Arc<Vec<u8>>, u64) {
    let mut generator = Generator::new({
        let mut o = GenOptions::default();
        o.seed = 1;
        o.version = 2;
        o.invalid_rate = 0.01;
        o
    });
    let (mut out, mut lines) = (Vec::with_capacity(STREAM_BYTES + (64 << 10)), 0);
    while out.len() < STREAM_BYTES {
        generator.next_line(&mut out);
        out.push(b'\n');
        lines += 1;
    }
    (Arc::new(out), lines)
}

/// A `Read` over shared bytes, so each iteration feeds the pipeline without copying them.
struct Shared(Arc<Vec<u8>>, usize);

impl std::io::Read for Shared {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut rest = &self.0[self.1..];
        let n = std::io::Read::read(&mut rest, buf)?;
        self.1 += n;
        Ok(n)
    }
}

fn reader(c: &mut Criterion) {
    let (data, lines) = stream();
    let mut group = c.benchmark_group("reader");
    group.throughput(Throughput::Elements(lines));
    group.bench_function("lines", |b| {
        b.iter(|| {
            let mut reader = LineReader::new(Cursor::new(black_box(&data[..])));
            let mut n = 0u64;
            while reader.next_line().expect("in memory").is_some() {
                n += 1;
            }
            assert_eq!(n, lines);
        })
    });
    group.finish();
}

fn whole_pipeline(c: &mut Criterion) {
    let (data, _) = stream();
    let mut op =
        ValidateOp::new(EnvelopeRules::new(RuleOptions::default()).expect("default options"));
    op.format = ReportFormat::Json;
    op.keep_valid = true;
    op.write_rejects = true;
    let mut group = c.benchmark_group("pipeline_validate");
    group.sample_size(20);
    group.throughput(Throughput::Bytes(data.len() as u64));
    for jobs in [1, 2] {
        group.bench_function(format!("jobs_{jobs}"), |b| {
            b.iter(|| {
                let sources = vec![Source::Reader {
                    name: "bench".into(),
                    reader: Box::new(Shared(Arc::clone(&data), 0)),
                }];
                let (mut diagnostics, mut valid, mut rejects) =
                    (std::io::sink(), std::io::sink(), std::io::sink());
                let outputs = Outputs::none()
                    .to(output::PRIMARY, &mut diagnostics)
                    .to(output::SECONDARY, &mut valid)
                    .to(output::REJECTS, &mut rejects);
                let mut options = PipelineOptions::default();
                options.jobs = jobs;
                pipeline::run(sources, &op, options, outputs, None).expect("in memory")
            })
        });
    }
    group.finish();
}

criterion_group!(benches, reader, whole_pipeline);
criterion_main!(benches);
