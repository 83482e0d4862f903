//! The codec beside serde: build-and-write and read-and-write of the owned `Envelope` against
//! `serde_json` on an equivalent derived struct, over `gen`'s version 1 lines (docs/performance.md#the-codec).
//!
//! "Equivalent" is the same work: the payload's bytes encoded to base64 (and decoded when
//! read), every member written; the `serde_lossless` variant also keeps unknown members
//! (`#[serde(flatten)]` into a map), as the owned envelope does, and `serde_known` does not.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use rdq_envelope::envelope::{Checker, Envelope};
use rdq_envelope::generate::{GenOptions, Generator};
use rdq_envelope::{EnvelopeRules, RuleOptions};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

mod derived {
    use super::*;

    fn base64<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64_simd::STANDARD.encode_to_string(bytes))
    }

    fn unbase64<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        base64_simd::STANDARD
            .decode_to_vec(text.as_bytes())
            .map_err(serde::de::Error::custom)
    }

    #[derive(Serialize, Deserialize, Clone)]
    pub struct Envelope {
        pub envelope_version: u32,
        pub id: String,
        pub queue: String,
        pub handler_ref: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub handler_version: Option<String>,
        #[serde(serialize_with = "base64", deserialize_with = "unbase64")]
        pub payload: Vec<u8>,
        pub payload_content_type: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub payload_ref: Option<Value>,
        pub headers: Map<String, Value>,
        pub status: String,
        pub attempt_count: u32,
        pub redrive_count: u32,
        pub next_attempt_at: Option<String>,
        pub lease_expires_at: Option<String>,
        pub created_at: String,
        pub attempts: Vec<Attempt>,
        #[serde(flatten)]
        pub unknown: Map<String, Value>,
    }

    #[derive(Serialize, Deserialize, Clone)]
    pub struct Attempt {
        pub attempt_no: u32,
        pub started_at: String,
        pub finished_at: Option<String>,
        pub outcome: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub error: Option<Error>,
        #[serde(flatten)]
        pub unknown: Map<String, Value>,
    }

    #[derive(Serialize, Deserialize, Clone)]
    pub struct Error {
        #[serde(rename = "type")]
        pub kind: String,
        pub message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub detail: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub stack: Option<String>,
        #[serde(flatten)]
        pub unknown: Map<String, Value>,
    }

    /// The same members without the unknown ones (no flatten).
    #[derive(Serialize, Deserialize, Clone)]
    pub struct Known {
        pub envelope_version: u32,
        pub id: String,
        pub queue: String,
        pub handler_ref: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub handler_version: Option<String>,
        #[serde(serialize_with = "base64", deserialize_with = "unbase64")]
        pub payload: Vec<u8>,
        pub payload_content_type: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub payload_ref: Option<Value>,
        pub headers: Map<String, Value>,
        pub status: String,
        pub attempt_count: u32,
        pub redrive_count: u32,
        pub next_attempt_at: Option<String>,
        pub lease_expires_at: Option<String>,
        pub created_at: String,
        pub attempts: Vec<KnownAttempt>,
    }

    #[derive(Serialize, Deserialize, Clone)]
    pub struct KnownAttempt {
        pub attempt_no: u32,
        pub started_at: String,
        pub finished_at: Option<String>,
        pub outcome: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub error: Option<KnownError>,
    }

    #[derive(Serialize, Deserialize, Clone)]
    pub struct KnownError {
        #[serde(rename = "type")]
        pub kind: String,
        pub message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub stack: Option<String>,
    }
}

fn lines() -> Vec<Vec<u8>> {
    let mut options = GenOptions::default();
    options.seed = 5;
    options.version = 1;
    let mut generator = Generator::new(options);
    (0..2000)
        .map(|_| {
            let mut line = Vec::new();
            generator.next_line(&mut line);
            line
        })
        .collect()
}

fn codec(c: &mut Criterion) {
    let lines = lines();
    let bytes: usize = lines.iter().map(|l| l.len() + 1).sum();
    let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default()).unwrap());
    let owned: Vec<Envelope> = lines
        .iter()
        .map(|l| checker.check(l).envelope().unwrap().to_owned())
        .collect();
    let lossless: Vec<derived::Envelope> = lines
        .iter()
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    let known: Vec<derived::Known> = lines
        .iter()
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();

    let mut group = c.benchmark_group("codec");
    group.sample_size(20);
    group.throughput(Throughput::Bytes(bytes as u64));

    let mut out = Vec::with_capacity(bytes + 4096);
    group.bench_function("write/rdq", |b| {
        b.iter(|| {
            out.clear();
            for e in &owned {
                e.write_vec(&mut out);
            }
            black_box(out.len())
        })
    });
    group.bench_function("write/serde_lossless", |b| {
        b.iter(|| {
            out.clear();
            for e in &lossless {
                serde_json::to_writer(&mut out, e).unwrap();
                out.push(b'\n');
            }
            black_box(out.len())
        })
    });
    group.bench_function("write/serde_known", |b| {
        b.iter(|| {
            out.clear();
            for e in &known {
                serde_json::to_writer(&mut out, e).unwrap();
                out.push(b'\n');
            }
            black_box(out.len())
        })
    });

    // Build: a clone of each envelope (the members a builder would copy in), then write it.
    group.bench_function("build_and_write/rdq", |b| {
        b.iter(|| {
            out.clear();
            for e in &owned {
                let built = e.clone();
                built.write_vec(&mut out);
            }
            black_box(out.len())
        })
    });
    group.bench_function("build_and_write/serde_lossless", |b| {
        b.iter(|| {
            out.clear();
            for e in &lossless {
                let built = e.clone();
                serde_json::to_writer(&mut out, &built).unwrap();
                out.push(b'\n');
            }
            black_box(out.len())
        })
    });
    group.bench_function("build_and_write/serde_known", |b| {
        b.iter(|| {
            out.clear();
            for e in &known {
                let built = e.clone();
                serde_json::to_writer(&mut out, &built).unwrap();
                out.push(b'\n');
            }
            black_box(out.len())
        })
    });

    // Read and write: every rule judged (rdq; serde checks none), the owned value made, written.
    group.bench_function("read_and_write/rdq", |b| {
        b.iter(|| {
            out.clear();
            for l in &lines {
                let checked = checker.check(l);
                if let Some(view) = checked.envelope() {
                    view.to_owned().write_vec(&mut out);
                }
            }
            black_box(out.len())
        })
    });
    group.bench_function("read_and_write/serde_lossless", |b| {
        b.iter(|| {
            out.clear();
            for l in &lines {
                let e: derived::Envelope = serde_json::from_slice(l).unwrap();
                serde_json::to_writer(&mut out, &e).unwrap();
                out.push(b'\n');
            }
            black_box(out.len())
        })
    });
    group.bench_function("read_and_write/serde_known", |b| {
        b.iter(|| {
            out.clear();
            for l in &lines {
                let e: derived::Known = serde_json::from_slice(l).unwrap();
                serde_json::to_writer(&mut out, &e).unwrap();
                out.push(b'\n');
            }
            black_box(out.len())
        })
    });
    group.finish();
}

criterion_group!(benches, codec);
criterion_main!(benches);
