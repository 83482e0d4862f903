//! rdq-envelope: validate, version-migrate and re-emit rdq task envelopes.
#![deny(missing_docs)]

pub mod diagnostic;
pub mod json;
