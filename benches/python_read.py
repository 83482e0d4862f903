#!/usr/bin/env python3
"""The Python module's reader against the others, on one JSON Lines file (docs/performance.md,
"Python"): each contender in a fresh process, in interleaved rounds, with its wall time, MB/s
of JSON and peak RSS; medians, and each figure's ratio to `rdq_envelope.read` in the same
rounds.

    python3 benches/python_read.py FILE [--rounds N]

Run it with the Python of an environment that has the wheel installed (pip install .), and
pyarrow, polars and DuckDB. The contenders:

- rdq read -> pyarrow: `pyarrow.table(rdq_envelope.read(FILE))`, every rule checked, the
  default columns of `export`;
- rdq export parquet: the command, `rdq-envelope export --format parquet` (the same rows,
  compressed into a file);
- polars read_ndjson: `polars.read_ndjson(FILE, ignore_errors=True)`, every member, no rule;
- duckdb read_json: `duckdb.sql("FROM read_json(FILE, ignore_errors=true)").arrow()`, every
  member, no rule.

polars and DuckDB are asked to skip what they cannot read: the held corpus has 1% defective
lines, and without it both stop at the first.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

CONTENDERS = {
    "rdq read -> pyarrow": (
        "import pyarrow as pa, rdq_envelope\n"
        "t = pa.table(rdq_envelope.read(FILE))\n"
        "print(t.num_rows)"
    ),
    "rdq export parquet": None,  # the command, below
    "polars read_ndjson": (
        "import polars as pl\n"
        "f = pl.read_ndjson(FILE, ignore_errors=True, infer_schema_length=None)\n"
        "print(f.height)"
    ),
    "duckdb read_json": (
        "import duckdb\n"
        "t = duckdb.sql(f\"FROM read_json('{FILE}', format='newline_delimited', "
        "ignore_errors=true, maximum_object_size=104857600)\").arrow()\n"
        "print(t.num_rows)"
    ),
}


def run(argv: list[str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS in MiB and the output of one process."""
    started = time.monotonic()
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.monotonic() - started
    out = child.stdout.read().decode().strip() if child.stdout else ""
    err = child.stderr.read().decode().strip() if child.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"{argv[:3]}... failed ({code}): {err[-500:]}")
    return elapsed, usage.ru_maxrss / 1024, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    size_mb = os.path.getsize(args.file) / 1e6
    command = shutil.which("rdq-envelope", path=os.path.dirname(sys.executable)) or "rdq-envelope"
    out_dir = tempfile.mkdtemp(prefix="rdq-python-read-")
    parquet = os.path.join(out_dir, "rows.parquet")
    times: dict[str, list[float]] = {name: [] for name in CONTENDERS}
    peaks: dict[str, list[float]] = {name: [] for name in CONTENDERS}
    outputs: dict[str, str] = {}
    for _ in range(args.rounds):
        for name, code in CONTENDERS.items():
            if code is None:
                argv = [command, "export", "-q", "--format", "parquet", "-o", parquet, args.file]
            else:
                argv = [sys.executable, "-c", f"FILE = {args.file!r}\n{code}"]
            elapsed, peak, out = run(argv)
            times[name].append(elapsed)
            peaks[name].append(peak)
            outputs[name] = out
    shutil.rmtree(out_dir, ignore_errors=True)
    base = statistics.median(times["rdq read -> pyarrow"])
    print(f"{args.file}: {size_mb:.0f} MB, {args.rounds} interleaved rounds, medians")
    print(f"{'contender':<22} {'s':>7} {'MB/s':>8} {'x rdq read':>11} {'peak RSS MiB':>13}  rows")
    for name in CONTENDERS:
        wall = statistics.median(times[name])
        print(
            f"{name:<22} {wall:7.2f} {size_mb / wall:8.0f} {base / wall:11.2f} "
            f"{statistics.median(peaks[name]):13.0f}  {outputs[name] or '-'}"
        )


if __name__ == "__main__":
    main()
