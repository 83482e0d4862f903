//! Renderings at the edge (docs/cli.md#outputs): the human and JSON forms of a line's diagnostics,
//! the rejects record, and the run summary. Everything else in the crate deals in data.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::ser::{SerializeMap, Serializer};

use serde::{Deserialize, Deserializer, Serialize};

use crate::diagnostic::{Diagnostic, ErrorCode};
use crate::envelope::Verdict;
use crate::framing::{Line, LineKind};

/// How many leading bytes of an over-long line a rejects record holds.
pub const REJECT_RAW_BYTES: usize = 65_536;

impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl Serialize for Diagnostic {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("code", &self.code)?;
        m.serialize_entry("path", &self.path)?;
        m.serialize_entry("message", &self.message)?;
        m.end()
    }
}

/// Where a line came from: the source as given (`<stdin>` for standard input), its number and
/// the offset of its first byte.
#[derive(Debug, Clone, Copy)]
pub struct Position<'a> {
    /// The path as given, or `<stdin>`.
    pub source: &'a str,
    /// 1-based line number.
    pub line: u64,
    /// Byte offset of the line in the decompressed stream.
    pub offset: u64,
}

fn json_line<T: Serialize>(out: &mut impl Write, value: &T) -> io::Result<()> {
    serde_json::to_writer(&mut *out, value).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

/// The human form: `SOURCE:LINE: POINTER: CODE: message`, one row per error (an empty pointer
/// printed as `<line>`), then, with `warnings`, `SOURCE:LINE: POINTER: warning: CODE: message`.
pub fn write_human(
    out: &mut impl Write,
    at: Position<'_>,
    verdict: &Verdict,
    warnings: bool,
) -> io::Result<()> {
    let pointer = |d: &Diagnostic| {
        if d.path.is_empty() {
            "<line>".to_owned()
        } else {
            d.path.clone()
        }
    };
    let warnings: &[Diagnostic] = if warnings { &verdict.warnings } else { &[] };
    let rows = verdict
        .errors
        .iter()
        .map(|d| ("", d))
        .chain(warnings.iter().map(|d| ("warning: ", d)));
    for (label, d) in rows {
        writeln!(
            out,
            "{}:{}: {}: {label}{}: {}",
            at.source,
            at.line,
            pointer(d),
            d.code,
            d.message
        )?;
    }
    Ok(())
}

#[derive(Serialize)]
struct VerdictRecord<'a> {
    source: &'a str,
    line: u64,
    offset: u64,
    id: Option<&'a str>,
    errors: &'a [Diagnostic],
    warnings: &'a [Diagnostic],
}

/// The JSON form: `{"source", "line", "offset", "id", "errors", "warnings"}` on one line;
/// `id` is the decoded `id` member when it is a string, else null. Without `warnings`, the
/// warnings array is empty.
pub fn write_json(
    out: &mut impl Write,
    at: Position<'_>,
    id: Option<&str>,
    verdict: &Verdict,
    warnings: bool,
) -> io::Result<()> {
    let record = VerdictRecord {
        source: at.source,
        line: at.line,
        offset: at.offset,
        id,
        errors: &verdict.errors,
        warnings: if warnings { &verdict.warnings } else { &[] },
    };
    json_line(out, &record)
}

/// `bytes` cut to at most [`REJECT_RAW_BYTES`]: the cut moves back, over at most 3 bytes, while
/// the byte after it is a UTF-8 continuation byte.
fn cut_raw(bytes: &[u8]) -> &[u8] {
    if bytes.len() <= REJECT_RAW_BYTES {
        return bytes;
    }
    let mut cut = REJECT_RAW_BYTES;
    while cut > REJECT_RAW_BYTES - 3 && matches!(bytes[cut], 0x80..=0xBF) {
        cut -= 1;
    }
    &bytes[..cut]
}

#[derive(Serialize)]
struct RejectRecord<'a> {
    source: &'a str,
    line: u64,
    offset: u64,
    errors: &'a [Diagnostic],
    #[serde(skip_serializing_if = "Option::is_none")]
    raw: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    raw_base64: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    raw_truncated: bool,
}

/// The rejects record: `{"source", "line", "offset", "errors", "raw"}`, with `raw_base64`
/// instead of `raw` when the bytes are not UTF-8, and for an over-long line its first 65,536
/// bytes cut back to a UTF-8 boundary and `"raw_truncated": true` when bytes were left out.
pub fn write_reject(
    out: &mut impl Write,
    at: Position<'_>,
    line: &Line<'_>,
    errors: &[Diagnostic],
) -> io::Result<()> {
    let raw = if line.kind == LineKind::TooLong {
        cut_raw(line.content)
    } else {
        line.content
    };
    let text = std::str::from_utf8(raw).ok();
    let record = RejectRecord {
        source: at.source,
        line: at.line,
        offset: at.offset,
        errors,
        raw: text,
        raw_base64: text
            .is_none()
            .then(|| base64_simd::STANDARD.encode_to_string(raw)),
        raw_truncated: (raw.len() as u64) < line.len,
    };
    json_line(out, &record)
}

/// The run's books (docs/cli.md#summary-and-the-books, `--summary`). They balance:
/// `lines = blank + emitted + rejected + filtered_out`.
///
/// It reads back from its own JSON (`batch` keeps each shard's in its manifest); a code the
/// crate does not know is an error there.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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

    /// The summary as one JSON line.
    pub fn write_json(&self, out: &mut impl Write) -> io::Result<()> {
        json_line(out, self)
    }

    /// The one-line human summary.
    pub fn human(&self) -> String {
        let mut s = format!(
            "{} lines: {} valid, {} rejected, {} blank",
            self.lines, self.valid, self.rejected, self.blank
        );
        if self.filtered_out > 0 {
            s.push_str(&format!(", {} filtered out", self.filtered_out));
        }
        let mb = self.bytes_in as f64 / 1e6;
        s.push_str(&format!(
            " ({mb:.1} MB in {:.2} s, {:.0} MB/s)",
            self.seconds,
            mb / self.seconds.max(1e-9)
        ));
        s
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

    fn too_long(content: &[u8], len: u64) -> Line<'_> {
        Line {
            number: 1,
            offset: 0,
            content,
            len,
            kind: LineKind::TooLong,
        }
    }

    fn record(line: &Line<'_>) -> serde_json::Value {
        let mut out = Vec::new();
        let at = Position {
            source: "s",
            line: 1,
            offset: 0,
        };
        write_reject(&mut out, at, line, &[]).unwrap();
        serde_json::from_slice(&out).unwrap()
    }

    #[test]
    fn raw_is_cut_back_to_a_utf8_boundary() {
        // "é" is C3 A9: a cut between its two bytes moves back by one.
        let mut bytes = vec![b'a'; REJECT_RAW_BYTES - 1];
        bytes.extend_from_slice("é".as_bytes());
        let r = record(&too_long(&bytes, 100_000));
        assert_eq!(r["raw"].as_str().unwrap().len(), REJECT_RAW_BYTES - 1);
        assert_eq!(r["raw_truncated"], true);
        // A boundary exactly at the cut keeps all 65,536 bytes.
        let bytes = vec![b'a'; REJECT_RAW_BYTES + 1];
        let r = record(&too_long(&bytes, 100_000));
        assert_eq!(r["raw"].as_str().unwrap().len(), REJECT_RAW_BYTES);
        // Nothing left out: no raw_truncated.
        let r = record(&too_long(b"abc", 3));
        assert!(r.get("raw_truncated").is_none());
    }

    #[test]
    fn raw_base64_for_bytes_that_are_not_utf8() {
        let line = Line {
            number: 1,
            offset: 0,
            content: b"{\xff}",
            len: 6,
            kind: LineKind::Content,
        };
        let mut bytes = line;
        bytes.content = b"\xff";
        let r = record(&Line {
            content: &[0xff, b'x'],
            len: 2,
            ..line
        });
        assert_eq!(r["raw_base64"], "/3g=");
        assert!(r.get("raw").is_none());
        let _ = bytes;
    }

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
    fn a_summary_reads_back_from_its_json() {
        let d = |c| Diagnostic::new(c, "", "");
        let mut s = Summary {
            lines: 2,
            rejected: 1,
            valid: 1,
            emitted: 1,
            bytes_in: 7,
            seconds: 0.25,
            ..Summary::default()
        };
        s.tally_errors(&[d(ErrorCode::WrongType)]);
        s.tally_warnings(&[d(ErrorCode::IdTimeMismatch)]);
        let mut json = Vec::new();
        s.write_json(&mut json).unwrap();
        let back: Summary = serde_json::from_slice(&json).unwrap();
        assert_eq!(back, s);
        let unknown = String::from_utf8(json)
            .unwrap()
            .replace("WRONG_TYPE", "NO_SUCH_CODE");
        assert!(serde_json::from_str::<Summary>(&unknown).is_err());
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
