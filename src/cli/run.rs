//! What every command that reads envelopes does around its operation: open the outputs, run the
//! pipeline with a progress bar, write the summary, commit the outputs, say how it went.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;

use rdq_envelope::io::{OutputCompression, OutputFile};
use rdq_envelope::pipeline::{self, LineOperation, Outputs, PipelineOptions, Progress, Source};
use rdq_envelope::report::Summary;

use super::progress::ProgressBar;
use super::{CompressArg, InputArgs, Outcome, OutputArgs};

/// The worker count: `-j`, or the machine's available parallelism.
pub fn jobs(input: &InputArgs) -> usize {
    input
        .jobs
        .map(usize::from)
        .unwrap_or_else(|| PipelineOptions::default().jobs)
}

/// Opens an output file other than the primary: compressed when its name ends in `.zst`/`.gz`.
pub fn create(path: &Path, jobs: usize) -> anyhow::Result<OutputFile> {
    let compression = OutputCompression::from_name(path, compress_threads(jobs));
    OutputFile::create_compressed(path, compression)
        .with_context(|| format!("{}: cannot create output", path.display()))
}

fn compress_threads(jobs: usize) -> u32 {
    u32::try_from(jobs).unwrap_or(u32::MAX)
}

/// Runs `op` over the inputs. `secondary` is the command's second data output
/// (`--valid-out`, `--warnings-out`); with `messages`, the operation's text for people goes to
/// standard error, in input order (and no progress bar is drawn over it unless forced).
pub fn run<Op: LineOperation>(
    op: &Op,
    input: &InputArgs,
    output: &OutputArgs,
    secondary: Option<&Path>,
    messages: bool,
) -> anyhow::Result<Outcome> {
    run_then(op, input, output, secondary, messages, |_, _| Ok(()))
}

/// Like [`run`], then `epilogue` writes what the run added up to the primary output (the count
/// of `filter --count`, the report of `stats`), before any output is committed.
pub fn run_then<Op: LineOperation>(
    op: &Op,
    input: &InputArgs,
    output: &OutputArgs,
    secondary: Option<&Path>,
    messages: bool,
    epilogue: impl FnOnce(&Summary, &mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<Outcome> {
    let started = Instant::now();
    let jobs = jobs(input);
    // Open every output before reading: an unwritable path fails before any work is done.
    let primary_compression = match (output.compress, &output.output) {
        (Some(CompressArg::Zstd), _) => OutputCompression::Zstd {
            threads: compress_threads(jobs),
        },
        (Some(CompressArg::Gzip), _) => OutputCompression::Gzip,
        (Some(CompressArg::None), _) | (None, None) => OutputCompression::None,
        (None, Some(path)) => OutputCompression::from_name(path, compress_threads(jobs)),
    };
    let mut primary = match &output.output {
        Some(path) => OutputFile::create_compressed(path, primary_compression)
            .with_context(|| format!("{}: cannot create output", path.display()))?,
        None => OutputFile::stdout_compressed(primary_compression)?,
    };
    let mut secondary = secondary.map(|p| create(p, jobs)).transpose()?;
    let mut rejects = output
        .rejects
        .as_deref()
        .map(|p| create(p, jobs))
        .transpose()?;
    let mut summary_out = output
        .summary
        .as_deref()
        .map(|p| create(p, jobs))
        .transpose()?;

    let sources = sources(&input.files);
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
    let mut stderr = std::io::stderr();
    let options = PipelineOptions {
        jobs,
        max_line_bytes: input.max_line_bytes,
        line_buffered: output.line_buffered,
        ..PipelineOptions::default()
    };
    let outputs = Outputs {
        primary: Some(&mut primary),
        secondary: secondary.as_mut().map(|o| o as _),
        rejects: rejects.as_mut().map(|o| o as _),
        messages: messages.then_some(&mut stderr as _),
    };
    let result = pipeline::run(sources, op, options, outputs, Some(progress));
    if let Some(bar) = bar {
        bar.finish();
    }
    let mut summary: Summary = result?;
    summary.seconds = started.elapsed().as_secs_f64();
    debug_assert!(summary.balances());
    if let Some(out) = summary_out.as_mut() {
        summary.write_json(out)?;
    }
    epilogue(&summary, &mut primary)?;
    // The primary output first: it is the one most likely to be a device that fails.
    primary.commit()?;
    for out in [secondary, rejects, summary_out].into_iter().flatten() {
        out.commit()?;
    }
    if !output.quiet {
        eprintln!("rdq-envelope: {}", summary.human());
    }
    Ok(if summary.rejected > 0 {
        Outcome::Rejected
    } else {
        Outcome::Clean
    })
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
