//! The mapping's own rules: timestamps at both ends of the envelope's range, what only a
//! message can get wrong, and bytes that are not a message at all.

use proptest::prelude::*;
use prost::Message;

use super::convert::{timestamp_message, timestamp_of};
use super::messages::{self, v1, v2, UnknownMember};
use super::*;
use crate::envelope::{Envelope, Timestamp};

fn dead_v2() -> Envelope {
    Envelope::from_json(&crate::test_support::dead_v2_line()).unwrap()
}

fn v2_message() -> v2::Envelope {
    match dead_v2().to_proto_message() {
        ProtoEnvelope::V2(m) => m,
        ProtoEnvelope::V1(_) => unreachable!("a version 2 envelope"),
    }
}

fn refusal(m: v2::Envelope) -> String {
    Envelope::from_proto(&m.encode_to_vec())
        .unwrap_err()
        .to_string()
}

#[test]
fn timestamps_keep_both_ends_of_the_range() {
    let first: Timestamp = "0000-01-01T00:00:00.000Z".parse().unwrap();
    let last: Timestamp = "9999-12-31T23:59:59.999Z".parse().unwrap();
    let m = timestamp_message(first);
    // Below google.protobuf.Timestamp's nominal minimum (0001-01-01, -62135596800).
    assert_eq!((m.seconds, m.nanos), (-62_167_219_200, 0));
    let m = timestamp_message(last);
    assert_eq!((m.seconds, m.nanos), (253_402_300_799, 999_000_000));
    let before_epoch: Timestamp = "1969-12-31T23:59:59.999Z".parse().unwrap();
    let m = timestamp_message(before_epoch);
    assert_eq!((m.seconds, m.nanos), (-1, 999_000_000));
    for t in [first, last, before_epoch, Timestamp::UNIX_EPOCH] {
        let top = convert_field();
        assert_eq!(timestamp_of(&timestamp_message(t), &top).unwrap(), t);
    }
}

fn convert_field() -> convert::Field<'static> {
    convert::Field::top("created_at")
}

#[test]
fn timestamps_outside_the_range_or_between_milliseconds_are_refused() {
    let top = convert_field();
    let cases = [
        (-62_167_219_201, 999_000_000, "outside"),
        (253_402_300_800, 0, "outside"),
        (0, 1, "whole number of milliseconds"),
        (0, -1_000_000, "nanos"),
        (0, 1_000_000_000, "nanos"),
        (i64::MAX, 0, "outside"),
        (i64::MIN, 0, "outside"),
    ];
    for (seconds, nanos, why) in cases {
        let err = timestamp_of(&messages::Timestamp { seconds, nanos }, &top).unwrap_err();
        assert!(err.to_string().contains(why), "{seconds} {nanos}: {err}");
        assert!(err.to_string().starts_with("created_at: "), "{err}");
    }
}

#[test]
fn year_0000_and_9999_round_trip_through_an_envelope() {
    let line = String::from_utf8(crate::test_support::dead_v2_line()).unwrap();
    // A pending envelope whose next attempt is at the end of time, created at the start.
    let envelope = Envelope::from_json(&crate::test_support::dead_v2_line()).unwrap();
    let mut m = match envelope.to_proto_message() {
        ProtoEnvelope::V2(m) => m,
        ProtoEnvelope::V1(_) => unreachable!(),
    };
    m.attempts.clear();
    m.attempt_count = 0;
    m.status = messages::Status::Pending as i32;
    m.created_at = Some(messages::Timestamp {
        seconds: -62_167_219_200,
        nanos: 0,
    });
    m.next_attempt_at = Some(messages::Timestamp {
        seconds: 253_402_300_799,
        nanos: 999_000_000,
    });
    m.id = "00000000000000000000000000".into();
    let back = Envelope::from_proto(&m.encode_to_vec()).unwrap();
    let json = back.to_json();
    assert!(
        json.contains(r#""created_at":"0000-01-01T00:00:00.000Z""#),
        "{json}"
    );
    assert!(
        json.contains(r#""next_attempt_at":"9999-12-31T23:59:59.999Z""#),
        "{json}"
    );
    assert_eq!(Envelope::from_proto(&back.to_proto()).unwrap(), back);
    assert!(line.contains("DEAD"));
}

#[test]
fn what_only_a_message_can_get_wrong_names_its_field() {
    let mut m = v2_message();
    m.status = 0;
    assert_eq!(
        refusal(m),
        "status: is STATUS_UNSPECIFIED (0): a status is required"
    );

    let mut m = v2_message();
    m.status = 77;
    assert_eq!(refusal(m), "status: 77 is not a Status");

    let mut m = v2_message();
    m.attempts[0].outcome = Some(0);
    assert!(refusal(m).starts_with("attempts[0].outcome: is OUTCOME_UNSPECIFIED"));

    let mut m = v2_message();
    m.attempts[0].started_at = None;
    assert_eq!(
        refusal(m),
        "attempts[0].started_at: is not set: it is required"
    );

    let mut m = v2_message();
    m.created_at = None;
    assert_eq!(refusal(m), "created_at: is not set: it is required");

    let mut m = v2_message();
    m.handler_version = Some(messages::HandlerVersion::HandlerVersionNull(3));
    assert_eq!(refusal(m), "handler_version_null: 3 is not NULL_VALUE (0)");

    let mut m = v2_message();
    m.envelope_version = 1;
    // Field 1 says version 1: version 1's message has no origin (field 20), which prost would
    // skip: refused rather than dropped.
    let err = refusal(m);
    assert!(err.contains("fields this mapping does not have"), "{err}");

    let mut m = v2_message();
    m.envelope_version = 3;
    assert_eq!(
        refusal(m),
        "envelope_version 3 has no message here (versions 1 and 2 are mapped)"
    );
}

fn member(name: &str, json: &str) -> UnknownMember {
    UnknownMember {
        name: name.into(),
        json: json.into(),
        spelling: None,
    }
}

#[test]
fn unknown_members_are_one_value_each_and_never_a_known_name() {
    let mut m = v2_message();
    m.unknown_members.push(member("x", r#"1,"queue":"other""#));
    let err = refusal(m);
    assert!(
        err.starts_with("unknown_members[0].json: is not one JSON value"),
        "{err}"
    );

    let mut m = v2_message();
    m.unknown_members.push(member("queue", r#""other""#));
    assert!(refusal(m).starts_with("unknown_members[0].name: \"queue\" is a known member"));

    // Known only when absent in JSON: still its own field.
    let mut m = v2_message();
    m.attempts[0]
        .unknown_members
        .push(member("duration_ms", "250"));
    assert!(refusal(m).starts_with("attempts[0].unknown_members[0].name"));

    let mut m = v2_message();
    let mut bad = member("x-y", "1");
    bad.spelling = Some(r#""x\u002dz""#.into());
    m.unknown_members.push(bad);
    assert!(refusal(m).contains("does not spell the name"));

    let mut m = v2_message();
    let mut bad = member("x-y", "1");
    bad.spelling = Some(r#""x-y":2,"z""#.into());
    m.unknown_members.push(bad);
    assert!(refusal(m).contains("spelling: is not a JSON string"));

    // Two members of one name: the checker's duplicate key.
    let mut m = v2_message();
    m.unknown_members.push(member("x", "1"));
    m.unknown_members.push(member("x", "2"));
    let err = Envelope::from_proto(&m.encode_to_vec()).unwrap_err();
    assert_eq!(err.code().as_str(), "DUPLICATE_KEY", "{err}");

    // The exact spelling of values and keys survives.
    let mut m = v2_message();
    let mut spelled = member("x-y", "[1.0,1e2,-0,\"\\u00e9\"]");
    spelled.spelling = Some(r#""x\u002dy""#.into());
    m.unknown_members.push(spelled);
    let back = Envelope::from_proto(&m.encode_to_vec()).unwrap();
    assert!(back
        .to_json()
        .ends_with(r#","x\u002dy":[1.0,1e2,-0,"\u00e9"]}"#));
    assert_eq!(back.to_proto(), m.encode_to_vec());
}

#[test]
fn version_1_holds_no_claim_check_and_no_origin() {
    let line = crate::test_support::dead_v2_line();
    let mut envelope = Envelope::from_json(&line).unwrap();
    envelope.migrate(1).unwrap();
    let ProtoEnvelope::V1(m) = envelope.to_proto_message() else {
        unreachable!()
    };
    assert_eq!(Envelope::from_proto(&m.encode_to_vec()).unwrap(), envelope);
    // A v2 message's bytes with field 1 = 1 carry an origin v1 skips, and JSON's version 1
    // has none: the line is the envelope without it.
    let mut v1_with_null_ref = m.clone();
    v1_with_null_ref.payload_ref = Some(v1::PayloadRefSlot::PayloadRefNull(0));
    let back = Envelope::from_proto(&v1_with_null_ref.encode_to_vec()).unwrap();
    assert!(back.to_json().contains(r#""payload_ref":null"#));
}

#[test]
fn stream_refuses_huge_truncated_and_bad_lengths_before_allocating() {
    // A length of 2^63: refused as too large, nothing read after it.
    let mut huge = Vec::new();
    prost::encoding::encode_varint(1 << 63, &mut huge);
    let err = DelimitedReader::new(&huge[..]).next_message().unwrap_err();
    assert!(matches!(err, StreamError::TooLarge { .. }), "{err}");
    // Eleven continuation bytes: not a varint.
    let bad = [0xFF; 11];
    let err = DelimitedReader::new(&bad[..]).next_message().unwrap_err();
    assert!(matches!(err, StreamError::BadLength { .. }), "{err}");
    // A varint cut short.
    let err = DelimitedReader::new(&[0x80u8][..])
        .next_message()
        .unwrap_err();
    assert!(matches!(err, StreamError::Truncated { .. }), "{err}");
    // A padded varint (0 as two bytes) is a varint: its offset counts both.
    let mut reader = DelimitedReader::new(&[0x80u8, 0x00, 0x00][..]);
    assert_eq!(reader.next_message().unwrap().unwrap().bytes.len(), 0);
    assert_eq!(reader.offset(), 2);
    assert_eq!(reader.next_message().unwrap().unwrap().offset, 2);
    assert!(reader.next_message().unwrap().is_none());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Any bytes: an envelope or an error, never a panic.
    #[test]
    fn any_bytes_are_an_envelope_or_an_error(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = Envelope::from_proto(&bytes);
        let mut reader = DelimitedReader::new(&bytes[..]).max_message_bytes(64);
        while let Ok(Some(frame)) = reader.next_message() {
            let _ = Envelope::from_proto(frame.bytes);
        }
    }

    /// A valid message with one byte changed: an envelope or an error, never a panic.
    #[test]
    fn mutated_messages_are_an_envelope_or_an_error(at in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let mut bytes = dead_v2().to_proto();
        let i = at.index(bytes.len());
        bytes[i] = byte;
        if let Ok(envelope) = Envelope::from_proto(&bytes) {
            prop_assert_eq!(Envelope::from_proto(&envelope.to_proto()).ok(), Some(envelope));
        }
    }

    /// Generated envelopes of both versions: the message gives back the same line and the
    /// same envelope.
    #[test]
    fn generated_envelopes_round_trip(seed in any::<u64>(), version in 1u32..=2) {
        let options = crate::generate::GenOptions { seed, version, ..Default::default() };
        let mut generator = crate::generate::Generator::new(options);
        let mut line = Vec::new();
        for _ in 0..20 {
            line.clear();
            if generator.next_line(&mut line).is_some() {
                continue;
            }
            let line = line.strip_suffix(b"\n").unwrap_or(&line);
            let envelope = Envelope::from_json(line).unwrap();
            let bytes = envelope.to_proto();
            let back = Envelope::from_proto(&bytes).unwrap();
            let json = back.to_json();
            prop_assert_eq!(json.as_bytes(), line);
            prop_assert_eq!(&back, &envelope);
        }
    }
}
