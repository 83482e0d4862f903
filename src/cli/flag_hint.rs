//! A FILE argument that names no file but looks like what belongs in a flag: a jq expression
//! (`'.status == "DEAD"'`, for `--where`) or a predicate (`status=DEAD`, for `--status DEAD`).
//! The run still fails as any missing input does (status 2); this adds the line that says
//! what was probably meant (docs/cli.md#inputs).

use std::path::Path;

use rdq_envelope::report::shell::shell_word;

/// The `filter` flags a `KEY=VALUE` argument may have meant, by their key.
const PREDICATE_FLAGS: &[&str] = &[
    "status",
    "queue",
    "handler",
    "id",
    "outcome",
    "error-type",
    "last-error-type",
    "fingerprint",
    "since",
    "until",
    "min-attempts",
    "max-attempts",
];

/// The hint for an input `name` that could not be opened because there is no such file,
/// when it looks like a flag's value; `command` is the run's subcommand.
pub fn for_missing_input(command: &str, name: &str) -> Option<String> {
    if Path::new(name).exists() {
        return None;
    }
    let filter = |flags: String| match command {
        "filter" => format!("rdq-envelope filter {flags} FILE"),
        _ => format!("rdq-envelope filter {flags} FILE | rdq-envelope {command}"),
    };
    if looks_like_jq(name) {
        let run = filter(format!("--where {}", shell_word(name)));
        return Some(format!(
            "{} names no file and looks like a jq expression: to keep the envelopes it \
             matches, give it to --where: {run}",
            shell_word(name)
        ));
    }
    let (key, value) = name.split_once('=')?;
    let flag = key.trim().to_ascii_lowercase().replace('_', "-");
    if value.is_empty() || !PREDICATE_FLAGS.contains(&flag.as_str()) {
        return None;
    }
    let run = filter(format!("--{flag} {}", shell_word(value.trim())));
    Some(format!(
        "{} names no file and looks like a predicate: filter takes it as --{flag}: {run}",
        shell_word(name)
    ))
}

/// A jq expression rather than a path: it starts with `.` followed by a member name, `[`, a
/// quote or white space (`./x` and `..` are paths), or it holds an operator or a call no
/// file name does.
fn looks_like_jq(name: &str) -> bool {
    let name = name.trim();
    let mut chars = name.chars();
    let starts_like_a_path = matches!(
        (chars.next(), chars.next()),
        (Some('.'), None | Some('/' | '.'))
    );
    let dotted = name.starts_with('.') && !starts_like_a_path;
    let operators = [
        " == ", " != ", " and ", " or ", " | ", "select(", " >= ", " <= ", " > ", " < ",
    ];
    dotted || operators.iter().any(|op| name.contains(op))
}

#[cfg(test)]
mod tests {
    use super::for_missing_input;

    #[test]
    fn jq_expressions_and_predicates_get_their_flag() {
        let hint = for_missing_input("filter", ".status == \"DEAD\"").unwrap();
        assert!(hint.contains("--where '.status == \"DEAD\"'"), "{hint}");
        assert!(hint.ends_with("rdq-envelope filter --where '.status == \"DEAD\"' FILE"));
        let hint = for_missing_input("stats", "status=DEAD").unwrap();
        assert!(
            hint.ends_with("rdq-envelope filter --status DEAD FILE | rdq-envelope stats"),
            "{hint}"
        );
        let hint = for_missing_input("filter", "last_error_type=java.net.*").unwrap();
        assert!(hint.contains("--last-error-type 'java.net.*'"), "{hint}");
        assert!(for_missing_input("filter", ".attempt_count").is_some());
    }

    #[test]
    fn paths_get_no_hint() {
        for name in [
            "missing.jsonl",
            "./missing.jsonl",
            "../x.jsonl",
            "..",
            "a=b.jsonl",
            "colour=red",
            "status=",
            "s3://bucket/key",
        ] {
            assert_eq!(for_missing_input("filter", name), None, "{name}");
        }
    }
}
