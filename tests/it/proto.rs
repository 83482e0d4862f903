//! The proto mapping through the library's API (docs/proto.md): every valid compliance
//! fixture and `gen` line round-trips (the same envelope, the same canonical line), and the
//! `.proto` files and the hand-derived messages agree on every field's number and wire type.

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;

use rdq_envelope::envelope::Envelope;
use rdq_envelope::proto::{messages, write_delimited, DelimitedReader, ProtoEnvelope};

use crate::common::{compliance_case_paths, gen_lines};

fn compliance_lines() -> Vec<Vec<u8>> {
    compliance_case_paths()
        .into_iter()
        .map(|p| fs::read(p).unwrap())
        .map(|b| b.strip_suffix(b"\n").map(<[u8]>::to_vec).unwrap_or(b))
        .filter(|b| !b.contains(&b'\n'))
        .collect()
}

#[test]
fn every_valid_fixture_and_gen_line_round_trips_through_its_message() {
    let mut lines = compliance_lines();
    for version in [1, 2] {
        let corpus = gen_lines(1000, 40 + u64::from(version), Some(version), 0.0);
        lines.extend(
            corpus
                .split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .map(<[u8]>::to_vec),
        );
    }
    let (mut valid, mut canonical) = (0, 0);
    let mut stream = Vec::new();
    let mut expected = Vec::new();
    for line in &lines {
        let Ok(envelope) = Envelope::from_json(line) else {
            continue;
        };
        valid += 1;
        let bytes = envelope.to_proto();
        let back = Envelope::from_proto(&bytes).unwrap();
        assert_eq!(back, envelope, "{}", String::from_utf8_lossy(line));
        assert_eq!(back.to_json(), envelope.to_json());
        if envelope.to_json().as_bytes() == &line[..] {
            canonical += 1;
        }
        write_delimited(&bytes, &mut stream);
        expected.push(back.to_json());
    }
    assert!(valid >= 2070, "{valid}");
    assert!(canonical >= 2000, "{canonical}");
    // The same messages as one stream.
    let mut reader = DelimitedReader::new(&stream[..]);
    let mut got = Vec::new();
    while let Some(frame) = reader.next_message().unwrap() {
        got.push(Envelope::from_proto(frame.bytes).unwrap().to_json());
    }
    assert_eq!(got, expected);
}

/// A `.proto` message's fields: `(field number, wire type)` of each, and their names (a oneof's
/// members as `ONEOF.MEMBER`).
type Declared = (String, BTreeSet<(u32, u8)>, Vec<String>);

/// Every message a `.proto` file declares (the files are written one field a line, as
/// `TYPE NAME = NUMBER;`).
fn declared(proto: &str) -> Vec<Declared> {
    let mut messages = Vec::new();
    let mut current: Option<Declared> = None;
    let mut oneof: Option<String> = None;
    let mut depth = 0;
    for line in proto.lines().map(str::trim) {
        if line.starts_with("//") {
            continue;
        }
        if let Some(name) = line
            .strip_prefix("message ")
            .and_then(|l| l.strip_suffix(" {"))
        {
            current = Some((name.to_owned(), BTreeSet::new(), Vec::new()));
            depth = 1;
            continue;
        }
        if current.is_some() && line.ends_with('{') {
            depth += 1;
            oneof = line
                .strip_prefix("oneof ")
                .and_then(|l| l.strip_suffix(" {"))
                .map(str::to_owned);
        }
        if current.is_some() && line == "}" {
            depth -= 1;
            oneof = None;
            if depth == 0 {
                messages.extend(current.take());
            }
            continue;
        }
        let Some((_, fields, names)) = current.as_mut() else {
            continue;
        };
        let Some((left, number)) = line.strip_suffix(';').and_then(|l| l.split_once(" = ")) else {
            continue;
        };
        let Ok(number) = number.parse::<u32>() else {
            continue;
        };
        let words: Vec<&str> = left.split_whitespace().collect();
        let kind = words[words.len() - 2];
        let name = words[words.len() - 1];
        names.push(match &oneof {
            Some(group) => format!("{group}.{name}"),
            None => name.to_owned(),
        });
        let wire = match kind {
            "uint32" | "uint64" | "int32" | "int64" | "bool" => 0,
            "string" | "bytes" => 2,
            k if k.starts_with("google.protobuf.NullValue") || k == "Status" || k == "Outcome" => 0,
            _ => 2, // a message
        };
        fields.insert((number, wire));
    }
    messages
}

/// The `(field number, wire type)` pairs of an encoded message's top level.
fn encoded(bytes: &[u8]) -> BTreeSet<(u32, u8)> {
    let mut out = BTreeSet::new();
    let mut at = 0;
    let varint = |at: &mut usize| {
        let (mut value, mut shift) = (0u64, 0);
        loop {
            let b = bytes[*at];
            *at += 1;
            value |= u64::from(b & 0x7F) << shift;
            if b & 0x80 == 0 {
                return value;
            }
            shift += 7;
        }
    };
    while at < bytes.len() {
        let key = varint(&mut at);
        let (number, wire) = ((key >> 3) as u32, (key & 7) as u8);
        match wire {
            0 => {
                varint(&mut at);
            }
            2 => {
                let len = varint(&mut at) as usize;
                at += len;
            }
            other => panic!("wire type {other}"),
        }
        out.insert((number, wire));
    }
    out
}

#[test]
fn the_proto_files_and_the_derived_messages_agree_field_for_field() {
    use prost::Message;
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("proto/rdq/envelope");
    let v1 = declared(&fs::read_to_string(root.join("v1/envelope.proto")).unwrap());
    let v2 = declared(&fs::read_to_string(root.join("v2/envelope.proto")).unwrap());
    let find = |set: &[Declared], name: &str| {
        set.iter()
            .find(|(n, ..)| n == name)
            .unwrap_or_else(|| panic!("{name}"))
            .1
            .clone()
    };
    // The names: prost's Debug of the derived message names its fields (`r#type` for `type`),
    // each oneof by its field and each member by its variant (`stack_null`: `StackNull`).
    let named = |set: &[Declared], message: &str, debug: &str| {
        let (.., names) = set.iter().find(|(n, ..)| n == message).unwrap();
        for name in names {
            let present = match name.split_once('.') {
                Some((group, member)) => {
                    let variant: String = member
                        .split('_')
                        .map(|w| w[..1].to_uppercase() + &w[1..])
                        .collect();
                    debug.contains(&format!("{group}: ")) && debug.contains(&format!("{variant}("))
                }
                None => {
                    debug.contains(&format!("{name}: ")) || debug.contains(&format!("r#{name}: "))
                }
            };
            assert!(
                present,
                "{message}.{name} is not in the derived message: {debug}"
            );
        }
    };
    // Every field set (each oneof's members in turn): what is encoded is what is declared.
    let unknown = || {
        vec![messages::UnknownMember {
            name: "u".into(),
            json: "1".into(),
            spelling: Some("\"u\"".into()),
        }]
    };
    let ts = || {
        Some(messages::Timestamp {
            seconds: 1,
            nanos: 1_000_000,
        })
    };
    assert_eq!(
        encoded(&unknown()[0].encode_to_vec()),
        find(&v2, "UnknownMember")
    );
    assert_eq!(find(&v1, "UnknownMember"), find(&v2, "UnknownMember"));
    assert_eq!(
        encoded(
            &messages::Header {
                key: "k".into(),
                value: "v".into()
            }
            .encode_to_vec()
        ),
        find(&v1, "Header")
    );
    let error = |stack| messages::AttemptError {
        r#type: "E".into(),
        message: "m".into(),
        detail_json: Some("1".into()),
        stack: Some(stack),
        unknown_members: unknown(),
    };
    let mut error_fields = encoded(&error(messages::Stack::StackNull(1)).encode_to_vec());
    error_fields.extend(encoded(
        &error(messages::Stack::StackValue("s".into())).encode_to_vec(),
    ));
    assert_eq!(error_fields, find(&v1, "AttemptError"));
    assert_eq!(find(&v1, "AttemptError"), find(&v2, "AttemptError"));
    let attempt = |slot| messages::Attempt {
        attempt_no: 1,
        started_at: ts(),
        finished_at: ts(),
        outcome: Some(1),
        error: Some(slot),
        unknown_members: unknown(),
    };
    let mut attempt_fields =
        encoded(&attempt(messages::AttemptErrorSlot::ErrorNull(1)).encode_to_vec());
    attempt_fields.extend(encoded(
        &attempt(messages::AttemptErrorSlot::ErrorValue(error(
            messages::Stack::StackNull(1),
        )))
        .encode_to_vec(),
    ));
    assert_eq!(attempt_fields, find(&v1, "Attempt"));
    assert_eq!(find(&v1, "Attempt"), find(&v2, "Attempt"));
    assert_eq!(
        encoded(&ts().unwrap().encode_to_vec()),
        [(1, 0), (2, 0)].into()
    );
    let payload_ref = messages::PayloadRef {
        uri: "u".into(),
        sha256: "s".into(),
        size: 1,
        unknown_members: unknown(),
    };
    assert_eq!(
        encoded(&payload_ref.encode_to_vec()),
        find(&v2, "PayloadRef")
    );
    let origin = messages::Origin {
        source: Some("s".into()),
        submitted_by: Some("b".into()),
        unknown_members: unknown(),
    };
    assert_eq!(encoded(&origin.encode_to_vec()), find(&v2, "Origin"));

    let base1 = messages::v1::Envelope {
        envelope_version: 1,
        id: "i".into(),
        queue: "q".into(),
        handler_ref: "h".into(),
        handler_version: Some(messages::HandlerVersion::HandlerVersionNull(1)),
        payload: vec![1],
        payload_content_type: "t".into(),
        payload_ref: Some(messages::v1::PayloadRefSlot::PayloadRefNull(1)),
        headers: vec![messages::Header {
            key: "k".into(),
            value: "v".into(),
        }],
        status: 1,
        attempt_count: 1,
        redrive_count: 1,
        next_attempt_at: ts(),
        lease_expires_at: ts(),
        created_at: ts(),
        attempts: vec![attempt(messages::AttemptErrorSlot::ErrorNull(1))],
        unknown_members: unknown(),
    };
    let mut top1 = encoded(&base1.encode_to_vec());
    let mut with_value = base1.clone();
    with_value.handler_version = Some(messages::HandlerVersion::HandlerVersionValue("v".into()));
    top1.extend(encoded(&with_value.encode_to_vec()));
    assert_eq!(top1, find(&v1, "Envelope"));

    let base2 = messages::v2::Envelope {
        envelope_version: 2,
        id: "i".into(),
        queue: "q".into(),
        handler_ref: "h".into(),
        handler_version: Some(messages::HandlerVersion::HandlerVersionNull(1)),
        payload: Some(vec![1]),
        payload_content_type: "t".into(),
        payload_ref: Some(messages::v2::PayloadRefSlot::PayloadRefNull(1)),
        headers: base1.headers.clone(),
        origin: Some(origin),
        status: 1,
        attempt_count: 1,
        redrive_count: 1,
        next_attempt_at: ts(),
        lease_expires_at: ts(),
        created_at: ts(),
        attempts: base1.attempts.clone(),
        unknown_members: unknown(),
    };
    let mut top2 = encoded(&base2.encode_to_vec());
    let mut with_values = base2.clone();
    with_values.handler_version = Some(messages::HandlerVersion::HandlerVersionValue("v".into()));
    with_values.payload_ref = Some(messages::v2::PayloadRefSlot::PayloadRefValue(payload_ref));
    top2.extend(encoded(&with_values.encode_to_vec()));
    assert_eq!(top2, find(&v2, "Envelope"));
    // Version 2's numbers are a superset of version 1's, with the same wire types.
    assert!(find(&v1, "Envelope").is_subset(&find(&v2, "Envelope")));
    named(&v1, "Envelope", &format!("{base1:?} {with_value:?}"));
    named(&v2, "Envelope", &format!("{base2:?} {with_values:?}"));
    named(&v2, "Origin", &format!("{base2:?}"));
    named(&v2, "PayloadRef", &format!("{with_values:?}"));
    let attempts = format!(
        "{:?} {:?}",
        attempt(messages::AttemptErrorSlot::ErrorNull(1)),
        attempt(messages::AttemptErrorSlot::ErrorValue(error(
            messages::Stack::StackNull(1)
        )))
    );
    let errors = format!(
        "{:?} {:?}",
        error(messages::Stack::StackNull(1)),
        error(messages::Stack::StackValue("s".into()))
    );
    for set in [&v1, &v2] {
        named(set, "Attempt", &attempts);
        named(set, "AttemptError", &errors);
        named(set, "UnknownMember", &format!("{:?}", unknown()[0]));
        named(set, "Header", &format!("{:?}", messages::Header::default()));
    }
    // A decoded message dispatches on field 1.
    assert!(matches!(
        ProtoEnvelope::decode(&base2.encode_to_vec()),
        Ok(ProtoEnvelope::V2(_))
    ));
}
