//! Each rule of docs/migrations.md on small envelopes written out in full.

use super::{Migration, Migrator};
use crate::envelope::{EnvelopeRules, RuleOptions, Verdict};
use crate::json::JsonParser;
use crate::ErrorCode;

/// A valid v1 envelope; `{HEADERS}`, `{EXTRA}` and `{ATTEMPTS}` are filled in by the tests.
const V1: &str = r#"{"envelope_version":1,"id":"01HWT0D7G0Q8V9W2R4T6Y8A0B2","queue":"billing","handler_ref":"render","payload":"e30=","payload_content_type":"application/json","headers":{HEADERS},"status":"DEAD","attempt_count":2,"redrive_count":0,"next_attempt_at":null,"lease_expires_at":null,"created_at":"2024-05-01T12:00:00.000Z","attempts":[ATTEMPTS]EXTRA}"#;

const TWO_ATTEMPTS: &str = r#"{"attempt_no":1,"started_at":"2024-05-01T12:00:01.000Z","finished_at":"2024-05-01T12:00:31.250Z","outcome":"RETRYABLE_FAILURE","error":{"type":"x.Timeout","message":"m"}},{"attempt_no":2,"started_at":"2024-05-01T12:01:00.000Z","finished_at":"2024-05-01T12:01:00.007Z" ,"outcome":"PERMANENT_FAILURE"}"#;

fn v1(headers: &str, extra: &str) -> String {
    V1.replace("{HEADERS}", headers)
        .replace("ATTEMPTS", TWO_ATTEMPTS)
        .replace("EXTRA", extra)
}

/// Validates `line`, migrates it to `to`; the output, or the codes and pointers refused with.
fn migrate(line: &str, to: u32) -> Result<String, Vec<(ErrorCode, String)>> {
    // The single pass, where it accepts the line, migrates it from its shape to the same bytes.
    crate::test_support::single_pass_agrees(&RuleOptions::default(), line.as_bytes());
    let rules = EnvelopeRules::new(RuleOptions::default()).unwrap();
    let (mut parser, mut verdict) = (JsonParser::new(), Verdict::default());
    let doc = rules.check_line(&mut parser, line.as_bytes(), &mut verdict);
    assert!(verdict.is_valid(), "{line}\n{:?}", verdict.errors);
    let from = verdict.version.unwrap();
    let (mut out, mut errors) = (Vec::new(), Vec::new());
    let done = Migrator::new().migrate(
        line.as_bytes(),
        &doc.unwrap(),
        from,
        to,
        &mut out,
        &mut errors,
    );
    if done.expect("a valid line migrates or is refused") == Migration::Written {
        let out = String::from_utf8(out).unwrap();
        rules.check_line(&mut JsonParser::new(), out.as_bytes(), &mut verdict);
        assert!(verdict.is_valid(), "{out}\n{:?}", verdict.errors);
        assert_eq!(verdict.version, Some(to));
        Ok(out)
    } else {
        Err(errors.into_iter().map(|d| (d.code, d.path)).collect())
    }
}

#[test]
fn up_moves_the_two_headers_into_origin_in_their_order() {
    let line = v1(
        r#"{"a":"1","rdq.submitted_by":"ops\u0040x","b":"2","rdq.source":"api"}"#,
        "",
    );
    let v2 = migrate(&line, 2).unwrap();
    assert!(v2.starts_with(r#"{"envelope_version":2,"#));
    assert!(v2.contains(
        r#""headers":{"a":"1","b":"2"},"origin":{"submitted_by":"ops\u0040x","source":"api"},"status""#
    ));
}

#[test]
fn up_writes_an_empty_origin_and_keeps_headers_whole_when_nothing_moves() {
    let v2 = migrate(&v1(r#"{ "k" : "v" }"#, ""), 2).unwrap();
    assert!(v2.contains(r#""headers":{ "k" : "v" },"origin":{},"status""#));
    let v2 = migrate(&v1(r#"{"rdq.source":"api"}"#, ""), 2).unwrap();
    assert!(v2.contains(r#""headers":{},"origin":{"source":"api"},"#));
}

#[test]
fn up_inserts_durations_right_after_finished_at() {
    let v2 = migrate(&v1("{}", ""), 2).unwrap();
    assert!(
        v2.contains(r#""finished_at":"2024-05-01T12:00:31.250Z","duration_ms":30250,"outcome""#)
    );
    assert!(v2.contains(r#""finished_at":"2024-05-01T12:01:00.007Z","duration_ms":7 ,"outcome""#));

    let in_flight = v1("{}", "")
        .replace(r#""status":"DEAD""#, r#""status":"IN_FLIGHT""#)
        .replace(
            r#""lease_expires_at":null"#,
            r#""lease_expires_at":"2024-05-01T12:02:00.000Z""#,
        )
        .replace(
            r#""finished_at":"2024-05-01T12:01:00.007Z" ,"outcome":"PERMANENT_FAILURE""#,
            r#""finished_at":null,"outcome":null"#,
        );
    let v2 = migrate(&in_flight, 2).unwrap();
    assert!(v2.contains(r#""finished_at":null,"duration_ms":null,"outcome":null"#));
}

#[test]
fn everything_else_stays_byte_for_byte() {
    let extra = r#", "x" : [1e400, -0, 0.1000000000000000055511151231257827, "caf\u00e9\ud83d\ude00"] ,"z":{"rdq.source":1}"#;
    let line = v1(r#"{"rdq.source":"a\/b"}"#, extra);
    let v2 = migrate(&line, 2).unwrap();
    assert!(v2.ends_with(&format!("{TWO_ATTEMPTS_V2}]{extra}}}")));
    assert!(v2.contains(r#""origin":{"source":"a\/b"}"#));
    // And back: the same bytes but for the header's place.
    assert_eq!(migrate(&v2, 1).unwrap(), line);
}

const TWO_ATTEMPTS_V2: &str = r#"{"attempt_no":1,"started_at":"2024-05-01T12:00:01.000Z","finished_at":"2024-05-01T12:00:31.250Z","duration_ms":30250,"outcome":"RETRYABLE_FAILURE","error":{"type":"x.Timeout","message":"m"}},{"attempt_no":2,"started_at":"2024-05-01T12:01:00.000Z","finished_at":"2024-05-01T12:01:00.007Z","duration_ms":7 ,"outcome":"PERMANENT_FAILURE"}"#;

#[test]
fn down_appends_origin_to_headers_in_origins_order() {
    let line = v1(r#"{"a":"1"}"#, "");
    let v2 = migrate(&line, 2).unwrap().replace(
        r#""origin":{}"#,
        r#""origin":{"submitted_by":"u","source":"s"}"#,
    );
    let back = migrate(&v2, 1).unwrap();
    assert!(
        back.contains(r#""headers":{"a":"1","rdq.submitted_by":"u","rdq.source":"s"},"status""#)
    );
    assert!(!back.contains("duration_ms") && !back.contains("origin"));
    let empty = v2.replace(r#""headers":{"a":"1"}"#, r#""headers":{ }"#);
    assert!(migrate(&empty, 1)
        .unwrap()
        .contains(r#""headers":{"rdq.submitted_by":"u","rdq.source":"s" }"#));
}

#[test]
fn up_refuses_what_it_would_overwrite() {
    let line = v1("{}", r#","origin":{"by":"me"}"#).replace(
        r#""outcome":"PERMANENT_FAILURE""#,
        r#""outcome":"PERMANENT_FAILURE","duration_ms":"slow""#,
    );
    assert_eq!(
        migrate(&line, 2).unwrap_err(),
        [
            (ErrorCode::MigrationConflict, "/origin".to_owned()),
            (
                ErrorCode::MigrationConflict,
                "/attempts/1/duration_ms".to_owned()
            ),
        ]
    );
}

#[test]
fn down_refuses_what_version_1_cannot_hold() {
    let v2 = migrate(&v1("{}", ""), 2).unwrap();
    let cancelled = v2.replace(r#""status":"DEAD""#, r#""status":"CANCELLED""#);
    let claim_check = v2.replace(
        r#""payload":"e30=","payload_content_type":"application/json""#,
        r#""payload_content_type":"application/json","payload_ref":{"uri":"s3://b/k","sha256":"0000000000000000000000000000000000000000000000000000000000000000","size":1}"#,
    );
    let unknown = v2.replace(r#""origin":{}"#, r#""origin":{"source":"s","a/b~":1}"#);
    let cases = [
        (cancelled, "/status"),
        (claim_check, "/payload_ref"),
        (unknown, "/origin/a~1b~0"),
    ];
    for (line, path) in cases {
        assert_eq!(
            migrate(&line, 1).unwrap_err(),
            [(ErrorCode::CannotDowngrade, path.to_owned())],
            "{line}"
        );
    }
}

#[test]
fn the_same_version_is_the_identity() {
    let line = v1(r#"{ "rdq.source" : "x" }"#, r#" , "n":1E+2 "#);
    assert_eq!(migrate(&line, 1).unwrap(), line);
    let v2 = migrate(&line, 2).unwrap();
    assert_eq!(migrate(&v2, 2).unwrap(), v2);
}
