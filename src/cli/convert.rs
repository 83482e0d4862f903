//! `rdq-envelope convert`: JSON Lines to length-delimited protobuf (`--to proto`) and back
//! (`--from proto`), docs/proto.md#convert.

use std::io::IsTerminal;
use std::path::Path;

use anyhow::bail;
use clap::Args;

use rdq_envelope::io::{Compression, Endings};
use rdq_envelope::ops::{FromProtoOp, ProtoFrames, ToProtoOp};
use rdq_envelope::pipeline::Source;
use rdq_envelope::proto::DEFAULT_MAX_MESSAGE_BYTES;
use rdq_envelope::EnvelopeRules;

use super::args::Written;
use super::run::Run;
use super::{InputArgs, Outcome, OutputArgs};

#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// The format to write: proto (length-delimited rdq.envelope.v1/v2 messages, from JSON
    /// Lines), or json (canonical JSON Lines, with --from proto).
    #[arg(long, value_enum, value_name = "FORMAT")]
    to: Option<Format>,

    /// The format read: proto (a length-delimited stream, each message after its length as a
    /// varint), or json (JSON Lines, with --to proto).
    #[arg(long, value_enum, value_name = "FORMAT")]
    from: Option<Format>,

    #[command(flatten)]
    pub input: InputArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    Json,
    Proto,
}

/// Endings that say a file holds JSON (which a protobuf stream written there would not).
const JSON_ENDINGS: [&str; 3] = ["json", "jsonl", "ndjson"];

/// Endings that say a file holds protobuf (which JSON Lines written there would not).
const PROTO_ENDINGS: [&str; 4] = ["pb", "binpb", "protobuf", "proto"];

impl ConvertArgs {
    /// Whether the inputs are JSON Lines (`--to proto`), not protobuf streams.
    pub fn reads_json_lines(&self) -> bool {
        self.from != Some(Format::Proto)
    }
}

pub fn run(mut args: ConvertArgs) -> anyhow::Result<Outcome> {
    args.output.written = Written::Envelopes;
    match (args.from, args.to) {
        (None | Some(Format::Json), Some(Format::Proto)) => to_proto(&args),
        (Some(Format::Proto), None | Some(Format::Json)) => from_proto(&args),
        (Some(Format::Proto), Some(Format::Proto)) => {
            bail!("--from proto --to proto: nothing to convert (give one of them)")
        }
        (_, Some(Format::Json)) | (Some(Format::Json), None) => bail!(
            "convert reads or writes protobuf: give --to proto (JSON Lines in) or --from proto \
             (JSON Lines out); JSON to JSON is rdq-envelope migrate or validate --valid-out"
        ),
        (None, None) => {
            bail!("convert: give --to proto (JSON Lines in) or --from proto (JSON Lines out)")
        }
    }
}

fn ending(path: &Path) -> Option<String> {
    Endings::of(path).format
}

fn to_proto(args: &ConvertArgs) -> anyhow::Result<Outcome> {
    let output = args.output.output.as_deref();
    if let Some(path) = output.filter(|p| p.as_os_str() != "-") {
        if let Some(e) = ending(path).filter(|e| JSON_ENDINGS.contains(&e.as_str())) {
            bail!(
                "{}: --to proto writes protobuf, but the name's .{e} says JSON: name it .pb \
                 (or .binpb, another ending or none)",
                path.display()
            );
        }
    }
    let to_terminal = output.is_none_or(|p| p.as_os_str() == "-");
    if to_terminal && std::io::stdout().is_terminal() {
        bail!("--to proto writes binary: give -o FILE.pb, or redirect standard output");
    }
    let mut op = ToProtoOp::new(EnvelopeRules::new(args.input.rule_options())?);
    op.write_rejects = args.output.rejects.is_some();
    op.max_line_bytes = args.input.max_line_bytes;
    Run::new(&op, &args.input, &args.output).execute()
}

fn from_proto(args: &ConvertArgs) -> anyhow::Result<Outcome> {
    if let Some(path) = args.output.output.as_deref() {
        if let Some(e) = ending(path).filter(|e| PROTO_ENDINGS.contains(&e.as_str())) {
            bail!(
                "{}: --from proto writes JSON Lines, but the name's .{e} says protobuf: name it \
                 .jsonl (or .ndjson, .json, another ending or none)",
                path.display()
            );
        }
    }
    let options = args.input.rule_options();
    // A message is never much longer than its JSON line; twice the largest limit any queue
    // has, and no longer than a framed line the reader takes (base64 is 4/3 of the bytes).
    let largest = args
        .input
        .queue_limit
        .iter()
        .map(|(_, n)| *n)
        .chain([options.max_envelope_bytes])
        .max()
        .unwrap_or(options.max_envelope_bytes);
    let by_limit = usize::try_from(largest.saturating_mul(2)).unwrap_or(usize::MAX);
    let by_line = args.input.max_line_bytes.saturating_sub(32) / 4 * 3;
    let max_message_bytes = by_limit.max(DEFAULT_MAX_MESSAGE_BYTES).min(by_line);
    let sources = framed_sources(&args.input.files, max_message_bytes);
    let mut op = FromProtoOp::new(EnvelopeRules::new(options)?);
    op.write_rejects = args.output.rejects.is_some();
    Run::new(&op, &args.input, &args.output)
        .reading(sources)
        .execute()
}

/// Each input, opened when the pipeline first reads it (so thousands of inputs never hold
/// thousands of descriptors), decompressed when it is gzip or zstd, and framed.
fn framed_sources(files: &[std::path::PathBuf], max_message_bytes: usize) -> Vec<Source> {
    let plain = super::inputs::sources(files);
    plain
        .into_iter()
        .map(|source| {
            let name = source.name();
            let reader = Lazy {
                source: Some(source),
                framed: None,
                max_message_bytes,
            };
            Source::Reader {
                name,
                reader: Box::new(reader),
            }
        })
        .collect()
}

/// `raw` decompressed when its first bytes are gzip's or zstd's magic (a message of the
/// mapping begins with field 1, `08`, as its second byte, which neither magic has). The
/// library's `io::decompressed` does the same for lines, but its reader is not `Send`, and a
/// source must be.
fn decompressed(
    mut raw: Box<dyn std::io::Read + Send>,
) -> std::io::Result<Box<dyn std::io::Read + Send>> {
    use std::io::Read;
    let mut magic = [0u8; 4];
    let mut n = 0;
    while n < magic.len() {
        match raw.read(&mut magic[n..]) {
            Ok(0) => break,
            Ok(got) => n += got,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    let whole = std::io::Cursor::new(magic).take(n as u64).chain(raw);
    Ok(match rdq_envelope::io::sniff(&magic[..n]) {
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(whole)),
        Compression::Zstd => Box::new(zstd::stream::read::Decoder::new(whole)?),
        _ => Box::new(whole),
    })
}

/// An input opened at its first read.
struct Lazy {
    source: Option<Source>,
    framed: Option<ProtoFrames<Box<dyn std::io::Read + Send>>>,
    max_message_bytes: usize,
}

impl std::io::Read for Lazy {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.framed.is_none() {
            let raw: Box<dyn std::io::Read + Send> = match self.source.take() {
                Some(Source::Stdin) => Box::new(std::io::stdin()),
                Some(Source::Path(path)) => {
                    if path.is_dir() {
                        return Err(std::io::Error::other("is a directory, not an input file"));
                    }
                    rdq_envelope::io::open_stored(&path)?
                }
                Some(Source::Reader { reader, .. }) => reader,
                None => return Ok(0),
            };
            let decompressed = decompressed(raw)?;
            self.framed = Some(ProtoFrames::new(decompressed, self.max_message_bytes));
        }
        match self.framed.as_mut() {
            Some(framed) => framed.read(buf),
            None => Ok(0),
        }
    }
}
