#!/usr/bin/env python3
"""Run `rdq-envelope batch` over a folder of shards on Apache Spark: one task per shard file.

    spark-submit [--master URL] [--files /path/to/rdq-envelope] contrib/spark/rdq_spark.py \
        [--binary PATH] [--ship] [--master URL] IN_DIR OUT_DIR -- COMMAND [FLAGS...]

COMMAND and FLAGS are those of `rdq-envelope batch` (validate, migrate or filter and that
command's own flags), without -j and -q, which the runner sets for each task.

The driver does no work of its own on the data. It asks the binary for the shards
(`batch ... --list`), runs one Spark task per shard (`batch ... --only SHARD`: the task writes
the shard's outputs into OUT_DIR and prints its manifest entry), and hands the entries back to
the binary (`batch ... --assemble -`), which writes manifest.json and summary.json exactly as a
local `batch` run does. A shard is never split: a zstd stream cannot be read from its middle.

Each shard is a Spark job of its own, as many at once as the executors have task slots, so
that the driver sees every shard finish: it records the entries so far in the manifest every
--record-every seconds (`--assemble - --in-flight`). A run whose driver dies is resumed by
running it again: the shards recorded done on the same input are not run again.

IN_DIR and OUT_DIR are either folders at the same paths on the driver and on every executor (a
shared file system), or s3://BUCKET/PREFIX/ prefixes, which every task reads and writes
directly (no shared file system: the executors need the AWS_* environment or an instance
role, see README.md). The binary is --binary on every node, or, with --ship, the driver's copy
sent to the executors through SparkContext.addFile (like spark-submit --files).
"""

import argparse
import os
import re
import shutil
import stat
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description="rdq-envelope batch on Spark: one task per shard file."
    )
    parser.add_argument(
        "--binary",
        default="rdq-envelope",
        help="the rdq-envelope binary on the driver (and, without --ship, on every executor)",
    )
    parser.add_argument(
        "--ship",
        action="store_true",
        help="send the driver's binary to the executors (SparkContext.addFile)",
    )
    parser.add_argument(
        "--master", help="the Spark master (default: what spark-submit or the config says)"
    )
    parser.add_argument(
        "--record-every",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="record the finished shards in the manifest this often while the run goes on "
        "(default 30; at least ten times as long as a recording takes)",
    )
    parser.add_argument("in_dir", help="the folder of shards, or s3://BUCKET/PREFIX/")
    parser.add_argument("out_dir", help="the output folder, or s3://BUCKET/PREFIX/")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [FLAGS...]")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command after --, such as: -- migrate --to 2")
    for flag in command:
        if flag in ("-j", "-q", "--quiet") or flag.startswith(("--jobs", "-j")):
            parser.error(f"{flag}: the runner sets -j and -q for each task")
    args.command = command
    return args


def absolute(path):
    """A folder as an absolute path, the same on every node; a URL (s3://, http(s)://) as given:
    the binary reads it, and `os.path.abspath` would make it a relative path's folder."""
    if re.match(r"(?i)^(s3|https?)://", path):
        return path
    return os.path.abspath(path)


def batch(binary, command, in_dir, out_dir, *extra):
    """The argument list of `rdq-envelope batch COMMAND... IN_DIR --out OUT_DIR EXTRA...`."""
    return [binary, "batch", *command, in_dir, "--out", out_dir, *extra]


def shard_task(binary, ship, command, in_dir, out_dir, jobs):
    """The function each Spark task runs on one shard name: (shard, entry or None, stderr)."""

    def run(shard):
        from pyspark import SparkFiles

        path = binary
        if ship:
            path = SparkFiles.get(os.path.basename(binary))
            mode = os.stat(path).st_mode
            if not mode & stat.S_IXUSR:
                os.chmod(path, mode | stat.S_IXUSR)
        argv = batch(path, command, in_dir, out_dir, "--only", shard, "-q", "-j", str(jobs))
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        entry = done.stdout.decode("utf-8").strip()
        # Exit 0 or 1: done; 2 with an entry: the shard failed and the entry says why.
        if entry.startswith("{"):
            return shard, entry, ""
        return shard, None, f"exit {done.returncode}: {done.stderr.decode('utf-8', 'replace')}"

    return run


class Recorder:
    """Writes the entries gathered so far into the manifest (`--assemble - --in-flight`),
    at most every `every` seconds and never for more than a tenth of the time."""

    def __init__(self, binary, command, in_dir, out_dir, every):
        self.argv = batch(binary, command, in_dir, out_dir, "--assemble", "-", "--in-flight", "-q")
        self.every = every
        self.last = time.monotonic()
        self.took = 0.0
        self.lock = threading.Lock()

    def maybe_record(self, entries):
        now = time.monotonic()
        if now - self.last < max(self.every, 10 * self.took):
            return
        with self.lock:
            started = time.monotonic()
            # Exit 2 says some shards are not done yet: expected while the run goes on.
            subprocess.run(self.argv, input=("\n".join(entries) + "\n").encode("utf-8"))
            self.last = time.monotonic()
            self.took = self.last - started


def run_shards(sc, task, shards, slots, recorder):
    """Each shard a Spark job of its own, `slots` at once; the results as they finish."""

    def one(shard):
        sc.setJobDescription(f"rdq-envelope batch: {shard}")
        return sc.parallelize([shard], 1).map(task).collect()[0]

    results, entries = [], []
    with ThreadPoolExecutor(max_workers=slots) as pool:
        for future in as_completed([pool.submit(one, shard) for shard in shards]):
            shard, entry, error = future.result()
            results.append((shard, entry, error))
            if entry is not None:
                entries.append(entry)
                recorder.maybe_record(list(entries))
    return results


def main(argv):
    args = parse_args(argv)
    in_dir = absolute(args.in_dir)
    out_dir = absolute(args.out_dir)
    binary = shutil.which(args.binary)
    if binary is None:
        print(f"rdq_spark: {args.binary}: not an executable file (or on PATH)", file=sys.stderr)
        return 2
    binary = os.path.abspath(binary)

    # The binary checks the flags and lists the shards before Spark starts.
    listed = subprocess.run(
        batch(binary, args.command, in_dir, out_dir, "--list"), stdout=subprocess.PIPE
    )
    if listed.returncode != 0:
        return listed.returncode
    shards = listed.stdout.decode("utf-8").splitlines()

    # Python workers must run the driver's Python (and find pyspark there).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("rdq-envelope batch").config(
        "spark.ui.showConsoleProgress", "false"
    )
    if args.master:
        builder = builder.master(args.master)
    spark = builder.getOrCreate()
    try:
        sc = spark.sparkContext
        sc.setLogLevel("WARN")
        if args.ship:
            sc.addFile(binary)
        jobs = int(sc.getConf().get("spark.task.cpus", "1"))
        task = shard_task(binary, args.ship, args.command, in_dir, out_dir, jobs)
        slots = max(1, sc.defaultParallelism // jobs)
        recorder = Recorder(binary, args.command, in_dir, out_dir, args.record_every)
        results = run_shards(sc, task, shards, slots, recorder)
    finally:
        spark.stop()

    entries = []
    for shard, entry, error in results:
        if entry is None:
            # Left pending in the manifest: a rerun runs it again.
            print(f"rdq_spark: {shard}: no entry: {error}", file=sys.stderr)
        else:
            entries.append(entry)
    assembled = subprocess.run(
        batch(binary, args.command, in_dir, out_dir, "--assemble", "-"),
        input=("\n".join(entries) + "\n").encode("utf-8"),
    )
    return assembled.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
