//! A unit test for every rule: a valid base envelope per version, then one edit per rule.

use serde_json::{json, Value as J};

use super::*;
use crate::ErrorCode::{self, *};

const ID: &str = "01HWT0D7G0Q8V9W2R4T6Y8A0B2"; // time 2024-05-01T12:00:00.000Z

fn dead_v1() -> J {
    json!({
        "envelope_version": 1,
        "id": ID,
        "queue": "billing.invoices",
        "handler_ref": "invoice.render",
        "handler_version": "2.3.1",
        "payload": "eyJpbnZvaWNlIjo0Mn0=",
        "payload_content_type": "application/json; charset=utf-8",
        "payload_ref": null,
        "headers": {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "rdq.source": "api"},
        "status": "DEAD",
        "attempt_count": 2,
        "redrive_count": 0,
        "next_attempt_at": null,
        "lease_expires_at": null,
        "created_at": "2024-05-01T12:00:00.000Z",
        "attempts": [
            {"attempt_no": 1, "started_at": "2024-05-01T12:00:01.000Z", "finished_at": "2024-05-01T12:00:02.500Z",
             "outcome": "RETRYABLE_FAILURE",
             "error": {"type": "java.net.SocketTimeoutException", "message": "Read timed out", "stack": "at x.y(Z.java:1)"}},
            {"attempt_no": 2, "started_at": "2024-05-01T12:01:00.000Z", "finished_at": "2024-05-01T12:01:00.250Z",
             "outcome": "PERMANENT_FAILURE",
             "error": {"type": "com.acme.InvoiceMissing", "message": "no invoice 42", "detail": {"n": 1}, "stack": null}}
        ]
    })
}

fn dead_v2() -> J {
    let mut e = dead_v1();
    e["envelope_version"] = json!(2);
    e["headers"].as_object_mut().unwrap().remove("rdq.source");
    e["origin"] = json!({"source": "api", "x-extra": 1});
    e["attempts"][0]["duration_ms"] = json!(1500);
    e["attempts"][1]["duration_ms"] = json!(250);
    e
}

fn options() -> RuleOptions {
    RuleOptions::default()
}

fn judge_bytes(options: RuleOptions, line: &[u8]) -> Verdict {
    let rules = EnvelopeRules::new(options).unwrap();
    let mut parser = JsonParser::new();
    let mut verdict = Verdict::default();
    rules.check_line(&mut parser, line, &mut verdict);
    verdict
}

fn judge_with(options: RuleOptions, e: &J) -> Vec<(ErrorCode, String)> {
    let v = judge_bytes(options, e.to_string().as_bytes());
    let mut errors: Vec<_> = v.errors.into_iter().map(|d| (d.code, d.path)).collect();
    errors.sort();
    errors
}

fn judge(e: &J) -> Vec<(ErrorCode, String)> {
    judge_with(options(), e)
}

fn expect(e: &J, want: &[(ErrorCode, &str)]) {
    let mut want: Vec<_> = want.iter().map(|&(c, p)| (c, p.to_owned())).collect();
    want.sort();
    assert_eq!(judge(e), want, "{e}");
}

fn edit(mut e: J, f: impl FnOnce(&mut J)) -> J {
    f(&mut e);
    e
}

fn remove(e: &mut J, key: &str) {
    e.as_object_mut().unwrap().remove(key);
}

fn pending(mut e: J) -> J {
    e["status"] = json!("PENDING");
    e["next_attempt_at"] = json!("2024-05-01T13:00:00.000Z");
    e
}

#[test]
fn the_bases_are_valid() {
    expect(&dead_v1(), &[]);
    expect(&dead_v2(), &[]);
}

#[test]
fn valid_per_status() {
    for base in [dead_v1(), dead_v2()] {
        expect(&pending(base.clone()), &[]);
        let in_flight = edit(base.clone(), |e| {
            e["status"] = json!("IN_FLIGHT");
            e["lease_expires_at"] = json!("2024-05-01T12:05:00.000Z");
            e["attempts"][1]["finished_at"] = J::Null;
            e["attempts"][1]["outcome"] = J::Null;
            e["attempts"][1]["error"] = J::Null;
            if e["envelope_version"] == 2 {
                e["attempts"][1]["duration_ms"] = J::Null;
            }
        });
        expect(&in_flight, &[]);
        let succeeded = edit(base.clone(), |e| {
            e["status"] = json!("SUCCEEDED");
            e["attempts"][1]["outcome"] = json!("SUCCESS");
            remove(&mut e["attempts"][1], "error");
        });
        expect(&succeeded, &[]);
        let fresh = edit(pending(base), |e| {
            e["attempts"] = json!([]);
            e["attempt_count"] = json!(0);
        });
        expect(&fresh, &[]);
    }
    let cancelled = edit(dead_v2(), |e| {
        e["status"] = json!("CANCELLED");
        e["attempts"][1]["outcome"] = json!("SUCCESS");
        remove(&mut e["attempts"][1], "error");
    });
    expect(&cancelled, &[]);
    let cancelled_early = edit(dead_v2(), |e| {
        e["status"] = json!("CANCELLED");
        e["attempts"] = json!([]);
        e["attempt_count"] = json!(0);
    });
    expect(&cancelled_early, &[]);
    expect(
        &edit(dead_v1(), |e| e["status"] = json!("CANCELLED")),
        &[(UnknownStatus, "/status")],
    );
}

#[test]
fn envelope_version() {
    expect(
        &edit(dead_v1(), |e| remove(e, "envelope_version")),
        &[(MissingField, "/envelope_version")],
    );
    // A bad version ends the field checks: the broken queue is not reported.
    let bad = |v: J| {
        edit(dead_v1(), |e| {
            e["envelope_version"] = v;
            e["queue"] = json!("NOPE");
        })
    };
    expect(&bad(json!("1")), &[(WrongType, "/envelope_version")]);
    expect(&bad(json!(1.0)), &[(WrongType, "/envelope_version")]);
    expect(&bad(json!(3)), &[(UnsupportedVersion, "/envelope_version")]);
    expect(&bad(json!(0)), &[(UnsupportedVersion, "/envelope_version")]);
    expect(
        &bad(json!(-1)),
        &[(UnsupportedVersion, "/envelope_version")],
    );
    let huge = br#"{"envelope_version":123456789012345678901234567890}"#;
    let v = judge_bytes(options(), huge);
    assert_eq!(v.errors.len(), 1);
    assert_eq!(v.errors[0].code, UnsupportedVersion);
}

#[test]
fn require_version() {
    let opts = RuleOptions {
        require_version: Some(2),
        ..options()
    };
    let v = judge_bytes(opts.clone(), dead_v1().to_string().as_bytes());
    assert_eq!(v.errors.len(), 1);
    assert_eq!(v.errors[0].code, UnsupportedVersion);
    assert_eq!(v.errors[0].path, "/envelope_version");
    assert_eq!(v.errors[0].message, "version 1; --require-version 2");
    // ... besides any other error.
    let broken = edit(dead_v1(), |e| e["queue"] = json!(""));
    assert_eq!(
        judge_with(opts.clone(), &broken),
        [
            (UnsupportedVersion, "/envelope_version".into()),
            (InvalidName, "/queue".into())
        ]
    );
    assert!(judge_with(opts, &dead_v2()).is_empty());
    assert_eq!(
        EnvelopeRules::new(RuleOptions {
            require_version: Some(3),
            ..options()
        })
        .unwrap_err(),
        OptionsError::UnsupportedVersion(3)
    );
    assert_eq!(
        EnvelopeRules::new(RuleOptions {
            require_version: Some(1),
            submit: true,
            ..options()
        })
        .unwrap_err(),
        OptionsError::RequireVersionWithSubmit
    );
}

#[test]
fn id() {
    expect(
        &edit(dead_v1(), |e| remove(e, "id")),
        &[(MissingField, "/id")],
    );
    expect(
        &edit(dead_v1(), |e| e["id"] = json!(42)),
        &[(WrongType, "/id")],
    );
    expect(
        &edit(dead_v1(), |e| e["id"] = json!(ID.to_lowercase())),
        &[(InvalidId, "/id")],
    );
    expect(
        &edit(dead_v1(), |e| e["id"] = json!(format!("8{}", &ID[1..]))),
        &[(InvalidId, "/id")],
    );
    expect(
        &edit(dead_v1(), |e| e["id"] = json!(&ID[1..])),
        &[(InvalidId, "/id")],
    );
}

#[test]
fn names() {
    for field in ["queue", "handler_ref"] {
        expect(
            &edit(dead_v1(), |e| remove(e, field)),
            &[(MissingField, &format!("/{field}"))],
        );
        expect(
            &edit(dead_v1(), |e| e[field] = J::Null),
            &[(WrongType, &format!("/{field}"))],
        );
        expect(
            &edit(dead_v1(), |e| e[field] = json!("Upper")),
            &[(InvalidName, &format!("/{field}"))],
        );
        expect(&edit(dead_v1(), |e| e[field] = json!("a".repeat(240))), &[]);
        expect(
            &edit(dead_v1(), |e| e[field] = json!("a".repeat(241))),
            &[(InvalidName, &format!("/{field}"))],
        );
    }
    expect(&edit(dead_v1(), |e| remove(e, "handler_version")), &[]);
    expect(&edit(dead_v1(), |e| e["handler_version"] = J::Null), &[]);
    expect(
        &edit(dead_v1(), |e| e["handler_version"] = json!(2)),
        &[(WrongType, "/handler_version")],
    );
    expect(
        &edit(dead_v1(), |e| e["handler_version"] = json!("")),
        &[(InvalidName, "/handler_version")],
    );
    expect(
        &edit(dead_v1(), |e| e["handler_version"] = json!("1\u{85}")),
        &[(InvalidName, "/handler_version")],
    );
}

#[test]
fn payload_and_content_type() {
    expect(&edit(dead_v1(), |e| e["payload"] = json!("")), &[]);
    for bad in ["QR==", "QQ", "Q Q=", "QQ==\n", "-_8="] {
        expect(
            &edit(dead_v1(), |e| e["payload"] = json!(bad)),
            &[(InvalidBase64, "/payload")],
        );
    }
    expect(
        &edit(dead_v1(), |e| remove(e, "payload")),
        &[(MissingField, "/payload")],
    );
    expect(
        &edit(dead_v1(), |e| {
            e["payload_content_type"] = json!("text/plain;")
        }),
        &[(InvalidContentType, "/payload_content_type")],
    );
    expect(
        &edit(dead_v1(), |e| e["payload_content_type"] = json!(1)),
        &[(WrongType, "/payload_content_type")],
    );
    for set in [json!({}), json!(0), json!(""), json!(false), json!([])] {
        expect(
            &edit(dead_v1(), |e| e["payload_ref"] = set),
            &[(PayloadRefReserved, "/payload_ref")],
        );
    }
}

#[test]
fn claim_check_in_v2() {
    let sha = "a".repeat(64);
    let with_ref = |r: J| {
        edit(dead_v2(), |e| {
            remove(e, "payload");
            e["payload_ref"] = r;
        })
    };
    expect(
        &with_ref(
            json!({"uri": "s3://b/k#x", "sha256": sha, "size": 18446744073709551615u64, "extra": 1}),
        ),
        &[],
    );
    expect(
        &with_ref(json!("s3://b/k")),
        &[(InvalidPayloadRef, "/payload_ref")],
    );
    expect(
        &with_ref(json!({"sha256": sha, "size": 1})),
        &[(InvalidPayloadRef, "/payload_ref/uri")],
    );
    expect(
        &with_ref(json!({"uri": "no scheme", "sha256": sha, "size": 1})),
        &[(InvalidPayloadRef, "/payload_ref/uri")],
    );
    expect(
        &with_ref(json!({"uri": "s3:x", "sha256": sha.to_uppercase(), "size": 1})),
        &[(InvalidPayloadRef, "/payload_ref/sha256")],
    );
    expect(
        &with_ref(json!({"uri": "s3:x", "sha256": sha, "size": -1})),
        &[(InvalidPayloadRef, "/payload_ref/size")],
    );
    expect(
        &with_ref(json!({"uri": "s3:x", "sha256": sha, "size": 1.5})),
        &[(InvalidPayloadRef, "/payload_ref/size")],
    );
    let big = format!(r#"{{"uri":"s3:x","sha256":"{sha}","size":18446744073709551616}}"#);
    let mut line = with_ref(J::Null).to_string();
    line = line.replace(r#""payload_ref":null"#, &format!(r#""payload_ref":{big}"#));
    let v = judge_bytes(options(), line.as_bytes());
    assert_eq!(
        v.errors.iter().map(|d| d.path.as_str()).collect::<Vec<_>>(),
        ["/payload_ref/size"]
    );
    let both = edit(
        with_ref(json!({"uri": "s3:x", "sha256": sha, "size": 1})),
        |e| e["payload"] = json!(""),
    );
    expect(&both, &[(InvalidPayloadRef, "/payload")]);
    expect(&with_ref(J::Null), &[(MissingField, "/payload")]);
}

#[test]
fn headers() {
    expect(
        &edit(dead_v1(), |e| remove(e, "headers")),
        &[(MissingField, "/headers")],
    );
    expect(
        &edit(dead_v1(), |e| e["headers"] = json!([])),
        &[(WrongType, "/headers")],
    );
    expect(
        &edit(dead_v1(), |e| e["headers"][""] = json!("x")),
        &[(InvalidHeader, "/headers/")],
    );
    expect(
        &edit(dead_v1(), |e| e["headers"]["a/b~"] = json!(1)),
        &[(WrongType, "/headers/a~1b~0")],
    );
    expect(
        &edit(dead_v1(), |e| e["headers"]["rdq.anything"] = json!("ok")),
        &[],
    );
    expect(
        &edit(dead_v2(), |e| e["headers"]["rdq.source"] = json!("api")),
        &[(InvalidHeader, "/headers/rdq.source")],
    );
    expect(
        &edit(dead_v2(), |e| {
            e["headers"]["rdq.submitted_by"] = json!("me")
        }),
        &[(InvalidHeader, "/headers/rdq.submitted_by")],
    );
    expect(
        &edit(dead_v2(), |e| e["headers"]["rdq.other"] = json!("x")),
        &[],
    );
}

#[test]
fn origin_in_v2() {
    expect(
        &edit(dead_v2(), |e| remove(e, "origin")),
        &[(MissingField, "/origin")],
    );
    expect(
        &edit(dead_v2(), |e| e["origin"] = J::Null),
        &[(WrongType, "/origin")],
    );
    expect(&edit(dead_v2(), |e| e["origin"] = json!({})), &[]);
    expect(
        &edit(dead_v2(), |e| e["origin"]["submitted_by"] = J::Null),
        &[(WrongType, "/origin/submitted_by")],
    );
    expect(
        &edit(dead_v2(), |e| e["origin"]["source"] = json!(1)),
        &[(WrongType, "/origin/source")],
    );
    // In v1 `origin` is an unknown field.
    expect(&edit(dead_v1(), |e| e["origin"] = json!(5)), &[]);
}

#[test]
fn status_and_counts() {
    expect(
        &edit(dead_v1(), |e| e["status"] = json!("dead")),
        &[(UnknownStatus, "/status")],
    );
    expect(
        &edit(dead_v1(), |e| e["status"] = json!(1)),
        &[(WrongType, "/status")],
    );
    expect(
        &edit(dead_v1(), |e| remove(e, "status")),
        &[(MissingField, "/status")],
    );
    for field in ["attempt_count", "redrive_count"] {
        expect(
            &edit(dead_v1(), |e| e[field] = json!(1.0)),
            &[(WrongType, &format!("/{field}"))],
        );
        expect(
            &edit(dead_v1(), |e| e[field] = json!("1")),
            &[(WrongType, &format!("/{field}"))],
        );
        // An out-of-range count still takes part in the rules across fields: -1 redrives
        // cannot cover even zero restarts, and 2^32 attempts are more than the records.
        let path = format!("/{field}");
        let (low, high) = match field {
            "attempt_count" => (None, Some((InconsistentState, "/attempt_count"))),
            _ => (Some((BadAttempt, "/attempts")), None),
        };
        let mut want = vec![(OutOfRange, path.as_str())];
        want.extend(low);
        expect(&edit(dead_v1(), |e| e[field] = json!(-1)), &want);
        let mut want = vec![(OutOfRange, path.as_str())];
        want.extend(high);
        expect(&edit(dead_v1(), |e| e[field] = json!(4294967296u64)), &want);
        expect(
            &edit(dead_v1(), |e| remove(e, field)),
            &[(MissingField, &format!("/{field}"))],
        );
    }
    expect(
        &edit(dead_v1(), |e| e["redrive_count"] = json!(4294967295u64)),
        &[],
    );
    expect(&edit(dead_v1(), |e| e["attempt_count"] = json!(0)), &[]);
    // -0 is the integer 0.
    let line = dead_v1()
        .to_string()
        .replace(r#""redrive_count":0"#, r#""redrive_count":-0"#);
    assert!(judge_bytes(options(), line.as_bytes()).is_valid());
}

#[test]
fn timestamps() {
    for field in ["next_attempt_at", "lease_expires_at"] {
        expect(
            &edit(dead_v1(), |e| remove(e, field)),
            &[(MissingField, &format!("/{field}"))],
        );
        expect(
            &edit(dead_v1(), |e| e[field] = json!(0)),
            &[(WrongType, &format!("/{field}"))],
        );
    }
    expect(
        &edit(pending(dead_v1()), |e| {
            e["next_attempt_at"] = json!("2024-05-01T13:00:00Z")
        }),
        &[(InvalidTimestamp, "/next_attempt_at")],
    );
    expect(
        &edit(dead_v1(), |e| {
            e["created_at"] = json!("2024-05-01T12:00:00.000+00:00")
        }),
        &[(InvalidTimestamp, "/created_at")],
    );
    expect(
        &edit(dead_v1(), |e| e["created_at"] = J::Null),
        &[(WrongType, "/created_at")],
    );
    expect(
        &edit(dead_v1(), |e| remove(e, "created_at")),
        &[(MissingField, "/created_at")],
    );
}

#[test]
fn attempt_records() {
    expect(
        &edit(dead_v1(), |e| remove(e, "attempts")),
        &[(MissingField, "/attempts")],
    );
    expect(
        &edit(dead_v1(), |e| e["attempts"] = json!({})),
        &[(WrongType, "/attempts")],
    );
    let a = |f: &dyn Fn(&mut J)| edit(dead_v1(), |e| f(&mut e["attempts"][1]));
    expect(
        &edit(dead_v1(), |e| e["attempts"][1] = json!(7)),
        &[(WrongType, "/attempts/1")],
    );
    expect(
        &a(&|a| remove(a, "attempt_no")),
        &[(MissingField, "/attempts/1/attempt_no")],
    );
    // Out of range, and (its value being known) not the previous number plus one either.
    expect(
        &a(&|a| a["attempt_no"] = json!(0)),
        &[
            (OutOfRange, "/attempts/1/attempt_no"),
            (BadAttempt, "/attempts/1/attempt_no"),
        ],
    );
    expect(
        &a(&|a| a["attempt_no"] = json!("2")),
        &[(WrongType, "/attempts/1/attempt_no")],
    );
    expect(
        &a(&|a| remove(a, "started_at")),
        &[(MissingField, "/attempts/1/started_at")],
    );
    expect(
        &a(&|a| a["started_at"] = J::Null),
        &[(WrongType, "/attempts/1/started_at")],
    );
    expect(
        &a(&|a| remove(a, "finished_at")),
        &[(MissingField, "/attempts/1/finished_at")],
    );
    expect(
        &a(&|a| a["finished_at"] = json!("2024-02-30T00:00:00.000Z")),
        &[(InvalidTimestamp, "/attempts/1/finished_at")],
    );
    expect(
        &a(&|a| remove(a, "outcome")),
        &[(MissingField, "/attempts/1/outcome")],
    );
    expect(
        &a(&|a| a["outcome"] = json!("FAILED")),
        &[(UnknownOutcome, "/attempts/1/outcome")],
    );
    expect(
        &a(&|a| a["outcome"] = json!(3)),
        &[(WrongType, "/attempts/1/outcome")],
    );
    expect(
        &a(&|a| a["error"] = json!("boom")),
        &[(WrongType, "/attempts/1/error")],
    );
    expect(&a(&|a| remove(a, "error")), &[]);
    expect(
        &a(&|a| remove(&mut a["error"], "type")),
        &[(MissingField, "/attempts/1/error/type")],
    );
    expect(
        &a(&|a| a["error"]["type"] = json!("")),
        &[(WrongType, "/attempts/1/error/type")],
    );
    expect(
        &a(&|a| remove(&mut a["error"], "message")),
        &[(MissingField, "/attempts/1/error/message")],
    );
    expect(
        &a(&|a| a["error"]["message"] = J::Null),
        &[(WrongType, "/attempts/1/error/message")],
    );
    expect(
        &a(&|a| a["error"]["stack"] = json!(1)),
        &[(WrongType, "/attempts/1/error/stack")],
    );
    expect(&a(&|a| a["error"]["detail"] = json!([1, {"x": null}])), &[]);
}

#[test]
fn truncation() {
    let a = |field: &'static str, text: String| {
        edit(dead_v1(), move |e| {
            e["attempts"][0]["error"][field] = json!(text)
        })
    };
    let marker = formats::TRUNCATION_MARKER;
    for (field, limit) in [
        ("message", attempts::MESSAGE_LIMIT),
        ("stack", attempts::STACK_LIMIT),
    ] {
        let path = format!("/attempts/0/error/{field}");
        expect(&a(field, "x".repeat(limit)), &[]);
        expect(&a(field, "x".repeat(limit + 1)), &[(FieldTooLong, &path)]);
        expect(&a(field, format!("{}{marker}", "x".repeat(limit - 3))), &[]);
        expect(&a(field, format!("{}{marker}", "x".repeat(limit))), &[]);
        expect(
            &a(field, format!("{}{marker}", "x".repeat(limit - 4))),
            &[(FieldTooLong, &path)],
        );
        expect(
            &a(field, format!("{}{marker}", "x".repeat(limit + 1))),
            &[(FieldTooLong, &path)],
        );
        // A 4-byte character cut off at the limit: 4094 bytes kept is within the rule.
        expect(
            &a(field, format!("{}😀{marker}", "x".repeat(limit - 6))),
            &[],
        );
    }
}

#[test]
fn rules_across_attempts() {
    let at = |i: usize, f: &'static str, v: J| edit(dead_v1(), move |e| e["attempts"][i][f] = v);
    expect(
        &at(0, "attempt_no", json!(2)),
        &[
            (BadAttempt, "/attempts/0/attempt_no"),
            (BadAttempt, "/attempts/1/attempt_no"),
        ],
    );
    expect(
        &at(1, "attempt_no", json!(3)),
        &[(BadAttempt, "/attempts/1/attempt_no")],
    );
    // Restarting at 1 needs a redrive.
    expect(&at(1, "attempt_no", json!(1)), &[(BadAttempt, "/attempts")]);
    expect(
        &edit(at(1, "attempt_no", json!(1)), |e| {
            e["redrive_count"] = json!(1)
        }),
        &[],
    );
    expect(
        &at(1, "started_at", json!("2024-05-01T12:00:00.500Z")),
        &[(BadAttempt, "/attempts/1/started_at")],
    );
    expect(
        &at(1, "finished_at", json!("2024-05-01T12:00:59.999Z")),
        &[(BadAttempt, "/attempts/1/finished_at")],
    );
    let early_in_flight = edit(dead_v1(), |e| {
        e["attempts"][0]["finished_at"] = J::Null;
        e["attempts"][0]["outcome"] = J::Null;
    });
    expect(&early_in_flight, &[(BadAttempt, "/attempts/0/finished_at")]);
    expect(
        &at(1, "outcome", J::Null),
        &[(BadAttempt, "/attempts/1/outcome")],
    );
    expect(
        &edit(dead_v1(), |e| {
            e["attempts"][1]["finished_at"] = J::Null;
        }),
        &[
            (BadAttempt, "/attempts/1/outcome"),
            (InconsistentState, "/attempts"),
        ],
    );
    let success_first = edit(at(0, "outcome", json!("SUCCESS")), |e| {
        remove(&mut e["attempts"][0], "error")
    });
    expect(&success_first, &[(BadAttempt, "/attempts/0/outcome")]);
    let success_with_error = edit(dead_v1(), |e| {
        e["status"] = json!("SUCCEEDED");
        e["attempts"][1]["outcome"] = json!("SUCCESS");
    });
    expect(&success_with_error, &[(BadAttempt, "/attempts/1/error")]);
    let lease = |error: J| {
        edit(at(0, "outcome", json!("LEASE_EXPIRED")), move |e| {
            e["attempts"][0]["error"] = error
        })
    };
    expect(
        &lease(json!({"type": "rdq.LeaseExpired", "message": "lease lost"})),
        &[],
    );
    expect(
        &lease(json!({"type": "rdq.LeaseExpired", "message": "lease lost", "stack": null})),
        &[],
    );
    expect(&lease(J::Null), &[(BadAttempt, "/attempts/0/error")]);
    expect(
        &lease(json!({"type": "x.Y", "message": "m"})),
        &[(BadAttempt, "/attempts/0/error")],
    );
    expect(
        &lease(json!({"type": "rdq.LeaseExpired", "message": ""})),
        &[(BadAttempt, "/attempts/0/error")],
    );
    expect(
        &lease(json!({"type": "rdq.LeaseExpired", "message": "m", "stack": "s"})),
        &[(BadAttempt, "/attempts/0/error")],
    );
}

#[test]
fn duration_in_v2() {
    let at = |i: usize, v: Option<J>| {
        edit(dead_v2(), move |e| match v {
            Some(v) => e["attempts"][i]["duration_ms"] = v,
            None => remove(&mut e["attempts"][i], "duration_ms"),
        })
    };
    expect(&at(0, None), &[(MissingField, "/attempts/0/duration_ms")]);
    expect(
        &at(0, Some(json!(1499))),
        &[(BadAttempt, "/attempts/0/duration_ms")],
    );
    expect(
        &at(0, Some(json!(-1))),
        &[(BadAttempt, "/attempts/0/duration_ms")],
    );
    expect(
        &at(0, Some(J::Null)),
        &[(BadAttempt, "/attempts/0/duration_ms")],
    );
    expect(
        &at(0, Some(json!(1500.0))),
        &[(WrongType, "/attempts/0/duration_ms")],
    );
    expect(
        &at(0, Some(json!("1500"))),
        &[(WrongType, "/attempts/0/duration_ms")],
    );
    let in_flight = edit(dead_v2(), |e| {
        e["status"] = json!("IN_FLIGHT");
        e["lease_expires_at"] = json!("2024-05-01T12:05:00.000Z");
        e["attempts"][1]["finished_at"] = J::Null;
        e["attempts"][1]["outcome"] = J::Null;
        e["attempts"][1]["duration_ms"] = json!(0);
    });
    expect(&in_flight, &[(BadAttempt, "/attempts/1/duration_ms")]);
    // v1 does not know duration_ms: an unknown field.
    expect(
        &edit(dead_v1(), |e| e["attempts"][0]["duration_ms"] = json!("x")),
        &[],
    );
}

#[test]
fn status_consistency() {
    let bad = InconsistentState;
    expect(
        &edit(dead_v1(), |e| e["attempt_count"] = json!(3)),
        &[(bad, "/attempt_count")],
    );
    expect(
        &edit(dead_v1(), |e| {
            e["next_attempt_at"] = json!("2024-05-01T13:00:00.000Z")
        }),
        &[(bad, "/next_attempt_at")],
    );
    expect(
        &edit(dead_v1(), |e| {
            e["lease_expires_at"] = json!("2024-05-01T13:00:00.000Z")
        }),
        &[(bad, "/lease_expires_at")],
    );
    expect(
        &edit(dead_v1(), |e| {
            e["attempts"] = json!([]);
            e["attempt_count"] = json!(0);
        }),
        &[(bad, "/attempts")],
    );
    expect(
        &edit(dead_v1(), |e| {
            e["status"] = json!("PENDING");
        }),
        &[(bad, "/next_attempt_at")],
    );
    let pending_in_flight = edit(pending(dead_v1()), |e| {
        e["attempts"][1]["finished_at"] = J::Null;
        e["attempts"][1]["outcome"] = J::Null;
        e["attempts"][1]["error"] = J::Null;
    });
    expect(&pending_in_flight, &[(bad, "/attempts")]);
    expect(
        &edit(pending(dead_v1()), |e| {
            e["lease_expires_at"] = json!("2024-05-01T13:00:00.000Z")
        }),
        &[(bad, "/lease_expires_at")],
    );
    let in_flight_finished = edit(dead_v1(), |e| {
        e["status"] = json!("IN_FLIGHT");
        e["lease_expires_at"] = json!("2024-05-01T12:05:00.000Z");
    });
    expect(&in_flight_finished, &[(bad, "/attempts")]);
    expect(
        &edit(dead_v1(), |e| e["status"] = json!("IN_FLIGHT")),
        &[(bad, "/lease_expires_at"), (bad, "/attempts")],
    );
    expect(
        &edit(dead_v1(), |e| e["status"] = json!("SUCCEEDED")),
        &[(bad, "/attempts")],
    );
    let dead_success = edit(dead_v1(), |e| {
        e["attempts"][1]["outcome"] = json!("SUCCESS");
        remove(&mut e["attempts"][1], "error");
    });
    expect(&dead_success, &[(bad, "/attempts")]);
    let cancelled_in_flight = edit(dead_v2(), |e| {
        e["status"] = json!("CANCELLED");
        e["attempts"][1]["finished_at"] = J::Null;
        e["attempts"][1]["outcome"] = J::Null;
        e["attempts"][1]["duration_ms"] = J::Null;
    });
    expect(&cancelled_in_flight, &[(bad, "/attempts")]);
}

#[test]
fn warnings() {
    let v = judge_bytes(
        options(),
        edit(dead_v1(), |e| {
            e["created_at"] = json!("2024-05-01T12:00:01.001Z")
        })
        .to_string()
        .as_bytes(),
    );
    assert!(v.is_valid());
    let w: Vec<_> = v
        .warnings
        .iter()
        .map(|d| (d.code, d.path.as_str()))
        .collect();
    assert_eq!(
        w,
        [(IdTimeMismatch, "/id"), (CreatedAfterStart, "/created_at")]
    );
    let v = judge_bytes(
        options(),
        edit(dead_v1(), |e| {
            e["created_at"] = json!("2024-05-01T12:00:01.000Z")
        })
        .to_string()
        .as_bytes(),
    );
    assert!(
        v.warnings.is_empty(),
        "1 s apart is within the tolerance: {:?}",
        v.warnings
    );
    let quiet = RuleOptions {
        warnings: false,
        ..options()
    };
    let v = judge_bytes(
        quiet,
        edit(dead_v1(), |e| {
            e["created_at"] = json!("2024-05-01T12:00:01.001Z")
        })
        .to_string()
        .as_bytes(),
    );
    assert!(v.warnings.is_empty());
}

#[test]
fn size_limits() {
    let line = dead_v1().to_string();
    let n = line.len() as u64;
    let at = |max: u64, queue: Option<u64>| {
        let mut o = RuleOptions {
            max_envelope_bytes: max,
            ..options()
        };
        if let Some(q) = queue {
            o.queue_limits.insert("billing.invoices".into(), q);
        }
        judge_bytes(o, line.as_bytes())
            .errors
            .into_iter()
            .map(|d| d.code)
            .collect::<Vec<_>>()
    };
    assert_eq!(at(n, None), []);
    assert_eq!(at(n - 1, None), [PayloadTooLarge]);
    assert_eq!(at(1, Some(n)), []);
    assert_eq!(at(u64::MAX, Some(n - 1)), [PayloadTooLarge]);
    // Over every limit in force: that code alone, and the line is not even parsed.
    let broken = format!("{}{{", &line[..line.len() - 1]);
    let o = RuleOptions {
        max_envelope_bytes: 10,
        ..options()
    };
    let v = judge_bytes(o, broken.as_bytes());
    assert_eq!(
        v.errors.iter().map(|d| d.code).collect::<Vec<_>>(),
        [PayloadTooLarge]
    );
    // Within some limit: judged in full, its size against its own queue's limit.
    let mut o = RuleOptions {
        max_envelope_bytes: 10,
        ..options()
    };
    o.queue_limits.insert("other".into(), n + 100);
    let v = judge_bytes(
        o,
        edit(dead_v1(), |e| e["id"] = json!("x"))
            .to_string()
            .as_bytes(),
    );
    let mut codes: Vec<_> = v.errors.iter().map(|d| d.code).collect();
    codes.sort();
    assert_eq!(codes, [InvalidId, PayloadTooLarge]);
}

#[test]
fn submit_subset() {
    let submit = RuleOptions {
        submit: true,
        ..options()
    };
    let line = json!({"queue": "mail", "handler_ref": "send", "payload": "", "payload_content_type": "text/plain", "origin": 1});
    assert!(judge_with(submit.clone(), &line).is_empty());
    let with = |f: &dyn Fn(&mut J)| judge_with(submit.clone(), &edit(line.clone(), |e| f(e)));
    assert_eq!(
        with(&|e| e["headers"] = json!({"RDQ.trace": "x", "ok": "y"})),
        [(ReservedHeader, "/headers/RDQ.trace".into())]
    );
    assert_eq!(
        with(&|e| e["headers"] = J::Null),
        [(WrongType, "/headers".into())]
    );
    assert_eq!(
        with(&|e| e["id"] = J::Null),
        [(ServerAssignedField, "/id".into())]
    );
    assert_eq!(
        with(&|e| e["payload_ref"] = json!({})),
        [(PayloadRefReserved, "/payload_ref".into())]
    );
    assert_eq!(with(&|e| e["handler_version"] = json!("v1")), []);
    let mut all = dead_v1();
    all.as_object_mut().unwrap().remove("headers");
    let codes = judge_with(submit, &all);
    assert_eq!(codes.len(), 9);
    assert!(codes.iter().all(|(c, _)| *c == ServerAssignedField));
}

#[test]
fn every_broken_rule_is_reported() {
    let e = edit(dead_v1(), |e| {
        e["id"] = json!("bad");
        e["queue"] = json!("Bad Queue");
        e["payload"] = json!("!!");
        e["attempts"][0]["error"]["message"] = json!(1);
        e["attempts"][1]["outcome"] = json!("NOPE");
    });
    expect(
        &e,
        &[
            (InvalidId, "/id"),
            (InvalidName, "/queue"),
            (InvalidBase64, "/payload"),
            (WrongType, "/attempts/0/error/message"),
            (UnknownOutcome, "/attempts/1/outcome"),
        ],
    );
}

#[test]
fn keys_are_compared_after_unescaping() {
    let line = dead_v1()
        .to_string()
        .replace(r#""queue""#, r#""q\u0075eue""#);
    assert!(judge_bytes(options(), line.as_bytes()).is_valid());
    let dup = dead_v1().to_string().replace(
        r#""status":"DEAD""#,
        r#""status":"DEAD","st\u0061tus":"DEAD""#,
    );
    let v = judge_bytes(options(), dup.as_bytes());
    assert_eq!(
        v.errors
            .iter()
            .map(|d| (d.code, d.path.as_str()))
            .collect::<Vec<_>>(),
        [(DuplicateKey, "/status")]
    );
}

#[test]
fn awkward_numbers_in_unknown_fields_are_kept() {
    let line = dead_v1().to_string().replace(
        r#""queue""#,
        r#""x":[1e400,-0,123456789012345678901234567890,0.1e-999999],"queue""#,
    );
    let v = judge_bytes(options(), line.as_bytes());
    assert!(v.is_valid(), "{:?}", v.errors);
}

/// Regression (fuzz `line`): an `attempt_no` beyond i128 saturates, and the next attempt's
/// numbering check added 1 to it and overflowed (a panic in debug builds).
#[test]
fn attempt_numbers_beyond_i128_do_not_overflow() {
    let huge = "4".repeat(60);
    let line =
        dead_v1()
            .to_string()
            .replacen(r#""attempt_no":1"#, &format!(r#""attempt_no":{huge}"#), 1);
    let verdict = judge_bytes(options(), line.as_bytes());
    let codes: Vec<_> = verdict
        .errors
        .iter()
        .map(|d| (d.code, d.path.as_str()))
        .collect();
    assert!(
        codes.contains(&(OutOfRange, "/attempts/0/attempt_no")),
        "{codes:?}"
    );
    assert!(
        codes.contains(&(BadAttempt, "/attempts/1/attempt_no")),
        "{codes:?}"
    );
}
