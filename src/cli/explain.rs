//! `rdq-envelope explain CODE`: a code's entry in the catalogue, as `rustc --explain` prints
//! one; `explain --list`: every code with its summary.

use std::io::Write;

use anyhow::bail;
use clap::Args;

use rdq_envelope::catalogue::{self, Entry, ExampleLine, CATALOGUE};
use rdq_envelope::io::OutputFile;
use rdq_envelope::Severity;

use super::Outcome;

#[derive(Args, Debug)]
#[command(group = clap::ArgGroup::new("what").required(true).args(["code", "list"]))]
pub struct ExplainArgs {
    /// The code to explain, in any letter case (BAD_ATTEMPT, bad_attempt).
    #[arg(value_name = "CODE", value_parser = CodeName, hide_possible_values = true)]
    code: Option<String>,

    /// List every code with its one-line summary.
    #[arg(long, conflicts_with = "code")]
    list: bool,
}

/// A code's name as typed: any text (an unknown one is told with the codes nearest to it, by
/// `run`), offering every code to the shells' completions.
#[derive(Clone, Debug)]
struct CodeName;

impl clap::builder::TypedValueParser for CodeName {
    type Value = String;

    fn parse_ref(
        &self,
        _: &clap::Command,
        _: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        Ok(value.to_string_lossy().into_owned())
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        let codes = rdq_envelope::ErrorCode::ALL.iter();
        Some(Box::new(codes.map(|code| {
            clap::builder::PossibleValue::new(code.as_str())
        })))
    }
}

/// The width the paragraphs are wrapped to.
const WIDTH: usize = 79;

pub fn run(args: ExplainArgs) -> anyhow::Result<Outcome> {
    let mut text = String::new();
    if args.list {
        list(&mut text);
    } else {
        let name = args.code.as_deref().unwrap_or_default();
        let Some(code) = catalogue::lookup(name) else {
            let list = "`rdq-envelope explain --list` lists every code";
            match catalogue::closest(name) {
                Some(code) => bail!("unknown code {name:?}; did you mean {code}? ({list})"),
                None => bail!("unknown code {name:?}: {list}"),
            }
        };
        let Some(entry) = catalogue::entry(code) else {
            bail!("{code} has no entry in the catalogue (a bug, please report it)");
        };
        explain(&mut text, entry);
    }
    let mut out = OutputFile::stdout();
    out.write_all(text.as_bytes())?;
    out.commit()?;
    Ok(Outcome::Clean)
}

fn list(text: &mut String) {
    let width = CATALOGUE
        .iter()
        .map(|e| e.code.as_str().len())
        .max()
        .unwrap_or(0);
    for entry in CATALOGUE {
        let severity = match entry.code.severity() {
            Severity::Error => "error  ",
            Severity::Warning => "warning",
        };
        let code = entry.code.as_str();
        text.push_str(&format!("{code:width$}  {severity}  {}\n", entry.summary));
    }
}

fn explain(text: &mut String, entry: &Entry) {
    let code = entry.code;
    let severity = match code.severity() {
        Severity::Error => "error: the line is rejected",
        Severity::Warning => "warning: reported, never a reason to reject",
    };
    text.push_str(&format!("{code} ({severity})\n\n"));
    wrap(text, "", &format!("{}.", entry.summary));
    text.push('\n');
    wrap(text, "", entry.rule);

    text.push_str("\nWhere it is reported:\n");
    let width = entry
        .pointers
        .iter()
        .map(|(p, _)| p.len())
        .max()
        .unwrap_or(0);
    for (pointer, when) in entry.pointers {
        text.push_str(&format!("  {pointer:width$}  {when}\n"));
    }

    let example = &entry.example;
    text.push_str(&format!(
        "\nExample, with `rdq-envelope {}`:\n",
        example.args.join(" ")
    ));
    let what = match example.line {
        ExampleLine::Valid(version) => format!("the valid version {version} envelope, unchanged:"),
        ExampleLine::Edit {
            version,
            from,
            to: "",
        } => {
            format!("the valid version {version} envelope without `{from}`:")
        }
        ExampleLine::Edit { version, from, to } => {
            format!("the valid version {version} envelope with `{from}` changed to `{to}`:")
        }
        _ => "the line:".to_owned(),
    };
    wrap(text, "  ", &what);
    let shown = example.shown();
    text.push_str(&format!("\n    {shown}\n\n"));
    if shown.contains("<<") {
        wrap(text, "  ", "(<<TEXT*N>> stands for TEXT repeated N times.)");
    }
    let pointers: Vec<String> = example.pointers.iter().map(|p| format!("{p:?}")).collect();
    wrap(
        text,
        "  ",
        &format!("gets {code} at {}.", pointers.join(", ")),
    );

    text.push_str("\nHow to fix it:\n");
    wrap(text, "  ", entry.fix);

    let docs: Vec<String> = entry.docs.iter().map(|d| format!("docs/{d}")).collect();
    text.push_str(&format!("\nSee {}.\n", docs.join(", ")));
}

/// Appends `paragraph` wrapped at [`WIDTH`] columns, each line after `indent`. A word longer
/// than a line gets a line of its own.
fn wrap(text: &mut String, indent: &str, paragraph: &str) {
    let mut line = String::new();
    for word in paragraph.split_whitespace() {
        if !line.is_empty()
            && indent.len() + line.chars().count() + 1 + word.chars().count() > WIDTH
        {
            text.push_str(&format!("{indent}{line}\n"));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        text.push_str(&format!("{indent}{line}\n"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paragraphs_wrap_at_the_width() {
        let mut text = String::new();
        wrap(&mut text, "  ", &"word ".repeat(40));
        assert!(text
            .lines()
            .all(|l| l.len() <= WIDTH && l.starts_with("  word")));
        assert_eq!(text.split_whitespace().count(), 40);
    }
}
