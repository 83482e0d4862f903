#!/usr/bin/env python3
"""The linger's costs and gains (docs/cli.md#latency, docs/performance.md#latency).

Latency: a producer writes a line every PACE seconds (default 0.2) into the tool's standard
input through a pipe it keeps open, LINES lines (default 50), then closes it; the time from each
line's write to its output line appearing on the tool's standard output (a pipe) is reported as
median, 90th percentile and maximum, with how many outputs appeared while the input was still
open. Commands: `filter -q` on valid lines (each comes out as it is), `validate -q -o -
--format json` on invalid lines (each comes out as its diagnostic), and `filter -q
--line-buffered`.

Throughput: `validate -q -j2` and `filter -q -j2` (a selective filter) on the held corpus (the
throughput script's 500 MB `gen` corpus, benches/throughput.py), from the file and through
`cat FILE |`, output to /dev/null: whole processes, each binary in turn in every round (the
order alternating from round to round), medians of the rounds in MB/s, and ours / baseline.

    python3 benches/latency.py --bin target/release/rdq-envelope [--baseline OTHER_BINARY]
        [--rounds 9] [--lines 50] [--pace 0.2] [--corpus PATH] [--skip-throughput]
"""

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from throughput import run_timed  # noqa: E402  (one way to time a run, beside it)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The throughput script's selective filter (benches/throughput.py).
FILTER = "--status DEAD --error-type 'java.net.*' --min-attempts 2"
MEAN_LINE_BYTES = 3300


def gen(binary, args):
    out = subprocess.run([binary, "gen", *args], check=True, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    return out.stdout.splitlines(keepends=True)


def latency(binary, args, lines, pace):
    """Feeds `lines` one every `pace` seconds; returns (latencies in ms, outputs seen while the
    input was open). The i-th output line answers the i-th input line."""
    proc = subprocess.Popen([binary, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    arrivals = []

    def read():
        for _ in proc.stdout:
            arrivals.append(time.monotonic())

    reader = threading.Thread(target=read)
    reader.start()
    written = []
    for line in lines:
        written.append(time.monotonic())
        proc.stdin.write(line)
        proc.stdin.flush()
        time.sleep(max(0.0, written[-1] + pace - time.monotonic()))
    # One more pace for the last line, then the input ends.
    time.sleep(pace)
    closed = time.monotonic()
    open_count = sum(1 for a in arrivals if a < closed)
    proc.stdin.close()
    reader.join()
    proc.wait()
    if len(arrivals) != len(lines):
        sys.exit(f"{args}: {len(arrivals)} outputs for {len(lines)} lines")
    return [(a - w) * 1000 for a, w in zip(arrivals, written)], open_count


def timed(cmd):
    """Runs `cmd` (shell); returns (wall seconds, CPU seconds of every process it ran)."""
    seconds, usage = run_timed(cmd)
    return seconds, usage.ru_utime + usage.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "rdq-envelope"))
    ap.add_argument("--baseline", help="another binary (say, main's release build), measured "
                    "the same way, interleaved")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--lines", type=int, default=50)
    ap.add_argument("--pace", type=float, default=0.2)
    ap.add_argument("--corpus", default=os.path.join(ROOT, "target", "throughput",
                                                     "gen-500mb.jsonl"))
    ap.add_argument("--skip-throughput", action="store_true")
    ap.add_argument("--skip-latency", action="store_true")
    args = ap.parse_args()
    binaries = [("ours", args.bin)] + ([("baseline", args.baseline)] if args.baseline else [])

    if not args.skip_latency:
        valid = gen(args.bin, ["--count", str(args.lines), "--seed", "1"])
        invalid = gen(args.bin, ["--count", str(args.lines), "--seed", "1", "--invalid-rate", "1"])
        cases = [
            ("filter -q (valid lines)", ["filter", "-q"], valid),
            ("validate -q -o - --format json (invalid lines)",
             ["validate", "-q", "-o", "-", "--format", "json"], invalid),
            ("filter -q --line-buffered (valid lines)", ["filter", "-q", "--line-buffered"], valid),
        ]
        print(f"latency: {args.lines} lines, one every {args.pace * 1000:.0f} ms, pipe kept open")
        for name, binary in binaries:
            for case, cmd, lines in cases:
                ms, open_count = latency(binary, cmd, lines, args.pace)
                ms_sorted = sorted(ms)
                p90 = ms_sorted[int(0.9 * (len(ms) - 1))]
                print(f"  {name:8} {case:48} median {statistics.median(ms):8.1f} ms  "
                      f"p90 {p90:8.1f} ms  max {max(ms):8.1f} ms  "
                      f"{open_count}/{len(lines)} out while the input was open", flush=True)

    if args.skip_throughput:
        return
    corpus = args.corpus
    if not os.path.exists(corpus):
        os.makedirs(os.path.dirname(corpus), exist_ok=True)
        count = 500 * 1_000_000 // MEAN_LINE_BYTES
        print(f"generating {corpus} ({count} lines)", flush=True)
        subprocess.run(f"{args.bin} gen --count {count} --seed 1 --invalid-rate 0.01 -o {corpus}",
                       shell=True, check=True)
    size = os.path.getsize(corpus)
    runs = {
        "validate -j2, file": "{b} validate -q -j2 {c}",
        "validate -j2, cat |": "cat {c} | {b} validate -q -j2",
        "filter -j2, file": "{b} filter -q -j2 " + FILTER + " {c}",
        "filter -j2, cat |": "cat {c} | {b} filter -q -j2 " + FILTER,
    }
    print(f"throughput: {corpus} ({size / 1e6:.0f} MB), {args.rounds} interleaved rounds, "
          "output to /dev/null", flush=True)
    seconds = {(run, name): [] for run in runs for name, _ in binaries}
    cpu = {(run, name): [] for run in runs for name, _ in binaries}
    for round_ in range(args.rounds):
        order = binaries if round_ % 2 == 0 else binaries[::-1]
        for run, cmd in runs.items():
            for name, binary in order:
                wall, used = timed(cmd.format(b=binary, c=corpus))
                seconds[(run, name)].append(wall)
                cpu[(run, name)].append(used)
        print(f"  round {round_ + 1} done", flush=True)
    # MB/s of the median wall time; and the median CPU time (the tool's and cat's), which the
    # machine's other load disturbs less than the wall time.
    for run in runs:
        line = f"  {run:20}"
        rates, used = {}, {}
        for name, _ in binaries:
            rates[name] = size / statistics.median(seconds[(run, name)]) / 1e6
            used[name] = statistics.median(cpu[(run, name)])
            line += f"  {name} {rates[name]:5.0f} MB/s, {used[name]:.3f} s CPU"
        if "baseline" in rates:
            line += (f"  ours/baseline: MB/s {rates['ours'] / rates['baseline']:.3f}, "
                     f"CPU {used['ours'] / used['baseline']:.3f}")
        print(line, flush=True)


if __name__ == "__main__":
    main()
