//! The table form of `stats`: aligned columns, bar charts in eighths of a column, colour only
//! when asked. Rendering only: the figures come from the library's `StatsReport`.

use std::io::Write;

use rdq_envelope::ops::{Bucket, StatsReport};
use rdq_envelope::report::{noun, percent, thousands};

/// The widest bar, in columns.
const BAR_COLUMNS: usize = 40;
/// Keys longer than this are cut (with `…`) in the table form; JSON keeps them whole.
const KEY_COLUMNS: usize = 56;

/// ANSI styling, or none.
pub struct Style {
    colour: bool,
}

impl Style {
    pub fn new(colour: bool) -> Self {
        Style { colour }
    }

    fn heading(&self, text: &str) -> String {
        self.paint(text, console::Style::new().bold())
    }

    fn bar(&self, text: &str) -> String {
        self.paint(text, console::Style::new().cyan())
    }

    fn paint(&self, text: &str, style: console::Style) -> String {
        if self.colour {
            style.force_styling(true).apply_to(text).to_string()
        } else {
            text.to_owned()
        }
    }
}

/// A table: a heading row, then rows of a label and counts, an optional share of a total, and a
/// bar for the first count.
struct Table<'a> {
    title: &'a str,
    columns: &'a [&'a str],
    rows: Vec<(String, Vec<u64>)>,
    /// Show each row's first count as a share of this.
    share_of: Option<u64>,
}

impl Table<'_> {
    fn write(&self, style: &Style, width: usize, out: &mut dyn Write) -> std::io::Result<()> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let mut head = vec![self.title.to_owned()];
        head.extend(self.columns.iter().map(|c| c.to_string()));
        let mut body: Vec<Vec<String>> = Vec::with_capacity(self.rows.len());
        for (label, counts) in &self.rows {
            let mut cells = vec![label.clone()];
            cells.extend(counts.iter().map(|&n| thousands(n)));
            if let Some(total) = self.share_of {
                cells.push(percent(counts[0], total));
            }
            body.push(cells);
        }
        if self.share_of.is_some() {
            head.push("share".into());
        }
        let widths: Vec<usize> = (0..head.len())
            .map(|c| {
                body.iter()
                    .chain([&head])
                    .map(|row| row[c].chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let row_width: usize = widths.iter().sum::<usize>() + 2 * (widths.len() - 1);
        let bar_columns = width.saturating_sub(row_width + 2).clamp(10, BAR_COLUMNS);
        let line = |cells: &[String]| {
            let mut text = format!("{:<w$}", cells[0], w = widths[0]);
            for (cell, width) in cells[1..].iter().zip(&widths[1..]) {
                text.push_str(&format!("  {cell:>width$}"));
            }
            text
        };
        // A blank line before each table, none after the last.
        writeln!(out)?;
        writeln!(out, "{}", style.heading(line(&head).trim_end()))?;
        let largest = self.rows.iter().map(|(_, c)| c[0]).max().unwrap_or(0);
        for ((_, counts), cells) in self.rows.iter().zip(&body) {
            let bar = bar(counts[0], largest, bar_columns);
            writeln!(out, "{}  {}", line(cells), style.bar(&bar))?;
        }
        Ok(())
    }
}

/// A bar of `count` against `largest` (which gets `columns`), in eighths of a column; any
/// count that is not zero shows.
fn bar(count: u64, largest: u64, columns: usize) -> String {
    const EIGHTHS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
    if count == 0 || largest == 0 {
        return String::new();
    }
    let eighths = ((count as u128 * (columns * 8) as u128) / largest as u128).max(1) as usize;
    let mut bar = "█".repeat(eighths / 8);
    if !eighths.is_multiple_of(8) {
        bar.push(EIGHTHS[eighths % 8]);
    }
    bar
}

/// A key cut to [`KEY_COLUMNS`] characters, the cut shown with `…`.
fn cut(key: &str) -> String {
    cut_to(key, KEY_COLUMNS)
}

/// `text` cut to `columns` characters (at least 1), the cut shown with `…`.
fn cut_to(text: &str, columns: usize) -> String {
    let columns = columns.max(1);
    if text.chars().count() <= columns {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(columns - 1).collect();
    cut.push('…');
    cut
}

/// The report as tables for people; bars fit in `width` columns.
pub fn write_tables(
    report: &StatsReport,
    style: &Style,
    width: usize,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(
        out,
        "{} {} in {} {} ({} rejected, {} blank)",
        thousands(report.envelopes),
        noun(report.envelopes, "envelope"),
        thousands(report.lines),
        noun(report.lines, "line"),
        thousands(report.rejected),
        thousands(report.blank),
    )?;
    if report.envelopes == 0 && report.rejected > 0 {
        // Empty tables alone would read as an empty input.
        writeln!(
            out,
            "Nothing counted: every line that is not blank was rejected (rdq-envelope validate \
             FILE... says why)"
        )?;
    }
    if let Some(range) = &report.created_at {
        writeln!(out, "created_at {} .. {}", range.first, range.last)?;
    }

    let table = |title, columns, rows, share_of| Table {
        title,
        columns,
        rows,
        share_of,
    };
    if report.by == "fingerprint" {
        write_fingerprints(report, style, width, out)?;
    } else {
        let groups = report.groups.iter().map(|g| {
            (
                cut(&group_label(report.by, g.key.as_deref())),
                vec![g.count],
            )
        });
        let groups = with_other(groups.collect(), report.groups_other);
        table(report.by, &["envelopes"], groups, Some(report.envelopes))
            .write(style, width, out)?;
    }

    let histogram = |buckets: &[Bucket], other: u64| -> Vec<(String, Vec<u64>)> {
        let rows = buckets.iter().map(|b| (b.value.to_string(), vec![b.count]));
        with_other(rows.collect(), other)
    };
    let attempts = histogram(&report.attempts, report.attempts_other);
    table("attempts", &["envelopes"], attempts, None).write(style, width, out)?;
    let redrives = histogram(&report.redrives, report.redrives_other);
    table("redrives", &["envelopes"], redrives, None).write(style, width, out)?;

    let errors: Vec<(String, Vec<u64>)> = report
        .top_error_types
        .iter()
        .map(|e| (cut(&e.error_type), vec![e.attempts, e.last_attempt]))
        .collect();
    let more = report.distinct_error_types - errors.len() as u64;
    table("error type", &["attempts", "last attempt"], errors, None).write(style, width, out)?;
    if more > 0 {
        writeln!(
            out,
            "({} more error {}; --top N lists more)",
            thousands(more),
            noun(more, "type")
        )?;
    }

    let days = report
        .arrivals_per_day
        .iter()
        .map(|d| (d.day.clone(), vec![d.count]));
    let days = with_other(days.collect(), report.arrivals_other);
    table("arrivals per day", &["envelopes"], days, None).write(style, width, out)
}

/// `stats --by fingerprint`'s groups, three lines each: the count, share, fingerprint and
/// error type; the template, cut to the terminal; the first and last time seen and an ID.
fn write_fingerprints(
    report: &StatsReport,
    style: &Style,
    width: usize,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    const INDENT: &str = "    ";
    writeln!(out)?;
    writeln!(out, "{}", style.heading("fingerprint groups"))?;
    for group in &report.groups {
        let triage = group.triage.as_ref();
        let key = group.key.as_deref().unwrap_or("(none)");
        let kind = triage.and_then(|t| t.error_type.as_deref());
        let first = format!(
            "{:>9}  {:>6}  {key}  {}",
            thousands(group.count),
            percent(group.count, report.envelopes),
            kind.map_or_else(|| "(no error)".to_owned(), printable),
        );
        writeln!(out, "{}", style.bar(&cut_to(&first, width)))?;
        if let Some(template) = triage.and_then(|t| t.template.as_deref()) {
            let template = cut_to(&printable(template), width.saturating_sub(INDENT.len()));
            writeln!(out, "{INDENT}{template}")?;
        }
        let seen = triage.and_then(|t| Some((t.first_seen.as_deref()?, t.last_seen.as_deref()?)));
        let mut last = String::new();
        if let Some((first, last_seen)) = seen {
            last.push_str(&format!("{first} .. {last_seen}"));
        }
        if let Some(id) = triage.and_then(|t| t.sample_ids.first()) {
            if !last.is_empty() {
                last.push_str("  ");
            }
            last.push_str(&format!("e.g. {id}"));
        }
        if !last.is_empty() {
            writeln!(
                out,
                "{INDENT}{}",
                cut_to(&last, width.saturating_sub(INDENT.len()))
            )?;
        }
    }
    if report.groups_other > 0 {
        writeln!(
            out,
            "{:>9}  (other: groups past the first {})",
            thousands(report.groups_other),
            thousands(rdq_envelope::ops::MAX_KEYS as u64)
        )?;
    }
    Ok(())
}

/// Text from an envelope made safe for a terminal: control characters shown as `�`.
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
        .collect()
}

/// A group's row label: the key as it is, or, for an error type (any non-empty string) that
/// begins with `(` or `"`, quoted as a JSON string, so that no error type can pass for the rows
/// the table adds, `(none)` (no key) and `(other)`. The other keys cannot begin so, but for
/// the outcome's own `(in flight)` and `(no attempts)`.
fn group_label(by: &str, key: Option<&str>) -> String {
    match key {
        None => "(none)".to_owned(),
        Some(key) if by == "error_type" && key.starts_with(['(', '"']) => {
            serde_json::to_string(key).expect("a string serializes")
        }
        Some(key) => key.to_owned(),
    }
}

/// `rows`, and an `(other)` row for what was counted past the kept keys.
fn with_other(mut rows: Vec<(String, Vec<u64>)>, other: u64) -> Vec<(String, Vec<u64>)> {
    if other > 0 {
        rows.push(("(other)".into(), vec![other]));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::{bar, cut, group_label, thousands};

    #[test]
    fn no_key_can_pass_for_the_rows_the_table_adds() {
        assert_eq!(group_label("error_type", None), "(none)");
        assert_eq!(group_label("error_type", Some("(none)")), "\"(none)\"");
        assert_eq!(group_label("error_type", Some("(other)")), "\"(other)\"");
        assert_eq!(group_label("error_type", Some("\"x\"")), "\"\\\"x\\\"\"");
        assert_eq!(
            group_label("error_type", Some("java.io.IOException")),
            "java.io.IOException"
        );
        assert_eq!(group_label("outcome", Some("(in flight)")), "(in flight)");
    }

    #[test]
    fn numbers_bars_and_cuts() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(bar(0, 10, 40), "");
        assert_eq!(bar(10, 10, 40).chars().count(), 40);
        assert_eq!(
            bar(1, 1_000_000, 40),
            "▏",
            "a count that is not zero always shows"
        );
        assert_eq!(bar(5, 10, 40), "█".repeat(20));
        assert_eq!(
            bar(3, 16, 2),
            "▍",
            "eighths: 3/16 of 2 columns is 3 eighths"
        );
        let long = "x".repeat(100);
        assert_eq!(cut(&long).chars().count(), super::KEY_COLUMNS);
        assert!(cut(&long).ends_with('…'));
        assert_eq!(cut("short"), "short");
    }

    #[test]
    fn colour_only_when_asked() {
        let plain = super::Style::new(false);
        assert_eq!(plain.bar("██"), "██");
        let colour = super::Style::new(true);
        assert!(
            colour.bar("██").starts_with("\x1b["),
            "{:?}",
            colour.bar("██")
        );
        assert!(colour.heading("h").contains('h'));
    }
}
