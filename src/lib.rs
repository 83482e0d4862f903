//! rdq-envelope: validate, version-migrate and re-emit rdq task envelopes (JSON Lines),
//! zero-copy and losslessly. The rules are in `docs/envelope.md`, the migrations in
//! `docs/migrations.md`, the promises in `docs/guarantees.md`.
//!
//! The library is the tool without its command line. Without default features it is its
//! **core**: reading lines from any [`std::io::Read`], judging them, the owned envelope and its
//! lifecycle, the canonical writer (to any [`std::io::Write`]) and migrating, on 23 crates and
//! no thread, with no I/O of its own (docs/library.md#the-core):
//! `rdq-envelope = { version = "0.1", default-features = false }`. The feature `stream` adds
//! the inputs, outputs, parallel pipeline and operations the command line is made of
//! ([Features](#features)).
//!
//! # Where to start
//!
//! Two front doors, one for each direction of the codec:
//!
//! - **Reading: the [`envelope::Checker`].** One per thread judges line after line by the
//!   fastest path that settles each (the single pass, else the tape), says `LINE_TOO_LONG`
//!   itself, and hands back a valid envelope as an [`envelope::EnvelopeRef`]: its ID, queue,
//!   status, counts, timestamps, headers, payload (decoded on request) and attempts, read in
//!   place from the line; [`envelope::EnvelopeRef::to_owned`] makes it an owned envelope.
//! - **Making: the [`envelope::Envelope`].** A [`envelope::Producer`] makes one from a
//!   [`envelope::Submit`] (a ULID from its clock, the timestamps, `PENDING`); its lifecycle's
//!   transitions (`lease`, `finish_attempt`, `retry_at`, `dead_letter`, `succeed`, `redrive`,
//!   `cancel`, `migrate`) and setters each keep it valid or say which rule a change would
//!   break; [`envelope::Envelope::write`] writes it as one canonical JSON line, every unknown
//!   member kept byte for byte.
//!
//! ```
//! use rdq_envelope::envelope::{Checker, Outcome, Producer, Status, Submit};
//! use rdq_envelope::{EnvelopeRules, RuleOptions};
//!
//! // Make: submit, lease, fail for good, dead-letter; write one line.
//! let mut producer = Producer::new();
//! let mut envelope = producer.submit(Submit::new("mail", "send", br#"{"to":"a@example.com"}"#.to_vec(), "application/json")?)?;
//! let now = producer.now();
//! envelope.lease(now, now.checked_add_ms(30_000).unwrap())?;
//! envelope.finish_attempt(producer.now(), Outcome::PermanentFailure, None)?.dead_letter()?;
//! let mut line = Vec::new();
//! envelope.write_vec(&mut line);
//!
//! // Read: judge the line, read its members in place, take it back as an owned envelope.
//! let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default())?);
//! let checked = checker.check(line.strip_suffix(b"\n").unwrap());
//! let view = checked.envelope().expect("a valid envelope");
//! assert_eq!((view.queue(), view.status()), ("mail", Status::Dead));
//! assert_eq!(view.to_owned(), envelope);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Beside them:
//!
//! - **Judge a line into a verdict**: [`EnvelopeRules::check_line`] parses one line with a
//!   reused [`JsonParser`] and judges it into a reused [`Verdict`]: its errors and warnings,
//!   each a [`Diagnostic`] with its [`ErrorCode`] and JSON pointer.
//! - **Read a stream**: [`framing::LineReader`] turns any [`std::io::Read`] into numbered lines
//!   with byte offsets, under a cap on line length; with `stream`, [`io::decompressed`] first
//!   opens gzip and zstd streams, told from their first bytes.
//! - **Migrate**: [`migrate::Migrator`] rewrites a valid line as another version, splicing its
//!   bytes: every byte the migration does not change is kept.
//! - **Run in parallel** (`stream`): [`pipeline::run`] applies a [`pipeline::LineOperation`] (your own,
//!   or one of the command line's in [`ops`]) to every line of any sources, on every core,
//!   writing the outputs in input order.
//!
//! The crate's `examples/` are the programs an embedder writes first: `validate_reader` (any
//! reader, each diagnostic with its line and pointer), `migrate_stream` (standard input to
//! standard output in another version), `custom_operation` (the pipeline with an operation
//! that reads fields of each valid envelope), `build_envelopes` (N envelopes made through the
//! lifecycle, written canonical) and `roundtrip` (standard input written back through the owned
//! envelope). Run one with
//! `cargo run --example validate_reader -- FILE`; the last two need only the core.
//!
//! Beside those: [`json`] (the lossless parser and its values), [`catalogue`] (every error
//! code explained) and [`schema`], in the core; with `stream`, [`chokaq`] (the ChokaQ import),
//! [`io`] (readers that decompress, outputs committed all or nothing) and [`report`]
//! (diagnostic records); `batch` (folders of shards, resumable) and `generate`. The command line is built on this API;
//! the few items that only it needs are hidden from this documentation and not part of the
//! API. Option and operation types are `#[non_exhaustive]`: start from their `Default` or
//! `new` (whose documentation lists the defaults) and set the fields that differ.
//!
//! ```
//! use rdq_envelope::migrate::{Migration, Migrator};
//! use rdq_envelope::{EnvelopeRules, JsonParser, RuleOptions, Verdict};
//!
//! let line = br#"{"envelope_version":1,"id":"01HWT0DD088F8ENKHRJHCSSPV8","queue":"mail","handler_ref":"send","payload":"e30=","payload_content_type":"application/json","headers":{"rdq.source":"api"},"status":"PENDING","attempt_count":0,"redrive_count":0,"next_attempt_at":"2024-05-01T12:00:00.000Z","lease_expires_at":null,"created_at":"2024-05-01T12:00:00.000Z","attempts":[]}"#;
//!
//! // Validate one line: the parser and the verdict are reused from line to line.
//! let rules = EnvelopeRules::new(RuleOptions::default())?;
//! let (mut parser, mut verdict) = (JsonParser::new(), Verdict::default());
//! let doc = rules.check_line(&mut parser, line, &mut verdict).expect("JSON");
//! assert!(verdict.is_valid());
//!
//! // Migrate it to version 2: every byte the migration does not change is kept.
//! let (mut out, mut errors) = (Vec::new(), Vec::new());
//! let done = Migrator::new().migrate(line, &doc, 1, 2, &mut out, &mut errors)?;
//! assert_eq!(done, Migration::Written);
//! assert!(out.starts_with(br#"{"envelope_version":2,"#));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! With `stream`, the same rules run over any sources on every core: the pipeline over a
//! reader holding a valid line, a lower-case ID and a blank line.
//!
//! ```
//! # // The core's doctests run without `stream` too (.ci/run).
//! # #[cfg(feature = "stream")]
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use rdq_envelope::ops::{output, ReportFormat, ValidateOp};
//! use rdq_envelope::pipeline::{self, Outputs, PipelineOptions, Source};
//! use rdq_envelope::{EnvelopeRules, ErrorCode, RuleOptions};
//!
//! # let line: &[u8] = br#"{"envelope_version":1,"id":"01HWT0DD088F8ENKHRJHCSSPV8","queue":"mail","handler_ref":"send","payload":"e30=","payload_content_type":"application/json","headers":{"rdq.source":"api"},"status":"PENDING","attempt_count":0,"redrive_count":0,"next_attempt_at":"2024-05-01T12:00:00.000Z","lease_expires_at":null,"created_at":"2024-05-01T12:00:00.000Z","attempts":[]}"#;
//! let rules = EnvelopeRules::new(RuleOptions::default())?;
//! let mut input = line.to_vec();
//! input.extend_from_slice(b"\n");
//! input.extend_from_slice(&String::from_utf8_lossy(line).replace("01HWT", "01hwt").into_bytes());
//! input.extend_from_slice(b"\n\n");
//! let mut op = ValidateOp::new(rules);
//! op.format = ReportFormat::Human;
//! op.keep_valid = true;
//! let sources = vec![Source::Reader { name: "dlq".into(), reader: Box::new(std::io::Cursor::new(input)) }];
//! let (mut diagnostics, mut valid) = (Vec::new(), Vec::new());
//! let outputs = Outputs::none().to(output::PRIMARY, &mut diagnostics).to(output::SECONDARY, &mut valid);
//! let (books, ()) = pipeline::run(sources, &op, PipelineOptions::default(), outputs, None)?;
//! assert_eq!((books.lines, books.emitted, books.rejected, books.blank), (3, 1, 1, 1));
//! assert_eq!(books.by_code.get(ErrorCode::InvalidId.as_str()), Some(&1));
//! assert!(String::from_utf8(diagnostics)?.starts_with("dlq:2: /id: INVALID_ID: "));
//! assert_eq!(valid, [&line[..], b"\n"].concat());
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "stream"))]
//! # fn main() {}
//! ```
//!
//! # Features
//!
//! Without any, the library is its core, on 23 crates, itself included. Those below are on by
//! default but `serde` (and `s3`, object storage); the `cli` feature (the binary) turns on all of
//! them but `parquet` and `serde`, and every one but `generate` and `serde` turns on `stream`.
//!
//! | feature | what it adds | crates it brings |
//! |---|---|---|
//! | `stream` | [`io`] (inputs by name, outputs committed all or nothing), [`pipeline`] (a reader thread, workers, a writer), [`ops`] (the command line's operations), [`report`] and [`chokaq`] | crossbeam-channel, csv-core, sha2, libc, serde, serde_json: 40 crates in all |
//! | `serde` | `Serialize` and `Deserialize` for the owned [`envelope::Envelope`] | serde, serde_json |
//! | `compression` | gzip and zstd inputs ([`io::decompressed`]) and `.gz`/`.zst` outputs ([`io::OutputFile`]); without it they are an [`Unsupported`](std::io::ErrorKind::Unsupported) error | zstd, flate2 |
//! | `filter` | `ops::FilterOp`, its jq expressions (`--where`) and regular expressions (`--error-message`) | jaq-core, jaq-std, jaq-json, regex |
//! | `batch` | `batch` (folders of shards, resumable); turns on `compression` | rayon, blake3 |
//! | `generate` | `generate`, the synthetic corpora of `rdq-envelope gen` | rand_pcg |
//! | `sample` | `ops::SampleOp`, reservoir sampling | rand_pcg |
//! | `parquet` | `export --format parquet` | arrow-array, arrow-schema, parquet |
//!
// Without `stream` the crate's front page still names the stream layer's items; their links
// lead to the table of features that says which feature brings them.
#![cfg_attr(
    not(feature = "stream"),
    doc = "[`chokaq`]: #features\n[`io::OutputFile`]: #features\n[`io::decompressed`]: #features\n[`io`]: #features\n[`ops`]: #features\n[`pipeline::LineOperation`]: #features\n[`pipeline::run`]: #features\n[`pipeline`]: #features\n[`report`]: #features"
)]
#![deny(missing_docs)]
// `unsafe` is allowed where it is needed, with a safety argument at each block: stage 1's
// classifiers (`json/stage1/x86.rs`, `neon.rs`), and the one poll(2) call of `io/waits.rs`.
// Everywhere else it is an error.
#![deny(unsafe_code)]

#[cfg(feature = "batch")]
pub mod batch;
pub mod catalogue;
// The command line: what `src/main.rs` runs, and the Python module's `rdq-envelope` command
// too (python/), in process. Not an API of the library: hidden, and outside its semver promise.
// It uses the library as an outsider would: the `#[non_exhaustive]` options are made by
// `Default` and then set, the one way an outsider can make them.
#[cfg(feature = "stream")]
pub mod chokaq;
#[cfg(feature = "cli")]
#[doc(hidden)]
#[allow(missing_docs, unsafe_code, clippy::field_reassign_with_default)]
pub mod cli;
pub mod compliance;
pub mod diagnostic;
pub mod envelope;
pub mod framing;
// The unit tests draw their lines from it in every configuration (its generator is a
// dev-dependency too).
#[cfg(any(test, feature = "generate"))]
pub mod generate;
#[cfg(feature = "stream")]
pub mod io;
pub mod json;
pub mod migrate;
#[cfg(feature = "stream")]
pub mod ops;
#[cfg(feature = "stream")]
pub mod pipeline;
#[cfg(feature = "proto")]
pub mod proto;
#[cfg(feature = "stream")]
pub mod report;
pub mod schema;
#[doc(hidden)]
pub mod test_support;

// The command line names the crate as the binary it was written for does: `rdq_envelope::...`.
#[cfg(feature = "cli")]
extern crate self as rdq_envelope;

pub use diagnostic::{Diagnostic, ErrorCode, Severity};
pub use envelope::{EnvelopeRules, OptionsError, RuleOptions, Verdict};
pub use json::{Document, JsonParser};
