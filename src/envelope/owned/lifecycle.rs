//! The lifecycle as types (docs/library.md#the-lifecycle): a submission becomes a `PENDING`
//! envelope with an ID and timestamps, and each transition of the contract's state table is a
//! method that yields a valid envelope or an [`EnvelopeError`] naming the rule it would break.
//!
//! ```text
//!            submit                 lease                finish_attempt
//!   Submit ─────────▶ PENDING ─────────────▶ IN_FLIGHT ─────────────────▶ FinishedAttempt
//!                       ▲  ▲                                                │ │ │ │
//!                       │  └──────────────────── retry_at ──────────────────┘ │ │ │
//!                       │        redrive      DEAD ◀──────── dead_letter ─────┘ │ │
//!                       └───────────────────── ┘  SUCCEEDED ◀── succeed ───────┘ │
//!                                                 CANCELLED ◀── cancel (v2) ─────┘
//! ```
//!
//! A finished attempt is a value of its own ([`FinishedAttempt`]): the envelope changes only
//! when it is given its next status, so no envelope is ever `IN_FLIGHT` with its last attempt
//! finished.

use super::super::types::{Outcome, Status, Timestamp, Ulid};
use super::read::new_origin;
use super::{
    check_content_type, check_handler_version, check_header_key, check_name, depth, known, Attempt,
    AttemptError, Envelope, EnvelopeError, Optional, SizeLimit, UnknownMembers,
};

/// Where the time comes from: [`SystemClock`], or any closure returning a [`Timestamp`]
/// (tests, simulations, a clock of one's own).
///
/// ```
/// use rdq_envelope::envelope::{Clock, Timestamp};
/// let mut fixed = || Timestamp::UNIX_EPOCH;
/// assert_eq!(fixed.now(), Timestamp::UNIX_EPOCH);
/// ```
pub trait Clock {
    /// The time now.
    fn now(&mut self) -> Timestamp;
}

impl<F: FnMut() -> Timestamp> Clock for F {
    fn now(&mut self) -> Timestamp {
        self()
    }
}

/// The system's clock, to the millisecond.
///
/// ```
/// use rdq_envelope::envelope::{Clock, SystemClock, Timestamp};
/// assert!(SystemClock.now() > Timestamp::UNIX_EPOCH);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&mut self) -> Timestamp {
        Timestamp::now()
    }
}

/// Makes ULIDs that increase: a new millisecond draws 80 random bits, and each further ID of
/// the same millisecond (or of an earlier one: a clock that stepped back) is the previous ID
/// plus one, as the ULID specification's monotonic generator does.
///
/// ```
/// use rdq_envelope::envelope::{IdGenerator, Timestamp};
///
/// let t: Timestamp = "2024-05-01T12:00:00.000Z".parse()?;
/// let mut ids = IdGenerator::from_seed(42);
/// let (a, b) = (ids.next_id(t)?, ids.next_id(t)?);
/// assert!(b > a && a.time_ms() == b.time_ms());
/// assert_eq!(b.to_u128(), a.to_u128() + 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct IdGenerator {
    last: Option<Ulid>,
    /// SplitMix64's state: the random part of each new millisecond's first ID.
    state: u64,
}

impl Default for IdGenerator {
    fn default() -> Self {
        IdGenerator::new()
    }
}

impl IdGenerator {
    /// A generator seeded from the process's hash randomness (a different sequence in every
    /// process).
    ///
    /// ```
    /// use rdq_envelope::envelope::{IdGenerator, Timestamp};
    /// let t = Timestamp::now();
    /// let (a, b) = (IdGenerator::new().next_id(t)?, IdGenerator::new().next_id(t)?);
    /// assert_ne!(a, b); // 80 random bits each
    /// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
    /// ```
    pub fn new() -> IdGenerator {
        use std::hash::{BuildHasher, Hasher};
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(Timestamp::now().unix_ms() as u128);
        IdGenerator::from_seed(hasher.finish())
    }

    /// A generator whose IDs are a function of `seed` and the times asked (reproducible runs,
    /// tests).
    ///
    /// ```
    /// use rdq_envelope::envelope::{IdGenerator, Timestamp};
    /// let t = Timestamp::UNIX_EPOCH.checked_add_ms(1).unwrap();
    /// assert_eq!(IdGenerator::from_seed(9).next_id(t)?, IdGenerator::from_seed(9).next_id(t)?);
    /// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
    /// ```
    pub fn from_seed(seed: u64) -> IdGenerator {
        IdGenerator {
            last: None,
            state: seed,
        }
    }

    fn random64(&mut self) -> u64 {
        // SplitMix64 (Steele, Lea, Flood 2014): the state steps by the golden gamma and each
        // output is a mix of it; 80 bits are two outputs.
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The next ID at time `now`; refused before 1970 (a ULID's time is unsigned) and when the
    /// millisecond has no random value left.
    ///
    /// ```
    /// use rdq_envelope::envelope::{IdGenerator, Timestamp};
    /// let mut ids = IdGenerator::from_seed(1);
    /// let later: Timestamp = "2024-05-01T12:00:00.001Z".parse()?;
    /// let first = ids.next_id(later)?;
    /// // The clock steps back: the next ID still sorts after the last.
    /// assert!(ids.next_id(later.checked_add_ms(-1).unwrap())? > first);
    /// assert!(ids.next_id("1969-12-31T23:59:59.999Z".parse()?).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn next_id(&mut self, now: Timestamp) -> Result<Ulid, EnvelopeError> {
        let no_ulid = |why| EnvelopeError::NoUlid {
            at: now.to_string(),
            why,
        };
        let ms =
            u64::try_from(now.unix_ms()).map_err(|_| no_ulid("a ULID's time starts in 1970"))?;
        let id = match self.last {
            Some(last) if last.time_ms() >= ms => {
                // The same millisecond, or a clock that stepped back: one more than the last.
                if last.random() == (1u128 << 80) - 1 {
                    return Err(no_ulid("2^80 IDs were made in this millisecond"));
                }
                Ulid::from_u128(last.to_u128() + 1)
            }
            _ => {
                let random = u128::from(self.random64()) << 16 | u128::from(self.random64() >> 48);
                Ulid::from_parts(ms, random).ok_or_else(|| no_ulid("past a ULID's 48-bit time"))?
            }
        };
        self.last = Some(id);
        Ok(id)
    }
}

/// What a client submits (docs/envelope.md#the-submit-subset): queue, handler, payload,
/// content type, and optionally the handler's version, headers and where it came from. Each
/// member is checked as it is given.
///
/// ```
/// use rdq_envelope::envelope::Submit;
///
/// let submit = Submit::new("billing.invoices", "invoice.render", b"{}".to_vec(), "application/json")?
///     .handler_version("1.4.0")?
///     .header("traceparent", "00-abc")?
///     .source("billing-api");
/// assert!(Submit::new("q", "h", vec![], "text/plain")?.header("rdq.secret", "x").is_err());
/// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Submit {
    version: u32,
    queue: String,
    handler_ref: String,
    handler_version: Optional<String>,
    payload: Vec<u8>,
    payload_content_type: String,
    headers: Vec<(String, String)>,
    source: Option<String>,
    submitted_by: Option<String>,
}

impl Submit {
    /// A submission of `payload` (any bytes: written as base64) of media type `content_type`
    /// to `handler_ref` on `queue`.
    ///
    /// ```
    /// use rdq_envelope::envelope::Submit;
    /// assert!(Submit::new("mail", "send", vec![], "text/plain").is_ok());
    /// assert!(Submit::new("mail", "send", vec![], "text").is_err());
    /// ```
    pub fn new(
        queue: &str,
        handler_ref: &str,
        payload: Vec<u8>,
        content_type: &str,
    ) -> Result<Submit, EnvelopeError> {
        check_name("queue", queue)?;
        check_name("handler_ref", handler_ref)?;
        check_content_type(content_type)?;
        Ok(Submit {
            version: 1,
            queue: queue.to_owned(),
            handler_ref: handler_ref.to_owned(),
            handler_version: Optional::Absent,
            payload,
            payload_content_type: content_type.to_owned(),
            headers: Vec::new(),
            source: None,
            submitted_by: None,
        })
    }

    /// The `envelope_version` to make: 1 (the default) or 2.
    ///
    /// ```
    /// # use rdq_envelope::envelope::Submit;
    /// assert!(Submit::new("q", "h", vec![], "text/plain")?.version(3).is_err());
    /// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
    /// ```
    pub fn version(mut self, version: u32) -> Result<Submit, EnvelopeError> {
        if !(1..=2).contains(&version) {
            return Err(EnvelopeError::UnsupportedVersion { version });
        }
        self.version = version;
        Ok(self)
    }

    /// The handler's version (1-240 bytes, no control characters).
    ///
    /// ```
    /// use rdq_envelope::envelope::Submit;
    /// assert!(Submit::new("q", "h", vec![], "text/plain")?.handler_version("2.0").is_ok());
    /// assert!(Submit::new("q", "h", vec![], "text/plain")?.handler_version("a\nb").is_err());
    /// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
    /// ```
    pub fn handler_version(mut self, version: &str) -> Result<Submit, EnvelopeError> {
        let version = Optional::Set(version.to_owned());
        check_handler_version(&version)?;
        self.handler_version = version;
        Ok(self)
    }

    /// A header (replacing one of the same key). Keys starting with `rdq.` in any case are
    /// the server's (`RESERVED_HEADER`): where the task came from is [`Submit::source`] and
    /// [`Submit::submitted_by`].
    ///
    /// ```
    /// use rdq_envelope::envelope::Submit;
    /// let submit = Submit::new("q", "h", vec![], "text/plain")?.header("tenant", "acme")?;
    /// assert!(submit.header("RDQ.source", "x").is_err());
    /// # Ok::<(), rdq_envelope::envelope::EnvelopeError>(())
    /// ```
    pub fn header(mut self, key: &str, value: &str) -> Result<Submit, EnvelopeError> {
        check_header_key(key, 1)?;
        if key.len() >= 4 && key.as_bytes()[..4].eq_ignore_ascii_case(b"rdq.") {
            return Err(EnvelopeError::ReservedHeader {
                key: key.to_owned(),
            });
        }
        match self.headers.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => *v = value.to_owned(),
            None => self.headers.push((key.to_owned(), value.to_owned())),
        }
        Ok(self)
    }

    /// Where the task came from: the header `rdq.source` in version 1, `origin.source` in
    /// version 2.
    ///
    /// ```
    /// use rdq_envelope::envelope::{Producer, Submit};
    /// let v2 = Producer::new().submit(Submit::new("q", "h", vec![], "text/plain")?.version(2)?.source("api"))?;
    /// assert_eq!(v2.origin().and_then(|o| o.source()), Some("api"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn source(mut self, source: &str) -> Submit {
        self.source = Some(source.to_owned());
        self
    }

    /// Who submitted it: the header `rdq.submitted_by` in version 1, `origin.submitted_by`
    /// in version 2.
    ///
    /// ```
    /// # use rdq_envelope::envelope::{Producer, Submit};
    /// let envelope = Producer::new().submit(Submit::new("q", "h", vec![], "text/plain")?.submitted_by("ops@example.com"))?;
    /// assert_eq!(envelope.header("rdq.submitted_by"), Some("ops@example.com"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn submitted_by(mut self, submitted_by: &str) -> Submit {
        self.submitted_by = Some(submitted_by.to_owned());
        self
    }
}

/// Makes new envelopes: the ID from its [`IdGenerator`], the times from its [`Clock`].
///
/// ```
/// use rdq_envelope::envelope::{Producer, Status, Submit, Timestamp};
///
/// let t0: Timestamp = "2024-05-01T12:00:00.000Z".parse()?;
/// let mut producer = Producer::with_clock(move || t0).with_seed(1);
/// let envelope = producer.submit(Submit::new("mail", "send", vec![], "text/plain")?)?;
/// assert_eq!((envelope.status(), envelope.created_at(), envelope.next_attempt_at()), (Status::Pending, t0, Some(t0)));
/// assert_eq!(envelope.id().time_ms(), t0.unix_ms() as u64);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Producer<C: Clock = SystemClock> {
    clock: C,
    ids: IdGenerator,
}

impl Default for Producer<SystemClock> {
    fn default() -> Self {
        Producer::new()
    }
}

impl Producer<SystemClock> {
    /// A producer on the system clock, with IDs seeded per process.
    ///
    /// ```
    /// use rdq_envelope::envelope::{Producer, Submit};
    /// let mut producer = Producer::new();
    /// let (a, b) = (producer.submit(Submit::new("q", "h", vec![], "text/plain")?)?, producer.submit(Submit::new("q", "h", vec![], "text/plain")?)?);
    /// assert!(b.id() > a.id());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new() -> Self {
        Producer::with_clock(SystemClock)
    }
}

impl<C: Clock> Producer<C> {
    /// A producer on `clock`.
    ///
    /// ```
    /// use rdq_envelope::envelope::{Producer, Submit, Timestamp};
    /// let t: Timestamp = "2030-01-01T00:00:00.000Z".parse()?;
    /// let envelope = Producer::with_clock(move || t).submit(Submit::new("q", "h", vec![], "text/plain")?)?;
    /// assert_eq!(envelope.created_at(), t);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_clock(clock: C) -> Self {
        Producer {
            clock,
            ids: IdGenerator::new(),
        }
    }

    /// With IDs from [`IdGenerator::from_seed`]: with a fixed clock, a reproducible run.
    ///
    /// ```
    /// use rdq_envelope::envelope::{Producer, Submit, Timestamp};
    /// let make = || Producer::with_clock(|| Timestamp::UNIX_EPOCH).with_seed(5).submit(Submit::new("q", "h", vec![], "text/plain").unwrap());
    /// assert_eq!(make()?.to_json(), make()?.to_json());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.ids = IdGenerator::from_seed(seed);
        self
    }

    /// The clock's time now: what a transition is given as its time.
    ///
    /// ```
    /// # use rdq_envelope::envelope::{Producer, Timestamp};
    /// let mut producer = Producer::with_clock(|| Timestamp::UNIX_EPOCH);
    /// assert_eq!(producer.now(), Timestamp::UNIX_EPOCH);
    /// ```
    pub fn now(&mut self) -> Timestamp {
        self.clock.now()
    }

    /// A `PENDING` envelope of `submit`: a new ULID, `created_at` and `next_attempt_at` now,
    /// no attempts, both counts 0; refused when it would be over the default size limit (1 MiB).
    ///
    /// ```
    /// use rdq_envelope::envelope::{Producer, Submit};
    /// let mut producer = Producer::new();
    /// assert!(producer.submit(Submit::new("q", "h", vec![0; 1 << 20], "application/octet-stream")?).is_err()); // over 1 MiB as base64
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn submit(&mut self, submit: Submit) -> Result<Envelope, EnvelopeError> {
        let now = self.clock.now();
        let id = self.ids.next_id(now)?;
        let Submit {
            version,
            queue,
            handler_ref,
            handler_version,
            payload,
            payload_content_type,
            mut headers,
            source,
            submitted_by,
        } = submit;
        let origin = if version >= 2 {
            let mut origin = new_origin();
            origin.source = source;
            origin.submitted_by = submitted_by;
            Some(origin)
        } else {
            let moved = [("rdq.source", source), ("rdq.submitted_by", submitted_by)];
            for (key, value) in moved {
                if let Some(value) = value {
                    headers.push((key.to_owned(), value));
                }
            }
            None
        };
        let envelope = Envelope {
            version,
            id,
            queue,
            handler_ref,
            handler_version,
            payload: Some(payload),
            payload_content_type,
            payload_ref: Optional::Absent,
            headers,
            origin,
            status: Status::Pending,
            attempt_count: 0,
            redrive_count: 0,
            next_attempt_at: Some(now),
            lease_expires_at: None,
            created_at: now,
            attempts: Vec::new(),
            unknown: UnknownMembers::for_object(known::top(version), depth::TOP),
            size_limit: SizeLimit::default(),
        };
        envelope.check_size()?;
        Ok(envelope)
    }
}

/// The transitions of the state table (docs/envelope.md#status-consistency).
impl Envelope {
    /// Starts an attempt (`PENDING` → `IN_FLIGHT`): a new attempt record started `now`, in
    /// flight, numbered after the last (1 after a redrive); `attempt_count` one more;
    /// `lease_expires_at` the lease's end. Refused from any other status, when `now` is
    /// before the last attempt's start or the lease ends before `now`.
    ///
    /// ```
    /// # use rdq_envelope::envelope::{Producer, Status, Submit, Timestamp};
    /// # let t0: Timestamp = "2024-05-01T12:00:00.000Z".parse()?;
    /// # let mut envelope = Producer::with_clock(move || t0).submit(Submit::new("q", "h", vec![], "text/plain")?)?;
    /// let attempt = envelope.lease(t0, t0.checked_add_ms(30_000).unwrap())?;
    /// assert_eq!((attempt.attempt_no(), attempt.finished_at()), (1, None));
    /// assert_eq!(envelope.status(), Status::InFlight);
    /// assert!(envelope.lease(t0, t0).is_err()); // already in flight
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn lease(
        &mut self,
        now: Timestamp,
        lease_expires_at: Timestamp,
    ) -> Result<&Attempt, EnvelopeError> {
        if self.status != Status::Pending {
            return Err(EnvelopeError::NotFromStatus {
                transition: "lease",
                status: self.status,
            });
        }
        if lease_expires_at < now {
            return Err(time_goes_back(
                "lease_expires_at",
                lease_expires_at,
                "the lease's start",
                now,
                "/lease_expires_at",
            ));
        }
        let at = self.attempts.len();
        if let Some(last) = self.attempts.last() {
            if now < last.started_at {
                return Err(time_goes_back(
                    "the attempt's start",
                    now,
                    "the previous attempt's start",
                    last.started_at,
                    &format!("/attempts/{at}/started_at"),
                ));
            }
        }
        let attempt_no = self.next_attempt_no()?;
        let attempt_count =
            self.attempt_count
                .checked_add(1)
                .ok_or(EnvelopeError::CountOverflow {
                    field: "attempt_count",
                })?;
        let version = self.version;
        self.try_change(|e| {
            e.attempts.push(Attempt {
                attempt_no,
                started_at: now,
                finished_at: None,
                outcome: None,
                error: Optional::Absent,
                unknown: UnknownMembers::for_object(known::attempt(version), depth::ATTEMPT),
            });
            e.attempt_count = attempt_count;
            e.status = Status::InFlight;
            e.lease_expires_at = Some(lease_expires_at);
            Ok(())
        })?;
        Ok(&self.attempts[at])
    }

    /// The number of the next attempt: 1 for the first, and for the first after a redrive
    /// (when the count was reset and the numbering may restart once more); else one more than
    /// the last.
    fn next_attempt_no(&self) -> Result<u32, EnvelopeError> {
        let Some(last) = self.attempts.last() else {
            return Ok(1);
        };
        let restarts = self
            .attempts
            .iter()
            .skip(1)
            .filter(|a| a.attempt_no == 1)
            .count();
        if self.attempt_count == 0 && (restarts as u64) < u64::from(self.redrive_count) {
            return Ok(1);
        }
        last.attempt_no
            .checked_add(1)
            .ok_or(EnvelopeError::CountOverflow {
                field: "attempt_no",
            })
    }

    /// Finishes the attempt in flight at `now` with `outcome` and `error` (its `message` and
    /// `stack` already cut as the truncation rule says by [`AttemptError`]). The envelope
    /// changes only when the [`FinishedAttempt`] is given its next status.
    ///
    /// `SUCCESS` takes no error; `LEASE_EXPIRED` takes none or an `rdq.LeaseExpired` one with a
    /// message and no stack (none: "the lease expired"). Refused when no attempt is in
    /// flight, or `now` is before its start.
    ///
    /// ```
    /// # use rdq_envelope::envelope::{AttemptError, Outcome, Producer, Status, Submit, Timestamp};
    /// # let t0: Timestamp = "2024-05-01T12:00:00.000Z".parse()?;
    /// # let t1 = t0.checked_add_ms(1000).unwrap();
    /// # let mut envelope = Producer::with_clock(move || t0).submit(Submit::new("q", "h", vec![], "text/plain")?)?;
    /// envelope.lease(t0, t1)?;
    /// let error = AttemptError::new("java.io.IOException", "reset by peer")?;
    /// envelope.finish_attempt(t1, Outcome::RetryableFailure, Some(error))?.retry_at(t1)?;
    /// assert_eq!(envelope.status(), Status::Pending);
    /// assert_eq!(envelope.last_attempt().unwrap().duration_ms(), Some(1000));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn finish_attempt(
        &mut self,
        now: Timestamp,
        outcome: Outcome,
        error: Option<AttemptError>,
    ) -> Result<FinishedAttempt<'_>, EnvelopeError> {
        let in_flight = self.status == Status::InFlight
            && self
                .attempts
                .last()
                .is_some_and(|a| a.finished_at.is_none());
        if !in_flight {
            return Err(EnvelopeError::NotFromStatus {
                transition: "finish an attempt of",
                status: self.status,
            });
        }
        let at = self.attempts.len() - 1;
        let started = self.attempts[at].started_at;
        if now < started {
            return Err(time_goes_back(
                "finished_at",
                now,
                "started_at",
                started,
                &format!("/attempts/{at}/finished_at"),
            ));
        }
        let error = match (outcome, error) {
            (Outcome::Success, Some(_)) => return Err(EnvelopeError::ErrorOnSuccess),
            (Outcome::LeaseExpired, None) => {
                Some(AttemptError::new("rdq.LeaseExpired", "the lease expired")?)
            }
            (Outcome::LeaseExpired, Some(e)) => {
                let stackless = matches!(e.stack, Optional::Absent | Optional::Null);
                if e.kind != "rdq.LeaseExpired" || e.message.is_empty() || !stackless {
                    return Err(EnvelopeError::LeaseExpiredError);
                }
                Some(e)
            }
            (_, error) => error,
        };
        Ok(FinishedAttempt {
            envelope: self,
            finished_at: now,
            outcome,
            error,
        })
    }

    /// Redrives a `DEAD` envelope (as `rdq-envelope redrive` does): `PENDING`, due `at`,
    /// `attempt_count` 0, `redrive_count` one more; the attempts stay, and the next one is
    /// numbered 1 again.
    ///
    /// ```
    /// # use rdq_envelope::envelope::{EnvelopeError, Outcome, Producer, Status, Submit, Timestamp};
    /// # let t0: Timestamp = "2024-05-01T12:00:00.000Z".parse()?;
    /// # let mut envelope = Producer::with_clock(move || t0).submit(Submit::new("q", "h", vec![], "text/plain")?)?;
    /// assert!(matches!(envelope.redrive(t0), Err(EnvelopeError::NotDead { .. })));
    /// envelope.lease(t0, t0)?;
    /// envelope.finish_attempt(t0, Outcome::PermanentFailure, None)?.dead_letter()?;
    /// envelope.redrive(t0)?;
    /// assert_eq!((envelope.status(), envelope.redrive_count(), envelope.attempt_count()), (Status::Pending, 1, 0));
    /// assert_eq!(envelope.lease(t0, t0)?.attempt_no(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn redrive(&mut self, at: Timestamp) -> Result<(), EnvelopeError> {
        if self.status != Status::Dead {
            return Err(EnvelopeError::NotDead {
                status: self.status,
            });
        }
        let redrive_count =
            self.redrive_count
                .checked_add(1)
                .ok_or(EnvelopeError::CountOverflow {
                    field: "redrive_count",
                })?;
        self.try_change(|e| {
            e.status = Status::Pending;
            e.attempt_count = 0;
            e.redrive_count = redrive_count;
            e.next_attempt_at = Some(at);
            e.lease_expires_at = None;
            Ok(())
        })
    }

    /// Cancels a `PENDING` envelope (version 2's `CANCELLED`; a finished attempt is cancelled
    /// by [`FinishedAttempt::cancel`]).
    ///
    /// ```
    /// # use rdq_envelope::envelope::{Producer, Status, Submit};
    /// let mut producer = Producer::new();
    /// let mut v2 = producer.submit(Submit::new("q", "h", vec![], "text/plain")?.version(2)?)?;
    /// v2.cancel()?;
    /// assert_eq!(v2.status(), Status::Cancelled);
    /// let mut v1 = producer.submit(Submit::new("q", "h", vec![], "text/plain")?)?;
    /// assert!(v1.cancel().is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cancel(&mut self) -> Result<(), EnvelopeError> {
        if self.status != Status::Pending {
            return Err(EnvelopeError::NotFromStatus {
                transition: "cancel",
                status: self.status,
            });
        }
        self.set_cancelled()
    }

    fn set_cancelled(&mut self) -> Result<(), EnvelopeError> {
        if self.version < 2 {
            return Err(EnvelopeError::NeedsVersion2 {
                transition: "cancel",
                version: self.version,
            });
        }
        self.try_change(|e| {
            e.status = Status::Cancelled;
            e.next_attempt_at = None;
            e.lease_expires_at = None;
            Ok(())
        })
    }
}

/// An attempt finished, waiting for the envelope's next status: [`retry_at`], [`dead_letter`],
/// [`succeed`] or (version 2) [`cancel`]. Until one of them, the envelope is unchanged; dropped,
/// it stays unchanged.
///
/// [`retry_at`]: FinishedAttempt::retry_at
/// [`dead_letter`]: FinishedAttempt::dead_letter
/// [`succeed`]: FinishedAttempt::succeed
/// [`cancel`]: FinishedAttempt::cancel
#[must_use = "the envelope changes only when the finished attempt is given its next status"]
#[derive(Debug)]
pub struct FinishedAttempt<'e> {
    envelope: &'e mut Envelope,
    finished_at: Timestamp,
    outcome: Outcome,
    error: Option<AttemptError>,
}

impl FinishedAttempt<'_> {
    /// How the attempt ended.
    ///
    /// ```
    /// # use rdq_envelope::envelope::{Outcome, Producer, Submit, Timestamp};
    /// # let t0 = Timestamp::UNIX_EPOCH;
    /// # let mut envelope = Producer::with_clock(move || t0).submit(Submit::new("q", "h", vec![], "text/plain")?)?;
    /// envelope.lease(t0, t0)?;
    /// let finished = envelope.finish_attempt(t0, Outcome::RetryableFailure, None)?;
    /// assert_eq!(finished.outcome(), Outcome::RetryableFailure);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn outcome(&self) -> Outcome {
        self.outcome
    }

    /// Records the attempt and sets the status (and times) `status` needs.
    fn settle(self, status: Status, next: Option<Timestamp>) -> Result<(), EnvelopeError> {
        let FinishedAttempt {
            envelope,
            finished_at,
            outcome,
            error,
        } = self;
        envelope.try_change(|e| {
            if let Some(last) = e.attempts.last_mut() {
                last.finished_at = Some(finished_at);
                last.outcome = Some(outcome);
                if let Some(error) = error {
                    last.error = Optional::Set(error);
                }
            }
            e.status = status;
            e.next_attempt_at = next;
            e.lease_expires_at = None;
            Ok(())
        })
    }

    fn refuse_success(&self, transition: &'static str) -> Result<(), EnvelopeError> {
        if self.outcome.is_success() {
            return Err(EnvelopeError::NotAfterOutcome {
                transition,
                outcome: self.outcome,
            });
        }
        Ok(())
    }

    /// `PENDING` again, due `at`: the attempt failed and will be retried. Refused after
    /// `SUCCESS` (a success is the last attempt).
    ///
    /// ```
    /// # use rdq_envelope::envelope::{Outcome, Producer, Status, Submit, Timestamp};
    /// # let t0 = Timestamp::UNIX_EPOCH;
    /// # let mut envelope = Producer::with_clock(move || t0).submit(Submit::new("q", "h", vec![], "text/plain")?)?;
    /// envelope.lease(t0, t0)?;
    /// let later = t0.checked_add_ms(60_000).unwrap();
    /// envelope.finish_attempt(t0, Outcome::RetryableFailure, None)?.retry_at(later)?;
    /// assert_eq!((envelope.status(), envelope.next_attempt_at()), (Status::Pending, Some(later)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn retry_at(self, at: Timestamp) -> Result<(), EnvelopeError> {
        self.refuse_success("retry")?;
        self.settle(Status::Pending, Some(at))
    }

    /// `DEAD`: the attempt failed and the task goes to the dead-letter queue. Refused after
    /// `SUCCESS`.
    ///
    /// ```
    /// # use rdq_envelope::envelope::{Outcome, Producer, Status, Submit, Timestamp};
    /// # let t0 = Timestamp::UNIX_EPOCH;
    /// # let mut envelope = Producer::with_clock(move || t0).submit(Submit::new("q", "h", vec![], "text/plain")?)?;
    /// envelope.lease(t0, t0)?;
    /// assert!(envelope.finish_attempt(t0, Outcome::Success, None)?.dead_letter().is_err());
    /// envelope.finish_attempt(t0, Outcome::LeaseExpired, None)?.dead_letter()?;
    /// assert_eq!(envelope.status(), Status::Dead);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn dead_letter(self) -> Result<(), EnvelopeError> {
        self.refuse_success("dead-letter")?;
        self.settle(Status::Dead, None)
    }

    /// `SUCCEEDED`. Refused unless the attempt ended `SUCCESS`.
    ///
    /// ```
    /// # use rdq_envelope::envelope::{Outcome, Producer, Status, Submit, Timestamp};
    /// # let t0 = Timestamp::UNIX_EPOCH;
    /// # let mut envelope = Producer::with_clock(move || t0).submit(Submit::new("q", "h", vec![], "text/plain")?)?;
    /// envelope.lease(t0, t0)?;
    /// envelope.finish_attempt(t0, Outcome::Success, None)?.succeed()?;
    /// assert_eq!(envelope.status(), Status::Succeeded);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn succeed(self) -> Result<(), EnvelopeError> {
        if !self.outcome.is_success() {
            return Err(EnvelopeError::NotAfterOutcome {
                transition: "succeed",
                outcome: self.outcome,
            });
        }
        self.settle(Status::Succeeded, None)
    }

    /// `CANCELLED` (version 2): the attempt is recorded, whatever its outcome, and the task
    /// ends.
    ///
    /// ```
    /// # use rdq_envelope::envelope::{Outcome, Producer, Status, Submit, Timestamp};
    /// # let t0 = Timestamp::UNIX_EPOCH;
    /// # let mut envelope = Producer::with_clock(move || t0).submit(Submit::new("q", "h", vec![], "text/plain")?.version(2)?)?;
    /// envelope.lease(t0, t0)?;
    /// envelope.finish_attempt(t0, Outcome::Success, None)?.cancel()?;
    /// assert_eq!(envelope.status(), Status::Cancelled);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cancel(self) -> Result<(), EnvelopeError> {
        if self.envelope.version < 2 {
            return Err(EnvelopeError::NeedsVersion2 {
                transition: "cancel",
                version: self.envelope.version,
            });
        }
        self.settle(Status::Cancelled, None)
    }
}

fn time_goes_back(
    what: &'static str,
    at: Timestamp,
    after: &'static str,
    earlier: Timestamp,
    pointer: &str,
) -> EnvelopeError {
    EnvelopeError::TimeGoesBack {
        what,
        at: at.to_string(),
        after,
        earlier: earlier.to_string(),
        pointer: pointer.to_owned(),
    }
}

/// Migrations (docs/migrations.md), on the owned envelope: the same refusals as the
/// command's.
impl Envelope {
    /// Rewrites the envelope as `version` (1 or 2). Up: the headers `rdq.source` and
    /// `rdq.submitted_by` move into `origin`, and attempts gain `duration_ms` (refused when an
    /// unknown member `origin` or `duration_ms` would be overwritten). Down: refused for a
    /// `CANCELLED` envelope, a claim-checked payload or unknown members in `origin`; the
    /// moved values become headers again, last.
    ///
    /// ```
    /// # use rdq_envelope::envelope::{Producer, Submit};
    /// let mut envelope = Producer::new().submit(Submit::new("q", "h", vec![], "text/plain")?.source("api"))?;
    /// envelope.migrate(2)?;
    /// assert_eq!((envelope.version(), envelope.header("rdq.source")), (2, None));
    /// assert_eq!(envelope.origin().and_then(|o| o.source()), Some("api"));
    /// envelope.migrate(1)?;
    /// assert_eq!(envelope.header("rdq.source"), Some("api"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn migrate(&mut self, version: u32) -> Result<(), EnvelopeError> {
        match (self.version, version) {
            (from, to) if from == to => Ok(()),
            (1, 2) => self.upgrade(),
            (2, 1) => self.downgrade(),
            (_, to) => Err(EnvelopeError::UnsupportedVersion { version: to }),
        }
    }

    fn upgrade(&mut self) -> Result<(), EnvelopeError> {
        if self.unknown.has("origin") {
            return Err(EnvelopeError::MigrationConflict {
                pointer: "/origin".into(),
            });
        }
        if let Some(i) = self
            .attempts
            .iter()
            .position(|a| a.unknown.has("duration_ms"))
        {
            return Err(EnvelopeError::MigrationConflict {
                pointer: format!("/attempts/{i}/duration_ms"),
            });
        }
        self.try_change(|e| {
            let mut origin = new_origin();
            e.headers.retain(|(key, value)| {
                let slot = match key.as_str() {
                    "rdq.source" => &mut origin.source,
                    "rdq.submitted_by" => &mut origin.submitted_by,
                    _ => return true,
                };
                *slot = Some(value.clone());
                false
            });
            e.origin = Some(origin);
            e.version = 2;
            e.unknown.place(known::TOP_V2, depth::TOP);
            for a in &mut e.attempts {
                a.unknown.place(known::ATTEMPT_V2, depth::ATTEMPT);
            }
            Ok(())
        })
    }

    fn downgrade(&mut self) -> Result<(), EnvelopeError> {
        let blocked = |pointer: String, why| Err(EnvelopeError::CannotDowngrade { pointer, why });
        if self.status == Status::Cancelled {
            return blocked("/status".into(), "version 1 has no CANCELLED");
        }
        if self.payload_ref.is_set() {
            return blocked(
                "/payload_ref".into(),
                "version 1 has no claim-checked payloads",
            );
        }
        if let Some(member) = self.origin.as_ref().and_then(|o| o.unknown.iter().next()) {
            let pointer = format!(
                "/origin/{}",
                member.name().replace('~', "~0").replace('/', "~1")
            );
            return blocked(pointer, "version 1 has no origin for it");
        }
        self.try_change(|e| {
            if let Some(origin) = e.origin.take() {
                let moved = [
                    ("rdq.source", origin.source),
                    ("rdq.submitted_by", origin.submitted_by),
                ];
                for (key, value) in moved {
                    if let Some(value) = value {
                        e.headers.push((key.to_owned(), value));
                    }
                }
            }
            e.version = 1;
            e.unknown.place(known::TOP_V1, depth::TOP);
            for a in &mut e.attempts {
                a.unknown.place(known::ATTEMPT_V1, depth::ATTEMPT);
            }
            Ok(())
        })
    }
}
