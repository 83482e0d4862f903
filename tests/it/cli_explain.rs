//! `rdq-envelope explain`: a code's entry, `--list`, an unknown code, a missing argument.

use rdq_envelope::catalogue::CATALOGUE;
use rdq_envelope::ErrorCode;

use crate::common;
use common::{run, stderr, stdout};

#[test]
fn explain_prints_the_entry_of_a_code() {
    let out = run(&["explain", "NOT_DEAD"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stderr.is_empty());
    let text = stdout(&out);
    assert!(
        text.starts_with(
            "NOT_DEAD (error: the line is rejected)\n\n`redrive` of a task that is not `DEAD`.\n"
        ),
        "{text}"
    );
    for part in [
        "\nWhere it is reported:\n  /status  always\n",
        "\nExample, with `rdq-envelope redrive`:\n",
        "  the valid version 2 envelope with `\"status\":\"DEAD\"` changed to\n  `\"status\":\"CANCELLED\"`:\n",
        "  gets NOT_DEAD at \"/status\".\n",
        "\nHow to fix it:\n  Redrive only the dead letters",
        "\nSee docs/envelope.md#not_dead, docs/cli.md#redrive.\n",
    ] {
        assert!(text.contains(part), "{part:?} not in\n{text}");
    }
    assert!(text
        .lines()
        .filter(|l| !l.starts_with("    {"))
        .all(|l| l.chars().count() <= 79));
}

#[test]
fn the_code_may_be_in_any_letter_case() {
    let upper = run(&["explain", "BAD_ATTEMPT"], b"");
    let lower = run(&["explain", "bad_attempt"], b"");
    let mixed = run(&["explain", "Bad_Attempt"], b"");
    assert_eq!(upper.status.code(), Some(0));
    assert!(stdout(&upper).starts_with("BAD_ATTEMPT (error: the line is rejected)\n"));
    assert_eq!(stdout(&lower), stdout(&upper));
    assert_eq!(stdout(&mixed), stdout(&upper));
    let warning = stdout(&run(&["explain", "id_time_mismatch"], b""));
    assert!(warning.starts_with("ID_TIME_MISMATCH (warning: reported, never a reason to reject)\n"));
    assert!(warning.contains("Example, with `rdq-envelope validate --warnings`:"));
}

#[test]
fn list_prints_every_code_with_its_summary_aligned() {
    let out = run(&["explain", "--list"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), ErrorCode::ALL.len());
    for (line, entry) in lines.iter().zip(CATALOGUE) {
        let severity = if entry.code.is_warning() {
            "warning"
        } else {
            "error  "
        };
        let expected = format!("{:21}  {severity}  {}", entry.code.as_str(), entry.summary);
        assert_eq!(*line, expected);
    }
    assert_eq!(
        lines[0],
        "LINE_TOO_LONG          error    The line's content is longer than the reader cap"
    );
}

#[test]
fn an_unknown_code_is_status_2_with_the_closest_one() {
    let out = run(&["explain", "BAD_ATEMPT"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert_eq!(
        stderr(&out),
        "rdq-envelope: unknown code \"BAD_ATEMPT\"; did you mean BAD_ATTEMPT? \
         (`rdq-envelope explain --list` lists every code)\n"
    );
    let out = run(&["explain", "invalid-id"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unknown code \"invalid-id\"; did you mean INVALID_ID?"));
}

/// An empty name, garbage, or the start of several codes is close to no code: no code is
/// suggested, only the list.
#[test]
fn a_code_is_suggested_only_when_it_is_close() {
    for name in ["", " ", "xyz", "zzzzzzzzzzzzzzzz", "INVALID", "hello world"] {
        let out = run(&["explain", name], b"");
        assert_eq!(out.status.code(), Some(2), "{name:?}");
        assert_eq!(
            stderr(&out),
            format!(
                "rdq-envelope: unknown code {name:?}: \
                 `rdq-envelope explain --list` lists every code\n"
            ),
            "{name:?}"
        );
    }
    let out = run(&["explain", "chokaq"], b"");
    assert!(
        stderr(&out).contains("did you mean CHOKAQ_LIMIT?"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn explain_needs_a_code_or_list_and_not_both() {
    for args in [&["explain"][..], &["explain", "NOT_DEAD", "--list"]] {
        let out = run(args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(
            stderr(&out).contains("Usage: rdq-envelope explain"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn a_closed_standard_output_is_quiet() {
    let mut child = common::spawn(&["explain", "--list"]);
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
}

#[test]
fn a_full_standard_output_is_status_2() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        return;
    };
    let out = common::bin()
        .args(["explain", "--list"])
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("rdq-envelope: "),
        "{}",
        stderr(&out)
    );
}
