#!/usr/bin/env bash
# batch against one migrate over the same bytes, a resume of a finished batch, and the Spark
# runner in local[2] mode, on SHARDS zstd shards of `gen` data (about 3.3 KB a line: 9,000
# lines is about 30 MB decompressed). Medians of ROUNDS; each round runs every contender once,
# in turn, so that load from other work on the machine falls on all of them alike.
#
#   bash benches/shards.sh [SHARDS [LINES [ROUNDS [JOBS]]]]     (default 16 9000 3 2)
#   NO_SPARK=1 bash benches/shards.sh                            (without the Spark runner)
#
# Needs zstd; the Spark line needs pyspark and Java (as tests/it/cli_batch_spark.rs). The shards
# are kept in target/shards-bench/ for the next run.
set -euo pipefail
cd "$(dirname "$0")/.."
SHARDS=${1:-16}
LINES=${2:-9000}
ROUNDS=${3:-3}
JOBS=${4:-2}
cargo build --release --quiet --bin rdq-envelope
B=$PWD/target/release/rdq-envelope
D=$PWD/target/shards-bench/$SHARDS-$LINES
mkdir -p "$D/in"
for i in $(seq -f %04g 1 "$SHARDS"); do
    f="$D/in/part-$i.jsonl.zst"
    [ -s "$f" ] || "$B" gen --count "$LINES" --seed "$i" --version 1 --invalid-rate 0.01 | zstd -q -3 -o "$f"
done
# One file of every shard's frames, in the same order: the single run reads the same bytes.
[ -s "$D/all.jsonl.zst" ] || cat "$D"/in/part-*.jsonl.zst >"$D/all.jsonl.zst"
STORED=$(du -b "$D/all.jsonl.zst" | cut -f1)

seconds() { # seconds COMMAND...: wall-clock seconds of the command, its output discarded
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || [ $? -eq 1 ] # 1: some line rejected
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc
}
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

single() {
    rm -f "$D"/single.*
    "$B" migrate -q --to 2 -j"$JOBS" "$D/all.jsonl.zst" -o "$D/single.jsonl.zst" \
        --rejects "$D/single.rejects.jsonl.zst" --summary "$D/single.summary.json"
}
batch() { # batch K: a fresh batch run, K shards at once
    rm -rf "$D/out"
    "$B" batch migrate -q --to 2 -j"$JOBS" --shards-at-once "$1" "$D/in" --out "$D/out"
}
resume() { "$B" batch migrate -q --to 2 -j"$JOBS" "$D/in" --out "$D/out"; }
spark() {
    rm -rf "$D/spark"
    python3 contrib/spark/rdq_spark.py --binary "$B" --master "local[$JOBS]" "$D/in" "$D/spark" \
        -- migrate --to 2
}

declare -A runs
names="single batch_k1 batch_k2 resume"
[ -n "${NO_SPARK:-}" ] || names="$names spark"
for round in $(seq 1 "$ROUNDS"); do
    runs[single]+="$(seconds single) "
    runs[batch_k1]+="$(seconds batch 1) "
    runs[resume]+="$(seconds resume) "
    runs[batch_k2]+="$(seconds batch 2) "
    [ -n "${NO_SPARK:-}" ] || runs[spark]+="$(seconds spark) "
    echo "round $round done" >&2
done
BYTES=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["bytes_in"])' "$D/single.summary.json")
printf '%d shards of %d lines: %.1f MB decompressed, %.1f MB stored; -j%d; median of %d\n' \
    "$SHARDS" "$LINES" "$(echo "$BYTES / 1000000" | bc -l)" "$(echo "$STORED / 1000000" | bc -l)" "$JOBS" "$ROUNDS"
for name in $names; do
    # shellcheck disable=SC2086
    m=$(printf '%s\n' ${runs[$name]} | median)
    printf '%-9s %7.2f s  %6.1f MB/s   (rounds: %s)\n' "$name" "$m" "$(echo "$BYTES / 1000000 / $m" | bc -l)" "${runs[$name]}"
done
