//! `Serialize` and `Deserialize` for [`Envelope`] (feature `serde`): the envelope is its JSON
//! object, exactly as the canonical writer writes it, handed over as a raw JSON value. With
//! serde_json (the JSON serde reads and writes) nothing is lost: unknown members keep their
//! spelling; a deserialized envelope is judged by the checker like any line. Other formats
//! cannot carry a raw JSON value and refuse it.

use serde::de::Error as _;
use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use super::Envelope;

impl Serialize for Envelope {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let raw = RawValue::from_string(self.to_json()).map_err(S::Error::custom)?;
        raw.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Envelope {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = <Box<RawValue>>::deserialize(deserializer)?;
        Envelope::from_json(raw.get().as_bytes()).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use crate::envelope::{JsonText, Producer, Submit, Timestamp};

    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Job {
        name: String,
        envelope: crate::envelope::Envelope,
    }

    #[test]
    fn an_envelope_inside_a_serde_struct_round_trips_losslessly() {
        let t0 = Timestamp::UNIX_EPOCH;
        let mut envelope = Producer::with_clock(move || t0)
            .with_seed(3)
            .submit(Submit::new("q", "h", b"x".to_vec(), "text/plain").unwrap())
            .unwrap();
        envelope
            .insert_unknown("x_n", JsonText::parse("1.50e+2").unwrap())
            .unwrap();
        let job = Job {
            name: "one".into(),
            envelope,
        };
        let text = serde_json::to_string(&job).unwrap();
        assert!(text.contains(r#""x_n":1.50e+2}"#), "{text}");
        let back: Job = serde_json::from_str(&text).unwrap();
        assert_eq!(back, job);
    }

    #[test]
    fn an_invalid_envelope_is_a_serde_error_naming_the_rule() {
        let err = serde_json::from_str::<crate::envelope::Envelope>(r#"{"envelope_version":1}"#)
            .unwrap_err();
        assert!(err.to_string().contains("MISSING_FIELD"), "{err}");
    }
}
