#!/usr/bin/env bash
# The throughput script: builds the release binary and the bare-parse baseline, generates a
# `gen` corpus (default about 500 MB) and measures MB/s for cat, wc -l, the bare simd-json parse,
# validate -j1/-j2, migrate both ways, zstd -dc and validate on the .zst, jq on a 50 MB slice,
# with medians and ratios; then validate's peak RSS, also on 2 GB and 10 GB through a pipe.
#
#   bash benches/throughput.sh [--mb 500] [--rounds 5] [--no-big]
#
# Needs zstd (and jq for its line). The corpus is kept in target/throughput/ for the next run.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin rdq-envelope --example bare_parse
exec python3 benches/throughput.py "$@"
