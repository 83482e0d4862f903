//! Renderings at the edge (docs/cli.md#outputs): the human and JSON forms of a line's diagnostics,
//! the rejects record, the run summary, and the stats' HTML triage report ([`html`]).
//! Everything else in the crate deals in data.

use std::io::{self, Write};

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use crate::diagnostic::{Diagnostic, ErrorCode};
use crate::envelope::Verdict;
use crate::framing::{Line, LineKind};
use crate::pipeline::Summary;

pub mod html;
#[doc(hidden)]
pub mod shell;
pub(crate) mod stats;

/// How many leading bytes of an over-long line a rejects record holds.
pub(crate) const REJECT_RAW_BYTES: usize = 65_536;

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
    write_human_styled(out, at, verdict, warnings, false)
}

/// [`write_human`], and with `colour` the pointer in bold and the code in bold red (a warning's
/// `warning: CODE` in bold yellow), as ANSI escapes for a terminal. Without `colour`, the same
/// bytes as [`write_human`].
pub fn write_human_styled(
    out: &mut impl Write,
    at: Position<'_>,
    verdict: &Verdict,
    warnings: bool,
    colour: bool,
) -> io::Result<()> {
    let [bold, red, yellow, reset] = match colour {
        true => ["\x1b[1m", "\x1b[1;31m", "\x1b[1;33m", "\x1b[0m"],
        false => [""; 4],
    };
    let warnings: &[Diagnostic] = if warnings { &verdict.warnings } else { &[] };
    let rows = verdict
        .errors
        .iter()
        .map(|d| ("", red, d))
        .chain(warnings.iter().map(|d| ("warning: ", yellow, d)));
    for (label, code_style, d) in rows {
        writeln!(
            out,
            "{}:{}: {bold}{}{reset}: {code_style}{label}{}{reset}: {}",
            at.source,
            at.line,
            d.shown_path(),
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

/// `singular`, or its plural with an `s`, as the count `n` calls for: a count and its noun in
/// text for people ("1 line", "2 lines", "0 lines").
///
/// ```
/// use rdq_envelope::report::noun;
/// assert_eq!(format!("{} {}", 1, noun(1, "line")), "1 line");
/// assert_eq!(format!("{} {}", 0, noun(0, "envelope")), "0 envelopes");
/// ```
#[doc(hidden)]
pub fn noun(n: u64, singular: &str) -> String {
    match n {
        1 => singular.to_owned(),
        _ => format!("{singular}s"),
    }
}

/// The renderings of the run's books: its JSON line (`--summary`) and its line for people.
impl Summary {
    /// The summary as one JSON line.
    pub fn write_json(&self, out: &mut impl Write) -> io::Result<()> {
        json_line(out, self)
    }

    /// The one-line human summary: [`human_counts`](Self::human_counts) then
    /// [`human_rate`](Self::human_rate).
    pub fn human(&self) -> String {
        format!("{}{}", self.human_counts(), self.human_rate())
    }

    /// The books for people, counts with thousands separators: `1,300 lines: 1,293 valid, 7
    /// rejected, 0 blank`, and `, N filtered out` when some were.
    pub fn human_counts(&self) -> String {
        let mut s = format!(
            "{} {}: {} valid, {} rejected, {} blank",
            thousands(self.lines),
            noun(self.lines, "line"),
            thousands(self.valid),
            thousands(self.rejected),
            thousands(self.blank)
        );
        if self.filtered_out > 0 {
            s.push_str(&format!(", {} filtered out", thousands(self.filtered_out)));
        }
        s
    }

    /// The lines counted by code, for people, the block `--stats` prints after the closing
    /// line (as `rg --stats` does): the rejected lines by error code, most first, then the
    /// valid lines by warning code when any has one. A line counts once for each code it broke.
    ///
    /// ```
    /// # use rdq_envelope::pipeline::Summary;
    /// let mut books = Summary::default();
    /// books.by_code.insert("MALFORMED_JSON", 1200);
    /// books.by_code.insert("INVALID_ID", 3);
    /// assert_eq!(
    ///     books.human_codes(),
    ///     "rejected lines by code (rdq-envelope explain CODE says what one means):\n  \
    ///      1,200  MALFORMED_JSON\n      3  INVALID_ID\n"
    /// );
    /// assert_eq!(Summary::default().human_codes(), "rejected lines by code: none\n");
    /// ```
    pub fn human_codes(&self) -> String {
        let mut block = String::new();
        let heading = "rejected lines by code (rdq-envelope explain CODE says what one means)";
        for (heading, counts) in [
            (heading, &self.by_code),
            ("valid lines with warnings, by code", &self.warnings_by_code),
        ] {
            if counts.is_empty() {
                if block.is_empty() {
                    block.push_str("rejected lines by code: none\n");
                }
                continue;
            }
            let mut rows: Vec<(String, &str)> = counts
                .iter()
                .map(|(code, n)| (thousands(*n), *code))
                .collect();
            rows.sort_by(|a, b| counts[b.1].cmp(&counts[a.1]).then(a.1.cmp(b.1)));
            let width = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(0).max(5);
            block.push_str(heading);
            block.push_str(":\n");
            for (n, code) in rows {
                block.push_str(&format!("  {n:>width$}  {code}\n"));
            }
        }
        block
    }

    /// How much was read, how fast: ` (1.0 MB in 0.09 s, 11 MB/s)`.
    pub fn human_rate(&self) -> String {
        let mb = self.bytes_in as f64 / 1e6;
        format!(
            " ({mb:.1} MB in {:.2} s, {:.0} MB/s)",
            self.seconds,
            mb / self.seconds.max(1e-9)
        )
    }
}

/// `1234567` as `1,234,567`: a count for people, as the stats tables and the HTML report
/// print it.
///
/// ```
/// assert_eq!(rdq_envelope::report::thousands(1234567), "1,234,567");
/// ```
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// `part` as a share of `whole`, `12.3%` (`-` of nothing), as the stats tables and the HTML
/// report print it.
///
/// ```
/// assert_eq!(rdq_envelope::report::percent(1, 8), "12.5%");
/// assert_eq!(rdq_envelope::report::percent(1, 0), "-");
/// ```
pub fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".into();
    }
    format!("{:.1}%", part as f64 * 100.0 / whole as f64)
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
}
