//! The page's sections of tables and cards: the books, a breakdown, the fingerprints, the
//! error types.

use std::fmt::Write as _;

use super::escape::escape;
use super::BREAKDOWN_ROWS;
use crate::envelope::Status;
use crate::pipeline::Summary;
use crate::report::shell::shell_word;
use crate::report::stats::{CodeExamples, Group, StatsReport, MAX_KEYS};
use crate::report::{noun, percent, thousands};

/// The counts and the books: lines, valid, rejected (by code, with the first lines of each),
/// blank.
pub(super) fn books_section(
    h: &mut String,
    report: &StatsReport,
    books: &Summary,
    examples: &[CodeExamples],
    files: &str,
) {
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
    h.push_str("</div>\n");
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
        // Only rejected lines have example positions (warnings are of valid lines).
        let with_examples = stat == "by_code";
        let _ = writeln!(
            h,
            "<div>\n<table class=\"codes\">\n<tr><th>{title}</th><th class=\"num\">lines</th>\
             {}<th></th></tr>",
            if with_examples { "<th>e.g.</th>" } else { "" }
        );
        for (code, &n) in rows {
            let examples_cell = match with_examples {
                true => example_lines(examples, code),
                false => String::new(),
            };
            let _ = writeln!(
                h,
                "<tr><td class=\"key mono\">{}</td><td class=\"num\" data-stat=\"{stat}\" \
                 data-key=\"{}\">{}</td>{examples_cell}<td class=\"barcell\">{}</td></tr>",
                escape(code),
                escape(code),
                thousands(n),
                bar(n, largest)
            );
        }
        h.push_str("</table>\n</div>\n");
    }
    h.push_str("<div>\n");
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

/// The cell of a rejected code's first lines: `file:21, :40, :77` (a line of the same file as
/// the one before it shows its number alone), each with its source and line as attributes. A
/// file shows as its last path component when that names it alone among the sources (the
/// heading names each in full, and the full name is the cell's tooltip).
fn example_lines(examples: &[CodeExamples], code: &str) -> String {
    let mut cell = String::from("<td class=\"examples mono\">");
    let lines = examples
        .iter()
        .find(|e| e.code == code)
        .map_or(&[][..], |e| &e.lines[..]);
    let mut before: Option<&str> = None;
    for (i, at) in lines.iter().enumerate() {
        let shown = match before {
            Some(source) if source == at.source => format!(":{}", at.line),
            _ => format!("{}:{}", short_name(examples, &at.source), at.line),
        };
        let _ = write!(
            cell,
            "{}<span data-stat=\"reject_example\" data-key=\"{}\" data-source=\"{}\" \
             data-line=\"{}\" title=\"{}:{}\">{}</span>",
            if i > 0 { ", " } else { "" },
            escape(code),
            escape(&at.source),
            at.line,
            escape(&at.source),
            at.line,
            escape(&shown)
        );
        before = Some(&at.source);
    }
    cell.push_str("</td>");
    cell
}

/// `source`'s last path component if no other source of the examples ends the same, else
/// `source`.
fn short_name<'a>(examples: &[CodeExamples], source: &'a str) -> &'a str {
    let last = |path: &'a str| path.rsplit('/').next().unwrap_or(path);
    let short = last(source);
    let shared = examples
        .iter()
        .flat_map(|e| &e.lines)
        .any(|at| at.source != source && at.source.rsplit('/').next() == Some(short));
    if shared || short.is_empty() {
        source
    } else {
        short
    }
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
pub(super) fn breakdown_section(h: &mut String, report: &StatsReport) {
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
pub(super) fn envelopes_noun(n: u64) -> String {
    noun(n, "envelope")
}

/// A bucket width with its article, after "of": "a minute", "an hour", "3 hours".
pub(super) fn of_width(width: &str) -> String {
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
pub(super) fn fingerprint_section(h: &mut String, report: &StatsReport, top: usize, files: &str) {
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
        if !triage.statuses.is_empty() {
            h.push_str("<dt>status</dt><dd>");
            for (i, status) in triage.statuses.iter().enumerate() {
                let class = if status.status == Status::Dead.as_str() {
                    " dead"
                } else {
                    ""
                };
                let _ = write!(
                    h,
                    "{}<span class=\"mono{class}\">{} <span data-stat=\"fp_status\"{key_attr} \
                     data-status=\"{}\">{}</span></span>",
                    if i > 0 { ", " } else { "" },
                    escape(&status.status),
                    escape(&status.status),
                    thousands(status.count)
                );
            }
            h.push_str("</dd>\n");
        }
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
            // README's redrive step for this failure alone: its DEAD tasks (the only ones
            // redrive takes) made PENDING again, into a file to look at before enqueueing.
            let dead = triage
                .statuses
                .iter()
                .find(|s| s.status == Status::Dead.as_str())
                .map_or(0, |s| s.count);
            if dead > 0 {
                let command = format!(
                    "rdq-envelope filter -q --status DEAD --fingerprint {key} {files} | \
                     rdq-envelope redrive --now -o redrive-{key}.jsonl",
                    key = shell_word(key),
                );
                let _ = writeln!(
                    h,
                    "<p class=\"note\">Redrive its {} DEAD {} into <code>redrive-{}.jsonl</code>:\
                     </p>\n<div class=\"cmdline\"><pre class=\"cmd\" data-redrive{key_attr}>{}</pre>\
                     </div>",
                    thousands(dead),
                    noun(dead, "task"),
                    escape(key),
                    escape(&command)
                );
            }
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
pub(super) fn error_types_section(h: &mut String, report: &StatsReport) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::stats::LineAt;

    fn examples(sources: &[&str]) -> Vec<CodeExamples> {
        let lines = sources
            .iter()
            .enumerate()
            .map(|(i, s)| LineAt {
                source: (*s).to_owned(),
                line: i as u64 + 1,
            })
            .collect();
        vec![CodeExamples {
            code: "WRONG_TYPE",
            lines,
        }]
    }

    #[test]
    fn a_file_shows_as_its_last_component_when_that_names_it_alone() {
        let two = examples(&["/data/a/dlq.jsonl", "/data/b/other.jsonl"]);
        assert_eq!(short_name(&two, "/data/a/dlq.jsonl"), "dlq.jsonl");
        let same = examples(&["/data/a/dlq.jsonl", "/data/b/dlq.jsonl"]);
        assert_eq!(short_name(&same, "/data/b/dlq.jsonl"), "/data/b/dlq.jsonl");
        assert_eq!(short_name(&same, "<stdin>"), "<stdin>");
        let cell = example_lines(
            &examples(&["x/a.jsonl", "x/a.jsonl", "b.jsonl"]),
            "WRONG_TYPE",
        );
        let shown: Vec<&str> = cell
            .split("\">")
            .skip(2)
            .map(|s| &s[..s.find('<').unwrap()])
            .collect();
        assert_eq!(shown, ["a.jsonl:1", ":2", "b.jsonl:3"], "{cell}");
    }
}
