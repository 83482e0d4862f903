//! What a batch run is, as its manifest records it: the command and every option of it that
//! decides the bytes of the outputs, in the crate's own terms (not the command line's). Two runs
//! with the same configuration write the same outputs, so a rerun with an equal one resumes and
//! any other is refused, naming the difference ([`Config::differences`]).
//!
//! The configuration is one flat JSON object whose members are named like the flags that set
//! them (`to` for `--to`, `queue_limit` for `--queue-limit`): `{"command":"migrate","to":2,
//! "from":"rdq","max_envelope_bytes":1048576,"queue_limit":{},"max_line_bytes":16777216,
//! "compress":null}`. Repeatable predicates are sets (sorted, without repeats) and the queue
//! limits a map, so the same meaning given in another order is the same configuration.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::chokaq::Table;

/// A batch run's configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// The command every shard runs, with its own options.
    #[serde(flatten)]
    pub command: Command,
    /// The size limits every command applies.
    #[serde(flatten)]
    pub limits: Limits,
    /// How the outputs are compressed; `None` follows each shard's own ending.
    pub compress: Option<Compress>,
}

/// The command every shard runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "lowercase")]
pub enum Command {
    /// `validate`: the valid lines are a shard's output, its rejects hold the diagnostics.
    Validate(ValidateConfig),
    /// `migrate`: the migrated lines are a shard's output.
    Migrate(MigrateConfig),
    /// `filter`: the matching lines are a shard's output.
    Filter(Box<FilterConfig>),
}

/// The size limits (`--max-envelope-bytes`, `--queue-limit`, `--max-line-bytes`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// The envelope size limit for queues without a limit of their own.
    pub max_envelope_bytes: u64,
    /// Each queue's own size limit, by queue.
    pub queue_limit: BTreeMap<String, u64>,
    /// The reader cap.
    pub max_line_bytes: usize,
}

/// How the outputs are compressed (`--compress`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Compress {
    /// zstd, on the shard's workers.
    Zstd,
    /// gzip.
    Gzip,
    /// Plain bytes.
    None,
}

impl Compress {
    /// The ending it gives the outputs' names.
    pub fn suffix(self) -> &'static str {
        match self {
            Compress::Zstd => ".zst",
            Compress::Gzip => ".gz",
            Compress::None => "",
        }
    }
}

/// `batch validate`'s options that decide its outputs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValidateConfig {
    /// The submit subset (`--submit`).
    pub submit: bool,
    /// The only envelope_version accepted (`--require-version`).
    pub require_version: Option<u32>,
}

/// `batch migrate`'s options that decide its outputs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MigrateConfig {
    /// The envelope_version written (`--to`).
    pub to: u32,
    /// What the input lines are (`--from`), with the options of that kind.
    #[serde(flatten)]
    pub from: MigrateFrom,
}

/// What `migrate` reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "from", rename_all = "lowercase")]
pub enum MigrateFrom {
    /// rdq envelopes.
    Rdq,
    /// ChokaQ table rows (docs/chokaq.md).
    Chokaq {
        /// The table of every row; `None` tells it per row.
        chokaq_table: Option<Table>,
        /// Seconds after a running job's last heartbeat at which its lease expires.
        chokaq_zombie_timeout: u32,
        /// ChokaQ's payload limit in UTF-8 bytes.
        chokaq_max_payload_bytes: u64,
    },
}

/// `batch filter`'s options that decide its outputs: the predicates (each repeatable one a set,
/// an OR within itself) and `--invert`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilterConfig {
    /// `--queue` globs.
    pub queue: BTreeSet<String>,
    /// `--handler` globs.
    pub handler: BTreeSet<String>,
    /// `--status` values.
    pub status: BTreeSet<String>,
    /// `--error-type` globs.
    pub error_type: BTreeSet<String>,
    /// `--last-error-type` globs.
    pub last_error_type: BTreeSet<String>,
    /// `--outcome` values.
    pub outcome: BTreeSet<String>,
    /// `--since`, as the time it named (`YYYY-MM-DDTHH:MM:SS.mmmZ`).
    pub since: Option<String>,
    /// `--until`, as the time it named.
    pub until: Option<String>,
    /// `--failed-since`, as the time it named.
    #[serde(default)]
    pub failed_since: Option<String>,
    /// `--failed-until`, as the time it named.
    #[serde(default)]
    pub failed_until: Option<String>,
    /// `--fingerprint` values, lower-case.
    #[serde(default)]
    pub fingerprint: BTreeSet<String>,
    /// `--error-message` patterns.
    #[serde(default)]
    pub error_message: BTreeSet<String>,
    /// `--where`.
    #[serde(default, rename = "where")]
    pub where_expr: Option<String>,
    /// `--id` values.
    pub id: BTreeSet<String>,
    /// `--header KEY=GLOB` pairs (each must hold).
    pub header: BTreeSet<String>,
    /// `--min-attempts`.
    pub min_attempts: Option<u64>,
    /// `--max-attempts`.
    pub max_attempts: Option<u64>,
    /// `--min-redrives`.
    pub min_redrives: Option<u64>,
    /// `--payload-contains` texts.
    pub payload_contains: BTreeSet<String>,
    /// `--invert`.
    pub invert: bool,
}

impl Config {
    /// The command's name: `validate`, `migrate` or `filter`.
    pub fn command_name(&self) -> &'static str {
        match self.command {
            Command::Validate(_) => "validate",
            Command::Migrate(_) => "migrate",
            Command::Filter(_) => "filter",
        }
    }

    /// The options by name (as the manifest spells them), in name order, the command left out.
    fn options(&self) -> BTreeMap<String, Value> {
        match serde_json::to_value(self).expect("a configuration serializes") {
            Value::Object(map) => map.into_iter().filter(|(k, _)| k != "command").collect(),
            _ => unreachable!("a configuration is an object"),
        }
    }

    /// The configuration for people, like a command line: `migrate --from=rdq
    /// --max-envelope-bytes=1048576 --max-line-bytes=16777216 --to=2` (options in name order,
    /// one `--name=value` per value; a switch on as `--name`; options not set left out).
    pub fn describe(&self) -> String {
        let mut text = self.command_name().to_owned();
        for (name, value) in self.options() {
            let flag = format!("--{}", name.replace('_', "-"));
            match value {
                Value::Null | Value::Bool(false) => {}
                Value::Bool(true) => text.push_str(&format!(" {flag}")),
                Value::Array(items) => {
                    for item in items {
                        text.push_str(&format!(" {flag}={}", shown(&item)));
                    }
                }
                Value::Object(map) => {
                    for (key, item) in map {
                        text.push_str(&format!(" {flag}={key}={}", shown(&item)));
                    }
                }
                value => text.push_str(&format!(" {flag}={}", shown(&value))),
            }
        }
        text
    }

    /// What differs between the run `self` describes and `now`, for people: `batch migrate
    /// there, batch filter now`, or `--to: 2 there, 1 now; ...`. Empty when they are equal.
    pub fn differences(&self, now: &Config) -> String {
        if self.command_name() != now.command_name() {
            return format!(
                "batch {} there, batch {} now",
                self.command_name(),
                now.command_name()
            );
        }
        let (there, here) = (self.options(), now.options());
        let names: BTreeSet<&String> = there.keys().chain(here.keys()).collect();
        let given = |value: Option<&Value>| match value {
            None | Some(Value::Null) => "not given".to_owned(),
            Some(Value::Array(items)) if items.is_empty() => "not given".to_owned(),
            Some(Value::Object(map)) if map.is_empty() => "not given".to_owned(),
            Some(value) => shown(value),
        };
        names
            .into_iter()
            .filter(|name| there.get(*name) != here.get(*name))
            .map(|name| {
                format!(
                    "--{}: {} there, {} now",
                    name.replace('_', "-"),
                    given(there.get(name)),
                    given(here.get(name))
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// A value for people: a string bare, a set's items and a map's `key=value` pairs spaced.
fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(shown).collect::<Vec<_>>().join(" "),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| format!("{k}={}", shown(v)))
            .collect::<Vec<_>>()
            .join(" "),
        value => value.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits {
            max_envelope_bytes: 1_048_576,
            queue_limit: BTreeMap::new(),
            max_line_bytes: 16_777_216,
        }
    }

    #[test]
    fn a_configuration_reads_back_and_describes_itself() {
        let migrate = Config {
            command: Command::Migrate(MigrateConfig {
                to: 2,
                from: MigrateFrom::Rdq,
            }),
            limits: limits(),
            compress: None,
        };
        let json = serde_json::to_string(&migrate).unwrap();
        assert_eq!(
            json,
            "{\"command\":\"migrate\",\"to\":2,\"from\":\"rdq\",\"max_envelope_bytes\":1048576,\
             \"queue_limit\":{},\"max_line_bytes\":16777216,\"compress\":null}"
        );
        assert_eq!(serde_json::from_str::<Config>(&json).unwrap(), migrate);
        assert_eq!(
            migrate.describe(),
            "migrate --from=rdq --max-envelope-bytes=1048576 --max-line-bytes=16777216 --to=2"
        );

        let chokaq = Config {
            command: Command::Migrate(MigrateConfig {
                to: 1,
                from: MigrateFrom::Chokaq {
                    chokaq_table: Some(Table::Dlq),
                    chokaq_zombie_timeout: 600,
                    chokaq_max_payload_bytes: 1_000_000,
                },
            }),
            limits: Limits {
                queue_limit: BTreeMap::from([("q".into(), 10), ("r".into(), 20)]),
                ..limits()
            },
            compress: Some(Compress::Gzip),
        };
        let json = serde_json::to_string(&chokaq).unwrap();
        assert_eq!(serde_json::from_str::<Config>(&json).unwrap(), chokaq);
        assert!(chokaq.describe().contains(
            "--chokaq-table=dlq --chokaq-zombie-timeout=600 --compress=gzip --from=chokaq"
        ));
        assert!(chokaq
            .describe()
            .contains("--queue-limit=q=10 --queue-limit=r=20"));
        assert_eq!(
            migrate.differences(&chokaq),
            "--chokaq-max-payload-bytes: not given there, 1000000 now; \
             --chokaq-table: not given there, dlq now; \
             --chokaq-zombie-timeout: not given there, 600 now; \
             --compress: not given there, gzip now; --from: rdq there, chokaq now; \
             --queue-limit: not given there, q=10 r=20 now; --to: 2 there, 1 now"
        );
    }

    #[test]
    fn filter_sets_are_sets() {
        let config = |status: &[&str], invert| Config {
            command: Command::Filter(Box::new(FilterConfig {
                status: status.iter().map(|s| s.to_string()).collect(),
                invert,
                ..FilterConfig::default()
            })),
            limits: limits(),
            compress: None,
        };
        let a = config(&["PENDING", "DEAD", "DEAD"], false);
        assert_eq!(a, config(&["DEAD", "PENDING"], false));
        assert!(a.describe().contains(" --status=DEAD --status=PENDING"));
        assert!(!a.describe().contains("--invert"));
        let b = config(&["DEAD"], true);
        assert_eq!(
            a.differences(&b),
            "--invert: false there, true now; --status: DEAD PENDING there, DEAD now"
        );
        let json = serde_json::to_string(&b).unwrap();
        assert_eq!(serde_json::from_str::<Config>(&json).unwrap(), b);
        let validate = Config {
            command: Command::Validate(ValidateConfig {
                submit: true,
                require_version: None,
            }),
            limits: limits(),
            compress: None,
        };
        assert_eq!(
            validate.differences(&a),
            "batch validate there, batch filter now"
        );
    }
}
