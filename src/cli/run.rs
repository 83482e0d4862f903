//! What every command that reads envelopes does around its operation: open the outputs, run the
//! pipeline with a progress bar, write the summary, commit the outputs, say how it went.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;

use rdq_envelope::io::{check_aliases, Named, OutputCompression, OutputFile, Stream};
use rdq_envelope::ops::{output, LimitedLines};
use rdq_envelope::pipeline::Summary;
use rdq_envelope::pipeline::{self, LineOperation, Outputs, PipelineOptions, Progress, Source};

use super::args::Written;
use super::progress::ProgressBar;
use super::{CompressArg, InputArgs, Outcome, OutputArgs};

/// Opens an output file other than the primary: compressed when its name ends in `.zst`/`.gz`.
pub fn create(path: &Path, jobs: usize) -> anyhow::Result<OutputFile> {
    let compression = OutputCompression::from_name(path, compress_threads(jobs));
    OutputFile::create_compressed(path, compression)
        .with_context(|| format!("{}: cannot create output", path.display()))
}

fn compress_threads(jobs: usize) -> u32 {
    u32::try_from(jobs).unwrap_or(u32::MAX)
}

/// A command's second data output: its flag (for messages) and its path.
pub type Secondary<'a> = Option<(&'static str, &'a Path)>;

/// Runs `op` over the inputs. `secondary` is the command's second data output
/// (`--valid-out`, `--warnings-out`); with `messages`, the operation's text for people goes to
/// standard error, in input order (and no progress bar is drawn over it unless forced).
pub fn run<Op: LineOperation>(
    op: &Op,
    input: &InputArgs,
    output: &OutputArgs,
    secondary: Secondary<'_>,
    messages: bool,
) -> anyhow::Result<Outcome> {
    run_then(op, input, output, secondary, messages, |_, _, _| Ok(()))
}

/// Like [`run`], then `epilogue` writes what the run added up (its books and the operation's
/// total) to the primary output (the count of `filter --count`, the report of `stats`), before
/// any output is committed.
pub fn run_then<Op: LineOperation>(
    op: &Op,
    input: &InputArgs,
    output: &OutputArgs,
    secondary: Secondary<'_>,
    messages: bool,
    epilogue: impl FnOnce(&Summary, Op::Total, &mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<Outcome> {
    let settled = Settled {
        primary_lines: None,
        settle: |_: &mut Summary, _: &Op::Total| Notes::default(),
    };
    let sources = (sources(&input.files), true);
    run_full(
        op, sources, input, output, secondary, messages, settled, epilogue,
    )
}

/// Like [`run_then`], reading `sources` (the inputs as `input.files` names them, read from
/// elsewhere: `dedupe`'s spilled streams) rather than opening `input.files`.
pub fn run_sources_then<Op: LineOperation>(
    op: &Op,
    sources: Vec<Source>,
    input: &InputArgs,
    output: &OutputArgs,
    secondary: Secondary<'_>,
    epilogue: impl FnOnce(&Summary, Op::Total, &mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<Outcome> {
    let settled = Settled {
        primary_lines: None,
        settle: |_: &mut Summary, _: &Op::Total| Notes::default(),
    };
    // Read from elsewhere already (standard input spilled): nothing to say about a terminal.
    run_full(
        op,
        (sources, false),
        input,
        output,
        secondary,
        false,
        settled,
        epilogue,
    )
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

/// How a command's run ends beyond the books: the most lines its primary output takes (the
/// rest is dropped), and what settles the books after the run, from the operation's total.
pub struct Settled<F> {
    pub primary_lines: Option<u64>,
    pub settle: F,
}

/// Like [`run_then`] for a command that settles its books after the run (see [`Settled`]).
pub fn run_settled<Op: LineOperation>(
    op: &Op,
    input: &InputArgs,
    output: &OutputArgs,
    primary_lines: Option<u64>,
    settle: impl FnOnce(&mut Summary, &Op::Total) -> Notes,
    epilogue: impl FnOnce(&Summary, Op::Total, &mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<Outcome> {
    let settled = Settled {
        primary_lines,
        settle,
    };
    run_full(
        op,
        (sources(&input.files), true),
        input,
        output,
        None,
        false,
        settled,
        epilogue,
    )
}

#[allow(clippy::too_many_arguments)]
fn run_full<Op: LineOperation>(
    op: &Op,
    (sources, reads_the_files): (Vec<Source>, bool),
    input: &InputArgs,
    output: &OutputArgs,
    secondary: Secondary<'_>,
    messages: bool,
    settled: Settled<impl FnOnce(&mut Summary, &Op::Total) -> Notes>,
    epilogue: impl FnOnce(&Summary, Op::Total, &mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<Outcome> {
    let started = Instant::now();
    check_usage(input, output, secondary)?;
    let jobs = input.jobs()?;
    // Open every output before reading: an unwritable path fails before any work is done.
    let primary_compression = match (output.compress, &output.output) {
        (Some(kind), _) => compression(kind, jobs),
        (None, None) => OutputCompression::None,
        (None, Some(path)) => OutputCompression::from_name(path, compress_threads(jobs)),
    };
    let primary = match &output.output {
        Some(path) => OutputFile::create_compressed(path, primary_compression)
            .with_context(|| format!("{}: cannot create output", path.display()))?,
        None => OutputFile::stdout_compressed(primary_compression)?,
    };
    let open = |path: Option<&Path>| path.map(|p| create(p, jobs)).transpose();
    let mut files = RunFiles {
        primary: Some(primary),
        secondary: open(secondary.map(|(_, p)| p))?,
        rejects: open(output.rejects.as_deref())?,
        summary: open(output.summary.as_deref())?,
        messages: messages.then(OutputFile::stderr),
    };

    if reads_the_files {
        say_if_reading_a_terminal(&input.files, output.quiet);
    }
    let progress = Arc::new(Progress::default());
    let bar = (!output.quiet && (output.progress || !messages))
        .then(|| {
            ProgressBar::start(
                Arc::clone(&progress),
                total_size(&input.files),
                output.progress,
            )
        })
        .flatten();
    let mut options = PipelineOptions::default();
    options.jobs = jobs;
    options.max_line_bytes = input.max_line_bytes;
    options.line_buffered = output.line_buffered;
    let run = Run {
        options,
        messages,
        progress: Some(progress),
        started,
    };
    #[cfg(debug_assertions)]
    let result = match std::env::var_os("RDQ_ENVELOPE_TEST_PANIC_ON") {
        // Test builds only: a line holding these bytes panics in its worker, so that the tests
        // can prove a panic ends the run with status 2 and every output as it was.
        Some(marker) => {
            let op = super::panic_hook::PanicOn {
                op,
                marker: marker.into_encoded_bytes(),
            };
            execute(&op, sources, run, &mut files, settled)
        }
        None => execute(op, sources, run, &mut files, settled),
    };
    #[cfg(not(debug_assertions))]
    let result = execute(op, sources, run, &mut files, settled);
    if let Some(bar) = bar {
        bar.finish();
    }
    let (summary, notes, total) = result?;
    if let Some(primary) = files.primary.as_mut() {
        epilogue(&summary, total, primary)?;
    }
    // The closing line goes out when every output is complete and none is renamed yet: a
    // standard error that cannot take it fails the run with every path as it was.
    files.commit_then(|| match output.quiet {
        true => Ok(()),
        false => {
            super::input_hint::say_what_the_inputs_look_like(&summary)?;
            let wrote = what_was_written(&summary, output, secondary);
            let (counts, rate) = (summary.human_counts(), summary.human_rate());
            super::say(format_args!("{counts}{}{wrote}{rate}", notes.human))
        }
    })?;
    Ok(outcome(&summary))
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

/// `--compress KIND` for an output written on `jobs` threads.
pub fn compression(kind: CompressArg, jobs: usize) -> OutputCompression {
    match kind {
        CompressArg::Zstd => OutputCompression::Zstd {
            threads: compress_threads(jobs),
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

/// How [`execute`] runs.
pub struct Run {
    /// Workers and limits.
    pub options: PipelineOptions,
    /// Whether the operation's text for people goes to standard error.
    pub messages: bool,
    /// The counters a progress bar reads.
    pub progress: Option<Arc<Progress>>,
    /// When the run started, for `seconds`.
    pub started: Instant,
}

/// Runs `op` over `sources` into `files`, settles the books and writes them (with `seconds`
/// and the notes) to the summary file, if any; returns them with the operation's total.
/// Nothing is committed: the caller decides.
pub fn execute<Op: LineOperation>(
    op: &Op,
    sources: Vec<Source>,
    run: Run,
    files: &mut RunFiles,
    settled: Settled<impl FnOnce(&mut Summary, &Op::Total) -> Notes>,
) -> anyhow::Result<(Summary, Notes, Op::Total)> {
    let mut primary = files
        .primary
        .as_mut()
        .map(|o| LimitedLines::new(o, settled.primary_lines));
    let mut outputs = Outputs::none();
    outputs.set(output::PRIMARY, primary.as_mut().map(|o| o as _));
    outputs.set(output::SECONDARY, files.secondary.as_mut().map(|o| o as _));
    outputs.set(output::REJECTS, files.rejects.as_mut().map(|o| o as _));
    let messages = files.messages.as_mut().filter(|_| run.messages);
    outputs.set(output::MESSAGES, messages.map(|o| o as _));
    let (mut summary, total) = pipeline::run(sources, op, run.options, outputs, run.progress)?;
    summary.seconds = run.started.elapsed().as_secs_f64();
    let notes = (settled.settle)(&mut summary, &total);
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

/// The exit status a completed run's books call for.
pub fn outcome(summary: &Summary) -> Outcome {
    if summary.rejected > 0 {
        Outcome::Rejected
    } else {
        Outcome::Clean
    }
}

/// With no input named (or `-`) and a terminal on standard input, says on standard error what
/// the run waits for and how to end it, before it waits: a command that sits silent on a
/// terminal looks hung (`zstd` goes further and refuses a console on standard input; envelopes
/// pasted into a terminal are a fair use, so this only says so). Nothing with `--quiet`.
pub fn say_if_reading_a_terminal(files: &[PathBuf], quiet: bool) {
    use std::io::IsTerminal;
    let reads_stdin = files.is_empty() || files.iter().any(|f| f.as_os_str() == "-");
    if quiet || !reads_stdin || !std::io::stdin().is_terminal() {
        return;
    }
    let _ = writeln!(
        std::io::stderr(),
        "rdq-envelope: reading envelopes from standard input (a terminal): paste JSON Lines and \
         end with Ctrl-D, or name the files to read (rdq-envelope COMMAND FILE...)"
    );
}

/// The closing line's account of the outputs: `; wrote 293 lines to out.jsonl, 7 rejects to
/// r.jsonl` (the primary output, the command's second one, the rejects). Counts are lines
/// written, once the run has settled its books (`filter --limit` included).
fn what_was_written(summary: &Summary, output: &OutputArgs, secondary: Secondary<'_>) -> String {
    use rdq_envelope::report::{noun, thousands};
    let count = |n: u64, singular: &str| format!("{} {}", thousands(n), noun(n, singular));
    let place = |path: &Path| place_of(Some(path));
    let what = match output.written {
        Written::Lines => count(summary.emitted, "line"),
        Written::Envelopes => count(summary.emitted, "envelope"),
        Written::Tasks => count(summary.emitted, "task"),
        Written::Rows => count(summary.emitted, "row"),
        Written::Diagnostics => match summary.rejected {
            0 => "no diagnostics".to_owned(),
            n => format!("the diagnostics of {}", count(n, "line")),
        },
        Written::Report => "the report".to_owned(),
        Written::Count => "the count".to_owned(),
    };
    let to = place_of(output.output.as_deref());
    let mut s = format!("; wrote {what} to {to}");
    if let Some((flag, path)) = secondary {
        let what = match flag {
            "--valid-out" => count(summary.valid, "valid line"),
            "--dropped" => match summary.filtered_out {
                1 => "1 dropped copy".to_owned(),
                n => format!("{} dropped copies", thousands(n)),
            },
            _ => "the warnings".to_owned(),
        };
        s.push_str(&format!(", {what} to {}", place(path)));
    }
    if let Some(path) = output.rejects.as_deref() {
        s.push_str(&format!(
            ", {} to {}",
            count(summary.rejected, "reject"),
            place(path)
        ));
    }
    s
}

/// Where an output goes, as a closing line names it: its path, or "standard output" for none
/// and `-`.
pub fn place_of(output: Option<&Path>) -> String {
    match output {
        Some(path) if path.as_os_str() != "-" => path.display().to_string(),
        _ => "standard output".to_owned(),
    }
}

/// The inputs as streams, for [`check_aliases`]: `-` (or none at all) is standard input.
pub fn input_streams(files: &[PathBuf]) -> Vec<Named> {
    if files.is_empty() {
        return vec![Named::new("input", Stream::Stdin)];
    }
    files
        .iter()
        .map(|path| Named::path("input", path, false))
        .collect()
}

/// The inputs in order: `-` (or none at all) is standard input.
pub fn sources(files: &[PathBuf]) -> Vec<Source> {
    if files.is_empty() {
        return vec![Source::Stdin];
    }
    files
        .iter()
        .map(|path| {
            if path.as_os_str() == "-" {
                Source::Stdin
            } else {
                Source::Path(path.clone())
            }
        })
        .collect()
}

/// The inputs' stored size, when every input is a regular file (for percent and ETA).
fn total_size(files: &[PathBuf]) -> Option<u64> {
    if files.is_empty() {
        return None;
    }
    files.iter().try_fold(0u64, |total, path| {
        let meta = std::fs::metadata(path).ok().filter(|m| m.is_file())?;
        Some(total + meta.len())
    })
}
