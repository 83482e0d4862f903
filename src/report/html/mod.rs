//! The HTML form of the stats (`rdq-envelope stats --format html`): one self-contained triage
//! report, to mail or to attach to an incident. Rendering only: the figures are the library's
//! [`StatsOverview`] (the same reports `stats --format json` prints) and the run's books.
//!
//! The file loads nothing: inline CSS, inline SVG charts (`svg.rs`), one small inline script
//! (copy buttons for the command lines) that the page does not need to be read or printed, and
//! a content security policy that allows nothing else. Every string from the data is escaped
//! (`escape.rs`). Every number that is a figure of `stats --format json` (or of the books)
//! carries a `data-stat` marker, so that a test can hold the page to the JSON.

use std::fmt::Write as _;
use std::io::Write;

use sha2::{Digest, Sha256};

use crate::pipeline::Summary;
use crate::report::noun;

mod escape;
mod sections;
mod svg;

use crate::report::shell::shell_path;
use crate::report::stats::StatsOverview;
use escape::escape;
use sections::{books_section, breakdown_section, error_types_section, fingerprint_section};
use svg::{arrivals_section, histogram_section};

/// The most rows a breakdown (queues, statuses, `--by`) lists; the rest are summed in a row.
const BREAKDOWN_ROWS: usize = 25;
/// The most bars a histogram draws; the rest are summed in a note.
const HISTOGRAM_BARS: usize = 40;

/// What the report says about its run beside the figures.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The inputs as given (`-` for standard input), for the heading and the command lines
    /// the report shows; none reads as standard input.
    pub inputs: &'a [String],
    /// How many fingerprints and error types to list (`stats --top`).
    pub top: usize,
    /// When the report was made, as the page shows it (UTC, `2026-12-03T18:00:00Z`): the
    /// caller's, so that a build can pin it (`SOURCE_DATE_EPOCH`, [`made_at`]).
    pub made_at: &'a str,
}

/// The time a report made at `seconds` since 1970 shows: `2026-12-03T18:00:00Z` (UTC, to the
/// second). `None` past the years the crate's timestamps can write (0000 to 9999).
///
/// ```
/// use rdq_envelope::report::html::made_at;
/// assert_eq!(made_at(0).as_deref(), Some("1970-01-01T00:00:00Z"));
/// assert_eq!(made_at(1_796_320_800).as_deref(), Some("2026-12-03T18:00:00Z"));
/// assert_eq!(made_at(u64::MAX), None);
/// ```
pub fn made_at(seconds: u64) -> Option<String> {
    // 9999-12-31T23:59:59Z: the last second a four-digit year writes.
    const LAST: u64 = 253_402_300_799;
    if seconds > LAST {
        return None;
    }
    let mut text = Vec::with_capacity(24);
    crate::envelope::formats::push_timestamp(&mut text, seconds as i64 * 1000);
    let text = String::from_utf8(text).ok()?;
    // `...:00.000Z`: the milliseconds of a whole second say nothing.
    Some(format!("{}Z", text.strip_suffix(".000Z")?))
}

/// Writes the triage report of a `stats` run: `overview` is `StatsOp::overview` of an
/// operation made `with_overview` of status, queue and fingerprint (the sections the page
/// shows whatever it is grouped by; the example below), and `books` the summary
/// [`pipeline::run`] returned.
///
/// [`pipeline::run`]: crate::pipeline::run
///
/// ```
/// use rdq_envelope::envelope::{Producer, Submit};
/// use rdq_envelope::ops::{GroupBy, StatsOp};
/// use rdq_envelope::pipeline::{self, Outputs, PipelineOptions, Source};
/// use rdq_envelope::report::html::{write_html, Context};
/// use rdq_envelope::{EnvelopeRules, RuleOptions};
///
/// let t0 = "2024-05-01T12:00:00.000Z".parse()?;
/// let task = Producer::with_clock(move || t0).submit(Submit::new("mail", "send", b"{}".to_vec(), "application/json")?)?;
/// let mut line = Vec::new();
/// task.write_vec(&mut line);
/// let op = StatsOp::new(EnvelopeRules::new(RuleOptions::default())?, GroupBy::Queue)
///     .with_overview(&[GroupBy::Status, GroupBy::Queue, GroupBy::Fingerprint]);
/// let sources = vec![Source::Reader { name: "dlq".into(), reader: Box::new(std::io::Cursor::new(line)) }];
/// let outputs = Outputs::none();
/// let (books, total) = pipeline::run(sources, &op, PipelineOptions::default(), outputs, None)?;
///
/// let mut page = Vec::new();
/// let context = Context { inputs: &["dlq.jsonl".to_owned()], top: 10, made_at: "2026-12-03T18:00:00Z" };
/// write_html(&op.overview(&total, context.top, &books), &books, &context, &mut page)?;
/// let page = String::from_utf8(page)?;
/// assert!(page.starts_with("<!DOCTYPE html>"));
/// assert!(page.contains("<span class=\"n\" data-stat=\"envelopes\">1</span>"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_html(
    overview: &StatsOverview,
    books: &Summary,
    context: &Context<'_>,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    out.write_all(render(overview, books, context).as_bytes())
}

/// The script: copy buttons beside the command lines, and markers a test can read (the page
/// rendered; a script error happened).
const SCRIPT: &str = r#"
window.onerror = function () { document.documentElement.setAttribute("data-script-error", "yes"); };
document.querySelectorAll("pre.cmd").forEach(function (pre) {
  var button = document.createElement("button");
  button.type = "button";
  button.className = "copy";
  button.textContent = "Copy";
  button.addEventListener("click", function () {
    var text = pre.textContent;
    var done = function () { button.textContent = "Copied"; };
    var failed = function () {
      var range = document.createRange();
      range.selectNodeContents(pre);
      window.getSelection().removeAllRanges();
      window.getSelection().addRange(range);
      button.textContent = "Selected";
    };
    if (navigator.clipboard) { navigator.clipboard.writeText(text).then(done, failed); } else { failed(); }
  });
  pre.parentNode.appendChild(button);
});
document.documentElement.setAttribute("data-rendered", "yes");
"#;

const STYLE: &str = r#"
:root { --ink: #1d2330; --muted: #5b6475; --line: #d9dee7; --bar: #3a6ea5; --ok: #2e7d4f;
  --bad: #b3261e; --soft: #f4f6f9; color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1280px; padding: 20px 28px 40px; color: var(--ink);
  background: #fff; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue",
  Arial, "Noto Sans", "Liberation Sans", sans-serif; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono",
  "DejaVu Sans Mono", monospace; font-size: 12.5px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 0 0 10px; }
h2 small { font-weight: normal; color: var(--muted); }
header { border-bottom: 2px solid var(--ink); padding-bottom: 10px; margin-bottom: 18px; }
header p { margin: 2px 0; color: var(--muted); overflow-wrap: anywhere; }
header ul.inputs { margin: 2px 0 4px; padding-left: 20px; }
header ul.inputs code { overflow-wrap: anywhere; white-space: pre-wrap; }
section { margin: 0 0 22px; }
.grid { display: grid; grid-template-columns: 1fr 1fr; gap: 0 32px; }
.grid > section { min-width: 0; }
/* The cards in one row, and the code tables under them the page's width: a long table in a
   column beside the cards (or beside anything) leaves a blank column next to it. */
.books > * + * { margin-top: 12px; }
.cards { display: grid; grid-template-columns: repeat(4, minmax(0, 1fr)); gap: 12px; }
table.codes td.key, table.codes th:first-child { white-space: nowrap; }
table.codes td.barcell { width: 22%; }
td.examples { overflow-wrap: anywhere; color: var(--muted); }
.fp .dead { color: var(--bad); font-weight: 600; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 8px 16px; background: var(--soft); }
.card .n { display: block; font-size: 24px; font-weight: 600; font-variant-numeric: tabular-nums; }
.card .l { color: var(--muted); }
.card.ok .n { color: var(--ok); }
.card.bad .n { color: var(--bad); }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 3px 8px 3px 0; border-bottom: 1px solid var(--line);
  vertical-align: top; }
th { font-weight: 600; color: var(--muted); font-size: 12.5px; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.key { overflow-wrap: anywhere; }
td.barcell { width: 38%; padding-left: 8px; }
.hbar { display: block; height: 12px; min-width: 2px; margin-top: 4px; background: var(--bar);
  border-radius: 2px; }
.note { color: var(--muted); font-size: 12.5px; margin: 6px 0 0; }
svg { display: block; width: 100%; height: auto; }
svg text { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif;
  fill: var(--muted); font-size: 12px; }
svg .axis { stroke: var(--muted); stroke-width: 1; }
svg .grid { stroke: var(--line); stroke-width: 1; }
svg rect.bar { fill: var(--bar); }
svg text.count { fill: var(--ink); font-size: 11px; }
.fp { border: 1px solid var(--line); border-left: 4px solid var(--bad); border-radius: 6px;
  padding: 8px 12px; margin: 0 0 10px; }
.fp.none { border-left-color: var(--ok); }
.fp .head { display: flex; flex-wrap: wrap; gap: 4px 14px; align-items: baseline; }
.fp .count { font-size: 18px; font-weight: 600; font-variant-numeric: tabular-nums; }
.fp .type { font-weight: 600; overflow-wrap: anywhere; }
.fp .template { margin: 4px 0; padding: 4px 8px; background: var(--soft); border-radius: 4px;
  white-space: pre-wrap; overflow-wrap: anywhere; }
.fp dl { display: grid; grid-template-columns: max-content 1fr; gap: 1px 12px; margin: 4px 0; }
.fp dt { color: var(--muted); }
.fp dd { margin: 0; overflow-wrap: anywhere; }
.cmdline { display: flex; gap: 8px; align-items: flex-start; margin-top: 4px; }
pre.cmd { flex: 1; margin: 0; padding: 4px 8px; background: #1d2330; color: #f4f6f9;
  border-radius: 4px; white-space: pre-wrap; overflow-wrap: anywhere; }
button.copy { font: inherit; font-size: 12px; padding: 3px 10px; border: 1px solid var(--line);
  border-radius: 4px; background: #fff; cursor: pointer; }
footer { border-top: 1px solid var(--line); padding-top: 8px; color: var(--muted);
  font-size: 12.5px; }
@media (max-width: 900px) { .grid { grid-template-columns: 1fr; }
  .cards { grid-template-columns: 1fr 1fr; } }
@media print {
  @page { margin: 12mm; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  body { max-width: none; padding: 0; font-size: 10pt; }
  .grid { grid-template-columns: 1fr 1fr; }
  section, figure, .fp, tr, svg { break-inside: avoid; page-break-inside: avoid; }
  h2 { break-after: avoid; page-break-after: avoid; }
  button.copy { display: none; }
  pre.cmd { background: #fff; color: #000; border: 1px solid #999; }
}
"#;

/// The whole page.
fn render(overview: &StatsOverview, books: &Summary, context: &Context<'_>) -> String {
    let mut h = String::with_capacity(64 * 1024);
    let first = &overview.reports[0];
    let find = |by: &str| overview.reports.iter().find(|r| r.by == by);
    let inputs = if context.inputs.is_empty() {
        vec!["-".to_owned()]
    } else {
        context.inputs.to_vec()
    };
    let named = inputs.join(", ");
    let script_hash = {
        use base64_simd::STANDARD;
        STANDARD.encode_to_string(Sha256::digest(SCRIPT.as_bytes()))
    };

    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\" data-rendered=\"no\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'sha256-{script_hash}'\">\n\
         <meta name=\"generator\" content=\"rdq-envelope {}\">\n\
         <title>Triage report: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        env!("CARGO_PKG_VERSION"),
        escape(&named),
    );

    // The heading: when it was made, and every input named in full (a long name wraps).
    let _ = writeln!(
        h,
        "<header>\n<h1>Triage report</h1>\n<p>Made <time data-stat=\"made_at\" \
         datetime=\"{made}\">{made}</time> (UTC) from {} {}:</p>\n<ul class=\"inputs\">",
        inputs.len(),
        noun(inputs.len() as u64, "input"),
        made = escape(context.made_at),
    );
    for input in &inputs {
        let _ = writeln!(
            h,
            "<li><code data-input>{}</code></li>",
            escape(if input == "-" {
                "- (standard input)"
            } else {
                input
            })
        );
    }
    h.push_str("</ul>\n");
    match &first.created_at {
        Some(range) => {
            let _ = writeln!(
                h,
                "<p>created_at <span class=\"mono\" data-stat=\"created_at.first\">{}</span> .. \
                 <span class=\"mono\" data-stat=\"created_at.last\">{}</span> (UTC)</p>",
                escape(&range.first),
                escape(&range.last)
            );
        }
        None => h.push_str("<p>No valid envelopes.</p>\n"),
    }
    h.push_str("</header>\n");

    let files: Vec<String> = inputs.iter().map(|i| shell_path(i)).collect();
    books_section(
        &mut h,
        first,
        books,
        &overview.reject_examples,
        &files.join(" "),
    );
    arrivals_section(&mut h, &overview.arrivals, first.envelopes);

    h.push_str("<div class=\"grid\">\n");
    for by in ["status", "queue"] {
        if let Some(report) = find(by) {
            breakdown_section(&mut h, report);
        }
    }
    h.push_str("</div>\n");

    if let Some(report) = find("fingerprint") {
        fingerprint_section(&mut h, report, context.top, &files.join(" "));
    }

    h.push_str("<div class=\"grid\">\n");
    histogram_section(
        &mut h,
        "attempts",
        "Attempts",
        "envelopes by their number of attempt records",
        &first.attempts,
        first.attempts_other,
    );
    histogram_section(
        &mut h,
        "redrives",
        "Redrives",
        "envelopes by redrive_count",
        &first.redrives,
        first.redrives_other,
    );
    h.push_str("</div>\n");

    error_types_section(&mut h, first);

    if !matches!(first.by, "status" | "queue" | "fingerprint") {
        breakdown_section(&mut h, first);
    }

    let _ = write!(
        h,
        "<footer>Made by rdq-envelope {} <code>stats --format html</code> from {}. The figures \
         are those of <code>stats --format json</code>; times are UTC.</footer>\n\
         <script>{SCRIPT}</script>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION"),
        escape(&named),
    );
    h
}
