//! `export`: one row per valid envelope, chosen columns, as CSV, TSV or Parquet
//! (docs/cli.md#export).
//!
//! Workers read each valid line's values straight from its tape (strings decoded, so a row
//! holds the envelope's text, not its JSON escapes). CSV and TSV rows are formatted on the
//! workers into the chunk's primary output, through one reused `csv::Writer` per worker, and
//! come out in input order as every command's lines do. For Parquet the workers collect the
//! chunk's typed column values in its tally; the writer's thread turns them into Arrow arrays
//! in [`LineOperation::settle`], hands them to the Parquet writer (which closes a row group
//! every [`ROW_GROUP_ROWS`] rows, or earlier past [`ROW_GROUP_BYTES`]) and moves the encoded
//! bytes into the chunk's output, so memory stays flat and the file goes through the same
//! atomic output as every other.

#[cfg(feature = "parquet")]
mod parquet;

use super::fields::Text;
use super::fingerprint::Fingerprinter;
use super::output::{self, PRIMARY};
use crate::envelope::formats::parse_timestamp;
use crate::envelope::{Checker, EnvelopeRef, EnvelopeRules};
use crate::pipeline::{Action, ChunkOutput, LineOperation, SourceLine};

/// Rows per Parquet row group: big enough for good compression and fast scans, small enough
/// that a row group's buffers stay a few megabytes.
#[cfg(feature = "parquet")]
pub const ROW_GROUP_ROWS: usize = 64 * 1024;

/// A row group is closed early once its encoded columns reach this many bytes (long error
/// messages), so memory stays flat whatever the rows hold.
#[cfg(feature = "parquet")]
pub const ROW_GROUP_BYTES: usize = 64 << 20;

/// The names `--fields` knows, in the order docs/cli.md#export lists them; `header.KEY`
/// stands for any header key.
pub const FIELD_NAMES: &[&str] = &[
    "id",
    "envelope_version",
    "queue",
    "handler_ref",
    "handler_version",
    "status",
    "attempt_count",
    "redrive_count",
    "created_at",
    "next_attempt_at",
    "lease_expires_at",
    "payload_content_type",
    "payload_bytes",
    "source",
    "header.KEY",
    "last.outcome",
    "last.error.type",
    "last.error.message",
    "last.started_at",
    "last.finished_at",
    "fingerprint",
];

/// The columns without `--fields`.
pub const DEFAULT_FIELDS: &[&str] = &[
    "id",
    "queue",
    "handler_ref",
    "status",
    "attempt_count",
    "redrive_count",
    "created_at",
    "last.outcome",
    "last.error.type",
    "last.error.message",
    "last.finished_at",
    "fingerprint",
];

/// The first characters that make a spreadsheet read a cell as a formula (OWASP, "CSV
/// Injection"): `=`, `+`, `-`, `@`, tab and carriage return.
pub const FORMULA_TRIGGERS: &[u8] = b"=+-@\t\r";

/// Whether a text cell would start a formula in a spreadsheet.
fn starts_a_formula(text: &[u8]) -> bool {
    text.first().is_some_and(|b| FORMULA_TRIGGERS.contains(b))
}

/// One column of an export.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExportField {
    /// `id`.
    Id,
    /// `envelope_version`.
    EnvelopeVersion,
    /// `queue`.
    Queue,
    /// `handler_ref`.
    HandlerRef,
    /// `handler_version` (null when absent or `null`).
    HandlerVersion,
    /// `status`.
    Status,
    /// `attempt_count`.
    AttemptCount,
    /// `redrive_count`.
    RedriveCount,
    /// `created_at`.
    CreatedAt,
    /// `next_attempt_at`.
    NextAttemptAt,
    /// `lease_expires_at`.
    LeaseExpiresAt,
    /// `payload_content_type`.
    PayloadContentType,
    /// The decoded payload's length in bytes (null under a claim check).
    PayloadBytes,
    /// `headers["rdq.source"]` in version 1, `origin.source` in version 2.
    Source,
    /// `headers[KEY]`.
    Header(String),
    /// The last attempt's `outcome`.
    LastOutcome,
    /// The last attempt's `error.type`.
    LastErrorType,
    /// The last attempt's `error.message`.
    LastErrorMessage,
    /// The last attempt's `started_at`.
    LastStartedAt,
    /// The last attempt's `finished_at`.
    LastFinishedAt,
    /// The fingerprint of the last attempt that has an error (docs/cli.md#fingerprints).
    Fingerprint,
}

/// The type of a column's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    /// UTF-8 text.
    Text,
    /// A whole number (64-bit).
    Integer,
    /// An instant, in UTC milliseconds (the envelope's timestamp form in CSV).
    Timestamp,
}

/// A `--fields` name that is not in the vocabulary.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown field {name:?}: the fields are {}", FIELD_NAMES.join(", "))]
pub struct UnknownField {
    /// The name as given.
    pub name: String,
}

impl ExportField {
    /// The field a `--fields` name names.
    ///
    /// ```
    /// use rdq_envelope::ops::ExportField;
    /// assert_eq!(ExportField::parse("last.error.type"), Ok(ExportField::LastErrorType));
    /// assert_eq!(ExportField::parse("header.traceparent"), Ok(ExportField::Header("traceparent".into())));
    /// assert!(ExportField::parse("header.").is_err());
    /// assert!(ExportField::parse("priority").is_err());
    /// ```
    pub fn parse(name: &str) -> Result<Self, UnknownField> {
        use ExportField::*;
        Ok(match name {
            "id" => Id,
            "envelope_version" => EnvelopeVersion,
            "queue" => Queue,
            "handler_ref" => HandlerRef,
            "handler_version" => HandlerVersion,
            "status" => Status,
            "attempt_count" => AttemptCount,
            "redrive_count" => RedriveCount,
            "created_at" => CreatedAt,
            "next_attempt_at" => NextAttemptAt,
            "lease_expires_at" => LeaseExpiresAt,
            "payload_content_type" => PayloadContentType,
            "payload_bytes" => PayloadBytes,
            "source" => Source,
            "last.outcome" => LastOutcome,
            "last.error.type" => LastErrorType,
            "last.error.message" => LastErrorMessage,
            "last.started_at" => LastStartedAt,
            "last.finished_at" => LastFinishedAt,
            "fingerprint" => Fingerprint,
            _ => match name.strip_prefix("header.") {
                Some(key) if !key.is_empty() => Header(key.to_owned()),
                _ => {
                    return Err(UnknownField {
                        name: name.to_owned(),
                    })
                }
            },
        })
    }

    /// The column's name: the name `--fields` takes.
    pub fn name(&self) -> String {
        use ExportField::*;
        let name = match self {
            Id => "id",
            EnvelopeVersion => "envelope_version",
            Queue => "queue",
            HandlerRef => "handler_ref",
            HandlerVersion => "handler_version",
            Status => "status",
            AttemptCount => "attempt_count",
            RedriveCount => "redrive_count",
            CreatedAt => "created_at",
            NextAttemptAt => "next_attempt_at",
            LeaseExpiresAt => "lease_expires_at",
            PayloadContentType => "payload_content_type",
            PayloadBytes => "payload_bytes",
            Source => "source",
            Header(key) => return format!("header.{key}"),
            LastOutcome => "last.outcome",
            LastErrorType => "last.error.type",
            LastErrorMessage => "last.error.message",
            LastStartedAt => "last.started_at",
            LastFinishedAt => "last.finished_at",
            Fingerprint => "fingerprint",
        };
        name.to_owned()
    }

    /// The type of the column's values.
    pub fn column_type(&self) -> ColumnType {
        use ExportField::*;
        match self {
            EnvelopeVersion | AttemptCount | RedriveCount | PayloadBytes => ColumnType::Integer,
            CreatedAt | NextAttemptAt | LeaseExpiresAt | LastStartedAt | LastFinishedAt => {
                ColumnType::Timestamp
            }
            _ => ColumnType::Text,
        }
    }
}

/// The file format of an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExportFormat {
    /// Comma-separated values (RFC 4180), a header row first.
    Csv,
    /// Tab-separated values, quoted as CSV is, a header row first.
    Tsv,
    /// Apache Parquet, zstd-compressed, typed columns.
    Parquet,
    /// Arrow record batches with Parquet's columns, handed one by one to the function given to
    /// [`ExportOp::with_batches`]; nothing is written to the primary output (the Python
    /// module's `read`). Needs the `parquet` feature, which brings Arrow.
    Arrow,
}

/// Where [`ExportFormat::Arrow`]'s record batches go, one call each, on the pipeline's writer
/// thread and in input order; `false` back ends the run after the chunk (the consumer went
/// away). A call that blocks holds the run back: that is how a slow consumer bounds memory.
#[cfg(feature = "parquet")]
pub type BatchSink = std::sync::Arc<dyn Fn(arrow_array::RecordBatch) -> bool + Send + Sync>;

/// An [`ExportOp`]'s [`BatchSink`], in a type `Debug` can show.
#[cfg(feature = "parquet")]
#[derive(Clone)]
struct Deliver(BatchSink);

#[cfg(feature = "parquet")]
impl std::fmt::Debug for Deliver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BatchSink")
    }
}

/// Why an export cannot be made or finished.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// The same column asked for twice.
    #[error("--fields: {0} is given twice")]
    DuplicateField(String),
    /// No column at all.
    #[error("--fields: no field given")]
    NoFields,
    /// Parquet or Arrow asked of a library built without the `parquet` feature.
    #[error("this build has no Parquet or Arrow output (the `parquet` cargo feature is off)")]
    ParquetUnavailable,
    /// [`ExportFormat::Arrow`] without [`ExportOp::with_batches`]: the batches would go nowhere.
    #[error("an Arrow export needs a batch sink (ExportOp::with_batches)")]
    NoBatchSink,
    /// The Parquet writer failed.
    #[error("parquet: {0}")]
    Parquet(String),
}

/// One value of a row, borrowed from the line or the worker's scratch.
#[derive(Debug, Clone, Copy)]
enum Cell<'a> {
    Null,
    Text(&'a str),
    Integer(i64),
    /// The envelope's text of a timestamp and its milliseconds.
    Time(&'a str, i64),
}

/// The `export` operation: rows to the primary output, invalid lines to the rejects.
#[derive(Debug)]
#[non_exhaustive]
pub struct ExportOp {
    rules: EnvelopeRules,
    fields: Vec<ExportField>,
    format: ExportFormat,
    /// Write reject records.
    pub write_rejects: bool,
    /// The reader cap, for the `LINE_TOO_LONG` message.
    pub max_line_bytes: usize,
    /// In CSV and TSV, prefix with `'` (and quote) every text cell that begins with a
    /// character a spreadsheet reads as the start of a formula ([`FORMULA_TRIGGERS`]), as
    /// OWASP's advice on CSV injection has it. On by default. Parquet's typed columns are
    /// not affected.
    pub neutralize_formulas: bool,
    /// [`ExportFormat::Arrow`]'s batches.
    #[cfg(feature = "parquet")]
    batches: Option<Deliver>,
    /// Only the valid envelopes these match make rows; the others are filtered out, as
    /// `filter` would (an error of the `--where` expression drops the line).
    #[cfg(feature = "filter")]
    filter: Option<crate::ops::Predicates>,
}

/// What the writer keeps of an export run, in input order: the run's total. [`ExportOp::finish`]
/// takes what goes after the last chunk from it.
#[derive(Debug, Default)]
pub struct ExportTotal {
    /// The CSV header row went out (with the first chunk).
    header_written: bool,
    /// Text cells that began with a [`FORMULA_TRIGGERS`] character, over the chunks settled.
    formula_cells: u64,
    /// Parquet: the writer, which holds the row groups not yet handed out and writes the
    /// footer; or why it could not be made.
    #[cfg(feature = "parquet")]
    parquet: Option<Result<parquet::ParquetSink, ExportError>>,
    /// Arrow: the rows gathered into the next batch.
    #[cfg(feature = "parquet")]
    arrow: Option<parquet::ArrowBatches>,
    /// Arrow: a batch could not be made (reported by [`ExportOp::finish`]).
    #[cfg(feature = "parquet")]
    arrow_failed: Option<String>,
}

impl ExportTotal {
    /// How many text cells of a CSV or TSV export began with a [`FORMULA_TRIGGERS`]
    /// character (neutralised or not, as [`ExportOp::neutralize_formulas`] says); 0 for
    /// Parquet. The same for any number of workers.
    pub fn formula_cells(&self) -> u64 {
        self.formula_cells
    }
}

impl ExportOp {
    /// An export of `fields` as `format`, judged by `rules`; no reject records and the
    /// reader's default cap, which the fields can change.
    pub fn new(
        rules: EnvelopeRules,
        fields: Vec<ExportField>,
        format: ExportFormat,
    ) -> Result<Self, ExportError> {
        if fields.is_empty() {
            return Err(ExportError::NoFields);
        }
        for (i, field) in fields.iter().enumerate() {
            if fields[..i].contains(field) {
                return Err(ExportError::DuplicateField(field.name()));
            }
        }
        // Each run makes its own writer (its total); one is made here to refuse at once the
        // columns it could not write.
        #[cfg(feature = "parquet")]
        if format == ExportFormat::Parquet {
            parquet::ParquetSink::new(&fields)?;
        }
        #[cfg(not(feature = "parquet"))]
        if matches!(format, ExportFormat::Parquet | ExportFormat::Arrow) {
            return Err(ExportError::ParquetUnavailable);
        }
        Ok(ExportOp {
            rules,
            fields,
            format,
            write_rejects: false,
            max_line_bytes: crate::framing::DEFAULT_MAX_LINE_BYTES,
            neutralize_formulas: true,
            #[cfg(feature = "parquet")]
            batches: None,
            #[cfg(feature = "filter")]
            filter: None,
        })
    }

    /// Where [`ExportFormat::Arrow`]'s record batches go.
    #[cfg(feature = "parquet")]
    pub fn with_batches(mut self, sink: BatchSink) -> Self {
        self.batches = Some(Deliver(sink));
        self
    }

    /// Only rows of the valid envelopes `predicates` match; the others are counted as
    /// filtered out.
    #[cfg(feature = "filter")]
    pub fn with_filter(mut self, predicates: crate::ops::Predicates) -> Self {
        self.filter = Some(predicates);
        self
    }

    /// The Arrow schema of the rows (Parquet's and [`ExportFormat::Arrow`]'s): the columns in
    /// order, each nullable.
    #[cfg(feature = "parquet")]
    pub fn arrow_schema(&self) -> arrow_schema::SchemaRef {
        parquet::schema(&self.fields)
    }

    /// The columns, in order.
    pub fn fields(&self) -> &[ExportField] {
        &self.fields
    }

    /// The CSV or TSV header row: the columns' names.
    fn header(&self) -> Vec<u8> {
        let mut row = CsvRow::new(self.format);
        let mut out = Vec::new();
        for field in &self.fields {
            row.field(&mut out, field.name().as_bytes());
        }
        row.end(&mut out);
        out
    }

    /// What goes after the last chunk's output, from the run's total: for CSV and TSV the
    /// header row when no chunk carried it (an empty input), for Parquet the rows still held
    /// and the footer. Call once, after the run.
    pub fn finish(&self, total: &mut ExportTotal) -> Result<Vec<u8>, ExportError> {
        match self.format {
            ExportFormat::Csv | ExportFormat::Tsv => {
                Ok(match std::mem::replace(&mut total.header_written, true) {
                    true => Vec::new(),
                    false => self.header(),
                })
            }
            ExportFormat::Parquet => {
                #[cfg(feature = "parquet")]
                match total.parquet.take() {
                    Some(Ok(mut sink)) => return sink.finish(),
                    Some(Err(error)) => return Err(error),
                    None => {}
                }
                Err(ExportError::ParquetUnavailable)
            }
            ExportFormat::Arrow => self.finish_arrow(total),
        }
    }

    /// [`ExportOp::finish`] for [`ExportFormat::Arrow`]: the rows still gathered, as the last
    /// batch.
    #[cfg(feature = "parquet")]
    fn finish_arrow(&self, total: &mut ExportTotal) -> Result<Vec<u8>, ExportError> {
        if let Some(failed) = total.arrow_failed.take() {
            return Err(ExportError::Parquet(failed));
        }
        let (Some(batches), Some(Deliver(deliver))) = (&mut total.arrow, &self.batches) else {
            return Err(ExportError::NoBatchSink);
        };
        if let Some(batch) = batches.finish()? {
            deliver(batch);
        }
        Ok(Vec::new())
    }

    #[cfg(not(feature = "parquet"))]
    fn finish_arrow(&self, _: &mut ExportTotal) -> Result<Vec<u8>, ExportError> {
        Err(ExportError::ParquetUnavailable)
    }

    /// Hands every value of a valid envelope's row to `sink`, in column order.
    fn row(
        &self,
        envelope: &EnvelopeRef<'_>,
        scratch: &mut RowScratch,
        mut sink: impl FnMut(usize, Cell<'_>),
    ) {
        for (column, field) in self.fields.iter().enumerate() {
            sink(column, cell(field, envelope, scratch));
        }
    }
}

/// Buffers a worker reuses for the values it makes rather than borrows from the line.
#[derive(Debug, Default)]
struct RowScratch {
    fingerprinter: Fingerprinter,
    /// A fingerprint's hex digits.
    hex: [u8; 12],
    /// A text with escapes, decoded.
    decoded: String,
    /// A fingerprinted error's type with escapes, decoded.
    kind: String,
}

/// One value of a valid envelope's row.
fn cell<'s>(
    field: &ExportField,
    envelope: &EnvelopeRef<'s>,
    scratch: &'s mut RowScratch,
) -> Cell<'s> {
    use ExportField::*;
    let last = envelope.last_attempt();
    match field {
        Id => Cell::Text(envelope.id()),
        EnvelopeVersion => Cell::Integer(i64::from(envelope.version())),
        Queue => Cell::Text(envelope.queue()),
        HandlerRef => Cell::Text(envelope.handler_ref()),
        HandlerVersion => optional(envelope.handler_version().map(Text::Plain), scratch),
        Status => Cell::Text(envelope.status().as_str()),
        // Both at most 4294967295 (the rules checked).
        AttemptCount => Cell::Integer(envelope.attempt_count() as i64),
        RedriveCount => Cell::Integer(envelope.redrive_count() as i64),
        CreatedAt => time(Some(envelope.created_at())),
        NextAttemptAt => time(envelope.next_attempt_at()),
        LeaseExpiresAt => time(envelope.lease_expires_at()),
        PayloadContentType => Cell::Text(envelope.payload_content_type()),
        PayloadBytes => match envelope.payload() {
            Some(base64) => Cell::Integer(decoded_len(base64.len(), base64.as_bytes())),
            None => Cell::Null,
        },
        Source => match envelope.version() {
            1 => optional(envelope.header("rdq.source"), scratch),
            _ => optional(envelope.origin_source(), scratch),
        },
        Header(key) => optional(envelope.header(key), scratch),
        LastOutcome => optional(
            last.and_then(|a| a.outcome())
                .map(|o| Text::Plain(o.as_str())),
            scratch,
        ),
        LastErrorType => optional(last.and_then(|a| a.error()).map(|e| e.kind), scratch),
        LastErrorMessage => optional(last.and_then(|a| a.error()).map(|e| e.message), scratch),
        LastStartedAt => time(last.map(|a| a.started_at())),
        LastFinishedAt => time(last.and_then(|a| a.finished_at())),
        // docs/cli.md#fingerprints: the last attempt that has an error.
        Fingerprint => match envelope.attempts().filter_map(|a| a.error()).last() {
            Some(error) => fingerprint(scratch, error.kind, error.message),
            None => Cell::Null,
        },
    }
}

/// A text cell, decoded into `scratch` when it holds escapes (an error message: the views of
/// `export` decode every other text).
fn optional<'s>(text: Option<Text<'s>>, scratch: &'s mut RowScratch) -> Cell<'s> {
    match text {
        Some(text) => Cell::Text(text.decode(&mut scratch.decoded)),
        None => Cell::Null,
    }
}

/// A timestamp cell: its text and time.
fn time(text: Option<&str>) -> Cell<'_> {
    match text {
        Some(s) => parse_timestamp(s).map_or(Cell::Null, |ms| Cell::Time(s, ms)),
        None => Cell::Null,
    }
}

/// The fingerprint of an error, as text in `scratch`.
fn fingerprint<'s>(scratch: &'s mut RowScratch, kind: Text<'_>, message: Text<'_>) -> Cell<'s> {
    let RowScratch {
        fingerprinter,
        hex,
        kind: decoded_kind,
        ..
    } = scratch;
    let (fingerprint, _) = fingerprinter.fingerprint(kind.decode(decoded_kind), message);
    *hex = fingerprint.hex();
    Cell::Text(std::str::from_utf8(hex).unwrap_or_default())
}

/// The decoded length of canonical padded base64 (the rules accepted it): three bytes per four
/// characters, less one per `=`.
fn decoded_len(len: usize, base64: &[u8]) -> i64 {
    let padding = base64.iter().rev().take(2).filter(|&&b| b == b'=').count();
    (len / 4 * 3).saturating_sub(padding) as i64
}

/// Writes CSV or TSV rows with csv-core (the `csv` crate's own writer, without its buffered
/// `Write` layer, so a row goes straight into the chunk's output buffer): fields quoted only
/// when they hold the delimiter, a quote, CR or LF (RFC 4180), a quote doubled inside.
#[derive(Debug)]
struct CsvRow {
    core: csv_core::Writer,
    /// A field was written in this row (the next needs a delimiter first).
    started: bool,
    /// The row's first cell was written by [`CsvRow::text`] itself, not by csv-core.
    quoted_first: bool,
    /// csv-core wrote a field or a delimiter in this row.
    core_wrote: bool,
}

impl CsvRow {
    fn new(format: ExportFormat) -> Self {
        // CSV rows end in CRLF as RFC 4180 has it; TSV in LF, as tab-separated text does.
        let (delimiter, terminator) = match format {
            ExportFormat::Tsv => (b'\t', csv_core::Terminator::Any(b'\n')),
            _ => (b',', csv_core::Terminator::CRLF),
        };
        let core = csv_core::WriterBuilder::new()
            .delimiter(delimiter)
            .terminator(terminator)
            .build();
        CsvRow {
            core,
            started: false,
            quoted_first: false,
            core_wrote: false,
        }
    }

    fn field(&mut self, out: &mut Vec<u8>, mut input: &[u8]) {
        if self.started {
            grow(out, 4, |o| self.core.delimiter(o));
        }
        self.started = true;
        self.core_wrote = true;
        // A quoted field is at most twice its length and the opening quote.
        grow(out, input.len() * 2 + 2, |o| {
            let (result, read, written) = self.core.field(input, o);
            input = &input[read..];
            (result, written)
        });
    }

    /// Writes a cell of untrusted text; with `neutralize`, one that would start a formula is
    /// prefixed with `'`, and it and any cell holding a field separator of either format
    /// (`,` `;` tab) are quoted, so that a spreadsheet splitting on another separator than
    /// ours cannot find a formula at the start of a piece. Returns whether the text would
    /// start a formula.
    fn text(&mut self, out: &mut Vec<u8>, text: &[u8], neutralize: bool) -> bool {
        let formula = starts_a_formula(text);
        if !neutralize || !(formula || text.iter().any(|b| b",;\t".contains(b))) {
            self.field(out, text);
            return formula;
        }
        if self.started {
            grow(out, 4, |o| self.core.delimiter(o));
            self.core_wrote = true;
        } else {
            self.quoted_first = true;
        }
        self.started = true;
        // Quoted as csv-core quotes (RFC 4180: a quote inside doubled), always.
        out.push(b'"');
        if formula {
            out.push(b'\'');
        }
        for piece in text.split_inclusive(|&b| b == b'"') {
            out.extend_from_slice(piece);
            if piece.ends_with(b"\"") {
                out.push(b'"');
            }
        }
        out.push(b'"');
        formula
    }

    fn end(&mut self, out: &mut Vec<u8>) {
        if self.quoted_first && !self.core_wrote {
            // A row of one cell written here: csv-core saw no byte of the row and would
            // write `""` for an empty record before its terminator.
            match self.core.get_terminator() {
                csv_core::Terminator::Any(b) => out.push(b),
                _ => out.extend_from_slice(b"\r\n"),
            }
        } else {
            grow(out, 8, |o| self.core.terminator(o));
        }
        self.started = false;
        self.quoted_first = false;
        self.core_wrote = false;
    }
}

/// Runs a csv-core step into `out`'s end, `room` bytes at a time, until it has written all.
fn grow(
    out: &mut Vec<u8>,
    room: usize,
    mut step: impl FnMut(&mut [u8]) -> (csv_core::WriteResult, usize),
) {
    loop {
        let len = out.len();
        out.resize(len + room, 0);
        let (result, written) = step(&mut out[len..]);
        out.truncate(len + written);
        if result == csv_core::WriteResult::InputEmpty {
            return;
        }
    }
}

/// Scratch a worker reuses from row to row.
#[derive(Debug, Default)]
struct Scratch {
    row: RowScratch,
    /// The predicates' buffers ([`ExportOp::with_filter`]).
    #[cfg(feature = "filter")]
    filter: super::filter::Scratch,
}

/// A worker's reusable state.
#[derive(Debug)]
pub struct ExportWorker {
    checker: Checker,
    scratch: Scratch,
    csv: CsvRow,
}

/// A chunk's rows as typed columns, for Parquet (empty for CSV and TSV).
#[derive(Debug, Default)]
pub struct ExportTally {
    columns: Vec<ColumnValues>,
    rows: usize,
    /// CSV and TSV: the chunk's text cells that would start a formula.
    formula_cells: u64,
}

/// One column's values for a chunk's rows.
#[derive(Debug, Default)]
struct ColumnValues {
    /// Integers and timestamps (milliseconds).
    numbers: Vec<i64>,
    /// Texts, back to back; `ends[i]` is where row i's ends.
    text: String,
    ends: Vec<usize>,
    /// Whether row i has a value.
    valid: Vec<bool>,
}

impl ColumnValues {
    fn push(&mut self, cell: Cell<'_>) {
        match cell {
            Cell::Null => {
                self.numbers.push(0);
                self.valid.push(false);
            }
            Cell::Text(s) => {
                self.text.push_str(s);
                self.valid.push(true);
            }
            Cell::Integer(n) | Cell::Time(_, n) => {
                self.numbers.push(n);
                self.valid.push(true);
            }
        }
        self.ends.push(self.text.len());
    }

    /// Appends `other`'s rows.
    #[cfg(feature = "parquet")]
    fn extend(&mut self, other: &ColumnValues) {
        let base = self.text.len();
        self.numbers.extend_from_slice(&other.numbers);
        self.text.push_str(&other.text);
        self.ends.extend(other.ends.iter().map(|end| base + end));
        self.valid.extend_from_slice(&other.valid);
    }

    fn clear(&mut self) {
        self.numbers.clear();
        self.text.clear();
        self.ends.clear();
        self.valid.clear();
    }
}

impl LineOperation for ExportOp {
    // The rows (CSV, TSV; Parquet's are written by the total), the rejects.
    const OUTPUTS: usize = output::REJECTS + 1;
    type Worker = ExportWorker;
    type Tally = ExportTally;
    type Total = ExportTotal;

    fn total(&self) -> ExportTotal {
        ExportTotal {
            #[cfg(feature = "parquet")]
            parquet: (self.format == ExportFormat::Parquet)
                .then(|| parquet::ParquetSink::new(&self.fields)),
            #[cfg(feature = "parquet")]
            arrow: (self.format == ExportFormat::Arrow)
                .then(|| parquet::ArrowBatches::new(&self.fields)),
            ..ExportTotal::default()
        }
    }

    fn worker(&self) -> ExportWorker {
        ExportWorker {
            // A row holds texts: a line whose strings hold escapes (but for its error
            // messages, decoded in the row) is read from its tape, which decodes them.
            checker: super::checker(&self.rules, self.max_line_bytes).with_plain_texts(),
            scratch: Scratch::default(),
            csv: CsvRow::new(self.format),
        }
    }

    fn worker_stack_bytes(&self) -> Option<usize> {
        #[cfg(feature = "filter")]
        if self.filter.as_ref().is_some_and(|f| f.where_expr.is_some()) {
            return Some(super::jq::EVAL_STACK_BYTES);
        }
        None
    }

    fn apply(
        &self,
        w: &mut ExportWorker,
        line: SourceLine<'_>,
        out: &mut ChunkOutput<ExportTally>,
    ) -> Action {
        let SourceLine { source, line } = line;
        let ExportWorker {
            checker,
            scratch,
            csv,
        } = w;
        let checked = checker.check_line(&line);
        let Some(envelope) = checked.envelope() else {
            let at = super::position(source, &line);
            return super::reject(checked.verdict(), at, &line, out, self.write_rejects);
        };
        out.summary.tally_warnings(envelope.warnings());
        #[cfg(feature = "filter")]
        if let Some(predicates) = &self.filter {
            let version = envelope.version();
            let keep = predicates.matches(&envelope, version, &mut scratch.filter)
                && predicates
                    .where_expr
                    .as_ref()
                    .is_none_or(|expr| expr.eval(line.content) == super::WhereVerdict::Keep);
            if !keep {
                return Action::FilterOut;
            }
        }
        match self.format {
            ExportFormat::Parquet | ExportFormat::Arrow => {
                let tally = &mut out.tally;
                if tally.columns.len() != self.fields.len() {
                    tally
                        .columns
                        .resize_with(self.fields.len(), ColumnValues::default);
                }
                self.row(&envelope, &mut scratch.row, |column, cell| {
                    tally.columns[column].push(cell);
                });
                tally.rows += 1;
            }
            ExportFormat::Csv | ExportFormat::Tsv => {
                let (row, tally) = out.buffer_and_tally(PRIMARY);
                let neutralize = self.neutralize_formulas;
                // An integer's decimal digits, on the stack.
                let mut digits = itoa::Buffer::new();
                self.row(&envelope, &mut scratch.row, |_, cell| match cell {
                    Cell::Null => csv.field(row, b""),
                    // Only text comes from outside as it is: a timestamp has the envelope's
                    // fixed shape (a digit first), and an integer is data, even negative.
                    Cell::Text(s) => {
                        let formula = csv.text(row, s.as_bytes(), neutralize);
                        tally.formula_cells += u64::from(formula);
                    }
                    Cell::Time(s, _) => csv.field(row, s.as_bytes()),
                    Cell::Integer(n) => csv.field(row, digits.format(n).as_bytes()),
                });
                csv.end(row);
            }
        }
        Action::Emit
    }

    fn settle(&self, total: &mut ExportTotal, out: &mut ChunkOutput<ExportTally>) {
        match self.format {
            ExportFormat::Csv | ExportFormat::Tsv => {
                // The header row leads the first chunk's output, so it is written before any
                // row and only once, on the writer's thread.
                if !std::mem::replace(&mut total.header_written, true) {
                    let header = self.header();
                    out.buffer(PRIMARY).splice(0..0, header);
                }
                total.formula_cells += std::mem::take(&mut out.tally.formula_cells);
            }
            ExportFormat::Parquet => {
                #[cfg(feature = "parquet")]
                if let Some(Ok(sink)) = &mut total.parquet {
                    let (rows, tally) = out.buffer_and_tally(PRIMARY);
                    sink.append(tally, rows);
                }
                out.tally.rows = 0;
                out.tally.columns.iter_mut().for_each(ColumnValues::clear);
            }
            ExportFormat::Arrow => {
                #[cfg(feature = "parquet")]
                if let (Some(batches), Some(Deliver(deliver))) = (&mut total.arrow, &self.batches) {
                    match batches.append(&out.tally) {
                        Ok(Some(batch)) => out.stop |= !deliver(batch),
                        Ok(None) => {}
                        Err(e) => {
                            total.arrow_failed.get_or_insert(e.to_string());
                            out.stop = true;
                        }
                    }
                }
                out.tally.rows = 0;
                out.tally.columns.iter_mut().for_each(ColumnValues::clear);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RuleOptions;

    /// An Arrow export with predicates keeps exactly the lines `filter` keeps with them (its
    /// `--where` included), in input order, in batches, with the books `filter` has.
    #[cfg(all(feature = "parquet", feature = "filter"))]
    #[test]
    fn arrow_batches_with_a_filter_hold_the_lines_filter_keeps() {
        use crate::ops::{FilterOp, Predicates, Where};
        use crate::pipeline::{self, Outputs, PipelineOptions, Source};
        use arrow_array::{Array, StringArray};
        use std::sync::{Arc, Mutex};

        let mut input = Vec::new();
        for version in [1, 2] {
            for line in crate::generate::test_lines(11, version, 0.05, 700) {
                input.extend_from_slice(&line);
                input.push(b'\n');
            }
        }
        let predicates = || Predicates {
            status: vec!["DEAD".into()],
            where_expr: Some(Where::new(".attempt_count > 1").unwrap()),
            ..Predicates::default()
        };
        let rules = || EnvelopeRules::new(RuleOptions::default()).unwrap();
        let sources = || {
            vec![Source::Reader {
                name: "lines".into(),
                reader: Box::new(std::io::Cursor::new(input.clone())),
            }]
        };
        let options = PipelineOptions {
            jobs: 3,
            chunk_bytes: 64 << 10,
            ..PipelineOptions::default()
        };

        let mut kept = Vec::new();
        let filter = FilterOp::new(rules(), predicates());
        let outputs = Outputs::none().to(crate::ops::output::PRIMARY, &mut kept);
        let (filter_books, _) =
            pipeline::run(sources(), &filter, options.clone(), outputs, None).unwrap();
        let mut checker = Checker::new(rules());
        let want: Vec<String> = kept
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| checker.check(l).envelope().unwrap().id().to_owned())
            .collect();
        assert!(want.len() > 10, "{}", want.len());

        let batches = Arc::new(Mutex::new(Vec::new()));
        let into = Arc::clone(&batches);
        let op = ExportOp::new(rules(), vec![ExportField::Id], ExportFormat::Arrow)
            .unwrap()
            .with_batches(Arc::new(move |batch| {
                into.lock().unwrap().push(batch);
                true
            }))
            .with_filter(predicates());
        let (books, mut total) =
            pipeline::run(sources(), &op, options, Outputs::none(), None).unwrap();
        assert!(op.finish(&mut total).unwrap().is_empty());
        let got: Vec<String> = batches
            .lock()
            .unwrap()
            .iter()
            .flat_map(|batch| {
                let ids = batch
                    .column(0)
                    .as_any()
                    .downcast_ref::<StringArray>()
                    .unwrap();
                (0..ids.len())
                    .map(|i| ids.value(i).to_owned())
                    .collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(got, want);
        assert_eq!(
            (books.emitted, books.filtered_out, books.rejected),
            (
                filter_books.emitted,
                filter_books.filtered_out,
                filter_books.rejected
            )
        );
    }

    /// Every value of a row, as text that tells the cells apart.
    fn row_of(op: &ExportOp, envelope: &EnvelopeRef<'_>) -> Vec<String> {
        let mut scratch = RowScratch::default();
        let mut cells = Vec::new();
        op.row(envelope, &mut scratch, |_, cell| {
            cells.push(format!("{cell:?}"));
        });
        cells
    }

    /// The single pass's records give every field the value the tape gives, on lines of both
    /// versions with escapes in their messages and with headers of every kind.
    #[test]
    fn the_single_pass_and_the_tape_give_the_same_rows() {
        let fields: Vec<ExportField> = FIELD_NAMES
            .iter()
            .map(|name| name.replace("header.KEY", "header.traceparent"))
            .chain(["header.rdq.source".to_owned(), "header.none".to_owned()])
            .map(|name| ExportField::parse(&name).unwrap())
            .collect();
        let rules = EnvelopeRules::new(RuleOptions::default()).unwrap();
        let op = ExportOp::new(rules.clone(), fields, ExportFormat::Csv).unwrap();
        let mut checker = Checker::new(rules).with_plain_texts();
        let mut parser = crate::json::JsonParser::new();
        let mut compared = 0;
        for version in [1, 2] {
            for line in crate::generate::test_lines(7, version, 0.0, 300) {
                let checked = checker.check(&line);
                if checked.document().is_some() || !checked.is_valid() {
                    continue;
                }
                let fast = row_of(&op, &checked.envelope().unwrap());
                let doc = parser.parse(&line, &mut Vec::new()).unwrap();
                let slow = row_of(&op, &EnvelopeRef::on_tape(doc.root(), version));
                assert_eq!(fast, slow, "{}", String::from_utf8_lossy(&line));
                compared += 1;
            }
        }
        assert!(compared > 500, "{compared} lines compared");
    }

    #[test]
    fn every_name_of_the_vocabulary_parses_back_to_itself() {
        for name in FIELD_NAMES.iter().chain(DEFAULT_FIELDS) {
            let name = name.replace("KEY", "a.b");
            assert_eq!(ExportField::parse(&name).unwrap().name(), name);
        }
        let unknown = ExportField::parse("last.error").unwrap_err().to_string();
        assert!(
            unknown.contains("the fields are id, envelope_version"),
            "{unknown}"
        );
    }

    #[test]
    fn decoded_payload_lengths() {
        for (base64, len) in [
            ("", 0),
            ("eQ==", 1),
            ("eXk=", 2),
            ("eXl5", 3),
            ("eXl5eQ==", 4),
        ] {
            assert_eq!(
                decoded_len(base64.len(), base64.as_bytes()),
                len,
                "{base64}"
            );
        }
    }

    #[test]
    fn fields_are_quoted_only_when_they_must_be() {
        let mut row = CsvRow::new(ExportFormat::Csv);
        let mut out = Vec::new();
        for field in [
            "plain",
            "a,b",
            "say \"hi\"",
            "two\r\nlines",
            "",
            "tab\there",
        ] {
            row.field(&mut out, field.as_bytes());
        }
        row.end(&mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\r\nlines\",,tab\there\r\n"
        );
        let mut row = CsvRow::new(ExportFormat::Tsv);
        let mut out = Vec::new();
        for field in ["a,b", "tab\there"] {
            row.field(&mut out, field.as_bytes());
        }
        row.end(&mut out);
        assert_eq!(String::from_utf8(out).unwrap(), "a,b\t\"tab\there\"\n");
    }

    /// A neutralised cell is quoted by hand, after csv-core's delimiter and before its
    /// terminator; a row of that one cell gets no `""` of an empty record.
    #[test]
    fn neutralised_cells_sit_among_csv_cores() {
        let mut row = CsvRow::new(ExportFormat::Csv);
        let mut out = Vec::new();
        for (text, neutralize) in [
            ("=1", true),
            ("a,b", false),
            ("-\"x\"", true),
            ("a;b", true),
            ("@", false),
        ] {
            row.text(&mut out, text.as_bytes(), neutralize);
        }
        row.end(&mut out);
        row.text(&mut out, b"+x", true);
        row.end(&mut out);
        row.field(&mut out, b"");
        row.end(&mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\"'=1\",\"a,b\",\"'-\"\"x\"\"\",\"a;b\",@\r\n\"'+x\"\r\n\"\"\r\n"
        );
    }
}
