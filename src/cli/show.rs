//! `rdq-envelope show ID`: one envelope, pretty, and its decoded payload.

use std::io::IsTerminal;

use anyhow::bail;
use clap::Args;

use rdq_envelope::envelope::formats::ulid_time_ms;
use rdq_envelope::io::{Named, OutputCompression, OutputFile, Stream};
use rdq_envelope::ops::output;
use rdq_envelope::ops::{ShowOp, ShowPayload};
use rdq_envelope::pipeline::{self, Outputs};
use rdq_envelope::EnvelopeRules;

use super::{inputs, run, InputArgs, Outcome};

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// The envelope ID (a canonical ULID).
    #[arg(value_name = "ID")]
    id: String,

    /// Also print the decoded payload: JSON pretty-printed, text as it is, anything else as a
    /// hex dump. On a terminal, control characters are shown as \x1b or \u{9b}.
    #[arg(long, conflicts_with = "payload_only")]
    payload: bool,

    /// Print only the decoded payload's bytes, as they are (for piping into another tool). An
    /// envelope whose payload is by reference (payload_ref) has none: that is said on standard
    /// error, and the exit status is 1.
    #[arg(long)]
    payload_only: bool,

    /// Print every envelope with the ID, reading the input to its end (by default reading
    /// stops at the first).
    #[arg(long)]
    all: bool,

    #[command(flatten)]
    pub input: InputArgs,
}

/// When the "ID" names a file, the likely mistake is the order of the arguments: says so, with
/// the command in the right order when a "file" is an ID.
fn swapped_hint(id: &str, files: &[std::path::PathBuf]) -> String {
    if id == "-" || !std::path::Path::new(id).exists() {
        return String::new();
    }
    let ulid = files.iter().filter_map(|f| f.to_str()).find(|f| {
        let upper = f.to_ascii_uppercase();
        ulid_time_ms(&upper).is_some() && !std::path::Path::new(f).exists()
    });
    match ulid {
        Some(ulid) => format!(
            "; {id:?} is a file and {ulid:?} looks like an ID: the ID comes first \
             (rdq-envelope show {} {id})",
            ulid.to_ascii_uppercase()
        ),
        None => format!("; {id:?} is a file: the ID comes first (rdq-envelope show ID {id})"),
    }
}

pub fn run(args: ShowArgs) -> anyhow::Result<Outcome> {
    if ulid_time_ms(&args.id).is_none() {
        let hint = match ulid_time_ms(&args.id.to_ascii_uppercase()) {
            Some(_) => format!(" (IDs are upper-case: {})", args.id.to_ascii_uppercase()),
            None => swapped_hint(&args.id, &args.input.files),
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
    args.input.check()?;
    let stdout_named = [
        Named::new("the envelope", Stream::Stdout),
        Named::new("the run's messages", Stream::Stderr),
    ];
    run::check_streams(&inputs::input_streams(&args.input.files), &stdout_named)?;
    // A terminal would act on the control characters of a payload (or an envelope): they are
    // made visible there, and pass as they are into a pipe or a file.
    let op = ShowOp::new(EnvelopeRules::new(options)?, args.id, args.all, payload)
        .escaping_controls(std::io::stdout().is_terminal());
    let mut stdout = OutputFile::stdout_compressed(OutputCompression::None)?;
    let options = args.input.pipeline_options()?;
    let mut stderr = OutputFile::stderr();
    let outputs = Outputs::none()
        .to(output::PRIMARY, &mut stdout)
        // Why a --payload-only match printed nothing.
        .to(output::MESSAGES, &mut stderr);
    inputs::say_if_reading_a_terminal(&args.input.files, false);
    let (books, by_reference) = pipeline::run(
        inputs::sources(&args.input.files),
        &op,
        options,
        outputs,
        None,
    )?;
    rdq_envelope::io::commit_all([stdout, stderr])?;
    if books.emitted == 0 {
        super::say(format_args!("no valid envelope has the ID {}", op.id()))?;
        return Ok(Outcome::Rejected);
    }
    // Matches with no inline payload for --payload-only to print.
    if by_reference > 0 {
        return Ok(Outcome::Rejected);
    }
    Ok(Outcome::Clean)
}
