//! `rdq-envelope`: the command line. A thin layer over the library: parse the arguments, run
//! the subcommand, turn its outcome into an exit status (CLI.md "Exit status").

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
