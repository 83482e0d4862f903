#!/usr/bin/env python3
"""The Python module's reader against the others, on one JSON Lines file (docs/performance.md,
"Python"): each contender in a fresh process, in interleaved rounds, with its wall time, MB/s
of JSON and peak RSS; medians, and each figure's ratio to `rdq_envelope.read` (the same 7
columns) in the same rounds. The seconds are the read's own, timed inside the process after
its imports; the command's are its whole process.

    python3 benches/python_read.py FILE [--rounds N]

Run it with the Python of an environment that has the wheel installed (pip install .), and
pyarrow, polars and DuckDB. The contenders:

- rdq read: `pyarrow.table(rdq_envelope.read(FILE))`, every rule checked, the default columns
  of `export` (12, the last error's fingerprint among them), and the 7 top-level ones alone;
- rdq export parquet: the command, `rdq-envelope export --format parquet` (the same rows,
  compressed into a file);
- polars: `polars.read_ndjson(FILE, ignore_errors=True)`, every member, and with a schema of
  the 7 top-level members among export's columns; no rule checked;
- DuckDB: `duckdb.sql("FROM read_json(FILE, ignore_errors=true)").arrow()`, every member, and
  with `columns=` the same 7; no rule checked.

polars and DuckDB are asked to skip what they cannot read, but the held corpus has 1%
defective lines (cut-off JSON, Latin-1 bytes, ...) and both still stop at one: so each
contender runs on FILE and on its valid lines only (written once by `validate --valid-out`),
and a run that fails is shown as failed, with its error. polars also refuses a valid number
it cannot hold (`1e400`, which the corpus spells in an unknown member): the third table is the
valid lines with it respelled `1e300`, which all of them read.
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

# The top-level members among export's default columns, as polars and DuckDB are told them.
SCALARS = ["id", "queue", "handler_ref", "status", "attempt_count", "redrive_count", "created_at"]

# The seven top-level members among export's default columns, as every reader is asked them.
SEVEN_RDQ = "['id', 'queue', 'handler_ref', 'status', 'attempt_count', 'redrive_count', 'created_at']"
SEVEN_POLARS = (
    "{'id': pl.String, 'queue': pl.String, 'handler_ref': pl.String, 'status': pl.String, "
    "'attempt_count': pl.Int64, 'redrive_count': pl.Int64, 'created_at': pl.String}"
)
SEVEN_DUCKDB = (
    "{'id':'VARCHAR','queue':'VARCHAR','handler_ref':'VARCHAR','status':'VARCHAR',"
    "'attempt_count':'BIGINT','redrive_count':'BIGINT','created_at':'VARCHAR'}"
)
DUCKDB = (
    "import duckdb, time\n"
    "t0 = time.perf_counter()\n"
    "r = duckdb.sql(\"FROM read_json('\" + FILE + \"', format='newline_delimited', {columns}"
    "ignore_errors=true, maximum_object_size=104857600)\").arrow()\n"
    "t = r.read_all() if hasattr(r, 'read_all') else r\n"
    "print(t.num_rows, time.perf_counter() - t0)"
)

# Each prints its rows and the seconds of the read itself (after its imports).
CONTENDERS = {
    "rdq read, export's 12": (
        "import pyarrow as pa, rdq_envelope, time\n"
        "t0 = time.perf_counter()\n"
        "t = pa.table(rdq_envelope.read(FILE))\n"
        "print(t.num_rows, time.perf_counter() - t0)"
    ),
    "rdq read, 7 columns": (
        "import pyarrow as pa, rdq_envelope, time\n"
        "t0 = time.perf_counter()\n"
        f"t = pa.table(rdq_envelope.read(FILE, columns={SEVEN_RDQ}))\n"
        "print(t.num_rows, time.perf_counter() - t0)"
    ),
    "rdq export parquet": None,  # the command, below: the whole process
    "polars, every member": (
        "import polars as pl, time\n"
        "t0 = time.perf_counter()\n"
        "f = pl.read_ndjson(FILE, ignore_errors=True, infer_schema_length=None)\n"
        "print(f.height, time.perf_counter() - t0)"
    ),
    "polars, 7 columns": (
        "import polars as pl, time\n"
        "t0 = time.perf_counter()\n"
        f"f = pl.read_ndjson(FILE, schema={SEVEN_POLARS}, ignore_errors=True)\n"
        "print(f.height, time.perf_counter() - t0)"
    ),
    "duckdb, every member": DUCKDB.replace("{columns}", ""),
    "duckdb, 7 columns": DUCKDB.replace("{columns}", f"columns={SEVEN_DUCKDB}, "),
}


def run(argv: list[str], allowed: tuple[int, ...]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS in MiB and the output of one process (`failed: ...` when its
    status is not one of `allowed`)."""
    started = time.monotonic()
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.monotonic() - started
    out = child.stdout.read().decode().strip() if child.stdout else ""
    err = child.stderr.read().decode().strip() if child.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if code not in allowed:
        last = err.strip().splitlines()[-1] if err.strip() else f"status {code}"
        return elapsed, usage.ru_maxrss / 1024, f"failed: {last[:90]}"
    return elapsed, usage.ru_maxrss / 1024, out


def measure(file: str, rounds: int, command: str, out_dir: str) -> None:
    """Every contender on `file`, interleaved, and the table of medians."""
    size_mb = os.path.getsize(file) / 1e6
    parquet = os.path.join(out_dir, "rows.parquet")
    times: dict[str, list[float]] = {name: [] for name in CONTENDERS}
    peaks: dict[str, list[float]] = {name: [] for name in CONTENDERS}
    outputs: dict[str, str] = {}
    for _ in range(rounds):
        for name, code in CONTENDERS.items():
            if code is None:
                argv = [command, "export", "-q", "--format", "parquet", "-o", parquet, file]
                allowed: tuple[int, ...] = (0, 1)  # 1: lines were rejected
            else:
                argv = [sys.executable, "-c", f"FILE = {file!r}\n{code}"]
                allowed = (0,)
            elapsed, peak, out = run(argv, allowed)
            if code is not None and not out.startswith("failed"):
                rows, seconds = out.split()
                out, elapsed = rows, float(seconds)
            times[name].append(elapsed)
            peaks[name].append(peak)
            outputs[name] = out
    base = statistics.median(times["rdq read, 7 columns"])
    print(f"{file}: {size_mb:.0f} MB, {rounds} interleaved rounds, medians")
    print(f"{'contender':<22} {'s':>7} {'MB/s':>8} {'x rdq 7':>11} {'peak RSS MiB':>13}  rows")
    for name in CONTENDERS:
        wall = statistics.median(times[name])
        failed = outputs[name].startswith("failed")
        figures = "      -        -           -" if failed else f"{wall:7.2f} {size_mb / wall:8.0f} {base / wall:11.2f}"
        print(f"{name:<22} {figures} {statistics.median(peaks[name]):13.0f}  {outputs[name] or '-'}")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    command = shutil.which("rdq-envelope", path=os.path.dirname(sys.executable)) or "rdq-envelope"
    out_dir = tempfile.mkdtemp(prefix="rdq-python-read-")
    try:
        valid = os.path.join(out_dir, "valid.jsonl")
        subprocess.run(
            [command, "validate", "-q", "--valid-out", valid, "-o", os.devnull, args.file],
            check=False,
        )
        measure(args.file, args.rounds, command, out_dir)
        measure(valid, args.rounds, command, out_dir)
        respelled = os.path.join(out_dir, "valid-1e300.jsonl")
        with open(valid, "rb") as src, open(respelled, "wb") as dst:
            for line in src:
                dst.write(line.replace(b'"overflow":1e400', b'"overflow":1e300'))
        os.remove(valid)
        measure(respelled, args.rounds, command, out_dir)
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
