//! The parallel pipeline gives the same bytes as a plain sequential loop, whatever the number
//! of workers and wherever the chunk boundaries fall: over `gen` data with defects, CRLF, blank
//! lines, over-long lines and several sources; and it stops on a failing output.

use std::io::{self, Cursor, Write};

use rdq_envelope::framing::{LineKind, LineReader};
use rdq_envelope::generate::{GenOptions, Generator};
use rdq_envelope::ops::{output, ReportFormat, ValidateOp};
use rdq_envelope::pipeline::{self, Outputs, PipelineError, PipelineOptions, Source, Summary};
use rdq_envelope::report::{self, Position};
use rdq_envelope::{Diagnostic, EnvelopeRules, JsonParser, RuleOptions, Verdict};

/// A cap small enough that some generated lines are over it.
pub(crate) const CAP: usize = 6_000;

pub(crate) fn op(format: ReportFormat) -> ValidateOp {
    let mut op = ValidateOp::new(EnvelopeRules::new(RuleOptions::default()).unwrap());
    op.format = format;
    op.report_warnings = true;
    op.keep_valid = true;
    op.write_rejects = true;
    op.max_line_bytes = CAP;
    op
}

/// `gen` lines with defects, and the awkward framing the reader must keep straight: CRLF
/// terminators, blank and white-space lines, a BOM, and no final LF.
pub(crate) fn awkward_stream(seed: u64, count: usize) -> Vec<u8> {
    let mut generator = Generator::new({
        let mut o = GenOptions::default();
        o.seed = seed;
        o.version = 1 + (seed % 2) as u32;
        o.invalid_rate = 0.2;
        o
    });
    let mut out = b"\xEF\xBB\xBF".to_vec();
    for i in 0..count {
        generator.next_line(&mut out);
        out.extend_from_slice(match i % 7 {
            0 => b"\r\n",
            3 => b"\n\n",
            5 => b"\n \t\r\n",
            _ => b"\n",
        });
    }
    out.truncate(out.len() - 1);
    out
}

/// What the three outputs and the books must be: one line at a time, no threads.
pub(crate) fn sequential(sources: &[(&str, &[u8])], op: &ValidateOp) -> ([Vec<u8>; 3], Summary) {
    let mut parser = JsonParser::new();
    let mut verdict = Verdict::default();
    let (mut primary, mut valid, mut rejects) = (Vec::new(), Vec::new(), Vec::new());
    let mut books = Summary::default();
    for &(name, bytes) in sources {
        let (_, stream) = rdq_envelope::io::decompressed(bytes).unwrap();
        let mut reader = LineReader::with_max_line_bytes(stream, CAP);
        while let Some(line) = reader.next_line().unwrap() {
            books.lines += 1;
            let at = Position {
                source: name,
                line: line.number,
                offset: line.offset,
            };
            let doc = match line.kind {
                LineKind::Blank => {
                    books.blank += 1;
                    continue;
                }
                LineKind::TooLong => {
                    verdict.clear();
                    verdict
                        .errors
                        .push(Diagnostic::line_too_long(line.len, CAP));
                    None
                }
                LineKind::Content => op.rules.check_line(&mut parser, line.content, &mut verdict),
            };
            if verdict.is_valid() {
                books.valid += 1;
                books.emitted += 1;
                books.tally_warnings(&verdict.warnings);
                valid.extend_from_slice(line.content);
                valid.push(b'\n');
            } else {
                books.rejected += 1;
                books.tally_errors(&verdict.errors);
                report::write_reject(&mut rejects, at, &line, &verdict.errors).unwrap();
            }
            if !verdict.is_valid() || !verdict.warnings.is_empty() {
                match op.format {
                    ReportFormat::Human => {
                        report::write_human(&mut primary, at, &verdict, true).unwrap()
                    }
                    ReportFormat::Json => {
                        let id = doc
                            .as_ref()
                            .and_then(|d| d.root().get("id"))
                            .and_then(|v| v.as_str());
                        report::write_json(&mut primary, at, id, &verdict, true).unwrap()
                    }
                }
            }
        }
        books.bytes_in += reader.offset();
    }
    ([primary, valid, rejects], books)
}

pub(crate) fn parallel(
    sources: &[(&str, &[u8])],
    op: &ValidateOp,
    options: PipelineOptions,
) -> ([Vec<u8>; 3], Summary) {
    let (mut primary, mut valid, mut rejects) = (Vec::new(), Vec::new(), Vec::new());
    let sources = sources
        .iter()
        .map(|&(name, bytes)| Source::Reader {
            name: name.to_owned(),
            reader: Box::new(Cursor::new(bytes.to_vec())),
        })
        .collect();
    let outputs = Outputs::none()
        .to(output::PRIMARY, &mut primary)
        .to(output::SECONDARY, &mut valid)
        .to(output::REJECTS, &mut rejects);
    let (books, ()) = pipeline::run(sources, op, options, outputs, None).unwrap();
    ([primary, valid, rejects], books)
}

#[test]
fn any_jobs_and_any_chunk_size_give_the_sequential_bytes() {
    let plain = awkward_stream(1, 400);
    let compressed = zstd::encode_all(&awkward_stream(2, 300)[..], 1).unwrap();
    let sources: [(&str, &[u8]); 3] = [
        ("a.jsonl", &plain),
        ("b.jsonl.zst", &compressed),
        ("empty", b""),
    ];
    for format in [ReportFormat::Human, ReportFormat::Json] {
        let op = op(format);
        let (want, want_books) = sequential(&sources, &op);
        assert!(
            want_books.rejected > 50 && want_books.blank > 50,
            "{want_books:?}"
        );
        assert!(
            want_books.by_code.contains_key("LINE_TOO_LONG"),
            "{want_books:?}"
        );
        // Chunks of one byte close after every line; 5000 bytes falls inside lines; the
        // default holds the whole input (one unbounded chunk: tests/it/regression.rs).
        for chunk_bytes in [1, 5_000, 64 << 10, pipeline::DEFAULT_CHUNK_BYTES] {
            for jobs in [1, 2, 3, 8] {
                let mut options = PipelineOptions::default();
                options.jobs = jobs;
                options.chunk_bytes = chunk_bytes;
                options.max_line_bytes = CAP;
                options.line_buffered = false;
                let (got, got_books) = parallel(&sources, &op, options);
                let what = format!("{format:?}, {jobs} jobs, {chunk_bytes}-byte chunks");
                for (g, w) in got.iter().zip(&want) {
                    assert!(g == w, "{what}: outputs differ");
                }
                assert_eq!(got_books, want_books, "{what}");
                assert!(got_books.balances());
            }
        }
    }
}

#[test]
fn line_buffered_runs_give_the_same_bytes() {
    let data = awkward_stream(3, 60);
    let op = op(ReportFormat::Json);
    let (want, _) = sequential(&[("x", &data)], &op);
    let mut options = PipelineOptions::default();
    options.jobs = 2;
    options.max_line_bytes = CAP;
    options.line_buffered = true;
    let (got, _) = parallel(&[("x", &data)], &op, options);
    assert_eq!(got, want);
}

/// An output that fails after `budget` bytes, as a closed pipe or a full disk does.
struct Failing {
    budget: usize,
    kind: io::ErrorKind,
}

impl Write for Failing {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.budget < buf.len() {
            return Err(io::Error::from(self.kind));
        }
        self.budget -= buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A source that never ends: the run must stop because the output failed, not because the
/// input ran out.
struct Endless(Vec<u8>, usize);

impl io::Read for Endless {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = buf.len().min(self.0.len() - self.1);
        buf[..n].copy_from_slice(&self.0[self.1..self.1 + n]);
        self.1 = (self.1 + n) % self.0.len();
        Ok(n)
    }
}

#[test]
fn a_failing_output_stops_an_endless_run() {
    let mut line = Vec::new();
    Generator::new(GenOptions::default()).next_line(&mut line);
    line.extend_from_slice(b"\nnot json\n");
    let op = op(ReportFormat::Human);
    for kind in [io::ErrorKind::BrokenPipe, io::ErrorKind::StorageFull] {
        let mut sink = Failing {
            budget: 1 << 20,
            kind,
        };
        let sources = vec![Source::Reader {
            name: "endless".into(),
            reader: Box::new(Endless(line.clone(), 0)),
        }];
        let outputs = Outputs::none().to(output::PRIMARY, &mut sink);
        let mut options = PipelineOptions::default();
        options.jobs = 2;
        match pipeline::run(sources, &op, options, outputs, None) {
            Err(PipelineError::Output(e)) => assert_eq!(e.kind(), kind),
            other => panic!("expected an output error, got {other:?}"),
        }
    }
}

#[test]
fn an_input_error_names_the_source_line_and_offset_after_the_lines_before_it() {
    let mut data = awkward_stream(4, 50);
    data.extend_from_slice(b"\n");
    let whole = zstd::encode_all(&data[..], 1).unwrap();
    let truncated = whole[..whole.len() - 9].to_vec();
    let op = op(ReportFormat::Human);
    let mut valid = Vec::new();
    let sources = vec![
        Source::Reader {
            name: "good".into(),
            reader: Box::new(Cursor::new(data.clone())),
        },
        Source::Reader {
            name: "cut.zst".into(),
            reader: Box::new(Cursor::new(truncated)),
        },
    ];
    let outputs = Outputs::none().to(output::SECONDARY, &mut valid);
    let mut options = PipelineOptions::default();
    options.jobs = 2;
    options.chunk_bytes = 4096;
    options.max_line_bytes = CAP;
    let err = pipeline::run(sources, &op, options, outputs, None).unwrap_err();
    let message = err.to_string();
    assert!(
        message.starts_with("cut.zst: input failed after line "),
        "{message}"
    );
    assert!(message.contains(", at byte offset "), "{message}");
    // Everything of the first source was written before the failure was reported.
    let (want, _) = sequential(&[("good", &data)], &op);
    assert!(valid.starts_with(&want[1]));
}

/// Panics on the line that holds "boom", emits every other line.
struct PanicsOnBoom;

impl pipeline::LineOperation for PanicsOnBoom {
    type Worker = ();
    type Tally = ();
    type Total = ();
    fn worker(&self) {}
    fn total(&self) {}
    fn apply(
        &self,
        _: &mut (),
        line: pipeline::SourceLine<'_>,
        out: &mut pipeline::ChunkOutput,
    ) -> pipeline::Action {
        assert!(
            memchr::memmem::find(line.line.content, b"boom").is_none(),
            "the operation met its bomb"
        );
        out.buffer(0).extend_from_slice(line.line.content);
        out.buffer(0).push(b'\n');
        pipeline::Action::Emit
    }
}

/// A panicking operation was once swallowed (`let _ = worker.join()`): the run returned
/// success with lines missing and balanced books. Now it is an error, for any worker count and
/// wherever the bad line falls, and the run never hangs on the chunk that did not come back.
#[test]
fn a_panicking_operation_ends_the_run_with_an_error() {
    for jobs in [1, 2, 4] {
        for at in [0, 500, 9_999] {
            let mut input = Vec::new();
            for i in 0..10_000 {
                input.extend_from_slice(if i == at { b"boom\n" } else { b"line\n" });
            }
            let sources = vec![Source::Reader {
                name: "bombs".into(),
                reader: Box::new(Cursor::new(input)),
            }];
            let mut options = PipelineOptions::default();
            options.jobs = jobs;
            options.chunk_bytes = 256;
            let mut out = Vec::new();
            let outputs = Outputs::none().to(0, &mut out);
            let result = pipeline::run(sources, &PanicsOnBoom, options, outputs, None);
            match result {
                Err(PipelineError::Panicked { place, message }) => {
                    assert!(place.starts_with("bombs: the lines from line "), "{place}");
                    assert_eq!(message, "the operation met its bomb");
                }
                other => panic!("-j{jobs}, bomb at {at}: {other:?}"),
            }
        }
    }
}

/// The operations' constructors refuse what would make every line wrong, instead of
/// panicking or writing invalid envelopes later.
#[test]
fn op_constructors_refuse_bad_settings() {
    use rdq_envelope::migrate::MigrateError;
    use rdq_envelope::ops::{InvalidTimestamp, MigrateOp, MigrateSource, RedriveOp};
    let rules = || EnvelopeRules::new(RuleOptions::default()).unwrap();
    for to in [0, 3, u32::MAX] {
        let refused = MigrateOp::new(rules(), MigrateSource::Rdq, to).unwrap_err();
        assert!(matches!(refused, MigrateError::UnsupportedVersion(v) if v == to));
    }
    assert_eq!(
        MigrateOp::new(rules(), MigrateSource::Rdq, 1).unwrap().to(),
        1
    );
    for at in [
        "",
        "2024-05-01",
        "2024-05-01T12:00:00Z",
        "2024-02-30T00:00:00.000Z",
    ] {
        let refused = RedriveOp::new(rules(), at).unwrap_err();
        assert_eq!(refused, InvalidTimestamp(at.to_owned()));
    }
    let op = RedriveOp::new(rules(), "2024-05-01T12:00:00.000Z").unwrap();
    assert_eq!(op.at(), "2024-05-01T12:00:00.000Z");
}

/// An output that notes how many bytes it had taken at each flush, and says so on a channel.
struct Flushes {
    bytes: Vec<u8>,
    at: Vec<usize>,
    told: Option<std::sync::mpsc::Sender<usize>>,
}

impl Flushes {
    fn new(told: Option<std::sync::mpsc::Sender<usize>>) -> Self {
        Flushes {
            bytes: Vec::new(),
            at: Vec::new(),
            told,
        }
    }
}

impl Write for Flushes {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.at.push(self.bytes.len());
        if let Some(told) = &self.told {
            let _ = told.send(self.bytes.len());
        }
        Ok(())
    }
}

/// `PanicsOnBoom` (which echoes every other line) over `sources` into a `Flushes`, with
/// another as a second output, which it does not declare and so never writes to.
fn echo(
    sources: Vec<Source>,
    options: PipelineOptions,
    out: &mut Flushes,
    rejects: &mut Flushes,
) -> Summary {
    let outputs = Outputs::none().to(0, out).to(1, rejects);
    pipeline::run(sources, &PanicsOnBoom, options, outputs, None)
        .unwrap()
        .0
}

/// Where each line of `data` ends.
fn line_ends(data: &[u8]) -> Vec<usize> {
    let mut end = 0;
    data.split_inclusive(|&b| b == b'\n')
        .map(|line| {
            end += line.len();
            end
        })
        .collect()
}

/// `--line-buffered` keeps its meaning: a flush after every line, whatever the source. Without
/// it, a source that never waits (an embedder's reader, a regular file) is never flushed by
/// the pipeline: its output goes out in large blocks, as before the linger.
#[test]
fn line_buffered_flushes_after_every_line_and_a_file_is_never_flushed_early() {
    let data: Vec<u8> = (0..20)
        .map(|i| format!("{{\"n\":{i}}}\n"))
        .collect::<String>()
        .into();
    let reader = |data: &[u8]| Source::Reader {
        name: "r".into(),
        reader: Box::new(Cursor::new(data.to_vec())),
    };
    for jobs in [1, 2] {
        let mut options = PipelineOptions::default();
        options.jobs = jobs;
        options.line_buffered = true;
        let mut out = Flushes::new(None);
        echo(
            vec![reader(&data)],
            options,
            &mut out,
            &mut Flushes::new(None),
        );
        assert_eq!(out.bytes, data);
        assert_eq!(
            out.at,
            line_ends(&data),
            "-j{jobs}: a flush after each line"
        );
    }

    let dir = std::env::temp_dir().join(format!("rdq-linger-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("in.jsonl");
    std::fs::write(&file, &data).unwrap();
    for source in [reader(&data), Source::Path(file.clone())] {
        let mut out = Flushes::new(None);
        let mut rejects = Flushes::new(None);
        let books = echo(
            vec![source],
            PipelineOptions::default(),
            &mut out,
            &mut rejects,
        );
        assert_eq!((out.bytes.as_slice(), books.lines), (&data[..], 20));
        assert!(out.at.is_empty(), "no flush: {:?}", out.at);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A FIFO named as a source, written a line at a time: each line is written and flushed while
/// the FIFO is still open (within 2 s; the linger is 50 ms), and only the outputs written to.
/// With `linger: None`, nothing is flushed before the input ends.
#[test]
fn a_quiet_fifo_source_has_each_line_flushed_while_it_is_open() {
    use std::sync::mpsc;
    use std::time::Duration;
    let dir = std::env::temp_dir().join(format!("rdq-linger-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for linger in [true, false] {
        let fifo = dir.join(format!("in-{linger}.fifo"));
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let data: Vec<u8> = (0..3)
            .map(|i| format!("{{\"n\":{i}}}\n"))
            .collect::<String>()
            .into();
        let (told, flushed) = mpsc::channel();
        let producer = {
            let (fifo, data) = (fifo.clone(), data.clone());
            std::thread::spawn(move || -> Result<(), String> {
                let mut writer = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
                let mut most = 0;
                for (line, end) in data.split_inclusive(|&b| b == b'\n').zip(line_ends(&data)) {
                    writer.write_all(line).unwrap();
                    let wait = if linger { 2000 } else { 300 };
                    let deadline = std::time::Instant::now() + Duration::from_millis(wait);
                    while most < end {
                        let left = deadline.saturating_duration_since(std::time::Instant::now());
                        match flushed.recv_timeout(left) {
                            Ok(at) => most = at,
                            Err(_) if !linger => break,
                            Err(_) => {
                                return Err(format!(
                                "the line ending at {end} was not flushed while the input was open"
                            ))
                            }
                        }
                    }
                    if !linger && most > 0 {
                        return Err("flushed without a linger".into());
                    }
                }
                Ok(())
            })
        };
        let mut options = PipelineOptions::default();
        options.jobs = 2;
        options.linger = linger.then_some(pipeline::DEFAULT_LINGER);
        let mut out = Flushes::new(Some(told));
        let mut rejects = Flushes::new(None);
        let source = vec![Source::Path(fifo.clone())];
        let books = echo(source, options, &mut out, &mut rejects);
        producer.join().unwrap().unwrap();
        assert_eq!((out.bytes, books.lines), (data, 3));
        // An output with nothing new is not flushed: no empty blocks in a compressed one.
        assert!(rejects.at.is_empty(), "{:?}", rejects.at);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
