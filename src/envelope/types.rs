//! The envelope's typed values (docs/envelope.md#version-1): its ID, its timestamps, its
//! status and an attempt's outcome. Each has exactly one spelling in an envelope, so reading
//! one and writing it back gives the same bytes.

use std::fmt;
use std::str::FromStr;

use super::formats::{parse_timestamp, timestamp_bytes, ulid_value};

/// Why a [`Ulid`], [`Timestamp`], [`Status`] or [`Outcome`] could not be read from a text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not {expected}")]
pub struct ParseError {
    text: String,
    expected: &'static str,
}

impl ParseError {
    fn new(text: &str, expected: &'static str) -> Self {
        // A long text is quoted in part: the error stays small whatever was handed in.
        let cut = crate::diagnostic::cut_text(text, 64).into_owned();
        ParseError {
            text: cut,
            expected,
        }
    }
}

/// An envelope's `status` (docs/envelope.md#status-consistency).
///
/// ```
/// use rdq_envelope::envelope::Status;
///
/// let status: Status = "DEAD".parse()?;
/// assert_eq!(status, Status::Dead);
/// assert_eq!(status.as_str(), "DEAD");
/// assert!(status.is_terminal());
/// assert!("dead".parse::<Status>().is_err());
/// # Ok::<(), rdq_envelope::envelope::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Status {
    /// Waiting for its `next_attempt_at`.
    Pending,
    /// Leased by a worker: its last attempt is in flight.
    InFlight,
    /// Done: its last attempt succeeded.
    Succeeded,
    /// Dead-lettered: its last attempt failed and it will not be retried until redriven.
    Dead,
    /// Cancelled (version 2 only).
    Cancelled,
}

impl Status {
    /// Every status, in the order of the contract's state table.
    pub const ALL: [Status; 5] = [
        Status::Pending,
        Status::InFlight,
        Status::Succeeded,
        Status::Dead,
        Status::Cancelled,
    ];

    /// The status spelled `name`, in any version. Always inlined: called from both paths of
    /// the checker, LLVM kept it out of line, which cost the single pass a call per line.
    #[inline(always)]
    pub(crate) fn from_name(name: &[u8]) -> Option<Status> {
        Some(match name {
            b"PENDING" => Status::Pending,
            b"IN_FLIGHT" => Status::InFlight,
            b"SUCCEEDED" => Status::Succeeded,
            b"DEAD" => Status::Dead,
            b"CANCELLED" => Status::Cancelled,
            _ => return None,
        })
    }

    /// How an envelope spells it.
    ///
    /// ```
    /// assert_eq!(rdq_envelope::envelope::Status::InFlight.as_str(), "IN_FLIGHT");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "PENDING",
            Status::InFlight => "IN_FLIGHT",
            Status::Succeeded => "SUCCEEDED",
            Status::Dead => "DEAD",
            Status::Cancelled => "CANCELLED",
        }
    }

    /// Whether no attempt follows without an operator's action (`SUCCEEDED`, `DEAD`,
    /// `CANCELLED`).
    ///
    /// ```
    /// use rdq_envelope::envelope::Status;
    /// assert!(!Status::Pending.is_terminal() && Status::Cancelled.is_terminal());
    /// ```
    pub const fn is_terminal(self) -> bool {
        matches!(self, Status::Succeeded | Status::Dead | Status::Cancelled)
    }

    /// The first `envelope_version` that has this status (`CANCELLED` came with version 2).
    ///
    /// ```
    /// use rdq_envelope::envelope::Status;
    /// assert_eq!((Status::Dead.since_version(), Status::Cancelled.since_version()), (1, 2));
    /// ```
    pub const fn since_version(self) -> u32 {
        match self {
            Status::Cancelled => 2,
            _ => 1,
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Status {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        Status::from_name(s.as_bytes()).ok_or_else(|| ParseError::new(s, "a status"))
    }
}

/// How an attempt ended (docs/envelope.md#the-attempt-record).
///
/// ```
/// use rdq_envelope::envelope::Outcome;
///
/// let outcome: Outcome = "LEASE_EXPIRED".parse()?;
/// assert_eq!(outcome, Outcome::LeaseExpired);
/// assert_eq!(Outcome::RetryableFailure.to_string(), "RETRYABLE_FAILURE");
/// assert!(!Outcome::PermanentFailure.is_success());
/// # Ok::<(), rdq_envelope::envelope::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Outcome {
    /// The handler succeeded.
    Success,
    /// The handler failed and asked to be retried.
    RetryableFailure,
    /// The handler failed and asked not to be retried.
    PermanentFailure,
    /// The worker's lease ran out before the handler answered.
    LeaseExpired,
}

impl Outcome {
    /// Every outcome.
    pub const ALL: [Outcome; 4] = [
        Outcome::Success,
        Outcome::RetryableFailure,
        Outcome::PermanentFailure,
        Outcome::LeaseExpired,
    ];

    /// The outcome spelled `name`. Always inlined, as [`Status::from_name`] (a call per
    /// attempt otherwise).
    #[inline(always)]
    pub(crate) fn from_name(name: &[u8]) -> Option<Outcome> {
        Some(match name {
            b"SUCCESS" => Outcome::Success,
            b"RETRYABLE_FAILURE" => Outcome::RetryableFailure,
            b"PERMANENT_FAILURE" => Outcome::PermanentFailure,
            b"LEASE_EXPIRED" => Outcome::LeaseExpired,
            _ => return None,
        })
    }

    /// How an envelope spells it.
    ///
    /// ```
    /// assert_eq!(rdq_envelope::envelope::Outcome::Success.as_str(), "SUCCESS");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "SUCCESS",
            Outcome::RetryableFailure => "RETRYABLE_FAILURE",
            Outcome::PermanentFailure => "PERMANENT_FAILURE",
            Outcome::LeaseExpired => "LEASE_EXPIRED",
        }
    }

    /// Whether it is [`Outcome::Success`].
    ///
    /// ```
    /// assert!(rdq_envelope::envelope::Outcome::Success.is_success());
    /// ```
    pub const fn is_success(self) -> bool {
        matches!(self, Outcome::Success)
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Outcome {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        Outcome::from_name(s.as_bytes()).ok_or_else(|| ParseError::new(s, "an outcome"))
    }
}

/// A point in time as envelopes write it: `YYYY-MM-DDTHH:MM:SS.mmmZ`, UTC, milliseconds,
/// years 0000 to 9999 (docs/envelope.md#timestamps). Every value has exactly one spelling.
///
/// ```
/// use rdq_envelope::envelope::Timestamp;
///
/// let t: Timestamp = "2024-05-01T12:00:00.123Z".parse()?;
/// assert_eq!(t.unix_ms(), 1_714_564_800_123);
/// assert_eq!(t.to_string(), "2024-05-01T12:00:00.123Z");
/// assert!("2024-05-01T12:00:00Z".parse::<Timestamp>().is_err());
/// assert_eq!(Timestamp::from_unix_ms(t.unix_ms() + 877), "2024-05-01T12:00:01.000Z".parse().ok());
/// # Ok::<(), rdq_envelope::envelope::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Timestamp(i64);

impl Timestamp {
    /// 0000-01-01T00:00:00.000Z, the earliest timestamp.
    pub const MIN: Timestamp = Timestamp(-62_167_219_200_000);
    /// 9999-12-31T23:59:59.999Z, the latest timestamp.
    pub const MAX: Timestamp = Timestamp(253_402_300_799_999);
    /// 1970-01-01T00:00:00.000Z.
    pub const UNIX_EPOCH: Timestamp = Timestamp(0);

    /// The timestamp `ms` milliseconds after 1970-01-01T00:00:00.000Z (before it when
    /// negative), or `None` outside [`Timestamp::MIN`]..=[`Timestamp::MAX`].
    ///
    /// ```
    /// use rdq_envelope::envelope::Timestamp;
    /// assert_eq!(Timestamp::from_unix_ms(0), Some(Timestamp::UNIX_EPOCH));
    /// assert_eq!(Timestamp::from_unix_ms(Timestamp::MAX.unix_ms() + 1), None);
    /// ```
    pub const fn from_unix_ms(ms: i64) -> Option<Timestamp> {
        if ms < Self::MIN.0 || ms > Self::MAX.0 {
            return None;
        }
        Some(Timestamp(ms))
    }

    /// `ms` clamped into [`Timestamp::MIN`]..=[`Timestamp::MAX`].
    ///
    /// ```
    /// use rdq_envelope::envelope::Timestamp;
    /// assert_eq!(Timestamp::saturating_from_unix_ms(i64::MAX), Timestamp::MAX);
    /// ```
    pub const fn saturating_from_unix_ms(ms: i64) -> Timestamp {
        if ms < Self::MIN.0 {
            Self::MIN
        } else if ms > Self::MAX.0 {
            Self::MAX
        } else {
            Timestamp(ms)
        }
    }

    /// The system clock's time, to the millisecond (clamped into the envelope's range).
    ///
    /// ```
    /// use rdq_envelope::envelope::Timestamp;
    /// assert!(Timestamp::now() > "2024-01-01T00:00:00.000Z".parse().unwrap());
    /// ```
    pub fn now() -> Timestamp {
        let ms = match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
            Ok(after) => i64::try_from(after.as_millis()).unwrap_or(i64::MAX),
            Err(before) => i64::try_from(before.duration().as_millis()).map_or(i64::MIN, |ms| -ms),
        };
        Timestamp::saturating_from_unix_ms(ms)
    }

    /// Milliseconds since 1970-01-01T00:00:00.000Z (negative before it).
    ///
    /// ```
    /// use rdq_envelope::envelope::Timestamp;
    /// assert_eq!(Timestamp::MIN.unix_ms(), -62_167_219_200_000);
    /// ```
    pub const fn unix_ms(self) -> i64 {
        self.0
    }

    /// `ms` milliseconds later (earlier when negative), or `None` past either end.
    ///
    /// ```
    /// use rdq_envelope::envelope::Timestamp;
    /// let t = Timestamp::UNIX_EPOCH.checked_add_ms(1500).unwrap();
    /// assert_eq!(t.to_string(), "1970-01-01T00:00:01.500Z");
    /// assert_eq!(Timestamp::MAX.checked_add_ms(1), None);
    /// ```
    pub const fn checked_add_ms(self, ms: i64) -> Option<Timestamp> {
        match self.0.checked_add(ms) {
            Some(sum) => Timestamp::from_unix_ms(sum),
            None => None,
        }
    }

    /// The 24 bytes of its spelling.
    ///
    /// ```
    /// use rdq_envelope::envelope::Timestamp;
    /// assert_eq!(&Timestamp::UNIX_EPOCH.to_bytes(), b"1970-01-01T00:00:00.000Z");
    /// ```
    pub fn to_bytes(self) -> [u8; 24] {
        timestamp_bytes(self.0)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bytes = self.to_bytes();
        // The spelling is ASCII digits and separators.
        f.write_str(std::str::from_utf8(&bytes).map_err(|_| fmt::Error)?)
    }
}

impl FromStr for Timestamp {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        parse_timestamp(s)
            .map(Timestamp)
            .ok_or_else(|| ParseError::new(s, "a timestamp (YYYY-MM-DDTHH:MM:SS.mmmZ)"))
    }
}

/// An envelope's `id`: a ULID, 48 bits of millisecond time then 80 random bits, written as 26
/// upper-case Crockford base32 characters (docs/envelope.md#id). Every value has exactly one
/// spelling; values order as their spellings do.
///
/// ```
/// use rdq_envelope::envelope::Ulid;
///
/// let id: Ulid = "01HWT0DD088F8ENKHRJHCSSPV8".parse()?;
/// assert_eq!(id.to_string(), "01HWT0DD088F8ENKHRJHCSSPV8");
/// assert_eq!(id.time_ms(), 1_714_564_805_640);
/// assert!("01hwt0dd088f8enkhrjhcsspv8".parse::<Ulid>().is_err());
/// # Ok::<(), rdq_envelope::envelope::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ulid(u128);

/// The largest millisecond time a ULID holds (48 bits).
const ULID_TIME_MAX: u64 = (1 << 48) - 1;
/// The random part's bits.
const ULID_RANDOM_BITS: u32 = 80;

impl Ulid {
    /// The ULID of millisecond time `time_ms` (at most 2^48−1) and the low 80 bits of
    /// `random`; `None` when the time does not fit.
    ///
    /// ```
    /// use rdq_envelope::envelope::Ulid;
    /// let id = Ulid::from_parts(1_714_564_800_000, 0).unwrap();
    /// assert_eq!(id.to_string(), "01HWT0D7G00000000000000000");
    /// assert_eq!(Ulid::from_parts(1 << 48, 0), None);
    /// ```
    pub const fn from_parts(time_ms: u64, random: u128) -> Option<Ulid> {
        if time_ms > ULID_TIME_MAX {
            return None;
        }
        let random = random & ((1u128 << ULID_RANDOM_BITS) - 1);
        Some(Ulid((time_ms as u128) << ULID_RANDOM_BITS | random))
    }

    /// Its 128 bits.
    ///
    /// ```
    /// use rdq_envelope::envelope::Ulid;
    /// assert_eq!(Ulid::from_parts(1, 2).unwrap().to_u128(), 1 << 80 | 2);
    /// ```
    pub const fn to_u128(self) -> u128 {
        self.0
    }

    /// The ULID of 128 bits (every value is one).
    ///
    /// ```
    /// use rdq_envelope::envelope::Ulid;
    /// assert_eq!(Ulid::from_u128(u128::MAX).to_string(), "7ZZZZZZZZZZZZZZZZZZZZZZZZZ");
    /// ```
    pub const fn from_u128(bits: u128) -> Ulid {
        Ulid(bits)
    }

    /// Its millisecond time (the first 48 bits).
    ///
    /// ```
    /// use rdq_envelope::envelope::Ulid;
    /// assert_eq!(Ulid::from_parts(1_714_564_800_000, 5).unwrap().time_ms(), 1_714_564_800_000);
    /// ```
    pub const fn time_ms(self) -> u64 {
        (self.0 >> ULID_RANDOM_BITS) as u64
    }

    /// Its random part (the last 80 bits).
    ///
    /// ```
    /// use rdq_envelope::envelope::Ulid;
    /// assert_eq!(Ulid::from_parts(7, 9).unwrap().random(), 9);
    /// ```
    pub const fn random(self) -> u128 {
        self.0 & ((1u128 << ULID_RANDOM_BITS) - 1)
    }

    /// The 26 bytes of its spelling.
    ///
    /// ```
    /// use rdq_envelope::envelope::Ulid;
    /// assert_eq!(&Ulid::from_u128(0).to_bytes(), b"00000000000000000000000000");
    /// ```
    pub fn to_bytes(self) -> [u8; 26] {
        const DIGITS: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
        let mut out = [0u8; 26];
        for (i, byte) in out.iter_mut().enumerate() {
            let shift = 5 * (25 - i);
            *byte = DIGITS[(self.0 >> shift) as usize & 31];
        }
        out
    }
}

impl fmt::Display for Ulid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bytes = self.to_bytes();
        f.write_str(std::str::from_utf8(&bytes).map_err(|_| fmt::Error)?)
    }
}

impl FromStr for Ulid {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        ulid_value(s.as_bytes()).map(Ulid).ok_or_else(|| {
            ParseError::new(
                s,
                "a ULID (26 upper-case Crockford base32 characters, the first 0-7)",
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamp_ends_are_the_spelled_ends() {
        assert_eq!(Timestamp::MIN.to_string(), "0000-01-01T00:00:00.000Z");
        assert_eq!(Timestamp::MAX.to_string(), "9999-12-31T23:59:59.999Z");
        assert_eq!("0000-01-01T00:00:00.000Z".parse(), Ok(Timestamp::MIN));
        assert_eq!("9999-12-31T23:59:59.999Z".parse(), Ok(Timestamp::MAX));
    }

    #[test]
    fn every_value_reads_back_from_its_spelling() {
        for ms in [
            Timestamp::MIN.0,
            -1,
            0,
            1,
            951_782_400_000,
            Timestamp::MAX.0,
        ] {
            let t = Timestamp(ms);
            assert_eq!(t.to_string().parse(), Ok(t), "{ms}");
        }
        for bits in [0, 1, u128::MAX, 0x0123_4567_89ab_cdef_0123_4567_89ab_cdef] {
            let id = Ulid(bits);
            assert_eq!(id.to_string().parse(), Ok(id), "{bits}");
        }
        for s in Status::ALL {
            assert_eq!(s.as_str().parse(), Ok(s));
        }
        for o in Outcome::ALL {
            assert_eq!(o.as_str().parse(), Ok(o));
        }
    }

    #[test]
    fn a_long_bad_text_is_quoted_in_part() {
        let err = "x".repeat(10_000).parse::<Ulid>().unwrap_err();
        assert!(err.to_string().len() < 200, "{err}");
    }
}
