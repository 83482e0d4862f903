//! `rdq-envelope export`: one row per valid envelope, as CSV, TSV or Parquet.

use std::io::IsTerminal;

use anyhow::bail;
use clap::{Args, ValueEnum};

use rdq_envelope::io::OutputCompression;
use rdq_envelope::ops::{ExportField, ExportFormat, ExportOp, DEFAULT_FIELDS, FIELD_NAMES};
use rdq_envelope::EnvelopeRules;

use super::args::{Written, OUTPUT_HEADING};
use super::run::Run;
use super::{CompressArg, InputArgs, Outcome, OutputArgs};

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The columns, comma-separated, from: id, envelope_version, queue, handler_ref,
    /// handler_version, status, attempt_count, redrive_count, created_at, next_attempt_at,
    /// lease_expires_at, payload_content_type, payload_bytes, source, header.KEY,
    /// last.outcome, last.error.type, last.error.message, last.started_at, last.finished_at,
    /// fingerprint [default: id, queue, handler_ref, status, attempt_count, redrive_count,
    /// created_at, last.outcome, last.error.type, last.error.message, last.finished_at,
    /// fingerprint].
    #[arg(long, value_name = "LIST", value_parser = FieldList, hide_possible_values = true)]
    fields: Option<Fields>,

    /// CSV and TSV: prefix with ' (and quote) every text cell that begins with = + - @ tab or
    /// CR, so that a spreadsheet shows it as text instead of running it as a formula (the
    /// default).
    #[arg(long, overrides_with = "no_neutralize_formulas")]
    neutralize_formulas: bool,

    /// CSV and TSV: write such cells as they are (counted on standard error).
    #[arg(long, overrides_with = "neutralize_formulas")]
    no_neutralize_formulas: bool,

    #[command(flatten)]
    pub input: InputArgs,

    /// The file format (default: from the -o name, .csv, .tsv or .parquet, else CSV; another
    /// ending needs --format).
    #[arg(long, value_enum, value_name = "FORMAT", ignore_case = true)]
    #[arg(help_heading = OUTPUT_HEADING)]
    format: Option<FormatArg>,

    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum FormatArg {
    /// Comma-separated values (RFC 4180), with a header row.
    Csv,
    /// Tab-separated values, with a header row.
    Tsv,
    /// Apache Parquet: typed columns, zstd-compressed.
    Parquet,
}

/// `--fields LIST`, parsed (a newtype: clap would take a bare `Vec` for a repeated flag).
#[derive(Debug, Clone)]
struct Fields(Vec<ExportField>);

/// `--fields`' parser ([`parse_fields`]), offering the column names to the shells'
/// completions (a list's first name; `header.KEY` as `header.`).
#[derive(Clone, Debug)]
struct FieldList;

impl clap::builder::TypedValueParser for FieldList {
    type Value = Fields;

    fn parse_ref(
        &self,
        command: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Fields, clap::Error> {
        let text = value.to_str().ok_or_else(|| {
            clap::Error::new(clap::error::ErrorKind::InvalidUtf8).with_cmd(command)
        })?;
        parse_fields(text).map_err(|why| {
            let flag = arg.map_or_else(|| "--fields".to_owned(), |a| a.to_string());
            clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!("invalid value '{text}' for '{flag}': {why}\n"),
            )
            .with_cmd(command)
        })
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        let names = FIELD_NAMES.iter().map(|name| {
            if *name == "header.KEY" {
                "header."
            } else {
                name
            }
        });
        Some(Box::new(names.map(clap::builder::PossibleValue::new)))
    }
}

fn parse_fields(list: &str) -> Result<Fields, String> {
    let mut fields: Vec<ExportField> = Vec::new();
    for name in list.split(',') {
        if name.is_empty() {
            return Err(format!(
                "an empty name in {list:?} (two commas, or a comma at an end): \
                 give the names separated by single commas, as in id,queue"
            ));
        }
        if name.trim() != name {
            return Err(format!(
                "{name:?} has spaces around it: the names are separated by commas alone, \
                 as in id,queue"
            ));
        }
        let field = ExportField::parse(name).map_err(|e| {
            let names = FIELD_NAMES.iter().copied().filter(|n| *n != "header.KEY");
            match rdq_envelope::catalogue::near(name, names) {
                Some(close) => format!(
                    "unknown field {name:?}; did you mean {close}? (the fields are {})",
                    FIELD_NAMES.join(", ")
                ),
                None => e.to_string(),
            }
        })?;
        if fields.contains(&field) {
            return Err(format!("{name} is given twice: give each field once"));
        }
        fields.push(field);
    }
    Ok(Fields(fields))
}

pub fn run(mut args: ExportArgs) -> anyhow::Result<Outcome> {
    args.output.written = Written::Rows;
    let format = super::format_name::pick(
        "export",
        args.output.output.as_deref(),
        args.format,
        FormatArg::Csv,
        &[
            ("csv", FormatArg::Csv),
            ("tsv", FormatArg::Tsv),
            ("parquet", FormatArg::Parquet),
        ],
    )?;
    let format = match format {
        FormatArg::Csv => ExportFormat::Csv,
        FormatArg::Tsv => ExportFormat::Tsv,
        FormatArg::Parquet => ExportFormat::Parquet,
    };
    if format == ExportFormat::Parquet {
        check_parquet(&args.output)?;
        if args.neutralize_formulas || args.no_neutralize_formulas {
            bail!(
                "--neutralize-formulas and --no-neutralize-formulas are for CSV and TSV: \
                 Parquet's columns are typed, and a spreadsheet does not read a text value \
                 of one as a formula"
            );
        }
    }
    let fields = match args.fields {
        Some(Fields(fields)) => fields,
        None => DEFAULT_FIELDS
            .iter()
            .map(|name| ExportField::parse(name))
            .collect::<Result<_, _>>()?,
    };
    let rules = EnvelopeRules::new(args.input.rule_options())?;
    let mut op = ExportOp::new(rules, fields, format)?;
    op.write_rejects = args.output.rejects.is_some();
    op.max_line_bytes = args.input.max_line_bytes;
    op.neutralize_formulas = !args.no_neutralize_formulas;
    let quiet = args.output.quiet;
    Run::new(&op, &args.input, &args.output)
        .then(|_, mut total, out| {
            out.write_all(&op.finish(&mut total)?)?;
            if !quiet {
                say_formula_cells(&op, total.formula_cells())?;
            }
            Ok(())
        })
        .execute()
}

/// Says how many text `cells` would start a formula in a spreadsheet, and what became of them;
/// nothing when there were none.
fn say_formula_cells(op: &ExportOp, cells: u64) -> std::io::Result<()> {
    if cells == 0 {
        return Ok(());
    }
    let (counted, begin) = match cells {
        1 => ("1 cell".to_owned(), "begins"),
        n => (format!("{n} cells"), "begin"),
    };
    match op.neutralize_formulas {
        true => super::say(format_args!(
            "export: {counted} {begin} with = + - @ tab or CR and could run as formulas in a \
             spreadsheet: prefixed with ' (--no-neutralize-formulas writes them as they are)"
        )),
        false => super::say(format_args!(
            "export: {counted} {begin} with = + - @ tab or CR and may run as formulas in a \
             spreadsheet; --neutralize-formulas neutralises them"
        )),
    }
}

/// Parquet compresses its own pages and is binary: refuses what would wrap it in another
/// compression, flush it line by line, or draw it on a terminal.
fn check_parquet(output: &OutputArgs) -> anyhow::Result<()> {
    let wrapped = match (output.compress, &output.output) {
        (Some(kind), _) => kind != CompressArg::None,
        (None, Some(path)) => OutputCompression::from_name(path, 1) != OutputCompression::None,
        (None, None) => false,
    };
    if wrapped {
        bail!(
            "--format parquet: the file compresses its own columns (zstd); \
             it cannot also be compressed whole (--compress, or an -o name ending in .zst or .gz)"
        );
    }
    if output.line_buffered {
        bail!("--line-buffered and --format parquet: a Parquet file has no lines to flush");
    }
    let to_stdout = output
        .output
        .as_deref()
        .is_none_or(|p| p.as_os_str() == "-");
    if to_stdout && std::io::stdout().is_terminal() {
        bail!("--format parquet writes binary: give -o FILE.parquet, or redirect standard output");
    }
    Ok(())
}
