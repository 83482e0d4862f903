//! `rdq-envelope`: the command line. Until the `validate` command lands it only tells its version.

fn main() {
    println!("rdq-envelope {}", env!("CARGO_PKG_VERSION"));
}
