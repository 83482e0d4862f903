//! The commands' per-line work, as [`LineOperation`](crate::pipeline::LineOperation)s that the
//! parallel pipeline applies: each command of the CLI supplies one.

mod filter;
mod migrate;
mod redrive;
mod validate;

pub use filter::{FilterOp, FilterWorker, Glob, Predicates};
pub use migrate::{MigrateOp, MigrateSource, MigrateWorker};
pub use redrive::{RedriveOp, RedriveWorker};
pub use validate::{ReportFormat, ValidateOp};
