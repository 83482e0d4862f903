//! The closing line's account of what a run wrote, and where.

use std::path::Path;

use rdq_envelope::pipeline::Summary;

use super::args::Written;
use super::run::Secondary;
use super::OutputArgs;

/// The closing line's account of the outputs: `; wrote 293 lines to out.jsonl, 7 rejects to
/// r.jsonl` (the primary output, the command's second one, the rejects). Counts are lines
/// written, once the run has settled its books (`filter --limit` included).
pub fn what_was_written(
    summary: &Summary,
    output: &OutputArgs,
    secondary: Secondary<'_>,
) -> String {
    use rdq_envelope::report::{noun, thousands};
    let count = |n: u64, singular: &str| format!("{} {}", thousands(n), noun(n, singular));
    let place = |path: &Path| place_of(Some(path));
    let what = match output.written {
        Written::Lines => count(summary.emitted, "line"),
        Written::Envelopes => count(summary.emitted, "envelope"),
        Written::Tasks => count(summary.emitted, "task"),
        Written::Rows => count(summary.emitted, "row"),
        Written::Diagnostics => match summary.rejected {
            0 => "no diagnostics".to_owned(),
            n => format!("the diagnostics of {}", count(n, "line")),
        },
        Written::Report => "the report".to_owned(),
        Written::Count => "the count".to_owned(),
    };
    let to = place_of(output.output.as_deref());
    let mut s = format!("; wrote {what} to {to}");
    if let Some((flag, path)) = secondary {
        let what = match flag {
            "--valid-out" => count(summary.valid, "valid line"),
            "--dropped" => match summary.filtered_out {
                1 => "1 dropped copy".to_owned(),
                n => format!("{} dropped copies", thousands(n)),
            },
            _ => "the warnings".to_owned(),
        };
        s.push_str(&format!(", {what} to {}", place(path)));
    }
    if let Some(path) = output.rejects.as_deref() {
        s.push_str(&format!(
            ", {} to {}",
            count(summary.rejected, "reject"),
            place(path)
        ));
    }
    s
}

/// Where an output goes, as a closing line names it: its path, or "standard output" for none
/// and `-`.
pub fn place_of(output: Option<&Path>) -> String {
    match output {
        Some(path) if path.as_os_str() != "-" => path.display().to_string(),
        _ => "standard output".to_owned(),
    }
}
