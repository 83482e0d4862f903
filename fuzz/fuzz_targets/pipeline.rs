//! The whole pipeline over any bytes in any chunking, against one chunk (see `checks.rs`).
#![no_main]

include!("../checks.rs");

libfuzzer_sys::fuzz_target!(|data: &[u8]| check_pipeline(data));
