//! The commands' per-line work, as [`LineOperation`](crate::pipeline::LineOperation)s that the
//! parallel pipeline applies: each command of the CLI supplies one.

mod migrate;
mod validate;

pub use migrate::{MigrateOp, MigrateSource, MigrateWorker};
pub use validate::{ReportFormat, ValidateOp};
