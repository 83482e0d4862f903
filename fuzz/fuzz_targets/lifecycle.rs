//! Any bytes as calls on an owned envelope: no sequence makes one the checker rejects (see
//! `checks.rs`).
#![no_main]

include!("../checks.rs");

libfuzzer_sys::fuzz_target!(|data: &[u8]| check_lifecycle(data));
