//! A store's output against the compliance kit's fixtures (see `checks.rs`).
#![no_main]

include!("../checks.rs");

libfuzzer_sys::fuzz_target!(|data: &[u8]| check_compare(data));
