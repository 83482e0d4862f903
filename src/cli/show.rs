//! `rdq-envelope show ID`: one envelope, pretty, and its decoded payload.

use anyhow::bail;
use clap::Args;

use rdq_envelope::envelope::formats::ulid_time_ms;
use rdq_envelope::io::{check_aliases, Named, OutputCompression, OutputFile, Stream};
use rdq_envelope::ops::{ShowOp, ShowPayload};
use rdq_envelope::pipeline::{self, Outputs, PipelineOptions};
use rdq_envelope::EnvelopeRules;

use super::{run, InputArgs, Outcome};

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// The envelope ID (a canonical ULID).
    #[arg(value_name = "ID")]
    id: String,

    #[command(flatten)]
    input: InputArgs,

    /// Also print the decoded payload: JSON pretty-printed, text as it is, anything else as a
    /// hex dump.
    #[arg(long, conflicts_with = "payload_only")]
    payload: bool,

    /// Print only the decoded payload's bytes, as they are (for piping into another tool).
    #[arg(long)]
    payload_only: bool,

    /// Print every envelope with the ID, reading the input to its end (by default reading
    /// stops at the first).
    #[arg(long)]
    all: bool,
}

pub fn run(args: ShowArgs) -> anyhow::Result<Outcome> {
    if ulid_time_ms(&args.id).is_none() {
        let hint = match ulid_time_ms(&args.id.to_ascii_uppercase()) {
            Some(_) => format!(" (IDs are upper-case: {})", args.id.to_ascii_uppercase()),
            None => String::new(),
        };
        bail!(
            "{:?} is not a canonical ULID, so no valid envelope has it{hint}",
            args.id
        );
    }
    let options = args.input.rule_options();
    let payload = match (args.payload, args.payload_only) {
        (_, true) => ShowPayload::Only,
        (true, false) => ShowPayload::Also,
        (false, false) => ShowPayload::No,
    };
    let op = ShowOp::new(EnvelopeRules::new(options)?, args.id, args.all, payload);
    args.input.check()?;
    let stdout_named = [Named::new("the envelope", Stream::Stdout)];
    check_aliases(&run::input_streams(&args.input.files), &stdout_named)?;
    let mut stdout = OutputFile::stdout_compressed(OutputCompression::None)?;
    let options = PipelineOptions {
        jobs: run::jobs(&args.input),
        max_line_bytes: args.input.max_line_bytes,
        ..PipelineOptions::default()
    };
    let outputs = Outputs {
        primary: Some(&mut stdout),
        secondary: None,
        rejects: None,
        messages: None,
    };
    let books = pipeline::run(run::sources(&args.input.files), &op, options, outputs, None)?;
    stdout.commit()?;
    if books.emitted == 0 {
        super::say(format_args!("no valid envelope has the ID {}", op.id()))?;
        return Ok(Outcome::Rejected);
    }
    Ok(Outcome::Clean)
}
