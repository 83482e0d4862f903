//! rdq-envelope: validate, version-migrate and re-emit rdq task envelopes.
#![deny(missing_docs)]
// No module needs `unsafe`: simd-json and the SIMD crates keep theirs behind safe APIs.
#![forbid(unsafe_code)]

pub mod batch;
pub mod chokaq;
pub mod diagnostic;
pub mod envelope;
pub mod framing;
pub mod gen;
pub mod io;
pub mod json;
pub mod migrate;
pub mod ops;
pub mod pipeline;
pub mod report;
pub mod schema;

pub use diagnostic::{Diagnostic, ErrorCode, Severity};
pub use envelope::{EnvelopeRules, OptionsError, RuleOptions, Verdict};
pub use json::{Document, JsonParser};
