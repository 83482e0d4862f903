#!/usr/bin/env bash
# Rebuilds samples/dlq-sample.jsonl.zst, the README's first command's input: 300 DEAD-heavy
# version 1 envelopes from `gen` with seven realistic defects. tests/it/cli_gen.rs checks that the
# committed file still decompresses to exactly this output.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --release -- gen --count 300 --seed 2 --version 1 --invalid-rate 0.025 \
    | zstd -19 --quiet --force -o samples/dlq-sample.jsonl.zst
