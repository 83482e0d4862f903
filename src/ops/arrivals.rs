//! Arrivals over time for `stats --format html`: envelopes per bucket of `created_at`, the
//! bucket width chosen from the range so that the chart has at most [`MAX_ARRIVAL_BUCKETS`]
//! bars.

use crate::envelope::formats::{parse_timestamp, timestamp_bytes};
use crate::report::stats::{ArrivalBucket, Arrivals};

/// The most buckets [`Arrivals`] has: the narrowest width that fits is chosen.
pub const MAX_ARRIVAL_BUCKETS: usize = 180;

const MINUTE: i64 = 60_000;
const HOUR: i64 = 60 * MINUTE;
const DAY: i64 = 24 * HOUR;

/// The finest table of arrivals the run kept whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    Minute,
    Hour,
    Day,
}

impl Unit {
    fn ms(self) -> i64 {
        match self {
            Unit::Minute => MINUTE,
            Unit::Hour => HOUR,
            Unit::Day => DAY,
        }
    }
}

/// A bucket width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Width {
    /// A fixed number of milliseconds, buckets aligned on the Unix epoch (so on UTC minutes,
    /// hours and days).
    Fixed(i64),
    /// ISO weeks, Monday to Sunday.
    Week,
    /// This many calendar months, from January.
    Months(i64),
    /// This many calendar years, from year 0.
    Years(i64),
}

/// The widths tried, narrowest first (then [`Width::Years`] of as many years as it takes).
const WIDTHS: [Width; 17] = [
    Width::Fixed(MINUTE),
    Width::Fixed(2 * MINUTE),
    Width::Fixed(5 * MINUTE),
    Width::Fixed(10 * MINUTE),
    Width::Fixed(15 * MINUTE),
    Width::Fixed(30 * MINUTE),
    Width::Fixed(HOUR),
    Width::Fixed(2 * HOUR),
    Width::Fixed(3 * HOUR),
    Width::Fixed(6 * HOUR),
    Width::Fixed(12 * HOUR),
    Width::Fixed(DAY),
    Width::Week,
    Width::Months(1),
    Width::Months(3),
    Width::Years(1),
    Width::Years(10),
];

impl Width {
    /// Whether buckets of this width can be counted from a table of `unit`s.
    fn fits(self, unit: Unit) -> bool {
        match self {
            Width::Fixed(ms) => ms % unit.ms() == 0,
            _ => true,
        }
    }

    /// The bucket of a time.
    fn index(self, ms: i64) -> i64 {
        match self {
            Width::Fixed(width) => ms.div_euclid(width),
            // 1970-01-01 was a Thursday: the Monday before is day -3.
            Width::Week => (ms.div_euclid(DAY) + 3).div_euclid(7),
            Width::Months(k) => {
                let (year, month) = year_month(ms);
                (year * 12 + month - 1).div_euclid(k)
            }
            Width::Years(k) => year_month(ms).0.div_euclid(k),
        }
    }

    /// When a bucket begins.
    fn start(self, index: i64) -> i64 {
        match self {
            Width::Fixed(width) => index.saturating_mul(width),
            Width::Week => (index * 7 - 3).saturating_mul(DAY),
            Width::Months(k) => {
                first_of_month((index * k).div_euclid(12), (index * k).rem_euclid(12) + 1)
            }
            Width::Years(k) => first_of_month(index * k, 1),
        }
    }

    /// The width in words.
    fn name(self) -> String {
        match self {
            Width::Fixed(ms) if ms % DAY == 0 => plural(ms / DAY, "day"),
            Width::Fixed(ms) if ms % HOUR == 0 => plural(ms / HOUR, "hour"),
            Width::Fixed(ms) => plural(ms / MINUTE, "minute"),
            Width::Week => "week".into(),
            Width::Months(k) => plural(k, "month"),
            Width::Years(k) => plural(k, "year"),
        }
    }
}

fn plural(n: i64, unit: &str) -> String {
    if n == 1 {
        unit.to_owned()
    } else {
        format!("{n} {unit}s")
    }
}

/// The UTC year and month (1-12) of a time.
fn year_month(ms: i64) -> (i64, i64) {
    let text = timestamp_bytes(ms);
    let number = |bytes: &[u8]| {
        bytes
            .iter()
            .fold(0i64, |n, &b| n * 10 + i64::from(b.wrapping_sub(b'0')))
    };
    let year = match text[0] {
        // Years before 0 or past 9999 are not valid timestamps; keep the arithmetic total.
        b'-' | b'+' => ms.div_euclid(DAY * 365),
        _ => number(&text[..4]),
    };
    (year, number(&text[5..7]))
}

/// The first millisecond of a month (0000-01 when out of the timestamps' range).
fn first_of_month(year: i64, month: i64) -> i64 {
    let text = format!("{:04}-{month:02}-01T00:00:00.000Z", year.clamp(0, 9999));
    parse_timestamp(&text).unwrap_or(0)
}

/// The arrivals of the `created_at` range `(first, last)` from counts per `unit` (each key a
/// number of units since 1970), `other` of them not kept.
pub(crate) fn buckets(
    (first, last): (i64, i64),
    unit: Unit,
    counts: impl Iterator<Item = (i64, u64)>,
    mut other: u64,
) -> Arrivals {
    let fits = |width: Width| {
        let span = width.index(last).saturating_sub(width.index(first));
        (0..MAX_ARRIVAL_BUCKETS as i64).contains(&span)
    };
    let width = WIDTHS
        .into_iter()
        .find(|&w| w.fits(unit) && fits(w))
        .unwrap_or_else(|| {
            let years = year_month(last).0 - year_month(first).0 + 1;
            Width::Years((years / MAX_ARRIVAL_BUCKETS as i64 + 1).max(1))
        });
    let base = width.index(first);
    let span = width
        .index(last)
        .saturating_sub(base)
        .clamp(0, MAX_ARRIVAL_BUCKETS as i64 * 100);
    let mut buckets: Vec<ArrivalBucket> = (0..=span)
        .map(|i| ArrivalBucket {
            start: String::from_utf8_lossy(&timestamp_bytes(width.start(base + i))).into_owned(),
            count: 0,
        })
        .collect();
    for (key, count) in counts {
        let at = width.index(key.saturating_mul(unit.ms())) - base;
        match usize::try_from(at).ok().and_then(|at| buckets.get_mut(at)) {
            Some(bucket) => bucket.count += count,
            None => other += count,
        }
    }
    Arrivals {
        width: width.name(),
        buckets,
        other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(text: &str) -> i64 {
        parse_timestamp(text).unwrap()
    }

    fn run(first: &str, last: &str, unit: Unit) -> Arrivals {
        let (first, last) = (ms(first), ms(last));
        let counts = [
            (first.div_euclid(unit.ms()), 2),
            (last.div_euclid(unit.ms()), 3),
        ];
        buckets((first, last), unit, counts.into_iter(), 0)
    }

    #[test]
    fn the_narrowest_width_that_fits() {
        let a = run(
            "2024-05-01T12:00:01.644Z",
            "2024-05-01T12:19:04.847Z",
            Unit::Minute,
        );
        assert_eq!((a.width.as_str(), a.buckets.len()), ("minute", 20));
        assert_eq!(a.buckets[0].start, "2024-05-01T12:00:00.000Z");
        assert_eq!((a.buckets[0].count, a.buckets[19].count), (2, 3));
        assert_eq!(a.buckets[1..19].iter().map(|b| b.count).sum::<u64>(), 0);

        let a = run(
            "2024-05-01T00:00:00.000Z",
            "2024-05-01T05:00:00.000Z",
            Unit::Minute,
        );
        assert_eq!((a.width.as_str(), a.buckets.len()), ("2 minutes", 151));
        let a = run(
            "2024-05-01T00:00:00.000Z",
            "2024-05-03T23:59:59.999Z",
            Unit::Minute,
        );
        assert_eq!((a.width.as_str(), a.buckets.len()), ("30 minutes", 144));
        // Hours: no width under an hour.
        let a = run(
            "2024-05-01T00:00:00.000Z",
            "2024-05-01T00:30:00.000Z",
            Unit::Hour,
        );
        assert_eq!((a.width.as_str(), a.buckets.len()), ("hour", 1));
        assert_eq!(a.buckets[0].count, 5);
        let a = run(
            "2024-01-01T00:00:00.000Z",
            "2024-03-31T00:00:00.000Z",
            Unit::Hour,
        );
        assert_eq!((a.width.as_str(), a.buckets.len()), ("day", 91));
        let a = run(
            "2024-01-03T00:00:00.000Z",
            "2026-01-01T00:00:00.000Z",
            Unit::Day,
        );
        assert_eq!(a.width, "week");
        assert_eq!(a.buckets[0].start, "2024-01-01T00:00:00.000Z", "a Monday");
        let a = run(
            "2010-02-03T00:00:00.000Z",
            "2024-01-01T00:00:00.000Z",
            Unit::Day,
        );
        assert_eq!((a.width.as_str(), a.buckets.len()), ("month", 168));
        assert_eq!(a.buckets[1].start, "2010-03-01T00:00:00.000Z");
        let a = run(
            "0001-01-01T00:00:00.000Z",
            "9999-12-31T23:59:59.999Z",
            Unit::Day,
        );
        assert_eq!(a.width, "56 years");
        assert!(a.buckets.len() <= MAX_ARRIVAL_BUCKETS);
        assert_eq!(a.buckets.iter().map(|b| b.count).sum::<u64>(), 5);
    }

    #[test]
    fn every_envelope_lands_in_a_bucket_or_other() {
        let (first, last) = (
            ms("2024-05-01T12:00:00.000Z"),
            ms("2024-05-01T13:00:00.000Z"),
        );
        let counts = [(first / MINUTE, 1), (first / MINUTE + 1000, 4)];
        let a = buckets((first, last), Unit::Minute, counts.into_iter(), 2);
        assert_eq!(a.buckets.iter().map(|b| b.count).sum::<u64>(), 1);
        assert_eq!(a.other, 6, "a key outside the range is not lost");
    }
}
