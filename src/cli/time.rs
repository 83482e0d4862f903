//! Times on the command line (docs/cli.md#times): friendlier than the envelope's one strict
//! form, which stays the only one envelopes may hold.

use std::str::FromStr;

use anyhow::bail;
use jiff::{civil::Date, Span, SpanRelativeTo, Timestamp};

use rdq_envelope::envelope::formats::{parse_timestamp, push_timestamp};

/// What every time flag's error message lists.
const FORMS: &str = "expected one of: 2024-05-01T12:00:00.000Z (the envelope's form), \
    2024-05-01 (midnight UTC), 2024-05-01T14:00:00+02:00 (RFC 3339, any offset or fraction), \
    or 2h, 3d, 90m (that long before now)";

/// The time `text` names, in milliseconds since the epoch, for `flag`; `now` for the
/// durations. A time between two milliseconds rounds up: envelope times are whole
/// milliseconds, so "at or after" and "before" it stay exact.
pub fn parse(flag: &str, text: &str, now: Timestamp) -> anyhow::Result<i64> {
    if let Some(ms) = parse_timestamp(text) {
        return Ok(ms);
    }
    let instant = if text.len() == 10 {
        Date::from_str(text)
            .ok()
            .and_then(|d| d.to_zoned(jiff::tz::TimeZone::UTC).ok())
            .map(|z| z.timestamp())
    } else if text.starts_with(|c: char| c.is_ascii_digit()) && !text.contains([':', '-']) {
        Span::from_str(text)
            .ok()
            .filter(|span| !span.is_negative())
            .and_then(|span| span.to_duration(SpanRelativeTo::days_are_24_hours()).ok())
            .and_then(|duration| now.checked_sub(duration).ok())
    } else {
        Timestamp::from_str(text).ok()
    };
    let Some(instant) = instant else {
        bail!("{flag} {text:?}: {FORMS}");
    };
    let ns = instant.as_nanosecond();
    let ms = ns.div_euclid(1_000_000) + i128::from(ns.rem_euclid(1_000_000) != 0);
    match i64::try_from(ms) {
        Ok(ms) => Ok(ms),
        Err(_) => bail!("{flag} {text:?}: {FORMS}"),
    }
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
