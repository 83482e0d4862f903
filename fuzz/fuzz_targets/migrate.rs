//! Any bytes through `migrate` to both versions (see `checks.rs`).
#![no_main]

include!("../checks.rs");

libfuzzer_sys::fuzz_target!(|data: &[u8]| check_migrate(data));
