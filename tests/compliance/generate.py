#!/usr/bin/env python3
"""Generate the language-neutral compliance fixtures of rdq-envelope.

Standard library only.  Run from anywhere:

    python3 tests/compliance/generate.py

Every case is written as two files in ``cases/``: ``NAME.line`` (the exact bytes of one input
line, no terminator) and ``NAME.expect.json`` (see README.md).  The expectations below are
written by hand from docs/envelope.md; before anything is written, each one is
cross-checked against a small independent oracle (``oracle()`` below), so that a slip in an
edit (a time that now triggers a warning, a padding that overshoots a limit) fails loudly here
instead of shipping a wrong fixture.  The oracle is a checking aid, not the contract.
"""

import base64
import copy
import json
import os
import random
import re
import shutil
import sys

sys.set_int_max_str_digits(0)

HERE = os.path.dirname(os.path.abspath(__file__))
CASES_DIR = os.path.join(HERE, "cases")

DEFAULT_OPTIONS = {
    "submit": False,
    "require_version": None,
    "max_envelope_bytes": 1048576,
    "queue_limits": {},
    "max_line_bytes": 16777216,
}

# ---------------------------------------------------------------------------------------------
# Building JSON text exactly
# ---------------------------------------------------------------------------------------------


class Raw:
    """JSON text emitted verbatim (numbers like 1e400, hand-written escapes, keys)."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return "Raw(%r)" % self.text[:40]


DEL = object()  # edit sentinel: remove the member


def ser(v):
    """Serialize compactly, keeping dict order; Raw values and Raw keys go out verbatim.

    A dict may hold a Raw key next to an equal plain key: that is how duplicates are written.
    """
    if isinstance(v, Raw):
        return v.text
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        raise TypeError("use Raw for non-integers")
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ",".join(ser(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ",".join(ser(k) + ":" + ser(x) for k, x in v.items()) + "}"
    raise TypeError(type(v))


def line(doc):
    return ser(doc).encode("utf-8")


def _split(path):
    assert path == "" or path.startswith("/"), "not a JSON pointer: %r" % path
    return [] if path == "" else path[1:].split("/")


def mod(base, edits):
    """Deep-copy base and apply {"/json/pointer": value-or-DEL} edits in order.

    Replacing a member keeps its position; a new member is appended at the end of its object.
    """
    d = copy.deepcopy(base)
    for path, value in edits.items():
        parts = _split(path)
        parent = d
        for p in parts[:-1]:
            parent = parent[int(p)] if isinstance(parent, list) else parent[p]
        last = parts[-1]
        if isinstance(parent, list):
            if value is DEL:
                del parent[int(last)]
            else:
                parent[int(last)] = value
        else:
            if value is DEL:
                del parent[last]
            else:
                parent[last] = value
    return d


def get(doc, path):
    for p in _split(path):
        doc = doc[int(p)] if isinstance(doc, list) else doc[p]
    return doc


def rename(d, old, new):
    """A copy of dict d with key old replaced by new (a str or a Raw key) in place."""
    return {(new if k == old else k): v for k, v in d.items()}


def insert_after(d, after, key, value):
    out = {}
    for k, v in d.items():
        out[k] = v
        if k == after:
            out[key] = value
    return out


def ptr(*parts):
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def filler(n, seed="lorem ipsum dolor sit amet consectetur adipiscing elit "):
    s = (seed * (n // len(seed) + 1))[:n]
    assert len(s.encode()) == n
    return s


def padded(doc, n, key="x_archive_note"):
    """doc plus an unknown ASCII string member sized so that the line is exactly n bytes."""
    d = copy.deepcopy(doc)
    d[key] = ""
    need = n - len(line(d))
    assert need >= 0, (n, len(line(d)))
    d[key] = filler(need)
    assert len(line(d)) == n
    return d


def jstr_raw(s):
    """JSON string text for s (escapes as json.dumps would write them, non-ASCII raw)."""
    return json.dumps(s, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------
# ULIDs and timestamps
# ---------------------------------------------------------------------------------------------

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_rng = random.Random(20240315)


def ulid_from_ms(ms, rnd=None):
    if rnd is None:
        rnd = _rng.getrandbits(80)
    n = (ms << 80) | rnd
    return "".join(CROCKFORD[(n >> (5 * (25 - i))) & 31] for i in range(26))


def ulid_ms(u):
    n = 0
    for c in u:
        n = n * 32 + CROCKFORD.index(c)
    return n >> 80


def days_from_civil(y, m, d):
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def civil_from_days(z):
    z += 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return y + (m <= 2), m, d


TS_RE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})\.([0-9]{3})Z")


def leap(y):
    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)


def ts_ms(s):
    """Milliseconds since the epoch of a valid timestamp, else None (the strict profile)."""
    m = TS_RE.fullmatch(s)
    if not m:
        return None
    y, mo, d, h, mi, se, ms = (int(x) for x in m.groups())
    if not (1 <= mo <= 12) or h > 23 or mi > 59 or se > 59:
        return None
    dim = [31, 29 if leap(y) else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1]
    if not (1 <= d <= dim):
        return None
    return ((days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60000 + se * 1000 + ms


def ts(ms):
    days, rem = divmod(ms, 86400000)
    y, m, d = civil_from_days(days)
    h, rem = divmod(rem, 3600000)
    mi, rem = divmod(rem, 60000)
    se, milli = divmod(rem, 1000)
    out = "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ" % (y, m, d, h, mi, se, milli)
    assert ts_ms(out) == ms
    return out


def shift(t, delta_ms):
    return ts(ts_ms(t) + delta_ms)


def b64(obj_or_bytes):
    if not isinstance(obj_or_bytes, bytes):
        obj_or_bytes = json.dumps(obj_or_bytes, separators=(",", ":")).encode()
    return base64.b64encode(obj_or_bytes).decode()


# ---------------------------------------------------------------------------------------------
# The oracle: an independent, deliberately plain reading of docs/envelope.md, used only to
# cross-check the hand-written expectations.  Where the spec is open it follows the choices
# listed in README.md; the cases are built so that they do not depend on the rest.
# ---------------------------------------------------------------------------------------------

ABSENT = object()
U32 = 4294967295
U64 = 18446744073709551615
MARKER = "\u2026[truncated]".encode()
ID_RE = re.compile(r"[0-7][0-9A-HJKMNP-TV-Z]{25}")
NAME_RE = re.compile(r"[a-z0-9._-]{1,240}")
B64_RE = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
_TOKEN = rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_QS = rb'"(?:[\t \x21\x23-\x5b\x5d-\x7e\x80-\xff]|\\[\t \x21-\x7e\x80-\xff])*"'
CT_RE = re.compile(_TOKEN + rb"/" + _TOKEN + rb"(?:[ \t]*;[ \t]*" + _TOKEN + rb"=(?:" + _TOKEN
                   + rb"|" + _QS + rb"))*")
URI_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*")
SHA_RE = re.compile(r"[0-9a-f]{64}")
STATUSES = {1: {"PENDING", "IN_FLIGHT", "SUCCEEDED", "DEAD"},
            2: {"PENDING", "IN_FLIGHT", "SUCCEEDED", "DEAD", "CANCELLED"}}
OUTCOMES = {"SUCCESS", "RETRYABLE_FAILURE", "PERMANENT_FAILURE", "LEASE_EXPIRED"}
SERVER_FIELDS = ["id", "envelope_version", "status", "attempt_count", "redrive_count",
                 "next_attempt_at", "lease_expires_at", "created_at", "attempts"]


class JNum:
    def __init__(self, text, is_int):
        self.text, self.is_int = text, is_int


class Pairs(list):
    pass


def _reject_constant(name):
    raise ValueError("not JSON: " + name)


def is_int(v):
    return isinstance(v, JNum) and v.is_int


def ival(v):
    return int(v.text)


def max_depth(text):
    depth = best = 0
    in_str = esc = False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            best = max(best, depth)
        elif ch in "]}":
            depth -= 1
    return best


def has_surrogate(s):
    return any(0xD800 <= ord(c) <= 0xDFFF for c in s)


def json_layer_walk(v, path, errs):
    if isinstance(v, Pairs):
        seen = set()
        for k, x in v:
            p = path + ptr(k)
            if k in seen:
                errs.append(("DUPLICATE_KEY", p))
            seen.add(k)
            if has_surrogate(k):
                errs.append(("INVALID_UTF8", p))
            json_layer_walk(x, p, errs)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            json_layer_walk(x, path + ptr(i), errs)
    elif isinstance(v, str) and has_surrogate(v):
        errs.append(("INVALID_UTF8", path))


def to_dict(v):
    if isinstance(v, Pairs):
        return {k: to_dict(x) for k, x in v}
    if isinstance(v, list):
        return [to_dict(x) for x in v]
    return v


def trunc_ok(s, limit):
    b = s.encode()
    if len(b) <= limit:
        return True
    return b.endswith(MARKER) and limit - 3 <= len(b) - len(MARKER) <= limit


def b64_ok(s):
    if not B64_RE.fullmatch(s):
        return False
    return base64.b64encode(base64.b64decode(s)).decode() == s


def ct_ok(s):
    b = s.encode()
    return len(b) <= 255 and CT_RE.fullmatch(b) is not None


def hv_ok(s):
    b = s.encode()
    return 1 <= len(b) <= 240 and not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in s)


def oracle(raw, opts):
    o = dict(DEFAULT_OPTIONS, **opts)
    n = len(raw)
    if n > o["max_line_bytes"]:
        return [("LINE_TOO_LONG", "")], []
    assert raw.strip(b" \t\r") != b"", "blank lines are not cases"
    glob, limits = o["max_envelope_bytes"], o["queue_limits"]
    if n > max([glob] + list(limits.values())):
        return [("PAYLOAD_TOO_LARGE", "")], []
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return [("INVALID_UTF8", "")], []
    if max_depth(text) > 128:
        return [("NESTING_TOO_DEEP", "")], []
    try:
        top = json.loads(text, object_pairs_hook=Pairs, parse_int=lambda t: JNum(t, True),
                         parse_float=lambda t: JNum(t, False), parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return [("MALFORMED_JSON", "")], []
    errs = []
    json_layer_walk(top, "", errs)
    if errs:
        return errs, []
    if not isinstance(top, Pairs):
        return [("NOT_AN_OBJECT", "")], []
    doc = to_dict(top)
    E, W = [], []
    q = doc.get("queue")
    limit = limits.get(q, glob) if isinstance(q, str) else glob
    if o["submit"]:
        check_submit(doc, E)
    else:
        ev = doc.get("envelope_version", ABSENT)
        if ev is ABSENT:
            E.append(("MISSING_FIELD", "/envelope_version"))
        elif not is_int(ev):
            E.append(("WRONG_TYPE", "/envelope_version"))
        elif ival(ev) not in (1, 2):
            E.append(("UNSUPPORTED_VERSION", "/envelope_version"))
        else:
            v = ival(ev)
            if o["require_version"] is not None and v != o["require_version"]:
                E.append(("UNSUPPORTED_VERSION", "/envelope_version"))
            check_envelope(doc, v, E, W)
    if n > limit:
        E.append(("PAYLOAD_TOO_LARGE", ""))
    return E, W


def _string_field(doc, key, E, check, code, required=True, nullable=False):
    if key not in doc:
        if required:
            E.append(("MISSING_FIELD", "/" + key))
        return ABSENT
    v = doc[key]
    if v is None and nullable:
        return None
    if not isinstance(v, str):
        E.append(("WRONG_TYPE", "/" + key))
        return ABSENT
    if not check(v):
        E.append((code, "/" + key))
        return ABSENT
    return v


def _headers(doc, E, version, submit, required):
    if "headers" not in doc:
        if required:
            E.append(("MISSING_FIELD", "/headers"))
        return
    h = doc["headers"]
    if not isinstance(h, dict):
        E.append(("WRONG_TYPE", "/headers"))
        return
    for k, v in h.items():
        p = "/headers" + ptr(k)
        if k == "":
            E.append(("INVALID_HEADER", p))
        elif version == 2 and k in ("rdq.source", "rdq.submitted_by"):
            E.append(("INVALID_HEADER", p))
        elif submit and k.encode()[:4].lower() == b"rdq.":
            E.append(("RESERVED_HEADER", p))
        if not isinstance(v, str):
            E.append(("WRONG_TYPE", p))


def check_submit(doc, E):
    for f in SERVER_FIELDS:
        if f in doc:
            E.append(("SERVER_ASSIGNED_FIELD", "/" + f))
    _string_field(doc, "queue", E, NAME_RE.fullmatch, "INVALID_NAME")
    _string_field(doc, "handler_ref", E, NAME_RE.fullmatch, "INVALID_NAME")
    _string_field(doc, "handler_version", E, hv_ok, "INVALID_NAME", required=False, nullable=True)
    if doc.get("payload_ref") is not None:
        E.append(("PAYLOAD_REF_RESERVED", "/payload_ref"))
    _string_field(doc, "payload", E, b64_ok, "INVALID_BASE64")
    _string_field(doc, "payload_content_type", E, ct_ok, "INVALID_CONTENT_TYPE")
    _headers(doc, E, 1, True, required=False)


def _nullable_ts(doc, key, E):
    """'null', 'set' (present and not null, whatever it holds) or None (absent)."""
    if key not in doc:
        E.append(("MISSING_FIELD", "/" + key))
        return None
    v = doc[key]
    if v is None:
        return "null"
    if not isinstance(v, str):
        E.append(("WRONG_TYPE", "/" + key))
    elif ts_ms(v) is None:
        E.append(("INVALID_TIMESTAMP", "/" + key))
    return "set"


def check_envelope(doc, v, E, W):
    the_id = _string_field(doc, "id", E, ID_RE.fullmatch, "INVALID_ID")
    _string_field(doc, "queue", E, NAME_RE.fullmatch, "INVALID_NAME")
    _string_field(doc, "handler_ref", E, NAME_RE.fullmatch, "INVALID_NAME")
    _string_field(doc, "handler_version", E, hv_ok, "INVALID_NAME", required=False, nullable=True)
    pr = doc.get("payload_ref", ABSENT)
    pr_set = pr is not ABSENT and pr is not None
    if v == 1:
        if pr_set:
            E.append(("PAYLOAD_REF_RESERVED", "/payload_ref"))
        _string_field(doc, "payload", E, b64_ok, "INVALID_BASE64")
    elif pr_set:
        if not isinstance(pr, dict):
            E.append(("INVALID_PAYLOAD_REF", "/payload_ref"))
        else:
            if not (isinstance(pr.get("uri"), str) and URI_RE.fullmatch(pr["uri"])):
                E.append(("INVALID_PAYLOAD_REF", "/payload_ref/uri"))
            if not (isinstance(pr.get("sha256"), str) and SHA_RE.fullmatch(pr["sha256"])):
                E.append(("INVALID_PAYLOAD_REF", "/payload_ref/sha256"))
            size = pr.get("size")
            if not (is_int(size) and 0 <= ival(size) <= U64):
                E.append(("INVALID_PAYLOAD_REF", "/payload_ref/size"))
        if "payload" in doc:
            E.append(("INVALID_PAYLOAD_REF", "/payload"))
    else:
        _string_field(doc, "payload", E, b64_ok, "INVALID_BASE64")
    _string_field(doc, "payload_content_type", E, ct_ok, "INVALID_CONTENT_TYPE")
    _headers(doc, E, v, False, required=True)
    if v == 2:
        if "origin" not in doc:
            E.append(("MISSING_FIELD", "/origin"))
        elif not isinstance(doc["origin"], dict):
            E.append(("WRONG_TYPE", "/origin"))
        else:
            for k in ("source", "submitted_by"):
                if k in doc["origin"] and not isinstance(doc["origin"][k], str):
                    E.append(("WRONG_TYPE", "/origin/" + k))
    status = _string_field(doc, "status", E, lambda s: s in STATUSES[v], "UNKNOWN_STATUS")
    counts = {}
    for key in ("attempt_count", "redrive_count"):
        if key not in doc:
            E.append(("MISSING_FIELD", "/" + key))
        elif not is_int(doc[key]):
            E.append(("WRONG_TYPE", "/" + key))
        else:
            counts[key] = ival(doc[key])  # choice: an out-of-range integer still takes part
            if not 0 <= counts[key] <= U32:
                E.append(("OUT_OF_RANGE", "/" + key))
    nxt = _nullable_ts(doc, "next_attempt_at", E)
    lease = _nullable_ts(doc, "lease_expires_at", E)
    created = None
    c = _string_field(doc, "created_at", E, lambda s: ts_ms(s) is not None, "INVALID_TIMESTAMP")
    if isinstance(c, str):
        created = ts_ms(c)
    recs = None
    if "attempts" not in doc:
        E.append(("MISSING_FIELD", "/attempts"))
    elif not isinstance(doc["attempts"], list):
        E.append(("WRONG_TYPE", "/attempts"))
    else:
        recs = check_attempts(doc["attempts"], v, counts.get("redrive_count"), E)
    # 3.3
    if status is not ABSENT:
        def incons(col):
            E.append(("INCONSISTENT_STATE", col))
        if status == "PENDING":
            if nxt == "null":
                incons("/next_attempt_at")
        if status in ("SUCCEEDED", "DEAD", "CANCELLED") and nxt == "set":
            incons("/next_attempt_at")
        if status == "IN_FLIGHT":
            if lease == "null":
                incons("/lease_expires_at")
        elif lease == "set":
            incons("/lease_expires_at")
        if recs is not None:
            last = recs[-1] if recs else None
            bad = False
            if status in ("PENDING", "CANCELLED"):
                bad = any(r and r["fin"] == "null" for r in recs)
            elif not recs:
                bad = True
            elif last is not None:
                if status == "IN_FLIGHT":
                    bad = last["fin"] == "set"
                else:
                    if last["fin"] == "null":
                        bad = True
                    elif last["outcome"] in OUTCOMES:
                        bad = (last["outcome"] == "SUCCESS") != (status == "SUCCEEDED")
            if bad:
                incons("/attempts")
    if "attempt_count" in counts and recs is not None and counts["attempt_count"] > len(recs):
        E.append(("INCONSISTENT_STATE", "/attempt_count"))
    # 3.4
    if the_id is not ABSENT and created is not None and abs(ulid_ms(the_id) - created) > 1000:
        W.append(("ID_TIME_MISMATCH", "/id"))
    if created is not None and recs and recs[0] and recs[0]["start"] is not None:
        if created > recs[0]["start"]:
            W.append(("CREATED_AFTER_START", "/created_at"))


def check_attempts(arr, v, redrive, E):
    recs = []
    last_i = len(arr) - 1
    for i, a in enumerate(arr):
        P = "/attempts/%d" % i
        if not isinstance(a, dict):
            E.append(("WRONG_TYPE", P))
            recs.append(None)
            continue
        r = {"no": None, "start": None, "finish": None, "fin": None, "outcome": None}
        if "attempt_no" not in a:
            E.append(("MISSING_FIELD", P + "/attempt_no"))
        elif not is_int(a["attempt_no"]):
            E.append(("WRONG_TYPE", P + "/attempt_no"))
        else:
            r["no"] = ival(a["attempt_no"])  # choice: still numbered when out of range
            if not 1 <= r["no"] <= U32:
                E.append(("OUT_OF_RANGE", P + "/attempt_no"))
        if "started_at" not in a:
            E.append(("MISSING_FIELD", P + "/started_at"))
        elif not isinstance(a["started_at"], str):
            E.append(("WRONG_TYPE", P + "/started_at"))
        else:
            r["start"] = ts_ms(a["started_at"])
            if r["start"] is None:
                E.append(("INVALID_TIMESTAMP", P + "/started_at"))
        if "finished_at" not in a:
            E.append(("MISSING_FIELD", P + "/finished_at"))
        elif a["finished_at"] is None:
            r["fin"] = "null"
        elif not isinstance(a["finished_at"], str):
            E.append(("WRONG_TYPE", P + "/finished_at"))
            r["fin"] = "set"
        else:
            r["fin"] = "set"
            r["finish"] = ts_ms(a["finished_at"])
            if r["finish"] is None:
                E.append(("INVALID_TIMESTAMP", P + "/finished_at"))
        oc_state = None
        if "outcome" not in a:
            E.append(("MISSING_FIELD", P + "/outcome"))
        elif a["outcome"] is None:
            oc_state = "null"
        elif not isinstance(a["outcome"], str):
            E.append(("WRONG_TYPE", P + "/outcome"))
            oc_state = "set"
        else:
            oc_state = "set"
            r["outcome"] = a["outcome"]
            if a["outcome"] not in OUTCOMES:
                E.append(("UNKNOWN_OUTCOME", P + "/outcome"))
        err = a.get("error", ABSENT)
        if err is not ABSENT and err is not None:
            if not isinstance(err, dict):
                E.append(("WRONG_TYPE", P + "/error"))
            else:
                if "type" not in err:
                    E.append(("MISSING_FIELD", P + "/error/type"))
                elif not isinstance(err["type"], str) or err["type"] == "":
                    E.append(("WRONG_TYPE", P + "/error/type"))
                if "message" not in err:
                    E.append(("MISSING_FIELD", P + "/error/message"))
                elif not isinstance(err["message"], str):
                    E.append(("WRONG_TYPE", P + "/error/message"))
                elif not trunc_ok(err["message"], 4096):
                    E.append(("FIELD_TOO_LONG", P + "/error/message"))
                st = err.get("stack")
                if st is not None:
                    if not isinstance(st, str):
                        E.append(("WRONG_TYPE", P + "/error/stack"))
                    elif not trunc_ok(st, 65536):
                        E.append(("FIELD_TOO_LONG", P + "/error/stack"))
        dur = ABSENT
        if v == 2:
            if "duration_ms" not in a:
                E.append(("MISSING_FIELD", P + "/duration_ms"))
            elif a["duration_ms"] is not None and not is_int(a["duration_ms"]):
                E.append(("WRONG_TYPE", P + "/duration_ms"))
            else:
                dur = a["duration_ms"]
        # cross rules (BAD_ATTEMPT)
        if r["start"] is not None and r["finish"] is not None and r["finish"] < r["start"]:
            E.append(("BAD_ATTEMPT", P + "/finished_at"))
        if r["fin"] == "null" and i != last_i:
            E.append(("BAD_ATTEMPT", P + "/finished_at"))
        if r["fin"] is not None and oc_state is not None and r["fin"] != oc_state:
            E.append(("BAD_ATTEMPT", P + "/outcome"))
        if r["outcome"] == "SUCCESS":
            if i != last_i:
                E.append(("BAD_ATTEMPT", P + "/outcome"))
            if err is not ABSENT and err is not None:
                E.append(("BAD_ATTEMPT", P + "/error"))
        if r["outcome"] == "LEASE_EXPIRED":
            ok = (isinstance(err, dict) and err.get("type") == "rdq.LeaseExpired"
                  and isinstance(err.get("message"), str) and err["message"] != ""
                  and err.get("stack") is None)
            if not ok:
                E.append(("BAD_ATTEMPT", P + "/error"))
        if v == 2 and dur is not ABSENT:
            if r["fin"] == "null":
                if dur is not None:
                    E.append(("BAD_ATTEMPT", P + "/duration_ms"))
            elif r["start"] is not None and r["finish"] is not None:
                if dur is None or ival(dur) != r["finish"] - r["start"]:
                    E.append(("BAD_ATTEMPT", P + "/duration_ms"))
        recs.append(r)
    restarts = 0
    prev = None
    for i, r in enumerate(recs):
        P = "/attempts/%d" % i
        if r is None:
            prev = None
            continue
        if r["no"] is not None:
            if i == 0:
                if r["no"] != 1:
                    E.append(("BAD_ATTEMPT", P + "/attempt_no"))
            else:
                if r["no"] == 1:
                    restarts += 1
                elif prev is not None and prev["no"] is not None and r["no"] != prev["no"] + 1:
                    E.append(("BAD_ATTEMPT", P + "/attempt_no"))
        if prev is not None and prev["start"] is not None and r["start"] is not None:
            if r["start"] < prev["start"]:
                E.append(("BAD_ATTEMPT", P + "/started_at"))
        prev = r
    if redrive is not None and restarts > redrive:
        E.append(("BAD_ATTEMPT", "/attempts"))
    return recs


# ---------------------------------------------------------------------------------------------
# Realistic base envelopes
# ---------------------------------------------------------------------------------------------

TRACEPARENT_1 = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
TRACEPARENT_2 = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
TRACEPARENT_3 = "00-9c3e1b2a7f4d4e0f8a6b5c4d3e2f1a0b-53ce929d0e0e4736-00"


def java_stack(head, frames, cause=None, more=0):
    s = head + "".join("\n\tat " + f for f in frames)
    if cause:
        s += "\nCaused by: " + cause[0] + "".join("\n\tat " + f for f in cause[1])
        if more:
            s += "\n\t... %d more" % more
    return s


SOCKET_FRAMES = [
    "java.base/sun.nio.ch.NioSocketImpl.timedRead(NioSocketImpl.java:288)",
    "java.base/sun.nio.ch.NioSocketImpl.implRead(NioSocketImpl.java:314)",
    "java.base/java.net.Socket$SocketInputStream.read(Socket.java:1099)",
    "okio.InputStreamSource.read(JvmOkio.kt:93)",
    "okhttp3.internal.http1.Http1ExchangeCodec.readResponseHeaders(Http1ExchangeCodec.kt:180)",
    "com.acme.payments.client.ChargesClient.create(ChargesClient.java:77)",
    "com.acme.billing.invoice.IssueInvoiceHandler.handle(IssueInvoiceHandler.java:142)",
    "dev.rdq.worker.HandlerInvoker.invoke(HandlerInvoker.java:58)",
    "java.base/java.lang.Thread.run(Thread.java:1583)",
]

VALIDATION_STACK = java_stack(
    "com.acme.billing.InvoiceValidationException: Invoice INV-2024-000123: currency 'EUR' not "
    "enabled for tenant acme-eu",
    ["com.acme.billing.invoice.InvoiceValidator.requireCurrency(InvoiceValidator.java:61)",
     "com.acme.billing.invoice.IssueInvoiceHandler.handle(IssueInvoiceHandler.java:97)",
     "dev.rdq.worker.HandlerInvoker.invoke(HandlerInvoker.java:58)"],
    cause=("java.lang.IllegalArgumentException: No enum constant com.acme.billing.Currency.EUR",
           ["java.base/java.lang.Enum.valueOf(Enum.java:293)",
            "com.acme.billing.Currency.valueOf(Currency.java:1)"]),
    more=3)


def socket_error(with_stack=True):
    e = {"type": "java.net.SocketTimeoutException",
         "message": "Read timed out after 2500 ms calling POST https://payments.internal/v2/charges"}
    e["stack"] = java_stack("java.net.SocketTimeoutException: Read timed out", SOCKET_FRAMES) \
        if with_stack else None
    return e


D1_CREATED = "2024-03-15T09:12:44.318Z"
D1_ID = ulid_from_ms(ts_ms(D1_CREATED))


def base_v1_dead():
    """A DEAD billing task: two timeouts, then a permanent validation failure."""
    e1 = socket_error()
    e1["detail"] = {"http_status": None, "retry_after_ms": 30000, "upstream": "payments.internal"}
    return {
        "envelope_version": 1,
        "id": D1_ID,
        "queue": "billing.invoices",
        "handler_ref": "billing.issue-invoice",
        "handler_version": "2.14.1",
        "payload": b64({"invoice_id": "INV-2024-000123", "customer_id": "C-88412",
                        "amount_cents": 129900, "currency": "EUR",
                        "lines": [{"sku": "PRO-ANNUAL", "qty": 1}]}),
        "payload_content_type": "application/json; charset=utf-8",
        "headers": {"traceparent": TRACEPARENT_1, "rdq.source": "billing-service",
                    "rdq.submitted_by": "svc-billing@prod-eu-1", "x-tenant": "acme-eu",
                    "x-idempotency-key": "inv-2024-000123-issue"},
        "status": "DEAD",
        "attempt_count": 3,
        "redrive_count": 0,
        "next_attempt_at": None,
        "lease_expires_at": None,
        "created_at": D1_CREATED,
        "attempts": [
            {"attempt_no": 1, "started_at": "2024-03-15T09:12:44.901Z",
             "finished_at": "2024-03-15T09:12:47.412Z", "outcome": "RETRYABLE_FAILURE",
             "error": e1},
            {"attempt_no": 2, "started_at": "2024-03-15T09:13:17.533Z",
             "finished_at": "2024-03-15T09:13:20.047Z", "outcome": "RETRYABLE_FAILURE",
             "error": socket_error(with_stack=False)},
            {"attempt_no": 3, "started_at": "2024-03-15T09:14:20.118Z",
             "finished_at": "2024-03-15T09:14:20.377Z", "outcome": "PERMANENT_FAILURE",
             "error": {"type": "com.acme.billing.InvoiceValidationException",
                       "message": "Invoice INV-2024-000123: currency 'EUR' not enabled for "
                                  "tenant acme-eu",
                       "stack": VALIDATION_STACK}},
        ],
        "x_shard_key": Raw("123456789012345678901234567890"),
        "x_sampling_weight": Raw("1e400"),
    }


P1_CREATED = "2024-05-02T14:03:11.027Z"


def base_v1_pending():
    """A fresh PENDING e-mail task, never attempted."""
    return {
        "envelope_version": 1,
        "id": ulid_from_ms(ts_ms(P1_CREATED)),
        "queue": "notifications.email",
        "handler_ref": "notify.send-receipt",
        "payload": b64({"to": "jane.doe@example.com", "template": "receipt-v3",
                        "order_id": "ORD-7781-22", "locale": "de-DE"}),
        "payload_content_type": "application/json",
        "headers": {"traceparent": TRACEPARENT_2, "rdq.source": "checkout-web"},
        "status": "PENDING",
        "attempt_count": 0,
        "redrive_count": 0,
        "next_attempt_at": P1_CREATED,
        "lease_expires_at": None,
        "created_at": P1_CREATED,
        "attempts": [],
    }


I1_CREATED = "2024-06-10T22:41:05.660Z"


def base_v1_in_flight():
    """A transcode job on its second attempt, leased for 5 minutes."""
    return {
        "envelope_version": 1,
        "id": ulid_from_ms(ts_ms(I1_CREATED) + 3),
        "queue": "media.transcode",
        "handler_ref": "media.transcode-h264",
        "handler_version": "0.9.0-rc.2",
        "payload": b64(bytes([0x0A, 0x1F]) + b"s3://media-in/u/4711/clip-0042.mov" +
                       bytes([0x10, 0x80, 0x0F, 0x18, 0xB8, 0x08, 0x22, 0x04]) + b"h264"),
        "payload_content_type": "application/vnd.google.protobuf; proto=media.TranscodeJob",
        "payload_ref": None,
        "headers": {"traceparent": TRACEPARENT_3, "rdq.source": "media-uploader",
                    "rdq.submitted_by": "user:4711"},
        "status": "IN_FLIGHT",
        "attempt_count": 2,
        "redrive_count": 0,
        "next_attempt_at": "2024-06-10T22:42:06.000Z",
        "lease_expires_at": "2024-06-10T22:47:06.112Z",
        "created_at": I1_CREATED,
        "attempts": [
            {"attempt_no": 1, "started_at": "2024-06-10T22:41:05.912Z",
             "finished_at": "2024-06-10T22:41:36.004Z", "outcome": "RETRYABLE_FAILURE",
             "error": {"type": "java.io.IOException",
                       "message": "ffmpeg exited with status 137 (killed: out of memory)",
                       "detail": {"exit_code": 137, "rss_bytes": 8589934592}}},
            {"attempt_no": 2, "started_at": "2024-06-10T22:42:06.112Z",
             "finished_at": None, "outcome": None},
        ],
    }


S1_CREATED = "2024-01-31T23:59:59.999Z"


def base_v1_succeeded():
    """A monthly statement: the first worker lost its lease, the second succeeded."""
    return {
        "envelope_version": 1,
        "id": ulid_from_ms(ts_ms(S1_CREATED) - 250),
        "queue": "reports.monthly",
        "handler_ref": "reports.build-statement",
        "handler_version": "1.0.0",
        "payload": b64(b"account_id,period\r\nA-10293,2024-01\r\n"),
        "payload_content_type": "text/csv; charset=utf-8; header=present",
        "headers": {"rdq.source": "scheduler", "x-cron": "0 0 1 * *"},
        "status": "SUCCEEDED",
        "attempt_count": 2,
        "redrive_count": 0,
        "next_attempt_at": None,
        "lease_expires_at": None,
        "created_at": S1_CREATED,
        "attempts": [
            {"attempt_no": 1, "started_at": "2024-02-01T00:00:00.120Z",
             "finished_at": "2024-02-01T00:00:30.120Z", "outcome": "LEASE_EXPIRED",
             "error": {"type": "rdq.LeaseExpired",
                       "message": "lease expired after 30000 ms without heartbeat",
                       "detail": {"worker": "reports-7d9f8-xk2lp"}}},
            {"attempt_no": 2, "started_at": "2024-02-01T00:00:31.007Z",
             "finished_at": "2024-02-01T00:01:12.883Z", "outcome": "SUCCESS", "error": None},
        ],
    }


SUBMIT_BASE = {
    "queue": "billing.invoices",
    "handler_ref": "billing.issue-invoice",
    "handler_version": "2.14.1",
    "payload": b64({"invoice_id": "INV-2024-000124", "customer_id": "C-88412",
                    "amount_cents": 4900, "currency": "USD"}),
    "payload_content_type": "application/json",
    "headers": {"traceparent": TRACEPARENT_1, "x-tenant": "acme-us"},
}


def to_v2(v1):
    """The 1 -> 2 migration of docs/migrations.md#1--2, for building v2 bases from v1 ones."""
    d = {}
    headers = v1["headers"]
    for k, v in v1.items():
        if k == "envelope_version":
            d[k] = 2
        elif k == "headers":
            d[k] = {hk: hv for hk, hv in headers.items()
                    if hk not in ("rdq.source", "rdq.submitted_by")}
            origin = {}
            for hk, hv in headers.items():
                if hk in ("rdq.source", "rdq.submitted_by"):
                    origin[hk[4:]] = hv
            d["origin"] = origin
        elif k == "attempts":
            d[k] = []
            for a in v:
                na = {}
                for ak, av in a.items():
                    na[ak] = av
                    if ak == "finished_at":
                        na["duration_ms"] = None if av is None else ts_ms(av) - ts_ms(a["started_at"])
                d[k].append(na)
        else:
            d[k] = v
    return copy.deepcopy(d)


V2IF_CREATED = "2024-07-04T08:00:00.000Z"


def base_v2_in_flight_ref():
    """A v2 claim-check task: the 70 MiB archive lives in object storage."""
    return {
        "envelope_version": 2,
        "id": ulid_from_ms(ts_ms(V2IF_CREATED) + 12),
        "queue": "archive.ingest",
        "handler_ref": "archive.unpack-and-index",
        "handler_version": "3.2.0",
        "payload_content_type": "application/zstd",
        "payload_ref": {
            "uri": "s3://rdq-claims/archive/2024/07/04/tenant-acme/batch-0007.tar.zst",
            "sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            "size": 73400320},
        "headers": {"traceparent": TRACEPARENT_2, "x-tenant": "acme-eu"},
        "origin": {"source": "archive-uploader", "submitted_by": "svc-archive@prod-eu-1"},
        "status": "IN_FLIGHT",
        "attempt_count": 1,
        "redrive_count": 0,
        "next_attempt_at": None,
        "lease_expires_at": "2024-07-04T08:10:00.250Z",
        "created_at": V2IF_CREATED,
        "attempts": [
            {"attempt_no": 1, "started_at": "2024-07-04T08:00:00.250Z", "finished_at": None,
             "duration_ms": None, "outcome": None},
        ],
    }


def base_v2_dead():
    return to_v2(base_v1_dead())


def base_v2_pending():
    return to_v2(base_v1_pending())


def base_v2_succeeded():
    return to_v2(base_v1_succeeded())


C2_CREATED = "2024-08-19T16:20:00.512Z"


def base_v2_cancelled():
    """Cancelled by an operator before it ever ran."""
    return {
        "envelope_version": 2,
        "id": ulid_from_ms(ts_ms(C2_CREATED)),
        "queue": "crm.sync-contacts",
        "handler_ref": "crm.sync.hubspot",
        "payload": b64({"account": "acme-eu", "since": "2024-08-18T00:00:00Z"}),
        "payload_content_type": "application/json",
        "headers": {"x-requested-by": "ops:m.keller"},
        "origin": {"source": "crm-console"},
        "status": "CANCELLED",
        "attempt_count": 0,
        "redrive_count": 0,
        "next_attempt_at": None,
        "lease_expires_at": None,
        "created_at": C2_CREATED,
        "attempts": [],
    }


def sanity(doc):
    """Assert the invariants the brief lists for every base envelope."""
    assert ID_RE.fullmatch(doc["id"]), doc["id"]
    assert abs(ulid_ms(doc["id"]) - ts_ms(doc["created_at"])) <= 1000
    atts = doc["attempts"]
    assert doc["attempt_count"] <= len(atts)
    if atts:
        assert ts_ms(doc["created_at"]) <= ts_ms(atts[0]["started_at"])
    for i, a in enumerate(atts):
        assert a["attempt_no"] == (1 if i == 0 else a["attempt_no"])
        if i:
            assert a["attempt_no"] in (1, atts[i - 1]["attempt_no"] + 1)
            assert ts_ms(a["started_at"]) >= ts_ms(atts[i - 1]["started_at"])
        if doc["envelope_version"] == 2:
            if a["finished_at"] is None:
                assert a["duration_ms"] is None
            else:
                assert a["duration_ms"] == ts_ms(a["finished_at"]) - ts_ms(a["started_at"])
    if doc["envelope_version"] == 2:
        assert isinstance(doc["origin"], dict)
        assert not {"rdq.source", "rdq.submitted_by"} & set(doc["headers"])
    e, w = oracle(line(doc), {})
    assert not e and not w, (e, w)


for _b in (base_v1_dead, base_v1_pending, base_v1_in_flight, base_v1_succeeded,
           base_v2_in_flight_ref, base_v2_dead, base_v2_pending, base_v2_succeeded,
           base_v2_cancelled):
    sanity(_b())

# The random part of the ULIDs must not change between runs: bases are built from functions,
# so freeze the ids they drew at import time.
D1 = base_v1_dead()
P1 = base_v1_pending()
I1 = base_v1_in_flight()
S1 = base_v1_succeeded()
V2R = base_v2_in_flight_ref()
V2D = base_v2_dead()
V2P = base_v2_pending()
V2S = base_v2_succeeded()
V2C = base_v2_cancelled()

for _b in (D1, P1, I1, S1, V2R, V2D, V2P, V2S, V2C):
    sanity(_b)

# ---------------------------------------------------------------------------------------------
# The case registry
# ---------------------------------------------------------------------------------------------

CASES = {}
PREFIXES = ("valid_", "invalid_", "boundary_", "warning_")


def case(name, data, errors=(), warnings=(), options=None, desc=""):
    assert name not in CASES, name
    assert name.startswith(PREFIXES) and re.fullmatch(r"[a-z0-9_]+", name), name
    raw = data if isinstance(data, bytes) else line(data)
    assert b"\n" not in raw, name
    # README: framing the bytes alone or with a trailing LF must give the same verdict.
    assert not raw.startswith(b"\xef\xbb\xbf") and not raw.endswith(b"\r"), name
    errors = [list(e) for e in errors]
    warnings = [list(w) for w in warnings]
    if name.startswith("valid_"):
        assert not errors and not warnings, name
    if name.startswith("warning_"):
        assert not errors and warnings, name
    if name.startswith("invalid_"):
        assert errors, name
    assert desc, name
    CASES[name] = (raw, errors, warnings, options or {}, desc)


def v1(name, base, edits, errors=(), warnings=(), options=None, desc=""):
    case(name, mod(base, edits), errors, warnings, options, desc)


def err(code, path):
    return (code, path)


# =============================================================================================
# Valid envelopes, one per version and status, and the awkward-but-legal corners
# =============================================================================================

case("valid_v1_pending_fresh", P1,
     desc="§3 v1 PENDING, never attempted: next_attempt_at set, lease null, attempts [] (§3.3).")
case("valid_v1_pending_retry_wait",
     mod(P1, {"/attempt_count": 1, "/next_attempt_at": "2024-05-02T14:04:12.000Z",
              "/attempts": [{"attempt_no": 1, "started_at": "2024-05-02T14:03:11.540Z",
                            "finished_at": "2024-05-02T14:03:12.001Z",
                            "outcome": "RETRYABLE_FAILURE",
                            "error": {"type": "jakarta.mail.MessagingException",
                                      "message": "421 4.7.0 Try again later, closing connection",
                                      "detail": {"smtp_code": 421, "mx": "mx1.example.com"}}}]}),
     desc="§3.3 PENDING waiting for a retry: one finished RETRYABLE_FAILURE attempt, none in flight.")
case("valid_v1_in_flight", I1,
     desc="§3.3 IN_FLIGHT: lease set, next_attempt_at set (any is allowed), last attempt in flight "
          "(finished_at and outcome null, error absent); payload_ref null (§3.1).")
case("valid_v1_succeeded_after_lease_expired", S1,
     desc="§3.2 rule 5 LEASE_EXPIRED with type rdq.LeaseExpired, a message, no stack; then SUCCESS "
          "with error null as the last attempt; §3.3 SUCCEEDED.")
case("valid_v1_dead_three_attempts", D1,
     desc="§3.3 DEAD after RETRYABLE_FAILURE x2 and PERMANENT_FAILURE; Java stack traces with \\n/\\t "
          "escapes; unknown top-level numbers 123456789012345678901234567890 and 1e400 (§2.5).")
case("valid_v1_succeeded_success_error_absent", mod(S1, {"/attempts/1/error": DEL}),
     desc="§3.2 rule 4: SUCCESS with error absent.")

REDRIVEN_ATTEMPTS = copy.deepcopy(D1["attempts"]) + [
    {"attempt_no": 1, "started_at": "2024-03-18T07:30:00.004Z",
     "finished_at": "2024-03-18T07:30:02.514Z", "outcome": "RETRYABLE_FAILURE",
     "error": socket_error(with_stack=False)},
    {"attempt_no": 2, "started_at": "2024-03-18T07:30:32.660Z",
     "finished_at": "2024-03-18T07:30:32.901Z", "outcome": "PERMANENT_FAILURE",
     "error": {"type": "com.acme.billing.InvoiceValidationException",
               "message": "Invoice INV-2024-000123: currency 'EUR' not enabled for tenant acme-eu"}},
]
case("valid_v1_dead_redriven_history",
     mod(D1, {"/attempt_count": 2, "/redrive_count": 1, "/attempts": REDRIVEN_ATTEMPTS}),
     desc="§3.2 rule 1: numbering 1,2,3 then restarts at 1 after a redrive (1 restart, redrive_count "
          "1); attempt_count 2 counts only the attempts since the redrive and is <= 5 records (§3.3).")
case("valid_v1_pending_after_redrive",
     mod(D1, {"/status": "PENDING", "/attempt_count": 0, "/redrive_count": 1,
              "/next_attempt_at": "2024-03-18T07:30:00.000Z"}),
     desc="What `redrive` writes (docs/cli.md#redrive): PENDING, attempt_count 0, redrive_count 1, "
          "next_attempt_at set, the three finished attempts kept (§3.3: none in flight).")
case("valid_v1_empty_payload",
     mod(P1, {"/payload": "", "/payload_content_type": "application/octet-stream"}),
     desc="§3.1 payload \"\" is the empty payload.")
case("valid_v1_payload_ref_null_handler_version_null",
     mod(D1, {"/handler_version": None, "/payload_ref": None}),
     desc="§3.1 handler_version null and payload_ref null are allowed.")
case("valid_v1_rdq_headers_outside_submit",
     mod(P1, {"/headers": {"rdq.source": "checkout-web", "RDQ.Custom": "x", "rdq.retry.policy":
                           "exp-backoff", "Rdq.Submitted_By": "ops"}}),
     desc="§3.1 outside --submit any non-empty header key is allowed, rdq.* in any case included.")
UNKNOWN_EVERYWHERE = mod(D1, {
    "/attempts/0/worker": {"host": "billing-worker-5c8d7", "pid": 4242, "load": Raw("0.1e-999999")},
    "/attempts/0/error/x_code": Raw("-0"),
    "/attempts/1/error/detail": Raw("1e400"),
    "/attempts/2/error/detail": [Raw("-0.0"), Raw("-1E-400"), Raw("123456789012345678901234567890"),
                                 None, True, {"nested": {"deeper": [Raw("1E+2")]}}],
    "/x_neg_zero": Raw("-0"),
    "/": "member with an empty name",
    "/CamelCaseField": {"a/b~c": [Raw("9007199254740993"), Raw("-9223372036854775809")]},
    "/x_emoji_🚀": "unknown field names are not checked",
})
case("valid_v1_unknown_fields_every_level", UNKNOWN_EVERYWHERE,
     desc="§3.1/§2.5 unknown fields at the top level, in an attempt and in an error object; any "
          "RFC 8259 number is accepted there (1e400, -0, -0.0, 0.1e-999999, -1E-400, 2^53+1, "
          "below i64::MIN); names are not checked (empty, CamelCase, emoji).")
case("valid_v1_unknown_integer_10000_digits",
     mod(P1, {"/x_checksum": Raw("9" + "1234567890" * 999 + "876543210")}),
     desc="§2.5 an unknown field holding a 10,000-digit integer.")
case("valid_v1_lease_expired_stack_null_with_detail",
     mod(S1, {"/attempts/0/error/stack": None}),
     desc="§3.2 rule 5: LEASE_EXPIRED with stack null (null counts as no stack) and a detail.")
case("valid_v1_unknown_fields_named_like_v2",
     mod(D1, {"/origin": 42, "/attempts/0/duration_ms": "n/a", "/payload_ref": None}),
     desc="§3.1 in v1, 'origin' and 'duration_ms' are unknown fields and may hold anything "
          "(MIGRATION_CONFLICT is a migration error, not a validation error).")
case("valid_v1_brackets_inside_strings",
     mod(P1, {"/x_note": "[" * 200 + "{" * 200 + "\"}]"}),
     desc="§2.4 brackets inside a string do not nest.")
case("valid_v1_equal_started_at_and_zero_length_attempt",
     mod(D1, {"/attempts/1/started_at": "2024-03-15T09:12:44.901Z",
              "/attempts/1/finished_at": "2024-03-15T09:12:44.901Z"}),
     desc="§3.2 rule 2: started_at may repeat (never decreases) and finished_at may equal started_at.")
case("valid_v1_leap_days_and_extreme_years",
     mod(I1, {"/next_attempt_at": "0000-02-29T00:00:00.000Z",
              "/lease_expires_at": "9999-12-31T23:59:59.999Z"}),
     desc="§3.1 timestamps: year 0000 (a leap year in the proleptic Gregorian calendar, so 29 "
          "February exists) and 9999-12-31T23:59:59.999Z are valid.")
case("valid_v1_attempt_counts_negative_zero",
     mod(P1, {"/attempt_count": Raw("-0"), "/redrive_count": Raw("-0")}),
     desc="§3.1 '-0 is 0': attempt_count -0 and redrive_count -0 are JSON integers equal to 0.")
case("valid_v1_surrogate_pair_escapes",
     mod(P1, {"/headers/x-emoji": Raw('"\\ud83d\\ude80 \\uD83D\\uDE00"')}),
     desc="§2.1 a high+low surrogate escape pair (lower and upper case hex) is a valid character.")

_esc = D1["id"]
ESCAPED = {
    Raw('"envelope_version"'): 1,
    Raw('"\\u0069d"'): Raw('"\\u0030' + _esc[1:] + '"'),
    Raw('"queue"'): Raw('"billing\\u002einvoices"'),
    Raw('"handler\\u005fref"'): Raw('"billing.issue\\u002dinvoice"'),
    "handler_version": Raw('"2.14.1-\\u03b2"'),
    "payload": D1["payload"],
    "payload_content_type": Raw('"application\\/json;\\tcharset=\\"utf-8\\""'),
    "headers": {"traceparent": TRACEPARENT_1,
                "x-quote": Raw('"say \\"hi\\" \\\\ back\\/slash \\b\\f\\n\\r\\t \\u00e9\\u2028 \\u0000"'),
                Raw('"x-\\u00fcml\\u00e4ut"'): "k"},
    Raw('"st\\u0061tus"'): Raw('"\\u0044EAD"'),
    "attempt_count": 3,
    "redrive_count": 0,
    "next_attempt_at": None,
    "lease_expires_at": None,
    "created_at": Raw('"2024\\u002d03-15T09:12:44.318\\u005a"'),
    "attempts": D1["attempts"],
}
case("valid_v1_escapes_in_keys_and_values", ESCAPED,
     desc="§3.1 every rule applies to the decoded string and keys are compared after unescaping: "
          "\\u0069d is id, st\\u0061tus is status, \\u0044EAD is DEAD, billing\\u002einvoices, "
          "\\u005a in a timestamp, \\/ \\\" \\\\ \\b \\f \\n \\r \\t \\u2028 \\u0000 in a header value, "
          "a \\t as OWS in the content type.")
case("valid_v1_whitespace_between_tokens",
     b" \t" + ser(P1).replace(',"', ', \t\r "').replace('":', '" :\t').encode() + b" \t ",
     desc="§2.1 JSON white space (space, tab, CR) between tokens, before the value and after it "
          "(trailing white space is not trailing data).")

# v2
case("valid_v2_pending", V2P,
     desc="§4 v2 PENDING: origin holds the moved rdq.source, headers keeps traceparent.")
case("valid_v2_in_flight_payload_ref", V2R,
     desc="§4.1 v2 IN_FLIGHT with a set payload_ref (s3 uri, sha256, size) and no payload; §4.4 "
          "duration_ms null while in flight; next_attempt_at null (any).")
case("valid_v2_succeeded", V2S,
     desc="§4 v2 SUCCEEDED migrated from v1: duration_ms = finished_at - started_at (30000, 41876).")
case("valid_v2_dead", V2D,
     desc="§4 v2 DEAD: origin {source, submitted_by}, durations 2511/2514/259, unknown 1e400 kept.")
case("valid_v2_cancelled_empty_attempts", V2C,
     desc="§4.2 CANCELLED with attempts [] and both times null.")
_c_succ = [{"attempt_no": 1, "started_at": "2024-08-19T16:20:01.000Z",
            "finished_at": "2024-08-19T16:20:04.250Z", "duration_ms": 3250, "outcome": "SUCCESS",
            "error": None}]
case("valid_v2_cancelled_last_success",
     mod(V2C, {"/attempt_count": 1, "/attempts": _c_succ}),
     desc="§4.2 CANCELLED whose last attempt finished with SUCCESS (any outcome is allowed).")
case("valid_v2_cancelled_after_failure",
     mod(V2C, {"/attempt_count": 1, "/attempts": [{
         "attempt_no": 1, "started_at": "2024-08-19T16:20:01.000Z",
         "finished_at": "2024-08-19T16:20:31.000Z", "duration_ms": 30000,
         "outcome": "LEASE_EXPIRED",
         "error": {"type": "rdq.LeaseExpired", "message": "lease expired after 30000 ms"}}]}),
     desc="§4.2 CANCELLED after a LEASE_EXPIRED attempt.")
case("valid_v2_payload_ref_unknown_members_max_size",
     mod(V2R, {"/payload_ref/size": Raw("18446744073709551615"),
               "/payload_ref/storage_class": "GLACIER_IR",
               "/payload_ref/x_weight": Raw("1e400")}),
     desc="§4.1 size 2^64-1 is in range; other members of payload_ref are unknown fields.")
case("valid_v2_payload_ref_uri_every_allowed_character",
     mod(V2R, {"/payload_ref/uri":
               "x-rdq+blob.v1://user:pw@[2001:db8::1]:8443/a%2Fb/~c_d-e.f?q=1&r=(2)*3,4;5!$'#frag/?"}),
     desc="§4.1 uri: scheme with + - . and digits, then unreserved, gen-delims, sub-delims and %HH.")
case("valid_v2_payload_ref_uri_empty_after_scheme",
     mod(V2R, {"/payload_ref/uri": "urn:"}),
     desc="§4.1 uri is a scheme, ':', then zero or more characters: 'urn:' is valid.")
case("valid_v2_origin_empty_object", mod(V2C, {"/origin": {}}),
     desc="§4.3 origin is required but both members are optional.")
case("valid_v2_origin_unknown_fields",
     mod(V2D, {"/origin/region": "eu-west-1", "/origin/weight": Raw("1e400"),
               "/origin/nested": {"k": [Raw("-0")]}}),
     desc="§4.3 origin may hold unknown fields.")
case("valid_v2_duration_zero_negative_zero",
     mod(V2D, {"/attempts/2/finished_at": "2024-03-15T09:14:20.118Z",
               "/attempts/2/duration_ms": Raw("-0")}),
     desc="§4.4 finished_at == started_at, duration_ms -0 (== 0).")
case("valid_v2_headers_moved_keys_other_case",
     mod(V2P, {"/headers/RDQ.SOURCE": "x", "/headers/rdq.Submitted_By": "y",
               "/headers/rdq.trace": "z"}),
     desc="§4.3 only the two moved keys are refused in v2 headers; choice: the comparison is exact "
          "(case-sensitive, unlike the submit rule's 'any letter case'), so RDQ.SOURCE is allowed.")
# submit
case("valid_submit_full", SUBMIT_BASE, options={"submit": True},
     desc="§3.5 the submit subset with handler_version and headers.")
case("valid_submit_minimal",
     {k: SUBMIT_BASE[k] for k in ("queue", "handler_ref", "payload", "payload_content_type")},
     options={"submit": True},
     desc="§3.5 only the four required fields; handler_version and headers are optional.")
case("valid_submit_origin_and_unknown_fields",
     mod(SUBMIT_BASE, {"/handler_version": None, "/payload_ref": None,
                       "/origin": {"source": "billing-service"}, "/x_priority": Raw("1e400")}),
     options={"submit": True},
     desc="§3.5 origin and other fields are unknown fields; payload_ref null and handler_version "
          "null are allowed.")
case("valid_submit_rdq_lookalike_headers",
     mod(SUBMIT_BASE, {"/headers": {"rdq": "1", "rdqx.y": "2", "x-rdq.source": "3", "rd.q": "4",
                                    "rdq_source": "5"}}),
     options={"submit": True},
     desc="§3.5 RESERVED_HEADER is for keys whose first four bytes are 'rdq.' only.")


# =============================================================================================
# Framing (docs/envelope.md#framing): the reader cap
# =============================================================================================

CAP = 700
case("boundary_line_at_max_line_bytes", padded(P1, CAP), options={"max_line_bytes": CAP},
     desc="§1.5 a line of exactly --max-line-bytes (700) bytes is read and judged: valid.")
case("boundary_line_one_over_max_line_bytes", padded(P1, CAP + 1),
     [err("LINE_TOO_LONG", "")], options={"max_line_bytes": CAP},
     desc="§1.5 a line of 701 bytes with a 700-byte cap is LINE_TOO_LONG (path \"\"), nothing else.")
case("invalid_line_too_long_and_malformed", b'{"envelope_version":1,"id":' + b"x" * 800,
     [err("LINE_TOO_LONG", "")], options={"max_line_bytes": CAP},
     desc="§1.5 a line over the reader cap is never buffered whole, so it is not parsed: "
          "LINE_TOO_LONG alone although it is also malformed.")
case("invalid_line_too_long_whitespace_only", b" \t" * 400,
     [err("LINE_TOO_LONG", "")], options={"max_line_bytes": CAP},
     desc="§1.4 the cap is checked before a line is judged blank: 800 bytes of white space over a "
          "700-byte cap is LINE_TOO_LONG, not a blank line.")


def with_bytes(doc, marker, replacement):
    raw = line(doc)
    assert raw.count(marker.encode()) == 1
    return raw.replace(marker.encode(), replacement)


# =============================================================================================
# The JSON layer (docs/envelope.md#the-json-layer)
# =============================================================================================

BAD = "@@BAD@@"
for name, bad, what in [
    ("lone_continuation_byte", b"\x80", "a lone continuation byte 0x80"),
    ("truncated_sequence", b"\xe2\x82", "a truncated 3-byte sequence (E2 82) before the quote"),
    ("overlong_encoding", b"\xc0\xaf", "an overlong encoding of '/' (C0 AF)"),
    ("utf8_encoded_surrogate", b"\xed\xa0\x80", "a UTF-8-encoded surrogate U+D800 (ED A0 80)"),
]:
    case("invalid_utf8_" + name, with_bytes(mod(D1, {"/headers/x-customer-name": BAD}), BAD, bad),
         [err("INVALID_UTF8", "")],
         desc="§2.1 %s inside a header value: INVALID_UTF8, path \"\", and nothing else (JSON-layer "
              "errors end checking)." % what)
case("invalid_utf8_bad_bytes_in_id_only_one_diagnostic",
     with_bytes(mod(P1, {"/id": P1["id"][:24] + BAD, "/headers/x-b": "@@BAD2@@"}), BAD, b"\xc3(")
     .replace(b"@@BAD2@@", b"\xa0\xa1"),
     [err("INVALID_UTF8", "")],
     desc="§6 INVALID_UTF8 for bad bytes is reported once per line although two strings hold bad "
          "bytes; the id is not judged (no INVALID_ID).")


def rawmsg(base, path, json_text):
    return mod(base, {path: Raw(json_text)})


case("invalid_utf8_unpaired_high_surrogate_in_message",
     rawmsg(D1, "/attempts/0/error/message", '"Read timed out \\ud83d and gave up"'),
     [err("INVALID_UTF8", "/attempts/0/error/message")],
     desc="§2.1 an unpaired high surrogate escape is INVALID_UTF8 at the string holding it (§6).")
case("invalid_utf8_unpaired_low_surrogate_in_header",
     rawmsg(D1, "/headers/x-customer-name", '"\\udc00"'),
     [err("INVALID_UTF8", "/headers/x-customer-name")],
     desc="§2.1 a lone low surrogate escape in a header value.")
case("invalid_utf8_surrogate_in_id_no_invalid_id",
     rawmsg(P1, "/id", '"' + P1["id"][:25] + '\\ud800"'),
     [err("INVALID_UTF8", "/id")],
     desc="§2.1/§6 a surrogate escape in id: INVALID_UTF8 /id; JSON-layer errors end checking, so no "
          "INVALID_ID.")
case("invalid_utf8_inverted_surrogate_pair_once_per_string",
     rawmsg(P1, "/headers/x-note", '"\\ude00\\ud83d and \\ud800\\ud800"'),
     [err("INVALID_UTF8", "/headers/x-note")],
     desc="§6 an inverted pair and two high surrogates in one string: one diagnostic per string.")
case("invalid_utf8_surrogates_in_two_strings",
     mod(D1, {"/headers/x-note": Raw('"\\udfff"'), "/x_tags": ["ok", Raw('"\\ud801x"')]}),
     [err("INVALID_UTF8", "/headers/x-note"), err("INVALID_UTF8", "/x_tags/1")],
     desc="§6 two strings with unpaired surrogates: two diagnostics, each at its string (one in an "
          "array of an unknown field).")

TRAIL = line(P1)
case("invalid_malformed_trailing_second_value", TRAIL + b" {}",
     [err("MALFORMED_JSON", "")],
     desc="§2.1 trailing data after the value (a second value) is MALFORMED_JSON.")
case("invalid_malformed_trailing_garbage", TRAIL + b"x",
     [err("MALFORMED_JSON", "")], desc="§2.1 one byte of trailing data.")
case("invalid_malformed_two_arrays", b"[] []", [err("MALFORMED_JSON", "")],
     desc="§2.1 two values that are not objects: trailing data is MALFORMED_JSON, not NOT_AN_OBJECT.")
case("invalid_malformed_nan", line(mod(P1, {"/x_score": Raw("NaN")})),
     [err("MALFORMED_JSON", "")], desc="§2.1 NaN is not JSON, even in an unknown field.")
case("invalid_malformed_leading_zero", line(mod(P1, {"/x_n": Raw("012")})),
     [err("MALFORMED_JSON", "")], desc="§2.1 a number with a leading zero.")
case("invalid_malformed_raw_tab_in_string", line(mod(P1, {"/headers/x-note": BAD})).replace(
     BAD.encode(), b"a\tb"), [err("MALFORMED_JSON", "")],
     desc="§2.1 an unescaped control character (TAB) inside a string.")
case("invalid_malformed_bad_escape", line(mod(P1, {"/headers/x-note": Raw('"\\x41"')})),
     [err("MALFORMED_JSON", "")], desc="§2.1 \\x is not a JSON escape.")
case("invalid_malformed_bom_after_brace", b"{\xef\xbb\xbf" + TRAIL[1:],
     [err("MALFORMED_JSON", "")],
     desc="§2.1 U+FEFF between tokens is not JSON white space (only a BOM at the start of a stream "
          "is skipped, §1.2).")
for name, text in [("array", b'[{"envelope_version":1}]'), ("string", b'"PENDING"'),
                   ("number", b"1e400")]:
    case("invalid_not_an_object_" + name, text, [err("NOT_AN_OBJECT", "")],
         desc="§2.2 one well-formed JSON value that is not an object (%s)." % name)
# Duplicate keys (docs/envelope.md#duplicate-keys): the second member is written with an equal (possibly escaped) key.
case("invalid_duplicate_key_status",
     {**D1, Raw('"status"'): "SUCCEEDED"},
     [err("DUPLICATE_KEY", "/status")],
     desc="§2.3 'status' twice at the top level (DEAD, then SUCCEEDED): readers would disagree. "
          "JSON-layer errors end checking: nothing else is reported.")
case("invalid_duplicate_key_hidden_behind_escape",
     insert_after(D1, "status", Raw('"st\\u0061tus"'), "SUCCEEDED"),
     [err("DUPLICATE_KEY", "/status")],
     desc="§3.1 keys are compared after unescaping: \"st\\u0061tus\" next to \"status\" is a duplicate.")
case("invalid_duplicate_key_header",
     mod(D1, {"/headers": {"traceparent": TRACEPARENT_1, "x-dup": "a", Raw('"x-dup"'): "b"}}),
     [err("DUPLICATE_KEY", "/headers/x-dup")], desc="§6 the example path /headers/x-dup.")
case("invalid_duplicate_key_deep_in_error_detail",
     mod(D1, {"/attempts/1/error/detail": {"retry": {"after_ms": 30000, Raw('"after_ms"'): 60000}}}),
     [err("DUPLICATE_KEY", "/attempts/1/error/detail/retry/after_ms")],
     desc="§2.3 a duplicate inside an unknown value at depth 6 ('anywhere in the line').")
case("invalid_duplicate_key_three_times",
     mod(P1, {"/x_meta": {"k": 1, Raw('"k"'): 2, Raw('"\\u006b"'): 3}}),
     [err("DUPLICATE_KEY", "/x_meta/k"), err("DUPLICATE_KEY", "/x_meta/k")],
     desc="§6 once per repetition: a key written three times gives two diagnostics.")
case("invalid_duplicate_key_two_different",
     {**mod(D1, {"/attempts/0/error": {"type": "java.io.IOException", Raw('"type"'): "x",
                                        "message": "m"}}), Raw('"x_shard_key"'): 7},
     [err("DUPLICATE_KEY", "/attempts/0/error/type"), err("DUPLICATE_KEY", "/x_shard_key")],
     desc="§6 two different repeated members, one of them an unknown top-level field.")
case("invalid_duplicate_key_pointer_escaping_slash",
     mod(P1, {"/headers": {"a/b": "1", Raw('"a\\/b"'): "2"}}),
     [err("DUPLICATE_KEY", "/headers/a~1b")],
     desc="§6 RFC 6901: '/' in a key is written ~1; \"a\\/b\" equals \"a/b\" after unescaping.")
case("invalid_duplicate_key_empty_header_key",
     mod(P1, {"/headers": {"": "a", Raw('""'): "b"}}),
     [err("DUPLICATE_KEY", "/headers/")],
     desc="§6 the empty key twice: path /headers/ (JSON-layer error ends checking, so the "
          "INVALID_HEADER of the empty key is not reported).")
# Depth (docs/envelope.md#nesting-depth): the top-level object is depth 1.
case("boundary_depth_128_arrays", mod(P1, {"/x_nested": Raw("[" * 127 + "]" * 127)}),
     desc="§2.4 depth 128 is valid: top-level object (1) + 127 nested arrays in an unknown field.")
case("boundary_depth_129_arrays", mod(P1, {"/x_nested": Raw("[" * 128 + "]" * 128)}),
     [err("NESTING_TOO_DEEP", "")], desc="§2.4 depth 129: NESTING_TOO_DEEP, path \"\".")
case("boundary_depth_128_objects",
     mod(P1, {"/x_nested": Raw('{"a":' * 126 + "[]" + "}" * 126)}),
     desc="§2.4 depth 128 mixing objects and arrays: 1 + 126 objects + 1 empty array.")
case("boundary_depth_129_objects",
     mod(P1, {"/x_nested": Raw('{"a":' * 127 + "{}" + "}" * 127)}),
     [err("NESTING_TOO_DEEP", "")], desc="§2.4 depth 129: 1 + 128 objects (the innermost empty).")
case("invalid_nesting_50000_deep", mod(P1, {"/x_nested": Raw("[" * 50000 + "]" * 50000)}),
     [err("NESTING_TOO_DEEP", "")],
     desc="§2.4 50,000 nested arrays: NESTING_TOO_DEEP, never a crash or a stack overflow.")


# =============================================================================================
# envelope_version (docs/envelope.md#envelope_version, #diagnostics: a missing, mistyped or
# unsupported version ends the field checks)
# =============================================================================================

BROKEN_ELSEWHERE = {"/id": "not-a-ulid", "/queue": "Billing Invoices", "/status": "FAILED"}
v1("invalid_missing_envelope_version", D1, {"/envelope_version": DEL, **BROKEN_ELSEWHERE},
   [err("MISSING_FIELD", "/envelope_version")],
   desc="§6 a missing envelope_version ends the field checks: the bad id, queue and status are "
        "not reported.")
v1("invalid_envelope_version_string", D1, {"/envelope_version": "1", **BROKEN_ELSEWHERE},
   [err("WRONG_TYPE", "/envelope_version")],
   desc="§3.1 \"1\" is a string: WRONG_TYPE, and the field checks end.")
v1("invalid_envelope_version_fraction", D1, {"/envelope_version": Raw("1.0")},
   [err("WRONG_TYPE", "/envelope_version")], desc="§3.1 1.0 is not a JSON integer.")
v1("invalid_unsupported_version_3", D1, {"/envelope_version": 3, **BROKEN_ELSEWHERE},
   [err("UNSUPPORTED_VERSION", "/envelope_version")],
   desc="§3.1/§5 version 3 is above the newest supported; the field checks end.")
v1("invalid_unsupported_version_negative_zero", P1, {"/envelope_version": Raw("-0")},
   [err("UNSUPPORTED_VERSION", "/envelope_version")],
   desc="§3.1 -0 is the JSON integer 0, which is not a supported version (not WRONG_TYPE).")
v1("invalid_unsupported_version_huge", P1,
   {"/envelope_version": Raw("123456789012345678901234567890")},
   [err("UNSUPPORTED_VERSION", "/envelope_version")],
   desc="§3.1 an integer beyond 64 bits is still an integer: UNSUPPORTED_VERSION.")
case("invalid_require_version_2_got_v1", D1, [err("UNSUPPORTED_VERSION", "/envelope_version")],
     options={"require_version": 2},
     desc="docs/cli.md#validate: --require-version 2 with an otherwise valid v1 line.")
case("invalid_require_version_1_got_v2", V2D, [err("UNSUPPORTED_VERSION", "/envelope_version")],
     options={"require_version": 1},
     desc="docs/cli.md#validate: --require-version 1 with an otherwise valid v2 line.")
v1("invalid_require_version_mismatch_plus_other_errors", D1,
   {"/id": D1["id"].lower(), "/payload": "eyJhIjoxfR=="},
   [err("UNSUPPORTED_VERSION", "/envelope_version"), err("INVALID_ID", "/id"),
    err("INVALID_BASE64", "/payload")],
   options={"require_version": 2},
   desc="docs/cli.md#validate: the --require-version mismatch comes 'besides any other error': "
        "the line is "
        "still judged by its own (supported) version 1.")
v1("invalid_require_version_with_unsupported_version", D1, {"/envelope_version": 3},
   [err("UNSUPPORTED_VERSION", "/envelope_version")], options={"require_version": 1},
   desc="§6 version 3 with --require-version 1. choice: one UNSUPPORTED_VERSION diagnostic, not "
        "two (one offending value).")
case("invalid_empty_object", b"{}", [err("MISSING_FIELD", "/envelope_version")],
     desc="§6 {}: envelope_version missing ends the field checks.")
case("invalid_only_version_v1", {"envelope_version": 1},
     [err("MISSING_FIELD", "/" + f) for f in
      ["id", "queue", "handler_ref", "payload", "payload_content_type", "headers", "status",
       "attempt_count", "redrive_count", "next_attempt_at", "lease_expires_at", "created_at",
       "attempts"]],
     desc="§3.1 every required v1 field missing: 13 MISSING_FIELD diagnostics.")
case("invalid_only_version_v2", {"envelope_version": 2},
     [err("MISSING_FIELD", "/" + f) for f in
      ["id", "queue", "handler_ref", "payload", "payload_content_type", "headers", "origin",
       "status", "attempt_count", "redrive_count", "next_attempt_at", "lease_expires_at",
       "created_at", "attempts"]],
     desc="§4 every required v2 field missing: 14 MISSING_FIELD (payload is required since "
          "payload_ref is absent, §4.1; origin is new).")

# =============================================================================================
# MISSING_FIELD, one at a time
# =============================================================================================

for f, base, note in [
    ("id", D1, ""), ("headers", D1, ""), 
    ("next_attempt_at", I1, " (IN_FLIGHT, whose next_attempt_at column is 'any')"),
    ("lease_expires_at", P1, " (PENDING, whose lease column wants null: absent is no worse)"),
    ("created_at", D1, " (no warning can be computed)"),
    ("attempts", P1, " (PENDING with attempt_count 0: nothing else depends on it)"),
]:
    v1("invalid_missing_" + f, base, {"/" + f: DEL}, [err("MISSING_FIELD", "/" + f)],
       desc="§3.1 required member %s absent: MISSING_FIELD at the missing member%s." % (f, note))
v1("invalid_missing_attempt_no_last_attempt", D1, {"/attempts/2/attempt_no": DEL},
   [err("MISSING_FIELD", "/attempts/2/attempt_no")], desc="§3.2 attempt_no is required.")
v1("invalid_missing_started_at", D1, {"/attempts/1/started_at": DEL},
   [err("MISSING_FIELD", "/attempts/1/started_at")], desc="§3.2 started_at is required.")
v1("invalid_missing_finished_at_in_flight", I1, {"/attempts/1/finished_at": DEL},
   [err("MISSING_FIELD", "/attempts/1/finished_at")],
   desc="§3.2 finished_at is a required key even while in flight (null, not absent).")
v1("invalid_missing_outcome_in_flight", I1, {"/attempts/1/outcome": DEL},
   [err("MISSING_FIELD", "/attempts/1/outcome")],
   desc="§6 the example path /attempts/0/outcome, here on the in-flight attempt 1.")
v1("invalid_missing_error_type", D1, {"/attempts/0/error/type": DEL},
   [err("MISSING_FIELD", "/attempts/0/error/type")], desc="§3.2 error.type is required.")
v1("invalid_v2_missing_origin", V2D, {"/origin": DEL}, [err("MISSING_FIELD", "/origin")],
   desc="§4.3 origin is required in v2.")
v1("invalid_v2_missing_duration_ms", V2D, {"/attempts/1/duration_ms": DEL},
   [err("MISSING_FIELD", "/attempts/1/duration_ms")], desc="§4.4 every v2 attempt has duration_ms.")
v1("invalid_v2_missing_payload", V2P, {"/payload": DEL}, [err("MISSING_FIELD", "/payload")],
   desc="§4.1 payload_ref absent: payload is required as in v1.")
# =============================================================================================
# WRONG_TYPE
# =============================================================================================

for name, base, path, value, note in [
    ("id_number", P1, "/id", 12345678901234567890, "a number as id"),
    ("queue_null", P1, "/queue", None, "null as queue"),
    ("payload_null", P1, "/payload", None, "null as payload (v1)"),
    ("headers_array", P1, "/headers", [["traceparent", TRACEPARENT_2]], "headers as pairs"),
    ("header_value_number", P1, "/headers/x-retry-limit", 5, "a header value that is a number"),
    ("attempt_count_one_point_zero", I1, "/attempt_count", Raw("1.0"), "1.0 as attempt_count"),
    ("next_attempt_at_epoch_millis", I1, "/next_attempt_at", 1718059326000,
     "epoch milliseconds as next_attempt_at (IN_FLIGHT: its §3.3 column is 'any')"),
    ("created_at_null", D1, "/created_at", None, "created_at null"),
    ("attempts_object", P1, "/attempts", {}, "attempts as an object"),
]:
    v1("invalid_wrong_type_" + name, base, {path: value}, [err("WRONG_TYPE", path)],
       desc="§3.1 %s: WRONG_TYPE at %s ('a value of the wrong JSON type ... also for the fields "
            "whose row names only a value code')." % (note, path))
v1("invalid_wrong_type_header_value_pointer_escaped", P1,
   {"/headers": {"traceparent": TRACEPARENT_2, "a/b~c": 1}},
   [err("WRONG_TYPE", "/headers/a~1b~0c")],
   desc="§6 the key of a header value is escaped as RFC 6901 says: a/b~c -> a~1b~0c.")
v1("invalid_wrong_type_attempt_not_object", P1,
   {"/attempt_count": 1, "/next_attempt_at": "2024-05-02T14:04:12.000Z",
    "/attempts": [mod(D1["attempts"][0], {"/started_at": "2024-05-02T14:03:11.540Z",
                                          "/finished_at": "2024-05-02T14:03:14.051Z"}),
                  "attempt 2 pending"]},
   [err("WRONG_TYPE", "/attempts/1")],
   desc="§6 a whole attempt of the wrong type: path /attempts/i.")
for name, path, value, note in [
    ("attempt_no_string", "/attempts/2/attempt_no", "3", "\"3\" as attempt_no"),
    ("started_at_null", "/attempts/1/started_at", None, "started_at null"),
    ("outcome_number", "/attempts/0/outcome", 1, "a number as outcome"),
    ("error_string", "/attempts/0/error", "java.net.SocketTimeoutException: Read timed out",
     "an error that is a string"),
    ("error_type_empty", "/attempts/0/error/type", "", "error.type \"\" (§3.2: explicitly WRONG_TYPE)"),
]:
    v1("invalid_wrong_type_" + name, D1, {path: value}, [err("WRONG_TYPE", path)],
       desc="§3.2 %s: WRONG_TYPE at %s." % (note, path))
for name, path, value, note in [
    ("origin_null", "/origin", None, "origin null"),
    ("origin_source_null", "/origin/source", None, "origin.source null (§4.3: null is WRONG_TYPE)"),
    ("duration_ms_fraction", "/attempts/0/duration_ms", Raw("2511.0"), "duration_ms 2511.0"),
]:
    v1("invalid_v2_wrong_type_" + name, V2D, {path: value}, [err("WRONG_TYPE", path)],
       desc="§4 %s: WRONG_TYPE at %s." % (note, path))

# =============================================================================================
# OUT_OF_RANGE and the 32-bit boundaries
# =============================================================================================

v1("invalid_out_of_range_attempt_count_negative", P1, {"/attempt_count": -1},
   [err("OUT_OF_RANGE", "/attempt_count")], desc="§3.1 attempt_count -1 < 0.")
v1("boundary_redrive_count_4294967295", D1, {"/redrive_count": 4294967295},
   desc="§3.1 redrive_count 4294967295 is the largest allowed value.")
v1("boundary_redrive_count_4294967296", D1, {"/redrive_count": 4294967296},
   [err("OUT_OF_RANGE", "/redrive_count")], desc="§3.1 redrive_count 4294967296 is one over.")
v1("invalid_out_of_range_redrive_count_30_digits", D1,
   {"/redrive_count": Raw("123456789012345678901234567890")},
   [err("OUT_OF_RANGE", "/redrive_count")],
   desc="§3.1 a 30-digit integer is a JSON integer (not WRONG_TYPE) out of range.")
v1("boundary_attempt_count_4294967295", D1, {"/attempt_count": 4294967295},
   [err("INCONSISTENT_STATE", "/attempt_count")],
   desc="§3.1 attempt_count 4294967295 is in range, but §3.3 attempt_count <= number of attempts "
        "(3) is broken: INCONSISTENT_STATE only.")
v1("boundary_attempt_count_4294967296", D1, {"/attempt_count": 4294967296},
   [err("OUT_OF_RANGE", "/attempt_count"), err("INCONSISTENT_STATE", "/attempt_count")],
   desc="§3.1 attempt_count 4294967296 is OUT_OF_RANGE. choice: an out-of-range JSON integer still "
        "takes part in the cross-field rules ('every rule the line breaks that it can still "
        "check'), so §3.3 attempt_count <= 3 attempts is also reported.")
v1("boundary_attempt_no_0", I1, {"/attempts": [mod(I1["attempts"][1], {"/attempt_no": 0})],
                                 "/attempt_count": 1},
   [err("OUT_OF_RANGE", "/attempts/0/attempt_no"), err("BAD_ATTEMPT", "/attempts/0/attempt_no")],
   desc="§3.2 attempt_no 0 (a single, in-flight attempt) is below 1: OUT_OF_RANGE. choice: the "
        "value still takes part in the numbering rule, and attempts[0].attempt_no is not 1, so "
        "BAD_ATTEMPT too (same path). A single attempt keeps later numbering out of the case.")
v1("boundary_attempt_no_4294967296_last", D1, {"/attempts/2/attempt_no": 4294967296},
   [err("OUT_OF_RANGE", "/attempts/2/attempt_no"), err("BAD_ATTEMPT", "/attempts/2/attempt_no")],
   desc="§3.2 attempt_no 2^32 is over 4294967295: OUT_OF_RANGE. choice: (as for attempt_no 0) the "
        "value still takes part in the numbering rule, and it is neither 2+1 nor 1: BAD_ATTEMPT.")


# =============================================================================================
# INVALID_ID
# =============================================================================================

PID = P1["id"]
for name, value, note in [
    ("lowercase", PID.lower(), "lower case (the ulid crate would accept it)"),
    ("25_chars", PID[:25], "25 characters"),
    ("27_chars", PID + "0", "27 characters"),
    ("contains_i", PID[:20] + "I" + PID[21:], "'I' is not in the Crockford alphabet"),
]:
    v1("invalid_id_" + name, P1, {"/id": value}, [err("INVALID_ID", "/id")],
       desc="§3.1 id %s: INVALID_ID. Its time part is unchanged, so no warning arises either way."
            % note)
v1("invalid_id_first_char_8", P1, {"/id": "8" + PID[1:]}, [err("INVALID_ID", "/id")],
   desc="§3.1 the first ULID character must be 0-7 (a 26-character value starting with 8 overflows "
        "128 bits). choice: no ID_TIME_MISMATCH is computed for an id that is not a canonical ULID.")
v1("warning_id_first_char_7_max_time", P1, {"/id": "7ZZZZZZZZZ" + PID[10:]},
   warnings=[err("ID_TIME_MISMATCH", "/id")],
   desc="§3.1 first character 7 is the largest allowed; its time (year 10889) is far from "
        "created_at, so the line is valid with ID_TIME_MISMATCH (§3.4).")

# =============================================================================================
# INVALID_NAME (queue, handler_ref, handler_version)
# =============================================================================================

Q240 = "billing." + "invoices-eu-west-1." * 12 + "x" * 4
assert len(Q240) == 240
v1("boundary_queue_240_chars", P1, {"/queue": Q240}, desc="§3.1 a queue name of 240 characters.")
v1("boundary_queue_241_chars", P1, {"/queue": Q240 + "x"}, [err("INVALID_NAME", "/queue")],
   desc="§3.1 a queue name of 241 characters.")
v1("boundary_handler_ref_241_chars", P1, {"/handler_ref": "h" + Q240},
   [err("INVALID_NAME", "/handler_ref")], desc="§3.1 a handler_ref of 241 characters.")
for name, field, value, note in [
    ("queue_empty", "queue", "", "empty (1-240 characters)"),
    ("queue_uppercase", "queue", "Billing.Invoices", "upper case"),
    ("queue_non_ascii", "queue", "billing.rechnungen-\u00fc", "a non-ASCII letter"),
    ("handler_ref_java_class", "handler_ref", "com.acme.billing.IssueInvoiceHandler", "a Java class name"),
]:
    v1("invalid_name_" + name, D1, {"/" + field: value}, [err("INVALID_NAME", "/" + field)],
       desc="§3.1 %s %s: INVALID_NAME (charset [a-z0-9._-])." % (field, note))
HV = "/handler_version"
v1("boundary_handler_version_240_bytes_multibyte", D1, {HV: "\u20ac" * 80},
   desc="§3.1 handler_version: 80 x U+20AC = 240 UTF-8 bytes (80 characters).")
v1("boundary_handler_version_241_bytes_multibyte", D1, {HV: "\u20ac" * 80 + "1"},
   [err("INVALID_NAME", HV)], desc="§3.1 handler_version: 81 characters, 241 bytes: the limit "
                                  "counts UTF-8 bytes, not characters.")
v1("invalid_handler_version_empty", D1, {HV: ""}, [err("INVALID_NAME", HV)],
   desc="§3.1 handler_version is 1-240 bytes: \"\" is INVALID_NAME (not WRONG_TYPE).")
for name, text, note in [
    ("nul_escape", '"2.14.1\\u0000"', "U+0000 as \\u0000"),
    ("tab_escape", '"2.14.1\\t"', "TAB as \\t"),
    ("del_raw", '"2.14.1\x7f"', "U+007F as a raw DEL byte"),
    ("nel_escaped", '"2.14.1\\u0085"', "U+0085 (NEL) as the escape \\u0085"),
    ("nel_raw", '"2.14.1\u0085"', "U+0085 (NEL) as raw bytes C2 85"),
]:
    v1("invalid_handler_version_control_" + name, D1, {HV: Raw(text)}, [err("INVALID_NAME", HV)],
       desc="§3.1 handler_version with a control character (Unicode Cc), %s." % note)
v1("valid_handler_version_nbsp_and_format_chars", D1, {HV: Raw('"2.14.1\\u00a0\\u200b\\u2028"')},
   desc="§3.1 U+00A0, U+200B and U+2028 are not Cc (U+0000-001F, U+007F-009F): allowed.")

# =============================================================================================
# INVALID_BASE64
# =============================================================================================

b64_a = b64(b'{"a":1}')
assert b64_a == "eyJhIjoxfQ=="
for name, value, note in [
    ("noncanonical_two_pad", "eyJhIjoxfR==", "unused bits not zero before '==' (R instead of Q)"),
    ("noncanonical_one_pad", "QUJ=", "unused bits not zero before '=' (J instead of I)"),
    ("missing_padding", "eyJhIjoxfQ", "no padding (length not a multiple of 4)"),
    ("short_padding", "eyJhIjoxfQ=", "one '=' where two are needed"),
    ("space", "eyJh IjoxfQ==", "an inner space"),
    ("url_safe_alphabet", "-_-_", "the URL-safe alphabet"),
]:
    v1("invalid_base64_" + name, D1, {"/payload": value}, [err("INVALID_BASE64", "/payload")],
       desc="§3.1 payload %s: INVALID_BASE64." % note)
# =============================================================================================
# INVALID_CONTENT_TYPE
# =============================================================================================

CT = "/payload_content_type"
for name, value, note in [
    ("quoted_parameter", 'text/plain; charset="utf-8"', "a quoted-string value"),
    ("obs_text_in_quotes", 'text/plain; title="caf\u00e9 \u2014 men\u00fc"', "obs-text (UTF-8 "
     "bytes >= 0x80) inside a quoted-string"),
    ("empty_quoted_string", 'text/plain; charset=""', "an empty quoted-string. choice: the "
     "grammar's RFC 9110 quoted-string may be empty, so this is valid; 'no empty parameters' is "
     "read as 'text/plain;', a ';' with no parameter after it"),
    ("token_punctuation", "application/x-!#$%&'*+.^_`|~09; a=!#$%&'*+.^_`|~", "every tchar"),
]:
    v1("valid_content_type_" + name, P1, {CT: value},
       desc="§3.1 payload_content_type with %s." % note)
for name, value, note in [
    ("empty_parameter", "text/plain;", "'text/plain;' (the spec's own example)"),
    ("empty_value", "text/plain; charset=", "an empty parameter value"),
    ("empty", "", "the empty string"),
    ("trailing_space", "application/json ", "trailing white space without a parameter"),
    ("space_around_equals", "text/plain; charset = utf-8", "white space around '='"),
    ("non_ascii_token", "application/j\u00e9son", "a non-ASCII byte outside quotes"),
]:
    v1("invalid_content_type_" + name, P1, {CT: value}, [err("INVALID_CONTENT_TYPE", CT)],
       desc="§3.1 payload_content_type %s: INVALID_CONTENT_TYPE." % note)
CT255 = "application/vnd.acme.billing.invoice." + "x" * 213 + "+json"
assert len(CT255) == 255
v1("boundary_content_type_255_bytes", P1, {CT: CT255},
   desc="§3.1 payload_content_type of exactly 255 bytes.")
v1("boundary_content_type_256_bytes", P1, {CT: CT255.replace("+json", "x+json")},
   [err("INVALID_CONTENT_TYPE", CT)], desc="§3.1 payload_content_type of 256 bytes (grammatical).")

# =============================================================================================
# PAYLOAD_REF_RESERVED (v1) and INVALID_PAYLOAD_REF (v2)
# =============================================================================================

for name, value in [("object", V2R["payload_ref"]), 
                    ("string", "s3://rdq-claims/x.bin"), ("false", False),
                    ]:
    v1("invalid_payload_ref_reserved_v1_" + name, D1, {"/payload_ref": value},
       [err("PAYLOAD_REF_RESERVED", "/payload_ref")],
       desc="§3.1 v1 payload_ref is reserved: any non-null value (%s) is PAYLOAD_REF_RESERVED, "
            "never WRONG_TYPE." % name.replace("_", " "))

PR = "/payload_ref"
for name, value, paths, note in [
    ("string", "s3://rdq-claims/x.bin", [PR], "a string"),
    ("array", [V2R["payload_ref"]], [PR], "an array"),
    ("empty_object", {}, [PR + "/uri", PR + "/sha256", PR + "/size"],
     "{} (each missing member at its own path, never MISSING_FIELD)"),
]:
    v1("invalid_payload_ref_" + name, V2R, {PR: value},
       [err("INVALID_PAYLOAD_REF", p) for p in paths],
       desc="§4.1 a set payload_ref that is %s: INVALID_PAYLOAD_REF." % note)
for name, member, value, note in [
    ("uri_missing", "uri", DEL, "uri missing (never MISSING_FIELD)"),
    ("uri_number", "uri", 42, "uri a number (never WRONG_TYPE)"),
    ("uri_without_scheme", "uri", "rdq-claims/archive/batch-0007.tar.zst", "uri without a scheme"),
    ("uri_space", "uri", "s3://rdq-claims/batch 0007.tar.zst", "a space in the uri"),
    ("uri_bad_percent_escape", "uri", "s3://rdq-claims/%zz.bin", "a bad %-escape"),
    ("sha256_upper_case", "sha256", V2R["payload_ref"]["sha256"].upper(), "sha256 in upper-case hex"),
    ("sha256_63_digits", "sha256", V2R["payload_ref"]["sha256"][:63], "sha256 of 63 hex digits"),
    ("size_missing", "size", DEL, "size missing"),
    ("size_negative", "size", -1, "size -1"),
    ("size_2_pow_64", "size", Raw("18446744073709551616"), "size 2^64 (one over 2^64-1)"),
    ("size_fraction", "size", Raw("73400320.0"), "size 73400320.0 (not a JSON integer; never "
     "WRONG_TYPE)"),
]:
    v1("invalid_payload_ref_" + name, V2R, {PR + "/" + member: value},
       [err("INVALID_PAYLOAD_REF", PR + "/" + member)],
       desc="§4.1 payload_ref %s: INVALID_PAYLOAD_REF at %s/%s." % (note, PR, member))
v1("invalid_payload_ref_with_payload_beside", V2R, {"/payload": b64(b"inline copy")},
   [err("INVALID_PAYLOAD_REF", "/payload")],
   desc="§4.1 a (valid) payload beside a set payload_ref: INVALID_PAYLOAD_REF at /payload.")
v1("invalid_payload_ref_string_with_payload_beside", V2R,
   {PR: "s3://rdq-claims/x.bin", "/payload": b64(b"inline copy")},
   [err("INVALID_PAYLOAD_REF", PR), err("INVALID_PAYLOAD_REF", "/payload")],
   desc="§4.1 a payload_ref of the wrong type is still set (present and not null), so the payload "
        "beside it is refused as well.")
v1("invalid_payload_ref_all_members_bad", V2R,
   {PR: {"uri": "no scheme", "sha256": "abc", "size": -5, "x_extra": Raw("1e400")}},
   [err("INVALID_PAYLOAD_REF", PR + "/uri"), err("INVALID_PAYLOAD_REF", PR + "/sha256"),
    err("INVALID_PAYLOAD_REF", PR + "/size")],
   desc="§4.1 every member bad: three diagnostics; the unknown member is fine.")

# =============================================================================================
# INVALID_HEADER, RESERVED_HEADER, SERVER_ASSIGNED_FIELD
# =============================================================================================

v1("invalid_header_empty_key", D1, {"/headers/": "orphan"}, [err("INVALID_HEADER", "/headers/")],
   desc="§3.1/§6 an empty header key: INVALID_HEADER at /headers/.")
v1("invalid_header_empty_key_and_number_value", D1, {"/headers/": 1},
   [err("INVALID_HEADER", "/headers/"), err("WRONG_TYPE", "/headers/")],
   desc="§3.1 an empty key holding a number breaks two rules (key non-empty, value a string). "
        "choice: both are reported, at the same path /headers/ (the value is still checked "
        "although its key is bad).")
v1("invalid_header_v2_moved_rdq_source", V2D, {"/headers/rdq.source": "billing-service"},
   [err("INVALID_HEADER", "/headers/rdq.source")],
   desc="§4.3 in v2, headers MUST NOT contain rdq.source (it moved to origin.source).")
v1("invalid_header_v2_moved_rdq_submitted_by", V2P, {"/headers/rdq.submitted_by": "ops"},
   [err("INVALID_HEADER", "/headers/rdq.submitted_by")], desc="§4.3 rdq.submitted_by moved too.")
v1("invalid_header_v2_both_moved_keys", V2C,
   {"/headers": {"rdq.submitted_by": "ops", "x-a": "b", "rdq.source": "crm-console"}},
   [err("INVALID_HEADER", "/headers/rdq.submitted_by"),
    err("INVALID_HEADER", "/headers/rdq.source")], desc="§4.3 both moved keys: two diagnostics.")
v1("invalid_header_v2_moved_key_escaped", V2D,
   {"/headers": {"traceparent": TRACEPARENT_1, Raw('"rdq\\u002esource"'): "billing-service"}},
   [err("INVALID_HEADER", "/headers/rdq.source")],
   desc="§3.1 moved header keys are compared after unescaping: \"rdq\\u002esource\".")
SUB = {"submit": True}
for name, key in [("rdq_trace", "rdq.trace"), ("upper_case", "RDQ.x"),
                  ("prefix_only", "rdq."),
                  ]:
    v1("invalid_reserved_header_" + name, SUBMIT_BASE, {"/headers/" + key: "v"},
       [err("RESERVED_HEADER", "/headers/" + key)], options=SUB,
       desc="§3.5 --submit: header key %r starts with 'rdq.' in some letter case: RESERVED_HEADER."
            % key)
v1("invalid_reserved_header_escaped", SUBMIT_BASE,
   {"/headers": {Raw('"\\u0052dq.retry"'): "3", "x-tenant": "acme-us"}},
   [err("RESERVED_HEADER", "/headers/Rdq.retry")], options=SUB,
   desc="§3.1/§3.5 the reserved prefix is matched after unescaping (\\u0052 is R).")
v1("invalid_submit_headers_null", SUBMIT_BASE, {"/headers": None}, [err("WRONG_TYPE", "/headers")],
   options=SUB, desc="§3.1/§3.5 headers is optional under --submit, but 'null is allowed only "
                     "where the row says so': null is WRONG_TYPE.")
v1("invalid_submit_payload_ref_set", SUBMIT_BASE, {"/payload_ref": V2R["payload_ref"]},
   [err("PAYLOAD_REF_RESERVED", "/payload_ref")], options=SUB,
   desc="§3.5 payload_ref absent or null under --submit.")
v1("invalid_submit_missing_required", {}, {"/x_note": "only an unknown field"},
   [err("MISSING_FIELD", "/" + f) for f in ("queue", "handler_ref", "payload",
                                            "payload_content_type")],
   options=SUB, desc="§3.5 the four required submit fields missing.")
for f in SERVER_FIELDS:
    as_null = f in ("id", "status", "created_at", "envelope_version")
    val = None if as_null else (D1[f] if f != "attempts" else [])
    v1("invalid_server_assigned_" + f + ("_null" if as_null else ""), SUBMIT_BASE, {"/" + f: val},
       [err("SERVER_ASSIGNED_FIELD", "/" + f)], options=SUB,
       desc="§3.5 --submit: %s is assigned by the server: SERVER_ASSIGNED_FIELD%s." % (
           f, ", even as null (and nothing else)" if as_null else ""))
case("invalid_submit_full_dlq_line", D1,
     [err("SERVER_ASSIGNED_FIELD", "/" + f) for f in SERVER_FIELDS] +
     [err("RESERVED_HEADER", "/headers/rdq.source"),
      err("RESERVED_HEADER", "/headers/rdq.submitted_by")],
     options=SUB,
     desc="§3.5 a whole DLQ export line fed to --submit: nine SERVER_ASSIGNED_FIELD and the two "
          "rdq.* headers are RESERVED_HEADER.")

# =============================================================================================
# UNKNOWN_STATUS, UNKNOWN_OUTCOME
# =============================================================================================

for name, value in [("cancelled_in_v1", "CANCELLED"), ("lowercase", "dead"), 
                    ("empty", "")]:
    v1("invalid_unknown_status_" + name, D1, {"/status": value},
       [err("UNKNOWN_STATUS", "/status")],
       desc="§3.1 status %r is not PENDING/IN_FLIGHT/SUCCEEDED/DEAD%s; with no known status there is "
            "no §3.3 check." % (value, " (CANCELLED is v2 only, §4.2)" if value == "CANCELLED" else ""))
for name, value in [("failure", "FAILURE"), ("lowercase_success", "success")]:
    v1("invalid_unknown_outcome_" + name, D1, {"/attempts/0/outcome": value},
       [err("UNKNOWN_OUTCOME", "/attempts/0/outcome")],
       desc="§3.2 outcome %r on a finished, non-last attempt: UNKNOWN_OUTCOME." % value)

# =============================================================================================
# INVALID_TIMESTAMP
# =============================================================================================

NA = "/next_attempt_at"
for name, value, note in [
    ("lowercase_z", "2024-05-02T14:03:11.027z", "lower-case z"),
    ("offset_utc", "2024-05-02T14:03:11.027+00:00", "an offset +00:00 instead of Z"),
    ("two_fraction_digits", "2024-05-02T14:03:11.02Z", "2 fraction digits"),
    ("no_fraction", "2024-05-02T14:03:11Z", "no fraction"),
    ("feb_29_non_leap", "2023-02-29T10:00:00.000Z", "29 February 2023 (not a leap year)"),
    ("feb_29_1900", "1900-02-29T10:00:00.000Z", "29 February 1900 (divisible by 100, not 400)"),
    ("hour_24", "2024-05-02T24:00:00.000Z", "hour 24"),
    ("second_60_leap_second", "2016-12-31T23:59:60.000Z", "second 60 (a real leap second)"),
    ("empty", "", "the empty string"),
]:
    v1("invalid_timestamp_" + name, I1, {NA: value}, [err("INVALID_TIMESTAMP", NA)],
       desc="§3.1 timestamps are exactly YYYY-MM-DDTHH:MM:SS.mmmZ: %s is INVALID_TIMESTAMP "
            "(next_attempt_at of an IN_FLIGHT task, whose §3.3 column is 'any', so the case does "
            "not depend on whether a bad timestamp counts as 'set')." % note)
v1("invalid_timestamp_created_at_lowercase_z", D1, {"/created_at": D1_CREATED[:-1] + "z"},
   [err("INVALID_TIMESTAMP", "/created_at")], desc="§3.1 created_at with a lower-case z.")
v1("invalid_timestamp_started_at_offset", D1,
   {"/attempts/1/started_at": "2024-03-15T09:13:17.533+00:00"},
   [err("INVALID_TIMESTAMP", "/attempts/1/started_at")], desc="§3.2 started_at with +00:00.")
# =============================================================================================
# FIELD_TOO_LONG and truncation (docs/envelope.md#truncation)
# =============================================================================================

M = "\u2026[truncated]"
assert len(M.encode()) == 14
MSG_SEED = "Read timed out after 2500 ms calling POST https://payments.internal/v2/charges; retry "
STACK_SEED = ("java.lang.StackOverflowError\n\tat com.acme.billing.tree.InvoiceTree.visit("
              "InvoiceTree.java:88)\n\tat com.acme.billing.tree.InvoiceTree.visitChildren("
              "InvoiceTree.java:102)\n")


def text_of(n, seed):
    s = (seed * (n // len(seed) + 1))[:n]
    assert len(s.encode()) == n
    return s


def trunc_family(field, limit, path, seed, base=D1, full=True):
    T = lambda n: text_of(n, seed)  # noqa: E731
    F = [err("FIELD_TOO_LONG", path)]
    what = "%s (limit %d bytes)" % (field, limit)
    pre = "boundary_%s_" % field
    n3 = limit // 3
    v1(pre + "exactly_limit", base, {path: T(limit)},
       desc="§3.2 %s: exactly the limit, no marker: valid." % what)
    v1(pre + "limit_plus_1_no_marker", base, {path: T(limit + 1)}, F,
       desc="§3.2 %s: limit+1 bytes without the marker: FIELD_TOO_LONG." % what)
    v1(pre + "truncated_prefix_limit_minus_3", base, {path: T(limit - 3) + M},
       desc="§3.2 %s: a prefix of limit-3 bytes + the 14-byte marker (the cut-off character was 4 "
            "bytes long): valid." % what)
    v1(pre + "truncated_prefix_limit", base, {path: T(limit) + M},
       desc="§3.2 %s: a prefix of exactly limit bytes + the marker: valid (the marker comes on top)."
            % what)
    v1(pre + "truncated_prefix_limit_minus_4", base, {path: T(limit - 4) + M}, F,
       desc="§3.2 %s: prefix of limit-4 bytes + marker: a writer never cuts more than 3 bytes "
            "short of the limit: FIELD_TOO_LONG." % what)
    v1(pre + "truncated_prefix_limit_plus_1", base, {path: T(limit + 1) + M}, F,
       desc="§3.2 %s: prefix of limit+1 bytes + marker: FIELD_TOO_LONG." % what)
    v1(pre + "truncated_multibyte_char_at_cut", base,
       {path: T(limit - 4) + "\u20ac" + M},
       desc="§3.2 %s: the original ran on in U+20AC characters (3 bytes each); the last one that "
            "fits ends at limit-1, the next would end at limit+2, so the writer kept limit-1 bytes "
            "ending in U+20AC, then the marker: valid." % what)
    if not full:
        return
    v1(pre + "over_limit_in_bytes_not_characters", base, {path: "\u20ac" * (n3 + 1)}, F,
       desc="§3.2 %s: %d x U+20AC = %d bytes: the limit counts UTF-8 bytes: FIELD_TOO_LONG."
            % (what, n3 + 1, 3 * (n3 + 1)))
    v1(pre + "marker_written_as_escape", base,
       {path: Raw(jstr_raw(T(limit))[:-1] + '\\u2026[truncated]"')},
       desc="§3.1 %s: the marker written as \\u2026[truncated] is the same decoded string: valid."
            % what)
    v1(pre + "ascii_dots_marker", base, {path: T(limit) + "...[truncated]"}, F,
       desc="§3.2 %s: '...[truncated]' (three ASCII dots, also 14 bytes) is not the marker: "
            "FIELD_TOO_LONG." % what)
trunc_family("message", 4096, "/attempts/0/error/message", MSG_SEED)
trunc_family("stack", 65536, "/attempts/0/error/stack", STACK_SEED, full=False)
v1("boundary_message_escaped_chars_decoded_4096", D1,
   {"/attempts/1/error/message": Raw('"' + "\\u00e9" * 2048 + '"')},
   desc="§3.1 the limit applies to the decoded string: 2048 x \\u00e9 is 12,288 raw bytes but 4096 "
        "decoded UTF-8 bytes: valid.")
v1("invalid_field_too_long_message_and_stack_in_two_attempts", D1,
   {"/attempts/0/error/stack": text_of(70000, STACK_SEED),
    "/attempts/2/error/message": text_of(5000, MSG_SEED)},
   [err("FIELD_TOO_LONG", "/attempts/0/error/stack"),
    err("FIELD_TOO_LONG", "/attempts/2/error/message")],
   desc="§6 one FIELD_TOO_LONG per offending value.")

# =============================================================================================
# BAD_ATTEMPT (docs/envelope.md#rules-across-attempts; paths from docs/envelope.md#bad_attempt)
# =============================================================================================

A = "/attempts/%d/"
for name, base, edits, path, note in [
    ("first_attempt_no_2", D1, {"/attempts/0/attempt_no": 2, "/attempts/1/attempt_no": 3,
                                "/attempts/2/attempt_no": 4}, A % 0 + "attempt_no",
     "rule 1: attempts[0].attempt_no must be 1 (2,3,4: only the first is wrong)"),
    ("numbering_gap", D1, {"/attempts/2/attempt_no": 4}, A % 2 + "attempt_no",
     "rule 1: 1,2,4 skips a number"),
    ("restart_without_redrive", D1, {"/attempts/2/attempt_no": 1, "/attempt_count": 1}, "/attempts",
     "rule 1: 1,2,1 restarts once but redrive_count is 0: BAD_ATTEMPT at /attempts"),
    ("two_restarts_one_redrive", D1, {"/attempts/1/attempt_no": 1, "/attempts/2/attempt_no": 1,
                                      "/redrive_count": 1, "/attempt_count": 1}, "/attempts",
     "rule 1: 1,1,1 is two restarts with redrive_count 1: one diagnostic at /attempts"),
    ("numbering_gap_after_restart", D1,
     {"/attempts": REDRIVEN_ATTEMPTS[:4] + [mod(REDRIVEN_ATTEMPTS[4], {"/attempt_no": 3})],
      "/redrive_count": 1, "/attempt_count": 2}, A % 4 + "attempt_no",
     "rule 1: 1,2,3,1,3: after the restart the numbering must continue 2"),
    ("started_at_decreases", D1, {"/attempts/1/started_at": "2024-03-15T09:12:44.900Z"},
     A % 1 + "started_at", "rule 2: attempt 1 starts 1 ms before attempt 0"),
    ("finished_before_started", D1, {"/attempts/2/finished_at": "2024-03-15T09:14:20.117Z"},
     A % 2 + "finished_at", "rule 2: finished_at 1 ms before its started_at"),
    ("in_flight_not_last", D1, {"/attempts/1/finished_at": None, "/attempts/1/outcome": None,
                                "/attempts/1/error": DEL}, A % 1 + "finished_at",
     "rule 3: only the last attempt may be in flight"),
    ("outcome_null_but_finished", D1, {"/attempts/0/outcome": None}, A % 0 + "outcome",
     "§3.2 outcome is null exactly when finished_at is null: finished with outcome null"),
    ("outcome_set_but_in_flight", I1, {"/attempts/1/outcome": "RETRYABLE_FAILURE"},
     A % 1 + "outcome", "§3.2 in flight (finished_at null) with an outcome"),
    ("success_not_last", D1, {"/attempts/0/outcome": "SUCCESS", "/attempts/0/error": None},
     A % 0 + "outcome", "rule 4: SUCCESS only on the last attempt"),
    ("success_with_error", S1, {"/attempts/1/error": {"type": "java.lang.IllegalStateException",
                                                      "message": "partial write"}},
     A % 1 + "error", "rule 4: SUCCESS with an error"),
    ("lease_expired_no_error", S1, {"/attempts/0/error": DEL}, A % 0 + "error",
     "rule 5: LEASE_EXPIRED with error absent"),
    ("lease_expired_wrong_type", S1, {"/attempts/0/error/type": "java.util.concurrent.TimeoutException"},
     A % 0 + "error", "rule 5: LEASE_EXPIRED with another error type"),
    ("lease_expired_empty_message", S1, {"/attempts/0/error/message": ""}, A % 0 + "error",
     "rule 5: LEASE_EXPIRED needs a non-empty message"),
    ("lease_expired_with_stack", S1, {"/attempts/0/error/stack": "rdq.LeaseExpired\n\tat dev.rdq."
                                      "server.LeaseReaper.run(LeaseReaper.java:40)"},
     A % 0 + "error", "rule 5: LEASE_EXPIRED carries no stack"),
]:
    errors = [err("BAD_ATTEMPT", path)] if path else [err("BAD_ATTEMPT", A % 1 + "attempt_no"),
                                                      err("BAD_ATTEMPT", A % 2 + "attempt_no")]
    v1("invalid_bad_attempt_" + name, base, edits, errors,
       desc="§3.2 %s." % note + ("" if path else " 3 is not 1+1 nor 1, and 2 is not 3+1 nor 1: "
                                                 "two diagnostics."))
v1("invalid_bad_attempt_success_not_last_with_error", D1, {"/attempts/1/outcome": "SUCCESS"},
   [err("BAD_ATTEMPT", A % 1 + "outcome"), err("BAD_ATTEMPT", A % 1 + "error")],
   desc="§3.2 rule 4 broken twice on one attempt: SUCCESS not last (/outcome) and with an error "
        "(/error).")
D2 = "/attempts/%d/duration_ms"
for name, base, edits, path, note in [
    ("off_by_one", V2D, {D2 % 0: 2512}, D2 % 0, "2512 where finished_at - started_at is 2511"),
    ("negative", V2D, {D2 % 2: -259}, D2 % 2, "a negative value"),
    ("huge", V2D, {D2 % 1: Raw("123456789012345678901234567890")}, D2 % 1,
     "a huge integer (never OUT_OF_RANGE)"),
    ("null_when_finished", V2D, {D2 % 2: None}, D2 % 2, "null on a finished attempt"),
    ("integer_when_in_flight", V2R, {D2 % 0: 0}, D2 % 0, "0 while in flight (must be null)"),
]:
    v1("invalid_v2_bad_attempt_duration_" + name, base, edits, [err("BAD_ATTEMPT", path)],
       desc="§4.4 duration_ms %s: BAD_ATTEMPT at %s." % (note, path))
v1("invalid_v2_bad_attempt_rules_hold", V2S,
   {"/attempts/0/error/stack": "x", "/attempts/1/attempt_no": 3},
   [err("BAD_ATTEMPT", A % 0 + "error"), err("BAD_ATTEMPT", A % 1 + "attempt_no")],
   desc="§4 every v1 attempt rule holds in v2 (LEASE_EXPIRED with a stack; numbering 1,3).")

# =============================================================================================
# INCONSISTENT_STATE (docs/envelope.md#status-consistency), each column
# =============================================================================================

IFL = {"attempt_no": 1, "started_at": "2024-03-15T09:12:44.901Z", "finished_at": None,
       "outcome": None}
I = "INCONSISTENT_STATE"
for name, base, edits, cols, note in [
    ("pending_next_attempt_null", P1, {NA: None}, [NA], "PENDING needs next_attempt_at set"),
    ("pending_lease_set", P1, {"/lease_expires_at": "2024-05-02T14:08:11.027Z"},
     ["/lease_expires_at"], "PENDING needs lease_expires_at null"),
    ("pending_attempt_in_flight", I1, {"/status": "PENDING", "/lease_expires_at": None},
     ["/attempts"], "PENDING with the last attempt in flight"),
    ("in_flight_lease_null", I1, {"/lease_expires_at": None}, ["/lease_expires_at"],
     "IN_FLIGHT needs a lease"),
    ("in_flight_last_finished", D1, {"/status": "IN_FLIGHT",
                                     "/lease_expires_at": "2024-03-15T09:19:20.118Z"},
     ["/attempts"], "IN_FLIGHT whose last attempt is finished"),
    ("succeeded_next_attempt_set", S1, {NA: "2024-02-01T00:01:12.883Z"}, [NA],
     "SUCCEEDED needs next_attempt_at null"),
    ("succeeded_last_failed", D1, {"/status": "SUCCEEDED"}, ["/attempts"],
     "SUCCEEDED whose last attempt is PERMANENT_FAILURE"),
    ("dead_lease_set", D1, {"/lease_expires_at": "2024-03-15T09:19:20.118Z"}, ["/lease_expires_at"],
     "DEAD needs lease_expires_at null"),
    ("dead_last_success", S1, {"/status": "DEAD"}, ["/attempts"],
     "DEAD whose last attempt is SUCCESS"),
    ("attempt_count_exceeds_attempts", D1, {"/attempt_count": 4}, ["/attempt_count"],
     "attempt_count 4 > 3 attempt records (the design's abridged sample)"),
    ("v2_cancelled_lease_set", V2C, {"/lease_expires_at": "2024-08-19T16:25:00.000Z"},
     ["/lease_expires_at"], "CANCELLED needs lease_expires_at null"),
    ("v2_cancelled_attempt_in_flight", V2C,
     {"/attempts": [{"attempt_no": 1, "started_at": "2024-08-19T16:20:01.000Z", "finished_at": None,
                     "duration_ms": None, "outcome": None}], "/attempt_count": 1},
     ["/attempts"], "CANCELLED with an attempt in flight"),
    ("succeeded_every_column", S1, {NA: "2024-02-01T00:01:12.883Z",
                                    "/lease_expires_at": "2024-02-01T00:05:31.007Z",
                                    "/attempts": []},
     [NA, "/lease_expires_at", "/attempts", "/attempt_count"],
     "SUCCEEDED with next and lease set, no attempts, attempt_count 2: every column, four "
     "diagnostics"),
]:
    v1("invalid_inconsistent_" + name, base, edits, [err(I, c) for c in cols],
       desc="§3.3 %s: INCONSISTENT_STATE at %s." % (note, ", ".join(cols)))

# =============================================================================================
# PAYLOAD_TOO_LARGE (docs/envelope.md#size-limit)
# =============================================================================================

P = [err("PAYLOAD_TOO_LARGE", "")]
MIB = 1048576
case("boundary_envelope_default_limit_exactly_1_mib", padded(P1, MIB),
     desc="§3.1 a line of exactly 1,048,576 bytes with the default limit: valid.")
case("boundary_envelope_default_limit_1_mib_plus_1", padded(P1, MIB + 1), P,
     desc="§3.1 1,048,577 bytes with the default limit: PAYLOAD_TOO_LARGE, path \"\".")
G = {"max_envelope_bytes": 2048}
case("boundary_envelope_global_limit_at", padded(P1, 2048), options=G,
     desc="§3.1 max_envelope_bytes 2048, a line of 2048 bytes: valid.")
case("boundary_envelope_global_limit_over", padded(P1, 2049), P, options=G,
     desc="§3.1 max_envelope_bytes 2048, a line of 2049 bytes: PAYLOAD_TOO_LARGE.")
case("invalid_too_large_over_every_limit_invalid_utf8",
     with_bytes(padded(mod(P1, {"/headers/x-b": BAD}), 3000), BAD, b"\xff\xc0"), P, options=G,
     desc="§3.1 a line over every limit in force is PAYLOAD_TOO_LARGE and nothing else: it is not "
          "parsed, so its invalid UTF-8 is not reported.")
case("invalid_too_large_over_every_limit_malformed", b'{"envelope_version":1,' + b'"x":' * 800, P,
     options=G, desc="§3.1 not parsed: malformed JSON over every limit is only PAYLOAD_TOO_LARGE.")
L_D1 = len(line(D1))
case("boundary_queue_limit_at", D1, options={"queue_limits": {"billing.invoices": L_D1}},
     desc="§3.1 a per-queue limit equal to the line's length (%d bytes): valid." % L_D1)
case("boundary_queue_limit_over", D1, P, options={"queue_limits": {"billing.invoices": L_D1 - 1}},
     desc="§3.1 a per-queue limit one byte below the line's length: PAYLOAD_TOO_LARGE (the line is "
          "within the global 1 MiB, so it is judged in full and nothing else is wrong).")
v1("invalid_queue_limit_over_and_judged_in_full", D1, {"/id": D1["id"].lower()},
   [err("PAYLOAD_TOO_LARGE", ""), err("INVALID_ID", "/id")],
   options={"queue_limits": {"billing.invoices": 1000}},
   desc="§3.1 over its own queue's limit (1000) but within another limit in force (global 1 MiB): "
        "judged in full, so INVALID_ID is reported beside PAYLOAD_TOO_LARGE.")
case("valid_queue_limit_of_other_queue_does_not_apply", D1,
     options={"queue_limits": {"billing.refunds": 100}},
     desc="§3.1 a per-queue limit only applies to its own queue; billing.invoices uses the global "
          "limit.")
BIGQ = {"max_envelope_bytes": 1024, "queue_limits": {"billing.invoices": 8192}}
case("valid_queue_limit_above_global", D1, options=BIGQ,
     desc="§3.1 a per-queue limit replaces the default for that queue, upwards too: %d bytes on "
          "billing.invoices (limit 8192) with a global limit of 1024." % L_D1)
v1("invalid_queue_limit_global_applies_to_other_queue", D1, {"/queue": "billing.refunds"}, P,
   options=BIGQ,
   desc="§3.1 the same line on billing.refunds (no per-queue limit): the global 1024 applies.")
case("boundary_queue_limit_above_global_at", padded(D1, 8192), options=BIGQ,
     desc="§3.1 exactly the per-queue limit 8192 (above the global 1024): valid.")
case("invalid_too_large_over_largest_queue_limit", padded(mod(D1, {"/id": "bad"}), 8193), P,
     options=BIGQ,
     desc="§3.1 8193 bytes: over every limit in force (the largest is the per-queue 8192), so not "
          "parsed: PAYLOAD_TOO_LARGE only, the bad id is not reported.")
v1("invalid_too_large_with_missing_version", D1, {"/envelope_version": DEL},
   [err("MISSING_FIELD", "/envelope_version"), err("PAYLOAD_TOO_LARGE", "")],
   options={"max_envelope_bytes": 1024, "queue_limits": {"billing.refunds": 8192}},
   desc="§6 a missing envelope_version ends the field checks, but 'the size limit is still "
        "checked': over the global 1024 (its queue has no own limit), within the largest 8192.")
v1("invalid_too_large_with_unsupported_version", D1, {"/envelope_version": 3},
   [err("UNSUPPORTED_VERSION", "/envelope_version"), err("PAYLOAD_TOO_LARGE", "")],
   options={"max_envelope_bytes": 1024, "queue_limits": {"billing.refunds": 8192}},
   desc="§6 an unsupported version ends the field checks; the size limit is still checked.")

# =============================================================================================
# Warnings (docs/envelope.md#warnings): valid lines, reported, never a reason to reject
# =============================================================================================

PMS = ts_ms(P1_CREATED)
RND = 0x5A5A5A5A5A5A5A5A5A5A
for name, delta, warn in [("1001_ms_earlier", -1001, True), ("exactly_1000_ms_earlier", -1000, False),
                          ("1001_ms_later", 1001, True), ("exactly_1000_ms_later", 1000, False)]:
    nm = ("warning_id_time_mismatch_" if warn else "boundary_id_time_") + name
    v1(nm, P1, {"/id": ulid_from_ms(PMS + delta, RND)},
       warnings=[err("ID_TIME_MISMATCH", "/id")] if warn else [],
       desc="§3.4 the ULID's time is %d ms from created_at: %s." % (
           delta, "more than 1 s, ID_TIME_MISMATCH at /id" if warn else "not more than 1 s, no "
                                                                         "warning"))
A0 = ts_ms(D1["attempts"][0]["started_at"])
v1("warning_created_after_start", D1, {"/created_at": ts(A0 + 1)},
   warnings=[err("CREATED_AFTER_START", "/created_at")],
   desc="§3.4 created_at 1 ms after attempts[0].started_at (clock skew): valid with "
        "CREATED_AFTER_START at /created_at; the ULID is still within 1 s.")
v1("boundary_created_equal_to_start", D1, {"/created_at": ts(A0)},
   desc="§3.4 created_at equal to attempts[0].started_at is not later: no warning.")
v1("warning_both_warnings", D1, {"/created_at": ts(A0 + 1500)},
   warnings=[err("CREATED_AFTER_START", "/created_at"), err("ID_TIME_MISMATCH", "/id")],
   desc="§3.4 created_at 1.5 s after the first start and %d ms after the ULID time: both warnings."
        % (A0 + 1500 - ulid_ms(D1["id"])))
v1("invalid_with_warning", D1, {"/created_at": ts(A0 + 1), "/queue": "Billing"},
   [err("INVALID_NAME", "/queue")], warnings=[err("CREATED_AFTER_START", "/created_at")],
   desc="§3.4/docs/cli.md#validate (validate --format json carries warnings for invalid lines "
        "too). choice: "
        "warnings are computed for every line whose field checks run, valid or not.")

# =============================================================================================
# Several errors at once (docs/envelope.md#diagnostics: every rule broken is reported)
# =============================================================================================

v1("invalid_many_top_level_errors", D1, {
    "/id": D1["id"].lower(), "/queue": "Billing.Invoices", "/handler_ref": "",
    "/handler_version": "2.14.1\u0007", "/payload": "eyJhIjoxfR==",
    "/payload_content_type": "text/plain;", "/payload_ref": {},
    "/headers/": "orphan", "/headers/x-retries": 3,
    "/status": "FAILED", "/attempt_count": -1, "/redrive_count": Raw("1.5"),
    "/next_attempt_at": "yesterday", "/lease_expires_at": "2024-03-15T09:19:20.118+00:00"},
    [err("INVALID_ID", "/id"), err("INVALID_NAME", "/queue"), err("INVALID_NAME", "/handler_ref"),
     err("INVALID_NAME", HV), err("INVALID_BASE64", "/payload"),
     err("INVALID_CONTENT_TYPE", CT), err("PAYLOAD_REF_RESERVED", "/payload_ref"),
     err("INVALID_HEADER", "/headers/"), err("WRONG_TYPE", "/headers/x-retries"),
     err("UNKNOWN_STATUS", "/status"), err("OUT_OF_RANGE", "/attempt_count"),
     err("WRONG_TYPE", "/redrive_count"), err("INVALID_TIMESTAMP", NA),
     err("INVALID_TIMESTAMP", "/lease_expires_at")],
    desc="§6 fourteen top-level rules broken at once, one diagnostic each (an unknown status means "
         "no §3.3 check).")
v1("invalid_many_attempt_errors", D1, {
    "/attempts/0/error/type": "",
    "/attempts/1/started_at": "2024-03-15 09:13:17.533Z", "/attempts/1/outcome": "RETRY",
    "/attempts/2/finished_at": "2024-03-15T09:14:19.999Z", "/attempts/2/error/message": 42,
    "/attempts/2/error/stack": text_of(65537, STACK_SEED)},
    [err("WRONG_TYPE", "/attempts/0/error/type"), err("INVALID_TIMESTAMP", "/attempts/1/started_at"),
     err("UNKNOWN_OUTCOME", "/attempts/1/outcome"), err("BAD_ATTEMPT", "/attempts/2/finished_at"),
     err("WRONG_TYPE", "/attempts/2/error/message"), err("FIELD_TOO_LONG", "/attempts/2/error/stack")],
    desc="§6 six attempt-level errors in three attempts.")
v1("invalid_v2_many_errors", V2C, {
    "/payload_ref": {"uri": "s3://rdq-claims/x.bin", "size": 10},
    "/headers/rdq.source": "crm-console", "/origin/source": None,
    "/lease_expires_at": "2024-08-19T16:25:00.000Z", "/attempt_count": 1,
    "/attempts": [{"attempt_no": 1, "started_at": "2024-08-19T16:20:01.000Z",
                   "finished_at": "2024-08-19T16:20:04.250Z", "duration_ms": 3249,
                   "outcome": "SUCCESS", "error": None}]},
    [err("INVALID_PAYLOAD_REF", "/payload_ref/sha256"), err("INVALID_PAYLOAD_REF", "/payload"),
     err("INVALID_HEADER", "/headers/rdq.source"), err("WRONG_TYPE", "/origin/source"),
     err("INCONSISTENT_STATE", "/lease_expires_at"), err("BAD_ATTEMPT", "/attempts/0/duration_ms")],
    desc="§4 v2 rules broken together: payload_ref without sha256 and a payload beside it, a moved "
         "header, origin.source null, a CANCELLED task with a lease, a duration off by one.")
v1("invalid_submit_many_errors", SUBMIT_BASE, {
    "/id": None, "/status": "PENDING", "/queue": "billing/invoices", "/payload": "QQ",
    "/headers": {"rdq.source": "x", "": "y", "x-n": 1}, "/payload_ref": "s3://x"},
    [err("SERVER_ASSIGNED_FIELD", "/id"), err("SERVER_ASSIGNED_FIELD", "/status"),
     err("INVALID_NAME", "/queue"), err("INVALID_BASE64", "/payload"),
     err("RESERVED_HEADER", "/headers/rdq.source"), err("INVALID_HEADER", "/headers/"),
     err("WRONG_TYPE", "/headers/x-n"), err("PAYLOAD_REF_RESERVED", "/payload_ref")],
    options=SUB, desc="§3.5 eight submit errors at once.")


# =============================================================================================
# Cross-check and write
# =============================================================================================


def _key(pairs):
    return sorted(tuple(p) for p in pairs)


def main():
    mismatches = []
    for name, (raw, errors, warnings, options, desc) in CASES.items():
        e, w = oracle(raw, options)
        if _key(e) != _key(errors) or _key(w) != _key(warnings):
            mismatches.append((name, _key(errors), _key(e), _key(warnings), _key(w)))
    for m in mismatches:
        print("MISMATCH %s\n  expected errors %s\n  oracle   errors %s\n  expected warnings %s\n"
              "  oracle   warnings %s" % m, file=sys.stderr)
    if mismatches:
        sys.exit("%d expectation(s) disagree with the oracle; nothing written" % len(mismatches))

    if os.path.isdir(CASES_DIR):
        shutil.rmtree(CASES_DIR)
    os.makedirs(CASES_DIR)
    for name, (raw, errors, warnings, options, desc) in sorted(CASES.items()):
        with open(os.path.join(CASES_DIR, name + ".line"), "wb") as f:
            f.write(raw)
        expect = {"description": desc}
        if options:
            expect["options"] = options
        expect["valid"] = not errors
        expect["errors"] = [{"code": c, "path": p} for c, p in errors]
        expect["warnings"] = [{"code": c, "path": p} for c, p in warnings]
        with open(os.path.join(CASES_DIR, name + ".expect.json"), "w", encoding="utf-8") as f:
            json.dump(expect, f, indent=2, ensure_ascii=False)
            f.write("\n")
    print("wrote %d cases to %s" % (len(CASES), CASES_DIR))


if __name__ == "__main__":
    main()
