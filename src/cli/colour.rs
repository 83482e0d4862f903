//! `--color auto|always|never`: whether text for people (the `stats` tables, `validate`'s
//! human diagnostics) carries ANSI colour.

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
    /// (`to_stdout`: no `-o`, no `--compress`). `auto` decides as clap does for its own help
    /// (anstream): `NO_COLOR` (set, not empty) never; else `CLICOLOR_FORCE` (not `0`) always,
    /// even into a pipe; else `CLICOLOR=0` never; else only a terminal that is not `TERM=dumb`.
    /// An `-o` file is coloured only by `always`: a file is read later, elsewhere.
    pub fn colour(self, to_stdout: bool) -> bool {
        match self {
            ColorArg::Always => true,
            ColorArg::Never => false,
            ColorArg::Auto => {
                to_stdout
                    && anstream::AutoStream::choice(&std::io::stdout())
                        != anstream::ColorChoice::Never
            }
        }
    }
}
