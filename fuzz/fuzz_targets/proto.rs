//! Bytes as protobuf envelopes, one and as a stream (see `checks.rs`).
#![no_main]

include!("../checks.rs");

libfuzzer_sys::fuzz_target!(|data: &[u8]| check_proto(data));
