//! The codec beside serde: build-and-write and read-and-write of the owned `Envelope` against
//! `serde_json` on an equivalent derived struct, over `gen`'s version 1 lines (docs/performance.md#the-codec).
//!
//! "Equivalent" is the same work: the payload's bytes encoded to base64 (and decoded when
//! read), every member written; the `serde_lossless` variant also keeps unknown members
//! (`#[serde(flatten)]` into a map), as the owned envelope does, and `serde_known` does not.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use rdq_envelope::envelope::{
    AttemptError, Checker, Clock, Envelope, Outcome, Producer, Submit, Timestamp,
};
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

fn producer() -> Producer<impl FnMut() -> Timestamp> {
    let mut ms = 1_714_564_800_000i64;
    Producer::with_clock(move || {
        ms += 1;
        Timestamp::from_unix_ms(ms).unwrap()
    })
    .with_seed(7)
}

fn build(producer: &mut Producer<impl Clock>, payload: &[u8], trace: &str) -> Envelope {
    let submit = Submit::new(
        "billing",
        "invoice.render",
        payload.to_vec(),
        "application/json",
    )
    .unwrap()
    .header("traceparent", trace)
    .unwrap();
    let mut envelope = producer.submit(submit).unwrap();
    let now = producer.now();
    let at = |ms| now.checked_add_ms(ms).unwrap();
    envelope.lease(at(10), at(30_010)).unwrap();
    let error = AttemptError::new("java.net.SocketTimeoutException", "Read timed out").unwrap();
    envelope
        .finish_attempt(at(250), Outcome::PermanentFailure, Some(error))
        .unwrap()
        .dead_letter()
        .unwrap();
    envelope
}

fn build_derived(n: u64, payload: &[u8], trace: &str) -> derived::Known {
    let time = |ms: u64| format!("2024-05-01T12:00:{:02}.{:03}Z", (ms / 1000) % 60, ms % 1000);
    let mut headers = Map::new();
    headers.insert("traceparent".to_owned(), Value::String(trace.to_owned()));
    derived::Known {
        envelope_version: 1,
        id: format!("01HWT0DD08{n:016}"),
        queue: "billing".to_owned(),
        handler_ref: "invoice.render".to_owned(),
        handler_version: None,
        payload: payload.to_vec(),
        payload_content_type: "application/json".to_owned(),
        payload_ref: None,
        headers,
        status: "DEAD".to_owned(),
        attempt_count: 1,
        redrive_count: 0,
        next_attempt_at: None,
        lease_expires_at: None,
        created_at: time(n),
        attempts: vec![derived::KnownAttempt {
            attempt_no: 1,
            started_at: time(n + 10),
            finished_at: Some(time(n + 250)),
            outcome: Some("PERMANENT_FAILURE".to_owned()),
            error: Some(derived::KnownError {
                kind: "java.net.SocketTimeoutException".to_owned(),
                message: "Read timed out".to_owned(),
                stack: None,
            }),
        }],
    }
}

fn codec(c: &mut Criterion) {
    // The lines all three readers take: serde_json refuses numbers beyond f64 (gen writes
    // some in unknown members), which the envelope keeps as written.
    let lines: Vec<Vec<u8>> = lines()
        .into_iter()
        .filter(|l| serde_json::from_slice::<derived::Envelope>(l).is_ok())
        .collect();
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

    // Build: a dead-lettered task made from its submit subset, one failed attempt, written.
    // rdq through the lifecycle (a ULID drawn, every change checked against the rules); serde
    // by filling the derived struct with the same values (no rule checked, the id formatted
    // from a counter).
    let inputs: Vec<(Vec<u8>, String)> = (0..2000u64)
        .map(|i| {
            (
                format!(r#"{{"order":{i},"kind":"invoice","lines":[1,2,3]}}"#).into_bytes(),
                format!("00-{i:032x}-{:016x}-01", i * 7919),
            )
        })
        .collect();
    let built_bytes: usize = {
        let mut producer = producer();
        let mut out = Vec::new();
        for (payload, trace) in &inputs {
            build(&mut producer, payload, trace).write_vec(&mut out);
        }
        out.len()
    };
    group.throughput(Throughput::Bytes(built_bytes as u64));
    group.bench_function("build_and_write/rdq", |b| {
        let mut producer = producer();
        b.iter(|| {
            out.clear();
            for (payload, trace) in &inputs {
                build(&mut producer, payload, trace).write_vec(&mut out);
            }
            black_box(out.len())
        })
    });
    group.bench_function("build_and_write/serde_known", |b| {
        let mut n = 0u64;
        b.iter(|| {
            out.clear();
            for (payload, trace) in &inputs {
                n += 1;
                serde_json::to_writer(&mut out, &build_derived(n, payload, trace)).unwrap();
                out.push(b'\n');
            }
            black_box(out.len())
        })
    });
    group.throughput(Throughput::Bytes(bytes as u64));

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
