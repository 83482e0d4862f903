#!/usr/bin/env python3
"""Stage 1's classifiers against each other: `validate -j1` on one `gen` corpus with each
`RDQ_ENVELOPE_SIMD` this machine runs, interleaved round by round (the machines are noisy:
medians are reported), as MB/s and as a ratio to the portable classifier.

    cargo build --release --bin rdq-envelope
    python3 benches/classifiers.py [--mb 1000] [--rounds 5] [--bin target/release/rdq-envelope]

The corpus is kept as target/classifiers/gen-MB.jsonl for the next run. The names come from
`--version`'s `simd:` line, so the same script measures `neon` against `portable` on aarch64.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=1000, help="corpus size in MB (default 1000)")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    ap.add_argument("--bin", default="target/release/rdq-envelope")
    args = ap.parse_args()
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

    version = subprocess.run([args.bin, "--version"], capture_output=True, text=True,
                             check=True).stdout
    simd = next(line for line in version.splitlines() if line.startswith("simd: "))
    # `simd: avx2 (+avx2 ...; also sse4.2, portable)`: the one in use, then the others.
    names = [simd.split()[1]] + re.findall(r"also (.*)\)", simd)[0].split(", ")
    print(simd)

    os.makedirs("target/classifiers", exist_ok=True)
    corpus = f"target/classifiers/gen-{args.mb}.jsonl"
    if not os.path.exists(corpus):
        subprocess.run([args.bin, "gen", "-q", "--seed", "1", "--size", f"{args.mb}MB",
                        "-o", corpus + ".tmp"], check=True)
        os.replace(corpus + ".tmp", corpus)
    size = os.path.getsize(corpus)

    seconds = {name: [] for name in names}
    for r in range(args.rounds):
        for name in names:
            env = dict(os.environ, RDQ_ENVELOPE_SIMD=name)
            start = time.perf_counter()
            done = subprocess.run([args.bin, "validate", "-q", "-j1", corpus], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            seconds[name].append(time.perf_counter() - start)
            # validate exits 1 when some line was rejected: only 2 and up is a failure.
            if done.returncode not in (0, 1):
                sys.exit(f"validate failed ({done.returncode}): {done.stderr.decode()}")
        print(f"round {r + 1}/{args.rounds}: " + ", ".join(
            f"{name} {seconds[name][-1]:.2f} s" for name in names), flush=True)

    portable = statistics.median(seconds["portable"])
    print(f"validate -q -j1 on {size / 1e6:.0f} MB of gen, {args.rounds} interleaved rounds, "
          "medians:")
    for name in names:
        median = statistics.median(seconds[name])
        low, high = min(seconds[name]), max(seconds[name])
        print(f"  {name:9} {median:6.2f} s ({low:.2f}-{high:.2f})  {size / 1e6 / median:7.0f} MB/s"
              f"  {portable / median:5.2f}x portable")


if __name__ == "__main__":
    main()
