#!/usr/bin/env bash
# Runs every fuzz target in turn for SECONDS each (default 60), on the nightly toolchain:
#
#   bash fuzz/run.sh 600
#
# Seeds: fuzz/corpus/<target> (made from gen output and hand-written cases) and, for the
# line-reading targets, the compliance fixtures. New corpus entries go to a scratch folder, so
# the committed seed corpora stay small;
# findings land in fuzz/artifacts/<target>/ and make the script fail.
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-60}"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
status=0
for target in line reader migrate pipeline envelope chokaq single_pass lifecycle compare proto; do
    scratch="$(mktemp -d)"
    echo "== $target: ${seconds}s"
    # The compliance fixtures seed the targets that read one line.
    seeds=("corpus/$target")
    case "$target" in line | migrate | chokaq | single_pass) seeds+=("../tests/compliance/cases") ;; esac
    if ! cargo +nightly fuzz run "$target" "$scratch" "${seeds[@]}" -- \
        -max_total_time="$seconds" -max_len=65536 -print_final_stats=1 2>&1 \
        | grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|Done|==[0-9]+== ERROR|SUMMARY)"; then
        status=1
    fi
    if [ -n "$(ls -A "artifacts/$target" 2>/dev/null)" ]; then
        echo "!! $target: findings in fuzz/artifacts/$target"
        status=1
    fi
    rm -rf "$scratch"
done
exit "$status"
