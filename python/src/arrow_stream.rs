//! Record batches made by a run on threads of its own, handed to Python through the Arrow
//! PyCapsule stream interface (`__arrow_c_stream__`): pyarrow, polars, DuckDB and pandas take
//! the Arrow C stream itself, so no batch is copied on the way.
//!
//! The run and its consumer meet at a channel of one batch: a consumer that stops reading
//! holds the run back (memory stays at a few batches whatever the input), and one that goes
//! away (the stream dropped, `close()`) ends it at its next chunk.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{ArrowError, SchemaRef};
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use crate::running::SIGNAL_POLL;

/// What the run sends: its batches, then how it ended (the books as JSON, or why it failed).
pub(crate) enum Message {
    Batch(RecordBatch),
    End(Result<String, PyErrText>),
}

/// A failed run's error: its code and message (a `PyErr` is made only on Python's side).
pub(crate) struct PyErrText {
    pub code: &'static str,
    pub message: String,
}

impl PyErrText {
    /// The exception, [`crate::Error`] with the code and the message.
    pub(crate) fn into_py_err(self) -> PyErr {
        crate::error(self.code, self.message)
    }
}

/// An Arrow C stream in the capsule the PyCapsule interface names `arrow_array_stream`: the
/// consumer moves the stream out (and releases it); one left in is released with the capsule.
fn stream_capsule<'py>(
    py: Python<'py>,
    reader: Box<dyn RecordBatchReader + Send>,
) -> PyResult<Bound<'py, PyCapsule>> {
    PyCapsule::new_with_value(py, FFI_ArrowArrayStream::new(reader), c"arrow_array_stream")
}

/// An Arrow C schema in the capsule the PyCapsule interface names `arrow_schema`.
fn schema_capsule<'py>(py: Python<'py>, schema: &SchemaRef) -> PyResult<Bound<'py, PyCapsule>> {
    let schema =
        FFI_ArrowSchema::try_from(schema.as_ref()).map_err(|e| crate::error("INTERNAL", e))?;
    PyCapsule::new_with_value(py, schema, c"arrow_schema")
}

/// The run's end of the channel.
pub(crate) fn channel() -> (Sender<Message>, Receiver<Message>) {
    crossbeam_channel::bounded(1)
}

/// A stream of record batches, readable once: hand it to `pyarrow.table`,
/// `polars.DataFrame`, `duckdb.sql` (by name) or anything that takes an Arrow C stream.
#[pyclass(module = "rdq_envelope._native", name = "BatchStream")]
pub(crate) struct BatchStream {
    schema: SchemaRef,
    receiving: Mutex<Option<Receiving>>,
    ended: Arc<Mutex<Option<Result<String, PyErrText>>>>,
    cancel: Arc<AtomicBool>,
}

impl BatchStream {
    /// The stream of the run on thread `run`, which sends on `rx`'s channel and stops when
    /// `cancel` is set.
    pub(crate) fn new(
        schema: SchemaRef,
        rx: Receiver<Message>,
        cancel: Arc<AtomicBool>,
        run: JoinHandle<()>,
    ) -> Self {
        let ended = Arc::new(Mutex::new(None));
        BatchStream {
            schema: Arc::clone(&schema),
            receiving: Mutex::new(Some(Receiving {
                schema,
                rx,
                cancel: Arc::clone(&cancel),
                ended: Arc::clone(&ended),
                done: false,
                run: Some(run),
            })),
            ended,
            cancel,
        }
    }
}

#[pymethods]
impl BatchStream {
    /// The Arrow C stream, in a capsule named `arrow_array_stream`; once per stream.
    /// `requested_schema` is not used: the columns are those asked of `read`.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let taken = self.receiving.lock().map(|mut r| r.take());
        let Ok(Some(receiving)) = taken else {
            return Err(crate::error(
                "USAGE",
                "this stream was already read (a stream is read once): call read() again",
            ));
        };
        stream_capsule(py, Box::new(receiving))
    }

    /// The schema, in a capsule named `arrow_schema` (`pyarrow.schema(stream)`).
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        schema_capsule(py, &self.schema)
    }

    /// The run's books as JSON once the stream was read to its end; `None` before. A run
    /// that failed raises its error here too.
    fn books(&self) -> PyResult<Option<String>> {
        match self.ended.lock().ok().as_deref() {
            Some(Some(Ok(books))) => Ok(Some(books.clone())),
            Some(Some(Err(e))) => Err(crate::error(e.code, &e.message)),
            _ => Ok(None),
        }
    }

    /// Ends the run (if it still runs) and drops what it holds; the stream cannot be read after.
    /// (Dropping an unread stream ends its run too: no one is left to take its batches.)
    fn close(&self) {
        self.cancel.store(true, Ordering::Relaxed);
        if let Ok(mut receiving) = self.receiving.lock() {
            receiving.take();
        }
    }
}

/// The consumer's end: an Arrow `RecordBatchReader` over the channel.
struct Receiving {
    schema: SchemaRef,
    rx: Receiver<Message>,
    cancel: Arc<AtomicBool>,
    ended: Arc<Mutex<Option<Result<String, PyErrText>>>>,
    done: bool,
    /// The run's thread, joined before the stream is let go: a run left behind could call
    /// into Python (a file-like input) while the interpreter shuts down.
    run: Option<JoinHandle<()>>,
}

impl Receiving {
    /// Stops the run and waits for its thread, the GIL released: its batches are refused
    /// (the channel is closed) and it ends at its next line.
    fn stop_the_run(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
        self.rx = crossbeam_channel::never();
        if let Some(run) = self.run.take() {
            // The run catches its own panics (they end it with an error): a join error would
            // only repeat one.
            let _ = Python::attach(|py| py.detach(|| run.join()));
        }
    }

    fn end(&mut self, how: Result<String, PyErrText>) -> Option<Result<RecordBatch, ArrowError>> {
        self.done = true;
        if how.is_err() {
            self.stop_the_run();
        }
        let failed = how
            .as_ref()
            .err()
            .map(|e| format!("{}: {}", e.code, e.message));
        if let Ok(mut ended) = self.ended.lock() {
            *ended = Some(how);
        }
        failed.map(|message| Err(ArrowError::ExternalError(message.into())))
    }
}

impl Iterator for Receiving {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        loop {
            // The GIL is released while waiting: the run may need it (a file-like input is
            // read through Python), and so may the consumer's other threads.
            let rx = &self.rx;
            let got = Python::attach(|py| py.detach(|| rx.recv_timeout(SIGNAL_POLL)));
            match got {
                Ok(Message::Batch(batch)) => return Some(Ok(batch)),
                Ok(Message::End(how)) => return self.end(how),
                Err(RecvTimeoutError::Disconnected) => {
                    return self.end(Err(PyErrText {
                        code: "INTERNAL",
                        message: "the run ended without saying how (a bug, please report it)"
                            .into(),
                    }))
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
            if Python::attach(|py| py.check_signals()).is_err() {
                // The interrupt was taken by the check: the stream ends with an error that says
                // so, which the consumer raises (pyarrow: ArrowInvalid, "INTERRUPTED: ...").
                // Setting the interrupt again would raise KeyboardInterrupt at a random later
                // point, in the middle of the consumer's own error handling.
                return self.end(Err(PyErrText {
                    code: "INTERRUPTED",
                    message: "interrupted (Ctrl-C)".into(),
                }));
            }
        }
    }
}

impl Drop for Receiving {
    fn drop(&mut self) {
        // Read to its end, the run is over; else (a consumer that stopped early, a stream
        // never read) it is stopped here.
        self.stop_the_run();
    }
}

impl RecordBatchReader for Receiving {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }
}

/// A small table held in memory (`validate`'s diagnostics), readable any number of times
/// through the Arrow PyCapsule interface: `pyarrow.table(t)`, `polars.DataFrame(t)`.
#[pyclass(module = "rdq_envelope._native", name = "Table", frozen)]
pub(crate) struct Table {
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
}

impl Table {
    pub(crate) fn new(schema: SchemaRef, batches: Vec<RecordBatch>) -> Self {
        Table { schema, batches }
    }
}

#[pymethods]
impl Table {
    /// The Arrow C stream of the table's batches (they are shared, not copied).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let batches = self.batches.clone().into_iter().map(Ok);
        let reader = arrow_array::RecordBatchIterator::new(batches, Arc::clone(&self.schema));
        stream_capsule(py, Box::new(reader))
    }

    /// The schema, in a capsule named `arrow_schema`.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        schema_capsule(py, &self.schema)
    }

    /// The number of rows.
    #[getter]
    fn num_rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }

    fn __len__(&self) -> usize {
        self.num_rows()
    }

    /// The columns' names, in order.
    #[getter]
    fn column_names(&self) -> Vec<String> {
        self.schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "rdq_envelope.Table({} rows: {})",
            self.num_rows(),
            self.column_names().join(", ")
        )
    }
}
