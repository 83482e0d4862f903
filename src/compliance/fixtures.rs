//! The round-trip fixtures: valid envelopes, each there to find one way a store loses data.

/// One fixture: a valid envelope (one line of canonical JSON, no terminator) and why it is in
/// the set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fixture {
    /// A short name, unique in the set (`[a-z0-9_]`): what the fixture tests.
    pub name: &'static str,
    /// The loss it is there to find, in a sentence a plugin author reads when it fails.
    pub purpose: &'static str,
    /// The envelope: one JSON object, no line terminator. Its `id` is unique in the set.
    pub line: Vec<u8>,
}

/// The fixture set, in a fixed order (the same on every run and machine).
pub fn fixtures() -> Vec<Fixture> {
    Vec::new()
}
