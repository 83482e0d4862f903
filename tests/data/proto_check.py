"""Holds rdq-envelope's proto mapping to a real protobuf runtime (tests/it/proto_python.rs).

python3 proto_check.py PROTO_DIR WORK_DIR STREAM JSONL ECHO OWN OWN_JSONL

- compiles PROTO_DIR's rdq/envelope/v1 and v2 envelope.proto with grpc_tools.protoc into
  WORK_DIR and imports them;
- reads STREAM (length-delimited messages the tool wrote from the canonical lines of JSONL),
  maps each message to JSON as docs/proto.md says, and compares it with its line: the same
  value, headers in the same order;
- writes ECHO: each message decoded and encoded again by Python, length-delimited;
- writes OWN: messages Python builds from scratch (tri-states, year 0000, an unknown member
  at every level), and OWN_JSONL: the canonical lines the tool must turn them into.

Prints one JSON object (counts) on success; exits 1 with the first difference otherwise.
"""

import base64
import decimal
import importlib
import json
import os
import sys


def compile_protos(proto_dir, work_dir):
    import grpc_tools
    from grpc_tools import protoc

    well_known = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    files = ["rdq/envelope/v1/envelope.proto", "rdq/envelope/v2/envelope.proto"]
    status = protoc.main(
        ["protoc", f"-I{proto_dir}", f"-I{well_known}", f"--python_out={work_dir}", *files]
    )
    if status != 0:
        sys.exit(f"protoc failed on {files}: status {status}")
    sys.path.insert(0, work_dir)
    v1 = importlib.import_module("rdq.envelope.v1.envelope_pb2")
    v2 = importlib.import_module("rdq.envelope.v2.envelope_pb2")
    return v1, v2


def loads(text):
    """JSON with numbers as exact decimals: 20-digit integers, 1e400 and 10,000 digits."""
    return json.loads(text, parse_int=decimal.Decimal, parse_float=decimal.Decimal)


def read_varint(data, at):
    shift, value = 0, 0
    while True:
        b = data[at]
        at += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, at
        shift += 7


def write_varint(value, out):
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return


def messages(data):
    at = 0
    while at < len(data):
        length, at = read_varint(data, at)
        yield data[at : at + length]
        at += length


def civil(days):
    """Proleptic Gregorian (year, month, day) of days since 1970-01-01: years 0000-9999,
    where Python's datetime starts at 0001."""
    z = days + 719468
    era = z // 146097  # floor division: Hinnant's C form adjusts for truncation
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + (m <= 2), m, d)


def timestamp(t):
    assert 0 <= t.nanos < 1_000_000_000 and t.nanos % 1_000_000 == 0, t
    ms = t.seconds * 1000 + t.nanos // 1_000_000
    days, rest = divmod(ms, 86_400_000)
    y, mo, d = civil(days)
    h, rest = divmod(rest, 3_600_000)
    mi, rest = divmod(rest, 60_000)
    s, milli = divmod(rest, 1000)
    return f"{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{milli:03}Z"


def ms_of(t):
    return t.seconds * 1000 + t.nanos // 1_000_000


def unknown(obj, members):
    for m in members:
        obj[m.name] = loads(m.json)


def tri(m, oneof, null_name, value):
    """absent (None returned as a marker), null, or the value."""
    which = m.WhichOneof(oneof)
    if which is None:
        return ABSENT
    if which == null_name:
        return None
    return value(getattr(m, which))


ABSENT = object()


def put(obj, name, value):
    if value is not ABSENT:
        obj[name] = value


def error_json(e):
    o = {"type": e.type, "message": e.message}
    if e.HasField("detail_json"):
        o["detail"] = loads(e.detail_json)
    put(o, "stack", tri(e, "stack", "stack_null", lambda s: s))
    unknown(o, e.unknown_members)
    return o


def envelope_json(m, pb):
    v = m.envelope_version
    o = {"envelope_version": v, "id": m.id, "queue": m.queue, "handler_ref": m.handler_ref}
    put(o, "handler_version", tri(m, "handler_version", "handler_version_null", lambda s: s))
    if v == 1 or m.HasField("payload"):
        o["payload"] = base64.b64encode(m.payload).decode()
    o["payload_content_type"] = m.payload_content_type

    def payload_ref(r):
        ref = {"uri": r.uri, "sha256": r.sha256, "size": r.size}
        unknown(ref, r.unknown_members)
        return ref

    put(o, "payload_ref", tri(m, "payload_ref", "payload_ref_null", payload_ref))
    o["headers"] = {h.key: h.value for h in m.headers}
    if v == 2:
        origin = {}
        if m.origin.HasField("source"):
            origin["source"] = m.origin.source
        if m.origin.HasField("submitted_by"):
            origin["submitted_by"] = m.origin.submitted_by
        unknown(origin, m.origin.unknown_members)
        o["origin"] = origin
    status = pb.Status.Name(m.status)
    assert status != "STATUS_UNSPECIFIED"
    o["status"] = status[len("STATUS_") :]
    o["attempt_count"] = m.attempt_count
    o["redrive_count"] = m.redrive_count
    o["next_attempt_at"] = timestamp(m.next_attempt_at) if m.HasField("next_attempt_at") else None
    o["lease_expires_at"] = (
        timestamp(m.lease_expires_at) if m.HasField("lease_expires_at") else None
    )
    o["created_at"] = timestamp(m.created_at)
    attempts = []
    for a in m.attempts:
        att = {"attempt_no": a.attempt_no, "started_at": timestamp(a.started_at)}
        finished = a.HasField("finished_at")
        att["finished_at"] = timestamp(a.finished_at) if finished else None
        if v == 2:
            att["duration_ms"] = ms_of(a.finished_at) - ms_of(a.started_at) if finished else None
        att["outcome"] = (
            pb.Outcome.Name(a.outcome)[len("OUTCOME_") :] if a.HasField("outcome") else None
        )
        put(att, "error", tri(a, "error", "error_null", error_json))
        unknown(att, a.unknown_members)
        attempts.append(att)
    o["attempts"] = attempts
    unknown(o, m.unknown_members)
    return o


def decode(data, v1, v2):
    probe = v1.Envelope()
    probe.ParseFromString(data)
    pb = {1: v1, 2: v2}[probe.envelope_version]
    m = pb.Envelope()
    m.ParseFromString(data)
    return m, pb


def own_messages(v1, v2):
    """Messages built by Python, and the canonical lines they stand for."""
    out = []
    m = v2.Envelope(
        envelope_version=2,
        id="00000000000000000000000000",
        queue="mail",
        handler_ref="send",
        handler_version_null=0,
        payload=b"\x00\xffhi",
        payload_content_type="application/octet-stream",
        payload_ref_null=0,
        headers=[v2.Header(key="A", value="1"), v2.Header(key="a", value="2")],
        status=v2.STATUS_DEAD,
        attempt_count=1,
        redrive_count=0,
        created_at={"seconds": -62167219200, "nanos": 0},
        unknown_members=[v2.UnknownMember(name="x", json="[1.0,1e2,-0]")],
    )
    m.origin.source = "api"
    m.origin.unknown_members.add(name="zone", json='"eu"')
    a = m.attempts.add(attempt_no=1, outcome=v2.OUTCOME_PERMANENT_FAILURE)
    a.started_at.seconds, a.started_at.nanos = -62167219200, 0
    a.finished_at.seconds, a.finished_at.nanos = -62167219199, 250_000_000
    a.error_value.type = "E"
    a.error_value.message = "boom"
    a.error_value.detail_json = '{"code":7}'
    a.error_value.stack_null = 0
    a.error_value.unknown_members.add(name="retryable", json="true")
    a.unknown_members.add(name="host", json='"w1"', spelling='"\\u0068ost"')
    out.append(
        (
            m,
            '{"envelope_version":2,"id":"00000000000000000000000000","queue":"mail",'
            '"handler_ref":"send","handler_version":null,"payload":"AP9oaQ==",'
            '"payload_content_type":"application/octet-stream","payload_ref":null,'
            '"headers":{"A":"1","a":"2"},"origin":{"source":"api","zone":"eu"},'
            '"status":"DEAD","attempt_count":1,"redrive_count":0,"next_attempt_at":null,'
            '"lease_expires_at":null,"created_at":"0000-01-01T00:00:00.000Z","attempts":'
            '[{"attempt_no":1,"started_at":"0000-01-01T00:00:00.000Z",'
            '"finished_at":"0000-01-01T00:00:01.250Z","duration_ms":1250,'
            '"outcome":"PERMANENT_FAILURE","error":{"type":"E","message":"boom",'
            '"detail":{"code":7},"stack":null,"retryable":true},"\\u0068ost":"w1"}],'
            '"x":[1.0,1e2,-0]}',
        )
    )
    m = v1.Envelope(
        envelope_version=1,
        id="7ZZZZZZZZZZZZZZZZZZZZZZZZZ",
        queue="q",
        handler_ref="h",
        handler_version_value="1.0",
        payload=b"",
        payload_content_type="text/plain",
        status=v1.STATUS_PENDING,
        next_attempt_at={"seconds": 253402300799, "nanos": 999_000_000},
        created_at={"seconds": 253402300799, "nanos": 999_000_000},
    )
    out.append(
        (
            m,
            '{"envelope_version":1,"id":"7ZZZZZZZZZZZZZZZZZZZZZZZZZ","queue":"q",'
            '"handler_ref":"h","handler_version":"1.0","payload":"",'
            '"payload_content_type":"text/plain","headers":{},"status":"PENDING",'
            '"attempt_count":0,"redrive_count":0,"next_attempt_at":"9999-12-31T23:59:59.999Z",'
            '"lease_expires_at":null,"created_at":"9999-12-31T23:59:59.999Z","attempts":[]}',
        )
    )
    return out


def main():
    proto_dir, work_dir, stream, jsonl, echo, own, own_jsonl = sys.argv[1:8]
    v1, v2 = compile_protos(proto_dir, work_dir)
    lines = [l for l in open(jsonl, encoding="utf-8").read().split("\n") if l]
    data = open(stream, "rb").read()
    echoed = bytearray()
    count = 0
    for i, (raw, line) in enumerate(zip(messages(data), lines, strict=True)):
        m, pb = decode(raw, v1, v2)
        mapped = envelope_json(m, pb)
        expected = loads(line)
        if mapped != expected or list(mapped["headers"]) != list(expected["headers"]):
            for key in expected:
                if mapped.get(key) != expected[key]:
                    sys.exit(f"message {i}: {key}: Python reads {mapped.get(key)!r}, the line has {expected[key]!r}")
            sys.exit(f"message {i}: Python reads {sorted(mapped)}, the line has {sorted(expected)}")
        again = m.SerializeToString()
        write_varint(len(again), echoed)
        echoed += again
        count += 1
    open(echo, "wb").write(bytes(echoed))
    built = bytearray()
    expected_lines = []
    for m, line in own_messages(v1, v2):
        raw = m.SerializeToString()
        write_varint(len(raw), built)
        built += raw
        expected_lines.append(line)
        # Python reads back what it wrote the way the mapping says.
        again, pb = decode(raw, v1, v2)
        assert envelope_json(again, pb) == loads(line), line
    open(own, "wb").write(bytes(built))
    open(own_jsonl, "w", encoding="utf-8").write("\n".join(expected_lines) + "\n")
    import google.protobuf

    print(json.dumps({"messages": count, "own": len(expected_lines), "protobuf": google.protobuf.__version__}))


if __name__ == "__main__":
    main()
