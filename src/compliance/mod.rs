//! The storage plugins' compliance kit (docs/plugins.md): the round-trip fixtures a plugin must
//! store and give back, and the comparison that says what it lost.
//!
//! A storage plugin may take an envelope apart into native structures (columns, hashes,
//! documents), but what it reads back must be the envelope it was given: `read(write(e)) == e`,
//! unknown members included. The kit holds the fixtures that find the usual losses
//! ([`fixtures`]) and compares what came back with what was sent ([`compare`]).
//!
//! - `fixtures.rs`: the fixture set, each fixture with the loss it is there to find;
//! - `compare.rs`: the two equalities (the contract's JSON value, or the same bytes) and the
//!   differences, each with a JSON pointer and a class.

pub mod fixtures;

pub use fixtures::{fixtures, Fixture};
