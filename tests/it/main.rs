//! The integration tests, one binary: a module per command or area. Tests that must run in a
//! process of their own sit beside this folder (`tests/no_alloc.rs`), each saying why.

mod chokaq;
mod cli_batch;
#[cfg(feature = "s3")]
mod cli_batch_s3;
mod cli_batch_spark;
mod cli_closing;
mod cli_completions;
mod cli_compliance;
mod cli_conventions;
mod cli_convert;
mod cli_dedupe;
mod cli_explain;
mod cli_export;
mod cli_filter;
mod cli_folders;
mod cli_frames;
mod cli_gen;
mod cli_help;
mod cli_input_kinds;
mod cli_latency;
mod cli_manual;
mod cli_max_errors;
mod cli_migrate;
mod cli_names;
mod cli_pipeline;
mod cli_places;
mod cli_redrive;
#[cfg(feature = "s3")]
mod cli_s3;
mod cli_sample;
mod cli_seekable;
mod cli_show;
mod cli_stats;
mod cli_stats_html;
mod cli_stdout;
mod cli_validate;
mod codec;
mod common;
mod compliance;
mod compliance_plugins;
mod docs;
mod endings;
mod explain;
mod fuzz_corpus;
mod gen;
mod hostile;
mod json_test_suite;
mod migrate;
mod pieces;
mod pipeline;
#[cfg(feature = "proto")]
mod proto;
#[cfg(feature = "proto")]
mod proto_python;
mod reader_splits;
mod readme;
mod regression;
mod schema;
