//! The run's books: what every run over envelopes adds up, line by line, and what a batch keeps
//! per shard. Their renderings (the JSON line, the line for people) are in [`crate::report`].

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

use crate::diagnostic::{Diagnostic, ErrorCode};
use crate::framing::InputKind;

/// The run's books (docs/cli.md#summary-and-the-books, `--summary`). They balance:
/// `lines = blank + emitted + rejected + filtered_out`.
///
/// It reads back from its own JSON (`batch` keeps each shard's in its manifest); a code the
/// crate does not know is an error there. `#[non_exhaustive]`: read its fields; the pipeline
/// makes it (`Summary::default()` is the empty books).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Summary {
    /// Every line, blank ones included.
    pub lines: u64,
    /// Blank lines.
    pub blank: u64,
    /// Lines that pass every rule the command applies (`emitted + filtered_out`).
    pub valid: u64,
    /// Lines written to the primary output (for `validate`, the valid lines).
    pub emitted: u64,
    /// Lines with at least one error.
    pub rejected: u64,
    /// Valid lines a filter left out.
    pub filtered_out: u64,
    /// Rejected lines with at least one error of each code.
    #[serde(deserialize_with = "known_codes")]
    pub by_code: BTreeMap<&'static str, u64>,
    /// Valid lines with at least one warning of each code.
    #[serde(deserialize_with = "known_codes")]
    pub warnings_by_code: BTreeMap<&'static str, u64>,
    /// Input bytes after decompression, BOM and terminators included.
    pub bytes_in: u64,
    /// Wall-clock time of the run.
    pub seconds: f64,
    /// What the folders among the inputs held that was not read, each with why
    /// ([`expand_folders`](crate::io::expand_folders)): named, never counted in `lines`. Set
    /// by whoever expanded the folders; absent from the JSON when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<crate::io::Skipped>,
    /// The inputs whose first line says they are another kind of file (a JSON array, a CSV
    /// export), each named with what it looks like: for a hint to people, not in the books'
    /// JSON.
    #[serde(skip)]
    pub not_json_lines: Vec<(String, InputKind)>,
}

impl Summary {
    /// Tallies a rejected line's codes in `by_code`: once per distinct code. (The line itself
    /// is counted in `rejected` by whoever decides it is rejected.)
    pub fn tally_errors(&mut self, errors: &[Diagnostic]) {
        count_distinct(&mut self.by_code, errors);
    }

    /// Tallies a valid line's warnings in `warnings_by_code`: once per distinct code.
    pub fn tally_warnings(&mut self, warnings: &[Diagnostic]) {
        count_distinct(&mut self.warnings_by_code, warnings);
    }

    /// Adds `other`'s counts to these (not `seconds`: runs of parts overlap in time).
    pub fn merge(&mut self, other: &Summary) {
        self.lines += other.lines;
        self.blank += other.blank;
        self.valid += other.valid;
        self.emitted += other.emitted;
        self.rejected += other.rejected;
        self.filtered_out += other.filtered_out;
        for (mine, theirs) in [
            (&mut self.by_code, &other.by_code),
            (&mut self.warnings_by_code, &other.warnings_by_code),
        ] {
            for (code, n) in theirs {
                *mine.entry(code).or_default() += n;
            }
        }
        self.bytes_in += other.bytes_in;
        self.not_json_lines
            .extend(other.not_json_lines.iter().cloned());
        self.skipped.extend(other.skipped.iter().cloned());
    }

    /// Zero counts, keeping nothing but the type.
    pub fn clear(&mut self) {
        *self = Summary::default();
    }

    /// Whether `lines = blank + emitted + rejected + filtered_out`.
    pub fn balances(&self) -> bool {
        self.lines == self.blank + self.emitted + self.rejected + self.filtered_out
            && self.valid == self.emitted + self.filtered_out
    }
}

/// A map of code counts read back: each key must be an [`ErrorCode`]'s spelling.
fn known_codes<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<&'static str, u64>, D::Error> {
    BTreeMap::<String, u64>::deserialize(d)?
        .into_iter()
        .map(|(name, n)| match ErrorCode::from_name(&name) {
            Some(code) => Ok((code.as_str(), n)),
            None => Err(serde::de::Error::custom(format!("unknown code {name:?}"))),
        })
        .collect()
}

fn count_distinct(counts: &mut BTreeMap<&'static str, u64>, diagnostics: &[Diagnostic]) {
    for (i, d) in diagnostics.iter().enumerate() {
        if diagnostics[..i].iter().all(|e| e.code != d.code) {
            *counts.entry(d.code.as_str()).or_default() += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_counts_each_code_once_per_line() {
        let d = |c| Diagnostic::new(c, "", "");
        let mut s = Summary {
            lines: 2,
            rejected: 2,
            ..Summary::default()
        };
        s.tally_errors(&[
            d(ErrorCode::WrongType),
            d(ErrorCode::WrongType),
            d(ErrorCode::InvalidId),
        ]);
        s.tally_errors(&[d(ErrorCode::WrongType)]);
        assert_eq!(s.by_code["WRONG_TYPE"], 2);
        assert_eq!(s.by_code["INVALID_ID"], 1);
        assert!(s.balances());
    }

    #[test]
    fn merged_summaries_add_up() {
        let d = |c| Diagnostic::new(c, "", "");
        let mut a = Summary {
            lines: 3,
            blank: 1,
            valid: 1,
            emitted: 1,
            rejected: 1,
            bytes_in: 10,
            ..Summary::default()
        };
        a.tally_errors(&[d(ErrorCode::WrongType)]);
        let mut b = a.clone();
        b.tally_warnings(&[d(ErrorCode::IdTimeMismatch)]);
        a.merge(&b);
        assert_eq!(
            (a.lines, a.blank, a.valid, a.rejected, a.bytes_in),
            (6, 2, 2, 2, 20)
        );
        assert_eq!(a.by_code["WRONG_TYPE"], 2);
        assert_eq!(a.warnings_by_code["ID_TIME_MISMATCH"], 1);
        assert!(a.balances());
    }
}
