//! Importing ChokaQ jobs (docs/chokaq.md): one table row, a JSON object keyed by column names,
//! becomes an rdq envelope of version 1 in a fixed output form; the migration chain takes it
//! on from there.
//!
//! The row is read in three steps, each reporting every problem it finds: the columns (names
//! matched ignoring case, types, required ones, the table), then the mapping (IDs, names,
//! payload, headers, status, the rebuilt attempt history, .NET exception texts), and finally
//! the rule engine, which judges the built envelope like any other line.
//!
//! ```
//! use rdq_envelope::chokaq::{ChokaqOptions, Importer};
//! use rdq_envelope::{JsonParser, RuleOptions};
//!
//! let row = br#"{"Id":"7f9c2ba4-e88f-11ee-9a1a-0242ac120002","Queue":"emails","Type":"Acme.SendWelcome","Payload":"{\"To\":\"a@b.c\"}","FailureReason":7,"ErrorDetails":"System.TimeoutException: took too long\n   at Acme.SendWelcome.Run()","AttemptCount":3,"CreatedAtUtc":"2026-04-30 14:32:07.1234567","FailedAtUtc":"2026-04-30T14:33:00"}"#;
//! let mut importer = Importer::new(ChokaqOptions::default(), &RuleOptions::default());
//! let mut parser = JsonParser::new();
//! let doc = parser.parse(row, &mut Vec::new()).unwrap();
//! let (mut out, mut errors, mut warnings) = (Vec::new(), Vec::new(), Vec::new());
//! assert!(importer.import(row, &doc, &mut out, &mut errors, &mut warnings));
//! let envelope = String::from_utf8(out).unwrap();
//! assert!(envelope.contains(r#""queue":"emails","handler_ref":"acme.sendwelcome""#));
//! assert!(envelope.contains(r#""status":"DEAD","attempt_count":3"#));
//! assert!(envelope.contains(r#""outcome":"PERMANENT_FAILURE","error":{"type":"System.TimeoutException","message":"took too long","detail":{"failure_reason":"Timeout"},"stack":"   at Acme.SendWelcome.Run()"}"#));
//! ```

mod columns;
mod text;

use base64_simd::STANDARD as BASE64;

use crate::diagnostic::{push_capped, Diagnostic, ErrorCode};
use crate::envelope::formats::push_optional_timestamp;
use crate::envelope::{RuleOptions, MESSAGE_LIMIT, STACK_LIMIT};
use crate::json::{Document, JsonParser, Value, ValueKind};

pub use columns::Table;
use columns::{Col, Kind, COLUMNS, COLUMN_COUNT, FAILURE_REASONS, TELLING};
pub(crate) use text::{
    derived_ulid, normalize_name, parse_datetime2, parse_dotnet_exception, percent_encode,
    push_json_string, truncated, ulid_ignoring_case, utf16_len,
};

/// How rows are read. Start from [`ChokaqOptions::default`] (the table inferred per row, a
/// 600 s zombie timeout, ChokaQ's 1,000,000-byte payload limit, the 16 MiB reader cap) and set
/// the fields that differ (`#[non_exhaustive]`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChokaqOptions {
    /// The table of every row (`--chokaq-table`); `None` infers it per row.
    pub table: Option<Table>,
    /// Seconds added to a running job's last sign of life for its lease
    /// (`--chokaq-zombie-timeout`).
    pub zombie_timeout_s: u32,
    /// ChokaQ's payload limit in UTF-8 bytes (`--chokaq-max-payload-bytes`), for `CHOKAQ_LIMIT`.
    pub max_payload_bytes: u64,
    /// The longest envelope an import builds, whatever the size limits (the reader cap,
    /// `--max-line-bytes`: a longer line could not be read back): a row whose `AttemptCount`
    /// would rebuild a longer history is `PAYLOAD_TOO_LARGE`, told from the count.
    pub max_line_bytes: usize,
}

impl Default for ChokaqOptions {
    fn default() -> Self {
        ChokaqOptions {
            table: None,
            zombie_timeout_s: 600,
            max_payload_bytes: 1_000_000,
            max_line_bytes: crate::framing::DEFAULT_MAX_LINE_BYTES,
        }
    }
}

const NO_DETAILS: &str = "no details recorded by ChokaQ";

/// The JSON of one attempt that ChokaQ never recorded, but for its number and time.
const UNRECORDED_ERROR: &str = r#","outcome":"RETRYABLE_FAILURE","error":{"type":"chokaq.Unrecorded","message":"attempt not recorded by ChokaQ"}}"#;

/// Imports rows; one per worker thread (it reuses its buffers).
#[derive(Debug)]
pub struct Importer {
    options: ChokaqOptions,
    limits: RuleOptions,
    /// Parses payload texts, to tell JSON from text.
    payload_parser: JsonParser,
    spans: Vec<(usize, usize)>,
}

/// A row's columns that passed their checks.
struct Row<'a> {
    table: Table,
    values: [Option<Value<'a>>; COLUMN_COUNT],
    /// Times in milliseconds, by column.
    times: [Option<i64>; COLUMN_COUNT],
    raw: &'a [u8],
    spans: &'a [(usize, usize)],
}

impl<'a> Row<'a> {
    fn text(&self, col: Col) -> Option<&'a str> {
        self.values[col as usize].and_then(|v| v.as_str())
    }

    fn integer(&self, col: Col) -> Option<i128> {
        self.values[col as usize].and_then(|v| v.as_integer())
    }

    fn time(&self, col: Col) -> Option<i64> {
        self.times[col as usize]
    }

    /// A number column's exact JSON text.
    fn number_text(&self, col: Col) -> Option<&'a str> {
        let value = self.values[col as usize]?;
        let (start, end) = self.spans[value.tape_index()];
        std::str::from_utf8(&self.raw[start..end]).ok()
    }
}

impl Importer {
    /// An importer; `limits` are the run's size limits (`PAYLOAD_TOO_LARGE` is told early
    /// for a history too long to build).
    pub fn new(options: ChokaqOptions, limits: &RuleOptions) -> Self {
        Importer {
            options,
            limits: limits.clone(),
            payload_parser: JsonParser::new(),
            spans: Vec::new(),
        }
    }

    /// Appends the version 1 envelope of `row` (whose document is `doc`) to `out`. False, with
    /// the row's problems in `errors`, when it cannot be imported; `warnings` gets the
    /// `CHOKAQ_LIMIT` warnings. The envelope still has to pass the rule engine.
    pub fn import(
        &mut self,
        raw: &[u8],
        doc: &Document<'_>,
        out: &mut Vec<u8>,
        errors: &mut Vec<Diagnostic>,
        warnings: &mut Vec<Diagnostic>,
    ) -> bool {
        let mut spans = std::mem::take(&mut self.spans);
        doc.node_spans(raw, &mut spans);
        let imported = self.import_row(raw, doc.root(), &spans, out, errors, warnings);
        self.spans = spans;
        imported
    }

    fn import_row(
        &mut self,
        raw: &[u8],
        root: Value<'_>,
        spans: &[(usize, usize)],
        out: &mut Vec<u8>,
        errors: &mut Vec<Diagnostic>,
        warnings: &mut Vec<Diagnostic>,
    ) -> bool {
        let before = errors.len();
        let Some(row) = self.read_row(raw, root, spans, errors) else {
            return false;
        };
        if errors.len() > before {
            return false;
        }
        self.limit_warnings(&row, warnings);
        let queue = normalize_name(row.text(Col::Queue).unwrap_or_default(), false);
        if let Some(error) = self.too_many_attempts(&row, &queue) {
            errors.push(error);
            return false;
        }
        let Some(id) = envelope_id(&row, errors) else {
            return false;
        };
        self.write_envelope(&row, &id, &queue, out);
        true
    }

    /// The columns of the row's table, checked; `None` (with errors) when the table cannot be
    /// told.
    fn read_row<'a>(
        &self,
        raw: &'a [u8],
        root: Value<'a>,
        spans: &'a [(usize, usize)],
        errors: &mut Vec<Diagnostic>,
    ) -> Option<Row<'a>> {
        let mut values: [Option<Value<'a>>; COLUMN_COUNT] = [None; COLUMN_COUNT];
        let members: Vec<(&str, Value<'a>)> = root.members().collect();
        let repeated = repeated_ignoring_case(&members);
        for (i, &(name, value)) in members.iter().enumerate() {
            if repeated[i] {
                push_capped(errors, ErrorCode::DuplicateKey, || {
                    Diagnostic::new(
                        ErrorCode::DuplicateKey,
                        crate::diagnostic::pointer("", name),
                        "this column appears more than once, ignoring case",
                    )
                });
                continue;
            }
            if let Some(&(col, _, _)) = COLUMNS
                .iter()
                .find(|(_, n, _)| n.eq_ignore_ascii_case(name))
            {
                // An absent column and a JSON null are both SQL NULL.
                values[col as usize] = (!value.is_null()).then_some(value);
            }
        }
        let table = self.table(&values, errors)?;
        let mut row = Row {
            table,
            values,
            times: [None; COLUMN_COUNT],
            raw,
            spans,
        };
        for &col in table.columns() {
            check_column(&mut row, col, errors);
        }
        // Columns of other tables are ignored.
        for (col, _, _) in COLUMNS {
            if !table.columns().contains(&col) {
                row.values[col as usize] = None;
            }
        }
        Some(row)
    }

    fn table(
        &self,
        values: &[Option<Value<'_>>; COLUMN_COUNT],
        errors: &mut Vec<Diagnostic>,
    ) -> Option<Table> {
        let present: Vec<(Col, Table)> = TELLING
            .iter()
            .copied()
            .filter(|(col, _)| values[*col as usize].is_some())
            .collect();
        let inconsistent = |col: Col, table: Table| {
            Diagnostic::new(
                ErrorCode::InconsistentState,
                col.path(),
                format!(
                    "{} belongs to the {} table, not to this row's",
                    col.name(),
                    table.as_str()
                ),
            )
        };
        match self.options.table {
            Some(table) => {
                for &(col, other) in present.iter().filter(|(_, t)| *t != table) {
                    errors.push(inconsistent(col, other));
                }
                Some(table)
            }
            None => match present.split_first() {
                None => {
                    errors.push(Diagnostic::new(
                        ErrorCode::MissingField,
                        "",
                        "no FailureReason, FinishedAtUtc or Status: the table cannot be told \
                         (use --chokaq-table)",
                    ));
                    None
                }
                Some((&(_, table), rest)) => {
                    for &(col, other) in rest {
                        errors.push(inconsistent(col, other));
                    }
                    Some(table)
                }
            },
        }
    }

    fn limit_warnings(&self, row: &Row<'_>, warnings: &mut Vec<Diagnostic>) {
        for (col, limit) in [
            (Col::Queue, 255),
            (Col::Type, 255),
            (Col::CreatedBy, 100),
            (Col::Tags, 1000),
            (Col::IdempotencyKey, 255),
        ] {
            if let Some(text) = row.text(col) {
                let len = utf16_len(text);
                if len > limit {
                    warnings.push(Diagnostic::new(
                        ErrorCode::ChokaqLimit,
                        col.path(),
                        format!(
                            "{} is {len} characters, over ChokaQ's limit of {limit}",
                            col.name()
                        ),
                    ));
                }
            }
        }
        if let Some(payload) = row.text(Col::Payload) {
            if payload.len() as u64 > self.options.max_payload_bytes {
                warnings.push(Diagnostic::new(
                    ErrorCode::ChokaqLimit,
                    Col::Payload.path(),
                    format!(
                        "Payload is {} bytes, over ChokaQ's limit of {}",
                        payload.len(),
                        self.options.max_payload_bytes
                    ),
                ));
            }
        }
    }

    /// `PAYLOAD_TOO_LARGE` when the unrecorded attempts alone would pass the size limit: told
    /// from the count, without building them.
    fn too_many_attempts(&self, row: &Row<'_>, queue: &str) -> Option<Diagnostic> {
        let count = row.integer(Col::AttemptCount)?;
        // The smallest unrecorded attempt: a one-digit number, two timestamps, the fixed parts.
        let smallest = r#",{"attempt_no":1,"started_at":"","finished_at":""#.len()
            + 48
            + UNRECORDED_ERROR.len();
        let limit = self.limits.limit_for(Some(queue));
        let cap = self.options.max_line_bytes as u64;
        let lower_bound = (count.max(1) as u128 - 1) * smallest as u128;
        // The reader cap bounds the envelope too: under a size limit of terabytes, a count of
        // billions would otherwise be built, hundreds of gigabytes (issue 16).
        let (bound, what) = if cap < limit {
            (cap, "the reader cap")
        } else {
            (limit, "the envelope size limit")
        };
        (lower_bound > u128::from(bound)).then(|| {
            Diagnostic::new(
                ErrorCode::PayloadTooLarge,
                "",
                format!(
                    "AttemptCount {count} rebuilds a history of more than {lower_bound} bytes, \
                     over {what} of {bound} bytes"
                ),
            )
        })
    }

    fn write_envelope(&mut self, row: &Row<'_>, id: &str, queue: &str, out: &mut Vec<u8>) {
        let type_value = row.text(Col::Type).unwrap_or_default();
        let handler = normalize_name(type_value, true);
        out.extend_from_slice(b"{\"envelope_version\":1,\"id\":");
        push_json_string(out, id);
        out.extend_from_slice(b",\"queue\":");
        push_json_string(out, queue);
        out.extend_from_slice(b",\"handler_ref\":");
        push_json_string(out, &handler);
        out.extend_from_slice(b",\"payload\":\"");
        let payload = row.text(Col::Payload);
        if let Some(text) = payload {
            BASE64.encode_append(text.as_bytes(), out);
        }
        out.extend_from_slice(b"\",\"payload_content_type\":");
        let content_type = match payload {
            None => "application/octet-stream",
            Some(text) if self.is_json(text) => "application/json",
            Some(_) => "text/plain; charset=utf-8",
        };
        push_json_string(out, content_type);
        self.write_headers(row, queue, &handler, out);

        let status = status(row);
        let count = row.integer(Col::AttemptCount).unwrap_or(0) as u64;
        out.extend_from_slice(b",\"status\":\"");
        out.extend_from_slice(status.as_bytes());
        out.extend_from_slice(
            format!("\",\"attempt_count\":{count},\"redrive_count\":0").as_bytes(),
        );
        let created = row.time(Col::CreatedAtUtc).unwrap_or(0);
        let started_or_created = row.time(Col::StartedAtUtc).unwrap_or(created);
        let next = (status == "PENDING").then(|| row.time(Col::ScheduledAtUtc).unwrap_or(created));
        let lease = (status == "IN_FLIGHT").then(|| {
            let alive = row
                .time(Col::HeartbeatUtc)
                .or(row.time(Col::LastUpdatedUtc))
                .unwrap_or(started_or_created);
            alive + i64::from(self.options.zombie_timeout_s) * 1000
        });
        out.extend_from_slice(b",\"next_attempt_at\":");
        push_optional_timestamp(out, next);
        out.extend_from_slice(b",\"lease_expires_at\":");
        push_optional_timestamp(out, lease);
        out.extend_from_slice(b",\"created_at\":");
        push_optional_timestamp(out, Some(created));
        out.extend_from_slice(b",\"attempts\":[");
        write_attempts(row, status, count, out);
        out.extend_from_slice(b"]}");
    }

    fn write_headers(&self, row: &Row<'_>, queue: &str, handler: &str, out: &mut Vec<u8>) {
        let id = row.text(Col::Id).unwrap_or_default();
        out.extend_from_slice(b",\"headers\":{\"rdq.source\":");
        let source = format!("chokaq://{}/{}", row.table.as_str(), percent_encode(id));
        push_json_string(out, &source);
        let header = |out: &mut Vec<u8>, key: &str, value: Option<&str>| {
            if let Some(value) = value {
                out.push(b',');
                push_json_string(out, key);
                out.push(b':');
                push_json_string(out, value);
            }
        };
        header(out, "rdq.submitted_by", row.text(Col::CreatedBy));
        header(out, "chokaq.id", Some(id));
        let queue_value = row.text(Col::Queue).filter(|v| *v != queue);
        header(out, "chokaq.queue", queue_value);
        let type_value = row.text(Col::Type).filter(|v| *v != handler);
        header(out, "chokaq.type", type_value);
        header(out, "chokaq.tags", row.text(Col::Tags));
        header(out, "chokaq.idempotency_key", row.text(Col::IdempotencyKey));
        header(out, "chokaq.priority", row.number_text(Col::Priority));
        header(out, "chokaq.worker_id", row.text(Col::WorkerId));
        header(
            out,
            "chokaq.last_modified_by",
            row.text(Col::LastModifiedBy),
        );
        let reason = failure_reason_name(row);
        header(out, "chokaq.failure_reason", reason.as_deref());
        header(out, "chokaq.duration_ms", row.number_text(Col::DurationMs));
        let payload_null = row.text(Col::Payload).is_none().then_some("true");
        header(out, "chokaq.payload_null", payload_null);
        out.push(b'}');
    }

    /// Whether a payload text is JSON: one value of any type that passes the rules of
    /// docs/envelope.md#encoding, #duplicate-keys and #nesting-depth.
    fn is_json(&mut self, text: &str) -> bool {
        let mut errors = Vec::new();
        let parsed = self
            .payload_parser
            .parse(text.as_bytes(), &mut errors)
            .is_some();
        parsed || (!errors.is_empty() && errors.iter().all(|d| d.code == ErrorCode::NotAnObject))
    }
}

/// Checks one column of the row's table: its JSON type, whether it is required, its range.
fn check_column(row: &mut Row<'_>, col: Col, errors: &mut Vec<Diagnostic>) {
    let path = col.path();
    let Some(value) = row.values[col as usize] else {
        let required = matches!(
            col,
            Col::Id | Col::Queue | Col::Type | Col::CreatedAtUtc | Col::AttemptCount
        ) || (col == Col::Status && row.table == Table::Hot)
            || (col == Col::FinishedAtUtc && row.table == Table::Archive)
            || (matches!(col, Col::FailureReason | Col::FailedAtUtc) && row.table == Table::Dlq);
        if required {
            errors.push(Diagnostic::new(
                ErrorCode::MissingField,
                path,
                format!("the {} column is required and NULL or missing", col.name()),
            ));
        }
        return;
    };
    let kind = COLUMNS[col as usize].2;
    let wrong_type = |expected: &str| {
        Diagnostic::new(
            ErrorCode::WrongType,
            path.clone(),
            format!("{} must be {expected}", col.name()),
        )
    };
    match kind {
        Kind::Text => {
            if value.kind() != ValueKind::String {
                errors.push(wrong_type("a string"));
            }
        }
        Kind::Number => {
            if value.kind() != ValueKind::Number {
                errors.push(wrong_type("a number"));
            }
        }
        Kind::Integer => match value.as_integer() {
            None => errors.push(wrong_type("a JSON integer")),
            Some(n) if col == Col::AttemptCount && !(0..=i128::from(u32::MAX)).contains(&n) => {
                errors.push(Diagnostic::new(
                    ErrorCode::OutOfRange,
                    path,
                    format!("AttemptCount {n} is not between 0 and 4294967295"),
                ));
            }
            Some(n) if col == Col::Status && !(0..=2).contains(&n) => {
                errors.push(Diagnostic::new(
                    ErrorCode::UnknownStatus,
                    path,
                    format!("Status {n} is not 0 (Pending), 1 (Fetched) or 2 (Processing)"),
                ));
            }
            Some(_) => {}
        },
        Kind::Time => match value.as_str() {
            None => errors.push(wrong_type("a string")),
            Some(text) => match parse_datetime2(text) {
                Some(ms) => row.times[col as usize] = Some(ms),
                None => errors.push(Diagnostic::new(
                    ErrorCode::InvalidTimestamp,
                    path,
                    format!(
                        "{} is not a datetime2 time such as 2026-04-30 14:32:07.1234567",
                        crate::diagnostic::quoted(text)
                    ),
                )),
            },
        },
    }
}

fn envelope_id(row: &Row<'_>, errors: &mut Vec<Diagnostic>) -> Option<String> {
    let id = row.text(Col::Id).unwrap_or_default();
    if let Some(ulid) = ulid_ignoring_case(id) {
        return Some(ulid);
    }
    let created = row.time(Col::CreatedAtUtc).unwrap_or(0);
    match u64::try_from(created) {
        Ok(ms) => Some(derived_ulid(id, ms)),
        Err(_) => {
            errors.push(Diagnostic::new(
                ErrorCode::InvalidTimestamp,
                Col::CreatedAtUtc.path(),
                "a CreatedAtUtc before 1970 cannot be the time of a ULID",
            ));
            None
        }
    }
}

fn status(row: &Row<'_>) -> &'static str {
    match row.table {
        Table::Hot if row.integer(Col::Status) == Some(2) => "IN_FLIGHT",
        Table::Hot => "PENDING",
        Table::Archive => "SUCCEEDED",
        Table::Dlq => "DEAD",
    }
}

/// Which members repeat an earlier one's name, ignoring ASCII case: by sorting, so that a row of
/// many members costs n log n, not n² (the first of each name is not a repeat).
fn repeated_ignoring_case(members: &[(&str, Value<'_>)]) -> Vec<bool> {
    let folded = |i: usize| members[i].0.bytes().map(|b| b.to_ascii_lowercase());
    let mut order: Vec<usize> = (0..members.len()).collect();
    order.sort_by(|&a, &b| folded(a).cmp(folded(b)).then(a.cmp(&b)));
    let mut repeated = vec![false; members.len()];
    for pair in order.windows(2) {
        if members[pair[0]].0.eq_ignore_ascii_case(members[pair[1]].0) {
            repeated[pair[1]] = true;
        }
    }
    repeated
}

/// The name of a DLQ row's `FailureReason`, or its JSON text for an unknown value.
fn failure_reason_name(row: &Row<'_>) -> Option<String> {
    let n = row.integer(Col::FailureReason)?;
    Some(
        match usize::try_from(n).ok().and_then(|i| FAILURE_REASONS.get(i)) {
            Some(name) => (*name).to_owned(),
            None => row
                .number_text(Col::FailureReason)
                .unwrap_or_default()
                .to_owned(),
        },
    )
}

/// The rebuilt history (docs/chokaq.md#attempts).
fn write_attempts(row: &Row<'_>, status: &str, count: u64, out: &mut Vec<u8>) {
    let needs_one = row.table != Table::Hot || status == "IN_FLIGHT";
    let n = if needs_one { count.max(1) } else { count };
    let created = row.time(Col::CreatedAtUtc).unwrap_or(0);
    for number in 1..n {
        if number > 1 {
            out.push(b',');
        }
        out.extend_from_slice(format!("{{\"attempt_no\":{number},\"started_at\":").as_bytes());
        push_optional_timestamp(out, Some(created));
        out.extend_from_slice(b",\"finished_at\":");
        push_optional_timestamp(out, Some(created));
        out.extend_from_slice(UNRECORDED_ERROR.as_bytes());
    }
    if n == 0 {
        return;
    }
    if n > 1 {
        out.push(b',');
    }
    out.extend_from_slice(format!("{{\"attempt_no\":{n},\"started_at\":").as_bytes());
    let started = row.time(Col::StartedAtUtc).unwrap_or(created);
    match (row.table, status) {
        (Table::Archive, _) => {
            let finished = row.time(Col::FinishedAtUtc).unwrap_or(created);
            push_optional_timestamp(out, Some(row.time(Col::StartedAtUtc).unwrap_or(finished)));
            out.extend_from_slice(b",\"finished_at\":");
            push_optional_timestamp(out, Some(finished));
            out.extend_from_slice(b",\"outcome\":\"SUCCESS\"}");
        }
        (Table::Dlq, _) => {
            let failed = row.time(Col::FailedAtUtc).unwrap_or(created);
            push_optional_timestamp(out, Some(failed));
            out.extend_from_slice(b",\"finished_at\":");
            push_optional_timestamp(out, Some(failed));
            write_dlq_outcome(row, out);
            out.push(b'}');
        }
        (Table::Hot, "IN_FLIGHT") => {
            push_optional_timestamp(out, Some(started));
            out.extend_from_slice(b",\"finished_at\":null,\"outcome\":null}");
        }
        (Table::Hot, _) => {
            push_optional_timestamp(out, Some(started));
            out.extend_from_slice(b",\"finished_at\":");
            push_optional_timestamp(out, Some(row.time(Col::LastUpdatedUtc).unwrap_or(started)));
            out.extend_from_slice(
                br#","outcome":"RETRYABLE_FAILURE","error":{"type":"chokaq.Unrecorded","message":"error not recorded by ChokaQ"}}"#,
            );
        }
    }
}

/// A DLQ attempt's outcome and error, from `FailureReason` and `ErrorDetails`.
fn write_dlq_outcome(row: &Row<'_>, out: &mut Vec<u8>) {
    let reason = row.integer(Col::FailureReason).unwrap_or(-1);
    let name = failure_reason_name(row).unwrap_or_default();
    let outcome = match reason {
        0 | 5 | 8 | 10 => "RETRYABLE_FAILURE",
        2 | 9 => "LEASE_EXPIRED",
        _ => "PERMANENT_FAILURE",
    };
    out.extend_from_slice(format!(",\"outcome\":\"{outcome}\",\"error\":{{\"type\":").as_bytes());
    let details = row
        .text(Col::ErrorDetails)
        .filter(|t| !t.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n')));
    let fallback_type = format!("chokaq.{name}");
    let (type_name, message, stack) = if outcome == "LEASE_EXPIRED" {
        ("rdq.LeaseExpired", details.unwrap_or(NO_DETAILS), None)
    } else {
        match details {
            None => (fallback_type.as_str(), NO_DETAILS, None),
            Some(text) => match parse_dotnet_exception(text) {
                Some(e) => (e.type_name, e.message, e.stack),
                None => (fallback_type.as_str(), text, None),
            },
        }
    };
    push_json_string(out, type_name);
    out.extend_from_slice(b",\"message\":");
    push_json_string(out, &truncated(message, MESSAGE_LIMIT));
    out.extend_from_slice(b",\"detail\":{\"failure_reason\":");
    push_json_string(out, &name);
    out.push(b'}');
    if let Some(stack) = stack {
        out.extend_from_slice(b",\"stack\":");
        push_json_string(out, &truncated(stack, STACK_LIMIT));
    }
    out.push(b'}');
}
