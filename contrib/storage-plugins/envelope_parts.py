"""An envelope line taken apart into what a store keeps in typed columns, and put back together.

Both reference plugins (sqlite/store.py, postgres/store.py) use this module; only the tables
differ. `split(line)` gives an `Envelope`: the known members as Python values (ints, strs,
bytes) and every unknown member, at every level, as a *residual*: the exact JSON text of the
object's unknown members, in their order (`{"x_a":1e2,"x_b":"\\u00e9"}`), or None when there
is none. `join(envelope)` writes the line back in the canonical form (docs/library.md#the-
canonical-form): the known members in the contract's order, each string escaped one way,
then each object's unknown members in their order and spelling. A store that keeps the
residual's text as it was given gets back the same bytes (`compliance run --exact` passes);
one that rewrites it (PostgreSQL's jsonb) shows the kit what it changed.

Why raw text: `json.loads` turns `1e2` into 100.0, `-0` into 0 and `"\\u00e9"` into "é", and a
20-digit integer is only kept because Python's ints are unbounded. The scanner below asks
`json.JSONDecoder.raw_decode` where each member's value ends and keeps the text in between.

Optional members have three states: absent (`ABSENT`), `null` (None) and set.
"""

import base64
import json
import re

ABSENT = type("Absent", (), {"__repr__": lambda self: "ABSENT", "__bool__": lambda self: False})()

# parse_int/parse_float=str: the values are only scanned (we keep their text), and str keeps
# Python from converting a 5,000-digit integer (refused past sys.get_int_max_str_digits()).
_DECODER = json.JSONDecoder(parse_int=str, parse_float=str)
_WHITE = " \t\n\r"

# The known members of each object, by envelope version. Anything else is unknown and goes
# to the object's residual; in version 1, `origin` and an attempt's `duration_ms` are unknown.
_TOP = {
    1: {"envelope_version", "id", "queue", "handler_ref", "handler_version", "payload",
        "payload_content_type", "payload_ref", "headers", "status", "attempt_count",
        "redrive_count", "next_attempt_at", "lease_expires_at", "created_at", "attempts"},
}
_TOP[2] = _TOP[1] | {"origin"}
_ATTEMPT = {1: {"attempt_no", "started_at", "finished_at", "outcome", "error"}}
_ATTEMPT[2] = _ATTEMPT[1] | {"duration_ms"}
_ERROR = {"type", "message", "detail", "stack"}
_PAYLOAD_REF = {"uri", "sha256", "size"}
_ORIGIN = {"source", "submitted_by"}

TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\Z")


def input_lines(stream):
    """(line number, line) of each non-blank line of a binary stream of JSON Lines: split at LF
    only (a CR inside a line is JSON white space), a CR before the LF dropped."""
    for number, raw in enumerate(stream, 1):
        raw = raw.rstrip(b"\n").removesuffix(b"\r")
        if raw.strip(b" \t\r"):
            try:
                yield number, raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise SystemExit(f"line {number}: not UTF-8: {e}")


def _skip(text, at):
    while at < len(text) and text[at] in _WHITE:
        at += 1
    return at


def _expect(text, at, char):
    if at >= len(text) or text[at] != char:
        raise ValueError(f"expected {char!r} at character {at}")
    return at + 1


def members(text):
    """[(key, key's raw text, value's raw text)] of the JSON object `text`, in order."""
    found = []
    at = _expect(text, _skip(text, 0), "{")
    at = _skip(text, at)
    if at < len(text) and text[at] == "}":
        return found, at + 1
    while True:
        key, end = _DECODER.raw_decode(text, at)
        raw_key = text[at:end]
        at = _skip(text, _expect(text, _skip(text, end), ":"))
        _, end = _DECODER.raw_decode(text, at)
        found.append((key, raw_key, text[at:end]))
        at = _skip(text, end)
        if at < len(text) and text[at] == ",":
            at = _skip(text, at + 1)
            continue
        return found, _expect(text, at, "}")


def elements(text):
    """The raw texts of the JSON array `text`'s elements, in order."""
    found = []
    at = _skip(text, _expect(text, _skip(text, 0), "["))
    if at < len(text) and text[at] == "]":
        return found
    while True:
        _, end = _DECODER.raw_decode(text, at)
        found.append(text[at:end])
        at = _skip(text, end)
        if at < len(text) and text[at] == ",":
            at = _skip(text, at + 1)
            continue
        _expect(text, at, "]")
        return found


def _object(text, known):
    """The known members' raw values by key, and the residual of the others (or None)."""
    fields, end = members(text)
    if text[end:].strip(_WHITE):
        raise ValueError(f"text after the object at character {end}")
    values, unknown = {}, []
    for key, raw_key, raw in fields:
        if key in known:
            values[key] = raw
        else:
            unknown.append(f"{raw_key}:{raw}")
    return values, ("{" + ",".join(unknown) + "}" if unknown else None)


def residual_members(residual):
    """A residual's members as `"key":value` texts, in the order the store gave them back."""
    if residual is None:
        return []
    return [f"{raw_key}:{raw}" for _, raw_key, raw in members(residual)[0]]


def _string(raw):
    value = json.loads(raw)
    if not isinstance(value, str):
        raise ValueError(f"a string expected, not {raw[:40]}")
    return value


def _optional(values, key, read):
    """ABSENT, None (for `null`) or `read(raw)`."""
    if key not in values:
        return ABSENT
    raw = values[key]
    return None if raw == "null" else read(raw)


def _int(raw):
    # A JSON integer: no fraction, no exponent (the contract); `-0` is 0.
    if not re.fullmatch(r"-?\d+", raw):
        raise ValueError(f"an integer expected, not {raw[:40]}")
    return int(raw)


class Envelope:
    """One envelope's members; see `split` for what each attribute holds."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


def split(line):
    """The envelope of one valid line (str), its unknown members kept as residuals. A line
    that is not an envelope raises ValueError."""
    try:
        return _split(line)
    except KeyError as e:
        raise ValueError(f"the member {e} is missing") from None
    except (TypeError, AttributeError) as e:
        raise ValueError(f"a member of the wrong type ({e})") from None


def _split(line):
    top, residual = _object(line, _TOP[2])
    version = _int(top["envelope_version"])
    if version not in _TOP:
        raise ValueError(f"envelope_version {version} is not 1 or 2")
    if version == 1 and "origin" in top:
        # In version 1, `origin` is an unknown member like any other: split again with the
        # version's own set, which keeps the unknown members' order.
        top, residual = _object(line, _TOP[1])
    return Envelope(
        version=version,
        id=_string(top["id"]),
        queue=_string(top["queue"]),
        handler_ref=_string(top["handler_ref"]),
        handler_version=_optional(top, "handler_version", _string),
        payload=_optional(top, "payload", _base64),
        payload_content_type=_string(top["payload_content_type"]),
        payload_ref=_optional(top, "payload_ref", _payload_ref),
        headers=[(key, _string(raw)) for key, _, raw in members(top["headers"])[0]],
        origin=_origin(top["origin"]) if "origin" in top else ABSENT,
        status=_string(top["status"]),
        attempt_count=_int(top["attempt_count"]),
        redrive_count=_int(top["redrive_count"]),
        next_attempt_at=_optional(top, "next_attempt_at", _string),
        lease_expires_at=_optional(top, "lease_expires_at", _string),
        created_at=_string(top["created_at"]),
        attempts=[_attempt(raw, version) for raw in elements(top["attempts"])],
        residual=residual,
    )


def _base64(raw):
    return base64.b64decode(_string(raw), validate=True)


def _payload_ref(raw):
    values, residual = _object(raw, _PAYLOAD_REF)
    return Envelope(uri=_string(values["uri"]), sha256=_string(values["sha256"]),
                    size=_int(values["size"]), residual=residual)


def _origin(raw):
    values, residual = _object(raw, _ORIGIN)
    return Envelope(source=_optional(values, "source", _string),
                    submitted_by=_optional(values, "submitted_by", _string), residual=residual)


def _attempt(raw, version):
    values, residual = _object(raw, _ATTEMPT[version])
    return Envelope(
        attempt_no=_int(values["attempt_no"]),
        started_at=_string(values["started_at"]),
        finished_at=_optional(values, "finished_at", _string),
        duration_ms=_optional(values, "duration_ms", _int),
        outcome=_optional(values, "outcome", _string),
        error=_optional(values, "error", _error),
        residual=residual,
    )


def _error(raw):
    values, residual = _object(raw, _ERROR)
    return Envelope(
        type=_string(values["type"]),
        message=_string(values["message"]),
        # `detail` is any JSON value, kept as text like a residual (`null` is a value here).
        detail=values.get("detail", ABSENT),
        stack=_optional(values, "stack", _string),
        residual=residual,
    )


# The columns both stores have, by table (their types are each store's: see its SCHEMA). A
# tri-state member takes two columns: SQL's NULL alone cannot tell an absent member from a
# `null` one, so `has_X` says whether it was there. A residual column holds JSON text.
ENVELOPE_COLUMNS = (
    "id", "envelope_version", "queue", "handler_ref", "has_handler_version", "handler_version",
    "payload", "payload_content_type", "has_payload_ref", "payload_ref_uri", "payload_ref_sha256",
    "payload_ref_size", "payload_ref_residual", "origin_source", "origin_submitted_by",
    "origin_residual", "status", "attempt_count", "redrive_count", "next_attempt_at",
    "lease_expires_at", "created_at", "residual",
)
HEADER_COLUMNS = ("envelope_id", "ordinal", "key", "value")
ATTEMPT_COLUMNS = (
    "envelope_id", "ordinal", "attempt_no", "started_at", "finished_at", "duration_ms", "outcome",
    "has_error", "error_type", "error_message", "error_detail", "has_stack", "error_stack",
    "error_residual", "residual",
)
TIMESTAMP_COLUMNS = {"next_attempt_at", "lease_expires_at", "created_at", "started_at",
                     "finished_at"}
RESIDUAL_COLUMNS = {"residual", "payload_ref_residual", "origin_residual", "error_detail",
                    "error_residual"}


def _value(optional):
    """An optional member's column value: None for absent and for null alike."""
    return None if optional is ABSENT else optional


def to_rows(e):
    """An `Envelope` as rows (dicts by column name): its envelope row, its headers' rows in
    order, its attempts' rows in order. `payload_ref_size` is a decimal string: 2^64-1 fits
    neither SQLite's INTEGER nor PostgreSQL's bigint."""
    ref = e.payload_ref if e.payload_ref else None
    origin = e.origin if e.origin is not ABSENT else None
    envelope = {
        "id": e.id, "envelope_version": e.version, "queue": e.queue, "handler_ref": e.handler_ref,
        "has_handler_version": e.handler_version is not ABSENT,
        "handler_version": _value(e.handler_version), "payload": _value(e.payload),
        "payload_content_type": e.payload_content_type,
        "has_payload_ref": e.payload_ref is not ABSENT,
        "payload_ref_uri": ref and ref.uri, "payload_ref_sha256": ref and ref.sha256,
        "payload_ref_size": ref and str(ref.size), "payload_ref_residual": ref and ref.residual,
        "origin_source": origin and _value(origin.source),
        "origin_submitted_by": origin and _value(origin.submitted_by),
        "origin_residual": origin and origin.residual,
        "status": e.status, "attempt_count": e.attempt_count, "redrive_count": e.redrive_count,
        "next_attempt_at": e.next_attempt_at, "lease_expires_at": e.lease_expires_at,
        "created_at": e.created_at, "residual": e.residual,
    }
    headers = [{"envelope_id": e.id, "ordinal": i, "key": k, "value": v}
               for i, (k, v) in enumerate(e.headers)]
    attempts = []
    for i, a in enumerate(e.attempts):
        error = a.error if a.error else None
        attempts.append({
            "envelope_id": e.id, "ordinal": i, "attempt_no": a.attempt_no,
            "started_at": a.started_at, "finished_at": a.finished_at,
            "duration_ms": _value(a.duration_ms), "outcome": a.outcome,
            "has_error": a.error is not ABSENT,
            "error_type": error and error.type, "error_message": error and error.message,
            "error_detail": error and _value(error.detail),
            "has_stack": bool(error) and error.stack is not ABSENT,
            "error_stack": error and _value(error.stack),
            "error_residual": error and error.residual, "residual": a.residual,
        })
    return envelope, headers, attempts


def _tri(present, value):
    """ABSENT, None or the value, from a `has_X` column and its value column."""
    return value if present else ABSENT


def from_rows(row, headers, attempts):
    """The `Envelope` of an envelope row, its headers' rows and its attempts' rows (each list
    in its `ordinal` order), as `to_rows` made them."""
    version = int(row["envelope_version"])
    ref = None
    if row["payload_ref_uri"] is not None:
        ref = Envelope(uri=row["payload_ref_uri"], sha256=row["payload_ref_sha256"],
                       size=int(row["payload_ref_size"]), residual=row["payload_ref_residual"])
    origin = ABSENT
    if version >= 2:
        origin = Envelope(
            source=_tri(row["origin_source"] is not None, row["origin_source"]),
            submitted_by=_tri(row["origin_submitted_by"] is not None, row["origin_submitted_by"]),
            residual=row["origin_residual"])
    return Envelope(
        version=version, id=row["id"], queue=row["queue"], handler_ref=row["handler_ref"],
        handler_version=_tri(row["has_handler_version"], row["handler_version"]),
        payload=ABSENT if row["payload"] is None else bytes(row["payload"]),
        payload_content_type=row["payload_content_type"],
        payload_ref=_tri(row["has_payload_ref"], ref),
        headers=[(h["key"], h["value"]) for h in headers],
        origin=origin, status=row["status"], attempt_count=int(row["attempt_count"]),
        redrive_count=int(row["redrive_count"]), next_attempt_at=row["next_attempt_at"],
        lease_expires_at=row["lease_expires_at"], created_at=row["created_at"],
        attempts=[_attempt_from_row(a, version) for a in attempts], residual=row["residual"])


def _attempt_from_row(a, version):
    error = None
    if a["error_type"] is not None:
        error = Envelope(
            type=a["error_type"], message=a["error_message"],
            detail=ABSENT if a["error_detail"] is None else a["error_detail"],
            stack=_tri(a["has_stack"], a["error_stack"]), residual=a["error_residual"])
    # Version 2's `duration_ms` is always there (null while in flight); version 1 has none.
    duration = ABSENT
    if version >= 2:
        duration = None if a["duration_ms"] is None else int(a["duration_ms"])
    return Envelope(
        attempt_no=int(a["attempt_no"]), started_at=a["started_at"], finished_at=a["finished_at"],
        duration_ms=duration, outcome=a["outcome"], error=_tri(a["has_error"], error),
        residual=a["residual"])


def string(text):
    """`text` as a JSON string the way the canonical writer escapes it: `"` and `\\`, then
    \\b \\t \\n \\f \\r, other characters below U+0020 as \\u00XX (lower-case hex), nothing else."""
    return json.dumps(text, ensure_ascii=False)


def join(e):
    """The canonical line (no line terminator) of an `Envelope` read back from a store."""
    out = [f'"envelope_version":{e.version}', f'"id":{string(e.id)}', f'"queue":{string(e.queue)}',
           f'"handler_ref":{string(e.handler_ref)}']
    _put(out, "handler_version", e.handler_version, string)
    _put(out, "payload", e.payload, lambda b: string(base64.b64encode(b).decode("ascii")))
    out.append(f'"payload_content_type":{string(e.payload_content_type)}')
    _put(out, "payload_ref", e.payload_ref, lambda r: _braces(
        [f'"uri":{string(r.uri)}', f'"sha256":{string(r.sha256)}', f'"size":{r.size}'], r.residual))
    out.append('"headers":' + _braces([f"{string(k)}:{string(v)}" for k, v in e.headers], None))
    _put(out, "origin", e.origin, _join_origin)
    out += [f'"status":{string(e.status)}', f'"attempt_count":{e.attempt_count}',
            f'"redrive_count":{e.redrive_count}']
    _put(out, "next_attempt_at", e.next_attempt_at, string)
    _put(out, "lease_expires_at", e.lease_expires_at, string)
    out.append(f'"created_at":{string(e.created_at)}')
    out.append('"attempts":[' + ",".join(_join_attempt(a) for a in e.attempts) + "]")
    return _braces(out, e.residual)


def _put(out, key, value, write):
    if value is not ABSENT:
        out.append(f'"{key}":' + ("null" if value is None else write(value)))


def _braces(known, residual):
    return "{" + ",".join(known + residual_members(residual)) + "}"


def _join_origin(o):
    out = []
    _put(out, "source", o.source, string)
    _put(out, "submitted_by", o.submitted_by, string)
    return _braces(out, o.residual)


def _join_attempt(a):
    out = [f'"attempt_no":{a.attempt_no}', f'"started_at":{string(a.started_at)}']
    _put(out, "finished_at", a.finished_at, string)
    _put(out, "duration_ms", a.duration_ms, str)
    _put(out, "outcome", a.outcome, string)
    _put(out, "error", a.error, _join_error)
    return _braces(out, a.residual)


def _join_error(r):
    out = [f'"type":{string(r.type)}', f'"message":{string(r.message)}']
    if r.detail is not ABSENT:
        out.append(f'"detail":{r.detail}')
    _put(out, "stack", r.stack, string)
    return _braces(out, r.residual)
