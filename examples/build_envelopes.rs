//! Writes N canonical envelopes to standard output, each made through the lifecycle API: a
//! submission, then leases, finished attempts (some with errors cut by the truncation rule),
//! retries, dead letters, successes, redrives and, with `--v2`, version 2 envelopes (some
//! cancelled, some with a claim-checked payload). The same N gives the same lines.
//!
//! ```text
//! cargo run --release --example build_envelopes -- 1000 > built.jsonl
//! cargo run --release --example build_envelopes -- 1000 --v2 | rdq-envelope validate -
//! ```

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use rdq_envelope::envelope::{
    AttemptError, Envelope, EnvelopeError, JsonText, Outcome, PayloadRef, Producer, Submit,
    Timestamp,
};

fn main() -> ExitCode {
    let mut count = None;
    let mut v2 = false;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--v2" => v2 = true,
            n => match n.parse::<u64>() {
                Ok(n) if count.is_none() => count = Some(n),
                _ => {
                    eprintln!("build_envelopes: usage: build_envelopes N [--v2] (got {arg:?})");
                    return ExitCode::from(2);
                }
            },
        }
    }
    let Some(count) = count else {
        eprintln!("build_envelopes: usage: build_envelopes N [--v2]");
        return ExitCode::from(2);
    };
    match run(count, v2) {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`| head`) is the reader's choice, not a failure.
        Err(Failure::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("build_envelopes: {e}");
            ExitCode::from(2)
        }
    }
}

#[derive(Debug)]
enum Failure {
    Io(io::Error),
    Envelope(EnvelopeError),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Io(e) => write!(f, "standard output: {e}"),
            Failure::Envelope(e) => write!(f, "{} at {}: {e}", e.code().as_str(), e.pointer()),
        }
    }
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        Failure::Io(e)
    }
}

impl From<EnvelopeError> for Failure {
    fn from(e: EnvelopeError) -> Self {
        Failure::Envelope(e)
    }
}

const QUEUES: [(&str, &str); 4] = [
    ("billing.invoices", "invoice.render"),
    ("mail.outbound", "mail.send"),
    ("orders.fulfilment", "order.ship"),
    ("media.thumbnails", "thumbnail.make"),
];

fn run(count: u64, v2: bool) -> Result<(), Failure> {
    // A clock the example moves itself: the same N gives the same lines.
    let start: Timestamp = "2024-05-01T12:00:00.000Z"
        .parse()
        .map_err(io::Error::other)?;
    let clock = std::rc::Rc::new(std::cell::Cell::new(start));
    let producer_clock = clock.clone();
    let mut producer = Producer::with_clock(move || producer_clock.get()).with_seed(2024);
    let mut out = BufWriter::new(io::stdout().lock());
    let mut line = Vec::with_capacity(4096);
    for i in 0..count {
        clock.set(
            start
                .checked_add_ms(i as i64 * 1_250)
                .unwrap_or(Timestamp::MAX),
        );
        let envelope = make(&mut producer, clock.get(), i, v2)?;
        line.clear();
        envelope.write_vec(&mut line);
        out.write_all(&line)?;
    }
    out.flush()?;
    Ok(())
}

/// The `i`-th envelope: its story is chosen by `i`, so every status appears.
fn make<C: rdq_envelope::envelope::Clock>(
    producer: &mut Producer<C>,
    now: Timestamp,
    i: u64,
    v2: bool,
) -> Result<Envelope, EnvelopeError> {
    let (queue, handler) = QUEUES[(i % 4) as usize];
    let payload = format!(r#"{{"n":{i},"kind":"{queue}"}}"#).into_bytes();
    let mut submit = Submit::new(queue, handler, payload, "application/json")?
        .header("traceparent", &format!("00-{i:032x}-{:016x}-01", i * 7919))?
        .source("example-api");
    if i.is_multiple_of(3) {
        submit = submit.handler_version(&format!("1.{}.0", i % 10))?;
    }
    if v2 {
        submit = submit.version(2)?;
    }
    let mut envelope = producer.submit(submit)?;
    if i.is_multiple_of(5) {
        envelope.insert_unknown(
            "x_example",
            JsonText::parse(&format!(r#"{{"batch":{},"ratio":1.50}}"#, i / 5))?,
        )?;
    }
    let at = |ms: i64| now.checked_add_ms(ms).unwrap_or(Timestamp::MAX);
    let failure = |n: u64| -> Result<AttemptError, EnvelopeError> {
        let error = AttemptError::new(
            "java.net.SocketTimeoutException",
            &format!("Read timed out after {n} ms"),
        )?;
        // Every seventh failure carries a stack over the limit: cut as the truncation rule says.
        Ok(if n.is_multiple_of(7) {
            error.with_stack(&"\tat com.example.Worker.handle(Worker.java:42)\n".repeat(2_000))
        } else {
            error
        })
    };
    let story = i % 8;
    if story == 0 {
        return Ok(envelope); // PENDING, never tried
    }
    envelope.lease(at(100), at(30_100))?;
    if story == 1 {
        return Ok(envelope); // IN_FLIGHT
    }
    if story == 2 {
        envelope
            .finish_attempt(at(400), Outcome::Success, None)?
            .succeed()?;
        return Ok(envelope);
    }
    envelope
        .finish_attempt(at(900), Outcome::RetryableFailure, Some(failure(i)?))?
        .retry_at(at(5_900))?;
    if story == 3 {
        return Ok(envelope); // PENDING after a failure
    }
    envelope.lease(at(6_000), at(36_000))?;
    envelope
        .finish_attempt(at(36_000), Outcome::LeaseExpired, None)?
        .dead_letter()?;
    if story == 4 || story == 5 && !v2 {
        return Ok(envelope); // DEAD
    }
    if story == 5 {
        // Version 2: redriven, then cancelled before its next attempt.
        envelope.redrive(at(60_000))?;
        envelope.cancel()?;
        return Ok(envelope);
    }
    envelope.redrive(at(60_000))?;
    if story == 6 {
        if v2 {
            let sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
            envelope.set_payload_ref(PayloadRef::new(&format!("s3://payloads/{i}"), sha, 4096)?)?;
        }
        return Ok(envelope); // PENDING, redriven
    }
    envelope.lease(at(61_000), at(91_000))?;
    let error = AttemptError::new("java.lang.IllegalStateException", &"é".repeat(3_000))?;
    envelope
        .finish_attempt(at(62_000), Outcome::PermanentFailure, Some(error))?
        .dead_letter()?;
    Ok(envelope) // DEAD again, redriven once, its message cut
}
