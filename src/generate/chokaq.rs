//! Synthetic ChokaQ rows (docs/chokaq.md): what `SELECT * FROM chokaq.Jobs… FOR JSON PATH` would
//! give for a realistic .NET service, so the importer can be tried and measured without a
//! SQL Server. GUID ids, PascalCase JSON payloads, `datetime2(7)` times in both spellings with
//! 0 to 7 fraction digits, comma-separated tags, and a .NET exception text that fits each
//! `FailureReason`.

use std::io::Write;

use rand_pcg::rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::chokaq::Table;
use crate::envelope::formats::push_timestamp;

/// 2026-04-01T08:00:00.000Z: the first row's `CreatedAtUtc`.
const EPOCH_MS: i64 = 1_775_030_400_000;

const QUEUES: &[&str] = &[
    "default",
    "emails",
    "Billing",
    "reports-nightly",
    "Webhooks Outbound",
    "critical",
];

const TYPES: &[&str] = &[
    "Acme.Billing.Jobs.ChargeInvoice, Acme.Billing",
    "Acme.Notifications.SendWelcomeEmail",
    "Acme.Reports.BuildMonthlyReport, Acme.Reports, Version=2.1.0.0, Culture=neutral, PublicKeyToken=null",
    "Acme.Webhooks.DeliverWebhook`1[[Acme.Webhooks.OrderPlaced, Acme.Webhooks]], Acme.Webhooks",
    "email.send.v1",
];

const TAGS: &[&str] = &[
    "tenant:acme",
    "priority:high",
    "region:eu-west-1",
    "retryable",
    "vip",
    "import:2026-04",
];

/// A .NET exception type and message per `FailureReason` (0 to 10).
const FAILURES: [(&str, &str); 11] = [
    ("System.Net.Http.HttpRequestException", "Response status code does not indicate success: 503 (Service Unavailable)."),
    ("System.OperationCanceledException", "The operation was canceled."),
    ("", "Worker heartbeat lost; job reclaimed as zombie."),
    ("Polly.CircuitBreaker.BrokenCircuitException", "The circuit is now open and is not allowing calls."),
    ("Acme.Validation.PayloadRejectedException", "Payload rejected: field 'Email' must not be empty."),
    ("Acme.RateLimiting.ThrottledException", "Rate limit of 100 requests per minute exceeded for tenant 'acme'."),
    ("System.NullReferenceException", "Object reference not set to an instance of an object."),
    ("System.TimeoutException", "The operation has timed out after 00:00:30."),
    ("Microsoft.Data.SqlClient.SqlException", "Transaction (Process ID 73) was deadlocked on lock resources with another process and has been chosen as the deadlock victim. Rerun the transaction."),
    ("", "Heartbeat update failed: connection to chokaq-sql-01 reset."),
    ("Acme.Jobs.RetryLifetimeExpiredException", "Job exceeded its retry lifetime of 1.00:00:00."),
];

/// Writes ChokaQ rows of one table, or of all three mixed.
pub struct ChokaqGenerator {
    rng: Pcg64Mcg,
    table: Option<Table>,
    clock_ms: i64,
    /// How this row writes its times: fraction digits (0 to 7), a space for `T`, a `Z`. One
    /// exporter writes all of a row's times alike, and cutting them alike keeps their order.
    time_form: (usize, bool, bool),
}

impl ChokaqGenerator {
    /// Rows of `table` (or of every table, mixed), deterministic for `seed`.
    pub fn new(seed: u64, table: Option<Table>) -> Self {
        ChokaqGenerator {
            rng: Pcg64Mcg::seed_from_u64(seed ^ 0x0C40_4A9C),
            table,
            clock_ms: EPOCH_MS,
            time_form: (3, false, false),
        }
    }

    /// Appends one row, without its LF.
    pub fn next_row(&mut self, out: &mut Vec<u8>) {
        let table = self.table.unwrap_or(match self.below(10) {
            0..=5 => Table::Dlq,
            6..=7 => Table::Hot,
            _ => Table::Archive,
        });
        self.clock_ms += self.range(0, 30_000);
        self.time_form = (self.below(8), self.below(2) == 0, self.below(4) == 0);
        let created = self.clock_ms;
        out.extend_from_slice(b"{\"Id\":\"");
        self.guid(out);
        let queue = QUEUES[self.below(QUEUES.len())];
        let type_name = TYPES[self.below(TYPES.len())];
        let _ = write!(
            out,
            "\",\"Queue\":\"{queue}\",\"Type\":\"{type_name}\",\"Payload\":"
        );
        if self.below(20) == 0 {
            out.extend_from_slice(b"null");
        } else {
            self.payload(out);
        }
        out.extend_from_slice(b",\"Tags\":");
        if self.below(3) == 0 {
            out.extend_from_slice(b"null");
        } else {
            let n = self.range(1, 3);
            out.push(b'"');
            for i in 0..n {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(TAGS[self.below(TAGS.len())].as_bytes());
            }
            out.push(b'"');
        }
        let attempts = match table {
            Table::Hot => self.range(0, 2),
            _ => self.range(1, 5),
        };
        let _ = write!(out, ",\"AttemptCount\":{attempts},\"WorkerId\":");
        if table == Table::Hot && self.below(2) == 0 {
            out.extend_from_slice(b"null");
        } else {
            let _ = write!(out, "\"worker-{}-{}\"", self.below(8), self.below(4));
        }
        let _ = write!(
            out,
            ",\"CreatedBy\":\"svc-{}\",\"LastModifiedBy\":null,\"CreatedAtUtc\":",
            queue.to_ascii_lowercase().replace(' ', "-")
        );
        self.time(out, created);
        let started = created + self.range(10, 5_000);
        let finished = started + self.range(5, 60_000);
        match table {
            Table::Hot => {
                let status = self.below(3);
                let _ = write!(out, ",\"IdempotencyKey\":\"idem-{}\",\"Priority\":{},\"Status\":{status},\"HeartbeatUtc\":", self.rng.next_u32(), self.range(0, 10));
                if status == 2 {
                    let beat = started + self.range(0, 20_000);
                    self.time(out, beat);
                } else {
                    out.extend_from_slice(b"null");
                }
                out.extend_from_slice(b",\"ScheduledAtUtc\":");
                if self.below(2) == 0 {
                    let scheduled = created + self.range(0, 3_600_000);
                    self.time(out, scheduled);
                } else {
                    out.extend_from_slice(b"null");
                }
                out.extend_from_slice(b",\"StartedAtUtc\":");
                if status == 2 || attempts > 0 {
                    self.time(out, started);
                } else {
                    out.extend_from_slice(b"null");
                }
                out.extend_from_slice(b",\"LastUpdatedUtc\":");
                self.time(out, finished);
            }
            Table::Archive => {
                out.extend_from_slice(b",\"StartedAtUtc\":");
                self.time(out, started);
                out.extend_from_slice(b",\"FinishedAtUtc\":");
                self.time(out, finished);
                let _ = write!(out, ",\"DurationMs\":{}.0", finished - started);
            }
            Table::Dlq => {
                let reason = self.below(11);
                let _ = write!(out, ",\"FailureReason\":{reason},\"ErrorDetails\":");
                self.error_details(out, reason, type_name);
                out.extend_from_slice(b",\"FailedAtUtc\":");
                self.time(out, finished);
            }
        }
        out.push(b'}');
    }

    fn guid(&mut self, out: &mut Vec<u8>) {
        let (a, b) = (self.rng.next_u64(), self.rng.next_u64());
        let _ = write!(
            out,
            "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xFFFF,
            a & 0xFFF,
            0x8000 | (b >> 48) & 0x3FFF,
            b & 0xFFFF_FFFF_FFFF
        );
    }

    /// A PascalCase JSON payload, as a JSON string.
    fn payload(&mut self, out: &mut Vec<u8>) {
        let _ = write!(
            out,
            "\"{{\\\"OrderId\\\":{},\\\"CustomerEmail\\\":\\\"user{}@example.com\\\",\\\"Amount\\\":{}.{:02},\\\"Currency\\\":\\\"EUR\\\",\\\"Lines\\\":[",
            self.range(1000, 999_999),
            self.below(10_000),
            self.range(1, 5000),
            self.below(100)
        );
        for i in 0..self.range(1, 6) {
            if i > 0 {
                out.push(b',');
            }
            let _ = write!(
                out,
                "{{\\\"Sku\\\":\\\"SKU-{:05}\\\",\\\"Qty\\\":{}}}",
                self.below(100_000),
                self.range(1, 9)
            );
        }
        out.extend_from_slice(b"]}\"");
    }

    /// A time in `datetime2(7)` form: `T` or a space, 0 to 7 fraction digits, `Z` or not.
    fn time(&mut self, out: &mut Vec<u8>, ms: i64) {
        let (digits, space, zulu) = self.time_form;
        let mut text = Vec::with_capacity(28);
        push_timestamp(&mut text, ms);
        if space {
            text[10] = b' ';
        }
        text.truncate(19);
        if digits > 0 {
            let _ = write!(text, ".{:03}", ms.rem_euclid(1000));
            let extra: u32 = self.rng.next_u32() % 10_000;
            let _ = write!(text, "{extra:04}");
            text.truncate(20 + digits);
        }
        if zulu {
            text.push(b'Z');
        }
        out.push(b'"');
        out.extend_from_slice(&text);
        out.push(b'"');
    }

    /// `ErrorDetails` for a `FailureReason`: a .NET `Exception.ToString()`, with nested inner
    /// exceptions now and then, or a plain text, or NULL.
    fn error_details(&mut self, out: &mut Vec<u8>, reason: usize, type_name: &str) {
        let (exception, message) = FAILURES[reason];
        if self.below(12) == 0 {
            out.extend_from_slice(b"null");
            return;
        }
        let job = type_name.split(", ").next().unwrap_or(type_name);
        let job = job.split('`').next().unwrap_or(job);
        let mut text = String::new();
        if exception.is_empty() {
            text.push_str(message);
        } else {
            text.push_str(&format!("{exception}: {message}"));
            if self.below(4) == 0 {
                text.push_str("\r\n ---> System.IO.IOException: Unable to read data from the transport connection: Connection reset by peer.\r\n   at System.Net.Sockets.NetworkStream.Read(Span`1 buffer)\r\n   --- End of inner exception stack trace ---");
            }
            for depth in 0..self.range(2, 6) {
                text.push_str(&format!(
                    "\r\n   at {job}.Step{depth}(JobContext context) in /src/Jobs/{}.cs:line {}",
                    job.rsplit('.').next().unwrap_or("Job"),
                    self.range(10, 400)
                ));
            }
            text.push_str("\r\n   at ChokaQ.Processing.JobExecutor.ExecuteAsync(JobRecord job, CancellationToken ct)");
        }
        crate::chokaq::push_json_string(out, &text);
    }

    fn range(&mut self, low: i64, high: i64) -> i64 {
        low + self.below((high - low + 1) as usize) as i64
    }

    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.rng.next_u64()) * n as u128) >> 64) as usize
    }
}
