//! The page's SVG charts: histograms of attempts and redrives, and arrivals over time.

use std::fmt::Write as _;

use super::escape::escape;
use super::sections::{envelopes_noun, of_width};
use super::HISTOGRAM_BARS;
use crate::report::stats::{Arrivals, Bucket, MAX_KEYS};
use crate::report::{noun, thousands};

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
pub(super) fn histogram_section(
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
pub(super) fn arrivals_section(h: &mut String, arrivals: &Arrivals, envelopes: u64) {
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
