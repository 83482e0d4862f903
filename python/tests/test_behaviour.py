"""How the module behaves in a Python process: the GIL released while lines are judged,
Ctrl-C within a second with outputs as they were, threads calling at once, memory bounded
while a stream is read batch by batch."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa

import rdq_envelope


def test_the_gil_is_released_while_lines_are_judged(corpus: Path) -> None:
    ticks = 0
    running = True

    def count() -> None:
        nonlocal ticks
        while running:
            ticks += 1
            time.sleep(0.001)

    counter = threading.Thread(target=count)
    counter.start()
    time.sleep(0.05)
    before, started = ticks, time.monotonic()
    rdq_envelope.validate([corpus] * 5, threads=1)
    elapsed = time.monotonic() - started
    during = ticks - before
    running = False
    counter.join()
    # A thread kept from the GIL for the whole call would tick once or twice; one that runs
    # beside it ticks about once a millisecond (a quarter of that is asked, for slow sleeps).
    assert elapsed > 0.05 and during > elapsed / 0.001 / 4, (during, elapsed)


def test_threads_may_call_at_once(sample: Path) -> None:
    def books(result: dict) -> dict:
        return {k: v for k, v in result.items() if k != "seconds"}

    want = books(rdq_envelope.validate(sample).books)
    with ThreadPoolExecutor(max_workers=4) as pool:
        validated = list(pool.map(lambda _: rdq_envelope.validate(sample).books, range(8)))
        rows = list(pool.map(lambda _: pa.table(rdq_envelope.read(sample)).num_rows, range(8)))
    assert [books(b) for b in validated] == [want] * 8
    assert rows == [293] * 8


SLOW_RUN = textwrap.dedent(
    """
    import io, sys, time
    import rdq_envelope

    class Slow(io.RawIOBase):
        # A file of one line over and over, a read every 10 ms: a run over it never ends.
        def __init__(self, line):
            self.line, self.at = line, 0
        def readable(self):
            return True
        def read(self, n=-1):
            time.sleep(0.01)
            n = len(self.line) if n is None or n < 0 else n
            piece = (self.line[self.at:] + self.line)[:n]
            self.at = (self.at + len(piece)) % len(self.line)
            return piece

    line = open(sys.argv[1], "rb").readline()
    print("started", flush=True)
    try:
        rdq_envelope.{call}
    except KeyboardInterrupt:
        print("interrupted", time.monotonic(), flush=True)
        sys.exit(130)
    except Exception as e:
        # A stream being read ends with the consumer's error, which says why.
        if "INTERRUPTED" in str(e):
            print("interrupted", time.monotonic(), flush=True)
            sys.exit(130)
        raise
    print("finished", flush=True)
    """
)


def interrupt(call: str, lines: Path, scratch: Path) -> float:
    """Runs ``call`` in a child Python over a slow input, sends SIGINT, and returns how long
    the child took to raise KeyboardInterrupt."""
    script = scratch / "slow.py"
    script.write_text(SLOW_RUN.replace("{call}", call))
    child = subprocess.Popen(
        [sys.executable, str(script), str(lines)], stdout=subprocess.PIPE, cwd=scratch, text=True
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "started"
    time.sleep(0.5)
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=10)
    assert child.returncode == 130, out
    assert out.startswith("interrupted"), out
    return float(out.split()[1]) - sent


def test_ctrl_c_interrupts_within_a_second_and_leaves_outputs_as_they_were(
    sample_lines: list, scratch: Path
) -> None:
    lines = scratch / "one.jsonl"
    lines.write_bytes(sample_lines[0] + b"\n")
    before = b"an earlier run's output\n"
    Path("out.jsonl").write_bytes(before)
    for call in [
        "migrate(Slow(line), 'out.jsonl', to=1, rejects='rejects.jsonl')",
        "filter(Slow(line), 'out.jsonl', status='DEAD')",
        "validate(Slow(line), valid_out='out.jsonl')",
        "stats(Slow(line))",
        "filter(Slow(line), 'out.jsonl', where='.attempt_count > 1')",
        # A line that never ends: no chunk boundary comes, each read asks.
        "validate('/dev/zero', valid_out='out.jsonl')",
    ]:
        took = interrupt(call, lines, scratch)
        assert took < 1.0, (call, took)
        assert Path("out.jsonl").read_bytes() == before, call
        assert not Path("rejects.jsonl").exists(), call
        leftovers = [p.name for p in scratch.iterdir() if p.name.startswith(".")]
        assert leftovers == [], (call, leftovers)


def test_ctrl_c_while_a_stream_is_read(sample_lines: list, scratch: Path) -> None:
    lines = scratch / "one.jsonl"
    lines.write_bytes(sample_lines[0] + b"\n")
    took = interrupt("read(Slow(line)); import pyarrow; pyarrow.table(rdq_envelope.read(Slow(line)))", lines, scratch)
    assert took < 1.0


def peak_rss_mib() -> float:
    with open(f"/proc/{os.getpid()}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def test_memory_stays_bounded_while_a_stream_is_read_batch_by_batch(corpus: Path) -> None:
    size_mib = corpus.stat().st_size / (1 << 20)
    before = peak_rss_mib()
    reader = pa.RecordBatchReader.from_stream(rdq_envelope.read([corpus, corpus, corpus]))
    rows = 0
    for batch in reader:
        rows += batch.num_rows
    grew = peak_rss_mib() - before
    assert rows > 0
    # Three times the corpus went through; the process held a few batches at a time.
    assert grew < max(size_mib, 64), (grew, size_mib)
