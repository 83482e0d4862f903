//! Structured envelopes (`Arbitrary`) through the rules and every migration (see `checks.rs`).
#![no_main]

include!("../checks.rs");

libfuzzer_sys::fuzz_target!(|data: &[u8]| check_envelope(data));
