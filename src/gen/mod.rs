//! Deterministic synthetic envelopes, shaped like a real dead-letter export.
//!
//! A [`Generator`] writes one JSON line at a time: mostly `DEAD` envelopes with one to five
//! attempts, Java-like errors with stack traces, base64 JSON payloads of 50 B to 2 KB, trace and
//! tenant headers and, now and then, unknown fields holding numbers and escapes that a careless
//! re-serializer would change. The same [`GenOptions`] give the same bytes on every machine: the
//! random source is a seeded PCG, never the clock or the OS.
//!
//! With an invalid rate, a share of the lines carries one realistic defect each (a truncated
//! line, Latin-1 bytes, a duplicate key hidden behind an escape, a lower-case ID, ...). A defect
//! is a small textual edit of a valid line, so everything else about the line stays realistic,
//! and [`Generator::next_line`] says which code the edit is meant to draw; the tests hold it to
//! that.

mod chokaq;

use std::io::Write;
use std::ops::Range;

pub use chokaq::ChokaqGenerator;

use memchr::memmem;
use rand_pcg::rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::diagnostic::ErrorCode;
use crate::envelope::formats::{decimal, push_optional_timestamp, push_timestamp};

/// What to generate.
#[derive(Debug, Clone, PartialEq)]
pub struct GenOptions {
    /// The seed: the same seed and options give the same lines.
    pub seed: u64,
    /// The `envelope_version` to write: 1 or 2.
    pub version: u32,
    /// The share of lines, from 0 to 1, that carry one defect each.
    pub invalid_rate: f64,
}

impl Default for GenOptions {
    fn default() -> Self {
        GenOptions {
            seed: 0,
            version: crate::envelope::NEWEST_VERSION,
            invalid_rate: 0.0,
        }
    }
}

/// 2024-05-01T12:00:00.000Z: the first envelope's `created_at`.
const EPOCH_MS: i64 = 1_714_564_800_000;

/// The lease a worker holds on an attempt in flight.
const LEASE_MS: i64 = 30_000;

/// One producing service: where its tasks go and what its failures look like.
struct Service {
    queue: &'static str,
    handler: &'static str,
    source: &'static str,
    /// The class in the service's own code that sits at the top of its stack traces.
    class: &'static str,
    /// The payload's leading members and the shape of one of its repeated items.
    payload_head: &'static str,
    payload_item: &'static str,
    /// Indexes into [`FAILURES`] that this service runs into.
    failures: &'static [usize],
}

const SERVICES: &[Service] = &[
    Service {
        queue: "billing.invoices",
        handler: "invoice.render",
        source: "billing-api",
        class: "com.acme.billing.InvoiceRenderer",
        payload_head: r#""invoice_id":{n},"customer":"c-{n4}","currency":"EUR""#,
        payload_item: r#"{"sku":"SKU-{n4}","qty":{d},"price_cents":{n}}"#,
        failures: &[0, 1, 3, 5, 8],
    },
    Service {
        queue: "orders.fulfilment",
        handler: "order.ship",
        source: "checkout-web",
        class: "com.acme.orders.ShipmentService",
        payload_head: r#""order_id":"o-{n}","warehouse":"fra-{d}","priority":false"#,
        payload_item: r#"{"line":{d},"ean":"40{n4}{n4}","qty":{d}}"#,
        failures: &[0, 2, 4, 6],
    },
    Service {
        queue: "notify.email",
        handler: "email.send",
        source: "notification-svc",
        class: "com.acme.notify.SmtpSender",
        payload_head: r#""template":"order-confirmation","to":"user{n}@example.com","locale":"de-DE""#,
        payload_item: r#"{"key":"var{d}","value":"Grüße aus Köln {n}"}"#,
        failures: &[1, 3, 7, 8],
    },
    Service {
        queue: "search.reindex",
        handler: "catalog.index-product",
        source: "catalog-sync",
        class: "com.acme.search.ProductIndexer",
        payload_head: r#""product_id":{n},"revision":{d},"full":true"#,
        payload_item: r#"{"field":"attr_{d}","boost":1.5,"tokens":["t{n4}","t{n4}"]}"#,
        failures: &[0, 4, 5, 6],
    },
    Service {
        queue: "payments.capture",
        handler: "payment.capture",
        source: "payments-gateway",
        class: "com.acme.payments.CaptureWorker",
        payload_head: r#""payment_id":"pay_{n}{n4}","amount_cents":{n},"currency":"USD""#,
        payload_item: r#"{"event":"auth","at":"2024-05-01T12:00:0{d}Z","ref":"{n}"}"#,
        failures: &[1, 2, 5, 7],
    },
    Service {
        queue: "media.thumbnails",
        handler: "image.resize",
        source: "media-upload",
        class: "com.acme.media.Thumbnailer",
        payload_head: r#""object":"uploads/{n4}/{n}.jpg","bucket":"media-eu-1""#,
        payload_item: r#"{"w":{n4},"h":{n4},"format":"webp","quality":8{d}}"#,
        failures: &[0, 3, 4, 6],
    },
];

/// A kind of failure: its exception type, a message template, whether retrying can help, and
/// the library frames between the service's code and the exception.
struct Failure {
    exception: &'static str,
    message: &'static str,
    retryable: bool,
    frames: &'static [&'static str],
}

const HTTP_FRAMES: &[&str] = &[
    "java.base/sun.nio.ch.NioSocketImpl.timedRead(NioSocketImpl.java:288)",
    "java.base/java.net.Socket$SocketInputStream.read(Socket.java:1099)",
    "org.apache.hc.core5.http.impl.io.SessionInputBufferImpl.fillBuffer(SessionInputBufferImpl.java:149)",
    "org.apache.hc.client5.http.impl.classic.InternalExecRuntime.execute(InternalExecRuntime.java:212)",
    "org.apache.hc.client5.http.impl.classic.CloseableHttpClient.execute(CloseableHttpClient.java:245)",
];

const JDBC_FRAMES: &[&str] = &[
    "org.postgresql.core.v3.QueryExecutorImpl.receiveErrorResponse(QueryExecutorImpl.java:2713)",
    "org.postgresql.jdbc.PgPreparedStatement.executeUpdate(PgPreparedStatement.java:152)",
    "com.zaxxer.hikari.pool.HikariProxyPreparedStatement.executeUpdate(HikariProxyPreparedStatement.java)",
    "org.springframework.jdbc.core.JdbcTemplate.update(JdbcTemplate.java:986)",
];

const JSON_FRAMES: &[&str] = &[
    "com.fasterxml.jackson.databind.exc.MismatchedInputException.from(MismatchedInputException.java:59)",
    "com.fasterxml.jackson.databind.DeserializationContext.reportInputMismatch(DeserializationContext.java:1767)",
    "com.fasterxml.jackson.databind.ObjectMapper._readMapAndClose(ObjectMapper.java:4825)",
];

const NO_FRAMES: &[&str] = &[];

const FAILURES: &[Failure] = &[
    Failure {
        exception: "java.net.SocketTimeoutException",
        message: "Read timed out after {n4} ms calling {host}:8443",
        retryable: true,
        frames: HTTP_FRAMES,
    },
    Failure {
        exception: "java.net.ConnectException",
        message: "Connection refused: {host}/10.0.{d}.{n4}:443",
        retryable: true,
        frames: HTTP_FRAMES,
    },
    Failure {
        exception: "org.postgresql.util.PSQLException",
        message: "ERROR: deadlock detected\n  Detail: Process {n4} waits for ShareLock on transaction {n}; blocked by process {n4}.",
        retryable: true,
        frames: JDBC_FRAMES,
    },
    Failure {
        exception: "java.lang.IllegalStateException",
        message: "task {n} is in state \"ARCHIVED\", expected \"OPEN\"",
        retryable: false,
        frames: NO_FRAMES,
    },
    Failure {
        exception: "java.lang.NullPointerException",
        message: "Cannot invoke \"String.length()\" because \"customer.email\" is null",
        retryable: false,
        frames: NO_FRAMES,
    },
    Failure {
        exception: "com.fasterxml.jackson.databind.exc.MismatchedInputException",
        message: "Cannot deserialize value of type `long` from String \"n/a\": not a valid `long` value\n at [Source: (byte[])\"{\"id\":\"n/a\"}\"; line: 1, column: 7]",
        retryable: false,
        frames: JSON_FRAMES,
    },
    Failure {
        exception: "javax.net.ssl.SSLHandshakeException",
        message: "PKIX path building failed: unable to find valid certification path to requested target",
        retryable: true,
        frames: HTTP_FRAMES,
    },
    Failure {
        exception: "com.acme.common.RateLimitedException",
        message: "429 Too Many Requests from {host}: retry after {d} s",
        retryable: true,
        frames: HTTP_FRAMES,
    },
    Failure {
        exception: "com.acme.common.ValidationException",
        message: "field 'name' rejected: 'Zoë Müller – 東京' contains unsupported characters",
        retryable: false,
        frames: NO_FRAMES,
    },
];

const HOSTS: &[&str] = &[
    "pdf-renderer",
    "smtp.eu-west-1.example.net",
    "inventory-api",
    "psp.example.com",
    "s3.eu-central-1.amazonaws.com",
];

const WORKER_FRAMES: &[&str] = &[
    "dev.rdq.worker.HandlerInvoker.invoke(HandlerInvoker.java:88)",
    "dev.rdq.worker.LeaseLoop.runOne(LeaseLoop.java:141)",
    "java.base/java.util.concurrent.ThreadPoolExecutor.runWorker(ThreadPoolExecutor.java:1136)",
    "java.base/java.util.concurrent.ThreadPoolExecutor$Worker.run(ThreadPoolExecutor.java:635)",
    "java.base/java.lang.Thread.run(Thread.java:840)",
];

const TENANTS: &[&str] = &["acme-eu", "acme-us", "globex", "initech", "umbrella-labs"];
const SUBMITTERS: &[&str] = &[
    "svc-billing",
    "ops@example.com",
    "cron/nightly",
    "svc-checkout",
];

/// Unknown members an exporter might add: numbers and escapes that must survive byte for byte.
const UNKNOWN_MEMBERS: &[&str] = &[
    r#""batch":{n}"#,
    r#""ratio":0.3333333333333333"#,
    r#""checksum":123456789012345678901234567890"#,
    r#""epsilon":0.1e-7"#,
    r#""overflow":1e400"#,
    r#""zero":-0"#,
    r#""precise":0.1000000000000000055511151231257827"#,
    r#""note":"caf\u00e9 \ud83d\ude00 \/ tab\there""#,
    r#""tags":["dlq","replay",null,true]"#,
];

/// Which `status` a line gets, by weight (a DLQ export is mostly dead letters).
#[derive(Clone, Copy, PartialEq)]
enum Status {
    Dead,
    Pending,
    InFlight,
    Succeeded,
    Cancelled,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Dead => "DEAD",
            Status::Pending => "PENDING",
            Status::InFlight => "IN_FLIGHT",
            Status::Succeeded => "SUCCEEDED",
            Status::Cancelled => "CANCELLED",
        }
    }
}

/// The defects [`Generator`] can mix in, each with the code it must draw.
const DEFECTS: &[ErrorCode] = &[
    ErrorCode::MalformedJson,
    ErrorCode::InvalidUtf8,
    ErrorCode::NotAnObject,
    ErrorCode::DuplicateKey,
    ErrorCode::NestingTooDeep,
    ErrorCode::MissingField,
    ErrorCode::WrongType,
    ErrorCode::OutOfRange,
    ErrorCode::UnsupportedVersion,
    ErrorCode::InvalidId,
    ErrorCode::InvalidName,
    ErrorCode::InvalidBase64,
    ErrorCode::InvalidContentType,
    ErrorCode::PayloadRefReserved,
    ErrorCode::InvalidPayloadRef,
    ErrorCode::InvalidHeader,
    ErrorCode::UnknownStatus,
    ErrorCode::UnknownOutcome,
    ErrorCode::InvalidTimestamp,
    ErrorCode::FieldTooLong,
    ErrorCode::BadAttempt,
    ErrorCode::InconsistentState,
];

/// Writes synthetic envelope lines; see the module documentation.
pub struct Generator {
    rng: Pcg64Mcg,
    options: GenOptions,
    /// `created_at` of the previous line: arrivals move forward, a few seconds apart.
    clock_ms: i64,
    /// The payload's JSON before it is base64-encoded (reused).
    payload: Vec<u8>,
}

impl Generator {
    /// A generator for `options`. A version other than 1 or 2 is written as given (the
    /// envelopes then follow version 2's shape), which is only useful to test rejections.
    pub fn new(options: GenOptions) -> Self {
        Generator {
            rng: Pcg64Mcg::seed_from_u64(options.seed),
            options,
            clock_ms: EPOCH_MS,
            payload: Vec::with_capacity(4096),
        }
    }

    /// Appends one line, without its LF, to `out`. Returns the code its defect is meant to draw,
    /// or `None` when the line is valid.
    pub fn next_line(&mut self, out: &mut Vec<u8>) -> Option<ErrorCode> {
        let start = out.len();
        self.envelope(out);
        if self.unit() >= self.options.invalid_rate {
            return None;
        }
        // Not every defect fits every line (a line without attempts has no outcome to spoil):
        // draw until one applies. Truncation always does.
        for _ in 0..8 {
            let code = DEFECTS[self.below(DEFECTS.len())];
            if self.spoil(out, start, code) {
                return Some(code);
            }
        }
        self.spoil(out, start, ErrorCode::MalformedJson);
        Some(ErrorCode::MalformedJson)
    }

    fn envelope(&mut self, out: &mut Vec<u8>) {
        let v2 = self.options.version != 1;
        let service = &SERVICES[self.below(SERVICES.len())];
        self.clock_ms += self.range(0, 8_000);
        let created = self.clock_ms;
        let status = match self.below(100) {
            0..=84 => Status::Dead,
            85..=89 => Status::Pending,
            90..=93 => Status::InFlight,
            94..=97 => Status::Succeeded,
            _ if v2 => Status::Cancelled,
            _ => Status::Dead,
        };

        let _ = write!(out, "{{\"envelope_version\":{}", self.options.version);
        out.extend_from_slice(b",\"id\":\"");
        self.push_ulid(out, created);
        let _ = write!(
            out,
            "\",\"queue\":\"{}\",\"handler_ref\":\"{}\"",
            service.queue, service.handler
        );
        match self.below(10) {
            0..=6 => {
                let (major, minor, patch) =
                    (self.range(1, 4), self.range(0, 12), self.range(0, 30));
                let _ = write!(out, ",\"handler_version\":\"{major}.{minor}.{patch}\"");
            }
            7 => out.extend_from_slice(b",\"handler_version\":null"),
            _ => {}
        }
        let claim_check = v2 && self.below(25) == 0;
        if !claim_check {
            self.fill_payload(service);
            out.extend_from_slice(b",\"payload\":\"");
            base64_simd::STANDARD.encode_append(&self.payload, out);
            out.push(b'"');
        }
        let content_type = if self.below(4) == 0 {
            "application/json"
        } else {
            "application/json; charset=utf-8"
        };
        let _ = write!(out, ",\"payload_content_type\":\"{content_type}\"");
        if claim_check {
            let _ = write!(
                out,
                ",\"payload_ref\":{{\"uri\":\"s3://rdq-payloads/{}/{}.json\",\"sha256\":\"",
                service.queue,
                self.range(100_000, 999_999)
            );
            for _ in 0..4 {
                let _ = write!(out, "{:016x}", self.rng.next_u64());
            }
            let _ = write!(out, "\",\"size\":{}}}", self.range(1 << 20, 64 << 20));
        } else {
            out.extend_from_slice(b",\"payload_ref\":null");
        }
        self.headers(out, service, v2);

        let plan = self.attempt_plan(status, created);
        let _ = write!(
            out,
            ",\"status\":\"{}\",\"attempt_count\":{},\"redrive_count\":{}",
            status.as_str(),
            plan.attempt_count,
            plan.redrive_count
        );
        out.extend_from_slice(b",\"next_attempt_at\":");
        push_optional_timestamp(out, (status == Status::Pending).then_some(plan.next_start));
        out.extend_from_slice(b",\"lease_expires_at\":");
        let lease = plan.attempts.last().map(|last| last.started + LEASE_MS);
        push_optional_timestamp(out, lease.filter(|_| status == Status::InFlight));
        out.extend_from_slice(b",\"created_at\":\"");
        push_timestamp(out, created);
        out.extend_from_slice(b"\",\"attempts\":[");
        for (index, attempt) in plan.attempts.iter().enumerate() {
            if index > 0 {
                out.push(b',');
            }
            let _ = write!(out, "{{\"attempt_no\":{},\"started_at\":\"", attempt.number);
            push_timestamp(out, attempt.started);
            out.extend_from_slice(b"\",\"finished_at\":");
            match attempt.outcome.as_str() {
                Some(outcome) => {
                    out.push(b'"');
                    push_timestamp(out, attempt.started + attempt.duration);
                    out.push(b'"');
                    if v2 {
                        let _ = write!(out, ",\"duration_ms\":{}", attempt.duration);
                    }
                    let _ = write!(out, ",\"outcome\":\"{outcome}\"");
                }
                None if v2 => out.extend_from_slice(b"null,\"duration_ms\":null,\"outcome\":null"),
                None => out.extend_from_slice(b"null,\"outcome\":null"),
            }
            match attempt.outcome {
                Outcome::Retryable | Outcome::Permanent => {
                    self.error(out, service, attempt.outcome)
                }
                Outcome::LeaseExpired => {
                    let _ = write!(
                        out,
                        ",\"error\":{{\"type\":\"rdq.LeaseExpired\",\"message\":\"lease of {LEASE_MS} ms expired without a heartbeat (worker w-{})\"}}",
                        self.below(16)
                    );
                }
                Outcome::Success | Outcome::InFlight => {
                    if self.below(2) == 0 {
                        out.extend_from_slice(b",\"error\":null");
                    }
                }
            }
            out.push(b'}');
        }
        out.push(b']');
        if self.below(8) == 0 {
            self.unknown_members(out);
        }
        out.push(b'}');
    }

    fn headers(&mut self, out: &mut Vec<u8>, service: &Service, v2: bool) {
        out.extend_from_slice(b",\"headers\":{\"traceparent\":\"00-");
        let _ = write!(
            out,
            "{:016x}{:016x}-{:016x}-01\"",
            self.rng.next_u64(),
            self.rng.next_u64(),
            self.rng.next_u64()
        );
        let submitter = (self.below(3) == 0).then(|| SUBMITTERS[self.below(SUBMITTERS.len())]);
        if !v2 {
            let _ = write!(out, ",\"rdq.source\":\"{}\"", service.source);
            if let Some(by) = submitter {
                let _ = write!(out, ",\"rdq.submitted_by\":\"{by}\"");
            }
        }
        let _ = write!(
            out,
            ",\"tenant\":\"{}\"",
            TENANTS[self.below(TENANTS.len())]
        );
        if self.below(5) == 0 {
            let _ = write!(out, ",\"x-request-id\":\"req-{}\"", self.rng.next_u32());
        }
        out.push(b'}');
        if v2 {
            let _ = write!(out, ",\"origin\":{{\"source\":\"{}\"", service.source);
            if let Some(by) = submitter {
                let _ = write!(out, ",\"submitted_by\":\"{by}\"");
            }
            out.push(b'}');
        }
    }

    /// The attempt history for `status`: one run of attempts, or two when the task was
    /// redriven once (numbering restarts at 1), each attempt timed after the one before.
    fn attempt_plan(&mut self, status: Status, created: i64) -> AttemptPlan {
        let runs = if self.below(10) == 0 { 2 } else { 1 };
        let mut attempts = Vec::with_capacity(10);
        let mut attempt_count = 0;
        let mut start = created + self.range(20, 3_000);
        for run in 0..runs {
            let last_run = run + 1 == runs;
            let n = match status {
                Status::Pending | Status::Cancelled if last_run => self.range(0, 3),
                // Most retry policies give up after two to four tries.
                _ => [1, 1, 2, 2, 2, 3, 3, 3, 4, 5][self.below(10)],
            } as u32;
            for number in 1..=n {
                let outcome = if number < n {
                    self.failure_on_the_way()
                } else if !last_run {
                    // The run that ended in the DLQ before the redrive.
                    Outcome::Permanent
                } else {
                    match status {
                        Status::InFlight => Outcome::InFlight,
                        Status::Succeeded => Outcome::Success,
                        Status::Cancelled if self.below(4) == 0 => Outcome::Success,
                        Status::Dead if self.below(2) == 0 => Outcome::Permanent,
                        _ => self.failure_on_the_way(),
                    }
                };
                let duration = match outcome {
                    Outcome::LeaseExpired => LEASE_MS + self.range(0, 500),
                    Outcome::Success => self.range(5, 2_000),
                    Outcome::InFlight => 0,
                    _ => self.range(3, 30_000),
                };
                attempts.push(PlannedAttempt {
                    number,
                    outcome,
                    started: start,
                    duration,
                });
                // Back-off grows with each try; a redrive comes hours later.
                let backoff = if number == n {
                    self.range(3_600_000, 72 * 3_600_000)
                } else {
                    1_000 << (2 * number.min(6))
                };
                start += duration + backoff + self.range(0, 1_000);
            }
            if last_run {
                attempt_count = n;
            }
        }
        AttemptPlan {
            attempts,
            attempt_count,
            redrive_count: runs - 1 + u32::from(self.below(20) == 0),
            next_start: start,
        }
    }

    /// How an attempt that was not the last one ended.
    fn failure_on_the_way(&mut self) -> Outcome {
        if self.below(12) == 0 {
            Outcome::LeaseExpired
        } else {
            Outcome::Retryable
        }
    }

    fn error(&mut self, out: &mut Vec<u8>, service: &Service, outcome: Outcome) {
        let retryable = outcome == Outcome::Retryable;
        let pick = loop {
            let index = service.failures[self.below(service.failures.len())];
            if FAILURES[index].retryable == retryable || self.below(3) == 0 {
                break &FAILURES[index];
            }
        };
        let _ = write!(
            out,
            ",\"error\":{{\"type\":\"{}\",\"message\":\"",
            pick.exception
        );
        let message_at = out.len();
        self.template(out, pick.message, true);
        let message = out[message_at..].to_vec();
        out.push(b'"');
        if self.below(6) == 0 {
            let _ = write!(
                out,
                ",\"detail\":{{\"http_status\":{},\"retry_after_s\":1.5e1,\"upstream\":null}}",
                [502, 503, 504, 429][self.below(4)]
            );
        }
        // Some SDKs keep the stack of the final failure only, some none at all.
        match self.below(10) {
            0 => {
                out.extend_from_slice(b",\"stack\":null}");
                return;
            }
            1..=4 if retryable => {
                out.push(b'}');
                return;
            }
            _ => {}
        }
        // `Type: first line of the message`, then the frames from the throw upwards.
        let _ = write!(out, ",\"stack\":\"{}: ", pick.exception);
        let first_line_end = memmem::find(&message, b"\\n").unwrap_or(message.len());
        out.extend_from_slice(&message[..first_line_end]);
        let library = self.range(0, pick.frames.len() as i64) as usize;
        for frame in &pick.frames[pick.frames.len() - library..] {
            let _ = write!(out, "\\n\\tat {frame}");
        }
        let own = self.range(1, 3);
        let file = service.class.rsplit('.').next().unwrap_or(service.class);
        for depth in 0..own {
            let _ = write!(
                out,
                "\\n\\tat {}.{}({file}.java:{})",
                service.class,
                ["handle", "process", "apply", "execute", "lambda$run$0"][depth as usize],
                self.range(40, 900)
            );
        }
        for frame in WORKER_FRAMES {
            let _ = write!(out, "\\n\\tat {frame}");
        }
        if self.below(4) == 0 {
            let _ = write!(
                out,
                "\\nCaused by: java.io.IOException: stream closed\\n\\tat {}\\n\\t... {} more",
                HTTP_FRAMES[0],
                self.range(3, 30)
            );
        }
        out.extend_from_slice(b"\"}");
    }

    /// The payload: a JSON object of the service's shape, 50 B to 2 KB, mostly small.
    fn fill_payload(&mut self, service: &Service) {
        let target = 50 + (self.unit().powi(3) * 1_950.0) as usize;
        let mut payload = std::mem::take(&mut self.payload);
        payload.clear();
        payload.push(b'{');
        self.template(&mut payload, service.payload_head, false);
        payload.extend_from_slice(b",\"items\":[");
        let mut first = true;
        while payload.len() + 2 < target {
            if !first {
                payload.push(b',');
            }
            first = false;
            self.template(&mut payload, service.payload_item, false);
        }
        payload.extend_from_slice(b"]}");
        self.payload = payload;
    }

    /// Expands `{n}` (a number), `{n4}` (four digits), `{d}` (one digit) and `{host}`. With
    /// `escape`, the result is written as the inside of a JSON string.
    fn template(&mut self, out: &mut Vec<u8>, template: &str, escape: bool) {
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            push_text(out, &rest[..open], escape);
            let tail = &rest[open..];
            let taken = if tail.starts_with("{n}") {
                let _ = write!(out, "{}", self.range(1, 9_999_999));
                3
            } else if tail.starts_with("{n4}") {
                let _ = write!(out, "{:04}", self.below(10_000));
                4
            } else if tail.starts_with("{d}") {
                let _ = write!(out, "{}", self.below(10));
                3
            } else if tail.starts_with("{host}") {
                push_text(out, HOSTS[self.below(HOSTS.len())], escape);
                6
            } else {
                // A literal brace of the template's own JSON.
                out.push(b'{');
                1
            };
            rest = &tail[taken..];
        }
        push_text(out, rest, escape);
    }

    fn unknown_members(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(b",\"x_export\":{");
        let mut first = true;
        for member in UNKNOWN_MEMBERS {
            if self.below(2) == 0 {
                continue;
            }
            if !first {
                out.push(b',');
            }
            first = false;
            self.template(out, member, false);
        }
        out.push(b'}');
    }

    /// A ULID whose time is `ms`: 10 characters of time, 16 of randomness, Crockford base32.
    fn push_ulid(&mut self, out: &mut Vec<u8>, ms: i64) {
        const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
        let value = (u128::from(ms as u64 & 0xFFFF_FFFF_FFFF) << 80)
            | (u128::from(self.rng.next_u64()) << 16)
            | u128::from(self.rng.next_u32() & 0xFFFF);
        for index in (0..26).rev() {
            out.push(ALPHABET[((value >> (index * 5)) & 31) as usize]);
        }
    }

    /// Applies `code`'s defect to the line at `out[start..]`; false when the line has nothing
    /// the defect can spoil (then it is left as it was).
    fn spoil(&mut self, out: &mut Vec<u8>, start: usize, code: ErrorCode) -> bool {
        let v2 = self.options.version != 1;
        let line = &out[start..];
        let find = |needle: &[u8]| memmem::find(line, needle).map(|at| start + at);
        let edit = |out: &mut Vec<u8>, range: Range<usize>, with: &[u8]| {
            out.splice(range, with.iter().copied());
        };
        match code {
            ErrorCode::MalformedJson => {
                // An export cut short: keep at least half, and never split a UTF-8 character
                // (that would be INVALID_UTF8 instead).
                let len = out.len() - start;
                let mut cut = start + len / 2 + self.below(len / 2);
                while out[cut] & 0xC0 == 0x80 {
                    cut -= 1;
                }
                out.truncate(cut);
            }
            ErrorCode::InvalidUtf8 => {
                // A tenant written by a Latin-1 client: `é` as the lone byte 0xE9.
                let Some(at) = find(b"\"tenant\":\"") else {
                    return false;
                };
                edit(out, at + 10..at + 10, b"caf\xE9-");
            }
            ErrorCode::NotAnObject => {
                out.insert(start, b'[');
                out.push(b']');
            }
            ErrorCode::DuplicateKey => {
                // A hand-patched line: the new status added, the old one left in place.
                out.pop();
                out.extend_from_slice(b",\"st\\u0061tus\":\"PENDING\"}");
            }
            ErrorCode::NestingTooDeep => {
                out.pop();
                out.extend_from_slice(b",\"x_trace\":");
                out.extend(std::iter::repeat_n(b'[', 200));
                out.extend(std::iter::repeat_n(b']', 200));
                out.push(b'}');
            }
            ErrorCode::MissingField => {
                let Some(at) = find(b",\"created_at\":\"") else {
                    return false;
                };
                // `,"created_at":"` (15 bytes), the timestamp (24) and its closing quote.
                edit(out, at..at + 40, b"");
            }
            ErrorCode::WrongType => {
                let Some(digits) = integer_after(out, start, b"\"attempt_count\":") else {
                    return false;
                };
                out.insert(digits.end, b'"');
                out.insert(digits.start, b'"');
            }
            ErrorCode::OutOfRange => {
                let Some(digits) = integer_after(out, start, b"\"redrive_count\":") else {
                    return false;
                };
                edit(out, digits, b"4294967296");
            }
            ErrorCode::UnsupportedVersion => {
                let Some(at) = find(b"\"envelope_version\":") else {
                    return false;
                };
                edit(out, at + 19..at + 20, b"3");
            }
            ErrorCode::InvalidId => {
                let Some(at) = find(b"\"id\":\"") else {
                    return false;
                };
                out[at + 6..at + 32].make_ascii_lowercase();
            }
            ErrorCode::InvalidName => {
                let Some(at) = find(b"\"queue\":\"") else {
                    return false;
                };
                out[at + 9].make_ascii_uppercase();
            }
            ErrorCode::InvalidBase64 => {
                // A payload wrapped at 76 columns by a MIME encoder.
                let Some(at) = find(b"\"payload\":\"") else {
                    return false;
                };
                let wrap = at + 11 + 60;
                edit(out, wrap..wrap, b"\\r\\n");
            }
            ErrorCode::InvalidContentType => {
                let Some(at) = find(b"\"payload_content_type\":\"application/json") else {
                    return false;
                };
                let end = at + 40;
                let close = end + out[end..].iter().position(|&b| b == b'"').unwrap_or(0);
                edit(out, end..close, b";");
            }
            ErrorCode::PayloadRefReserved if !v2 => {
                let Some(at) = find(b"\"payload_ref\":null") else {
                    return false;
                };
                edit(out, at + 14..at + 18, b"{\"uri\":\"s3://legacy/blob\"}");
            }
            ErrorCode::InvalidPayloadRef if v2 => {
                let Some(at) = find(b"\"payload_ref\":null") else {
                    return false;
                };
                edit(out, at + 14..at + 18, b"\"s3://rdq-payloads/blob.json\"");
            }
            ErrorCode::PayloadRefReserved | ErrorCode::InvalidPayloadRef => return false,
            ErrorCode::InvalidHeader => {
                let Some(at) = find(b"\"headers\":{") else {
                    return false;
                };
                let with: &[u8] = if v2 {
                    b"\"rdq.source\":\"legacy-importer\","
                } else {
                    b"\"\":\"orphan value\","
                };
                edit(out, at + 11..at + 11, with);
            }
            ErrorCode::UnknownStatus => {
                return replace_string_value(out, start, b"\"status\":\"", b"FAILED");
            }
            ErrorCode::UnknownOutcome => {
                return replace_string_value(out, start, b"\"outcome\":\"", b"TIMEOUT");
            }
            ErrorCode::InvalidTimestamp => {
                // A producer that writes offsets instead of `Z`.
                let Some(at) = find(b"\"created_at\":\"") else {
                    return false;
                };
                let zone = at + 14 + 23;
                edit(out, zone..zone + 1, b"+00:00");
            }
            ErrorCode::FieldTooLong => {
                // An upstream's whole HTML error page as the message, not truncated.
                let Some(at) = find(b"\"message\":\"") else {
                    return false;
                };
                let value = at + 11;
                let page =
                    b"<html><body><h1>502 Bad Gateway</h1><p>upstream closed</p></body></html>";
                let repeated: Vec<u8> = page.iter().copied().cycle().take(5_000).collect();
                edit(out, value..value, &repeated);
            }
            ErrorCode::BadAttempt => {
                let Some(at) = find(b"{\"attempt_no\":1,") else {
                    return false;
                };
                edit(out, at + 14..at + 15, b"2");
            }
            ErrorCode::InconsistentState => {
                let Some(digits) = integer_after(out, start, b"\"attempt_count\":") else {
                    return false;
                };
                let count = decimal(&out[digits.clone()]).unwrap_or(0);
                edit(out, digits, (count + 10).to_string().as_bytes());
            }
            _ => return false,
        }
        true
    }

    /// A uniform integer in `low..=high`.
    fn range(&mut self, low: i64, high: i64) -> i64 {
        low + self.below((high - low + 1) as usize) as i64
    }

    /// A uniform integer in `0..n` (multiply-shift: no modulo bias worth the name at these n).
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.rng.next_u64()) * n as u128) >> 64) as usize
    }

    /// A uniform float in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Outcome {
    Success,
    Retryable,
    Permanent,
    LeaseExpired,
    /// Not finished yet: `finished_at` and `outcome` null.
    InFlight,
}

impl Outcome {
    /// The spelling of `outcome`; `None` while in flight (written as `null`).
    fn as_str(self) -> Option<&'static str> {
        match self {
            Outcome::Success => Some("SUCCESS"),
            Outcome::Retryable => Some("RETRYABLE_FAILURE"),
            Outcome::Permanent => Some("PERMANENT_FAILURE"),
            Outcome::LeaseExpired => Some("LEASE_EXPIRED"),
            Outcome::InFlight => None,
        }
    }
}

/// One attempt of a planned history; `duration` is 0 while in flight.
struct PlannedAttempt {
    number: u32,
    outcome: Outcome,
    started: i64,
    duration: i64,
}

/// The attempt history of one envelope, and when the next attempt would start.
struct AttemptPlan {
    attempts: Vec<PlannedAttempt>,
    attempt_count: u32,
    redrive_count: u32,
    next_start: i64,
}

/// Where the digits of the integer right after `member` (a key and its colon) lie, in the
/// line at `out[start..]`.
fn integer_after(out: &[u8], start: usize, member: &[u8]) -> Option<Range<usize>> {
    let at = start + memmem::find(&out[start..], member)? + member.len();
    let len = out[at..].iter().take_while(|b| b.is_ascii_digit()).count();
    Some(at..at + len)
}

/// Replaces the text of the first string value that follows `member` (a key, its colon and
/// the opening quote) in the line at `out[start..]`; false when there is none.
fn replace_string_value(out: &mut Vec<u8>, start: usize, member: &[u8], with: &[u8]) -> bool {
    let Some(at) = memmem::find(&out[start..], member) else {
        return false;
    };
    let value = start + at + member.len();
    let close = value + out[value..].iter().position(|&b| b == b'"').unwrap_or(0);
    out.splice(value..close, with.iter().copied());
    true
}

/// Writes `text`, JSON-escaped when `escape` (by the crate's one escaper).
fn push_text(out: &mut Vec<u8>, text: &str, escape: bool) {
    if escape {
        crate::json::push_string_contents(out, text);
    } else {
        out.extend_from_slice(text.as_bytes());
    }
}
