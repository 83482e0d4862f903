#!/usr/bin/env python3
"""The throughput script (run it through benches/throughput.sh).

Generates a `gen` corpus (default about 500 MB) and its zstd copy, and a corpus of long stack
traces (`gen --stack-bytes`, default about 200 MB of 16 KB stacks), then measures, in one run
and interleaved round by round (the machines are noisy: the medians are reported):

  cat, wc -l                      reading the bytes at all
  bare_parse -j1 / -j2            simd-json's bare tape parse of every line (the baseline)
  validate -j1 / -j2              the whole pipeline
  migrate 1->2, 2->1, 2->2        splicing migrations (1->2 on a version 1 corpus), identity
  filter, stats -j1 / -j2         the DLQ commands, to set beside validate (goal: 0.90 of it)
  redrive -j2                     beside validate -j2
  triage -j2                      stats --by fingerprint, filter --where (cheap predicates
                                  keep about 10% for the expression), redrive --rate, dedupe
                                  --keep first / newest, sample: each beside validate -j2
  export csv / parquet -j2        export's default columns, beside validate -j2 (goal for CSV:
                                  0.5 of it), with their peak RSS
  convert --to/--from proto -j1/-j2  JSON Lines to length-delimited protobuf (MB/s of JSON
                                  in) and back (MB/s of JSON out; the stream made once from the
                                  corpus), each beside validate at the same -j
  show, ID near the front / last  show stops reading at its match (seconds, not MB/s)
  import chokaq -j1 / -j2         migrate --from chokaq on gen --format chokaq rows
  zstd -dc, validate -j2 on .zst  decompression, alone and under the pipeline (one frame)
  seekable .zst                   the corpus as this tool writes it (gen -o X.zst: 4 MiB frames
                                  and a seek table): zstd -dc and pzstd -d -p 2 of it, validate
                                  -j1 / -j2 (frame groups decoded on the workers), migrate -j1 /
                                  -j2 .zst -> .zst; and pzstd's own file (pzstd -p 2), by pzstd
                                  -d -p 2 and by validate -j2
  validate -j2, one reader        RDQ_ENVELOPE_READER=stream: the plain file read by one thread,
                                  as before the workers read their own ranges
  jq select(.status=="DEAD")      for scale, on a 50 MB slice
  bare parse, validate -j1 / -j2  on the stacks corpus: strings of KBs, a \\n\\t pair per frame

Each figure is MB/s of the decompressed corpus, with its ratio to the bare parse of the same
corpus at the same thread count (-j1 figures to bare -j1, -j2 to bare -j2; single-threaded
tools to bare -j1). Then the peak RSS of `validate -j2` on the corpora, and on 2 GB and 10 GB
streamed through a pipe from `gen` (skip those with --no-big).

With --callgrind, also the instructions per input byte (valgrind's callgrind, on a 5 MB slice
of each corpus) of the bare parse, validate and migrate 2->1, all -j1: a count that noise does
not change, to tell a real change from a noisy machine. --quick (50 MB corpora, 3 rounds, no
big runs) is for fast iteration. A compact table of the main figures ends the output.
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
VALGRIND = "/usr/bin/valgrind"


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=True, check=True, **kw)


def run_timed(cmd):
    """Runs `cmd` (shell) with output discarded; returns (seconds, its resource usage). The
    usage is the process's own (wait4), or for a pipeline its processes'. benches/latency.py
    times its runs with this too."""
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
    return seconds, usage


def timed(cmd):
    """Runs `cmd` (shell) with output discarded; returns (seconds, peak RSS in KiB). The peak
    is the process's own, or for a pipeline the largest of its processes."""
    seconds, usage = run_timed(cmd)
    return seconds, usage.ru_maxrss


# A selective filter: the predicates every line is checked against, few lines kept.
FILTER = "--status DEAD --error-type 'java.net.*' --min-attempts 2"
# --where behind cheap predicates that pass about 10% of gen lines (one queue of six, three or
# more attempts), as an operator narrows first: the jq expression runs on those only.
WHERE = ("--queue billing.invoices --min-attempts 3 "
         "--where '.attempts[-1].error.type // \"\" | test(\"Timeout|Connect\")'")


def copy_lines(source, path, nbytes):
    """Writes the first whole lines of `source` (a binary file object) to `path`, until at
    least `nbytes` bytes; through a temporary file, so an interrupted run leaves no short copy
    behind for the next one to trust."""
    written = 0
    with open(path + ".tmp", "wb") as out:
        for line in source:
            out.write(line)
            written += len(line)
            if written >= nbytes:
                break
    os.replace(path + ".tmp", path)


def gen_to_size(path, nbytes, options):
    """`gen OPTIONS` cut to about `nbytes` at a line end, cached at `path`: for corpora whose
    mean line size depends on the options (gen stops quietly when its pipe closes)."""
    if os.path.exists(path):
        return
    print(f"generating {path}", flush=True)
    proc = subprocess.Popen(f"{BIN} gen --count 1000000000 {options}", shell=True,
                            stdout=subprocess.PIPE)
    copy_lines(proc.stdout, path, nbytes)
    proc.stdout.close()
    if proc.wait() != 0:
        sys.exit(f"gen {options} failed")


def callgrind_instructions(cmd, out_file):
    """The instructions `cmd` (a command line) executes, all threads, by callgrind:
    the `summary:` (or `totals:`) line of its output file."""
    timed(f"{VALGRIND} --tool=callgrind --collect-atstart=yes --callgrind-out-file={out_file} "
          f"-q {cmd}")
    with open(out_file) as f:
        for line in f:
            found = re.match(r"(summary|totals):\s+(\d+)", line)
            if found:
                return int(found.group(2))
    sys.exit(f"no summary line in {out_file}")


def callgrind_per_byte(args, corpora):
    """Instructions per input byte, by callgrind, of the bare parse, validate and migrate 2->1
    (all -j1) on a slice of each corpus (name -> path): {(corpus name, run): Ir per byte}."""
    if not os.access(VALGRIND, os.X_OK):
        sys.exit(f"--callgrind needs {VALGRIND}")
    per_byte = {}
    for corpus_name, corpus in corpora.items():
        slice_path = f"{corpus[:-len('.jsonl')]}-slice{args.callgrind_mb}mb.jsonl"
        if not os.path.exists(slice_path):
            with open(corpus, "rb") as f:
                copy_lines(f, slice_path, args.callgrind_mb * 1_000_000)
        nbytes = os.path.getsize(slice_path)
        for run, cmd in (
            ("bare parse", f"{BARE} {slice_path} 1"),
            ("validate", f"{BIN} validate -q -j1 {slice_path}"),
            ("migrate 2->1", f"{BIN} migrate -q -j1 --to 1 {slice_path}"),
        ):
            out_file = os.path.join(args.dir, "callgrind.out")
            per_byte[(corpus_name, run)] = callgrind_instructions(cmd, out_file) / nbytes
            print(f"callgrind {run} on {corpus_name}: {per_byte[(corpus_name, run)]:.2f} Ir/B",
                  file=sys.stderr, flush=True)
    return per_byte


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
    ap.add_argument("--mb", type=int, help="corpus size in MB (default 500; --quick: 50)")
    ap.add_argument("--stack-mb", type=int,
                    help="stacks corpus size in MB (default 200; --quick: 50)")
    ap.add_argument("--stack-bytes", type=int, default=16384,
                    help="the stacks corpus's gen --stack-bytes (default 16384)")
    ap.add_argument("--rounds", type=int, help="interleaved rounds (default 5; --quick: 3)")
    ap.add_argument("--dir", default=os.path.join(ROOT, "target", "throughput"))
    ap.add_argument("--no-big", action="store_true", help="skip the 2 GB and 10 GB RSS runs")
    ap.add_argument("--quick", action="store_true",
                    help="fast iteration: 50 MB corpora, 3 rounds, no big runs")
    ap.add_argument("--callgrind", action="store_true",
                    help="also count instructions per byte with callgrind on slices")
    ap.add_argument("--callgrind-mb", type=int, default=5,
                    help="the slices' size in MB for --callgrind (default 5)")
    ap.add_argument("--invalid-rate", default="0.01")
    ap.add_argument("--baseline", help="another rdq-envelope binary (say, the main branch's "
                    "release build): each run of ours is also run with it, interleaved, and "
                    "the table gives ours / baseline")
    ap.add_argument("--only", help="comma-separated: run only the runs whose names contain one "
                    "of these (and the bare parses)")
    args = ap.parse_args()
    # --quick changes the defaults only: sizes and rounds given beside it still count.
    quick = args.quick
    args.mb = args.mb or (50 if quick else 500)
    args.stack_mb = args.stack_mb or (50 if quick else 200)
    args.rounds = args.rounds or (3 if quick else 5)
    args.no_big = args.no_big or quick

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
    # The same lines as this tool writes them (gen is deterministic): seekable, 4 MiB frames.
    seekable = os.path.join(args.dir, f"gen-{args.mb}mb-seekable.jsonl.zst")
    if not os.path.exists(seekable):
        sh(f"{BIN} gen -q --count {count} --seed 1 --invalid-rate {args.invalid_rate} -o {seekable}")
    pzstd = shutil.which("pzstd")
    pz = os.path.join(args.dir, f"gen-{args.mb}mb-pzstd.jsonl.zst")
    if pzstd and not os.path.exists(pz):
        sh(f"pzstd -q -p 2 -3 -f {corpus} -o {pz}")
    migrated = os.path.join(args.dir, "migrated.jsonl.zst")
    slice_ = os.path.join(args.dir, "slice-50mb.jsonl")
    if not os.path.exists(slice_):
        # jq stops at the first line it cannot parse: give it the valid lines only.
        sh(f"head -n {50_000_000 // MEAN_LINE_BYTES} {corpus} | "
           f"{BIN} validate -q --valid-out {slice_} -o /dev/null || test $? -eq 1")
    # Long stack traces: lines of tens of KB, mostly strings, with a \n\t escape pair in every
    # frame (about 100 bytes): the string scanning and unescaping that the main corpus hardly has.
    stacks = os.path.join(args.dir, f"gen-stacks{args.stack_bytes}-{args.stack_mb}mb.jsonl")
    gen_to_size(stacks, args.stack_mb * 1_000_000,
                f"--seed 1 --stack-bytes {args.stack_bytes} --invalid-rate {args.invalid_rate}")
    # convert --from proto reads the corpus's valid lines as a protobuf stream; its figure is
    # MB/s of the JSON it writes (the canonical lines, which gen's lines are).
    proto = os.path.join(args.dir, f"gen-{args.mb}mb.pb")
    proto_json = os.path.join(args.dir, f"gen-{args.mb}mb-from-proto.jsonl")
    if not os.path.exists(proto_json):
        sh(f"{BIN} convert -q --to proto {corpus} -o {proto} || test $? -eq 1")
        sh(f"{BIN} convert -q --from proto {proto} -o {proto_json}")
    proto_size = os.path.getsize(proto)
    proto_json_size = os.path.getsize(proto_json)
    size = os.path.getsize(corpus)
    zsize = os.path.getsize(zst)
    slice_size = os.path.getsize(slice_)
    stacks_size = os.path.getsize(stacks)
    stacks_lines = sum(1 for _ in open(stacks, "rb"))

    v = f"{BIN} validate -q"
    front_id, last_id = line_id(corpus, 10), line_id(corpus, -1)
    def bare(j):
        return f"bare parse -j{j}"

    def bare_stacks(j):
        return f"bare parse stacks -j{j}"

    runs = [
        # name, command, bytes it covers, the bare parse it is compared with
        ("cat", f"cat {corpus}", size, bare(1)),
        ("wc -l", f"wc -l {corpus}", size, bare(1)),
        (bare(1), f"{BARE} {corpus} 1", size, bare(1)),
        (bare(2), f"{BARE} {corpus} 2", size, bare(2)),
        ("validate -j1", f"{v} -j1 {corpus}", size, bare(1)),
        ("validate -j2", f"{v} -j2 {corpus}", size, bare(2)),
        ("migrate 1->2 -j1", f"{BIN} migrate -q -j1 --to 2 {corpus_v1}", size_v1, bare(1)),
        ("migrate 1->2 -j2", f"{BIN} migrate -q -j2 --to 2 {corpus_v1}", size_v1, bare(2)),
        ("migrate 2->1 -j2", f"{BIN} migrate -q -j2 --to 1 {corpus}", size, bare(2)),
        ("migrate 2->2 -j2", f"{BIN} migrate -q -j2 --to 2 {corpus}", size, bare(2)),
        ("filter -j1", f"{BIN} filter -q -j1 {FILTER} {corpus}", size, bare(1)),
        ("filter -j2", f"{BIN} filter -q -j2 {FILTER} {corpus}", size, bare(2)),
        ("stats -j1", f"{BIN} stats -q -j1 {corpus}", size, bare(1)),
        ("stats -j2", f"{BIN} stats -q -j2 {corpus}", size, bare(2)),
        ("show, ID on line 10", f"{BIN} show -j2 {front_id} {corpus}", size, bare(2)),
        ("show, ID on the last line", f"{BIN} show -j2 {last_id} {corpus}", size, bare(2)),
        ("redrive -j2", f"{BIN} redrive -q -j2 --at 2026-05-01T12:00:00.000Z {corpus}", size,
         bare(2)),
        ("stats --by fingerprint -j2", f"{BIN} stats -q -j2 --by fingerprint {corpus}", size,
         bare(2)),
        ("filter --where -j2", f"{BIN} filter -q -j2 {WHERE} {corpus}", size, bare(2)),
        ("redrive --rate -j2",
         f"{BIN} redrive -q -j2 --at 2026-05-01T12:00:00.000Z --rate 500/s {corpus}", size,
         bare(2)),
        ("dedupe first -j2", f"{BIN} dedupe -q -j2 --keep first {corpus}", size, bare(2)),
        ("dedupe newest -j2", f"{BIN} dedupe -q -j2 --keep newest {corpus}", size, bare(2)),
        ("sample 1000 -j2", f"{BIN} sample 1000 -q -j2 --seed 1 {corpus}", size, bare(2)),
        ("export csv -j2", f"{BIN} export -q -j2 {corpus}", size, bare(2)),
        ("export parquet -j2", f"{BIN} export -q -j2 --format parquet {corpus}", size, bare(2)),
        ("convert to proto -j1", f"{BIN} convert -q -j1 --to proto {corpus}", size, bare(1)),
        ("convert to proto -j2", f"{BIN} convert -q -j2 --to proto {corpus}", size, bare(2)),
        ("convert from proto -j1", f"{BIN} convert -q -j1 --from proto {proto}", proto_json_size,
         bare(1)),
        ("convert from proto -j2", f"{BIN} convert -q -j2 --from proto {proto}", proto_json_size,
         bare(2)),
        ("import chokaq -j1", f"{BIN} migrate -q -j1 --from chokaq {corpus_chokaq}", size_chokaq,
         bare(1)),
        ("import chokaq -j2", f"{BIN} migrate -q -j2 --from chokaq {corpus_chokaq}", size_chokaq,
         bare(2)),
        ("zstd -dc", f"zstd -dc {zst}", size, bare(1)),
        ("validate -j2 .zst", f"{v} -j2 {zst}", size, bare(2)),
        ("validate -j2, one reader", f"env RDQ_ENVELOPE_READER=stream {v} -j2 {corpus}", size,
         bare(2)),
        ("zstd -dc seekable", f"zstd -dc {seekable}", size, bare(1)),
        ("pzstd -d -p 2 seekable", f"pzstd -dc -p 2 {seekable}", size, bare(2)),
        ("validate -j1 seekable", f"{v} -j1 {seekable}", size, bare(1)),
        ("validate -j2 seekable", f"{v} -j2 {seekable}", size, bare(2)),
        ("validate -j2 seekable, one reader",
         f"env RDQ_ENVELOPE_READER=stream {v} -j2 {seekable}", size, bare(2)),
        ("migrate -j1 seekable -> .zst", f"{BIN} migrate -q -j1 --to 1 {seekable} -o {migrated}",
         size, bare(1)),
        ("migrate -j2 seekable -> .zst", f"{BIN} migrate -q -j2 --to 1 {seekable} -o {migrated}",
         size, bare(2)),
        ("pzstd -d -p 2 pzstd's", f"pzstd -dc -p 2 {pz}", size, bare(2)),
        ("validate -j2 pzstd's", f"{v} -j2 {pz}", size, bare(2)),
        (bare_stacks(1), f"{BARE} {stacks} 1", stacks_size, bare_stacks(1)),
        (bare_stacks(2), f"{BARE} {stacks} 2", stacks_size, bare_stacks(2)),
        ("validate stacks -j1", f"{v} -j1 {stacks}", stacks_size, bare_stacks(1)),
        ("validate stacks -j2", f"{v} -j2 {stacks}", stacks_size, bare_stacks(2)),
        ("jq DEAD (50 MB)", f"jq -c 'select(.status==\"DEAD\")' {slice_}", slice_size, bare(1)),
    ]
    if not shutil.which("jq"):
        runs.pop()
    if not pzstd:
        runs = [r for r in runs if "pzstd" not in r[0]]
    if args.only:
        wanted = args.only.split(",") + ["bare parse"]
        runs = [r for r in runs if any(w in r[0] for w in wanted)]
    if args.baseline:
        # Each run of ours is followed by the baseline's, in every round: the same load.
        twinned = []
        for name, cmd, nbytes, base in runs:
            twinned.append((name, cmd, nbytes, base))
            if BIN in cmd:
                twinned.append((f"{name} [baseline]", cmd.replace(BIN, args.baseline), nbytes,
                                base))
        runs = twinned
    seconds = {name: [] for name, *_ in runs}
    peaks = {name: [] for name, *_ in runs}
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
    per_byte = callgrind_per_byte(args, {"main": corpus, "stacks": stacks}) if args.callgrind else {}

    mbps = {}
    for name, cmd, nbytes, _ in runs:
        mbps[name] = nbytes / 1e6 / statistics.median(seconds[name])
    print()
    print(f"corpus: {corpus}: {size / 1e6:.0f} MB, {count} lines; zstd {zsize / 1e6:.0f} MB "
          f"(ratio {size / zsize:.2f}); {args.rounds} interleaved rounds, medians")
    print(f"stacks corpus: {stacks}: {stacks_size / 1e6:.0f} MB, {stacks_lines} lines "
          f"({stacks_size / stacks_lines / 1e3:.0f} KB a line, stacks of {args.stack_bytes} bytes)")
    print(f"{'run':<28} {'MB/s':>9}  {'x bare parse':>12}")
    for name, cmd, nbytes, base in runs:
        if name.startswith("show"):
            continue  # seconds, below
        print(f"{name:<28} {mbps[name]:9.0f}  {mbps[name] / mbps[base]:12.2f}")
    def ratio(a, b):
        if a in mbps and b in mbps:
            print(f"{a} / {b}: {mbps[a] / mbps[b]:.2f}")
    if args.baseline:
        print()
        print(f"against the baseline {args.baseline} (interleaved, medians)")
        print(f"{'run':<28} {'MB/s':>9} {'baseline':>9}  {'ours / baseline':>15}")
        for name, *_ in runs:
            twin = f"{name} [baseline]"
            if twin in mbps:
                print(f"{name:<28} {mbps[name]:9.0f} {mbps[twin]:9.0f}  "
                      f"{mbps[name] / mbps[twin]:15.3f}")
        print()
    ratio("validate -j2 .zst", "zstd -dc")
    for a, b in (("validate -j2 seekable", "zstd -dc seekable"),
                 ("validate -j2 seekable", "pzstd -d -p 2 seekable"),
                 ("validate -j2 seekable", "pzstd -d -p 2 pzstd's"),
                 ("validate -j2 pzstd's", "pzstd -d -p 2 pzstd's"),
                 ("validate -j2 seekable", "validate -j1 seekable"),
                 ("validate -j2 seekable", "validate -j2 seekable, one reader"),
                 ("migrate -j2 seekable -> .zst", "migrate -j1 seekable -> .zst"),
                 ("migrate -j2 seekable -> .zst", "zstd -dc seekable"),
                 ("validate -j2", "validate -j2, one reader"),
                 ("validate -j2", "validate -j1")):
        ratio(a, b)
    for j in (1, 2):
        ratio(f"filter -j{j}", f"validate -j{j}")
        ratio(f"stats -j{j}", f"validate -j{j}")
        ratio(f"validate stacks -j{j}", f"validate -j{j}")
    for name in ("redrive -j2", "stats --by fingerprint -j2", "filter --where -j2",
                 "redrive --rate -j2", "dedupe first -j2", "dedupe newest -j2",
                 "sample 1000 -j2"):
        ratio(name, "validate -j2")
    for j in (1, 2):
        ratio(f"convert to proto -j{j}", f"validate -j{j}")
        ratio(f"convert from proto -j{j}", f"validate -j{j}")
    for j in (1, 2):
        name = f"convert from proto -j{j}"
        if name in seconds:
            print(f"{name}: {proto_size / 1e6 / statistics.median(seconds[name]):.0f} MB/s of "
                  f"protobuf in ({proto_size / 1e6:.0f} MB, {proto_size / proto_json_size:.2f} "
                  f"of the JSON)")
    ratio("export csv -j2", "validate -j2")
    ratio("export parquet -j2", "validate -j2")
    for name in ("show, ID on line 10", "show, ID on the last line"):
        if name in seconds:
            print(f"{name}: {statistics.median(seconds[name]):.3f} s")
    for name in ("import chokaq -j1", "import chokaq -j2"):
        if name not in seconds:
            continue
        rows_per_s = rows_chokaq / statistics.median(seconds[name])
        print(f"{name}: {rows_per_s:,.0f} rows/s ({rows_chokaq} rows, {size_chokaq / 1e6:.0f} MB)")
    for name in ("validate -j1", "validate -j2", "validate -j2 .zst", "validate -j2, one reader",
                 "validate -j1 seekable", "validate -j2 seekable",
                 "validate -j2 seekable, one reader", "migrate -j2 seekable -> .zst",
                 "validate -j2 pzstd's", "validate stacks -j2",
                 "dedupe first -j2", "dedupe newest -j2", "export csv -j2",
                 "export parquet -j2"):
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

    summary_table(runs, mbps, per_byte, args)


# The compact table's rows: its label, the timed runs on the main and the stacks corpus, and the
# callgrind run (None where there is none).
SUMMARY_ROWS = [
    ("bare parse -j1", "bare parse -j1", "bare parse stacks -j1", "bare parse"),
    ("bare parse -j2", "bare parse -j2", "bare parse stacks -j2", None),
    ("validate -j1", "validate -j1", "validate stacks -j1", "validate"),
    ("validate -j2", "validate -j2", "validate stacks -j2", None),
    ("migrate 1->2 -j1", "migrate 1->2 -j1", None, None),
    ("migrate 1->2 -j2", "migrate 1->2 -j2", None, None),
    ("migrate 2->1 -j1", None, None, "migrate 2->1"),
    ("migrate 2->1 -j2", "migrate 2->1 -j2", None, None),
]


def summary_table(runs, mbps, per_byte, args):
    """The main figures in one place: MB/s with the ratio to the bare parse of the same corpus
    at the same -j, and with --callgrind instructions per input byte with the ratio to the bare
    parse's ("-": not measured)."""
    def cell(value, base, digits):
        if value is None or base is None:
            return f"{'-':>12}{'-':>7}"
        return f"{value:12.{digits}f}{value / base:7.2f}"

    bases = {name: base for name, _, _, base in runs}
    print()
    print(f"summary: medians of {args.rounds} rounds, MB/s and x the bare parse of the corpus at "
          f"the same -j" + (f"; Ir/B: instructions per input byte (callgrind, -j1, "
                            f"{args.callgrind_mb} MB slices), x the bare parse's"
                            if per_byte else ""))
    header = f"{'':<18}{'main MB/s':>12}{'x bare':>7}{'stacks MB/s':>12}{'x bare':>7}"
    if per_byte:
        header += f"{'main Ir/B':>12}{'x bare':>7}{'stacks Ir/B':>12}{'x bare':>7}"
    print(header)
    for label, main, stacks, callgrind in SUMMARY_ROWS:
        if main not in mbps and stacks not in mbps and (callgrind is None or not per_byte):
            continue  # a callgrind row without --callgrind, or runs left out by --only
        row = f"{label:<18}" + cell(mbps.get(main), mbps.get(bases.get(main)), 0)
        row += cell(mbps.get(stacks), mbps.get(bases.get(stacks)), 0)
        if per_byte:
            for corpus in ("main", "stacks"):
                row += cell(per_byte.get((corpus, callgrind)),
                            per_byte.get((corpus, "bare parse")), 2)
        print(row)


if __name__ == "__main__":
    main()
