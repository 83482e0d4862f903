#!/usr/bin/env python3
"""A reference storage plugin for rdq envelopes on SQLite (Python's standard library only).

    store.py write    < envelopes.jsonl   stores each envelope (replacing one with its id)
    store.py read     > envelopes.jsonl   prints every stored envelope, one canonical line each

The database is $RDQ_SQLITE_DATABASE, else envelopes.sqlite3 in $RDQ_COMPLIANCE_DIR (the
folder `rdq-envelope compliance run` makes for each run). Check it with the kit:

    rdq-envelope compliance run --exact \\
        --write 'python3 contrib/storage-plugins/sqlite/store.py write' \\
        --read 'python3 contrib/storage-plugins/sqlite/store.py read'

The design (docs/plugins.md): the known members in typed columns, headers and attempts in
child tables with their order, everything else as residual JSON text kept as given (see
../envelope_parts.py). What SQLite teaches:
- timestamps are TEXT in the envelope's own form: SQLite's date functions read it, it sorts
  in time order, and it holds years 0000 to 9999 (SQLite has no timestamp type);
- `payload_ref.size` goes up to 2^64-1, past INTEGER's 2^63-1: it is TEXT of its digits;
- TEXT holds U+0000 (a header value may carry one) when bound as a parameter, but SQL's own
  string functions (length(), ||) stop at it: compare such values in the program, not in SQL.
"""

import os
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import envelope_parts as parts  # noqa: E402 (found through the path above)

SCHEMA = """
CREATE TABLE IF NOT EXISTS envelopes (
    id TEXT PRIMARY KEY,
    envelope_version INTEGER NOT NULL,
    queue TEXT NOT NULL,
    handler_ref TEXT NOT NULL,
    has_handler_version INTEGER NOT NULL,  -- NULL alone cannot tell absent from null
    handler_version TEXT,
    payload BLOB,                          -- the decoded bytes; NULL when absent (claim-check)
    payload_content_type TEXT NOT NULL,
    has_payload_ref INTEGER NOT NULL,
    payload_ref_uri TEXT,
    payload_ref_sha256 TEXT,
    payload_ref_size TEXT,                 -- up to 2^64-1: past INTEGER
    payload_ref_residual TEXT,
    origin_source TEXT,                    -- origin (version 2); NULL when absent
    origin_submitted_by TEXT,
    origin_residual TEXT,
    status TEXT NOT NULL,
    attempt_count INTEGER NOT NULL,
    redrive_count INTEGER NOT NULL,
    next_attempt_at TEXT,                  -- YYYY-MM-DDTHH:MM:SS.mmmZ, or NULL
    lease_expires_at TEXT,
    created_at TEXT NOT NULL,
    residual TEXT                          -- the unknown members: {"k":v,...} as given
);
CREATE TABLE IF NOT EXISTS headers (
    envelope_id TEXT NOT NULL REFERENCES envelopes (id),
    ordinal INTEGER NOT NULL,              -- the headers' order is kept
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (envelope_id, ordinal)
);
CREATE TABLE IF NOT EXISTS attempts (
    envelope_id TEXT NOT NULL REFERENCES envelopes (id),
    ordinal INTEGER NOT NULL,
    attempt_no INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    duration_ms INTEGER,                   -- version 2
    outcome TEXT,
    has_error INTEGER NOT NULL,
    error_type TEXT,
    error_message TEXT,
    error_detail TEXT,                     -- any JSON value, as given; NULL when absent
    has_stack INTEGER NOT NULL,
    error_stack TEXT,
    error_residual TEXT,
    residual TEXT,
    PRIMARY KEY (envelope_id, ordinal)
);
"""


def database():
    path = os.environ.get("RDQ_SQLITE_DATABASE")
    if not path:
        folder = os.environ.get("RDQ_COMPLIANCE_DIR")
        if not folder:
            raise SystemExit("store.py: set RDQ_SQLITE_DATABASE or RDQ_COMPLIANCE_DIR")
        path = os.path.join(folder, "envelopes.sqlite3")
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    return db


def insert(db, table, row):
    names = ", ".join(row)
    db.execute(f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' * len(row))})",
               tuple(row.values()))


def write(db):
    for number, line in parts.input_lines(sys.stdin.buffer):
        try:
            envelope, headers, attempts = parts.to_rows(parts.split(line))
        except ValueError as e:
            raise SystemExit(f"store.py write: line {number}: not an envelope: {e}")
        # A write stores the envelope's latest state: an earlier one with its id goes first.
        for table, key in (("headers", "envelope_id"), ("attempts", "envelope_id"),
                           ("envelopes", "id")):
            db.execute(f"DELETE FROM {table} WHERE {key} = ?", (envelope["id"],))
        insert(db, "envelopes", envelope)
        for row in headers:
            insert(db, "headers", row)
        for row in attempts:
            insert(db, "attempts", row)
    db.commit()  # all or nothing: one transaction for the whole input


def read(db):
    db.row_factory = sqlite3.Row
    out = sys.stdout.buffer
    for row in db.execute("SELECT * FROM envelopes ORDER BY id").fetchall():
        children = [db.execute(f"SELECT * FROM {table} WHERE envelope_id = ? ORDER BY ordinal",
                               (row["id"],)).fetchall() for table in ("headers", "attempts")]
        out.write(parts.join(parts.from_rows(row, *children)).encode("utf-8") + b"\n")
    out.flush()


if __name__ == "__main__":
    if sys.argv[1:] not in (["write"], ["read"]):
        raise SystemExit("usage: store.py write|read")
    (write if sys.argv[1] == "write" else read)(database())
