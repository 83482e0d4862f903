//! The ChokaQ tables and their columns: names, JSON kinds, the columns that tell the tables
//! apart, and the failure reasons (docs/chokaq.md#rows).

/// A ChokaQ table (serialized as its name: `hot`, `archive`, `dlq`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Table {
    /// `JobsHot`: active jobs.
    Hot,
    /// `JobsArchive`: jobs that succeeded.
    Archive,
    /// `JobsDLQ`: dead letters.
    Dlq,
}

impl Table {
    /// The name in `rdq.source` (`chokaq://<table>/<Id>`) and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Table::Hot => "hot",
            Table::Archive => "archive",
            Table::Dlq => "dlq",
        }
    }

    pub(super) fn columns(self) -> &'static [Col] {
        use Col::*;
        match self {
            Table::Hot => &[
                Id,
                Queue,
                Type,
                Payload,
                Tags,
                IdempotencyKey,
                Priority,
                Status,
                AttemptCount,
                WorkerId,
                HeartbeatUtc,
                ScheduledAtUtc,
                CreatedAtUtc,
                StartedAtUtc,
                LastUpdatedUtc,
                CreatedBy,
                LastModifiedBy,
            ],
            Table::Archive => &[
                Id,
                Queue,
                Type,
                Payload,
                Tags,
                AttemptCount,
                WorkerId,
                CreatedBy,
                LastModifiedBy,
                CreatedAtUtc,
                StartedAtUtc,
                FinishedAtUtc,
                DurationMs,
            ],
            Table::Dlq => &[
                Id,
                Queue,
                Type,
                Payload,
                Tags,
                FailureReason,
                ErrorDetails,
                AttemptCount,
                WorkerId,
                CreatedBy,
                LastModifiedBy,
                CreatedAtUtc,
                FailedAtUtc,
            ],
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Col {
    Id,
    Queue,
    Type,
    Payload,
    Tags,
    IdempotencyKey,
    Priority,
    Status,
    AttemptCount,
    WorkerId,
    HeartbeatUtc,
    ScheduledAtUtc,
    CreatedAtUtc,
    StartedAtUtc,
    LastUpdatedUtc,
    CreatedBy,
    LastModifiedBy,
    FinishedAtUtc,
    DurationMs,
    FailureReason,
    ErrorDetails,
    FailedAtUtc,
}

pub(super) const COLUMN_COUNT: usize = 22;

/// Every column with its spelling in docs/chokaq.md#column-types and its JSON type.
pub(super) const COLUMNS: [(Col, &str, Kind); COLUMN_COUNT] = [
    (Col::Id, "Id", Kind::Text),
    (Col::Queue, "Queue", Kind::Text),
    (Col::Type, "Type", Kind::Text),
    (Col::Payload, "Payload", Kind::Text),
    (Col::Tags, "Tags", Kind::Text),
    (Col::IdempotencyKey, "IdempotencyKey", Kind::Text),
    (Col::Priority, "Priority", Kind::Integer),
    (Col::Status, "Status", Kind::Integer),
    (Col::AttemptCount, "AttemptCount", Kind::Integer),
    (Col::WorkerId, "WorkerId", Kind::Text),
    (Col::HeartbeatUtc, "HeartbeatUtc", Kind::Time),
    (Col::ScheduledAtUtc, "ScheduledAtUtc", Kind::Time),
    (Col::CreatedAtUtc, "CreatedAtUtc", Kind::Time),
    (Col::StartedAtUtc, "StartedAtUtc", Kind::Time),
    (Col::LastUpdatedUtc, "LastUpdatedUtc", Kind::Time),
    (Col::CreatedBy, "CreatedBy", Kind::Text),
    (Col::LastModifiedBy, "LastModifiedBy", Kind::Text),
    (Col::FinishedAtUtc, "FinishedAtUtc", Kind::Time),
    (Col::DurationMs, "DurationMs", Kind::Number),
    (Col::FailureReason, "FailureReason", Kind::Integer),
    (Col::ErrorDetails, "ErrorDetails", Kind::Text),
    (Col::FailedAtUtc, "FailedAtUtc", Kind::Time),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Text,
    Integer,
    Number,
    Time,
}

impl Col {
    pub(super) fn name(self) -> &'static str {
        COLUMNS[self as usize].1
    }

    pub(super) fn path(self) -> String {
        format!("/{}", self.name())
    }
}

/// The telling columns, in the order that decides between them.
pub(super) const TELLING: [(Col, Table); 3] = [
    (Col::FailureReason, Table::Dlq),
    (Col::FinishedAtUtc, Table::Archive),
    (Col::Status, Table::Hot),
];

pub(super) const FAILURE_REASONS: [&str; 11] = [
    "MaxRetriesExceeded",
    "Cancelled",
    "Zombie",
    "CircuitBreakerOpen",
    "Rejected",
    "Throttled",
    "FatalError",
    "Timeout",
    "Transient",
    "HeartbeatFailure",
    "RetryLifetimeExpired",
];
