//! The HTML form of `stats` (`--format html`): one self-contained triage report, to mail or to
//! attach to an incident. Rendering only: the figures are the library's [`StatsOverview`], the
//! same reports `--format json` prints, and the run's books.
//!
//! The file loads nothing: inline CSS, inline SVG charts, one small inline script (copy buttons
//! for the command lines) that the page does not need to be read or printed, and a content
//! security policy that allows nothing else. Every string from the data is escaped
//! ([`escape`]). Every number that is a figure of `stats --format json` (or of the books)
//! carries a `data-stat` marker, so that a test can hold the page to the JSON.

use std::fmt::Write as _;
use std::io::Write;

use sha2::{Digest, Sha256};

use rdq_envelope::ops::{Arrivals, Bucket, Group, StatsOverview, StatsReport, MAX_KEYS};
use rdq_envelope::pipeline::Summary;
use rdq_envelope::report::noun;

use super::stats_table::{percent, thousands};

/// The most rows a breakdown (queues, statuses, `--by`) lists; the rest are summed in a row.
const BREAKDOWN_ROWS: usize = 25;
/// The most bars a histogram draws; the rest are summed in a note.
const HISTOGRAM_BARS: usize = 40;

/// What the report says about its run beside the figures.
pub struct Context<'a> {
    /// The inputs as given (`-` for standard input), for the heading and the command lines.
    pub inputs: &'a [String],
    /// How many fingerprints and error types to list (`--top`).
    pub top: usize,
}

/// Writes the report.
pub fn write_html(
    overview: &StatsOverview,
    books: &Summary,
    context: &Context<'_>,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    out.write_all(render(overview, books, context).as_bytes())
}

/// `text` made safe in HTML text and in quoted attribute values: `& < > " '` as character
/// references, and control characters (which HTML does not allow) as `�`.
pub fn escape(text: &str) -> std::borrow::Cow<'_, str> {
    let special = |c: char| {
        matches!(c, '&' | '<' | '>' | '"' | '\'') || (c.is_control() && c != '\n' && c != '\t')
    };
    if !text.contains(special) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if special(c) => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out.into()
}

/// A word for a shell, quoted when it needs to be (for the command lines shown).
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./:=@%+,-".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
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
section { margin: 0 0 22px; }
.grid { display: grid; grid-template-columns: 1fr 1fr; gap: 0 32px; }
.grid > section { min-width: 0; }
.books { display: grid; grid-template-columns: minmax(0, 5fr) minmax(0, 7fr); gap: 12px 32px;
  align-items: start; }
.cards { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
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
@media (max-width: 900px) { .grid, .books { grid-template-columns: 1fr; } }
@media print {
  @page { margin: 12mm; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  body { max-width: none; padding: 0; font-size: 10pt; }
  .grid, .books { grid-template-columns: 1fr 1fr; }
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

    // The heading.
    let _ = write!(
        h,
        "<header>\n<h1>Triage report</h1>\n<p>{}</p>\n",
        escape(&named)
    );
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

    let files: Vec<String> = inputs.iter().map(|i| shell_word(i)).collect();
    books_section(&mut h, first, books, &files.join(" "));
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

/// The counts and the books: lines, valid, rejected (by code), blank.
fn books_section(h: &mut String, report: &StatsReport, books: &Summary, files: &str) {
    h.push_str(
        "<section id=\"books\">\n<h2>The books</h2>\n<div class=\"books\">\n\
         <div class=\"cards\">\n",
    );
    let card = |h: &mut String, class: &str, stat: &str, n: u64, label: &str| {
        let _ = writeln!(
            h,
            "<div class=\"card {class}\"><span class=\"n\" data-stat=\"{stat}\">{}</span>\
             <span class=\"l\">{label}</span></div>",
            thousands(n)
        );
    };
    card(h, "", "lines", report.lines, "lines read");
    card(h, "ok", "envelopes", report.envelopes, "valid envelopes");
    card(
        h,
        if report.rejected > 0 { "bad" } else { "" },
        "rejected",
        report.rejected,
        "rejected lines",
    );
    card(h, "", "blank", report.blank, "blank lines");
    h.push_str("</div>\n<div>\n");
    for (title, stat, counts) in [
        ("Rejected lines by error code", "by_code", &books.by_code),
        (
            "Valid lines with warnings, by code",
            "warnings_by_code",
            &books.warnings_by_code,
        ),
    ] {
        if counts.is_empty() {
            continue;
        }
        let mut rows: Vec<(&&str, &u64)> = counts.iter().collect();
        rows.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
        let largest = rows.first().map_or(0, |r| *r.1);
        let _ = writeln!(
            h,
            "<table class=\"codes\">\n<tr><th>{title}</th><th class=\"num\">lines</th>\
             <th></th></tr>"
        );
        for (code, &n) in rows {
            let _ = writeln!(
                h,
                "<tr><td class=\"key mono\">{}</td><td class=\"num\" data-stat=\"{stat}\" \
                 data-key=\"{}\">{}</td><td class=\"barcell\">{}</td></tr>",
                escape(code),
                escape(code),
                thousands(n),
                bar(n, largest)
            );
        }
        h.push_str("</table>\n");
    }
    if report.rejected > 0 {
        let command = format!("rdq-envelope validate {files}");
        let _ = writeln!(
            h,
            "<p class=\"note\">Each rejected line, with its position and reasons:</p>\n\
             <div class=\"cmdline\"><pre class=\"cmd\">{}</pre></div>",
            escape(&command)
        );
    }
    if books.by_code.is_empty() && books.warnings_by_code.is_empty() && report.rejected == 0 {
        h.push_str("<p class=\"note\">Every line is valid or blank.</p>\n");
    }
    h.push_str("</div>\n</div>\n</section>\n");
}

/// A bar for a table cell, `n` against `largest`.
fn bar(n: u64, largest: u64) -> String {
    if n == 0 || largest == 0 {
        return String::new();
    }
    let width = (n as f64 * 100.0 / largest as f64).max(0.5);
    format!("<span class=\"hbar\" style=\"width:{width:.1}%\"></span>")
}

/// A breakdown of the envelopes by one grouping, as a table with bars.
fn breakdown_section(h: &mut String, report: &StatsReport) {
    let (title, one, noun) = match report.by {
        "queue" => ("Queues", "queue", "queues"),
        "status" => ("Status", "status", "statuses"),
        "handler" => ("Handlers", "handler", "handlers"),
        "error_type" => ("Last error type", "error type", "error types"),
        "outcome" => ("Last attempt's outcome", "outcome", "outcomes"),
        "day" => ("Days", "day", "days"),
        other => (other, "group", "groups"),
    };
    let by = report.by;
    let _ = writeln!(
        h,
        "<section id=\"by-{by}\">\n<h2>{title} <small>envelopes by {by}</small></h2>\n<table>\n\
         <tr><th>{by}</th><th class=\"num\">envelopes</th><th class=\"num\">share</th>\
         <th></th></tr>"
    );
    let largest = report.groups.first().map_or(0, |g| g.count);
    for group in report.groups.iter().take(BREAKDOWN_ROWS) {
        let (label, key_attr) = group_key(group);
        let _ = writeln!(
            h,
            "<tr><td class=\"key\">{label}</td><td class=\"num\" data-stat=\"group\" \
             data-by=\"{by}\"{key_attr}>{}</td><td class=\"num\">{}</td>\
             <td class=\"barcell\">{}</td></tr>",
            thousands(group.count),
            percent(group.count, report.envelopes),
            bar(group.count, largest)
        );
    }
    h.push_str("</table>\n");
    rest_note(h, &report.groups, BREAKDOWN_ROWS, by, [one, noun]);
    if report.groups_other > 0 {
        let _ = writeln!(
            h,
            "<p class=\"note\">Past the first {} {noun}: <span data-stat=\"groups_other\" \
             data-by=\"{by}\">{}</span> {}.</p>",
            thousands(MAX_KEYS as u64),
            thousands(report.groups_other),
            envelopes_noun(report.groups_other)
        );
    }
    if report.groups.is_empty() {
        h.push_str("<p class=\"note\">No valid envelopes.</p>\n");
    }
    h.push_str("</section>\n");
}

/// A note of the groups a list leaves out: how many, and their envelopes.
/// `[one, many]` are the group's noun, singular and plural.
fn rest_note(h: &mut String, groups: &[Group], shown: usize, by: &str, [one, many]: [&str; 2]) {
    if groups.len() <= shown {
        return;
    }
    let rest = &groups[shown..];
    let envelopes: u64 = rest.iter().map(|g| g.count).sum();
    let (noun, hold) = match rest.len() {
        1 => (one, "holds"),
        _ => (many, "hold"),
    };
    let _ = writeln!(
        h,
        "<p class=\"note\"><span data-stat=\"groups_rest\" data-by=\"{by}\">{}</span> more \
         {noun} {hold} <span data-stat=\"groups_rest_envelopes\" data-by=\"{by}\">{}</span> \
         {} (<code>stats --by {by}</code> lists them all).</p>",
        thousands(rest.len() as u64),
        thousands(envelopes),
        envelopes_noun(envelopes)
    );
}

/// "envelope" or "envelopes", as `n` calls for.
fn envelopes_noun(n: u64) -> String {
    noun(n, "envelope")
}

/// A bucket width with its article, after "of": "a minute", "an hour", "3 hours".
fn of_width(width: &str) -> String {
    match width.as_bytes().first() {
        Some(b'0'..=b'9') => width.to_owned(),
        _ if width.starts_with("hour") => format!("an {width}"),
        _ => format!("a {width}"),
    }
}

/// A group's label for people, and its key as a `data-key` attribute (none for no key).
fn group_key(group: &Group) -> (String, String) {
    match &group.key {
        Some(key) => (
            escape(key).into_owned(),
            format!(" data-key=\"{}\"", escape(key)),
        ),
        None => ("<em>(none)</em>".to_owned(), String::new()),
    }
}

/// The top error fingerprints, each with what it is, where and when it was seen, sample IDs
/// and the command line that selects its envelopes.
fn fingerprint_section(h: &mut String, report: &StatsReport, top: usize, files: &str) {
    let _ = writeln!(
        h,
        "<section id=\"fingerprints\">\n<h2>Top error fingerprints <small>envelopes by their \
         last error's type and normalised message</small></h2>"
    );
    for group in report.groups.iter().take(top) {
        let triage = group.triage.as_ref();
        let class = if group.key.is_some() { "fp" } else { "fp none" };
        let (label, key_attr) = match &group.key {
            Some(key) => (
                format!("<code>{}</code>", escape(key)),
                format!(" data-key=\"{}\"", escape(key)),
            ),
            None => ("<em>no error</em>".to_owned(), String::new()),
        };
        let kind = triage
            .and_then(|t| t.error_type.as_deref())
            .map_or_else(|| "(no error recorded)".into(), escape);
        let _ = writeln!(
            h,
            "<div class=\"{class}\">\n<div class=\"head\"><span class=\"count\" \
             data-stat=\"group\" data-by=\"fingerprint\"{key_attr}>{}</span>\
             <span class=\"share\">{}</span>{label}<span class=\"type\">{kind}</span></div>",
            thousands(group.count),
            percent(group.count, report.envelopes),
        );
        let Some(triage) = triage else {
            h.push_str("</div>\n");
            continue;
        };
        if let Some(template) = &triage.template {
            let _ = writeln!(h, "<div class=\"template mono\">{}</div>", escape(template));
        }
        h.push_str("<dl>\n");
        if let (Some(first), Some(last)) = (&triage.first_seen, &triage.last_seen) {
            let _ = writeln!(
                h,
                "<dt>seen</dt><dd class=\"mono\">{} .. {}</dd>",
                escape(first),
                escape(last)
            );
        }
        if !triage.top_queues.is_empty() {
            h.push_str("<dt>queues</dt><dd>");
            for (i, queue) in triage.top_queues.iter().enumerate() {
                let _ = write!(
                    h,
                    "{}{} <span class=\"mono\" data-stat=\"top_queue\"{key_attr} \
                     data-queue=\"{}\">{}</span>",
                    if i > 0 { ", " } else { "" },
                    escape(&queue.queue),
                    escape(&queue.queue),
                    thousands(queue.count)
                );
            }
            h.push_str("</dd>\n");
        }
        if !triage.sample_ids.is_empty() {
            h.push_str("<dt>sample IDs</dt><dd>");
            for (i, id) in triage.sample_ids.iter().enumerate() {
                let _ = write!(
                    h,
                    "{}<code data-sample-id{key_attr}>{}</code>",
                    if i > 0 { " " } else { "" },
                    escape(id)
                );
            }
            h.push_str("</dd>\n");
        }
        h.push_str("</dl>\n");
        if let Some(key) = &group.key {
            let command = format!(
                "rdq-envelope filter --fingerprint {} {}",
                shell_word(key),
                files
            );
            let _ = writeln!(
                h,
                "<div class=\"cmdline\"><pre class=\"cmd\">{}</pre></div>",
                escape(&command)
            );
        }
        h.push_str("</div>\n");
    }
    if report.groups.is_empty() {
        h.push_str("<p class=\"note\">No valid envelopes.</p>\n");
    }
    rest_note(
        h,
        &report.groups,
        top,
        "fingerprint",
        ["fingerprint", "fingerprints"],
    );
    if report.groups_other > 0 {
        let _ = writeln!(
            h,
            "<p class=\"note\">Past the first {} fingerprints: <span data-stat=\"groups_other\" \
             data-by=\"fingerprint\">{}</span> {}.</p>",
            thousands(MAX_KEYS as u64),
            thousands(report.groups_other),
            envelopes_noun(report.groups_other)
        );
    }
    h.push_str("</section>\n");
}

/// The top error types by failed attempts.
fn error_types_section(h: &mut String, report: &StatsReport) {
    if report.top_error_types.is_empty() {
        return;
    }
    h.push_str(
        "<section id=\"error-types\">\n<h2>Top error types <small>failed attempts, and \
         envelopes whose last attempt failed so</small></h2>\n<table>\n<tr><th>error type</th>\
         <th class=\"num\">attempts</th><th class=\"num\">last attempt</th><th></th></tr>\n",
    );
    let largest = report.top_error_types[0].attempts;
    for e in &report.top_error_types {
        let key = escape(&e.error_type);
        let _ = writeln!(
            h,
            "<tr><td class=\"key\">{key}</td><td class=\"num\" data-stat=\"error_attempts\" \
             data-key=\"{key}\">{}</td><td class=\"num\" data-stat=\"error_last_attempt\" \
             data-key=\"{key}\">{}</td><td class=\"barcell\">{}</td></tr>",
            thousands(e.attempts),
            thousands(e.last_attempt),
            bar(e.attempts, largest)
        );
    }
    h.push_str("</table>\n");
    let more = report
        .distinct_error_types
        .saturating_sub(report.top_error_types.len() as u64);
    if more > 0 {
        let _ = writeln!(
            h,
            "<p class=\"note\"><span data-stat=\"error_types_more\">{}</span> more error types \
             (<code>--top N</code> lists more).</p>",
            thousands(more)
        );
    }
    h.push_str("</section>\n");
}

/// Nice tick steps for an axis up to `largest`: 1, 2 or 5 times a power of ten, at most
/// `ticks` of them.
fn tick_step(largest: u64, ticks: u64) -> u64 {
    let mut step = 1u64;
    loop {
        for m in [1, 2, 5] {
            let s = step.saturating_mul(m);
            if largest / s < ticks {
                return s;
            }
        }
        step = step.saturating_mul(10);
    }
}

/// A bar chart in SVG: `bars` of (x label or none, count, data attributes, tooltip), the y axis
/// with ticks, `width` x `height` user units.
struct Chart<'a> {
    label: &'a str,
    width: f64,
    height: f64,
    /// Show each bar's count above it.
    counts_on_bars: bool,
}

struct Bar {
    label: Option<String>,
    count: u64,
    attributes: String,
    tooltip: String,
}

impl Chart<'_> {
    fn draw(&self, h: &mut String, bars: &[Bar]) {
        let (left, right, top, bottom) = (48.0, 8.0, 16.0, 30.0);
        let plot_w = self.width - left - right;
        let plot_h = self.height - top - bottom;
        let largest = bars.iter().map(|b| b.count).max().unwrap_or(0).max(1);
        let step = tick_step(largest, 5);
        let axis_max = largest.div_ceil(step).saturating_mul(step);
        let y = |n: u64| top + plot_h - n as f64 * plot_h / axis_max as f64;
        let _ = writeln!(
            h,
            "<svg viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">",
            self.width,
            self.height,
            escape(self.label)
        );
        let mut tick = 0;
        while tick <= axis_max {
            let _ = writeln!(
                h,
                "<line class=\"grid\" x1=\"{left}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                left + plot_w,
                y(tick),
                y(tick),
                left - 6.0,
                y(tick) + 4.0,
                thousands(tick)
            );
            match tick.checked_add(step) {
                Some(next) => tick = next,
                None => break,
            }
        }
        let slot = plot_w / bars.len().max(1) as f64;
        let gap = if slot > 6.0 { slot * 0.18 } else { 0.0 };
        for (i, b) in bars.iter().enumerate() {
            let x = left + i as f64 * slot;
            if b.count > 0 {
                // Any count shows: at least one user unit high.
                let bar_h = (y(0) - y(b.count)).max(1.0);
                let _ = writeln!(
                    h,
                    "<rect class=\"bar\" x=\"{:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{:.2}\"\
                     {}><title>{}</title></rect>",
                    x + gap / 2.0,
                    y(0) - bar_h,
                    (slot - gap).max(0.5),
                    bar_h,
                    b.attributes,
                    escape(&b.tooltip)
                );
                if self.counts_on_bars {
                    let _ = writeln!(
                        h,
                        "<text class=\"count\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                        x + slot / 2.0,
                        y(0) - bar_h - 3.0,
                        thousands(b.count)
                    );
                }
            }
            if let Some(label) = &b.label {
                let _ = writeln!(
                    h,
                    "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                    x + slot / 2.0,
                    top + plot_h + 16.0,
                    escape(label)
                );
            }
        }
        let _ = writeln!(
            h,
            "<line class=\"axis\" x1=\"{left}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"/>\n</svg>",
            left + plot_w,
            y(0),
            y(0)
        );
    }
}

/// A histogram (attempts, redrives) as SVG bars: every value from the least to the largest
/// when they are few, empty ones included; otherwise the values counted, the first
/// [`HISTOGRAM_BARS`].
fn histogram_section(
    h: &mut String,
    stat: &str,
    title: &str,
    what: &str,
    buckets: &[Bucket],
    other: u64,
) {
    let _ = writeln!(
        h,
        "<section id=\"{stat}\">\n<h2>{title} <small>{what}</small></h2>"
    );
    if buckets.is_empty() {
        h.push_str("<p class=\"note\">No valid envelopes.</p>\n</section>\n");
        return;
    }
    let (least, most) = (buckets[0].value, buckets[buckets.len() - 1].value);
    let contiguous = most - least < HISTOGRAM_BARS as u64;
    let shown: Vec<&Bucket> = buckets.iter().take(HISTOGRAM_BARS).collect();
    let bar = |b: &Bucket| Bar {
        label: Some(b.value.to_string()),
        count: b.count,
        attributes: format!(
            " data-stat=\"{stat}\" data-value=\"{}\" data-count=\"{}\"",
            b.value, b.count
        ),
        tooltip: format!(
            "{} {}: {} {}",
            b.value,
            stat,
            thousands(b.count),
            envelopes_noun(b.count)
        ),
    };
    let bars: Vec<Bar> = if contiguous {
        (least..=most)
            .map(|value| match shown.iter().find(|b| b.value == value) {
                Some(b) => bar(b),
                None => Bar {
                    label: Some(value.to_string()),
                    count: 0,
                    attributes: String::new(),
                    tooltip: String::new(),
                },
            })
            .collect()
    } else {
        shown.iter().map(|b| bar(b)).collect()
    };
    let chart = Chart {
        label: title,
        width: 560.0,
        height: 220.0,
        counts_on_bars: bars.len() <= 20,
    };
    chart.draw(h, &bars);
    if buckets.len() > HISTOGRAM_BARS {
        let rest = &buckets[HISTOGRAM_BARS..];
        let held: u64 = rest.iter().map(|b| b.count).sum();
        let _ = writeln!(
            h,
            "<p class=\"note\">{} more {}, up to {}, {} {} {}.</p>",
            thousands(rest.len() as u64),
            noun(rest.len() as u64, "value"),
            thousands(rest[rest.len() - 1].value),
            if rest.len() == 1 { "holds" } else { "hold" },
            thousands(held),
            envelopes_noun(held)
        );
    }
    if other > 0 {
        let _ = writeln!(
            h,
            "<p class=\"note\">Past the first {} values: <span data-stat=\"{stat}_other\">{}</span> \
             {}.</p>",
            thousands(MAX_KEYS as u64),
            thousands(other),
            envelopes_noun(other)
        );
    }
    h.push_str("</section>\n");
}

/// Arrivals over time as SVG bars, one per bucket, with time labels under some.
fn arrivals_section(h: &mut String, arrivals: &Arrivals, envelopes: u64) {
    let _ = writeln!(
        h,
        "<section id=\"arrivals\">\n<h2>Arrivals over time <small>envelopes by created_at, per \
         <span data-stat=\"arrivals_width\">{}</span> (UTC)</small></h2>",
        escape(&arrivals.width)
    );
    if arrivals.buckets.is_empty() {
        h.push_str("<p class=\"note\">No valid envelopes.</p>\n</section>\n");
        return;
    }
    let n = arrivals.buckets.len();
    // About 10 labels, on every k-th bucket.
    let every = n.div_ceil(10).max(1);
    let fine = arrivals.width.contains("minute") || arrivals.width.contains("hour");
    let mut last_day = "";
    let bars: Vec<Bar> = arrivals
        .buckets
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let start = b.start.as_str();
            let label = (i % every == 0).then(|| {
                let day = &start[..start.len().min(10)];
                let text = time_label(&arrivals.width, start, day != last_day);
                last_day = day;
                text
            });
            Bar {
                label,
                count: b.count,
                attributes: format!(
                    " data-stat=\"arrivals\" data-start=\"{}\" data-count=\"{}\"",
                    escape(start),
                    b.count
                ),
                tooltip: format!(
                    "{}: {} {}",
                    if fine {
                        start.get(..16).unwrap_or(start).replace('T', " ")
                    } else {
                        start.get(..10).unwrap_or(start).to_owned()
                    },
                    thousands(b.count),
                    envelopes_noun(b.count)
                ),
            }
        })
        .collect();
    let chart = Chart {
        label: "Arrivals over time",
        width: 1200.0,
        height: 240.0,
        counts_on_bars: n <= 30,
    };
    chart.draw(h, &bars);
    let total: u64 = arrivals.buckets.iter().map(|b| b.count).sum();
    let _ = writeln!(
        h,
        "<p class=\"note\"><span data-stat=\"arrivals_total\">{}</span> of {} {} in {} \
         {} of {}.{}</p>",
        thousands(total),
        thousands(envelopes),
        envelopes_noun(envelopes),
        thousands(n as u64),
        noun(n as u64, "bucket"),
        escape(&of_width(&arrivals.width)),
        if arrivals.other > 0 {
            format!(
                " {} {} past the first {} days {} not drawn.",
                thousands(arrivals.other),
                envelopes_noun(arrivals.other),
                thousands(MAX_KEYS as u64),
                if arrivals.other == 1 { "is" } else { "are" }
            )
        } else {
            String::new()
        }
    );
    h.push_str("</section>\n");
}

/// An x-axis label for a bucket starting at `start` (`YYYY-MM-DDTHH:MM:SS.mmmZ`): the time of
/// day for widths under a day (with the date when it changes), the date, the month or the year.
fn time_label(width: &str, start: &str, new_day: bool) -> String {
    let part = |range: std::ops::Range<usize>| start.get(range).unwrap_or(start).to_owned();
    if width.contains("minute") || width.contains("hour") {
        if new_day {
            format!("{} {}", part(5..10), part(11..16))
        } else {
            part(11..16)
        }
    } else if width.contains("month") {
        part(0..7)
    } else if width.contains("year") {
        part(0..4)
    } else {
        part(0..10)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(escape("billing.invoices"), "billing.invoices");
        assert_eq!(
            escape(r#"<script>alert("x's & y")</script>"#),
            "&lt;script&gt;alert(&quot;x&#39;s &amp; y&quot;)&lt;/script&gt;"
        );
        assert_eq!(
            escape("Zoë 東京 \u{0}\u{7f}\tx\n"),
            "Zoë 東京 \u{FFFD}\u{FFFD}\tx\n"
        );
        assert_eq!(escape("&amp;"), "&amp;amp;");
    }

    #[test]
    fn shell_words() {
        assert_eq!(shell_word("samples/dlq.jsonl.zst"), "samples/dlq.jsonl.zst");
        assert_eq!(shell_word("my file"), "'my file'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
    }

    #[test]
    fn ticks() {
        assert_eq!(tick_step(1, 5), 1);
        assert_eq!(tick_step(9, 5), 2);
        assert_eq!(tick_step(82, 5), 20);
        assert_eq!(tick_step(244, 5), 50);
        assert_eq!(tick_step(u64::MAX, 5), 5_000_000_000_000_000_000);
    }

    #[test]
    fn labels() {
        let t = "2024-05-01T12:05:00.000Z";
        assert_eq!(time_label("minute", t, true), "05-01 12:05");
        assert_eq!(time_label("5 minutes", t, false), "12:05");
        assert_eq!(time_label("day", t, false), "2024-05-01");
        assert_eq!(time_label("3 months", t, false), "2024-05");
        assert_eq!(time_label("10 years", t, false), "2024");
    }
}
