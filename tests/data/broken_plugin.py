#!/usr/bin/env python3
"""Deliberately broken storage plugins, for the compliance kit's own tests.

    broken_plugin.py MODE write   < envelopes     stores them in $RDQ_COMPLIANCE_DIR
    broken_plugin.py MODE read    > envelopes     prints what it stored

Each MODE is one way a real store loses data:

    faithful       keeps every line as it came (passes, even --exact)
    reformat       json.loads then json.dumps with sorted keys and spaces, numbers kept
                   exact (the same values: passes; --exact does not)
    drop-unknown   keeps only the members the contract names at the top level
    round-numbers  reads numbers as doubles, as many JSON libraries do
    lose-one       forgets the third envelope
    duplicate      gives the first envelope back twice
    hang           the write never ends, nor does a child it starts (their pids go to the
                   file $BROKEN_PLUGIN_PIDS names); it prints a terminal escape on stderr
    crash          the write dies with a traceback after storing half
    garbage        the read prints a log line before the envelopes
"""
import json
import os
import re
import subprocess
import sys
import time

KNOWN_TOP = {
    "envelope_version", "id", "queue", "handler_ref", "handler_version", "payload",
    "payload_content_type", "payload_ref", "headers", "origin", "status", "attempt_count",
    "redrive_count", "next_attempt_at", "lease_expires_at", "created_at", "attempts",
}


def store():
    return os.path.join(os.environ["RDQ_COMPLIANCE_DIR"], "store.jsonl")


def loads_exact(line):
    """Parses a line, each number kept as its text behind a stand-in string."""
    numbers = []

    def stand_in(text):
        numbers.append(text)
        return "\u0000number %d\u0000" % (len(numbers) - 1)

    return json.loads(line, parse_float=stand_in, parse_int=stand_in), numbers


def dumps_exact(value, numbers, **options):
    """Writes a value from loads_exact, each number spelled as it was read."""
    text = json.dumps(value, ensure_ascii=False, **options)
    return re.sub(r'"\\u0000number (\d+)\\u0000"', lambda m: numbers[int(m.group(1))], text)


def write(mode, lines):
    if mode == "hang":
        child = subprocess.Popen(["sleep", "1000"])
        # Where the test looks, after the kit is done, for processes left running.
        with open(os.environ["BROKEN_PLUGIN_PIDS"], "w") as f:
            f.write("%d %d" % (os.getpid(), child.pid))
        print("\x1b[31mwaiting for the store\x1b[0m", file=sys.stderr, flush=True)
        while True:
            time.sleep(1)
    kept = []
    for i, line in enumerate(lines):
        if mode == "lose-one" and i == 2:
            continue
        if mode == "drop-unknown":
            envelope, numbers = loads_exact(line)
            envelope = {k: v for k, v in envelope.items() if k in KNOWN_TOP}
            line = dumps_exact(envelope, numbers, separators=(",", ":"))
        elif mode == "round-numbers":
            # As JavaScript's JSON.parse does: every number a double; integers printed bare.
            value = json.loads(line, parse_int=lambda s: int(float(s)))
            line = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        elif mode == "reformat":
            value, numbers = loads_exact(line)
            line = dumps_exact(value, numbers, sort_keys=True)
        kept.append(line)
        if mode == "crash" and i == len(lines) // 2:
            break
    with open(store(), "w", encoding="utf-8") as f:
        f.write("".join(l if l.endswith("\n") else l + "\n" for l in kept))
    if mode == "crash":
        raise RuntimeError("the store went away")


def read(mode):
    with open(store(), encoding="utf-8") as f:
        lines = f.read().splitlines()
    if mode == "garbage":
        print("INFO connected to the store, reading envelopes")
    if mode == "duplicate" and lines:
        lines.append(lines[0])
    for line in lines:
        print(line)


def main():
    mode, action = sys.argv[1], sys.argv[2]
    if action == "write":
        write(mode, sys.stdin.read().splitlines())
    else:
        read(mode)


if __name__ == "__main__":
    main()
