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
//!
//! With [`GenOptions::stack_bytes`], every failure's stack trace is padded to about that many
//! bytes with the frames of calls through Spring proxies, for a corpus that weighs long,
//! escape-heavy strings.

#[cfg(feature = "stream")]
mod chokaq;
mod defects;
mod tables;

use std::io::Write;

#[cfg(feature = "stream")]
pub use chokaq::ChokaqGenerator;
use defects::DEFECTS;
use tables::*;

use memchr::memmem;
use rand_pcg::rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::diagnostic::ErrorCode;
use crate::envelope::formats::{push_optional_timestamp, push_timestamp};

/// What to generate. Start from [`GenOptions::default`] (seed 0, the newest version, no
/// defects) and set the fields that differ (`#[non_exhaustive]`: new options come with
/// defaults that keep today's lines).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct GenOptions {
    /// The seed: the same seed and options give the same lines.
    pub seed: u64,
    /// The `envelope_version` to write: 1 or 2.
    pub version: u32,
    /// The share of lines, from 0 to 1, that carry one defect each.
    pub invalid_rate: f64,
    /// With `Some(n)`, every retryable or permanent failure carries a stack trace of about `n`
    /// bytes (UTF-8, unescaped: what the `stack` limit counts), never more: the usual frames,
    /// padded between the service's frames and the worker's with calls through Spring proxies.
    /// A stack is never cut below its usual frames (up to about 1.3 KB). Over
    /// [`STACK_LIMIT`](crate::envelope::STACK_LIMIT) the lines are invalid, which is only
    /// useful to test rejections. `None` (the default): the usual stacks, or none.
    pub stack_bytes: Option<usize>,
}

impl Default for GenOptions {
    fn default() -> Self {
        GenOptions {
            seed: 0,
            version: crate::envelope::NEWEST_VERSION,
            invalid_rate: 0.0,
            stack_bytes: None,
        }
    }
}

/// 2024-05-01T12:00:00.000Z: the first envelope's `created_at`.
const EPOCH_MS: i64 = 1_714_564_800_000;

/// The lease a worker holds on an attempt in flight.
const LEASE_MS: i64 = 30_000;

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
        // Some SDKs keep the stack of the final failure only, some none at all. The draw is
        // made either way, so that `stack_bytes` changes the stacks and what follows them only.
        match self.below(10) {
            _ if self.options.stack_bytes.is_some() => {}
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
        out.extend_from_slice(b",\"stack\":\"");
        let stack_at = out.len();
        let _ = write!(out, "{}: ", pick.exception);
        let first_line_end = memmem::find(&message, b"\\n").unwrap_or(message.len());
        out.extend_from_slice(&message[..first_line_end]);
        let library = self.range(0, pick.frames.len() as i64) as usize;
        push_frames(out, &pick.frames[pick.frames.len() - library..]);
        let own = self.range(1, 3);
        for method in &OWN_METHODS[..own as usize] {
            self.push_own_frame(out, service, method);
        }
        let padding_at = out.len();
        push_frames(out, WORKER_FRAMES);
        if self.below(4) == 0 {
            let _ = write!(
                out,
                "\\nCaused by: java.io.IOException: stream closed\\n\\tat {}\\n\\t... {} more",
                HTTP_FRAMES[0],
                self.range(3, 30)
            );
        }
        if let Some(target) = self.options.stack_bytes {
            // The limit counts the text, not its JSON escapes.
            let budget = target.saturating_sub(unescaped_len(&out[stack_at..]));
            let padding = self.proxy_frames(service, budget);
            out.splice(padding_at..padding_at, padding);
        }
        out.extend_from_slice(b"\"}");
    }

    /// A frame of the service's own code: `method` at some line of its class's file.
    fn push_own_frame(&mut self, out: &mut Vec<u8>, service: &Service, method: &str) {
        let file = service.class.rsplit('.').next().unwrap_or(service.class);
        let _ = write!(
            out,
            "\\n\\tat {}.{method}({file}.java:{})",
            service.class,
            self.range(40, 900)
        );
    }

    /// Whole frames of calls from one bean of the service to another through Spring proxies,
    /// as JSON string contents whose text is at most `budget` bytes (short of it by less than
    /// a frame): the depth that makes real stacks long.
    fn proxy_frames(&mut self, service: &Service, budget: usize) -> Vec<u8> {
        let mut frames = Vec::with_capacity(budget + budget / 16 + 4096);
        let mut text_len = 0;
        while text_len <= budget {
            let hop_at = frames.len();
            // Innermost first: the target called by reflection, the interceptors (none to
            // three), the proxy's entry, its generated subclass, the calling method.
            push_frames(&mut frames, PROXY_INVOKE_FRAMES);
            for _ in 0..self.below(4) {
                push_frames(
                    &mut frames,
                    INTERCEPTOR_FRAMES[self.below(INTERCEPTOR_FRAMES.len())],
                );
                push_frames(&mut frames, &[INTERCEPTOR_PROCEED]);
            }
            push_frames(&mut frames, PROXY_ENTRY_FRAMES);
            let called = OWN_METHODS[self.below(OWN_METHODS.len())];
            let _ = write!(
                frames,
                "\\n\\tat {}$$SpringCGLIB$$0.{called}(<generated>)",
                service.class
            );
            let caller = OWN_METHODS[self.below(OWN_METHODS.len())];
            self.push_own_frame(&mut frames, service, caller);
            text_len += unescaped_len(&frames[hop_at..]);
        }
        // Each frame starts with its escaped `\n\t`: cut before the first one that does not fit.
        let (mut cut, mut text_len) = (0, 0);
        for at in memmem::find_iter(&frames, b"\\n\\t") {
            text_len += unescaped_len(&frames[cut..at]);
            if text_len > budget {
                break;
            }
            cut = at;
        }
        frames.truncate(cut);
        frames
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

/// Writes `text`, JSON-escaped when `escape` (by the crate's one escaper).
fn push_text(out: &mut Vec<u8>, text: &str, escape: bool) {
    if escape {
        crate::json::push_string_contents(out, text);
    } else {
        out.extend_from_slice(text.as_bytes());
    }
}

/// Appends stack frames, each on its own line after a tab and `at`, as JSON string contents.
fn push_frames(out: &mut Vec<u8>, frames: &[&str]) {
    for frame in frames {
        let _ = write!(out, "\\n\\tat {frame}");
    }
}

/// The length of JSON string contents (as the crate's escaper writes them) once unescaped: an
/// escape is two bytes for one, or six (`\u00XX`) for one control character.
fn unescaped_len(escaped: &[u8]) -> usize {
    let (mut len, mut at) = (escaped.len(), 0);
    while let Some(found) = memchr::memchr(b'\\', &escaped[at..]) {
        let width = if escaped.get(at + found + 1) == Some(&b'u') {
            6
        } else {
            2
        };
        len -= width - 1;
        at += found + width;
    }
    len
}

/// `count` lines of `gen` (for the crate's tests).
#[cfg(test)]
pub(crate) fn test_lines(seed: u64, version: u32, invalid_rate: f64, count: usize) -> Vec<Vec<u8>> {
    let mut generator = Generator::new(GenOptions {
        seed,
        version,
        invalid_rate,
        ..GenOptions::default()
    });
    (0..count)
        .map(|_| {
            let mut line = Vec::new();
            generator.next_line(&mut line);
            line
        })
        .collect()
}
