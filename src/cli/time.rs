//! Times on the command line (docs/cli.md#times): friendlier than the envelope's one strict
//! form, which stays the only one envelopes may hold.

use std::str::FromStr;

use anyhow::bail;
use jiff::civil::{Date, Time};
use jiff::fmt::temporal::Pieces;
use jiff::{Span, SpanRelativeTo, Timestamp, Unit};

use rdq_envelope::envelope::formats::{parse_timestamp, push_timestamp};

/// The range of the envelope's timestamps, as every time flag's error names it.
macro_rules! range {
    () => {
        "0000-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z"
    };
}

/// What every time flag's error message lists.
const FORMS: &str = concat!(
    "expected one of: 2024-05-01T12:00:00.000Z (the envelope's form), ",
    "2024-05-01 (midnight UTC), 2024-05-01T14:00:00+02:00 (RFC 3339, any offset or fraction), ",
    "or 2h, 3d, 90m (that long before now), from ",
    range!()
);

/// The time `text` names, in milliseconds since the epoch, for `flag`; `now` for the
/// durations. A time between two milliseconds rounds up: envelope times are whole
/// milliseconds, so "at or after" and "before" it stay exact.
///
/// Every instant an envelope can hold is accepted in every form, and none outside: the
/// arithmetic is done here, on jiff's civil date and time and the offset, because jiff's
/// `Timestamp` ends at 9999-12-30T22:00Z and would refuse the last hours of year 9999.
pub fn parse(flag: &str, text: &str, now: Timestamp) -> anyhow::Result<i64> {
    if let Some(ms) = parse_timestamp(text) {
        return Ok(ms);
    }
    // A duration first: `100000000h` has the length of a date.
    let ns = if text.starts_with(|c: char| c.is_ascii_digit()) && !text.contains([':', '-']) {
        Span::from_str(text)
            .ok()
            .filter(|span| !span.is_negative())
            .and_then(|span| span.to_duration(SpanRelativeTo::days_are_24_hours()).ok())
            .map(|duration| now.as_nanosecond() - duration.as_nanos())
    } else if text.len() == 10 {
        Date::from_str(text)
            .ok()
            .and_then(|date| civil_ns(date, Time::midnight(), 0))
    } else {
        // RFC 3339 and the rest of jiff's Temporal forms of an instant: a date, a time and
        // an offset (`Z`, `-00:00` or numeric).
        Pieces::parse(text).ok().and_then(|pieces| {
            let offset = pieces.offset()?.to_numeric_offset();
            civil_ns(pieces.date(), pieces.time()?, offset.seconds())
        })
    };
    let Some(ns) = ns else {
        bail!("{flag} {text:?}: {FORMS}");
    };
    let ms = ns.div_euclid(1_000_000) + i128::from(ns.rem_euclid(1_000_000) != 0);
    let (first, last) = envelope_range();
    match i64::try_from(ms) {
        Ok(ms) if (first..=last).contains(&ms) => Ok(ms),
        _ => bail!(
            concat!(
                "{flag} {text:?}: outside the times an envelope can hold, ",
                range!()
            ),
            flag = flag,
            text = text
        ),
    }
}

/// The first and the last millisecond an envelope's timestamp can name.
fn envelope_range() -> (i64, i64) {
    let first = parse_timestamp("0000-01-01T00:00:00.000Z");
    let last = parse_timestamp("9999-12-31T23:59:59.999Z");
    (first.unwrap_or(i64::MIN), last.unwrap_or(i64::MAX))
}

/// Nanoseconds since the epoch of `date` at `time` at an offset of `offset_seconds` from UTC,
/// for any date jiff holds (years -9999 to 9999).
fn civil_ns(date: Date, time: Time, offset_seconds: i32) -> Option<i128> {
    let epoch = jiff::civil::date(1970, 1, 1);
    // In days, the span between any two jiff dates fits (about 7.3 million days at most).
    let days = i128::from(epoch.until((Unit::Day, date)).ok()?.get_days());
    let seconds = days * 86_400
        + i128::from(time.hour()) * 3600
        + i128::from(time.minute()) * 60
        + i128::from(time.second())
        - i128::from(offset_seconds);
    Some(seconds * 1_000_000_000 + i128::from(time.subsec_nanosecond()))
}

/// `parse` of an optional flag, against the clock.
pub fn parse_opt(flag: &str, text: &Option<String>) -> anyhow::Result<Option<i64>> {
    text.as_deref()
        .map(|t| parse(flag, t, Timestamp::now()))
        .transpose()
}

/// A length of time such as `90s`, `30m`, `2h`, `1d` or `500ms` (a day is 24 hours) in
/// milliseconds, more than 0, for `flag`.
pub fn duration_ms(flag: &str, text: &str) -> anyhow::Result<u64> {
    let ms = Span::from_str(text)
        .ok()
        .filter(|span| !span.is_negative())
        .and_then(|span| span.to_duration(SpanRelativeTo::days_are_24_hours()).ok())
        .map(|duration| duration.as_millis());
    match ms.and_then(|ms| u64::try_from(ms).ok()) {
        Some(ms) if ms > 0 => Ok(ms),
        _ => bail!("{flag} {text:?}: expected a length of time such as 90s, 30m, 2h or 1d"),
    }
}

/// A time in the envelope's form.
pub fn envelope_form(ms: i64) -> String {
    let mut text = Vec::with_capacity(24);
    push_timestamp(&mut text, ms);
    String::from_utf8(text).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    /// Every form reaches both ends of the envelope's range, and refuses what lies past them,
    /// offsets crossing the day and the year included (jiff's `Timestamp` alone ends at
    /// 9999-12-30T22:00Z).
    fn every_form_reaches_both_ends_of_the_envelopes_range() {
        let now = Timestamp::from_str("2024-05-04T00:00:00Z").unwrap();
        let ms = |t: &str| parse("--since", t, now).map_err(|e| e.to_string());
        let first = parse_timestamp("0000-01-01T00:00:00.000Z").unwrap();
        let last = parse_timestamp("9999-12-31T23:59:59.999Z").unwrap();
        for (text, want) in [
            ("9999-12-31T23:59:59.999Z", last),
            ("9999-12-31T23:59:59.999+00:00", last),
            ("9999-12-31T23:59:59.999-00:00", last),
            ("9999-12-31T23:59:59.999+01:00", last - 3_600_000),
            ("9999-12-31T23:59:59.998999Z", last),
            ("9999-12-31T23:59:59Z", last - 999),
            ("9999-12-31", last - 86_399_999),
            ("9999-12-30T22:00:01Z", last - 86_400_000 - 7_198_999),
            ("10000-01-01T00:59:59.999+01:00", -1),
            ("-0001-12-31", -1),
            ("+010000-01-01T00:00:00Z", -1),
            ("0000-01-01T00:00:00.000Z", first),
            ("0000-01-01T00:00:00Z", first),
            ("0000-01-01", first),
            ("0000-01-01T01:30:00+01:00", first + 1_800_000),
            ("0000-01-01T01:00:00+01:00", first),
            ("-000001-12-31T23:30:00-01:00", first + 1_800_000),
        ] {
            let got = ms(text);
            if want == -1 {
                // Five-digit and negative years are no RFC 3339 (jiff spells them with six
                // digits and a sign): refused as no form, the range named.
                assert!(got.unwrap_err().contains(range!()), "{text}");
            } else {
                assert_eq!(got, Ok(want), "{text}");
            }
        }
        for outside in [
            "9999-12-31T23:59:59.999-01:00",
            "9999-12-31T23:59:59.9991Z",
            "0000-01-01T00:30:00+01:00",
            "0000-01-01T00:59:59.999+01:00",
            "-000001-12-31T23:59:59.999Z",
            "100000000h",
        ] {
            let error = ms(outside).unwrap_err();
            assert!(error.contains("outside the times an envelope can hold, 0000-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z"), "{outside}: {error}");
        }
        // A duration of ten characters is a duration, not a malformed date.
        assert_eq!(
            ms("1000000000s"),
            Ok(parse_timestamp("2024-05-04T00:00:00.000Z").unwrap() - 1_000_000_000_000)
        );
    }

    #[test]
    fn every_form() {
        let now = Timestamp::from_str("2024-05-04T00:00:00Z").unwrap();
        let ms = |t: &str| parse("--since", t, now).unwrap();
        let at = |t: &str| parse_timestamp(t).unwrap();
        assert_eq!(
            ms("2024-05-01T12:00:00.000Z"),
            at("2024-05-01T12:00:00.000Z")
        );
        assert_eq!(ms("2024-05-01"), at("2024-05-01T00:00:00.000Z"));
        assert_eq!(
            ms("2024-05-01T14:00:00+02:00"),
            at("2024-05-01T12:00:00.000Z")
        );
        assert_eq!(ms("2024-05-01T12:00:00Z"), at("2024-05-01T12:00:00.000Z"));
        assert_eq!(
            ms("2024-05-01T12:00:00.0001Z"),
            at("2024-05-01T12:00:00.001Z")
        );
        assert_eq!(
            ms("2024-05-01T12:00:00.123456-00:30"),
            at("2024-05-01T12:30:00.124Z")
        );
        assert_eq!(ms("3d"), at("2024-05-01T00:00:00.000Z"));
        assert_eq!(ms("2h"), at("2024-05-03T22:00:00.000Z"));
        assert_eq!(ms("90m"), at("2024-05-03T22:30:00.000Z"));
        for bad in [
            "",
            "yesterday",
            "2024-13-01",
            "2024-05-01T12:00:00",
            "-2h",
            "2",
            "1e3",
        ] {
            let error = parse("--since", bad, now).unwrap_err().to_string();
            assert!(
                error.contains("2024-05-01 (midnight UTC)"),
                "{bad:?}: {error}"
            );
        }
    }
}
