//! The parallel pipeline: every command that reads envelopes runs on it (docs/cli.md: "every
//! subcommand that reads envelopes is a streaming filter: it reads JSON Lines, judges them in
//! parallel chunks, and writes in input order").
//!
//! Three kinds of thread share a fixed pool of `Chunk`s:
//!
//! ```text
//!   reader thread ──work──▶ N workers ──done──▶ writer (the caller's thread)
//!        ▲                                            │
//!        └─────────────────── free ◀──────────────────┘
//! ```
//!
//! * The **reader** opens each source in turn, decompresses it and frames it with a
//!   [`LineReader`] straight into a recycled chunk buffer, noting where each line lies, until the
//!   chunk holds about [`PipelineOptions::chunk_bytes`]; the buffer goes to the workers with the
//!   lines, and the reader goes on in a spare one. A line's bytes are not copied and its end is
//!   found once. The reader runs ahead of the workers, so neither reading nor decompression
//!   stalls them.
//!   With two workers or more, a regular file and a zstd file of several frames are not read
//!   by the reader: it hands out pieces (ranges, groups of whole frames: `io::pieces`) that each worker reads and
//!   decodes itself, frames, and numbers once the baton (`baton.rs`) gives its base; the
//!   writer joins the line that crosses each piece's edge (`straddle.rs`).
//! * Each **worker** owns the operation's per-thread state (a JSON parser with its simd-json
//!   buffers and tape, a verdict) and applies the [`LineOperation`] to every line of a chunk,
//!   writing into the chunk's own output buffers.
//! * The **writer** puts finished chunks back in input order by sequence number (a reorder
//!   buffer), writes their outputs, adds up their books and hands the chunk back to the reader.
//!
//! Memory is bounded: only the pool's chunks exist, and their buffers are reused (fresh memory
//! is slow to touch on these machines, so nothing is allocated per chunk once the pool has
//! grown). A write error (a closed pipe, a full disk) stops the workers at once and the reader
//! at its next chunk.

mod alt_stack;
mod baton;
mod chunk;
mod linger;
mod progress;
mod straddle;
mod summary;

pub(crate) use alt_stack::AltStack;

use std::fs::File;
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use crossbeam_channel::{bounded, select, unbounded, Receiver, Sender};

use baton::{Baton, Place};
pub use chunk::ChunkOutput;
use chunk::{Chunk, InputFailure, PieceChunk};
use linger::Linger;
pub use progress::Progress;
use straddle::Straddle;
pub use summary::Summary;
// The inputs the pipeline reads (defined with the I/O, which also reads them twice).
pub use crate::io::Source;

use crate::framing::{InputKind, Line, LineKind, LineReader, Pinned, DEFAULT_MAX_LINE_BYTES};
use crate::io::pieces::{self, Next, Opened, Piece, PieceReader, Ranged, Sizes};
use crate::io::Waits;

/// What a [`LineOperation`] did with a line: the books of the summary
/// (docs/cli.md#summary-and-the-books) are kept from these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// The line passed and the operation wrote it out (or, for `validate`, counts it as kept).
    Emit,
    /// The line broke a rule; the operation has written its reject record.
    Reject,
    /// The line passed but a filter left it out.
    FilterOut,
}

/// A line as an operation sees it: its place and its bytes.
#[derive(Debug, Clone, Copy)]
pub struct SourceLine<'a> {
    /// The source as given (`<stdin>` for standard input).
    pub source: &'a str,
    /// The line: never blank (the pipeline counts blank lines itself).
    pub line: Line<'a>,
}

/// One command's work on one line, applied by many workers at once.
///
/// The pipeline owns the books: it counts every line, the blank ones, and the lines each
/// [`Action`] names. The operation writes its own output (diagnostics, the emitted line, the
/// reject record) into the chunk's [`ChunkOutput`] and tallies codes there
/// ([`Summary::tally_errors`], [`Summary::tally_warnings`]).
///
/// An operation that adds up more than the books (`stats`) keeps a per-chunk [`Tally`]
/// (`ChunkOutput::tally`), filled by a worker, and a run's [`Total`], made by [`total`] when
/// the run starts and owned by the writer (the thread that called [`run`]), which hands each
/// chunk's tally to [`merge`] in input order: the total is the same whatever the worker count,
/// and needs no lock. What only input order decides (the i-th redriven line's due time,
/// whether an ID was seen in an earlier chunk) is settled by [`settle`], also on the writer's
/// thread in input order, before the chunk is written. [`run`] returns the total beside the
/// books. An operation that has seen what it needs (`show`'s first match) sets
/// [`ChunkOutput::stop`]: the run ends after that chunk's output.
///
/// An operation that counts into its total the lines that hold a word:
///
/// ```
/// use rdq_envelope::pipeline::{self, Action, ChunkOutput, LineOperation, Outputs, PipelineOptions, Source, SourceLine};
///
/// /// Counts the lines that mention "DEAD", writing nothing.
/// struct CountDead;
/// impl LineOperation for CountDead {
///     type Worker = ();
///     /// A chunk's lines that mention it.
///     type Tally = u64;
///     /// The run's.
///     type Total = u64;
///     fn worker(&self) {}
///     fn total(&self) -> u64 {
///         0
///     }
///     fn apply(&self, _: &mut (), line: SourceLine<'_>, out: &mut ChunkOutput<u64>) -> Action {
///         out.tally += u64::from(memchr::memmem::find(line.line.content, b"DEAD").is_some());
///         Action::FilterOut
///     }
///     fn merge(&self, total: &mut u64, tally: &mut u64) {
///         *total += std::mem::take(tally);
///     }
/// }
///
/// let input = b"{\"status\":\"DEAD\"}\n{\"status\":\"PENDING\"}\n{\"status\":\"DEAD\"}\n".to_vec();
/// let sources = vec![Source::Reader { name: "demo".into(), reader: Box::new(std::io::Cursor::new(input)) }];
/// let none = Outputs::none();
/// let (books, dead) = pipeline::run(sources, &CountDead, PipelineOptions::default(), none, None).unwrap();
/// assert_eq!((books.lines, dead), (3, 2));
/// ```
///
/// [`Tally`]: LineOperation::Tally
/// [`Total`]: LineOperation::Total
/// [`total`]: LineOperation::total
/// [`merge`]: LineOperation::merge
/// [`settle`]: LineOperation::settle
pub trait LineOperation: Sync {
    /// How many outputs the operation writes: a chunk holds a buffer for each
    /// ([`ChunkOutput::buffer`], `0..OUTPUTS`), and [`run`] writes buffer `i` to sink `i` of
    /// its [`Outputs`]. What each output is (lines, diagnostics, reject records, text for
    /// people), the operation says; the pipeline only keeps them apart and in input order.
    /// One unless the operation declares more.
    const OUTPUTS: usize = 1;

    /// Per-thread state, made once per worker and reused for every line (parsers, scratch).
    type Worker: Send;

    /// What one chunk's lines add up to beside the books; `()` for most operations.
    type Tally: Default + Send + 'static;

    /// What the whole run adds up to beside the books, in input order: the writer's own state,
    /// which [`run`] returns. `()` for most operations.
    type Total: Send;

    /// Fresh per-thread state.
    fn worker(&self) -> Self::Worker;

    /// A fresh total, made once as a run starts (so one operation can be run many times).
    ///
    /// ```
    /// # use rdq_envelope::pipeline::{Action, ChunkOutput, LineOperation, SourceLine};
    /// # struct CountDead;
    /// # impl LineOperation for CountDead {
    /// #     type Worker = ();
    /// #     type Tally = u64;
    /// #     type Total = u64;
    /// #     fn worker(&self) {}
    /// #     fn total(&self) -> u64 {
    /// #         0
    /// #     }
    /// #     fn apply(&self, _: &mut (), _: SourceLine<'_>, _: &mut ChunkOutput<u64>) -> Action {
    /// #         Action::FilterOut
    /// #     }
    /// # }
    /// // `CountDead` is the operation of the trait's example.
    /// assert_eq!(CountDead.total(), 0);
    /// ```
    fn total(&self) -> Self::Total;

    /// Judges, transforms or filters one non-blank line.
    fn apply(
        &self,
        worker: &mut Self::Worker,
        line: SourceLine<'_>,
        out: &mut ChunkOutput<Self::Tally>,
    ) -> Action;

    /// The output that holds this operation's diagnostics for people (rows of text, one or
    /// more per rejected line), if any. For a source whose first line shows it is not JSON
    /// Lines, those rows would be one per line of a file that was never meant to be read line
    /// by line: the pipeline leaves them out and writes instead, once the source ends, a row
    /// per code with the number of its lines that broke it (`SOURCE: CODE: N lines ...`). The
    /// books count every line as before. `None` (the default) writes every row as it is.
    fn diagnostics_for_people(&self) -> Option<usize> {
        None
    }

    /// The stack each worker thread needs, when more than the platform's default: an
    /// operation that recurses as deep as its input asks (`filter --where`). The thread that
    /// calls [`run`] also applies the operation at times (to the rest of a chunk whose output
    /// reached its budget), so it should have as much.
    fn worker_stack_bytes(&self) -> Option<usize> {
        None
    }

    /// Adds a finished chunk's tally to the run's total, on the writer's thread, in input
    /// order, once the chunk is written. It should leave `tally` empty: the chunk, and its
    /// tally's capacity, is reused. The default adds nothing.
    ///
    /// ```
    /// # use rdq_envelope::pipeline::{Action, ChunkOutput, LineOperation, SourceLine};
    /// # struct CountDead;
    /// # impl LineOperation for CountDead {
    /// #     type Worker = ();
    /// #     type Tally = u64;
    /// #     type Total = u64;
    /// #     fn worker(&self) {}
    /// #     fn total(&self) -> u64 {
    /// #         0
    /// #     }
    /// #     fn apply(&self, _: &mut (), _: SourceLine<'_>, _: &mut ChunkOutput<u64>) -> Action {
    /// #         Action::FilterOut
    /// #     }
    /// #     fn merge(&self, total: &mut u64, tally: &mut u64) {
    /// #         *total += std::mem::take(tally);
    /// #     }
    /// # }
    /// // `CountDead` is the operation of the trait's example.
    /// let (mut total, mut tally) = (CountDead.total(), 2);
    /// CountDead.merge(&mut total, &mut tally);
    /// assert_eq!((total, tally), (2, 0));
    /// ```
    fn merge(&self, total: &mut Self::Total, tally: &mut Self::Tally) {
        let _ = (total, tally);
    }

    /// Finishes a chunk's output on the writer's thread, in input order, before it is written:
    /// it may rewrite the outputs (keeping their lines in order) and move lines between the
    /// books' `emitted` and `filtered_out`, from what the workers noted in the tally and what
    /// the chunks before it left in `total`. The default leaves the chunk as it is.
    ///
    /// ```
    /// use rdq_envelope::pipeline::{self, Action, ChunkOutput, LineOperation, Outputs, PipelineOptions, Source, SourceLine};
    ///
    /// /// Emits the run's first two lines only: a worker cannot know which those are.
    /// struct FirstTwo;
    /// impl LineOperation for FirstTwo {
    ///     type Worker = ();
    ///     /// Where each line the chunk emitted ends in its output.
    ///     type Tally = Vec<usize>;
    ///     /// The lines kept so far.
    ///     type Total = usize;
    ///     fn worker(&self) {}
    ///     fn total(&self) -> usize {
    ///         0
    ///     }
    ///     fn apply(&self, _: &mut (), line: SourceLine<'_>, out: &mut ChunkOutput<Vec<usize>>) -> Action {
    ///         let (lines, ends) = out.buffer_and_tally(0);
    ///         lines.extend_from_slice(line.line.content);
    ///         lines.push(b'\n');
    ///         ends.push(lines.len());
    ///         Action::Emit
    ///     }
    ///     fn settle(&self, kept: &mut usize, out: &mut ChunkOutput<Vec<usize>>) {
    ///         let ends = std::mem::take(&mut out.tally);
    ///         let keep = ends.len().min(2 - *kept);
    ///         out.buffer(0).truncate(if keep == 0 { 0 } else { ends[keep - 1] });
    ///         *kept += keep;
    ///         let dropped = (ends.len() - keep) as u64;
    ///         out.summary.emitted -= dropped;
    ///         out.summary.filtered_out += dropped;
    ///     }
    /// }
    ///
    /// let mut options = PipelineOptions::default();
    /// options.chunk_bytes = 1; // a line a chunk: the first two are settled across chunks
    /// let input = b"a\nb\nc\nd\n".to_vec();
    /// let sources = vec![Source::Reader { name: "demo".into(), reader: Box::new(std::io::Cursor::new(input)) }];
    /// let mut out = Vec::new();
    /// let outputs = Outputs::none().to(0, &mut out);
    /// let (books, kept) = pipeline::run(sources, &FirstTwo, options, outputs, None).unwrap();
    /// assert_eq!((out.as_slice(), kept), (&b"a\nb\n"[..], 2));
    /// assert_eq!((books.emitted, books.filtered_out), (2, 2));
    /// ```
    fn settle(&self, total: &mut Self::Total, out: &mut ChunkOutput<Self::Tally>) {
        let _ = (total, out);
    }
}

/// How the pipeline runs. Start from [`PipelineOptions::default`] (one worker per available
/// core, 1 MiB chunks, the 16 MiB reader cap, output in large blocks, a linger of 50 ms) and
/// set the fields that differ; new options come with defaults that keep today's behaviour
/// (`#[non_exhaustive]`).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PipelineOptions {
    /// Worker threads (at least 1).
    pub jobs: usize,
    /// About how many bytes of lines one chunk holds.
    pub chunk_bytes: usize,
    /// The reader cap (docs/envelope.md#reader-cap).
    pub max_line_bytes: usize,
    /// One line per chunk and a flush after each, for interactive tails (`--line-buffered`).
    pub line_buffered: bool,
    /// The most a line read from a source whose reads may wait (standard input, a pipe, a
    /// FIFO, a terminal, a socket, a character device) is held before it is judged and
    /// written, every output flushed after it (docs/cli.md#latency). When the next read would
    /// wait, the reader waits for more bytes only until the first line it holds has waited
    /// this long, then hands its lines to the workers. `None` holds them until their chunk is
    /// full or the input ends. Regular files, objects in storage and
    /// [`Source::Reader`]s are never waited on this way, and a source that always has bytes
    /// ready fills its chunks as before. (On Linux a pipe input is also widened to 256 KiB,
    /// whatever this says: fewer, larger reads.)
    pub linger: Option<Duration>,
    /// Set to `true` from anywhere to end the run early: no chunk is read after it and the
    /// run returns [`PipelineError::Cancelled`], never books that look complete. An embedder's
    /// Ctrl-C (the Python module's); `None` runs to the end.
    pub cancel: Option<Arc<AtomicBool>>,
    /// Stop after this many rejected lines (`--max-errors`): the run ends right after the line
    /// that brings the count to it, in input order, whatever the workers had read beyond, and
    /// its books are those of the lines up to it. `None` reads every line; 0 is taken as 1.
    pub max_rejected: Option<u64>,
    /// Called on the writer's thread as soon as a source's first non-blank line shows it is
    /// not JSON Lines (a JSON array, CSV, UTF-16, binary), with the source's name and what it
    /// looks like, before anything that line put out is written and after every earlier output
    /// is flushed: the command line's hint comes before any diagnostic of the source.
    pub on_not_json_lines: Option<NotJsonLinesHook>,
}

/// What [`PipelineOptions::on_not_json_lines`] calls, with the source's name and its kind.
#[derive(Clone)]
pub struct NotJsonLinesHook(pub Arc<NotJsonLinesFn>);

/// The function inside a [`NotJsonLinesHook`].
pub type NotJsonLinesFn = dyn Fn(&str, InputKind) + Send + Sync;

impl std::fmt::Debug for NotJsonLinesHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NotJsonLinesHook")
    }
}

impl Default for PipelineOptions {
    fn default() -> Self {
        PipelineOptions {
            jobs: thread::available_parallelism().map_or(1, |n| n.get()),
            chunk_bytes: DEFAULT_CHUNK_BYTES,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            line_buffered: false,
            linger: Some(DEFAULT_LINGER),
            cancel: None,
            max_rejected: None,
            on_not_json_lines: None,
        }
    }
}

/// The default [`PipelineOptions::linger`]: 50 ms, as long as people do not notice and long
/// enough for a producer's burst of lines to share a chunk.
pub const DEFAULT_LINGER: Duration = Duration::from_millis(50);

/// The most worker threads a run starts. More threads than cores buys nothing, and each holds
/// a few chunks' worth of buffers, so a huge `jobs` would only cost memory (or fail to start).
pub const MAX_JOBS: usize = 256;

/// How many times a chunk's input its output may reach before it is written and the rest of the
/// chunk worked on: enough for any ordinary output (a rejects record is at most about 6 times
/// its line), small enough that a pool of chunks of capped but long diagnostics stays small.
const OUTPUT_BUDGET_FACTOR: usize = 8;

/// 1 MiB: large enough that per-chunk costs (channel hops, a reorder step, a few writes)
/// vanish beside the work, small enough to stay in the L2/L3 cache while a worker walks it.
pub const DEFAULT_CHUNK_BYTES: usize = 1 << 20;

/// The sinks the writer fills, in input order: sink `i` takes what the operation writes to its
/// output `i` ([`LineOperation::OUTPUTS`]). Any may be absent (its bytes go nowhere); a sink
/// past the operation's outputs is never written.
///
/// ```
/// use rdq_envelope::pipeline::Outputs;
///
/// let (mut lines, mut rejects) = (Vec::new(), Vec::new());
/// let outputs = Outputs::none().to(0, &mut lines).to(2, &mut rejects);
/// assert_eq!(outputs.len(), 3);
/// ```
#[derive(Default)]
pub struct Outputs<'a> {
    sinks: Vec<Option<&'a mut dyn Write>>,
}

impl<'a> Outputs<'a> {
    /// No sink at all.
    pub fn none() -> Self {
        Outputs::default()
    }

    /// These outputs, with output `index` written to `sink`.
    pub fn to(mut self, index: usize, sink: &'a mut dyn Write) -> Self {
        self.set(index, Some(sink));
        self
    }

    /// Sets (or, with `None`, removes) the sink of output `index`.
    pub fn set(&mut self, index: usize, sink: Option<&'a mut dyn Write>) {
        if self.sinks.len() <= index {
            self.sinks.resize_with(index + 1, || None);
        }
        self.sinks[index] = sink;
    }

    /// One past the highest output with a place for a sink (set or not).
    pub fn len(&self) -> usize {
        self.sinks.len()
    }

    /// Whether no output has a place for a sink.
    pub fn is_empty(&self) -> bool {
        self.sinks.is_empty()
    }
}

/// Why a run could not complete (docs/cli.md#exit-status: 2).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PipelineError {
    /// A source could not be opened or read (or its compressed stream is corrupt).
    #[error("{source_name}: {what}{}", read_so_far(.what, *.line, *.offset))]
    Input {
        /// The source's name.
        source_name: String,
        /// What failed: "cannot open", "input failed".
        what: &'static str,
        /// Lines of this source read before the failure.
        line: u64,
        /// The byte offset (decompressed) it had reached.
        offset: u64,
        /// The cause.
        #[source]
        error: io::Error,
    },
    /// An output could not be written (its error names it); a closed pipe is `BrokenPipe`.
    #[error("output failed")]
    Output(#[source] io::Error),
    /// The system would not start the reader or any worker thread.
    #[error("cannot start the pipeline's threads")]
    Threads(#[source] io::Error),
    /// [`PipelineOptions::cancel`] was set: the run ended before its inputs did.
    #[error("interrupted")]
    Cancelled,
    /// A thread of the pipeline panicked: a bug. The run is incomplete, whatever was written.
    #[error("{place}: internal error (a bug, please report it): {message}")]
    Panicked {
        /// Where: the source and first line of the chunk being worked on, or "the reader".
        place: String,
        /// The panic's message.
        message: String,
    },
}

/// Where an input failed, for its message: nothing for a source that could not be opened (it
/// has no line or offset to speak of), "before line 1" for one that failed before its first.
fn read_so_far(what: &str, line: u64, offset: u64) -> String {
    match (what, line) {
        ("cannot open" | "cannot read", _) => String::new(),
        (_, 0) => format!(" before line 1, at byte offset {offset}"),
        _ => format!(" after line {line}, at byte offset {offset}"),
    }
}

/// Runs `op` over every line of `sources`, in parallel, writing the outputs in input order.
/// Returns the run's books (without `seconds`, which the caller measures) and the operation's
/// [`Total`](LineOperation::Total).
///
/// ```
/// use rdq_envelope::pipeline::{self, Action, ChunkOutput, LineOperation, Outputs, PipelineOptions, Source, SourceLine};
///
/// /// Emits lines that mention "DEAD", filters out the rest.
/// struct Dead;
/// impl LineOperation for Dead {
///     type Worker = ();
///     type Tally = ();
///     type Total = ();
///     fn worker(&self) {}
///     fn total(&self) {}
///     fn apply(&self, _: &mut (), line: SourceLine<'_>, out: &mut ChunkOutput) -> Action {
///         if memchr::memmem::find(line.line.content, b"DEAD").is_none() {
///             return Action::FilterOut;
///         }
///         out.buffer(0).extend_from_slice(line.line.content);
///         out.buffer(0).push(b'\n');
///         Action::Emit
///     }
/// }
///
/// let input = b"{\"status\":\"DEAD\"}\n\n{\"status\":\"PENDING\"}\n".to_vec();
/// let sources = vec![Source::Reader { name: "demo".into(), reader: Box::new(std::io::Cursor::new(input)) }];
/// let mut out = Vec::new();
/// let outputs = Outputs::none().to(0, &mut out);
/// let (books, ()) = pipeline::run(sources, &Dead, PipelineOptions::default(), outputs, None).unwrap();
/// assert_eq!(out, b"{\"status\":\"DEAD\"}\n");
/// assert_eq!((books.lines, books.blank, books.emitted, books.filtered_out), (3, 1, 1, 1));
/// ```
pub fn run<Op: LineOperation>(
    sources: Vec<Source>,
    op: &Op,
    options: PipelineOptions,
    mut outputs: Outputs<'_>,
    progress: Option<Arc<Progress>>,
) -> Result<(Summary, Op::Total), PipelineError> {
    let jobs = options.jobs.clamp(1, MAX_JOBS);
    let output_budget = options
        .chunk_bytes
        .max(512)
        .saturating_mul(OUTPUT_BUDGET_FACTOR);
    let pool = pool_size(jobs);
    let names: Vec<String> = sources.iter().map(Source::name).collect();
    let stop = Arc::new(AtomicBool::new(false));
    // Made before any worker starts: making it may reset what the workers read of the run
    // (`filter --limit`'s count of the lines written so far).
    let mut total = op.total();
    // A sink for each output the operation declared: one past them is never written.
    outputs.sinks.resize_with(Op::OUTPUTS, || None);

    let (free_tx, free_rx) = unbounded::<Chunk<Op::Tally>>();
    let (work_tx, work_rx) = bounded::<Chunk<Op::Tally>>(pool);
    let (done_tx, done_rx) = unbounded::<Chunk<Op::Tally>>();
    // Never sent on: dropping it tells the workers to stop, even while the reader is blocked.
    let (stop_tx, stop_rx) = bounded::<()>(0);
    for _ in 0..pool {
        free_tx
            .send(Chunk::new(Op::OUTPUTS))
            .expect("the receiver is alive");
    }

    let names = &names;
    let baton = &Baton::default();
    let max_line_bytes = options.max_line_bytes;
    thread::scope(|scope| {
        // Workers first: if the system will not start even one, nothing has been read.
        let mut workers = Vec::with_capacity(jobs);
        for index in 0..jobs {
            let (work_rx, done_tx, stop_rx) = (work_rx.clone(), done_tx.clone(), stop_rx.clone());
            let mut builder = thread::Builder::new().name(format!("rdq-worker-{index}"));
            if let Some(bytes) = op.worker_stack_bytes() {
                builder = builder.stack_size(bytes);
            }
            let spawned = builder.spawn_scoped(scope, move || {
                // A deep evaluation's fault handler needs a stack to run on.
                let _alt = op.worker_stack_bytes().and_then(|_| AltStack::install());
                let channels = (&work_rx, &done_tx, &stop_rx);
                work(op, names, channels, baton, max_line_bytes, output_budget)
            });
            match spawned {
                Ok(worker) => workers.push(worker),
                // Fewer workers write the same bytes, only later: go on with those that run.
                Err(_) if !workers.is_empty() => break,
                Err(error) => return Err(PipelineError::Threads(error)),
            }
        }
        drop((done_tx, work_rx));
        // Not scoped: a reader blocked on a silent pipe must not keep the run from ending
        // when the output has failed. It owns everything it touches.
        let reader = {
            let stop = Arc::clone(&stop);
            let progress = progress.clone();
            let options = options.clone();
            thread::Builder::new()
                .name("rdq-reader".into())
                .spawn(move || read_sources(sources, &options, &free_rx, &work_tx, &stop, progress))
        };
        let reader = match reader {
            Ok(reader) => reader,
            Err(error) => {
                drop(stop_tx);
                return Err(PipelineError::Threads(error));
            }
        };
        let writer = Writer {
            names,
            flush_each: options.line_buffered,
            progress: progress.as_deref(),
            output_budget,
            max_line_bytes: options.max_line_bytes,
            cancel: options.cancel.as_deref(),
            max_rejected: options.max_rejected.map(|max| max.max(1)),
            on_not_json_lines: options.on_not_json_lines.as_ref(),
        };
        let result = writer.write_in_order(op, &mut total, &done_rx, &free_tx, &mut outputs);
        if !matches!(result, Ok(Ending::Read(_))) {
            stop.store(true, Ordering::Relaxed);
        }
        // Workers waiting for a base they will never need.
        baton.abort();
        drop(stop_tx);
        drop(done_rx);
        // Joined one by one, not only by the scope's end: a scope returns once each closure
        // has returned, which can be before the thread has run its thread-local destructors
        // (LeakSanitizer in the `pipeline` fuzz target caught crossbeam's per-thread context
        // still allocated). A worker's panic was caught and reported through its chunk.
        for worker in workers {
            let _ = worker.join();
        }
        // After an input error the reader has sent its last chunk and is ending; after an
        // output error or an early stop it may be blocked on a silent pipe, so it is left to
        // end with the process (it stops at its next chunk). A reader that panicked has sent
        // no more chunks, so the writer saw the input end early: that is no clean end.
        match result {
            Ok(Ending::Read(books)) => match reader.join() {
                Ok(()) => Ok((books, total)),
                Err(panic) => Err(PipelineError::Panicked {
                    place: "the reader".into(),
                    message: panic_message(&*panic),
                }),
            },
            Ok(Ending::Stopped(books)) => Ok((books, total)),
            Err(error) => {
                if !matches!(
                    error,
                    PipelineError::Output(_) | PipelineError::Panicked { .. }
                ) {
                    let _ = reader.join();
                }
                Err(error)
            }
        }
    })
}

/// A panic's message, when it has one (`panic!` with a literal or a formatted string).
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

/// How the writer's loop ended, with the books of the lines it wrote.
enum Ending {
    /// Every input was read to its end.
    Read(Summary),
    /// An operation set [`ChunkOutput::stop`]: the lines after that chunk were not read.
    Stopped(Summary),
}

/// The reader thread: every source in order, framed on its own, into chunks.
fn read_sources<T: Default>(
    sources: Vec<Source>,
    options: &PipelineOptions,
    free: &Receiver<Chunk<T>>,
    work: &Sender<Chunk<T>>,
    stop: &AtomicBool,
    progress: Option<Arc<Progress>>,
) {
    let mut seq = 0u64;
    let mut next_chunk = |source: usize| -> Option<Chunk<T>> {
        if stop.load(Ordering::Relaxed) || cancelled(options.cancel.as_deref()) {
            return None;
        }
        let mut chunk = free.recv().ok()?;
        chunk.reset(seq, source);
        seq += 1;
        Some(chunk)
    };
    let mut linger = Linger::new(options.linger.filter(|_| !options.line_buffered));
    for (index, source) in sources.into_iter().enumerate() {
        let Some(mut chunk) = next_chunk(index) else {
            return;
        };
        // Output owed a flush goes out before a source that may wait is opened: opening a
        // FIFO waits for its writer, and the first bytes are waited for to tell compression.
        if linger.owed() && may_wait(&source) {
            chunk.flush = true;
            linger.sent(true, false);
            if work.send(chunk).is_err() {
                return;
            }
            let Some(next) = next_chunk(index) else {
                return;
            };
            chunk = next;
        }
        let mut opened = None;
        match in_pieces(&source, options) {
            Ok(Opened::Pieces(ranged)) => {
                let progress = progress.as_deref();
                if !send_pieces(
                    index,
                    ranged,
                    chunk,
                    &mut next_chunk,
                    work,
                    progress,
                    options,
                ) {
                    return;
                }
                // What the file gave is flushed before a source that may wait is opened.
                linger.sent(false, true);
                continue;
            }
            Ok(Opened::Stream(stream)) => opened = Some(stream),
            Ok(Opened::NotYet) => {}
            Err(error) => return not_opened(chunk, error, work),
        }
        let stream = match open(source, opened, progress.clone()) {
            Ok((stream, waits)) => {
                linger.source(waits);
                match &options.cancel {
                    Some(cancel) => Box::new(Cancellable {
                        stream,
                        cancel: Arc::clone(cancel),
                    }),
                    None => stream,
                }
            }
            Err(error) => return not_opened(chunk, error, work),
        };
        // Reads of at least 64 KiB even when chunks are tiny (tests), so a stream is not read
        // in tiny pieces, and of at most 64 MiB: the reader allocates its target up front, and
        // a caller asking for one unbounded chunk (`usize::MAX`) must not ask for that much.
        let target = options.chunk_bytes.clamp(64 << 10, 64 << 20);
        let mut reader = LineReader::pinned(stream, options.max_line_bytes, target);
        let mut reported = 0u64;
        loop {
            match reader.next_pinned(&mut |holding| linger.quiet(holding)) {
                Ok(Pinned::Line(line, start)) => {
                    chunk.push(&line, start);
                    // A slow source fills a chunk slowly: a cancel is heard between its lines.
                    if cancelled(options.cancel.as_deref()) {
                        return;
                    }
                    if !chunk.is_full(options.chunk_bytes) && !options.line_buffered {
                        continue;
                    }
                }
                Ok(Pinned::Full) => {}
                // The source went quiet: what was read goes out now, and is flushed.
                Ok(Pinned::Quiet) => chunk.flush = true,
                Ok(Pinned::End) => break,
                Err(error) => {
                    chunk.take_lines(&mut reader);
                    chunk.failure = Some(InputFailure {
                        what: "input failed",
                        line: reader.lines(),
                        offset: reader.offset(),
                        error,
                    });
                    let _ = work.send(chunk);
                    return;
                }
            }
            chunk.take_lines(&mut reader);
            let offset = reader.offset();
            chunk.bytes_in = offset - reported;
            reported = offset;
            if let Some(progress) = &progress {
                progress.add_bytes(chunk.bytes_in);
            }
            linger.sent(chunk.flush, chunk.has_lines());
            if work.send(chunk).is_err() {
                return;
            }
            let Some(next) = next_chunk(index) else {
                return;
            };
            chunk = next;
        }
        chunk.take_lines(&mut reader);
        chunk.bytes_in = reader.offset() - reported;
        if let Some(progress) = &progress {
            progress.add_bytes(chunk.bytes_in);
        }
        linger.sent(false, chunk.has_lines());
        if work.send(chunk).is_err() {
            return;
        }
    }
}

/// A source read under [`PipelineOptions::cancel`]: each read asks first, so a cancel is
/// heard within one read even inside a line that never ends (`/dev/zero`), where no chunk
/// boundary comes. (The writer reports the run as cancelled, not as this read's failure.)
struct Cancellable {
    stream: Box<dyn Read>,
    cancel: Arc<AtomicBool>,
}

impl Read for Cancellable {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.cancel.load(Ordering::Relaxed) {
            return Err(io::Error::other("the run was cancelled"));
        }
        self.stream.read(buf)
    }
}

/// Sends the chunk that says a source could not be opened: the run ends there.
fn not_opened<T>(mut chunk: Chunk<T>, error: io::Error, work: &Sender<Chunk<T>>) {
    chunk.failure = Some(InputFailure {
        what: cannot(&error),
        line: 0,
        offset: 0,
        error,
    });
    let _ = work.send(chunk);
}

/// What an error at a source's opening says it could not do.
fn cannot(error: &io::Error) -> &'static str {
    match error.kind() {
        io::ErrorKind::Unsupported | io::ErrorKind::InvalidData => "cannot read",
        _ => "cannot open",
    }
}

/// The most bytes of one piece: a chunk's, as the options say (tests ask for tiny ones, which
/// put every line across an edge), up to 64 MiB.
fn piece_bytes(options: &PipelineOptions) -> usize {
    options.chunk_bytes.clamp(1, 64 << 20)
}

/// What the frame groups of all the chunks in flight may decode to together: 1 GiB.
const GROUPS_IN_FLIGHT: usize = 1 << 30;

/// The sizes of pieces: a chunk's, and groups of frames of at most a share of
/// [`GROUPS_IN_FLIGHT`] per chunk of the pool (32 MiB up to `-j 22`, 4 MiB at `-j 256`), and
/// never under 4 MiB, this tool's own frames.
fn piece_sizes(options: &PipelineOptions) -> Sizes {
    let share = GROUPS_IN_FLIGHT / pool_size(options.jobs.clamp(1, MAX_JOBS));
    Sizes {
        piece: piece_bytes(options),
        group: share.clamp(4 << 20, 32 << 20),
    }
}

/// The chunks of a run's pool: enough that every worker has one, the reader fills one ahead and
/// the writer drains one, plus slack so one slow chunk does not idle the others at once.
fn pool_size(jobs: usize) -> usize {
    jobs + 2 + jobs.min(8)
}

/// How a source is read in pieces by the workers, if it is (`io::pieces`): a path, with two
/// workers or more, and not under `--line-buffered`, which asks for a chunk per line. With
/// one worker the reader thread reads, decompresses and frames beside it, as a second thread:
/// measured, 1.23 times as fast as one worker doing all of it (docs/performance.md).
fn in_pieces(source: &Source, options: &PipelineOptions) -> io::Result<Opened> {
    match source {
        Source::Path(path) if !options.line_buffered && options.jobs >= 2 => {
            pieces::ranged(path, piece_sizes(options))
        }
        _ => Ok(Opened::NotYet),
    }
}

/// Hands a source read in pieces to the workers, a chunk per piece, and an empty piece that
/// ends it (where the writer ends the last line). False when the run is over: the writer
/// stopped, or the source failed (its last chunk says why).
fn send_pieces<T: Default>(
    source: usize,
    mut ranged: Ranged,
    mut chunk: Chunk<T>,
    next_chunk: &mut impl FnMut(usize) -> Option<Chunk<T>>,
    work: &Sender<Chunk<T>>,
    progress: Option<&Progress>,
    options: &PipelineOptions,
) -> bool {
    let input = Arc::clone(ranged.input());
    let mut first = true;
    loop {
        let (piece, len, last) = match ranged.next(chunk.data_mut(), piece_bytes(options)) {
            Ok(Next::Piece(piece, stored)) => {
                if let Some(progress) = progress {
                    progress.add_raw_bytes(stored);
                }
                (piece, 0, false)
            }
            Ok(Next::Filled(len)) => (Piece::Filled, len, false),
            Ok(Next::End) => (Piece::Filled, 0, true),
            Err(error) => {
                chunk.failure = Some(InputFailure {
                    what: "input failed",
                    line: 0,
                    offset: 0,
                    error,
                });
                (Piece::Filled, 0, true)
            }
        };
        let failed = chunk.failure.is_some();
        chunk.piece = Some(PieceChunk {
            input: Arc::clone(&input),
            piece,
            place: Place { first, last },
            len,
            head_end: 0,
            tail_start: 0,
            newlines: 0,
        });
        first = false;
        if work.send(chunk).is_err() || failed {
            return false;
        }
        if last {
            return true;
        }
        match next_chunk(source) {
            Some(next) => chunk = next,
            None => return false,
        }
    }
}

/// Whether a source's reads may wait (standard input or a path to a pipe, a FIFO, a terminal,
/// a socket, a character device), told without opening it.
fn may_wait(source: &Source) -> bool {
    match source {
        Source::Stdin => Waits::stdin().is_some(),
        Source::Path(path) => !crate::io::is_url(path) && crate::io::path_may_wait(path),
        Source::Reader { .. } => false,
    }
}

/// Opens a source (unless `opened` holds its stream already: an object the probe for pieces
/// opened) and undoes its compression (sniffed from its first bytes); with the descriptor to
/// ask whether a read would wait, for a source whose reads may.
fn open(
    source: Source,
    opened: Option<Box<dyn Read + Send>>,
    progress: Option<Arc<Progress>>,
) -> io::Result<(Box<dyn Read>, Option<Waits>)> {
    if let Some(stream) = opened {
        return Ok((finish_open(stream, progress)?, None));
    }
    let (raw, waits): (Box<dyn Read>, _) = match source {
        Source::Stdin => (Box::new(io::stdin()), Waits::stdin()),
        Source::Path(path) => {
            if let Some(object) = crate::io::open_url(&path)? {
                return Ok((finish_open(object, progress)?, None));
            }
            if path.is_dir() {
                return Err(io::Error::other("is a directory, not an input file"));
            }
            let file = File::open(path)?;
            // The descriptor stays open as long as the stream that owns the file.
            let waits = Waits::of_file(&file);
            (Box::new(file), waits)
        }
        Source::Reader { reader, .. } => (reader, None),
    };
    // Fewer, larger reads of a fast pipe: each read while lines are held costs a poll.
    if let Some(waits) = waits {
        waits.widen_pipe();
    }
    Ok((finish_open(raw, progress)?, waits))
}

/// The progress count, then decompression, over an opened stream.
fn finish_open(raw: Box<dyn Read>, progress: Option<Arc<Progress>>) -> io::Result<Box<dyn Read>> {
    let raw: Box<dyn Read> = match progress {
        Some(progress) => Box::new(progress::Counted {
            inner: raw,
            progress,
        }),
        None => raw,
    };
    Ok(crate::io::decompressed(raw)?.1)
}

/// A worker's channels: chunks to work on, chunks done, and the writer's stop.
type Channels<'a, T> = (
    &'a Receiver<Chunk<T>>,
    &'a Sender<Chunk<T>>,
    &'a Receiver<()>,
);

/// A worker: chunks in, the operation over each line, chunks out, until the work runs out or
/// the writer stops. A chunk of a source read in pieces is read and framed here first, and its
/// lines numbered once the baton gives its base.
fn work<Op: LineOperation>(
    op: &Op,
    names: &[String],
    (work, done, stop): Channels<'_, Op::Tally>,
    baton: &Baton,
    max_line_bytes: usize,
    output_budget: usize,
) {
    let mut state = op.worker();
    let mut pieces = PieceReader::default();
    loop {
        let mut chunk = select! {
            recv(work) -> chunk => match chunk {
                Ok(chunk) => chunk,
                Err(_) => return,
            },
            recv(stop) -> _ => return,
        };
        let processed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if let Some(place) = chunk.piece.as_ref().map(|p| p.place) {
                // A panic before the counts are published leaves the chunks after this one
                // waiting: the writer, told of the panic, aborts the baton.
                let counts = chunk.read_piece(&mut pieces, max_line_bytes);
                baton.publish(chunk.seq, place, counts);
                match baton.base(chunk.seq) {
                    Some(base) => chunk.base = base,
                    None => return false,
                }
            }
            chunk.process(op, &mut state, &names[chunk.source], output_budget, None);
            true
        }));
        // A panic leaves the chunk half done and the state unknown: the chunk goes back marked,
        // so that the writer ends the run at once (a lost chunk would stall it forever), and
        // this worker ends.
        let panicked = match processed {
            Ok(true) => None,
            // Stopping (the baton aborted): the writer wants nothing more.
            Ok(false) => return,
            Err(panic) => Some(panic_message(&*panic)),
        };
        let last = panicked.is_some();
        chunk.panic = panicked;
        if done.send(chunk).is_err() || last {
            return;
        }
    }
}

/// The writer's settings.
struct Writer<'a> {
    names: &'a [String],
    flush_each: bool,
    progress: Option<&'a Progress>,
    output_budget: usize,
    max_line_bytes: usize,
    /// [`PipelineOptions::cancel`].
    cancel: Option<&'a AtomicBool>,
    /// [`PipelineOptions::max_rejected`].
    max_rejected: Option<u64>,
    /// [`PipelineOptions::on_not_json_lines`].
    on_not_json_lines: Option<&'a NotJsonLinesHook>,
}

/// Whether the run was cancelled ([`PipelineOptions::cancel`]).
fn cancelled(cancel: Option<&AtomicBool>) -> bool {
    cancel.is_some_and(|c| c.load(Ordering::Relaxed))
}

/// What the writer keeps from chunk to chunk beside the run's total.
struct Books<'o, 'w, Op: LineOperation> {
    outputs: &'o mut Outputs<'w>,
    books: Summary,
    /// The writer's own worker state, made when it first works on lines.
    state: Option<Op::Worker>,
    /// The output of a line the writer joined (`straddle`).
    joined: ChunkOutput<Op::Tally>,
    /// The source whose first non-blank line is yet to be seen, for `not_json_lines`.
    first_line_of: Option<usize>,
    /// The outputs written to since they were last flushed, by index.
    unflushed: Vec<bool>,
    /// The source whose diagnostics for people are being counted, not written
    /// ([`LineOperation::diagnostics_for_people`]).
    summarising: Option<Summarised>,
}

/// The diagnostics of a source that is not JSON Lines, counted by code.
struct Summarised {
    source: usize,
    kind: InputKind,
    /// The books of its lines so far (their `by_code` and `warnings_by_code` are the rows).
    books: Summary,
}

impl Writer<'_> {
    /// Chunks back in sequence order, their outputs written, their books added up and their
    /// tallies merged into `total`.
    fn write_in_order<Op: LineOperation>(
        &self,
        op: &Op,
        total: &mut Op::Total,
        done: &Receiver<Chunk<Op::Tally>>,
        free: &Sender<Chunk<Op::Tally>>,
        outputs: &mut Outputs<'_>,
    ) -> Result<Ending, PipelineError> {
        let unflushed = vec![false; outputs.len()];
        let mut run = Books::<Op> {
            outputs,
            books: Summary::default(),
            state: None,
            joined: ChunkOutput::new(Op::OUTPUTS),
            first_line_of: Some(0),
            unflushed,
            summarising: None,
        };
        let stopped = self.write_chunks(op, total, done, free, &mut run)?;
        self.end_summarised(op, &mut run)?;
        Ok(match stopped {
            true => Ending::Stopped(run.books),
            false => Ending::Read(run.books),
        })
    }

    /// The loop of [`write_in_order`](Self::write_in_order): true when the run stopped before
    /// its inputs ended.
    fn write_chunks<Op: LineOperation>(
        &self,
        op: &Op,
        total: &mut Op::Total,
        done: &Receiver<Chunk<Op::Tally>>,
        free: &Sender<Chunk<Op::Tally>>,
        run: &mut Books<'_, '_, Op>,
    ) -> Result<bool, PipelineError> {
        // Chunks that finished before an earlier one, by sequence number. At most the pool's
        // size.
        let mut waiting = std::collections::BTreeMap::<u64, Chunk<Op::Tally>>::new();
        // The line that crosses from one piece of a source into the next.
        let mut straddle = Straddle::new(self.max_line_bytes);
        let mut next = 0u64;
        for mut chunk in done {
            if cancelled(self.cancel) {
                return Err(PipelineError::Cancelled);
            }
            if let Some(message) = chunk.panic.take() {
                return Err(self.panicked(&chunk, message));
            }
            waiting.insert(chunk.seq, chunk);
            while let Some(mut chunk) = waiting.remove(&next) {
                next += 1;
                if run
                    .first_line_of
                    .is_some_and(|source| source < chunk.source)
                {
                    run.first_line_of = Some(chunk.source);
                }
                if run
                    .summarising
                    .as_ref()
                    .is_some_and(|s| s.source < chunk.source)
                {
                    self.end_summarised(op, run)?;
                }
                let piece = chunk.piece.as_ref().filter(|_| chunk.failure.is_none());
                if let Some(piece) = piece {
                    // The line that crossed into this piece ends at its first LF: it comes
                    // before the piece's own lines.
                    if piece.place.first {
                        straddle.begin(0, true);
                    }
                    let (len, head_end, tail_start) = (piece.len, piece.head_end, piece.tail_start);
                    if head_end == 0 {
                        straddle.push(chunk.piece_bytes(0..len));
                    } else {
                        // A source's first line, whole in its first piece, was the worker's.
                        if !piece.place.first {
                            straddle.push(chunk.piece_bytes(0..head_end - 1));
                            let line = straddle.finish(true, chunk.base.lines + 1);
                            let line = line.expect("a terminated line is a line");
                            if self.write_joined(op, total, run, chunk.source, line)? {
                                return Ok(true);
                            }
                        }
                        straddle.begin(chunk.base.bytes + tail_start as u64, false);
                        straddle.push(chunk.piece_bytes(tail_start..len));
                    }
                }
                if run.first_line_of == Some(chunk.source) {
                    if let Some(first) = chunk.first_content() {
                        self.sniff_first(op, run, chunk.source, first)?;
                    }
                }
                // The chunk holds the line that reaches --max-errors: its lines are worked on
                // again, here, up to that line (the worker could not know where the cut was).
                let room = self.reject_room(&run.books);
                let mut redo = room.is_some_and(|room| chunk.out.summary.rejected >= room);
                if redo {
                    chunk.restart();
                }
                loop {
                    if redo {
                        let state = run.state.get_or_insert_with(|| op.worker());
                        let source = &self.names[chunk.source];
                        let room = self.reject_room(&run.books);
                        let processed =
                            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                chunk.process(op, state, source, self.output_budget, room)
                            }));
                        if let Err(panic) = processed {
                            return Err(self.panicked(&chunk, panic_message(&*panic)));
                        }
                    }
                    op.settle(total, &mut chunk.out);
                    self.write_out(op, total, run, chunk.source, &mut chunk.out)?;
                    if chunk.out.stop || !chunk.unfinished() {
                        break;
                    }
                    // Rare (outputs many times their input): the rest of the chunk, here, in
                    // parts of the budget, each written before the next is worked on.
                    chunk.clear_output();
                    redo = true;
                }
                // Handed off because its source went quiet: what the outputs hold goes out now,
                // this chunk's and any before it.
                if chunk.flush {
                    flush_written(run.outputs, &mut run.unflushed)
                        .map_err(PipelineError::Output)?;
                }
                run.books.bytes_in += chunk.bytes_in;
                if let Some(progress) = self.progress {
                    if chunk.piece.is_some() {
                        progress.add_bytes(chunk.bytes_in);
                    }
                    progress.add_done_bytes(chunk.bytes_in);
                }
                if let Some(mut failure) = chunk.failure.take() {
                    if let Some(piece) = &chunk.piece {
                        // A piece that failed was not framed: the lines before it were read,
                        // and the line in progress began where the single reader would say.
                        let offset = if piece.place.first {
                            0
                        } else {
                            straddle.offset()
                        };
                        (failure.line, failure.offset) = (chunk.base.lines, offset);
                    }
                    return Err(PipelineError::Input {
                        source_name: self.names[chunk.source].clone(),
                        what: failure.what,
                        line: failure.line,
                        offset: failure.offset,
                        error: failure.error,
                    });
                }
                if chunk.out.stop {
                    return Ok(true);
                }
                // The end of a source read in pieces ends its last line, if it has no LF.
                if chunk.piece.as_ref().is_some_and(|p| p.place.last) {
                    if let Some(line) = straddle.finish(false, chunk.base.lines + 1) {
                        if self.write_joined(op, total, run, chunk.source, line)? {
                            return Ok(true);
                        }
                    }
                }
                // The reader may be gone (it sent its last chunk): the chunk is simply dropped.
                let _ = free.send(chunk);
            }
        }
        // A reader that stopped for a cancel ended the chunks early: no complete books.
        if cancelled(self.cancel) {
            return Err(PipelineError::Cancelled);
        }
        debug_assert!(waiting.is_empty(), "every chunk came back");
        Ok(false)
    }

    /// How many more lines may be rejected before the run stops (`max_rejected`).
    fn reject_room(&self, books: &Summary) -> Option<u64> {
        self.max_rejected
            .map(|max| max.saturating_sub(books.rejected))
    }

    /// Notes what the first non-blank line of `source` shows of the input's kind.
    fn sniff_first<Op: LineOperation>(
        &self,
        op: &Op,
        run: &mut Books<'_, '_, Op>,
        source: usize,
        first: &[u8],
    ) -> Result<(), PipelineError> {
        run.first_line_of = Some(source + 1);
        let Some(kind) = InputKind::sniff(first) else {
            return Ok(());
        };
        let name = &self.names[source];
        run.books.not_json_lines.push((name.clone(), kind));
        if let Some(hook) = self.on_not_json_lines {
            // What came before is out first, so the hint follows it wherever both go.
            flush_written(run.outputs, &mut run.unflushed).map_err(PipelineError::Output)?;
            (hook.0)(name, kind);
        }
        if op.diagnostics_for_people().is_some() {
            run.summarising = Some(Summarised {
                source,
                kind,
                books: Summary::default(),
            });
        }
        Ok(())
    }

    /// Writes the rows that stand for the diagnostics of the source being summarised, if
    /// any: a row per code, errors first, each with the number of lines that broke it.
    fn end_summarised<Op: LineOperation>(
        &self,
        op: &Op,
        run: &mut Books<'_, '_, Op>,
    ) -> Result<(), PipelineError> {
        let (Some(summarised), Some(index)) = (run.summarising.take(), op.diagnostics_for_people())
        else {
            return Ok(());
        };
        let Some(sink) = run
            .outputs
            .sinks
            .get_mut(index)
            .and_then(|s| s.as_deref_mut())
        else {
            return Ok(());
        };
        let name = &self.names[summarised.source];
        let looks_like = summarised.kind.looks_like();
        let mut rows = Vec::new();
        for (counts, what) in [
            (&summarised.books.by_code, "rejected"),
            (&summarised.books.warnings_by_code, "with this warning"),
        ] {
            for (code, n) in counts {
                let lines = if *n == 1 { "line" } else { "lines" };
                let _ = writeln!(
                    rows,
                    "{name}: {code}: {n} {lines} {what}, not listed one by one: the input looks \
                     like {looks_like}, not JSON Lines"
                );
            }
        }
        if !rows.is_empty() {
            sink.write_all(&rows).map_err(PipelineError::Output)?;
            run.unflushed[index] = true;
        }
        Ok(())
    }

    /// Writes what a chunk's lines (or a joined line) put out, in input order, and adds up
    /// their books and tally.
    fn write_out<Op: LineOperation>(
        &self,
        op: &Op,
        total: &mut Op::Total,
        run: &mut Books<'_, '_, Op>,
        source: usize,
        out: &mut ChunkOutput<Op::Tally>,
    ) -> Result<(), PipelineError> {
        if let Some(summarised) = run.summarising.as_mut().filter(|s| s.source == source) {
            if let Some(index) = op.diagnostics_for_people() {
                out.buffer(index).clear();
            }
            summarised.books.merge(&out.summary);
        }
        write_chunk(out, run.outputs, self.flush_each, &mut run.unflushed)
            .map_err(PipelineError::Output)?;
        run.books.merge(&out.summary);
        op.merge(total, &mut out.tally);
        if let Some(progress) = self.progress {
            progress.add_lines(out.summary.lines);
        }
        Ok(())
    }

    /// Works on a line the writer joined across two pieces, and writes its output: true when
    /// the operation asked to stop.
    fn write_joined<Op: LineOperation>(
        &self,
        op: &Op,
        total: &mut Op::Total,
        run: &mut Books<'_, '_, Op>,
        source: usize,
        line: Line<'_>,
    ) -> Result<bool, PipelineError> {
        if run.first_line_of == Some(source) && line.kind != LineKind::Blank {
            self.sniff_first(op, run, source, line.content)?;
        }
        let mut out = std::mem::replace(&mut run.joined, ChunkOutput::new(0));
        out.clear();
        let state = run.state.get_or_insert_with(|| op.worker());
        let name = &self.names[source];
        let processed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            chunk::apply(op, state, SourceLine { source: name, line }, &mut out);
        }));
        if let Err(panic) = processed {
            return Err(PipelineError::Panicked {
                place: format!("{name}: line {}", line.number),
                message: panic_message(&*panic),
            });
        }
        op.settle(total, &mut out);
        self.write_out(op, total, run, source, &mut out)?;
        let stop = out.stop || self.reject_room(&run.books) == Some(0);
        run.joined = out;
        Ok(stop)
    }

    #[cold]
    fn panicked<T>(&self, chunk: &Chunk<T>, message: String) -> PipelineError {
        PipelineError::Panicked {
            place: format!(
                "{}: the lines from line {}",
                self.names[chunk.source],
                chunk.first_line()
            ),
            message,
        }
    }
}

/// Flushes the outputs written to since their last flush: their buffered bytes written, and an
/// encoder's block ended (a zstd or gzip output is then readable up to here). An output with
/// nothing new is left alone, so that a quiet run adds no empty blocks to it.
fn flush_written(outputs: &mut Outputs<'_>, unflushed: &mut [bool]) -> io::Result<()> {
    for (sink, unflushed) in outputs.sinks.iter_mut().zip(unflushed) {
        if let Some(sink) = sink.as_deref_mut().filter(|_| *unflushed) {
            sink.flush()?;
        }
        *unflushed = false;
    }
    Ok(())
}

fn write_chunk<T>(
    out: &ChunkOutput<T>,
    outputs: &mut Outputs<'_>,
    flush_each: bool,
    unflushed: &mut [bool],
) -> io::Result<()> {
    for (index, (sink, unflushed)) in outputs.sinks.iter_mut().zip(unflushed).enumerate() {
        let bytes = out.bytes(index);
        if let Some(sink) = sink.as_deref_mut() {
            if !bytes.is_empty() {
                sink.write_all(bytes)?;
                if flush_each {
                    sink.flush()?;
                } else {
                    *unflushed = true;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_groups_in_flight_stay_near_a_gibibyte_at_any_jobs() {
        let group = |jobs: usize| {
            let options = PipelineOptions {
                jobs,
                ..PipelineOptions::default()
            };
            piece_sizes(&options).group
        };
        assert_eq!(
            (group(1), group(2), group(22)),
            (32 << 20, 32 << 20, 32 << 20)
        );
        assert!(group(23) < 32 << 20);
        assert_eq!((group(256), group(100_000)), (4 << 20, 4 << 20));
        for jobs in 1..=MAX_JOBS {
            let in_flight = pool_size(jobs) * group(jobs);
            assert!(in_flight <= (1 << 30) + (64 << 20), "-j{jobs}: {in_flight}");
        }
    }

    /// Emits every line, and rejects those that hold an `x`.
    struct RejectX;

    impl LineOperation for RejectX {
        type Worker = ();
        type Tally = ();
        type Total = ();
        fn worker(&self) {}
        fn total(&self) {}
        fn apply(&self, _: &mut (), line: SourceLine<'_>, out: &mut ChunkOutput) -> Action {
            out.buffer(0).extend_from_slice(line.line.content);
            out.buffer(0).push(b'\n');
            match memchr::memchr(b'x', line.line.content) {
                Some(_) => Action::Reject,
                None => Action::Emit,
            }
        }
    }

    /// `max_rejected` cuts the run right after the line that reaches it, in input order,
    /// whatever the chunk size, the workers, and whether the source is read in pieces by the
    /// workers (a file) or framed by the reader: the output and the books are those of the
    /// lines up to it.
    #[test]
    fn max_rejected_stops_right_after_the_line_that_reaches_it() {
        let mut input = Vec::new();
        let mut rejects_at = Vec::new(); // the line numbers of the rejected lines
        for n in 1..=3000u64 {
            let line = match n % 7 {
                0 => format!("x{n}"),
                3 => String::new(),
                _ if n % 11 == 0 => format!("{n}x{}", "y".repeat((n % 300) as usize)),
                _ => format!("{n}{}", "z".repeat((n % 97) as usize)),
            };
            if line.contains('x') {
                rejects_at.push(n);
            }
            input.extend_from_slice(line.as_bytes());
            input.push(b'\n');
        }
        let dir = std::env::temp_dir().join(format!("rdq-max-rejected-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("in.jsonl");
        std::fs::write(&path, &input).unwrap();
        let lines_up_to = |n: u64| -> Vec<u8> {
            let mut out = Vec::new();
            for line in input.split(|&b| b == b'\n').take(n as usize) {
                if !line.is_empty() {
                    out.extend_from_slice(line);
                    out.push(b'\n');
                }
            }
            out
        };
        for max in [1, 2, 5, 100, rejects_at.len() as u64, 10_000] {
            let last = match rejects_at.get(max as usize - 1) {
                Some(&n) => n,
                None => 3000,
            };
            for (jobs, chunk_bytes) in [(1, 1), (2, 7), (3, 4096), (2, 1 << 20)] {
                for file in [false, true] {
                    let source = match file {
                        true => Source::Path(path.clone()),
                        false => Source::Reader {
                            name: "mem".into(),
                            reader: Box::new(io::Cursor::new(input.clone())),
                        },
                    };
                    let options = PipelineOptions {
                        jobs,
                        chunk_bytes,
                        max_rejected: Some(max),
                        ..PipelineOptions::default()
                    };
                    let mut out = Vec::new();
                    let outputs = Outputs::none().to(0, &mut out);
                    let (books, ()) = run(vec![source], &RejectX, options, outputs, None).unwrap();
                    let at = format!("max {max}, -j{jobs}, chunks of {chunk_bytes}, file {file}");
                    assert_eq!(books.lines, last, "{at}");
                    assert_eq!(books.rejected, max.min(rejects_at.len() as u64), "{at}");
                    assert!(books.balances(), "{at}");
                    assert!(out == lines_up_to(last), "{at}");
                }
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A cancel ends a run over an input without end: lines that keep coming, and one line
    /// that never ends (`/dev/zero`), where no chunk boundary comes. Never books that look
    /// complete.
    #[test]
    fn a_cancel_ends_a_run_whose_input_never_ends() {
        let lines = io::repeat(b'\n');
        let zeros = io::repeat(0);
        for (name, reader) in [
            ("lines", Box::new(lines) as Box<dyn Read + Send>),
            ("zeros", Box::new(zeros)),
        ] {
            let cancel = Arc::new(AtomicBool::new(false));
            let options = PipelineOptions {
                jobs: 2,
                cancel: Some(Arc::clone(&cancel)),
                ..PipelineOptions::default()
            };
            let setter = {
                let cancel = Arc::clone(&cancel);
                thread::spawn(move || {
                    thread::sleep(Duration::from_millis(100));
                    cancel.store(true, Ordering::Relaxed);
                })
            };
            let sources = vec![Source::Reader {
                name: name.into(),
                reader,
            }];
            let started = std::time::Instant::now();
            let result = run(sources, &RejectX, options, Outputs::none(), None);
            setter.join().unwrap();
            assert!(
                matches!(result, Err(PipelineError::Cancelled)),
                "{name}: {result:?}"
            );
            assert!(started.elapsed() < Duration::from_secs(10), "{name}");
        }
    }
}
