//! Hostile cases: outputs (see the parent module for the helpers).

#[allow(unused_imports)]
use super::*;
