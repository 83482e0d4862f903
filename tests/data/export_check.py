"""Reads an `rdq-envelope export` back with Python's own readers (the csv module for CSV and TSV,
pyarrow for Parquet) and compares every value with the envelope it came from, parsed here with
the json module: an independent reading of both sides (tests/it/cli_export.rs runs it).

usage: export_check.py csv|tsv|parquet INPUT.jsonl REJECTS.jsonl EXPORT FIELDS

The rows are the input's non-blank lines that are not in the rejects, in order. Prints, as
JSON, the rows read (as the export's text: null as None) and each row's last error, for the
fingerprints, which the Rust side checks with the library's own function. Exits 1 naming the
first value that differs.
"""

import base64
import csv
import datetime
import json
import sys

mode, input_path, rejects_path, export_path, fields = sys.argv[1:6]
fields = fields.split(",")

rejected = set()
with open(rejects_path, encoding="utf-8") as f:
    for record in f:
        rejected.add(json.loads(record)["line"])

envelopes = []
with open(input_path, "rb") as f:
    for number, raw in enumerate(f.read().split(b"\n"), start=1):
        if raw.strip(b" \t\r") == b"" or number in rejected:
            continue
        envelopes.append((number, json.loads(raw.decode("utf-8"))))


def last_error(env):
    """The type and message of the last attempt that has an error."""
    found = None
    for attempt in env["attempts"]:
        error = attempt.get("error")
        if isinstance(error, dict):
            found = [error["type"], error.get("message")]
    return found


def expected(env, field):
    """The value the export should hold: str, int, ("ts", text) or None."""
    version = env["envelope_version"]
    last = env["attempts"][-1] if env["attempts"] else {}
    error = last.get("error") or {}
    headers = env.get("headers") or {}
    ts = lambda v: None if v is None else ("ts", v)
    if field in ("id", "queue", "handler_ref", "status", "payload_content_type",
                 "handler_version"):
        return env.get(field)
    if field in ("envelope_version", "attempt_count", "redrive_count"):
        return env[field]
    if field in ("created_at", "next_attempt_at", "lease_expires_at"):
        return ts(env.get(field))
    if field == "payload_bytes":
        payload = env.get("payload")
        return None if payload is None else len(base64.b64decode(payload, validate=True))
    if field == "source":
        if version == 1:
            return headers.get("rdq.source")
        return (env.get("origin") or {}).get("source")
    if field.startswith("header."):
        return headers.get(field[len("header."):])
    if field == "last.outcome":
        return last.get("outcome")
    if field == "last.error.type":
        return error.get("type")
    if field == "last.error.message":
        return error.get("message")
    if field == "last.started_at":
        return ts(last.get("started_at"))
    if field == "last.finished_at":
        return ts(last.get("finished_at"))
    raise SystemExit(f"no expectation for {field}")


def envelope_time(ms):
    """Milliseconds since the epoch in the envelope's form, 2024-05-01T12:00:00.000Z."""
    at = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    at += datetime.timedelta(milliseconds=ms)
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def as_text(value):
    """How CSV writes a value: null is the empty field."""
    if value is None:
        return ""
    if isinstance(value, tuple):
        return value[1]
    return str(value)


if mode in ("csv", "tsv"):
    with open(export_path, newline="", encoding="utf-8") as f:
        table = list(csv.reader(f, delimiter="\t" if mode == "tsv" else ","))
    header, rows = table[0], table[1:]
    terminator = b"\r\n" if mode == "csv" else b"\n"
    with open(export_path, "rb") as f:
        if not f.read().endswith(terminator):
            raise SystemExit(f"{mode}: the last row does not end in {terminator!r}")
else:
    import pyarrow as pa
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(export_path)
    table = parquet.read()
    header = table.column_names
    want_types = {
        "envelope_version": pa.int64(), "attempt_count": pa.int64(),
        "redrive_count": pa.int64(), "payload_bytes": pa.int64(),
    }
    for name in ("created_at", "next_attempt_at", "lease_expires_at", "last.started_at",
                 "last.finished_at"):
        want_types[name] = pa.timestamp("ms", tz="UTC")
    columns = []
    for name in header:
        column = table.column(name)
        want = want_types.get(name, pa.string())
        if column.type != want:
            raise SystemExit(f"column {name} is {column.type}, not {want}")
        if pa.types.is_timestamp(column.type):
            values = [None if ms is None else ("ts", envelope_time(ms))
                      for ms in column.cast(pa.int64()).to_pylist()]
        else:
            values = column.to_pylist()
        columns.append(values)
    rows = [list(row) for row in zip(*columns)]
    metadata = parquet.metadata
    for group in range(metadata.num_row_groups):
        for column in range(metadata.num_columns):
            codec = metadata.row_group(group).column(column).compression
            if codec != "ZSTD":
                raise SystemExit(f"row group {group} column {column} is {codec}, not ZSTD")

if header != fields:
    raise SystemExit(f"header {header} is not {fields}")
if len(rows) != len(envelopes):
    raise SystemExit(f"{len(rows)} rows for {len(envelopes)} valid envelopes")
for (number, env), row in zip(envelopes, rows):
    for field, got in zip(fields, row):
        if field == "fingerprint":
            continue
        want = expected(env, field)
        if mode != "parquet":
            want = as_text(want)
        if got != want:
            raise SystemExit(f"line {number}, {field}: {got!r} is not {want!r}")

fingerprints = []
if "fingerprint" in fields:
    at = fields.index("fingerprint")
    fingerprints = [[last_error(env), row[at]] for (_, env), row in zip(envelopes, rows)]
print(json.dumps({"rows": len(rows), "fingerprints": fingerprints,
                  "values": [[as_text(v) for v in row] for row in rows]}))
