"""The module against the command line of the same installation: the same rows as ``export``,
the same books as ``validate --summary``, the same bytes as ``migrate`` and ``filter``, the
same report as ``stats --format json``; through pyarrow, polars, DuckDB and pandas."""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Tuple

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import rdq_envelope
from conftest import ROOT, cli


def without_seconds(books: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in books.items() if k != "seconds"}


def cli_books(*args: str, status: int = 1) -> Dict[str, Any]:
    """The books of a command line run, from its --summary file."""
    summary = Path("summary.json")
    cli(*args, "--summary", str(summary), "-q", check_status=status)
    return without_seconds(json.loads(summary.read_text()))


def exported(sample: Path, *fields: str) -> pa.Table:
    args = ["export", "--format", "parquet", "-o", "rows.parquet", str(sample)]
    if fields:
        args[1:1] = ["--fields", ",".join(fields)]
    cli(*args, check_status=1)
    return pq.read_table("rows.parquet")


# ---- check ----


def test_check_a_valid_line_gives_its_members(sample_lines: List[bytes]) -> None:
    line = sample_lines[0]
    result = rdq_envelope.check(line)
    assert result.valid and bool(result)
    assert result.errors == [] and result.version in (1, 2)
    assert result.envelope == json.loads(line)
    # str and a trailing line feed (CR LF too) are the same line.
    assert rdq_envelope.check(line.decode() + "\r\n").valid


def test_check_an_invalid_line_gives_code_pointer_message_offset(sample_lines: List[bytes]) -> None:
    envelope = json.loads(sample_lines[0])
    envelope["queue"] = "Mail"
    del envelope["created_at"]
    result = rdq_envelope.check(json.dumps(envelope))
    assert not result.valid and result.envelope is None
    assert {d.code for d in result.errors} == {"INVALID_NAME", "MISSING_FIELD"}
    bad = next(d for d in result.errors if d.code == "INVALID_NAME")
    assert bad.pointer == "/queue" and "Mail" in bad.message and isinstance(bad.offset, int)
    not_json = rdq_envelope.check(b"{")
    assert [d.code for d in not_json.errors] == ["MALFORMED_JSON"]


def test_check_options_have_the_command_lines_meaning(sample_lines: List[bytes]) -> None:
    line = sample_lines[0]
    version = rdq_envelope.check(line).version
    other = 1 if version == 2 else 2
    refused = rdq_envelope.check(line, require_version=other)
    assert [d.code for d in refused.errors] == ["UNSUPPORTED_VERSION"]
    small = rdq_envelope.check(line, max_envelope_bytes=100)
    assert "PAYLOAD_TOO_LARGE" in {d.code for d in small.errors}
    submitted = rdq_envelope.check(
        b'{"queue":"mail","handler_ref":"send","payload":"e30=","payload_content_type":"application/json"}',
        submit=True,
    )
    assert submitted.valid


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: rdq_envelope.check(12), TypeError),  # type: ignore[arg-type]
        (lambda: rdq_envelope.check(b"{}", require_version=3), ValueError),
        (lambda: rdq_envelope.check(b"{}", require_version="2"), TypeError),  # type: ignore[arg-type]
        (lambda: rdq_envelope.check(b"{}", submit=1), TypeError),  # type: ignore[arg-type]
        (lambda: rdq_envelope.check(b"{}", submit=True, require_version=2), ValueError),
        (lambda: rdq_envelope.check(b"{}", max_envelope_bytes=-1), ValueError),
        (lambda: rdq_envelope.check(b"{}", queue_limits=[1]), TypeError),  # type: ignore[arg-type]
    ],
)
def test_check_refuses_bad_arguments_by_name(call: Any, error: type) -> None:
    with pytest.raises(error):
        call()


def test_check_of_hostile_lines_never_crashes() -> None:
    for line in [b"", b"\x00" * 100, b"[" * 100_000, b'{"a":' * 50_000, b"\xff\xfe{}",
                 b'"' + b"\\" * 10_001 + b'"', ("{" + '"k":1,' * 100_000 + '"z":2}').encode()]:
        result = rdq_envelope.check(line)
        assert not result.valid and result.errors


# ---- read ----


def test_read_gives_exports_rows_and_types(sample: Path, scratch: Path) -> None:
    table = pa.table(rdq_envelope.read(sample))
    want = exported(sample)
    assert table.schema == want.schema
    assert table.equals(want)


def test_read_columns_and_their_refusal(sample: Path, scratch: Path) -> None:
    fields = ("id", "envelope_version", "payload_bytes", "header.tenant", "last.started_at", "source")
    table = pa.table(rdq_envelope.read(sample, columns=list(fields)))
    assert table.equals(exported(sample, *fields))
    with pytest.raises(ValueError, match="columns"):
        rdq_envelope.read(sample, columns=["id", "nope"])
    with pytest.raises(ValueError, match="columns"):
        rdq_envelope.read(sample, columns=[])
    with pytest.raises(ValueError, match="twice"):
        rdq_envelope.read(sample, columns=["id", "id"])


def test_read_through_polars_duckdb_and_pandas(sample: Path) -> None:
    want = pa.table(rdq_envelope.read(sample))
    frame = pl.DataFrame(rdq_envelope.read(sample))
    assert frame.to_arrow().equals(pl.from_arrow(want).to_arrow())  # type: ignore[union-attr]
    stream = rdq_envelope.read(sample, columns=["queue"])
    relation = duckdb.sql("SELECT queue, count(*) AS n FROM stream GROUP BY queue ORDER BY queue")
    assert relation is not None
    counts = relation.fetchall()
    by_queue = want.group_by("queue").aggregate([("queue", "count")]).to_pylist()
    assert counts == sorted((row["queue"], row["queue_count"]) for row in by_queue)
    if hasattr(pd.DataFrame, "from_arrow"):
        df = pd.DataFrame.from_arrow(rdq_envelope.read(sample))
    else:  # pandas before 3: through pyarrow, Arrow-backed columns (no copy of the data)
        df = pa.table(rdq_envelope.read(sample)).to_pandas(types_mapper=pd.ArrowDtype)
    assert len(df) == want.num_rows and list(df.columns) == want.column_names
    assert df["id"].tolist() == want.column("id").to_pylist()


def test_read_predicates_keep_what_filter_keeps(sample: Path, scratch: Path) -> None:
    cases: List[Tuple[Dict[str, Any], List[str]]] = [
        ({"status": "dead"}, ["--status", "DEAD"]),
        ({"queue": ["billing.*", "notify.*"]}, ["--queue", "billing.*", "--queue", "notify.*"]),
        ({"where": ".attempt_count > 3"}, ["--where", ".attempt_count > 3"]),
        ({"min_attempts": 2, "outcome": "permanent_failure"}, ["--min-attempts", "2", "--outcome", "PERMANENT_FAILURE"]),
        ({"error_message": "certification path"}, ["--error-message", "certification path"]),
        ({"fingerprint": "455ff875f6f1"}, ["--fingerprint", "455ff875f6f1"]),
        ({"header": {"tenant": "acme-*", "rdq.source": "checkout*"}}, ["--header", "tenant=acme-*", "--header", "rdq.source=checkout*"]),
        ({"since": "2024-05-01T12:10:00.000Z", "until": dt.date(2024, 5, 2)}, ["--since", "2024-05-01T12:10:00.000Z", "--until", "2024-05-02"]),
        ({"failed_until": dt.datetime(2024, 5, 1, 14, 30, tzinfo=dt.timezone.utc)}, ["--failed-until", "2024-05-01T14:30:00.000Z"]),
    ]
    for kwargs, flags in cases:
        cli("filter", *flags, "-o", "kept.jsonl", str(sample), check_status=1)
        cli("export", "--format", "parquet", "-o", "kept.parquet", "kept.jsonl")
        got = pa.table(rdq_envelope.read(sample, **kwargs))
        assert got.num_rows > 0, kwargs
        assert got.equals(pq.read_table("kept.parquet")), kwargs


def test_read_sources_of_every_kind(sample: Path, scratch: Path) -> None:
    one = pa.table(rdq_envelope.read(sample))
    assert pa.table(rdq_envelope.read([sample, str(sample)])).num_rows == 2 * one.num_rows
    data = sample.read_bytes()
    assert pa.table(rdq_envelope.read(data)).equals(one)
    assert pa.table(rdq_envelope.read(io.BytesIO(data))).equals(one)
    with open(sample, "rb") as f:
        assert pa.table(rdq_envelope.read(f)).equals(one)
    with open(sample, "r", encoding="latin-1") as text:
        with pytest.raises(TypeError, match="binary mode"):
            rdq_envelope.read(text)
    for bad, error in [(None, TypeError), (12, TypeError), ([], ValueError), ([[sample]], TypeError)]:
        with pytest.raises(error, match="source"):
            rdq_envelope.read(bad)


def test_read_of_thousands_of_inputs_keeps_few_open(sample_lines: List[bytes], scratch: Path) -> None:
    one = Path("one.jsonl")
    one.write_bytes(sample_lines[0] + b"\n")
    table = pa.table(rdq_envelope.read([one] * 5000, columns=["id"]))
    assert table.num_rows == 5000


def test_read_books_and_rejects_as_export_has_them(sample: Path, scratch: Path) -> None:
    stream = rdq_envelope.read(sample, rejects="rejects.jsonl")
    assert stream.books() is None
    table = pa.table(stream)
    books = json.loads(stream.books() or "{}")
    assert books["emitted"] == table.num_rows == 293 and books["rejected"] == 7
    cli("export", "--format", "parquet", "-o", "x.parquet", "--rejects", "cli-rejects.jsonl", str(sample), check_status=1)
    assert Path("rejects.jsonl").read_bytes() == Path("cli-rejects.jsonl").read_bytes()
    with pytest.raises(rdq_envelope.Error, match="already read"):
        pa.table(stream)


def test_read_of_a_missing_file_fails_with_the_input_code(scratch: Path) -> None:
    stream = rdq_envelope.read("no-such-file.jsonl")
    with pytest.raises(Exception, match="no-such-file.jsonl"):
        pa.table(stream)
    with pytest.raises(rdq_envelope.Error) as raised:
        stream.books()
    assert raised.value.args[0] == "INPUT"


def test_read_refuses_an_output_that_is_an_input(sample: Path, scratch: Path) -> None:
    copy = Path("copy.jsonl.zst")
    copy.write_bytes(sample.read_bytes())
    with pytest.raises(ValueError, match="copy.jsonl.zst"):
        rdq_envelope.read(copy, rejects=copy)
    assert copy.read_bytes() == sample.read_bytes()


# ---- validate ----


def test_validate_books_and_diagnostics_are_the_command_lines(sample: Path, scratch: Path) -> None:
    result = rdq_envelope.validate(sample)
    assert without_seconds(result.books) == cli_books("validate", str(sample))
    assert not result.valid
    rows = pa.table(result.diagnostics).to_pylist()
    records = [json.loads(line) for line in cli("validate", "--format", "json", str(sample), check_status=1).stdout.splitlines()]
    want = [
        (r["source"], r["line"], r["offset"], r["id"], e["code"], e["path"], e["message"])
        for r in records for e in r["errors"]
    ]
    assert [(r["source"], r["line"], r["offset"], r["id"], r["code"], r["pointer"], r["message"]) for r in rows] == want
    assert len(result.diagnostics) == len(want) == result.diagnostics.num_rows
    # The table reads again, and through polars too.
    assert pl.DataFrame(result.diagnostics).height == len(want)


def test_validate_writes_valid_out_and_rejects_like_the_command_line(sample: Path, scratch: Path) -> None:
    rdq_envelope.validate(sample, valid_out="valid.jsonl", rejects="rejects.jsonl")
    cli("validate", "-q", "--valid-out", "v.jsonl", "--rejects", "r.jsonl", str(sample), check_status=1)
    assert Path("valid.jsonl").read_bytes() == Path("v.jsonl").read_bytes()
    assert Path("rejects.jsonl").read_bytes() == Path("r.jsonl").read_bytes()


# ---- migrate, filter, stats ----


def test_migrate_writes_the_command_lines_bytes(sample: Path, scratch: Path) -> None:
    for to in (1, 2):
        books = rdq_envelope.migrate(sample, f"py-{to}.jsonl.zst", to=to)
        assert without_seconds(books) == cli_books("migrate", "--to", str(to), "-o", f"cli-{to}.jsonl.zst", str(sample))
        got = cli("validate", "-q", f"py-{to}.jsonl.zst").returncode
        assert got == 0
        assert_same_lines(f"py-{to}.jsonl.zst", f"cli-{to}.jsonl.zst")
    with pytest.raises(ValueError):
        rdq_envelope.migrate(sample, "x.jsonl", to=3)
    with pytest.raises(TypeError):
        rdq_envelope.migrate(sample, "x.jsonl")  # type: ignore[call-arg]


def assert_same_lines(a: str, b: str) -> None:
    """Two zstd files hold the same lines (their frames may differ: each run compresses)."""
    left = subprocess.run(["zstd", "-dc", a], capture_output=True, check=True).stdout
    right = subprocess.run(["zstd", "-dc", b], capture_output=True, check=True).stdout
    assert left == right


def test_filter_writes_and_counts_what_the_command_line_does(sample: Path, scratch: Path) -> None:
    result = rdq_envelope.filter(sample, "dead.jsonl", status="DEAD", queue="payments.*")
    assert without_seconds(result.books) == cli_books("filter", "--status", "DEAD", "--queue", "payments.*", "-o", "cli-dead.jsonl", str(sample))
    assert Path("dead.jsonl").read_bytes() == Path("cli-dead.jsonl").read_bytes()
    counted = rdq_envelope.filter(sample, status="DEAD", queue="payments.*")
    assert counted.matched == result.matched > 0
    inverted = rdq_envelope.filter(sample, status="DEAD", invert=True)
    assert inverted.matched + rdq_envelope.filter(sample, status="DEAD").matched == 293
    limited = rdq_envelope.filter(sample, "first.jsonl", status="DEAD", limit=3)
    assert limited.matched == 3 and limited.limit_reached
    assert without_seconds(limited.books) == cli_books("filter", "--status", "DEAD", "--limit", "3", "-o", "cli-first.jsonl", str(sample))
    assert Path("first.jsonl").read_bytes() == Path("cli-first.jsonl").read_bytes()
    submitted = rdq_envelope.validate(sample, submit=True)
    assert without_seconds(submitted.books) == cli_books("validate", "--submit", str(sample))
    with pytest.raises(ValueError, match="status"):
        rdq_envelope.filter(sample, status="LOST")
    with pytest.raises(ValueError, match="where"):
        rdq_envelope.filter(sample, where=".attempt_count >")


def test_a_runaway_where_is_ended_by_its_limits_and_python_goes_on(sample: Path, scratch: Path) -> None:
    Path("out.jsonl").write_bytes(b"previous\n")
    cases: List[Tuple[Dict[str, Any], str]] = [
        ({"where": "def f: f; f", "where_timeout": 0.5}, "0.5 seconds"),
        ({"where": "def f: 1 + f; f", "where_timeout": 0, "where_max_memory": 0}, "recursed deeper"),
        ({"where": "[.queue | repeat(.)] | length > 0", "where_max_memory": 300}, "300 MiB"),
    ]
    for kwargs, words in cases:
        with pytest.raises(rdq_envelope.Error) as raised:
            rdq_envelope.filter(sample, "out.jsonl", rejects="rejects.jsonl", **kwargs)
        assert raised.value.args[0] == "WHERE" and words in raised.value.args[1], raised.value.args
        assert Path("out.jsonl").read_bytes() == b"previous\n"
        assert sorted(p.name for p in scratch.iterdir()) == ["out.jsonl"], kwargs
    # Through read: the stream ends with the command's error, never a table that looks whole.
    stream = rdq_envelope.read(sample, where="def f: f; f", where_timeout=0.5)
    with pytest.raises(Exception, match="0.5 seconds"):
        pa.table(stream)
    with pytest.raises(ValueError, match="where"):
        rdq_envelope.read(sample, where="input")  # refused: it reads beyond one envelope
    with pytest.raises(ValueError, match="where_timeout"):
        rdq_envelope.filter(sample, where=".", where_timeout=-1)


def test_read_with_where_has_the_command_lines_books(sample: Path, scratch: Path) -> None:
    stream = rdq_envelope.read(sample, where=".attempt_count > 3", status="DEAD", rejects="r.jsonl")
    table = pa.table(stream)
    books = json.loads(stream.books() or "{}")
    want = cli_books("filter", "--where", ".attempt_count > 3", "--status", "DEAD", "-o", "kept.jsonl", "--rejects", "cli-r.jsonl", str(sample))
    assert without_seconds(books) == want and table.num_rows == want["emitted"]
    assert Path("r.jsonl").read_bytes() == Path("cli-r.jsonl").read_bytes()
    with open(sample, "rb") as f:
        assert pa.table(rdq_envelope.read(f, where=".attempt_count > 3", status="DEAD")).equals(table)


def test_stats_is_the_json_report(sample: Path, scratch: Path) -> None:
    for by in ("queue", "status", "fingerprint", "day"):
        got = rdq_envelope.stats(sample, by=by, top=5)
        want = json.loads(cli("stats", "--format", "json", "--by", by.replace("_", "-"), "--top", "5", str(sample), check_status=1).stdout)
        assert got == want
    with pytest.raises(ValueError, match="by"):
        rdq_envelope.stats(sample, by="colour")


# ---- hostile arguments ----


@pytest.mark.parametrize(
    "kwargs, error, name",
    [
        ({"threads": 0}, ValueError, "threads"),
        ({"threads": 10**9}, ValueError, "threads"),
        ({"threads": True}, TypeError, "threads"),
        ({"threads": "2"}, TypeError, "threads"),
        ({"max_line_bytes": 0}, ValueError, "max_line_bytes"),
        ({"max_line_bytes": 2**64}, ValueError, "max_line_bytes"),
        ({"max_envelope_bytes": -1}, ValueError, "max_envelope_bytes"),
        ({"min_attempts": 2.5}, TypeError, "min_attempts"),
        ({"threads": float("nan")}, TypeError, "threads"),
        ({"rejects": 12}, TypeError, "rejects"),
        ({"rejects": "bad\0name"}, ValueError, "rejects"),
        ({"status": 5}, TypeError, "status"),
        ({"where": 5}, TypeError, "where"),
        ({"min_attempts": 5, "max_attempts": 2}, ValueError, "min_attempts"),
        ({"require_version": 7}, ValueError, "require_version"),
        ({"queue_limits": {"q": "big"}}, TypeError, "queue_limits"),
        ({"since": "yesterday-ish"}, ValueError, "since"),
        ({"since": dt.datetime(2024, 5, 1)}, ValueError, "since"),
        ({"since": "2024-05-02", "until": "2024-05-01"}, ValueError, "since"),
        ({"fingerprint": "xyz"}, ValueError, "fingerprint"),
        ({"error_message": "("}, ValueError, "error_message"),
        ({"header": {"": "x"}}, ValueError, "header"),
        ({"header": ["tenant=x"]}, TypeError, "header"),
    ],
)
def test_bad_arguments_are_errors_that_name_them(sample: Path, kwargs: Dict[str, Any], error: type, name: str) -> None:
    with pytest.raises(error, match=name):
        rdq_envelope.read(sample, **kwargs)


def test_an_unwritable_output_fails_before_reading(sample: Path, scratch: Path) -> None:
    with pytest.raises(rdq_envelope.Error) as raised:
        rdq_envelope.migrate(sample, "no-such-folder/out.jsonl", to=2)
    assert raised.value.args[0] == "OUTPUT" and "no-such-folder" in raised.value.args[1]


def test_a_full_device_and_a_folder_are_errors_with_their_codes(sample: Path, scratch: Path) -> None:
    with pytest.raises(rdq_envelope.Error) as raised:
        rdq_envelope.migrate(sample, "/dev/full", to=2)
    assert raised.value.args[0] == "OUTPUT"
    Path("folder").mkdir()
    with pytest.raises(rdq_envelope.Error) as raised:
        rdq_envelope.validate("folder")
    assert raised.value.args[0] == "INPUT" and "folder: no .jsonl or .ndjson file" in raised.value.args[1]
    with pytest.raises(ValueError, match="out.jsonl"):
        rdq_envelope.migrate(sample, "out.jsonl", to=2, rejects="out.jsonl")


def test_a_folder_is_read_as_its_files_in_name_order(sample: Path, scratch: Path) -> None:
    """As the command line reads it: its .jsonl files and below, in name order, what else it
    holds left out and named in the books' ``skipped``."""
    (scratch / "in" / "b").mkdir(parents=True)
    (scratch / "in" / "a.jsonl.zst").write_bytes(sample.read_bytes())
    (scratch / "in" / "b" / "c.jsonl.zst").write_bytes(sample.read_bytes())
    (scratch / "in" / ".hidden.jsonl").write_bytes(b"{}\n")
    (scratch / "in" / "notes.md").write_bytes(b"not envelopes\n")
    files = ["in/a.jsonl.zst", "in/b/c.jsonl.zst"]
    by_folder = rdq_envelope.validate("in")
    by_name = rdq_envelope.validate(files)
    assert by_folder.books["lines"] == by_name.books["lines"] == 600
    assert by_folder.books["skipped"] == [
        {"path": "in/.hidden.jsonl", "why": "hidden"},
        {"path": "in/notes.md", "why": "not named as JSON Lines (.jsonl or .ndjson, compressed or not)"},
    ]
    assert "skipped" not in by_name.books
    assert pa.table(by_folder.diagnostics).equals(pa.table(by_name.diagnostics))
    assert pa.table(rdq_envelope.read("in")).equals(pa.table(rdq_envelope.read(files)))
    cli("validate", "-q", "in", "-o", "/dev/null", "--summary", "books.json", check_status=1)
    books = json.loads(Path("books.json").read_text())
    assert books["skipped"] == by_folder.books["skipped"]


def test_the_version_is_the_crates() -> None:
    def version(manifest: Path) -> str:
        found = re.search(r'(?m)^version = "([^"]+)"', manifest.read_text())
        assert found, manifest
        return found.group(1)

    assert rdq_envelope.__version__ == version(ROOT / "Cargo.toml") == version(ROOT / "python" / "Cargo.toml")


def test_the_command_is_installed_and_runs(sample: Path) -> None:
    out = cli("--version")
    assert re.match(rb"rdq-envelope \d+\.\d+\.\d+", out.stdout)
    done = cli("validate", str(sample), check_status=1)
    assert len(done.stdout.splitlines()) == 7
    assert b"300 lines: 293 valid, 7 rejected, 0 blank" in done.stderr
