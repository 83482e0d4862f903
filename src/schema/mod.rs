//! The JSON Schema (draft 2020-12) of each envelope version, for the tools that speak JSON
//! Schema rather than docs/envelope.md: editors, API gateways, validators in other languages.
//!
//! A schema is a necessary condition, not the contract. Every valid envelope passes the schema
//! of its version, and the schema refuses what it can state: missing members, wrong JSON types,
//! the ULID, name, timestamp, base64 and media-type formats, the enumerations, the integer
//! ranges, the header keys, and the rules within one record. What it cannot state (the JSON
//! layer, limits counted in bytes, an integer's spelling, the rules across attempts, status
//! rules that need the last attempt, the size limit) is listed in each schema's top-level
//! `description`; `rdq-envelope validate` checks all of it. `tests/it/schema.rs` holds the
//! schemas to that: against the draft 2020-12 meta-schema, the compliance fixtures, `gen`'s
//! output, and the library's own format checks.
//!
//! The schemas are the files `envelope-v1.schema.json` and `envelope-v2.schema.json` beside
//! this one, built into the library as they are.

/// The schema of envelope_version 1 (docs/envelope.md#version-1), as JSON text ending in a newline.
pub(crate) const ENVELOPE_V1: &str = include_str!("envelope-v1.schema.json");

/// The schema of envelope_version 2 (docs/envelope.md#version-1 and #version-2), as JSON text
/// ending in a newline.
pub(crate) const ENVELOPE_V2: &str = include_str!("envelope-v2.schema.json");

/// The JSON Schema of `version`, as JSON text ending in a newline, or `None` when the version
/// is not supported ([`SUPPORTED_VERSIONS`](crate::envelope::SUPPORTED_VERSIONS)).
///
/// ```
/// use rdq_envelope::schema::json_schema;
///
/// let schema: serde_json::Value = serde_json::from_str(json_schema(2).unwrap()).unwrap();
/// assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
/// assert_eq!(schema["properties"]["envelope_version"]["const"], 2);
/// assert!(json_schema(3).is_none());
/// ```
pub fn json_schema(version: u32) -> Option<&'static str> {
    match version {
        1 => Some(ENVELOPE_V1),
        2 => Some(ENVELOPE_V2),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::json_schema;
    use crate::envelope::{NEWEST_VERSION, SUPPORTED_VERSIONS};

    #[test]
    fn every_supported_version_has_a_schema_and_no_other() {
        for version in 0..=SUPPORTED_VERSIONS.end() + 1 {
            assert_eq!(
                json_schema(version).is_some(),
                SUPPORTED_VERSIONS.contains(&version),
                "version {version}"
            );
        }
        assert!(json_schema(NEWEST_VERSION).is_some());
    }

    #[test]
    fn each_schema_names_its_draft_its_id_and_its_version() {
        let mut ids = Vec::new();
        for version in SUPPORTED_VERSIONS {
            let text = json_schema(version).unwrap();
            assert!(
                text.ends_with("}\n"),
                "version {version}: one trailing newline"
            );
            let schema: serde_json::Value = serde_json::from_str(text).unwrap();
            assert_eq!(
                schema["$schema"],
                "https://json-schema.org/draft/2020-12/schema"
            );
            assert_eq!(schema["properties"]["envelope_version"]["const"], version);
            for key in ["$id", "title", "description"] {
                assert!(
                    schema[key].as_str().is_some_and(|s| !s.is_empty()),
                    "version {version}: {key}"
                );
            }
            assert!(
                schema["title"]
                    .as_str()
                    .unwrap()
                    .contains(&version.to_string()),
                "version {version}: the title names the version"
            );
            // The description says what the schema cannot express, naming the codes.
            let description = schema["description"].as_str().unwrap();
            for code in [
                "DUPLICATE_KEY",
                "PAYLOAD_TOO_LARGE",
                "FIELD_TOO_LONG",
                "BAD_ATTEMPT",
                "INCONSISTENT_STATE",
            ] {
                assert!(description.contains(code), "version {version}: {code}");
            }
            ids.push(schema["$id"].as_str().unwrap().to_owned());
        }
        ids.sort();
        ids.dedup();
        assert_eq!(
            ids.len(),
            SUPPORTED_VERSIONS.count(),
            "distinct $id per version"
        );
    }
}
