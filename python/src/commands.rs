//! The commands over inputs: `read` (Arrow batches of `export`'s columns), `validate`,
//! `migrate`, `filter` and `stats`, each the library's operation run by the pipeline as the
//! command line runs it, with outputs written atomically (all or nothing).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use arrow_array::builder::{Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use pyo3::prelude::*;

use rdq_envelope::io::{
    check_aliases, commit_all, Named, OutputCompression, OutputFile, Skipped, Stream,
};
use rdq_envelope::ops::output::{PRIMARY, REJECTS, SECONDARY};
use rdq_envelope::ops::{
    ExportField, ExportFormat, ExportOp, FilterOp, Fingerprint, Glob, GroupBy, LimitedLines,
    MigrateOp, MigrateSource, Predicates, ReportFormat, StatsOp, ValidateOp, Where, DEFAULT_FIELDS,
};
use rdq_envelope::pipeline::{
    self, LineOperation, Outputs, PipelineError, PipelineOptions, Summary,
};
use rdq_envelope::EnvelopeRules;

use crate::arrow_stream::{self, BatchStream, Message, PyErrText, Table};
use crate::running::run_interruptible;
use crate::sources::{expand_folders, into_sources, Input};

/// What every command takes (a dict from the package, every key present).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub(crate) struct Common {
    inputs: Vec<Input>,
    threads: Option<usize>,
    max_line_bytes: Option<usize>,
    max_envelope_bytes: Option<u64>,
    queue_limits: Option<BTreeMap<String, u64>>,
    require_version: Option<u32>,
    rejects: Option<PathBuf>,
}

impl Common {
    /// The rules these options ask for (`submit`: the submit subset, `validate` only).
    fn rules(&self, submit: bool) -> PyResult<EnvelopeRules> {
        crate::check::rule_options(
            submit,
            self.require_version,
            true,
            self.max_envelope_bytes,
            self.queue_limits.clone(),
        )
    }

    fn options(&self, cancel: &Arc<AtomicBool>) -> PipelineOptions {
        let mut options = PipelineOptions::default();
        if let Some(threads) = self.threads {
            options.jobs = threads.clamp(1, pipeline::MAX_JOBS);
        }
        if let Some(bytes) = self.max_line_bytes {
            options.max_line_bytes = bytes;
        }
        options.cancel = Some(Arc::clone(cancel));
        options
    }

    fn max_line_bytes(&self) -> usize {
        self.max_line_bytes
            .unwrap_or(rdq_envelope::framing::DEFAULT_MAX_LINE_BYTES)
    }
}

/// The outputs of a run, opened before anything is read (an unwritable path fails first) and
/// committed together once it succeeded; dropped uncommitted, they leave every path as it was.
struct Opened {
    files: Vec<(usize, OutputFile)>,
    /// The most lines the primary output takes (`filter`'s `limit`); the rest is dropped.
    primary_lines: Option<u64>,
    /// What the folders among the inputs held that is not read: for the books.
    skipped: Vec<Skipped>,
}

impl Opened {
    /// Opens a run's outputs before anything is read: `data` (index, role, and the path when
    /// one is given) and the rejects when asked for, refusing an output that is an input or
    /// another output. The folders among the inputs are replaced by the files they hold first
    /// (as the command line does), so that a file in one is checked too.
    fn for_run(common: &mut Common, data: &[(usize, &str, Option<&Path>)]) -> PyResult<Self> {
        let skipped = expand_folders(&mut common.inputs)?;
        let mut outputs: Vec<(usize, &str, &Path)> = data
            .iter()
            .filter_map(|&(index, role, path)| path.map(|p| (index, role, p)))
            .collect();
        if let Some(path) = &common.rejects {
            outputs.push((REJECTS, "rejects", path));
        }
        let inputs: Vec<Named> = common.inputs.iter().filter_map(Input::named).collect();
        let named: Vec<Named> = outputs
            .iter()
            .map(|(_, role, path)| Named::new(*role, Stream::Path(path.to_path_buf())))
            .collect();
        check_aliases(&inputs, &named).map_err(|e| usage(e.to_string()))?;
        // Compressed outputs use as many threads as the run has workers.
        let jobs = common
            .threads
            .unwrap_or_else(|| PipelineOptions::default().jobs);
        let mut files = Vec::with_capacity(outputs.len());
        for &(index, _, path) in &outputs {
            let compression =
                OutputCompression::from_name(path, u32::try_from(jobs).unwrap_or(u32::MAX));
            let file = OutputFile::create_compressed(path, compression).map_err(|e| {
                crate::error(
                    "OUTPUT",
                    format!("{}: cannot create output: {e}", path.display()),
                )
            })?;
            files.push((index, file));
        }
        Ok(Opened {
            files,
            primary_lines: None,
            skipped,
        })
    }

    /// Runs `run` with the pipeline's outputs: the files (the primary one under its line
    /// limit), and `memory` (an output kept in memory) at its index.
    fn with_outputs<T>(
        &mut self,
        memory: Option<(usize, &mut dyn Write)>,
        run: impl FnOnce(Outputs<'_>) -> T,
    ) -> T {
        let lines = self.primary_lines;
        let mut limited: Vec<(usize, LimitedLines<&mut OutputFile>)> = self
            .files
            .iter_mut()
            .map(|(index, file)| {
                let limit = if *index == PRIMARY { lines } else { None };
                (*index, LimitedLines::new(file, limit))
            })
            .collect();
        let mut outputs = Outputs::none();
        for (index, file) in &mut limited {
            outputs.set(*index, Some(file as &mut dyn Write));
        }
        if let Some((index, sink)) = memory {
            outputs.set(index, Some(sink));
        }
        run(outputs)
    }

    fn commit(self) -> Result<(), PyErrText> {
        commit_all(self.files.into_iter().map(|(_, f)| f)).map_err(|e| PyErrText {
            code: "OUTPUT",
            message: chain(&e),
        })
    }
}

fn usage(message: impl std::fmt::Display) -> PyErr {
    pyo3::exceptions::PyValueError::new_err(message.to_string())
}

/// An error and its causes, as one line.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(c) = cause {
        let more = c.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        cause = c.source();
    }
    text
}

/// A pipeline's error, as the module reports it.
fn run_error(error: &PipelineError) -> PyErrText {
    let code = match error {
        PipelineError::Input { .. } => "INPUT",
        PipelineError::Output(_) => "OUTPUT",
        PipelineError::Cancelled => "INTERRUPTED",
        _ => "INTERNAL",
    };
    PyErrText {
        code,
        message: chain(error),
    }
}

/// The books as JSON.
fn books_json(books: &Summary) -> String {
    let mut json = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = books.write_json(&mut json);
    String::from_utf8_lossy(&json).trim_end().to_owned()
}

/// Runs `op` over the inputs into `opened` (and `memory`, an output kept in memory), the GIL
/// released and Ctrl-C heard; commits the outputs when it succeeded. The books (with the
/// run's time) and the operation's total.
fn execute<Op: LineOperation>(
    py: Python<'_>,
    common: Common,
    op: &Op,
    mut opened: Opened,
    memory: Option<(usize, &mut (dyn Write + Send))>,
) -> PyResult<(Summary, Op::Total)>
where
    Op::Total: Send,
{
    let started = Instant::now();
    let cancel = Arc::new(AtomicBool::new(false));
    let options = common.options(&cancel);
    let (sources, _) = into_sources(common.inputs);
    let result = run_interruptible(py, &cancel, || {
        let memory = memory.map(|(index, sink)| (index, sink as &mut dyn Write));
        opened.with_outputs(memory, |outputs| {
            pipeline::run(sources, op, options, outputs, None)
        })
    })?;
    let (mut books, total) = result.map_err(|e| run_error(&e).into_py_err())?;
    books.skipped = std::mem::take(&mut opened.skipped);
    opened.commit().map_err(PyErrText::into_py_err)?;
    books.seconds = started.elapsed().as_secs_f64();
    Ok((books, total))
}

/// `read`: the valid envelopes (those `filter` keeps, when given) as Arrow batches of
/// `columns`, on threads of their own; the stream's books once read to its end.
#[pyfunction]
#[pyo3(signature = (common, columns, filter))]
pub(crate) fn read(
    mut common: Common,
    columns: Option<Vec<String>>,
    filter: Option<FilterArgs>,
) -> PyResult<BatchStream> {
    let names: Vec<String> = match columns {
        Some(columns) => columns,
        None => DEFAULT_FIELDS.iter().map(|s| (*s).to_owned()).collect(),
    };
    let fields = names
        .iter()
        .map(|name| ExportField::parse(name).map_err(|e| usage(format!("columns: {e}"))))
        .collect::<PyResult<Vec<_>>>()?;
    let rules = common.rules(false)?;
    let (tx, rx) = arrow_stream::channel();
    let batches = tx.clone();
    let mut op = ExportOp::new(rules, fields, ExportFormat::Arrow)
        .map_err(|e| usage(format!("columns: {e}")))?
        .with_batches(Arc::new(move |batch| {
            batches.send(Message::Batch(batch)).is_ok()
        }));
    if let Some(filter) = filter {
        op = op.with_filter(filter.predicates()?);
    }
    op.write_rejects = common.rejects.is_some();
    op.max_line_bytes = common.max_line_bytes();
    let mut opened = Opened::for_run(&mut common, &[])?;
    let skipped = std::mem::take(&mut opened.skipped);
    let schema = op.arrow_schema();
    let cancel = Arc::new(AtomicBool::new(false));
    let options = common.options(&cancel);
    let (sources, _) = into_sources(common.inputs);
    let started = Instant::now();
    let spawned = std::thread::Builder::new()
        .name("rdq-python-read".into())
        .stack_size(rdq_envelope::ops::EVAL_STACK_BYTES)
        .spawn(move || {
            let ran = opened.with_outputs(None, |outputs| {
                pipeline::run(sources, &op, options, outputs, None)
            });
            let ended = match ran {
                Ok((mut books, mut total)) => op
                    .finish(&mut total)
                    .map_err(|e| PyErrText {
                        code: "INTERNAL",
                        message: e.to_string(),
                    })
                    .and_then(|_| opened.commit())
                    .map(|()| {
                        books.seconds = started.elapsed().as_secs_f64();
                        books.skipped = skipped;
                        books_json(&books)
                    }),
                Err(e) => Err(run_error(&e)),
            };
            let _ = tx.send(Message::End(ended));
        });
    let run =
        spawned.map_err(|e| crate::error("INTERNAL", format!("cannot start a thread: {e}")))?;
    Ok(BatchStream::new(schema, rx, cancel, run))
}

/// `filter`'s predicates, as keyword arguments (a dict, every key present).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub(crate) struct FilterArgs {
    status: Vec<String>,
    queue: Vec<String>,
    handler: Vec<String>,
    id: Vec<String>,
    error_type: Vec<String>,
    last_error_type: Vec<String>,
    outcome: Vec<String>,
    min_attempts: Option<u64>,
    max_attempts: Option<u64>,
    min_redrives: Option<u64>,
    payload_contains: Vec<String>,
    #[pyo3(item("where"))]
    where_expr: Option<String>,
    since: Option<String>,
    until: Option<String>,
    failed_since: Option<String>,
    failed_until: Option<String>,
    header: Vec<(String, String)>,
    fingerprint: Vec<String>,
    error_message: Vec<String>,
}

impl FilterArgs {
    fn predicates(self) -> PyResult<Predicates> {
        let globs = |list: &[String]| list.iter().map(|g| Glob::new(g)).collect::<Vec<_>>();
        let mut p = Predicates::default();
        p.queue = globs(&self.queue);
        p.handler = globs(&self.handler);
        p.status = self.status;
        p.id = self.id;
        p.error_type = globs(&self.error_type);
        p.last_error_type = globs(&self.last_error_type);
        p.outcome = self.outcome;
        p.min_attempts = self.min_attempts;
        p.max_attempts = self.max_attempts;
        p.min_redrives = self.min_redrives;
        p.payload_contains = self.payload_contains;
        p.where_expr = match self.where_expr.as_deref() {
            Some(expr) => Some(Where::new(expr).map_err(|e| usage(format!("where: {e}")))?),
            None => None,
        };
        // The times as the command line reads them (its forms, `2h` before now included).
        let time = |name: &str, text: &Option<String>| {
            rdq_envelope::cli::time::parse_opt(name, text).map_err(|e| usage(format!("{e:#}")))
        };
        p.since = time("since", &self.since)?;
        p.until = time("until", &self.until)?;
        p.failed_since = time("failed_since", &self.failed_since)?;
        p.failed_until = time("failed_until", &self.failed_until)?;
        for (from, to, names) in [
            (p.since, p.until, ("since", "until")),
            (
                p.failed_since,
                p.failed_until,
                ("failed_since", "failed_until"),
            ),
        ] {
            if let (Some(from), Some(to)) = (from, to) {
                if from >= to {
                    return Err(usage(format!(
                        "{} is not before {} (the range is half-open), so no envelope would match",
                        names.0, names.1
                    )));
                }
            }
        }
        for (key, glob) in self.header {
            if key.is_empty() {
                return Err(usage("header: an empty key, which no valid envelope has"));
            }
            p.header.push((key, Glob::new(&glob)));
        }
        for hex in &self.fingerprint {
            p.fingerprint.push(Fingerprint::parse(hex).ok_or_else(|| {
                usage(format!(
                    "fingerprint: {hex:?} is not 12 hex digits, as stats(by=\"fingerprint\") gives them"
                ))
            })?);
        }
        for pattern in &self.error_message {
            let regex = regex::Regex::new(pattern)
                .map_err(|e| usage(format!("error_message: {pattern:?}: {e}")))?;
            p.error_message.push(regex);
        }
        Ok(p)
    }
}

/// Compiles a `where` expression as the command line does (its refusals included), so that a
/// bad one is a `ValueError` before anything runs; the run itself evaluates it in the
/// command's own process, under its limits (`rdq_envelope._where`).
#[pyfunction]
pub(crate) fn compile_where(expr: &str) -> PyResult<()> {
    Where::new(expr)
        .map(drop)
        .map_err(|e| usage(format!("where: {e}")))
}

/// `validate`: the books as JSON, and the diagnostics as an Arrow stream of one row per
/// diagnostic (`warnings`: the valid lines' warnings too); `valid_out` keeps the valid lines.
#[pyfunction]
#[pyo3(signature = (common, warnings, valid_out, submit))]
pub(crate) fn validate(
    py: Python<'_>,
    mut common: Common,
    warnings: bool,
    valid_out: Option<PathBuf>,
    submit: bool,
) -> PyResult<(String, Table)> {
    let mut op = ValidateOp::new(common.rules(submit)?);
    op.format = ReportFormat::Json;
    op.report_warnings = warnings;
    op.keep_valid = valid_out.is_some();
    op.write_rejects = common.rejects.is_some();
    op.max_line_bytes = common.max_line_bytes();
    let opened = Opened::for_run(
        &mut common,
        &[(SECONDARY, "valid_out", valid_out.as_deref())],
    )?;
    let mut table = DiagnosticRows::default();
    let (books, ()) = execute(py, common, &op, opened, Some((PRIMARY, &mut table)))?;
    let books = books_json(&books);
    let (schema, batch) = table.finish().map_err(|e| crate::error("INTERNAL", e))?;
    Ok((books, Table::new(schema, vec![batch])))
}

/// `migrate`: every valid line to version `to` into `dest`; the books as JSON.
#[pyfunction]
#[pyo3(signature = (common, dest, to))]
pub(crate) fn migrate(
    py: Python<'_>,
    mut common: Common,
    dest: PathBuf,
    to: u32,
) -> PyResult<String> {
    let mut op = MigrateOp::new(common.rules(false)?, MigrateSource::Rdq, to)
        .map_err(|e| usage(format!("to: {e}")))?;
    op.write_rejects = common.rejects.is_some();
    op.max_line_bytes = common.max_line_bytes();
    let opened = Opened::for_run(&mut common, &[(PRIMARY, "dest", Some(&dest))])?;
    execute(py, common, &op, opened, None).map(|(books, _)| books_json(&books))
}

/// `filter`: the valid lines the predicates match (not matched with `invert`), byte for
/// byte, into `dest` (only counted without one); the books and the run's notes (`where`'s
/// failures, the limit reached), each as JSON.
#[pyfunction]
#[pyo3(signature = (common, dest, predicates, invert, limit))]
pub(crate) fn filter(
    py: Python<'_>,
    mut common: Common,
    dest: Option<PathBuf>,
    predicates: FilterArgs,
    invert: bool,
    limit: Option<u64>,
) -> PyResult<(String, String)> {
    let mut op = FilterOp::new(common.rules(false)?, predicates.predicates()?);
    op.invert = invert;
    op.limit = limit;
    op.count_only = dest.is_none();
    op.write_rejects = common.rejects.is_some();
    op.max_line_bytes = common.max_line_bytes();
    let mut opened = Opened::for_run(&mut common, &[(PRIMARY, "dest", dest.as_deref())])?;
    opened.primary_lines = limit;
    let (mut books, total) = execute(py, common, &op, opened, None)?;
    // The notes join the books, as in the command line's --summary file.
    let notes = op.settle(&total, &mut books);
    let notes = serde_json::to_string(&notes).map_err(|e| crate::error("INTERNAL", e))?;
    Ok((books_json(&books), notes))
}

/// `stats`: the report of `stats --format json` (`by` a `--by` name, the `top` groups).
#[pyfunction]
#[pyo3(signature = (common, by, top))]
pub(crate) fn stats(py: Python<'_>, mut common: Common, by: &str, top: usize) -> PyResult<String> {
    let by = GroupBy::ALL
        .into_iter()
        .find(|g| g.name() == by.replace('-', "_"))
        .ok_or_else(|| {
            usage(format!(
            "by: {by:?} is not one of queue, handler, status, error_type, outcome, day, fingerprint"
        ))
        })?;
    let mut op = StatsOp::new(common.rules(false)?, by);
    op.write_rejects = common.rejects.is_some();
    op.max_line_bytes = common.max_line_bytes();
    let opened = Opened::for_run(&mut common, &[])?;
    let (books, total) = execute(py, common, &op, opened, None)?;
    let report = op.report(&total, top, &books);
    serde_json::to_string(&report).map_err(|e| crate::error("INTERNAL", e))
}

/// `validate`'s JSON diagnostics, one object per reported line, turned into rows of a table
/// as they are written: one row per diagnostic.
#[derive(Default)]
struct DiagnosticRows {
    pending: Vec<u8>,
    source: StringBuilder,
    line: Int64Builder,
    offset: Int64Builder,
    id: StringBuilder,
    severity: StringBuilder,
    code: StringBuilder,
    pointer: StringBuilder,
    message: StringBuilder,
    failed: Option<String>,
}

impl DiagnosticRows {
    fn schema() -> SchemaRef {
        let text = |name: &str, nullable: bool| Field::new(name, DataType::Utf8, nullable);
        Arc::new(Schema::new(vec![
            text("source", false),
            Field::new("line", DataType::Int64, false),
            Field::new("offset", DataType::Int64, true),
            text("id", true),
            text("severity", false),
            text("code", false),
            text("pointer", false),
            text("message", false),
        ]))
    }

    fn row(&mut self, record: &[u8]) {
        let Ok(value) = serde_json::from_slice::<serde_json::Value>(record) else {
            self.failed
                .get_or_insert_with(|| "a diagnostic record that is not JSON".into());
            return;
        };
        for (severity, key) in [("error", "errors"), ("warning", "warnings")] {
            let Some(list) = value.get(key).and_then(|v| v.as_array()) else {
                continue;
            };
            for d in list {
                let text = |v: &serde_json::Value, k: &str| {
                    v.get(k)
                        .and_then(|s| s.as_str())
                        .unwrap_or_default()
                        .to_owned()
                };
                self.source.append_value(text(&value, "source"));
                self.line
                    .append_value(value.get("line").and_then(|n| n.as_i64()).unwrap_or(0));
                self.offset
                    .append_option(value.get("offset").and_then(|n| n.as_i64()));
                self.id
                    .append_option(value.get("id").and_then(|s| s.as_str()));
                self.severity.append_value(severity);
                self.code.append_value(text(d, "code"));
                self.pointer.append_value(text(d, "path"));
                self.message.append_value(text(d, "message"));
            }
        }
    }

    fn finish(&mut self) -> Result<(SchemaRef, RecordBatch), String> {
        if let Some(failed) = self.failed.take() {
            return Err(failed);
        }
        let schema = Self::schema();
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.source.finish()),
            Arc::new(self.line.finish()),
            Arc::new(self.offset.finish()),
            Arc::new(self.id.finish()),
            Arc::new(self.severity.finish()),
            Arc::new(self.code.finish()),
            Arc::new(self.pointer.finish()),
            Arc::new(self.message.finish()),
        ];
        let batch =
            RecordBatch::try_new(Arc::clone(&schema), columns).map_err(|e| e.to_string())?;
        Ok((schema, batch))
    }
}

impl Write for DiagnosticRows {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        let mut start = 0;
        while let Some(end) = memchr_lf(&self.pending[start..]) {
            let record = self.pending[start..start + end].to_vec();
            self.row(&record);
            start += end + 1;
        }
        self.pending.drain(..start);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn memchr_lf(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}
