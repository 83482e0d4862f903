//! `--queue-limits FILE`: each queue's own size limit from the deployment's configuration, one
//! `"queue" = bytes` pair per queue in TOML, or one JSON object `{"queue": bytes, ...}`.
//!
//! The file is read and checked while the arguments are parsed, so a bad one is a usage error
//! (status 2) before any input is opened; the message names the file, the line and the
//! problem.

use std::collections::HashSet;
use std::fmt;
use std::io::Read;

use rdq_envelope::envelope::formats::is_name;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

/// The largest file read: a deployment's queue list is kilobytes; more is not such a file.
const MAX_FILE_BYTES: u64 = 16 << 20;

/// The limits of `--queue-limits FILE`, in the file's order.
#[derive(Clone, Debug)]
pub struct QueueLimitsFile {
    /// Queue and limit in bytes; no queue twice.
    pub limits: Vec<(String, u64)>,
}

/// The clap value parser of `--queue-limits`: reads and checks the file.
pub fn parse(path: &str) -> Result<QueueLimitsFile, String> {
    let text = read(path)?;
    let limits = from_text(&text).map_err(|(line, problem)| match line {
        Some(line) => format!("{path}:{line}: {problem}"),
        None => format!("{path}: {problem}"),
    })?;
    Ok(QueueLimitsFile { limits: limits.0 })
}

fn read(path: &str) -> Result<String, String> {
    // A file, or an object or URL as every input may be (never a URL taken for a local path).
    let file = rdq_envelope::io::open_stored(std::path::Path::new(path))
        .map_err(|e| format!("{path}: cannot open: {e}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{path}: cannot read: {e}"))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "{path}: over {MAX_FILE_BYTES} bytes: not a file of queue limits"
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let line = line_at(
            &String::from_utf8_lossy(e.as_bytes()),
            e.utf8_error().valid_up_to(),
        );
        format!("{path}:{line}: bytes that are not UTF-8")
    })
}

/// The limits in `text`, JSON when its first character (after white space and a BOM) is `{`
/// (which no TOML document starts with), else TOML; or the line of the problem (when known)
/// and the problem.
fn from_text(text: &str) -> Result<Limits, (Option<usize>, String)> {
    let body = text.trim_start_matches('\u{feff}');
    if body.trim_start().starts_with('{') {
        serde_json::from_str::<Limits>(body).map_err(|e| {
            // serde_json's message ends with its own " at line L column C": the line is
            // given in front instead.
            let message = e.to_string();
            let problem = match message.rfind(" at line ") {
                Some(at) => message[..at].to_owned(),
                None => message,
            };
            (Some(e.line()).filter(|&l| l > 0), problem)
        })
    } else {
        toml::from_str::<Limits>(body).map_err(|e| {
            let line = e.span().map(|span| line_at(body, span.start));
            (line, e.message().trim_end().to_owned())
        })
    }
}

/// The 1-based line of byte `at` of `text`.
fn line_at(text: &str, at: usize) -> usize {
    let at = at.min(text.len());
    text.as_bytes()[..at]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Queue → limit pairs; a queue given twice is an error (only one limit could count).
struct Limits(Vec<(String, u64)>);

impl<'de> Deserialize<'de> for Limits {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(LimitsVisitor)
    }
}

struct LimitsVisitor;

impl<'de> Visitor<'de> for LimitsVisitor {
    type Value = Limits;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("queue names with their limits in bytes")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Limits, A::Error> {
        let mut limits: Vec<(String, u64)> = Vec::new();
        // A set beside the list: a deployment's file may name hundreds of thousands of queues,
        // and a scan of the list per queue was quadratic (200,000 queues took half a minute).
        let mut seen = HashSet::new();
        while let Some(QueueName(queue)) = map.next_key()? {
            let Limit(bytes) = map.next_value()?;
            if !seen.insert(queue.clone()) {
                return Err(de::Error::custom(format!(
                    "{queue:?}: given twice (only one limit could count)"
                )));
            }
            limits.push((queue, bytes));
        }
        Ok(Limits(limits))
    }
}

/// Why `queue` is no name an envelope's `queue` can hold (1 to 240 of `[a-z0-9._-]`), if it is
/// not: a limit for it would never apply. The same words for `--queue-limit` and the file.
pub fn queue_name_problem(queue: &str) -> Option<String> {
    if is_name(queue) {
        return None;
    }
    let name_char = |c: char| matches!(c, 'a'..='z' | '0'..='9' | '.' | '_' | '-');
    let why = if queue.is_empty() {
        "the queue name is empty".to_owned()
    } else if let Some(bad) = queue.chars().find(|&c| !name_char(c)) {
        format!("{queue:?}: {bad:?} is not in a queue name (a-z, 0-9, '.', '_', '-')")
    } else {
        format!("{queue:?}: over 240 bytes, longer than any queue name")
    };
    Some(format!("{why}, so no envelope is in that queue"))
}

/// A key of the file: a queue name an envelope can hold, refused as the key is read (so that
/// TOML's error points at the key's line).
struct QueueName(String);

impl<'de> Deserialize<'de> for QueueName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let queue = String::deserialize(deserializer)?;
        match queue_name_problem(&queue) {
            Some(problem) => Err(de::Error::custom(problem)),
            None => Ok(QueueName(queue)),
        }
    }
}

/// One limit: a byte count.
struct Limit(u64);

impl<'de> Deserialize<'de> for Limit {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_u64(LimitVisitor)
    }
}

struct LimitVisitor;

impl<'de> Visitor<'de> for LimitVisitor {
    type Value = Limit;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a limit in bytes (a whole number from 0)")
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Limit, E> {
        Ok(Limit(n))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Limit, E> {
        u64::try_from(n).map(Limit).map_err(|_| {
            E::custom(format!(
                "{n} is not a limit in bytes (a whole number from 0)"
            ))
        })
    }

    // A TOML key `billing.invoices = 1` (unquoted) is the table `billing` holding `invoices`:
    // say how to write a queue name with dots.
    fn visit_map<A: MapAccess<'de>>(self, _map: A) -> Result<Limit, A::Error> {
        Err(de::Error::custom(
            "a table, not a limit in bytes (in TOML, quote a queue name that has dots: \"billing.invoices\" = 2097152)",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::{from_text, line_at};

    fn limits(text: &str) -> Vec<(String, u64)> {
        from_text(text).unwrap().0
    }

    fn problem(text: &str) -> (Option<usize>, String) {
        from_text(text).err().unwrap()
    }

    #[test]
    fn toml_and_json_give_the_same_limits_in_file_order() {
        let toml = "# per queue\n\"billing.invoices\" = 2097152\nmail = 65536\n";
        let json = "\u{feff}\n {\"billing.invoices\": 2097152, \"mail\": 65536}";
        let want = vec![
            ("billing.invoices".to_owned(), 2097152),
            ("mail".to_owned(), 65536),
        ];
        assert_eq!(limits(toml), want);
        assert_eq!(limits(json), want);
        assert!(limits("").is_empty());
        assert!(limits("{}").is_empty());
    }

    #[test]
    fn problems_name_their_line() {
        let (line, why) = problem("a = 1\nb = -5\n");
        assert_eq!(line, Some(2), "{why}");
        assert!(why.contains("-5"), "{why}");
        let (line, why) = problem("a = 1\nbilling.invoices = 5\n");
        assert_eq!(line, Some(2), "{why}");
        assert!(why.contains("quote a queue name"), "{why}");
        let (line, why) = problem("{\"a\": 1,\n \"a\": 2}");
        assert_eq!(line, Some(2), "{why}");
        assert!(why.contains("given twice"), "{why}");
        let (line, why) = problem("{\"a\": \"big\"}");
        assert_eq!(line, Some(1), "{why}");
        assert!(!why.contains(" at line "), "{why}");
        let (line, why) = problem("a = 1\na = 2\n");
        assert_eq!(line, Some(2), "{why}");
        let (_, why) = problem("\"\" = 1");
        assert!(why.contains("empty"), "{why}");
        let (line, _) = problem("a = 1\n\n[oops\n");
        assert_eq!(line, Some(3));
    }

    #[test]
    fn lines_are_counted_from_one() {
        assert_eq!(line_at("", 0), 1);
        assert_eq!(line_at("a\nb", 2), 2);
        assert_eq!(line_at("a\nb", 99), 2);
    }
}
