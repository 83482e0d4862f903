//! `rdq-envelope schema`: the JSON Schema (draft 2020-12) of an envelope version.

use std::io::Write;

use anyhow::{bail, Context};
use clap::Args;

use rdq_envelope::envelope::{supported_versions, NEWEST_VERSION};
use rdq_envelope::io::OutputFile;

use super::args::OUTPUT_HEADING;
use super::Outcome;

#[derive(Args, Debug)]
pub struct SchemaArgs {
    /// The envelope_version whose schema to print (default: the newest).
    #[arg(long, value_name = "N", default_value_t = NEWEST_VERSION)]
    version: u32,

    /// Where to write (default: standard output). Regular files are written atomically.
    #[arg(short, long, value_name = "FILE", help_heading = OUTPUT_HEADING)]
    output: Option<std::path::PathBuf>,
}

pub fn run(args: SchemaArgs) -> anyhow::Result<Outcome> {
    // Checked before any output is opened: a usage error leaves no file behind.
    let Some(schema) = rdq_envelope::schema::json_schema(args.version) else {
        bail!(
            "--version {}: supported versions are {}",
            args.version,
            supported_versions()
        );
    };
    super::check_against_stderr("-o", args.output.as_deref())?;
    let mut out = match &args.output {
        Some(path) => OutputFile::create(path)
            .with_context(|| format!("{}: cannot create output", path.display()))?,
        None => OutputFile::stdout(),
    };
    out.write_all(schema.as_bytes())?;
    out.commit()?;
    Ok(Outcome::Clean)
}
