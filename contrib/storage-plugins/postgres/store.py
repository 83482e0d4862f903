#!/usr/bin/env python3
"""A reference storage plugin for rdq envelopes on PostgreSQL, through psycopg 3
(`pip install 'psycopg[binary]>=3.1,<4'`).

    store.py [--residual text|json|jsonb] write   < envelopes.jsonl
    store.py [--residual text|json|jsonb] read    > envelopes.jsonl

The connection is libpq's: PGHOST, PGPORT, PGUSER, PGDATABASE (and PGPASSWORD, ...). The
tables live in the schema $RDQ_PG_SCHEMA, else $RDQ_COMPLIANCE_RUN (a schema of its own for
each `rdq-envelope compliance run`, left behind: DROP SCHEMA ... CASCADE), else rdq. Check it
with the kit:

    rdq-envelope compliance run --exact \\
        --write 'python3 contrib/storage-plugins/postgres/store.py --residual text write' \\
        --read 'python3 contrib/storage-plugins/postgres/store.py --residual text read'

The design is the SQLite plugin's (docs/plugins.md): the known members in typed columns,
headers and attempts in child tables with their order, everything else as residual JSON text
(../envelope_parts.py). `--residual` is the residual columns' type:
- `text` (the default) and `json` keep the text as given: lossless, `--exact` passes;
- `jsonb` is the naive design, there to show what the kit catches: jsonb keeps a value, not
  its text (numbers respelled: 1e2 is 100, -0 is 0; keys reordered; white space added;
  escapes decoded), and it refuses `\\u0000` outright (that envelope is not stored).
What else PostgreSQL teaches:
- timestamptz has no year 0: 0000-01-01T00:00:00.000Z (a valid envelope time) is refused.
  PostgreSQL's 1 BC is the proleptic Gregorian year 0, so the plugin writes year 0000 as
  0001 BC and reads it back through to_char(..., 'BC');
- `payload_ref.size` goes up to 2^64-1, past bigint: numeric(20);
- text cannot hold U+0000, which a valid header, error message or origin may carry: those
  free-text members are bytea (their UTF-8), read with convert_from(col, 'UTF8') when they
  hold none;
- the payload is bytea, decoded from base64 here: SQL's encode(payload, 'base64') breaks its
  output with a newline every 76 characters (translate(..., E'\\n', '') removes them).
"""

import os
import re
import sys

try:
    import psycopg
    from psycopg import sql
    from psycopg.rows import dict_row
except ImportError:
    raise SystemExit("store.py: needs psycopg 3: pip install 'psycopg[binary]>=3.1,<4'")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import envelope_parts as parts  # noqa: E402 (found through the path above)

# {residual} is the residual columns' type, --residual's value.
SCHEMA = """
CREATE TABLE IF NOT EXISTS envelopes (
    id text PRIMARY KEY,
    envelope_version smallint NOT NULL,
    queue text NOT NULL,
    handler_ref text NOT NULL,
    has_handler_version boolean NOT NULL,  -- NULL alone cannot tell absent from null
    handler_version text,
    payload bytea,                         -- the decoded bytes; NULL when absent (claim-check)
    payload_content_type text NOT NULL,
    has_payload_ref boolean NOT NULL,
    payload_ref_uri text,
    payload_ref_sha256 text,
    payload_ref_size numeric(20, 0),       -- up to 2^64-1: past bigint
    payload_ref_residual {residual},
    origin_source bytea,                   -- origin (version 2): UTF-8, may hold U+0000
    origin_submitted_by bytea,
    origin_residual {residual},
    status text NOT NULL,
    attempt_count bigint NOT NULL,         -- up to 2^32-1: past integer
    redrive_count bigint NOT NULL,
    next_attempt_at timestamptz,           -- year 0000 stored as 0001 BC
    lease_expires_at timestamptz,
    created_at timestamptz NOT NULL,
    residual {residual}                    -- the unknown members: {{"k":v,...}}
);
CREATE TABLE IF NOT EXISTS headers (
    envelope_id text NOT NULL REFERENCES envelopes (id) ON DELETE CASCADE,
    ordinal integer NOT NULL,              -- the headers' order is kept
    key bytea NOT NULL,                    -- UTF-8: a header may hold U+0000
    value bytea NOT NULL,
    PRIMARY KEY (envelope_id, ordinal)
);
CREATE TABLE IF NOT EXISTS attempts (
    envelope_id text NOT NULL REFERENCES envelopes (id) ON DELETE CASCADE,
    ordinal integer NOT NULL,
    attempt_no bigint NOT NULL,
    started_at timestamptz NOT NULL,
    finished_at timestamptz,
    duration_ms bigint,                    -- version 2
    outcome text,
    has_error boolean NOT NULL,
    error_type bytea,                      -- UTF-8: may hold U+0000
    error_message bytea,
    error_detail {residual},               -- any JSON value; NULL when absent
    has_stack boolean NOT NULL,
    error_stack bytea,
    error_residual {residual},
    residual {residual},
    PRIMARY KEY (envelope_id, ordinal)
);
"""

# The free-text members, stored as their UTF-8 in bytea (text refuses U+0000).
UTF8_COLUMNS = {"origin_source", "origin_submitted_by", "key", "value", "error_type",
                "error_message", "error_stack"}
RESIDUAL_TYPES = ("text", "json", "jsonb")
# Read back in the envelope's own form, with BC for PostgreSQL's year 1 BC (the envelope's 0000).
TIMESTAMP_TEXT = 'to_char({} AT TIME ZONE \'UTC\', \'YYYY-MM-DD"T"HH24:MI:SS.MS"Z" BC\')'


def schema_name():
    name = os.environ.get("RDQ_PG_SCHEMA") or os.environ.get("RDQ_COMPLIANCE_RUN") or "rdq"
    # Quoted as an identifier below; this keeps it to what needs no thought (and 63 bytes).
    if not re.fullmatch(r"[a-z0-9_]{1,63}", name):
        raise SystemExit(f"store.py: {name!r} is not a schema name ([a-z0-9_], 63 at most)")
    return name


def connect(residual):
    db = psycopg.connect(row_factory=dict_row)
    schema = sql.Identifier(schema_name())
    db.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(schema))
    db.execute(sql.SQL("SET search_path TO {}").format(schema))
    db.execute(SCHEMA.format(residual=residual))
    db.commit()
    return db


def to_column(name, value):
    if value is None:
        return None
    if name in UTF8_COLUMNS:
        return value.encode("utf-8")
    if name in parts.TIMESTAMP_COLUMNS and value.startswith("0000-"):
        return f"0001-{value[5:]} BC"
    return value


def from_column(name, value):
    if value is None:
        return None
    if name in UTF8_COLUMNS:
        return bytes(value).decode("utf-8")
    if name in parts.TIMESTAMP_COLUMNS:
        text, era = value.rsplit(" ", 1)
        return "0000" + text[4:] if era == "BC" else text
    return value


def insert(db, table, row):
    db.execute(
        sql.SQL("INSERT INTO {} ({}) VALUES ({})").format(
            sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, row)),
            sql.SQL(", ").join(sql.Placeholder() * len(row))),
        [to_column(name, value) for name, value in row.items()])


def write(db):
    refused = 0
    for number, line in parts.input_lines(sys.stdin.buffer):
        try:
            envelope, headers, attempts = parts.to_rows(parts.split(line))
        except ValueError as e:
            raise SystemExit(f"store.py write: line {number}: not an envelope: {e}")
        try:
            # A savepoint each: an envelope the database refuses (jsonb and \u0000) is named
            # and the others are still stored.
            with db.transaction():
                # The envelope's latest state: an earlier one with its id goes (its headers
                # and attempts with it: ON DELETE CASCADE).
                db.execute("DELETE FROM envelopes WHERE id = %s", (envelope["id"],))
                insert(db, "envelopes", envelope)
                for row in headers:
                    insert(db, "headers", row)
                for row in attempts:
                    insert(db, "attempts", row)
        except psycopg.DataError as e:
            refused += 1
            first_line = str(e).splitlines()[0]
            print(f"store.py write: line {number}: envelope {envelope['id']} refused: {first_line}",
                  file=sys.stderr)
    db.commit()
    if refused:
        raise SystemExit(f"store.py write: {refused} envelope(s) not stored")


def select(table, columns, order):
    def shown(name):
        if name in parts.TIMESTAMP_COLUMNS:
            return sql.SQL(TIMESTAMP_TEXT + " AS {}").format(
                sql.Identifier(name), sql.Identifier(name))
        if name in parts.RESIDUAL_COLUMNS or name == "payload_ref_size":
            # As text: psycopg would parse json and jsonb, and numeric into a Decimal.
            return sql.SQL("{}::text AS {}").format(sql.Identifier(name), sql.Identifier(name))
        return sql.Identifier(name)
    return sql.SQL("SELECT {} FROM {} ORDER BY {}").format(
        sql.SQL(", ").join(map(shown, columns)), sql.Identifier(table), sql.SQL(order))


def rows(db, table, columns, order):
    for row in db.execute(select(table, columns, order)):
        yield {name: from_column(name, value) for name, value in row.items()}


def read(db):
    children = {}
    for table, columns in (("headers", parts.HEADER_COLUMNS), ("attempts", parts.ATTEMPT_COLUMNS)):
        for row in rows(db, table, columns, "envelope_id, ordinal"):
            children.setdefault((table, row["envelope_id"]), []).append(row)
    out = sys.stdout.buffer
    for row in rows(db, "envelopes", parts.ENVELOPE_COLUMNS, "id"):
        envelope = parts.from_rows(row, children.get(("headers", row["id"]), []),
                                   children.get(("attempts", row["id"]), []))
        out.write(parts.join(envelope).encode("utf-8") + b"\n")
    out.flush()


def main(args):
    residual = "text"
    if args[:1] == ["--residual"] and len(args) >= 2:
        residual, args = args[1], args[2:]
    if residual not in RESIDUAL_TYPES or args not in (["write"], ["read"]):
        raise SystemExit("usage: store.py [--residual text|json|jsonb] write|read")
    try:
        db = connect(residual)
    except psycopg.OperationalError as e:
        raise SystemExit(f"store.py: cannot connect to PostgreSQL (PGHOST, PGPORT, ...): {e}")
    with db:
        (write if args[0] == "write" else read)(db)


if __name__ == "__main__":
    main(sys.argv[1:])
