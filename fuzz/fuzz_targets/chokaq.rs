//! Any bytes as a ChokaQ row through the importer (see `checks.rs`).
#![no_main]

include!("../checks.rs");

libfuzzer_sys::fuzz_target!(|data: &[u8]| check_chokaq(data));
