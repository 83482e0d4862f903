//! `--color auto|always|never`: whether text for people (the `stats` tables, `validate`'s
//! human diagnostics, clap's help and usage errors) carries ANSI colour.

use std::ffi::{OsStr, OsString};
use std::io::IsTerminal;

use clap::ValueEnum;

/// `--color WHEN`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum ColorArg {
    /// Colour standard output when it is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE
    /// allow.
    #[default]
    Auto,
    /// Colour, wherever the output goes (a pipe, a file given with -o).
    Always,
    /// Never colour.
    Never,
}

impl ColorArg {
    /// Whether to colour a primary output that goes to standard output as it is
    /// (`to_stdout`: no `-o`, no `--compress`), as [`auto_colour`] decides under `auto`. An
    /// `-o` file is coloured only by `always`: a file is read later, elsewhere.
    pub fn colour(self, to_stdout: bool) -> bool {
        match self {
            ColorArg::Auto if !to_stdout => false,
            _ => ColorArg::colour_stream(Some(self), false),
        }
    }

    /// The `--color` of `args` (the last one given, before a `--`), read before clap parses
    /// them: clap's own help and usage errors are written before there are parsed arguments,
    /// and the flag still decides their colour. `None` when absent or not a valid value.
    pub fn from_raw_args(args: impl IntoIterator<Item = OsString>) -> Option<ColorArg> {
        let mut args = args.into_iter();
        let mut found = None;
        while let Some(arg) = args.next() {
            let value = match arg.to_str() {
                Some("--") => break,
                Some("--color") => args.next(),
                Some(other) => other.strip_prefix("--color=").map(OsString::from),
                None => None,
            };
            if let Some(value) = value {
                found = value
                    .to_str()
                    .and_then(|v| ColorArg::from_str(v, false).ok());
            }
        }
        found
    }

    /// Whether to colour clap's text (help, usage errors) written to standard output or error.
    pub fn colour_stream(flag: Option<ColorArg>, to_stderr: bool) -> bool {
        match flag.unwrap_or_default() {
            ColorArg::Always => true,
            ColorArg::Never => false,
            ColorArg::Auto => {
                let terminal = match to_stderr {
                    true => std::io::stderr().is_terminal(),
                    false => std::io::stdout().is_terminal(),
                };
                auto_colour(terminal, |name| std::env::var_os(name))
            }
        }
    }
}

/// `--color auto` for a stream (`terminal`: whether it is one), from the environment read with
/// `var`. A variable set to the empty string counts as unset (no-color.org). In order:
/// `NO_COLOR` set: never; `CLICOLOR_FORCE` set and not `0`: always, even into a pipe;
/// `CLICOLOR=0`: never; else only a terminal, and one whose `TERM` is set and not `dumb`
/// unless `CLICOLOR` (not `0`) says the terminal takes colour. (anstream, which clap uses, reads
/// `CLICOLOR_FORCE=0` as forcing colour: hence this function of our own.)
pub fn auto_colour(terminal: bool, var: impl Fn(&str) -> Option<OsString>) -> bool {
    let set = |name: &str| var(name).filter(|value| !value.is_empty());
    if set("NO_COLOR").is_some() {
        return false;
    }
    if set("CLICOLOR_FORCE").is_some_and(|value| value != "0") {
        return true;
    }
    let clicolor = set("CLICOLOR");
    if clicolor.as_deref() == Some(OsStr::new("0")) {
        return false;
    }
    let term_takes_colour = set("TERM").is_some_and(|term| term != "dumb");
    terminal && (term_takes_colour || clicolor.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole table of docs/cli.md#environment, on a terminal and into a pipe (the CLI
    /// tests can only spawn into a pipe).
    #[test]
    fn auto_follows_no_color_and_clicolor() {
        /// Variables, then the answer on a terminal and into a pipe.
        type Row = (&'static [(&'static str, &'static str)], bool, bool);
        let table: &[Row] = &[
            (&[], true, false),
            (&[("NO_COLOR", "1")], false, false),
            (&[("NO_COLOR", "0")], false, false),
            (&[("NO_COLOR", "")], true, false),
            (&[("CLICOLOR_FORCE", "1")], true, true),
            (&[("CLICOLOR_FORCE", "yes")], true, true),
            (&[("CLICOLOR_FORCE", "0")], true, false),
            (&[("CLICOLOR_FORCE", "")], true, false),
            (&[("CLICOLOR", "0")], false, false),
            (&[("CLICOLOR", "1")], true, false),
            (&[("CLICOLOR", "")], true, false),
            (&[("CLICOLOR", "0"), ("CLICOLOR_FORCE", "1")], true, true),
            (&[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")], false, false),
            (&[("NO_COLOR", ""), ("CLICOLOR_FORCE", "1")], true, true),
            (&[("TERM", "dumb")], false, false),
            (&[("TERM", "dumb"), ("CLICOLOR", "1")], true, false),
            (&[("TERM", "dumb"), ("CLICOLOR_FORCE", "1")], true, true),
        ];
        for &(vars, on_terminal, into_pipe) in table {
            let var = |name: &str| {
                let mut all = vec![("TERM", "xterm")];
                all.extend_from_slice(vars);
                all.iter()
                    .rev()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| OsString::from(v))
            };
            assert_eq!(
                auto_colour(true, var),
                on_terminal,
                "{vars:?} on a terminal"
            );
            assert_eq!(auto_colour(false, var), into_pipe, "{vars:?} into a pipe");
        }
        assert!(
            !auto_colour(true, |_| None),
            "no TERM: not a colour terminal"
        );
    }

    #[test]
    fn the_flag_is_found_before_clap_parses() {
        let find = |args: &[&str]| ColorArg::from_raw_args(args.iter().map(OsString::from));
        assert_eq!(
            find(&["x", "--color", "never", "stats"]),
            Some(ColorArg::Never)
        );
        assert_eq!(
            find(&["x", "stats", "--color=always"]),
            Some(ColorArg::Always)
        );
        assert_eq!(
            find(&["x", "--color=never", "--color", "auto"]),
            Some(ColorArg::Auto)
        );
        assert_eq!(find(&["x", "--", "--color=never"]), None);
        assert_eq!(find(&["x", "--color=sometimes"]), None);
        assert_eq!(find(&["x", "--color"]), None);
    }
}
