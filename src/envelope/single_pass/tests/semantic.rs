//! Member and field mutations: every valid base envelope (hand-made ones of every status and
//! shape, and gen lines) with one member deleted, duplicated, moved or re-keyed, or one value
//! replaced by a near miss of its field's rule (`alternatives`).

use super::tree::{mutated_texts, J};
use super::{gen_lines, Tally};
use crate::catalogue::{VALID_V1, VALID_V2};
use crate::envelope::RuleOptions;

const ID: &str = "01HWT0D7G0Q8V9W2R4T6Y8A0B2";
const SHA: &str = "abababababababababababababababababababababababababababababababab";

/// Valid envelopes with nothing to warn about, of every status and both versions, between
/// them holding every field: the bases of the mutations.
pub(crate) fn bases() -> Vec<String> {
    let head = |version: u32| {
        format!(r#"{{"envelope_version":{version},"id":"{ID}","queue":"q","handler_ref":"h""#)
    };
    let at = |s: u32| format!("\"2024-05-01T12:00:{s:02}.000Z\"");
    vec![
        VALID_V1.to_owned(),
        VALID_V2.to_owned(),
        // Version 1, pending, no attempts.
        format!(
            r#"{},"handler_version":"1.4.2 (build é)","payload":"","payload_content_type":"text/plain; charset=utf-8","payload_ref":null,"headers":{{}},"status":"PENDING","attempt_count":0,"redrive_count":0,"next_attempt_at":{},"lease_expires_at":null,"created_at":{},"attempts":[]}}"#,
            head(1),
            at(5),
            at(0)
        ),
        // Version 1, in flight: the last attempt open, an error with stack and detail.
        format!(
            r#"{},"handler_version":null,"payload":"AA==","payload_content_type":"a/b;c=d","headers":{{"a/b":"x","rdq.source":"api"}},"status":"IN_FLIGHT","attempt_count":2,"redrive_count":0,"next_attempt_at":null,"lease_expires_at":{},"created_at":{},"attempts":[{{"attempt_no":1,"started_at":{},"finished_at":{},"outcome":"RETRYABLE_FAILURE","error":{{"type":"E","message":"m","stack":"at x\n\tat y","detail":{{"k":[1,2.5e3,-0,null]}}}}}},{{"attempt_no":2,"started_at":{},"finished_at":null,"outcome":null}}],"x_unknown":{{"n":1e400}}}}"#,
            head(1),
            at(40),
            at(0),
            at(1),
            at(2),
            at(10)
        ),
        // Version 1, succeeded after a redrive: numbering restarts, a lease expiry.
        format!(
            r#"{},"payload":"e30=","payload_content_type":"application/json","headers":{{"traceparent":"00-abc"}},"status":"SUCCEEDED","attempt_count":1,"redrive_count":1,"next_attempt_at":null,"lease_expires_at":null,"created_at":{},"attempts":[{{"attempt_no":1,"started_at":{},"finished_at":{},"outcome":"LEASE_EXPIRED","error":{{"type":"rdq.LeaseExpired","message":"lease of worker w-7 expired","stack":null}}}},{{"attempt_no":2,"started_at":{},"finished_at":{},"outcome":"PERMANENT_FAILURE","error":null}},{{"attempt_no":1,"started_at":{},"finished_at":{},"outcome":"SUCCESS"}}]}}"#,
            head(1),
            at(0),
            at(1),
            at(3),
            at(3),
            at(4),
            at(20),
            at(21)
        ),
        // Version 2, cancelled after a success.
        format!(
            r#"{},"payload":"eyJuIjoxfQ==","payload_content_type":"application/json","headers":{{"rdq.other":"a"}},"origin":{{"source":"api","submitted_by":"u","x":[null]}},"status":"CANCELLED","attempt_count":1,"redrive_count":0,"next_attempt_at":null,"lease_expires_at":null,"created_at":{},"attempts":[{{"attempt_no":1,"started_at":{},"finished_at":{},"duration_ms":1000,"outcome":"SUCCESS","error":null}}]}}"#,
            head(2),
            at(0),
            at(1),
            at(2)
        ),
        // Version 2, a claim check, in flight.
        format!(
            r#"{},"payload_content_type":"application/octet-stream","payload_ref":{{"uri":"s3://b/k?v=1#f","sha256":"{SHA}","size":10,"x":true}},"headers":{{}},"origin":{{}},"status":"IN_FLIGHT","attempt_count":1,"redrive_count":0,"next_attempt_at":{},"lease_expires_at":{},"created_at":{},"attempts":[{{"attempt_no":1,"started_at":{},"finished_at":null,"duration_ms":null,"outcome":null}}]}}"#,
            head(2),
            at(50),
            at(40),
            at(0),
            at(1)
        ),
        // Version 2, pending, no attempts, members in another order.
        format!(
            r#"{{"attempts":[],"created_at":{},"status":"PENDING","origin":{{"submitted_by":"svc"}},"headers":{{"h":""}},"payload_ref":null,"payload":"","payload_content_type":"a/b","next_attempt_at":{},"lease_expires_at":null,"redrive_count":4294967295,"attempt_count":0,"handler_ref":"h","queue":"q","id":"{ID}","envelope_version":2}}"#,
            at(0),
            at(0)
        ),
    ]
}

/// Near misses of a field's rule for a member named `key` whose value is `current`: values of
/// the wrong type or content, limits, and other spellings (escapes) of the current value.
pub(crate) fn alternatives(key: &str, current: &J) -> Vec<String> {
    let q = |s: &str| format!("\"{s}\"");
    let counts = [
        "0",
        "1",
        "2",
        "3",
        "4294967295",
        "4294967296",
        "-0",
        "-1",
        "1.0",
        "1e2",
        "1E0",
        "01",
        "999999999999999999",
        "1000000000000000000",
        "1234567890123456789",
        "12345678901234567890",
        "18446744073709551615",
        "18446744073709551616",
        "\"1\"",
        "null",
        "true",
        "[]",
    ];
    let stamps = [
        "2024-05-01T12:00:00.000Z",
        "2024-05-01T12:00:00.999Z",
        "2024-05-01T12:00:01.001Z",
        "2024-05-01T11:59:59.000Z",
        "2024-05-02T00:00:00.000Z",
        "2024-02-29T23:59:59.999Z",
        "2023-02-29T00:00:00.000Z",
        "2000-02-29T00:00:00.000Z",
        "1900-02-29T00:00:00.000Z",
        "2100-02-28T00:00:00.000Z",
        "2024-04-31T00:00:00.000Z",
        "2024-13-01T00:00:00.000Z",
        "2024-00-01T00:00:00.000Z",
        "2024-01-00T00:00:00.000Z",
        "2024-01-01T24:00:00.000Z",
        "2024-01-01T23:59:60.000Z",
        "2024-01-01T23:60:00.000Z",
        "0000-01-01T00:00:00.000Z",
        "9999-12-31T23:59:59.999Z",
        "2024-05-01t12:00:00.000z",
        "2024-05-01 12:00:00.000Z",
        "2024-05-01T12:00:00Z",
        "2024-05-01T12:00:00.00Z",
        "2024-05-01T12:00:00.0000Z",
        "2024-05-01T12:00:00.000+00:00",
        "+2024-05-01T12:00:00.000Z",
        "2024-5-01T12:00:00.000Z",
        "２024-05-01T12:00:00.000Z",
        "\\u0032024-05-01T12:00:00.000Z",
        "",
    ];
    let mut out: Vec<String> = match key {
        "envelope_version" => [
            "0",
            "1",
            "2",
            "3",
            "-0",
            "-1",
            "1.0",
            "1e0",
            "01",
            "\"1\"",
            "null",
            "12345678901234567890",
            "1234567890123456789012345678901234567890",
        ]
        .map(String::from)
        .to_vec(),
        "id" => [
            "01hwt0d7g0q8v9w2r4t6y8a0b2",
            "81HWT0D7G0Q8V9W2R4T6Y8A0B2",
            "71HWT0D7G0Q8V9W2R4T6Y8A0B2",
            "01HWT0D7G0Q8V9W2R4T6Y8A0B",
            "01HWT0D7G0Q8V9W2R4T6Y8A0B22",
            "01HWT0D7G0Q8V9W2R4T6Y8A0BI",
            "01HWT0D7G0Q8V9W2R4T6Y8A0BU",
            "01HWT0D7G1Q8V9W2R4T6Y8A0B2",
            "01HWT0D7G2Q8V9W2R4T6Y8A0B2",
            "01HWT0D7FZQ8V9W2R4T6Y8A0B2",
            "01ARZ3NDEKTSV4RRFFQ69G5FAV",
            "7ZZZZZZZZZZZZZZZZZZZZZZZZZ",
            "00000000000000000000000000",
            "",
        ]
        .map(q)
        .into_iter()
        .chain(["null", "1"].map(String::from))
        .collect(),
        "queue" | "handler_ref" => [
            "a".to_owned(),
            "billing.invoices".to_owned(),
            "a".repeat(240),
            "a".repeat(241),
            "A".to_owned(),
            "a b".to_owned(),
            "a/b".to_owned(),
            String::new(),
            "é".to_owned(),
            "0._-z".to_owned(),
        ]
        .iter()
        .map(|s| q(s))
        .chain(["null", "1", "[]"].map(String::from))
        .collect(),
        "handler_version" => [
            "1".to_owned(),
            String::new(),
            "x".repeat(240),
            "x".repeat(241),
            "é".repeat(120),
            "é".repeat(121),
            "1.0\\u0007".to_owned(),
            "1.0\u{7f}".to_owned(),
            "1.0\u{85}".to_owned(),
            "1.0\u{a0}".to_owned(),
            "1.0\\u0085".to_owned(),
            "\\t".to_owned(),
        ]
        .iter()
        .map(|s| q(s))
        .chain(["null", "1", "{}"].map(String::from))
        .collect(),
        "payload" => [
            "",
            "e30=",
            "AA==",
            "eR==",
            "eyJuIjoxfQ=",
            "eyJuIjoxfQ",
            "-_==",
            "ab/c",
            "ab\\/c",
            "A===",
            "====",
            " e30=",
            "e30=\\n",
            "e3\\u0030=",
        ]
        .map(q)
        .into_iter()
        .chain(["null", "1"].map(String::from))
        .collect(),
        "payload_content_type" => [
            "application/json".to_owned(),
            "text/plain; charset=\\\"utf-8\\\"".to_owned(),
            "text/plain ; charset=\\\"utf-8\\\";\\tformat=flowed".to_owned(),
            "text/plain ; charset=\\\"utf-8\\\";\tformat=flowed".to_owned(),
            "a/b;c=\\\"é\\\"".to_owned(),
            "json".to_owned(),
            "text/".to_owned(),
            "/plain".to_owned(),
            "text/plain;".to_owned(),
            "text/plain; ".to_owned(),
            "text/plain ".to_owned(),
            "text/plain; a=é".to_owned(),
            "application\\/json".to_owned(),
            format!("a/{}", "b".repeat(253)),
            format!("a/{}", "b".repeat(254)),
        ]
        .iter()
        .map(|s| q(s))
        .chain(["null", "1"].map(String::from))
        .collect(),
        "payload_ref" => [
            "null".to_owned(),
            "{}".to_owned(),
            "5".to_owned(),
            "\"x\"".to_owned(),
            "[]".to_owned(),
            format!(r#"{{"uri":"s3://b/k","sha256":"{SHA}","size":0}}"#),
            format!(r#"{{"uri":"s3://b/k","sha256":"{SHA}"}}"#),
            format!(r#"{{"sha256":"{SHA}","size":1,"uri":"s3:"}}"#),
            format!(r#"{{"uri":"s3://b/k","sha256":"{SHA}","size":1,"uri":"s3:"}}"#),
            format!(r#"{{"uri":"s3://b/k","sha256":"{SHA}","size":1,"\u0075ri":"s3:"}}"#),
            format!(r#"{{"uri":"s3://b/k","sha256":"{SHA}","size":1,"x":{{"x":1,"x":2}}}}"#),
            format!(r#"{{"uri":null,"sha256":"{SHA}","size":1}}"#),
        ]
        .to_vec(),
        "uri" => [
            "s3:",
            "s3://a b",
            "1s3://b",
            "s3://b%2",
            "s3://b%zz",
            "s3://b%2F",
            "s3://é",
            "s3:\\/\\/b",
            "a+b-c.d:[x]@!$&'()*+,;=?/#",
            "s3://b\\u0020",
            "",
        ]
        .map(q)
        .into_iter()
        .chain(["null", "1"].map(String::from))
        .collect(),
        "sha256" => [
            SHA.to_ascii_uppercase(),
            SHA[1..].to_owned(),
            format!("{SHA}a"),
            format!("\\u0061{}", &SHA[1..]),
            format!("{}g", &SHA[1..]),
        ]
        .iter()
        .map(|s| q(s))
        .chain(["null", "1"].map(String::from))
        .collect(),
        "headers" => [
            r#"{}"#,
            r#"null"#,
            r#"[]"#,
            r#"{"":"x"}"#,
            r#"{"a":1}"#,
            r#"{"a":null}"#,
            r#"{"rdq.source":"x"}"#,
            r#"{"rdq.submitted_by":"x"}"#,
            r#"{"rdq.\u0073ource":"x"}"#,
            r#"{"RDQ.Source":"x"}"#,
            r#"{"a":"1","a":"2"}"#,
            r#"{"a":"1","\u0061":"2"}"#,
            r#"{"a":"\ud83d\ude00"}"#,
            r#"{"a":"\ud83d"}"#,
            r#"{"\ud800":"x"}"#,
            r#"{"a":"\u0000"}"#,
        ]
        .map(String::from)
        .to_vec(),
        "status" => [
            "PENDING",
            "IN_FLIGHT",
            "SUCCEEDED",
            "DEAD",
            "CANCELLED",
            "dead",
            "FAILED",
            "\\u0044EAD",
            "DEAD ",
            "",
        ]
        .map(q)
        .into_iter()
        .chain(["null", "1"].map(String::from))
        .collect(),
        "attempt_count" | "redrive_count" | "attempt_no" | "size" => {
            counts.map(String::from).to_vec()
        }
        "next_attempt_at" | "lease_expires_at" | "created_at" | "started_at" | "finished_at" => {
            stamps
                .map(q)
                .into_iter()
                .chain(["null", "1", "{}"].map(String::from))
                .collect()
        }
        "attempts" => ["[]", "null", "{}", "[1]", "[null]", "[{}]", "[[]]"]
            .map(String::from)
            .to_vec(),
        "origin" => [
            r#"{}"#,
            r#"null"#,
            r#"[]"#,
            r#""api""#,
            r#"{"source":null}"#,
            r#"{"source":1}"#,
            r#"{"source":""}"#,
            r#"{"submitted_by":{}}"#,
            r#"{"source":"a","source":"b"}"#,
            r#"{"source":"a","\u0073ource":"b"}"#,
            r#"{"\u0073ource":1}"#,
            r#"{"x":{"y":[]},"source":"\u0061"}"#,
        ]
        .map(String::from)
        .to_vec(),
        "outcome" => [
            "SUCCESS",
            "RETRYABLE_FAILURE",
            "PERMANENT_FAILURE",
            "LEASE_EXPIRED",
            "TIMEOUT",
            "success",
            "\\u0053UCCESS",
            "",
        ]
        .map(q)
        .into_iter()
        .chain(["null", "1"].map(String::from))
        .collect(),
        "error" => [
            r#"null"#,
            r#"{}"#,
            r#""x""#,
            r#"[]"#,
            r#"0"#,
            r#"{"type":"E","message":"m"}"#,
            r#"{"type":"","message":"m"}"#,
            r#"{"type":"rdq.LeaseExpired","message":"m"}"#,
            r#"{"type":"rdq.LeaseExpired","message":"m","stack":"s"}"#,
            r#"{"type":"rdq.LeaseExpired","message":"m","stack":null}"#,
            r#"{"type":"rdq.LeaseExpired","message":""}"#,
            r#"{"type":"rdq.LeaseExpired","message":"\u006d"}"#,
            r#"{"type":"rdq.Lease\u0045xpired","message":"m"}"#,
            r#"{"type":"rdq.LeaseExpired","message":"m","stack":""}"#,
            r#"{"type":"E"}"#,
            r#"{"message":"m"}"#,
            r#"{"type":1,"message":"m"}"#,
            r#"{"type":"E","message":null}"#,
            r#"{"type":"E","message":"m","stack":1}"#,
            r#"{"type":"E","message":"m","type":"E"}"#,
            r#"{"type":"E","message":"m","detail":{"a":1,"\u0061":2}}"#,
        ]
        .map(String::from)
        .to_vec(),
        "duration_ms" => [
            "null",
            "0",
            "1",
            "249",
            "250",
            "251",
            "999",
            "1000",
            "1001",
            "10000",
            "-0",
            "-5",
            "\"250\"",
            "250.0",
            "2.5e2",
            "1000000000000000000000000000000",
            "12345678901234567890",
            "18446744073709551616",
            "true",
            "{}",
        ]
        .map(String::from)
        .to_vec(),
        "type" | "message" | "stack" | "source" | "submitted_by" => [
            "\"\"",
            "\"m\"",
            "\"rdq.LeaseExpired\"",
            "null",
            "1",
            "[]",
            "\"\\ud800\"",
            "\"\\udc00\\ud800\"",
        ]
        .map(String::from)
        .to_vec(),
        // Unknown members, header values, detail.
        _ => [
            "\"s\"",
            "\"\"",
            "1e400",
            "-0",
            "{}",
            "null",
            "[1,{\"a\":[]}]",
            "\"\\ud83d\\ude00\"",
            "\"\\ud800\"",
            "\"\\ud800\\u0041\"",
            "\"\\u0000\\u001f\\u007f\"",
            "{\"a\":1,\"a\":2}",
            "{\"a\":1,\"\\u0061\":2}",
            "[{\"a\":1},{\"a\":1}]",
            "123456789012345678901234567890",
            "-",
            "01",
            "1.",
            ".5",
            "tru",
            "nul",
            "\"\u{1}\"",
        ]
        .map(String::from)
        .to_vec(),
    };
    // Other spellings of a string value: escapes that decode to the same text, and appended
    // escapes.
    if let J::Raw(raw) = current {
        if let Some(inner) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
            out.extend(respellings(inner).into_iter().map(|s| q(&s)));
        }
    }
    out
}

/// A string's content spelled with escapes: the same text (`\u0061` for its first character,
/// `\/` for each `/`, an upper-case hex escape for its last) and some more (`\"`, `\\`, a
/// surrogate pair, a lone surrogate, U+0000 and U+2028 appended).
fn respellings(inner: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(first) = inner.chars().next().filter(|c| *c != '\\') {
        out.push(format!(
            "\\u{:04x}{}",
            u32::from(first),
            &inner[first.len_utf8()..]
        ));
    }
    if let Some(last) = inner
        .chars()
        .last()
        .filter(|c| c.is_ascii() && *c != '\\' && *c != '"')
    {
        out.push(format!(
            "{}\\u{:04X}",
            &inner[..inner.len() - 1],
            u32::from(last)
        ));
    }
    if inner.contains('/') {
        out.push(inner.replace('/', "\\/"));
    }
    for tail in [
        "\\\"",
        "\\\\",
        "\\ud83d\\ude00",
        "\\uD83D\\uDE00",
        "\\udc00",
        "\\ud83d",
        "\\u0000",
        "\\u2028",
        "\u{2028}",
        "\\n",
    ] {
        out.push(format!("{inner}{tail}"));
    }
    out
}

#[test]
fn the_bases_are_clean_and_accepted() {
    let options = RuleOptions::default();
    for base in bases() {
        assert_eq!(
            super::compare(&options, base.as_bytes()),
            (true, true),
            "{base}"
        );
    }
}

/// Mutated lines counted apart by whether the mutation added a backslash (an escape the single
/// pass leaves to the tape path wherever a rule reads the value).
struct Split {
    plain: Tally,
    escaped: Tally,
}

impl Split {
    fn new() -> Self {
        Split {
            plain: Tally::new(&RuleOptions::default()),
            escaped: Tally::new(&RuleOptions::default()),
        }
    }

    fn add_mutations(&mut self, base: &str, every: usize) {
        let tree = J::parse(base).expect("a base parses");
        let backslashes = |s: &str| s.bytes().filter(|&b| b == b'\\').count();
        for text in mutated_texts(&tree, &alternatives, every) {
            if backslashes(&text) > backslashes(base) {
                self.escaped.add(text.as_bytes());
            } else {
                self.plain.add(text.as_bytes());
            }
        }
    }
}

#[test]
fn mutations_of_hand_made_envelopes() {
    let mut split = Split::new();
    for base in bases() {
        split.add_mutations(&base, 1);
    }
    split
        .plain
        .assert_share("member and field mutations of the bases", 500, 0.9);
    split
        .escaped
        .assert_share("the same, respelled with escapes", 100, 0.0);
}

#[test]
fn mutations_of_gen_lines() {
    // Gen lines are long (stacks, payloads): every 9th mutation of a few lines of each kind.
    let mut split = Split::new();
    for version in [1, 2] {
        for (seed, rate) in [(11, 0.0), (12, 1.0)] {
            for line in gen_lines(seed, version, rate, 7) {
                if let Ok(text) = std::str::from_utf8(&line) {
                    if J::parse(text).is_some() {
                        split.add_mutations(text, 9);
                    }
                }
            }
        }
    }
    split
        .plain
        .assert_share("member and field mutations of gen lines", 300, 0.9);
    split
        .escaped
        .assert_share("the same, respelled with escapes", 100, 0.0);
}
