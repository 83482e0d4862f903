#!/usr/bin/env python3
"""The throughput script (run it through benches/throughput.sh).

Generates a `gen` corpus (default about 500 MB) and its zstd copy, then measures, in one run
and interleaved round by round (the machines are noisy: the medians are reported):

  cat, wc -l                      reading the bytes at all
  bare_parse -j1 / -j2            simd-json's bare tape parse of every line (the baseline)
  validate -j1 / -j2              the whole pipeline
  migrate 1->2, 2->1, 2->2        splicing migrations (1->2 on a version 1 corpus), identity
  filter, stats -j1 / -j2         the DLQ commands, to set beside validate (goal: 0.90 of it)
  redrive -j2                     beside validate -j2
  show, ID near the front / last  show stops reading at its match (seconds, not MB/s)
  import chokaq -j1 / -j2         migrate --from chokaq on gen --format chokaq rows
  zstd -dc, validate -j2 on .zst  decompression, alone and under the pipeline
  jq select(.status=="DEAD")      for scale, on a 50 MB slice

Each figure is MB/s of the decompressed corpus, with its ratio to the bare parse at the same
thread count (-j1 figures to bare -j1, -j2 to bare -j2; single-threaded tools to bare -j1).
Then the peak RSS of `validate -j2` on the corpus, and on 2 GB and 10 GB streamed through a
pipe from `gen` (skip those with --no-big).
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "rdq-envelope")
BARE = os.path.join(ROOT, "target", "release", "examples", "bare_parse")
MEAN_LINE_BYTES = 3300


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=True, check=True, **kw)


def timed(cmd):
    """Runs `cmd` (shell) with output discarded; returns (seconds, peak RSS in KiB). The peak
    is the process's own (wait4), or for a pipeline the largest of its processes."""
    start = time.perf_counter()
    proc = subprocess.Popen(["/bin/sh", "-c", cmd if "|" in cmd else f"exec {cmd}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    # validate exits 1 when some line was rejected: only 2 and up is a failure here.
    if code not in (0, 1):
        sys.exit(f"failed ({code}): {cmd}\n{stderr.decode(errors='replace')}")
    return seconds, usage.ru_maxrss


# A selective filter: the predicates every line is checked against, few lines kept.
FILTER = "--status DEAD --error-type 'java.net.*' --min-attempts 2"


def line_id(path, n):
    """The id of line n (1-based; -1: the last valid-looking line) of a gen corpus."""
    with open(path, "rb") as f:
        if n > 0:
            for _ in range(n - 1):
                f.readline()
            lines = [f.readline()]
        else:
            f.seek(max(0, os.path.getsize(path) - 1_000_000))
            lines = f.read().splitlines()[1:][::-1]
    for line in lines:
        found = re.search(rb'"id":"([0-9A-HJKMNP-TV-Z]{26})"', line)
        if found:
            return found.group(1).decode()
    sys.exit(f"no id found near line {n} of {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=500, help="corpus size in MB (default 500)")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    ap.add_argument("--dir", default=os.path.join(ROOT, "target", "throughput"))
    ap.add_argument("--no-big", action="store_true", help="skip the 2 GB and 10 GB RSS runs")
    ap.add_argument("--invalid-rate", default="0.01")
    ap.add_argument("--only", help="comma-separated: run only the runs whose names contain one "
                    "of these (and the bare parse)")
    args = ap.parse_args()

    os.makedirs(args.dir, exist_ok=True)
    corpus = os.path.join(args.dir, f"gen-{args.mb}mb.jsonl")
    count = args.mb * 1_000_000 // MEAN_LINE_BYTES
    if not os.path.exists(corpus):
        print(f"generating {corpus} ({count} lines)", flush=True)
        sh(f"{BIN} gen --count {count} --seed 1 --invalid-rate {args.invalid_rate} -o {corpus}")
    # migrate --to 2 needs version 1 input: the same corpus, written as version 1 by gen.
    corpus_v1 = os.path.join(args.dir, f"gen-{args.mb}mb-v1.jsonl")
    if not os.path.exists(corpus_v1):
        sh(f"{BIN} gen --count {count} --seed 1 --version 1 --invalid-rate {args.invalid_rate} -o {corpus_v1}")
    size_v1 = os.path.getsize(corpus_v1)
    # ChokaQ rows for the import (about 930 bytes a row).
    corpus_chokaq = os.path.join(args.dir, f"chokaq-{args.mb}mb.jsonl")
    if not os.path.exists(corpus_chokaq):
        sh(f"{BIN} gen --format chokaq --count {args.mb * 1_000_000 // 930} --seed 1 -o {corpus_chokaq}")
    size_chokaq = os.path.getsize(corpus_chokaq)
    rows_chokaq = sum(1 for _ in open(corpus_chokaq, "rb"))
    zst = corpus + ".zst"
    if not os.path.exists(zst):
        sh(f"zstd -q -T0 -3 -f {corpus} -o {zst}")
    slice_ = os.path.join(args.dir, "slice-50mb.jsonl")
    if not os.path.exists(slice_):
        # jq stops at the first line it cannot parse: give it the valid lines only.
        sh(f"head -n {50_000_000 // MEAN_LINE_BYTES} {corpus} | "
           f"{BIN} validate -q --valid-out {slice_} -o /dev/null || test $? -eq 1")
    size = os.path.getsize(corpus)
    zsize = os.path.getsize(zst)
    slice_size = os.path.getsize(slice_)

    v = f"{BIN} validate -q"
    front_id, last_id = line_id(corpus, 10), line_id(corpus, -1)
    runs = [
        # name, command, bytes it covers, threads of the bare parse it is compared with
        ("cat", f"cat {corpus}", size, 1),
        ("wc -l", f"wc -l {corpus}", size, 1),
        ("bare parse -j1", f"{BARE} {corpus} 1", size, 1),
        ("bare parse -j2", f"{BARE} {corpus} 2", size, 2),
        ("validate -j1", f"{v} -j1 {corpus}", size, 1),
        ("validate -j2", f"{v} -j2 {corpus}", size, 2),
        ("migrate 1->2 -j1", f"{BIN} migrate -q -j1 --to 2 {corpus_v1}", size_v1, 1),
        ("migrate 1->2 -j2", f"{BIN} migrate -q -j2 --to 2 {corpus_v1}", size_v1, 2),
        ("migrate 2->1 -j2", f"{BIN} migrate -q -j2 --to 1 {corpus}", size, 2),
        ("migrate 2->2 -j2", f"{BIN} migrate -q -j2 --to 2 {corpus}", size, 2),
        ("filter -j1", f"{BIN} filter -q -j1 {FILTER} {corpus}", size, 1),
        ("filter -j2", f"{BIN} filter -q -j2 {FILTER} {corpus}", size, 2),
        ("stats -j1", f"{BIN} stats -q -j1 {corpus}", size, 1),
        ("stats -j2", f"{BIN} stats -q -j2 {corpus}", size, 2),
        ("show, ID on line 10", f"{BIN} show -j2 {front_id} {corpus}", size, 2),
        ("show, ID on the last line", f"{BIN} show -j2 {last_id} {corpus}", size, 2),
        ("redrive -j2", f"{BIN} redrive -q -j2 --at 2026-05-01T12:00:00.000Z {corpus}", size, 2),
        ("import chokaq -j1", f"{BIN} migrate -q -j1 --from chokaq {corpus_chokaq}", size_chokaq, 1),
        ("import chokaq -j2", f"{BIN} migrate -q -j2 --from chokaq {corpus_chokaq}", size_chokaq, 2),
        ("zstd -dc", f"zstd -dc {zst}", size, 1),
        ("validate -j2 .zst", f"{v} -j2 {zst}", size, 2),
        ("jq DEAD (50 MB)", f"jq -c 'select(.status==\"DEAD\")' {slice_}", slice_size, 1),
    ]
    if not shutil.which("jq"):
        runs.pop()
    if args.only:
        wanted = args.only.split(",") + ["bare parse"]
        runs = [r for r in runs if any(w in r[0] for w in wanted)]
    seconds = {name: [] for name, *_ in runs}
    peaks = {name: [] for name, *_ in runs}
    bare_seconds = {}
    for r in range(args.rounds):
        for name, cmd, _, _ in runs:
            if name.startswith("bare parse"):
                out = subprocess.run(cmd, shell=True, capture_output=True, check=True).stdout.decode()
                fields = dict(kv.split("=") for kv in out.split()[1:])
                seconds[name].append(float(fields["seconds"]))
                continue
            s, peak = timed(cmd)
            seconds[name].append(s)
            peaks[name].append(peak)
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)

    mbps = {}
    for name, cmd, nbytes, _ in runs:
        mbps[name] = nbytes / 1e6 / statistics.median(seconds[name])
    print()
    print(f"corpus: {corpus}: {size / 1e6:.0f} MB, {count} lines; zstd {zsize / 1e6:.0f} MB "
          f"(ratio {size / zsize:.2f}); {args.rounds} interleaved rounds, medians")
    print(f"{'run':<20} {'MB/s':>9}  {'x bare parse':>12}")
    for name, cmd, nbytes, threads in runs:
        if name.startswith("show"):
            continue  # seconds, below
        base = mbps[f"bare parse -j{threads}"]
        print(f"{name:<20} {mbps[name]:9.0f}  {mbps[name] / base:12.2f}")
    def ratio(a, b):
        if a in mbps and b in mbps:
            print(f"{a} / {b}: {mbps[a] / mbps[b]:.2f}")
    ratio("validate -j2 .zst", "zstd -dc")
    for j in (1, 2):
        ratio(f"filter -j{j}", f"validate -j{j}")
        ratio(f"stats -j{j}", f"validate -j{j}")
    for name in ("show, ID on line 10", "show, ID on the last line"):
        if name in seconds:
            print(f"{name}: {statistics.median(seconds[name]):.3f} s")
    for name in ("import chokaq -j1", "import chokaq -j2"):
        if name not in seconds:
            continue
        rows_per_s = rows_chokaq / statistics.median(seconds[name])
        print(f"{name}: {rows_per_s:,.0f} rows/s ({rows_chokaq} rows, {size_chokaq / 1e6:.0f} MB)")
    for name in ("validate -j1", "validate -j2", "validate -j2 .zst"):
        if peaks.get(name):
            print(f"peak RSS {name}: {max(peaks[name]) / 1024:.0f} MiB")

    if not args.no_big:
        print()
        for gb in (2, 10):
            n = gb * 1_000_000_000 // MEAN_LINE_BYTES
            cmd = f"{BIN} gen --count {n} --seed 2 | {v} -j2 -o /dev/null"
            took, peak = timed(cmd)
            print(f"peak RSS validate -j2, {gb} GB through a pipe from gen: {peak / 1024:.0f} MiB "
                  f"({gb * 1000 / took:.0f} MB/s)", flush=True)


if __name__ == "__main__":
    main()
