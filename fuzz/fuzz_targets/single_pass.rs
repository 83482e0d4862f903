//! The single pass against the tape path: raw lines, and nearly valid envelopes built from
//! parts (input starting with 0xFF) under several rule options (see `checks.rs`).
#![no_main]

include!("../checks.rs");

libfuzzer_sys::fuzz_target!(|data: &[u8]| check_single_pass(data));
