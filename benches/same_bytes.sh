#!/usr/bin/env bash
# Every command's bytes on the gen corpus and the bundled sample, for a before/after comparison
# of a change that must not change behaviour:
#
#   benches/same_bytes.sh OLD_BINARY /tmp/before
#   benches/same_bytes.sh NEW_BINARY /tmp/after
#   diff -r /tmp/before /tmp/after && echo same
#
# Each case writes its standard output, standard error (timings taken out) and exit status.
set -uo pipefail
# The HTML report says when it was made: pinned, so that two runs compare byte for byte.
export SOURCE_DATE_EPOCH=1796320800
bin=$(realpath "$1")
out=$2
here=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$out" && mkdir -p "$out/in"
cd "$out/in"

"$bin" gen --count 3000 --seed 7 --version 1 --invalid-rate 0.15 -o v1.jsonl
"$bin" gen --count 3000 --seed 8 --version 2 --invalid-rate 0.15 -o v2.jsonl
"$bin" gen --count 500 --seed 9 --format chokaq --table dlq -o chokaq-dlq.jsonl 2>/dev/null || true
cp "$here/samples/dlq-sample.jsonl.zst" sample.jsonl.zst
cat v1.jsonl v2.jsonl >mixed.jsonl
# Copies of some ids, blank lines and a line over the cap, for dedupe and the reader.
{ head -n 50 v2.jsonl; printf '\n\n'; head -n 20 v2.jsonl; printf '{"x":"%s"}\n' "$(head -c 3000 /dev/zero | tr '\0' a)"; } >dups.jsonl

case_no=0
run() {
    case_no=$((case_no + 1))
    local name
    name=$(printf '%03d' "$case_no")
    printf '%s\n' "$*" >"$out/$name.cmd"
    "$bin" "$@" >"$out/$name.out" 2>"$out/$name.err"
    echo $? >"$out/$name.status"
    # Elapsed times and rates differ from run to run.
    sed -i -E 's/[0-9.]+ ?(ms|s|µs|MB\/s|MiB\/s|lines\/s)\b/T/g' "$out/$name.err"
}

for input in v1.jsonl v2.jsonl mixed.jsonl sample.jsonl.zst dups.jsonl; do
    for j in 1 2; do
        run validate -j$j "$input"
        run validate -j$j --format json "$input"
        run validate -j$j --submit "$input"
        run validate -j$j --max-envelope-bytes 1500 --queue-limit mail=900 "$input"
        run validate -j$j --max-line-bytes 2048 "$input"
        run migrate -j$j --to 2 "$input"
        run migrate -j$j --to 1 "$input"
        run filter -j$j --status DEAD "$input"
        run filter -j$j --where '.attempt_count > 2 and (.headers | length) > 0' "$input"
        run filter -j$j --error-message 'timeout|refused' --invert "$input"
        run stats -j$j "$input"
        run stats -j$j --by queue --format json "$input"
        run stats -j$j --by fingerprint --format json "$input"
        run stats -j$j --by error_type --top 3 "$input"
        run stats -j$j --format html "$input"
        run dedupe -j$j "$input"
        run redrive -j$j --at 2030-01-01T00:00:00Z "$input"
        run sample -j$j --seed 3 25 "$input"
        run sample -j$j --by queue --seed 3 5 "$input"
        run export -j$j --format csv "$input"
        run export -j$j --format parquet -o "../p$case_no.parquet" "$input"
        run export -j$j --format tsv --fields id,queue,status,attempt_count "$input"
        run show -j$j "$(sed -n '5p' v2.jsonl | sed -E 's/.*"id":"([0-9A-Z]+)".*/\1/')" "$input"
    done
done
run migrate --from chokaq --to 2 chokaq-dlq.jsonl
run validate --format json chokaq-dlq.jsonl
run schema --version 1
run schema --version 2
run explain --list
run explain INVALID_ID
exit 0
