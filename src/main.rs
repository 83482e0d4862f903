//! `rdq-envelope`: the command line. A thin layer over the library: parse the arguments, run
//! the subcommand, turn its outcome into an exit status (docs/cli.md#exit-status). The command
//! line itself is the library's hidden `cli` module, which the Python module runs too.

fn main() -> std::process::ExitCode {
    rdq_envelope::cli::main()
}
