//! The rule options, built once per run (docs/envelope.md#size-limit, #the-submit-subset, and
//! the CLI's `--require-version`).

use std::collections::BTreeMap;

/// The envelope versions this engine reads.
pub const SUPPORTED_VERSIONS: std::ops::RangeInclusive<u32> = 1..=2;

/// The supported versions for people: `1 and 2`.
pub fn supported_versions() -> String {
    let all: Vec<String> = SUPPORTED_VERSIONS.map(|v| v.to_string()).collect();
    match all.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}
/// The version this engine writes.
pub const NEWEST_VERSION: u32 = 2;
/// The default envelope size limit: 1 MiB.
pub const DEFAULT_MAX_ENVELOPE_BYTES: u64 = 1024 * 1024;

/// What the rules are asked to check. Start from [`RuleOptions::default`] (a 1 MiB size limit
/// for every queue, full envelopes, any supported version, warnings computed), set the fields
/// that differ, then turn it into [`crate::EnvelopeRules`]:
///
/// ```
/// let mut options = rdq_envelope::RuleOptions::default();
/// options.max_envelope_bytes = 256 * 1024;
/// options.queue_limits.insert("media.thumbnails".into(), 4 << 20);
/// let rules = rdq_envelope::EnvelopeRules::new(options)?;
/// # Ok::<(), rdq_envelope::OptionsError>(())
/// ```
///
/// New options may come in later versions (the type is `#[non_exhaustive]`), each with a
/// default that keeps today's behaviour.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RuleOptions {
    /// The envelope size limit for queues without one of their own (`PAYLOAD_TOO_LARGE`).
    pub max_envelope_bytes: u64,
    /// Per-queue size limits; each replaces the global one for its queue.
    pub queue_limits: BTreeMap<String, u64>,
    /// Judge lines as the submit subset (docs/envelope.md#the-submit-subset) instead of full
    /// envelopes.
    pub submit: bool,
    /// Lines of another supported version get `UNSUPPORTED_VERSION`.
    pub require_version: Option<u32>,
    /// Compute the warnings (docs/envelope.md#warnings).
    pub warnings: bool,
}

impl Default for RuleOptions {
    fn default() -> Self {
        RuleOptions {
            max_envelope_bytes: DEFAULT_MAX_ENVELOPE_BYTES,
            queue_limits: BTreeMap::new(),
            submit: false,
            require_version: None,
            warnings: true,
        }
    }
}

/// Options that contradict each other or the spec.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OptionsError {
    /// `require_version` names a version this engine does not read.
    #[error(
        "required version {0}: supported versions are {supported}",
        supported = supported_versions()
    )]
    UnsupportedVersion(u32),
    /// `require_version` with `submit`: submitted lines carry no version.
    #[error("a required version does not go with the submit subset: a submitted line has no envelope_version")]
    RequireVersionWithSubmit,
}

impl RuleOptions {
    /// Checks the options against each other.
    pub fn validate(&self) -> Result<(), OptionsError> {
        if let Some(v) = self.require_version {
            if !SUPPORTED_VERSIONS.contains(&v) {
                return Err(OptionsError::UnsupportedVersion(v));
            }
            if self.submit {
                return Err(OptionsError::RequireVersionWithSubmit);
            }
        }
        Ok(())
    }

    /// The size limit of `queue` (its own, or the global one).
    pub fn limit_for(&self, queue: Option<&str>) -> u64 {
        queue
            .and_then(|q| self.queue_limits.get(q))
            .copied()
            .unwrap_or(self.max_envelope_bytes)
    }

    /// The largest limit in force: a longer line cannot be valid whatever it holds.
    pub fn largest_limit(&self) -> u64 {
        self.queue_limits
            .values()
            .copied()
            .fold(self.max_envelope_bytes, u64::max)
    }
}
