//! What every command that reads envelopes does around its operation. A [`Run`] is one value
//! that says what the run is: the operation, the inputs and outputs its arguments name, a
//! second data output, text for people, a cap on the primary output, what settles the books
//! and what is written once the run is over. [`Run::execute`] checks the streams, opens the
//! outputs, runs the pipeline with a progress bar, writes the summary, commits the outputs and
//! says how it went.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;

use rdq_envelope::io::{check_aliases, Named, OutputCompression, OutputFile, Stream};
use rdq_envelope::ops::{output, LimitedLines};
use rdq_envelope::pipeline::Summary;
use rdq_envelope::pipeline::{self, LineOperation, Outputs, PipelineOptions, Progress, Source};

use super::args::Written;
use super::closing::what_was_written;
use super::inputs::{input_streams, say_if_reading_a_terminal, total_size};
use super::progress::ProgressBar;
use super::{CompressArg, InputArgs, Outcome, OutputArgs};

/// Opens an output file other than the primary: compressed when its name ends in `.zst`/`.gz`
/// (zstd in frames of at most `zstd_frame_bytes` of input).
pub fn create(path: &Path, jobs: usize, zstd_frame_bytes: u32) -> anyhow::Result<OutputFile> {
    let compression = OutputCompression::from_name(path, compress_threads(jobs))
        .with_zstd_frame(zstd_frame_bytes);
    OutputFile::create_compressed(path, compression)
        .with_context(|| format!("{}: cannot create output", path.display()))
}

fn compress_threads(jobs: usize) -> u32 {
    u32::try_from(jobs).unwrap_or(u32::MAX)
}

/// A command's second data output: its flag (for messages) and its path.
pub type Secondary<'a> = Option<(&'static str, &'a Path)>;

/// What settles a run's books once it is over, from the operation's total.
type Settle<'a, T> = Box<dyn FnOnce(&mut Summary, &T) -> Notes + 'a>;

/// What writes to the primary output once the run is over, from its books and the total.
type Epilogue<'a, T> = Box<dyn FnOnce(&Summary, T, &mut dyn Write) -> anyhow::Result<()> + 'a>;

/// One run of a command over its inputs, described whole before anything is opened, then
/// [`execute`](Run::execute)d once. [`Run::new`] is the plain run (the inputs `input.files`
/// names, the primary output, `--rejects` and `--summary`); each method adds what one command
/// needs beside that.
pub struct Run<'a, Op: LineOperation> {
    op: &'a Op,
    input: &'a InputArgs,
    output: &'a OutputArgs,
    /// The inputs as read from elsewhere (`dedupe`'s spilled streams), else `input.files`.
    sources: Option<Vec<Source>>,
    /// The command's second data output (`--valid-out`, `--warnings-out`, `--dropped`).
    secondary: Secondary<'a>,
    /// The operation's text for people goes to standard error, in input order (and no
    /// progress bar is drawn over it unless forced).
    messages: bool,
    /// The most lines the primary output takes; the rest is dropped (`filter --limit`).
    primary_lines: Option<u64>,
    /// The rejected lines counted by code follow the closing line on a terminal, unasked.
    codes_on_a_terminal: bool,
    settle: Settle<'a, Op::Total>,
    epilogue: Epilogue<'a, Op::Total>,
}

impl<'a, Op: LineOperation> Run<'a, Op> {
    /// `op` over the inputs of `input`, into the outputs of `output`, and nothing more.
    pub fn new(op: &'a Op, input: &'a InputArgs, output: &'a OutputArgs) -> Self {
        Run {
            op,
            input,
            output,
            sources: None,
            secondary: None,
            messages: false,
            primary_lines: None,
            codes_on_a_terminal: false,
            settle: Box::new(|_, _| Notes::default()),
            epilogue: Box::new(|_, _, _| Ok(())),
        }
    }

    /// With the command's second data output, its flag (for messages) and its path.
    pub fn secondary(mut self, secondary: Secondary<'a>) -> Self {
        self.secondary = secondary;
        self
    }

    /// With the rejected lines counted by code after the closing line when standard error is
    /// a terminal and some were rejected (`validate`), as `--stats` asks for them anywhere.
    pub fn codes_on_a_terminal(mut self) -> Self {
        self.codes_on_a_terminal = true;
        self
    }

    /// With the operation's text for people on standard error, when `messages`.
    pub fn messages(mut self, messages: bool) -> Self {
        self.messages = messages;
        self
    }

    /// Reading `sources` (the inputs `input.files` names, read from elsewhere: `dedupe`'s
    /// spilled streams) rather than opening `input.files`.
    pub fn reading(mut self, sources: Vec<Source>) -> Self {
        self.sources = Some(sources);
        self
    }

    /// With at most `lines` lines of the primary output kept, and `settle` to settle the books
    /// from the operation's total once the run is over (`filter`'s `--limit` and `--where`).
    pub fn settled(
        mut self,
        lines: Option<u64>,
        settle: impl FnOnce(&mut Summary, &Op::Total) -> Notes + 'a,
    ) -> Self {
        self.primary_lines = lines;
        self.settle = Box::new(settle);
        self
    }

    /// Then `epilogue` writes what the run added up (its books and the operation's total) to
    /// the primary output (the count of `filter --count`, the report of `stats`), before any
    /// output is committed.
    pub fn then(
        mut self,
        epilogue: impl FnOnce(&Summary, Op::Total, &mut dyn Write) -> anyhow::Result<()> + 'a,
    ) -> Self {
        self.epilogue = Box::new(epilogue);
        self
    }

    /// Runs it: checks the streams, opens every output, runs the pipeline, settles and writes
    /// the books, then commits every output with the closing line, all or nothing.
    pub fn execute(self) -> anyhow::Result<Outcome> {
        let started = Instant::now();
        let (input, output, secondary) = (self.input, self.output, self.secondary);
        check_usage(input, output, secondary)?;
        let mut options = input.pipeline_options()?;
        let jobs = options.jobs;
        // Open every output before reading: an unwritable path fails before any work is done.
        let frame_bytes = output.zstd_frame_bytes();
        let primary_compression = match (output.compress, &output.output) {
            (Some(kind), _) => compression(kind, jobs),
            (None, None) => OutputCompression::None,
            (None, Some(path)) => OutputCompression::from_name(path, compress_threads(jobs)),
        }
        .with_zstd_frame(frame_bytes);
        let primary = match &output.output {
            Some(path) => OutputFile::create_compressed(path, primary_compression)
                .with_context(|| format!("{}: cannot create output", path.display()))?,
            None => OutputFile::stdout_compressed(primary_compression)?,
        };
        let open = |path: Option<&Path>| path.map(|p| create(p, jobs, frame_bytes)).transpose();
        let mut files = RunFiles {
            primary: Some(primary),
            secondary: open(secondary.map(|(_, p)| p))?,
            rejects: open(output.rejects.as_deref())?,
            summary: open(output.summary.as_deref())?,
            messages: self.messages.then(OutputFile::stderr),
        };
        let sources = match self.sources {
            Some(sources) => sources,
            // Read from elsewhere already (standard input spilled): nothing to say about a
            // terminal.
            None => {
                say_if_reading_a_terminal(&input.files, output.quiet);
                super::inputs::sources(&input.files)
            }
        };
        let progress = Arc::new(Progress::default());
        let bar = (!output.quiet && (output.progress || !self.messages))
            .then(|| {
                ProgressBar::start(
                    Arc::clone(&progress),
                    total_size(&input.files),
                    output.progress,
                )
            })
            .flatten();
        options.line_buffered = output.line_buffered;
        if !output.quiet {
            options.on_not_json_lines = Some(super::input_hint::hook());
        }
        let pipeline = Pipeline {
            skipped: &input.skipped,
            options,
            progress: Some(progress),
            started,
            primary_lines: self.primary_lines,
        };
        let (op, settle) = (self.op, self.settle);
        #[cfg(debug_assertions)]
        let result = match std::env::var_os("RDQ_ENVELOPE_TEST_PANIC_ON") {
            // Test builds only: a line holding these bytes panics in its worker, so that the
            // tests can prove a panic ends the run with status 2 and every output as it was.
            Some(marker) => {
                let op = super::panic_hook::PanicOn {
                    op,
                    marker: marker.into_encoded_bytes(),
                };
                pipeline.run(&op, sources, &mut files, settle)
            }
            None => pipeline.run(op, sources, &mut files, settle),
        };
        #[cfg(not(debug_assertions))]
        let result = pipeline.run(op, sources, &mut files, settle);
        if let Some(bar) = bar {
            bar.finish();
        }
        let (summary, notes, total) = result?;
        if let Some(primary) = files.primary.as_mut() {
            (self.epilogue)(&summary, total, primary)?;
        }
        // The closing line goes out when every output is complete and none is renamed yet: a
        // standard error that cannot take it fails the run with every path as it was.
        let codes = output.stats
            || (self.codes_on_a_terminal
                && !output.quiet
                && summary.rejected > 0
                && std::io::IsTerminal::is_terminal(&std::io::stderr()));
        files.commit_then(|| {
            if !output.quiet {
                let wrote = what_was_written(&summary, output, secondary);
                let (counts, rate) = (summary.human_counts(), summary.human_rate());
                super::say(format_args!("{counts}{}{wrote}{rate}", notes.human))?;
            }
            match codes {
                true => super::say_block(&summary.human_codes()),
                false => Ok(()),
            }
        })?;
        Ok(outcome(&summary))
    }
}

/// How a run's pipeline runs, once its outputs are open.
struct Pipeline<'a> {
    /// What the folders among the inputs held that was left out.
    skipped: &'a [rdq_envelope::io::Skipped],
    /// Workers and limits.
    options: PipelineOptions,
    /// The counters a progress bar reads.
    progress: Option<Arc<Progress>>,
    /// When the run started, for `seconds`.
    started: Instant,
    /// The most lines the primary output takes.
    primary_lines: Option<u64>,
}

impl Pipeline<'_> {
    /// Runs `op` over `sources` into `files`, settles the books and writes them (with `seconds`
    /// and the notes) to the summary file, if any; returns them with the operation's total.
    /// Nothing is committed: the caller decides.
    fn run<Op: LineOperation>(
        self,
        op: &Op,
        sources: Vec<Source>,
        files: &mut RunFiles,
        settle: Settle<'_, Op::Total>,
    ) -> anyhow::Result<(Summary, Notes, Op::Total)> {
        let mut primary = files
            .primary
            .as_mut()
            .map(|o| LimitedLines::new(o, self.primary_lines));
        let mut outputs = Outputs::none();
        outputs.set(output::PRIMARY, primary.as_mut().map(|o| o as _));
        outputs.set(output::SECONDARY, files.secondary.as_mut().map(|o| o as _));
        outputs.set(output::REJECTS, files.rejects.as_mut().map(|o| o as _));
        outputs.set(output::MESSAGES, files.messages.as_mut().map(|o| o as _));
        let max_rejected = self.options.max_rejected;
        let (mut summary, total) = pipeline::run(sources, op, self.options, outputs, self.progress)
            .map_err(with_flag_hint)?;
        summary.seconds = self.started.elapsed().as_secs_f64();
        let mut notes = settle(&mut summary, &total);
        summary.skipped = self.skipped.to_vec();
        if let Some(human) = rdq_envelope::io::skipped_note(self.skipped) {
            notes.human.push_str(&human);
        }
        if let Some(max) = max_rejected.filter(|&max| summary.rejected >= max) {
            notes.add(
                "max_errors_reached",
                serde_json::Value::Bool(true),
                &format!(
                    "; stopped after {max} rejected line{} (--max-errors {max}): the input after \
                     it was not read",
                    if max == 1 { "" } else { "s" }
                ),
            );
        }
        debug_assert!(summary.balances());
        if let Some(out) = files.summary.as_mut() {
            let mut line = Vec::new();
            summary.write_json(&mut line)?;
            // The notes' members after the books', in the order the books are written.
            if let Some(serde_json::Value::Object(members)) = &notes.json {
                if let Some(end) = line.iter().rposition(|&b| b == b'}') {
                    line.truncate(end);
                    for (key, value) in members {
                        line.push(b',');
                        serde_json::to_writer(&mut line, key)?;
                        line.push(b':');
                        serde_json::to_writer(&mut line, value)?;
                    }
                    line.extend_from_slice(b"}\n");
                }
            }
            out.write_all(&line)?;
        }
        Ok((summary, notes, total))
    }
}

/// A pipeline's error, with the line that says which flag an input that names no file was
/// probably meant for (`flag_hint.rs`).
fn with_flag_hint(error: pipeline::PipelineError) -> anyhow::Error {
    let hint = match &error {
        pipeline::PipelineError::Input {
            source_name,
            what: "cannot open",
            error: io,
            ..
        } if io.kind() == std::io::ErrorKind::NotFound => {
            super::flag_hint::for_missing_input(&super::subcommand(), source_name)
        }
        _ => None,
    };
    let error = anyhow::Error::new(error);
    match hint {
        // The line after the error's own, as `main` writes it (`rdq-envelope: ...`).
        Some(hint) => anyhow::anyhow!("{error:#}\nrdq-envelope: {hint}"),
        None => error,
    }
}

/// What a command adds to the books once its run is over (`filter`'s `--limit` and
/// `--where`): members for the summary file, and words for the closing line.
#[derive(Debug, Default)]
pub struct Notes {
    /// A JSON object whose members follow the books' in `--summary`.
    pub json: Option<serde_json::Value>,
    /// Appended to the closing line (`, ...`).
    pub human: String,
}

impl Notes {
    /// Adds the member `key` to the summary file's and `human` to the closing line's.
    pub fn add(&mut self, key: &str, value: serde_json::Value, human: &str) {
        let json = self
            .json
            .get_or_insert_with(|| serde_json::Value::Object(Default::default()));
        if let serde_json::Value::Object(members) = json {
            members.insert(key.to_owned(), value);
        }
        self.human.push_str(human);
    }
}

/// The checks made before any input is read or output created: flags that do nothing
/// together, and outputs that are an input, another output or standard error.
pub fn check_usage(
    input: &InputArgs,
    output: &OutputArgs,
    secondary: Secondary<'_>,
) -> anyhow::Result<()> {
    input.check()?;
    output.check()?;
    use super::format_name::refuse_other_than_json_lines as json_lines_only;
    if matches!(
        output.written,
        Written::Lines | Written::Envelopes | Written::Tasks
    ) {
        json_lines_only("-o", output.output.as_deref())?;
    }
    // The summary is one JSON object; the other outputs are JSON Lines.
    if let Some((flag, path)) = secondary {
        json_lines_only(flag, Some(path))?;
    }
    json_lines_only("--rejects", output.rejects.as_deref())?;
    json_lines_only("--summary", output.summary.as_deref())?;
    let mut outputs = vec![match &output.output {
        Some(path) => Named::path("-o", path, true),
        None => Named::new("the primary output", Stream::Stdout),
    }];
    let named = [
        secondary,
        output.rejects.as_deref().map(|p| ("--rejects", p)),
        output.summary.as_deref().map(|p| ("--summary", p)),
    ];
    outputs.extend(
        named
            .into_iter()
            .flatten()
            .map(|(f, p)| Named::path(f, p, true)),
    );
    outputs.push(Named::new("the run's messages", Stream::Stderr));
    check_streams(&input_streams(&input.files), &outputs)
}

/// The checks of a run's streams before any is opened: no output is an input or another
/// output, every URL is well formed and no output an `http(s)://` one, and every `s3://` input
/// is there to read.
pub fn check_streams(inputs: &[Named], outputs: &[Named]) -> anyhow::Result<()> {
    check_aliases(inputs, outputs)?;
    rdq_envelope::io::check_urls(inputs, outputs)?;
    Ok(())
}

/// `--compress KIND` for an output written on `jobs` threads (zstd in frames of the default
/// size: [`OutputCompression::with_zstd_frame`] for `--zstd-frame`).
pub fn compression(kind: CompressArg, jobs: usize) -> OutputCompression {
    match kind {
        CompressArg::Zstd => OutputCompression::Zstd {
            threads: compress_threads(jobs),
            frame_bytes: rdq_envelope::io::ZSTD_FRAME_BYTES_DEFAULT,
        },
        CompressArg::Gzip => OutputCompression::Gzip,
        CompressArg::None => OutputCompression::None,
    }
}

/// A command's output files, opened before any input is read. Any may be absent.
pub struct RunFiles {
    /// Diagnostics for `validate`, the lines written for the others.
    pub primary: Option<OutputFile>,
    /// `--valid-out`, `--warnings-out`.
    pub secondary: Option<OutputFile>,
    /// `--rejects`.
    pub rejects: Option<OutputFile>,
    /// `--summary`.
    pub summary: Option<OutputFile>,
    /// Standard error, when the operation's text for people goes there.
    pub messages: Option<OutputFile>,
}

impl RunFiles {
    /// Commits every output, all or nothing (see [`rdq_envelope::io::commit_all`]), with
    /// `last_word` once every output is complete and before any is renamed into place.
    pub fn commit_then(
        self,
        last_word: impl FnOnce() -> std::io::Result<()>,
    ) -> anyhow::Result<()> {
        // The primary output first: it is the one most likely to be a device that fails.
        let all = [
            self.primary,
            self.secondary,
            self.rejects,
            self.summary,
            self.messages,
        ];
        rdq_envelope::io::commit_all_then(all.into_iter().flatten(), last_word)?;
        Ok(())
    }
}

/// The exit status a completed run's books call for.
pub fn outcome(summary: &Summary) -> Outcome {
    if summary.rejected > 0 {
        Outcome::Rejected
    } else {
        Outcome::Clean
    }
}
