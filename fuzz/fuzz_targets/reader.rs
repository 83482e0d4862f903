//! The reader over any byte stream with a tiny cap and buffer (see `checks.rs`).
#![no_main]

include!("../checks.rs");

libfuzzer_sys::fuzz_target!(|data: &[u8]| check_reader(data));
