#!/usr/bin/env bash
# The aarch64 binary (run under qemu) writes the x86 binary's bytes, with NEON and with the
# portable classifier, for the commands that read lines through stage 1: validate, migrate,
# filter, stats and export on a gen corpus (valid and invalid lines, both versions), and
# validate and stats on held-out data no generator made: the compliance cases, the bundled
# sample and, where it is (../shared/testdata/JSONTestSuite), every JSONTestSuite parsing case.
#
#   bash .ci/same-bytes-aarch64.sh X86_BINARY "qemu-aarch64 -L /usr/aarch64-linux-gnu AARCH64_BINARY"
set -euo pipefail
x86=$1
aarch64=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$x86" gen -q --count 1000 --seed 11 --version 1 --invalid-rate 0.2 -o "$work/v1.jsonl"
"$x86" gen -q --count 1000 --seed 12 --version 2 --invalid-rate 0.2 -o "$work/v2.jsonl"
cat "$work/v1.jsonl" "$work/v2.jsonl" >"$work/in.jsonl"
here=$(cd "$(dirname "$0")/.." && pwd)
{
    for case in "$here"/tests/compliance/cases/*.line; do
        cat "$case"
        echo
    done
    suite="$here/../shared/testdata/JSONTestSuite/test_parsing"
    if [ -d "$suite" ]; then
        for case in "$suite"/*.json; do
            cat "$case"
            echo
        done
    else
        echo "JSONTestSuite absent: held-out data without it" >&2
    fi
} >"$work/held-out.jsonl"
cp "$here/samples/dlq-sample.jsonl.zst" "$work/sample.jsonl.zst"

# Each command's standard output and status (standard error holds timings), on the files
# INPUTS names (paths in $work, without spaces).
outputs() {
    local bin=$1 out=$2 inputs=$3
    mkdir -p "$out"
    local n=0
    while read -r args; do
        n=$((n + 1))
        local status=0
        # shellcheck disable=SC2086 # the words of a case, and of INPUTS, are arguments
        $bin $args $inputs >"$out/$n.out" 2>"$work/err" || status=$?
        # 1 is rejected lines; anything above is a failure to run, not a difference.
        if [ "$status" -gt 1 ]; then
            echo "$bin $args: status $status" >&2
            cat "$work/err" >&2
            exit 1
        fi
        echo "$status" >"$out/$n.status"
    done <"$work/cases"
}

cat >"$work/gen-cases" <<'CASES'
validate -j1
validate -j2 --format json
migrate -j1 --to 2
migrate -j2 --to 1
filter -j1 --status DEAD
filter -j2 --where .attempt_count>2
stats -j1 --format json
stats -j2 --by fingerprint --format json
export -j1 --format csv
export -j2 --format tsv --fields id,queue,status,attempt_count
CASES
cat >"$work/held-out-cases" <<'CASES'
validate -j1 --format json --warnings
validate -j2
stats -j2 --by fingerprint --format json
filter -j1 --status DEAD
CASES

# Both inputs' outputs, in OUT/gen and OUT/held-out.
both() {
    local bin=$1 out=$2
    cp "$work/gen-cases" "$work/cases"
    outputs "$bin" "$out/gen" "$work/in.jsonl"
    cp "$work/held-out-cases" "$work/cases"
    outputs "$bin" "$out/held-out" "$work/held-out.jsonl $work/sample.jsonl.zst"
}

both "$x86" "$work/x86"
for simd in neon portable; do
    RDQ_ENVELOPE_SIMD=$simd both "$aarch64" "$work/$simd"
    diff -r "$work/x86" "$work/$simd"
    echo "aarch64 ($simd) writes the x86 binary's bytes: $(find "$work/x86" -type f | wc -l) files"
done
