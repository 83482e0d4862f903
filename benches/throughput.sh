#!/usr/bin/env bash
# The throughput script: builds the release binary and the bare-parse baseline, generates a
# `gen` corpus (default about 500 MB) and one of long stack traces (gen --stack-bytes, default
# about 200 MB), and measures MB/s for cat, wc -l, the bare simd-json parse, validate -j1/-j2
# (on both corpora), migrate both ways, convert to and from protobuf, zstd -dc and validate on the .zst
# (one frame, seekable, pzstd's; pzstd -d -p 2), jq on a 50 MB slice,
# with medians and ratios; then validate's peak RSS, also on 2 GB and 10 GB through a pipe; and
# with --callgrind, instructions per input byte on 5 MB slices. A compact table ends the output.
#
#   bash benches/throughput.sh [--mb 500] [--stack-mb 200] [--rounds 5] [--no-big] [--callgrind]
#   bash benches/throughput.sh --quick      # 50 MB corpora, 3 rounds, no big runs
#
# Needs zstd (jq for its line, valgrind for --callgrind). The corpora are kept in
# target/throughput/ for the next run.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin rdq-envelope --example bare_parse
exec python3 benches/throughput.py "$@"
