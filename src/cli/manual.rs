//! `rdq-envelope completions SHELL` and `rdq-envelope man`: both generated from the argument
//! definitions, so they never drift from the command line.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use rdq_envelope::io::{OutputFile, Url};

use super::Outcome;

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write a page per subcommand (rdq-envelope-validate.1, ...) and the main page into DIR,
    /// instead of the main page on standard output.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

pub fn completions(args: CompletionsArgs) -> anyhow::Result<Outcome> {
    let mut command = super::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut command, BIN_NAME, &mut out);
    if args.shell == clap_complete::Shell::Bash {
        out = bash_labels_matching_the_walk(out);
    }
    if args.shell == clap_complete::Shell::Fish {
        fish_positional_values(&command, &mut out);
    }
    to_stdout(&out)?;
    Ok(Outcome::Clean)
}

/// Writes `bytes` to standard output as every command does: a failed write names `<stdout>`,
/// and a closed one stays a closed pipe (a quiet end, as `| head` asks).
fn to_stdout(bytes: &[u8]) -> std::io::Result<()> {
    let mut out = OutputFile::stdout();
    out.write_all(bytes)?;
    out.commit()
}

const BIN_NAME: &str = "rdq-envelope";

/// clap_complete's fish script completes the values of options, not of positional arguments:
/// one line per subcommand whose positional argument has its values (`explain CODE`) adds
/// them, as the bash and zsh scripts have them.
fn fish_positional_values(command: &clap::Command, script: &mut Vec<u8>) {
    for sub in command.get_subcommands() {
        for arg in sub.get_positionals() {
            let values: Vec<String> = arg
                .get_possible_values()
                .iter()
                .map(|v| v.get_name().to_owned())
                .collect();
            if values.is_empty() {
                continue;
            }
            script.extend_from_slice(
                format!(
                    "complete -c {BIN_NAME} -n \"__fish_{}_using_subcommand {}\" -f -a \"{}\"\n",
                    BIN_NAME.replace('-', "_"),
                    sub.get_name(),
                    values.join(" ")
                )
                .as_bytes(),
            );
        }
    }
}

/// clap_complete's bash script walks the words typed and sets `cmd` to the bin name with `-`
/// written `__` (`rdq__envelope__subcmd__stats`), but labels each subcommand's case with the
/// bin name's `-` written `__subcmd__` (`rdq__subcmd__envelope__subcmd__stats`): no label
/// matches, and nothing after the subcommand completes. The labels are rewritten to the
/// walk's spelling, the only one the script's other lines use.
fn bash_labels_matching_the_walk(script: Vec<u8>) -> Vec<u8> {
    let script = match String::from_utf8(script) {
        Ok(script) => script,
        Err(not_utf8) => return not_utf8.into_bytes(),
    };
    let label = format!("{}__subcmd__", BIN_NAME.replace('-', "__subcmd__"));
    let walk = format!("{}__subcmd__", BIN_NAME.replace('-', "__"));
    script.replace(&label, &walk).into_bytes()
}

pub fn man(args: ManArgs) -> anyhow::Result<Outcome> {
    // The examples get a section of their own, not the end of the EXTRA section.
    let command = super::command_with(false);
    match args.dir {
        Some(dir) => {
            // A folder, made if missing, or an s3:// prefix, where each page is an object (and
            // nothing is made here); any other URL is refused, never taken for a local path.
            match rdq_envelope::io::parse_url(&dir)? {
                None => std::fs::create_dir_all(&dir)
                    .with_context(|| format!("{}: cannot create the folder", dir.display()))?,
                Some(Url::Http(url)) => anyhow::bail!(
                    "--dir takes a local folder or an s3://BUCKET/PREFIX/, not an http(s) URL \
                     (read-only): {url}"
                ),
                Some(Url::S3 { .. }) => {}
            }
            // Every page is written atomically, and all are renamed into place together: a
            // failure leaves the folder's pages as they were.
            let mut command = command.disable_help_subcommand(true);
            command.build();
            let mut pages = Vec::new();
            for (names, page) in pages_of(command, "") {
                let path = dir.join(page.get_filename());
                super::check_against_stderr("--dir", Some(&path))?;
                let mut out = OutputFile::create(&path)
                    .with_context(|| format!("{}: cannot create output", path.display()))?;
                out.write_all(&render(&page, &names)?)?;
                pages.push(out);
            }
            rdq_envelope::io::commit_all(pages)?;
        }
        None => {
            to_stdout(&render(&clap_mangen::Man::new(command), "")?)?;
        }
    }
    Ok(Outcome::Clean)
}

/// A page for the command and one for each of its visible subcommands, depth first, each with
/// its path of names (`""` for the top, `"batch migrate"`).
fn pages_of(command: clap::Command, names: &str) -> Vec<(String, clap_mangen::Man)> {
    let mut pages = Vec::new();
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        let path = match names.is_empty() {
            true => sub.get_name().to_owned(),
            false => format!("{names} {}", sub.get_name()),
        };
        pages.extend(pages_of(sub.clone(), &path));
    }
    pages.push((names.to_owned(), clap_mangen::Man::new(command)));
    pages
}

/// A page in roff, with its EXAMPLES section (`examples.rs`) before the EXTRA one (the
/// documents' note), where man pages put examples.
fn render(page: &clap_mangen::Man, names: &str) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    page.render(&mut out)?;
    let Some(examples) = super::examples::roff(names) else {
        return Ok(out);
    };
    let text = String::from_utf8_lossy(&out).into_owned();
    let at = [".SH EXTRA", ".SH VERSION"]
        .iter()
        .find_map(|section| text.find(&format!("\n{section}")).map(|i| i + 1))
        .unwrap_or(text.len());
    Ok(format!("{}{examples}{}", &text[..at], &text[at..]).into_bytes())
}
