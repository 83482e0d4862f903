//! `rdq-envelope validate`: every line against ENVELOPE.md, every broken rule reported.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use anyhow::{anyhow, Context};
use clap::{Args, ValueEnum};

use rdq_envelope::framing::LineKind;
use rdq_envelope::io::OutputFile;
use rdq_envelope::report::{self, Position, Summary};
use rdq_envelope::{Diagnostic, EnvelopeRules, JsonParser, RuleOptions, Verdict};

use super::{inputs, InputArgs, Outcome, OutputArgs};

#[derive(Args, Debug)]
pub struct ValidateArgs {
    #[command(flatten)]
    input: InputArgs,

    #[command(flatten)]
    output: OutputArgs,

    /// Judge lines as the submit subset: what a client sends before the server assigns
    /// identity and state (ENVELOPE.md §3.5).
    #[arg(long)]
    submit: bool,

    /// Reject lines of any other envelope_version (UNSUPPORTED_VERSION). Not with --submit.
    #[arg(long, value_name = "N")]
    require_version: Option<u32>,

    /// How diagnostics are written: `SOURCE:LINE: POINTER: CODE: message` rows, or one JSON
    /// object per invalid line.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,

    /// Also report the warnings (ID_TIME_MISMATCH, CREATED_AFTER_START), valid lines included.
    #[arg(long)]
    warnings: bool,

    /// Also write the valid lines, byte-identical to the input.
    #[arg(long, value_name = "FILE")]
    valid_out: Option<std::path::PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Human,
    Json,
}

fn create(path: &Path) -> anyhow::Result<OutputFile> {
    OutputFile::create(path).with_context(|| format!("{}: cannot create output", path.display()))
}

pub fn run(args: ValidateArgs) -> anyhow::Result<Outcome> {
    let started = Instant::now();
    let options = RuleOptions {
        max_envelope_bytes: args.input.max_envelope_bytes,
        queue_limits: args.input.queue_limit.iter().cloned().collect(),
        submit: args.submit,
        require_version: args.require_version,
        warnings: true,
    };
    let rules = EnvelopeRules::new(options)?;
    // Open every output before reading: an unwritable path fails before any work is done.
    let mut primary = match &args.output.output {
        Some(path) => create(path)?,
        None => OutputFile::stdout(),
    };
    let mut valid_out = args.valid_out.as_deref().map(create).transpose()?;
    let mut rejects = args.output.rejects.as_deref().map(create).transpose()?;
    let mut summary_out = args.output.summary.as_deref().map(create).transpose()?;

    let mut parser = JsonParser::new();
    let mut verdict = Verdict::default();
    let mut summary = Summary::default();
    for path in inputs::sources(&args.input.files) {
        let mut input = inputs::open(path, args.input.max_line_bytes)?;
        let source = input.source.as_str();
        let cap = input.reader.max_line_bytes();
        loop {
            let line = match input.reader.next_line() {
                Ok(Some(line)) => line,
                Ok(None) => break,
                Err(e) => {
                    return Err(anyhow!(e).context(format!(
                        "{source}: input failed after line {}, at byte offset {}",
                        input.reader.lines(),
                        input.reader.offset()
                    )))
                }
            };
            summary.lines += 1;
            let at = Position {
                source,
                line: line.number,
                offset: line.offset,
            };
            let doc = match line.kind {
                LineKind::Blank => {
                    summary.blank += 1;
                    continue;
                }
                LineKind::TooLong => {
                    verdict.clear();
                    verdict
                        .errors
                        .push(Diagnostic::line_too_long(line.len, cap));
                    None
                }
                LineKind::Content => rules.check_line(&mut parser, line.content, &mut verdict),
            };
            let valid = verdict.is_valid();
            if valid {
                summary.valid += 1;
                summary.emitted += 1;
                summary.count_warnings(&verdict.warnings);
                if let Some(out) = valid_out.as_mut() {
                    out.write_all(line.content)?;
                    out.write_all(b"\n")?;
                }
            } else {
                summary.count_rejected(&verdict.errors);
                if let Some(out) = rejects.as_mut() {
                    report::write_reject(out, at, &line, &verdict.errors)?;
                }
            }
            let reported = !valid || (args.warnings && !verdict.warnings.is_empty());
            if reported {
                match args.format {
                    Format::Human => {
                        report::write_human(&mut primary, at, &verdict, args.warnings)?
                    }
                    Format::Json => {
                        let id = doc
                            .as_ref()
                            .and_then(|d| d.root().get("id"))
                            .and_then(|v| v.as_str());
                        report::write_json(&mut primary, at, id, &verdict, args.warnings)?
                    }
                }
            }
        }
        summary.bytes_in += input.reader.offset();
    }
    summary.seconds = started.elapsed().as_secs_f64();
    debug_assert!(summary.balances());
    if let Some(out) = summary_out.as_mut() {
        summary.write_json(out)?;
    }
    // The primary output first: it is the one most likely to be a device that fails.
    primary.commit()?;
    for out in [valid_out, rejects, summary_out].into_iter().flatten() {
        out.commit()?;
    }
    if !args.output.quiet {
        eprintln!("rdq-envelope: {}", summary.human());
    }
    Ok(if summary.rejected > 0 {
        Outcome::Rejected
    } else {
        Outcome::Clean
    })
}
