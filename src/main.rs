//! `rdq-envelope`: the command line. A thin layer over the library: parse the arguments, run
//! the subcommand, turn its outcome into an exit status (docs/cli.md#exit-status).

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
