"""rdq_envelope: rdq task envelopes (JSON Lines) judged, read, migrated and filtered in process.

The functions mirror the command line (``rdq-envelope``, installed by the same wheel): the
same rules, the same books, the same columns, with the command line's options as keyword
arguments. Inputs are paths, ``s3://`` and ``http(s)://`` URLs, lists of them, ``bytes`` or
binary file objects; ``.zst`` and ``.gz`` inputs are decompressed as on the command line.
Runs release the GIL, answer Ctrl-C within a second (leaving every output as it was), and
write their outputs atomically: all or nothing. See docs/python.md.

>>> import rdq_envelope
>>> rdq_envelope.check(b'{"queue":"mail"}').valid
False
"""

from __future__ import annotations

import datetime
import io
import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Protocol, Sequence, Tuple, Union

import subprocess

from . import _native, _where
from ._native import BatchStream, Error, Table

__version__: str = _native.__version__

__all__ = [
    "ArrowStream",
    "BatchStream",
    "CheckResult",
    "Diagnostic",
    "Error",
    "Filtered",
    "Table",
    "Validation",
    "check",
    "filter",
    "migrate",
    "read",
    "stats",
    "validate",
]

#: The statuses ``status=`` takes (any letter case), as ``filter --status``.
STATUSES = ("PENDING", "IN_FLIGHT", "SUCCEEDED", "DEAD", "CANCELLED")
#: The outcomes ``outcome=`` takes (any letter case), as ``filter --outcome``.
OUTCOMES = ("SUCCESS", "RETRYABLE_FAILURE", "PERMANENT_FAILURE", "LEASE_EXPIRED")
#: The groupings ``stats(by=...)`` takes, as ``stats --by``.
GROUP_BY = ("queue", "handler", "status", "error_type", "outcome", "day", "fingerprint")

Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, Any, Sequence[Any]]


class ArrowStream(Protocol):
    """What :func:`read` returns: Arrow record batches through the Arrow PyCapsule stream
    interface, read once; ``books()`` once it was read to its end."""

    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object: ...
    def __arrow_c_schema__(self) -> object: ...
    def books(self) -> Optional[str]: ...
    def close(self) -> None: ...


def _limits(where_timeout: Any, where_max_memory: Any) -> Tuple[Optional[float], Optional[int]]:
    """``where``'s limits, as ``--where-timeout`` and ``--where-max-memory`` take them."""
    if where_timeout is not None:
        if isinstance(where_timeout, bool) or not isinstance(where_timeout, (int, float)):
            raise TypeError(f"where_timeout: expected seconds (a number), not {_type_name(where_timeout)}")
        if not 0 <= where_timeout < 1e9:
            raise ValueError(f"where_timeout: {where_timeout} is not a number of seconds from 0 (no limit)")
    return where_timeout, _count("where_max_memory", where_max_memory, low=0)


@dataclass(frozen=True)
class Diagnostic:
    """One broken rule (an error) or one warning: its code, the JSON pointer of the member,
    the message, and the byte offset in the line where it was found (when known)."""

    code: str
    pointer: str
    message: str
    offset: Optional[int] = None


@dataclass(frozen=True)
class CheckResult:
    """What :func:`check` found. ``envelope`` holds the envelope's members (decoded JSON)
    when the line is valid, else ``None``."""

    valid: bool
    version: Optional[int]
    errors: List[Diagnostic]
    warnings: List[Diagnostic]
    envelope: Optional[Dict[str, Any]] = None

    def __bool__(self) -> bool:
        return self.valid


@dataclass(frozen=True)
class Validation:
    """What :func:`validate` found: the run's books (as ``validate --summary`` writes them)
    and the diagnostics, one row per error or warning, as an Arrow table."""

    books: Dict[str, Any]
    diagnostics: Table

    @property
    def valid(self) -> bool:
        """Whether every line was valid (``validate``'s status 0)."""
        return bool(self.books["rejected"] == 0)


@dataclass(frozen=True)
class Filtered:
    """What :func:`filter` did: the books, how many lines the ``where`` expression could not be
    evaluated on (dropped, as ``filter`` drops them), and whether ``limit`` was reached (the
    lines after it left out, reading stopped early)."""

    books: Dict[str, Any]
    where_errors: int = 0
    limit_reached: bool = False

    @property
    def matched(self) -> int:
        """The lines kept (written to ``dest``, or only counted)."""
        return int(self.books["emitted"])


def _type_name(value: Any) -> str:
    return type(value).__name__


def _count(name: str, value: Any, *, low: int = 1, high: Optional[int] = None) -> Optional[int]:
    """A whole number argument (not a bool), within bounds, or None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}: expected an int, not {_type_name(value)}")
    # Every count the native module takes is a 64-bit integer: none goes past 2**63 - 1.
    high = (1 << 63) - 1 if high is None else high
    if value < low or value > high:
        raise ValueError(f"{name}: {value} is out of range (from {low} to {high})")
    return value


def _path(name: str, value: Any) -> Optional[str]:
    if value is None:
        return None
    if isinstance(value, (str, os.PathLike)):
        path = os.fsdecode(os.fspath(value))
        if not path or "\0" in path:
            raise ValueError(f"{name}: {path!r} is not a path")
        return path
    raise TypeError(f"{name}: expected a path (str or os.PathLike), not {_type_name(value)}")


def _strings(name: str, value: Any, *, allowed: Optional[Sequence[str]] = None) -> List[str]:
    """A string or a list of strings, as a list (checked against ``allowed``, upper-cased)."""
    if value is None:
        return []
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, (list, tuple)) or not all(isinstance(v, str) for v in values):
        raise TypeError(f"{name}: expected a str or a list of str, not {_type_name(value)}")
    if allowed is None:
        return list(values)
    upper = [v.upper() for v in values]
    for v in upper:
        if v not in allowed:
            raise ValueError(f"{name}: {v!r} is not one of {', '.join(allowed)}")
    return upper


def _inputs(source: Source) -> List[Tuple[str, Any, Optional[str]]]:
    """The inputs, each as the native module takes it."""
    if isinstance(source, (str, os.PathLike)):
        return [("path", _path("source", source), None)]
    if isinstance(source, (bytes, bytearray, memoryview)):
        return [("bytes", bytes(source), "<bytes>")]
    if isinstance(source, io.TextIOBase):
        raise TypeError("source: a text file object; open the file in binary mode ('rb')")
    if hasattr(source, "read"):
        return [("file", source, str(getattr(source, "name", "<stream>")))]
    if isinstance(source, (list, tuple)):
        if not source:
            raise ValueError("source: an empty list: give at least one input")
        inputs = []
        for item in source:
            if isinstance(item, (list, tuple)):
                raise TypeError("source: a list inside the list of inputs")
            inputs.extend(_inputs(item))
        return inputs
    raise TypeError(
        "source: expected a path, an s3:// or http(s):// URL, a list of them, bytes or a "
        f"binary file object, not {_type_name(source)}"
    )


def _queue_limits(value: Any) -> Optional[Dict[str, int]]:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise TypeError(f"queue_limits: expected a dict of queue to bytes, not {_type_name(value)}")
    return {str(k): _count(f"queue_limits[{k!r}]", v) for k, v in value.items()}  # type: ignore[misc]


def _common(
    source: Source,
    *,
    threads: Any,
    rejects: Any,
    max_line_bytes: Any,
    max_envelope_bytes: Any,
    queue_limits: Any,
    require_version: Any,
) -> Dict[str, Any]:
    return {
        "inputs": _inputs(source),
        "threads": _count("threads", threads, high=256),
        "rejects": _path("rejects", rejects),
        "max_line_bytes": _count("max_line_bytes", max_line_bytes),
        "max_envelope_bytes": _count("max_envelope_bytes", max_envelope_bytes),
        "queue_limits": _queue_limits(queue_limits),
        "require_version": _count("require_version", require_version, high=2),
    }


def _predicates(arguments: Mapping[str, Any]) -> Dict[str, Any]:
    """The predicates among a function's ``arguments`` (its ``locals()``), checked, as the
    native module takes them: the same names as ``filter``'s flags."""
    status, queue, handler, id, error_type, last_error_type, outcome, where = (
        arguments[name]
        for name in ("status", "queue", "handler", "id", "error_type", "last_error_type", "outcome", "where")
    )
    min_attempts, max_attempts, min_redrives, payload_contains = (
        arguments[name] for name in ("min_attempts", "max_attempts", "min_redrives", "payload_contains")
    )
    since, until, failed_since, failed_until, header, fingerprint, error_message = (
        arguments[name]
        for name in ("since", "until", "failed_since", "failed_until", "header", "fingerprint", "error_message")
    )
    if where is not None and not isinstance(where, str):
        raise TypeError(f"where: expected a jq expression (str), not {_type_name(where)}")
    low_high = (_count("min_attempts", min_attempts, low=0), _count("max_attempts", max_attempts, low=0))
    if low_high[0] is not None and low_high[1] is not None and low_high[0] > low_high[1]:
        raise ValueError(
            f"min_attempts {low_high[0]} is over max_attempts {low_high[1]}, so no envelope would match"
        )
    return {
        "status": _strings("status", status, allowed=STATUSES),
        "queue": _strings("queue", queue),
        "handler": _strings("handler", handler),
        "id": _strings("id", id),
        "error_type": _strings("error_type", error_type),
        "last_error_type": _strings("last_error_type", last_error_type),
        "outcome": _strings("outcome", outcome, allowed=OUTCOMES),
        "min_attempts": low_high[0],
        "max_attempts": low_high[1],
        "min_redrives": _count("min_redrives", min_redrives, low=0, high=2**32 - 1),
        "payload_contains": _strings("payload_contains", payload_contains),
        "where": where,
        "since": _time("since", since),
        "until": _time("until", until),
        "failed_since": _time("failed_since", failed_since),
        "failed_until": _time("failed_until", failed_until),
        "header": _headers(header),
        "fingerprint": _strings("fingerprint", fingerprint),
        "error_message": _strings("error_message", error_message),
    }


def _time(name: str, value: Any) -> Optional[str]:
    """A time as the command line's time flags take it: a str in any of their forms (a
    timestamp, a date, RFC 3339 with an offset, or `2h`, `3d` before now), or an aware
    datetime."""
    if value is None:
        return None
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            raise ValueError(f"{name}: a datetime without a time zone; give tzinfo (UTC)")
        utc = value.astimezone(datetime.timezone.utc)
        return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, str):
        return value
    raise TypeError(f"{name}: expected a str, a date or an aware datetime, not {_type_name(value)}")


def _headers(value: Any) -> List[Tuple[str, str]]:
    if value is None:
        return []
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise TypeError("header: expected a dict of header key to glob (str to str)")
    return list(value.items())


def _diagnostics(items: List[Dict[str, Any]]) -> List[Diagnostic]:
    return [Diagnostic(d["code"], d["pointer"], d["message"], d["offset"]) for d in items]


def check(
    line: Union[bytes, bytearray, memoryview, str],
    *,
    submit: bool = False,
    require_version: Optional[int] = None,
    warnings: bool = True,
    max_envelope_bytes: Optional[int] = None,
    queue_limits: Optional[Mapping[str, int]] = None,
) -> CheckResult:
    """Judges one line (one JSON object, without its line feed) by every rule.

    ``submit`` judges it as the submit subset; ``require_version`` refuses lines of another
    version; ``warnings=False`` skips the warnings; ``max_envelope_bytes`` and
    ``queue_limits`` are the size limits (as ``--max-envelope-bytes`` and ``--queue-limit``).
    """
    if isinstance(line, str):
        data = line.encode("utf-8", "surrogatepass")
    elif isinstance(line, (bytes, bytearray, memoryview)):
        data = bytes(line)
    else:
        raise TypeError(f"line: expected bytes or str, not {_type_name(line)}")
    if data.endswith(b"\n"):
        data = data[:-1]
        if data.endswith(b"\r"):
            data = data[:-1]
    if not isinstance(submit, bool) or not isinstance(warnings, bool):
        raise TypeError("submit and warnings: expected a bool")
    result = _native.check(
        data,
        submit,
        _count("require_version", require_version, high=2),
        warnings,
        _count("max_envelope_bytes", max_envelope_bytes),
        _queue_limits(queue_limits),
    )
    envelope = json.loads(data) if result["valid"] and not submit else None
    return CheckResult(
        valid=result["valid"],
        version=result["version"],
        errors=_diagnostics(result["errors"]),
        warnings=_diagnostics(result["warnings"]),
        envelope=envelope,
    )


def read(
    source: Source,
    *,
    columns: Optional[Sequence[str]] = None,
    status: Any = None,
    queue: Any = None,
    handler: Any = None,
    id: Any = None,
    error_type: Any = None,
    last_error_type: Any = None,
    outcome: Any = None,
    min_attempts: Optional[int] = None,
    max_attempts: Optional[int] = None,
    min_redrives: Optional[int] = None,
    payload_contains: Any = None,
    where: Optional[str] = None,
    since: Any = None,
    until: Any = None,
    failed_since: Any = None,
    failed_until: Any = None,
    header: Optional[Mapping[str, str]] = None,
    fingerprint: Any = None,
    error_message: Any = None,
    where_timeout: Optional[float] = None,
    where_max_memory: Optional[int] = None,
    rejects: Any = None,
    threads: Optional[int] = None,
    max_line_bytes: Optional[int] = None,
    max_envelope_bytes: Optional[int] = None,
    queue_limits: Optional[Mapping[str, int]] = None,
    require_version: Optional[int] = None,
) -> ArrowStream:
    """The valid envelopes of ``source`` as Arrow record batches, with the columns and types of
    ``export --format parquet`` (``columns``: its ``--fields`` names; the same default).

    The predicates (``status``, ``queue``, ... ``where``) keep only the envelopes ``filter``
    would keep. Invalid lines go to ``rejects`` (a path) as reject records. The result is a
    stream read once through the Arrow PyCapsule interface: ``pyarrow.table(r)``,
    ``polars.DataFrame(r)``, ``duckdb.sql("FROM r")``; ``r.books()`` once it is read.
    """
    if columns is not None:
        columns = _strings("columns", columns)
        if not columns:
            raise ValueError("columns: an empty list: give at least one column")
    predicates = _predicates(locals())
    any_predicate = any(v not in (None, []) for v in predicates.values())
    common = _common(
        source,
        threads=threads,
        rejects=rejects,
        max_line_bytes=max_line_bytes,
        max_envelope_bytes=max_envelope_bytes,
        queue_limits=queue_limits,
        require_version=require_version,
    )
    columns = None if columns is None else list(columns)
    if predicates["where"] is not None:
        return _read_where(common, columns, predicates, _limits(where_timeout, where_max_memory))
    return _native.read(common, columns, predicates if any_predicate else None)


def _read_where(
    common: Dict[str, Any],
    columns: Optional[List[str]],
    predicates: Dict[str, Any],
    limits: Tuple[Optional[float], Optional[int]],
) -> ArrowStream:
    """``read`` with ``where``: the command line keeps the lines (in a process of its own,
    under where's limits), and the module reads what it kept."""
    _native.compile_where(predicates["where"])
    argv = _where.filter_argv(common, predicates, where_timeout=limits[0], where_max_memory=limits[1])
    if common["rejects"] is not None:
        argv += ["--rejects", common["rejects"]]
    lines = _where.Lines(_where.Child(argv, common["inputs"], subprocess.PIPE))
    kept = {**common, "inputs": [("file", lines, "<where>")], "rejects": None, "require_version": None}
    return _where.WhereStream(_native.read(kept, columns, None), lines)


def validate(
    source: Source,
    *,
    submit: bool = False,
    warnings: bool = False,
    valid_out: Any = None,
    rejects: Any = None,
    threads: Optional[int] = None,
    max_line_bytes: Optional[int] = None,
    max_envelope_bytes: Optional[int] = None,
    queue_limits: Optional[Mapping[str, int]] = None,
    require_version: Optional[int] = None,
) -> Validation:
    """Every line of ``source`` judged by every rule: the books and the diagnostics.

    ``submit`` judges the lines as the submit subset (as ``--submit``; not with
    ``require_version``); ``warnings`` also reports the valid lines' warnings (as ``--warnings``); ``valid_out``
    writes the valid lines, byte for byte (as ``--valid-out``); ``rejects`` writes reject
    records.
    """
    if not isinstance(warnings, bool):
        raise TypeError(f"warnings: expected a bool, not {_type_name(warnings)}")
    if not isinstance(submit, bool):
        raise TypeError(f"submit: expected a bool, not {_type_name(submit)}")
    common = _common(
        source,
        threads=threads,
        rejects=rejects,
        max_line_bytes=max_line_bytes,
        max_envelope_bytes=max_envelope_bytes,
        queue_limits=queue_limits,
        require_version=require_version,
    )
    books, table = _native.validate(common, warnings, _path("valid_out", valid_out), submit)
    return Validation(books=json.loads(books), diagnostics=table)


def migrate(
    source: Source,
    dest: Union[str, "os.PathLike[str]"],
    *,
    to: int,
    rejects: Any = None,
    threads: Optional[int] = None,
    max_line_bytes: Optional[int] = None,
    max_envelope_bytes: Optional[int] = None,
    queue_limits: Optional[Mapping[str, int]] = None,
) -> Dict[str, Any]:
    """Every valid line of ``source`` migrated to ``envelope_version`` ``to`` (1 or 2) into
    ``dest`` (``.zst``/``.gz`` compressed by its name, ``s3://`` too), atomically; the books."""
    dest_path = _path("dest", dest)
    common = _common(
        source,
        threads=threads,
        rejects=rejects,
        max_line_bytes=max_line_bytes,
        max_envelope_bytes=max_envelope_bytes,
        queue_limits=queue_limits,
        require_version=None,
    )
    books = _native.migrate(common, dest_path, _count("to", to, high=2))
    return dict(json.loads(books))


def filter(  # noqa: A001 - the command's name
    source: Source,
    dest: Any = None,
    *,
    status: Any = None,
    queue: Any = None,
    handler: Any = None,
    id: Any = None,
    error_type: Any = None,
    last_error_type: Any = None,
    outcome: Any = None,
    min_attempts: Optional[int] = None,
    max_attempts: Optional[int] = None,
    min_redrives: Optional[int] = None,
    payload_contains: Any = None,
    where: Optional[str] = None,
    since: Any = None,
    until: Any = None,
    failed_since: Any = None,
    failed_until: Any = None,
    header: Optional[Mapping[str, str]] = None,
    fingerprint: Any = None,
    error_message: Any = None,
    where_timeout: Optional[float] = None,
    where_max_memory: Optional[int] = None,
    invert: bool = False,
    limit: Optional[int] = None,
    rejects: Any = None,
    threads: Optional[int] = None,
    max_line_bytes: Optional[int] = None,
    max_envelope_bytes: Optional[int] = None,
    queue_limits: Optional[Mapping[str, int]] = None,
    require_version: Optional[int] = None,
) -> Filtered:
    """The valid lines every predicate matches (none of, with ``invert``), byte for byte, into
    ``dest``; without ``dest`` they are only counted (as ``filter --count``). ``limit`` keeps
    the first so many and stops reading (as ``--limit``)."""
    if not isinstance(invert, bool):
        raise TypeError(f"invert: expected a bool, not {_type_name(invert)}")
    predicates = _predicates(locals())
    common = _common(
        source,
        threads=threads,
        rejects=rejects,
        max_line_bytes=max_line_bytes,
        max_envelope_bytes=max_envelope_bytes,
        queue_limits=queue_limits,
        require_version=require_version,
    )
    dest_path, lines = _path("dest", dest), _count("limit", limit)
    if predicates["where"] is not None:
        books = _filter_where(common, predicates, dest_path, invert, lines, _limits(where_timeout, where_max_memory))
    else:
        books_json, notes_json = _native.filter(common, dest_path, predicates, invert, lines)
        # The notes join the books, as in the command line's --summary file.
        books = {**json.loads(books_json), **json.loads(notes_json)}
    return Filtered(
        books=books,
        where_errors=int(books.get("where_errors", 0)),
        limit_reached=bool(books.get("limit_reached", False)),
    )


def _filter_where(
    common: Dict[str, Any],
    predicates: Dict[str, Any],
    dest: Optional[str],
    invert: bool,
    limit: Optional[int],
    limits: Tuple[Optional[float], Optional[int]],
) -> Dict[str, Any]:
    """``filter`` with ``where``: the command line's run, in a process of its own, under
    where's limits; its books."""
    _native.compile_where(predicates["where"])
    argv = _where.filter_argv(common, predicates, where_timeout=limits[0], where_max_memory=limits[1])
    argv += ["--invert"] if invert else []
    argv += ["--limit", str(limit)] if limit is not None else []
    argv += ["-o", dest] if dest is not None else ["--count", "-o", os.devnull]
    if common["rejects"] is not None:
        argv += ["--rejects", common["rejects"]]
    return _where.Child(argv, common["inputs"], subprocess.DEVNULL).wait()


def stats(
    source: Source,
    *,
    by: str = "queue",
    top: int = 10,
    rejects: Any = None,
    threads: Optional[int] = None,
    max_line_bytes: Optional[int] = None,
    max_envelope_bytes: Optional[int] = None,
    queue_limits: Optional[Mapping[str, int]] = None,
    require_version: Optional[int] = None,
) -> Dict[str, Any]:
    """The report of ``stats --format json``: the valid envelopes grouped ``by`` one of
    :data:`GROUP_BY`, the ``top`` groups, with the books' counts."""
    if not isinstance(by, str):
        raise TypeError(f"by: expected a str, not {_type_name(by)}")
    if by.replace("-", "_") not in GROUP_BY:
        raise ValueError(f"by: {by!r} is not one of {', '.join(GROUP_BY)}")
    common = _common(
        source,
        threads=threads,
        rejects=rejects,
        max_line_bytes=max_line_bytes,
        max_envelope_bytes=max_envelope_bytes,
        queue_limits=queue_limits,
        require_version=require_version,
    )
    report = _native.stats(common, by, _count("top", top))
    return dict(json.loads(report))
