#!/usr/bin/env python3
"""Writes samples/dlq-sample.jsonl.zst: a small, deterministic DLQ export (v1 and v2 envelopes,
mostly DEAD) with a few realistic defects, for the README's first command.

    python3 samples/make_sample.py && zstd -19 -f samples/dlq-sample.jsonl -o samples/dlq-sample.jsonl.zst
"""
import base64, json, random

rng = random.Random(7)
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
QUEUES = ["billing.invoices", "mail.outbound", "search.reindex", "payments.capture"]
ERRORS = [
    ("java.net.SocketTimeoutException", "Read timed out after 30000 ms"),
    ("org.postgresql.util.PSQLException", "ERROR: deadlock detected"),
    ("com.acme.billing.TemplateMissingException", "template 'invoice-eu-v7' not found"),
    ("java.lang.IllegalStateException", "customer c-0017 has no billing address"),
]
BASE_MS = 1714564800000  # 2024-05-01T12:00:00.000Z


def ts(ms):
    import datetime
    d = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def ulid(ms):
    head = ""
    for _ in range(10):
        head = CROCKFORD[ms & 31] + head
        ms >>= 5
    return head + "".join(rng.choice(CROCKFORD) for _ in range(16))


def envelope(i, version):
    created = BASE_MS + i * 60_000
    queue = rng.choice(QUEUES)
    body = json.dumps({"task": i, "queue": queue, "items": list(range(rng.randint(1, 12)))})
    attempts, t = [], created + 1000
    for n in range(1, rng.randint(1, 4) + 1):
        kind, message = rng.choice(ERRORS)
        took = rng.randint(5, 30_000)
        a = {"attempt_no": n, "started_at": ts(t), "finished_at": ts(t + took),
             "outcome": "RETRYABLE_FAILURE",
             "error": {"type": kind, "message": message,
                       "stack": kind + ": " + message + "".join(
                           f"\n\tat com.acme.{queue.split('.')[0]}.Worker.step{k}(Worker.java:{40 + k})" for k in range(5))}}
        if version == 2:
            a = {k: a[k] for k in ("attempt_no", "started_at", "finished_at")} | {"duration_ms": took} | {
                k: a[k] for k in ("outcome", "error")}
        attempts.append(a)
        t += took + 60_000 * n
    attempts[-1]["outcome"] = "PERMANENT_FAILURE"
    e = {"envelope_version": version, "id": ulid(created), "queue": queue, "handler_ref": queue.split(".")[0] + ".handle",
         "handler_version": "1.4.2", "payload": base64.b64encode(body.encode()).decode(),
         "payload_content_type": "application/json", "payload_ref": None,
         "headers": {"traceparent": f"00-{rng.getrandbits(128):032x}-{rng.getrandbits(64):016x}-01"},
         "status": "DEAD", "attempt_count": len(attempts), "redrive_count": 0, "next_attempt_at": None,
         "lease_expires_at": None, "created_at": ts(created), "attempts": attempts}
    if version == 1:
        e["headers"]["rdq.source"] = "orders-api"
    else:
        e = {k: v for k, v in e.items()}
        items = list(e.items())
        at = [k for k, _ in items].index("headers") + 1
        e = dict(items[:at] + [("origin", {"source": "orders-api"})] + items[at:])
    return e


lines = []
for i in range(300):
    e = envelope(i, 2 if i % 3 == 0 else 1)
    line = json.dumps(e, separators=(",", ":"))
    # A few realistic defects, each a different family.
    if i == 17:
        line = line.replace('"queue":"', '"queue":"Billing ', 1)
    elif i == 42:
        line = line[: len(line) // 2]
    elif i == 99:
        line = line.replace('"status":"DEAD"', '"status":"DEAD","st\\u0061tus":"PENDING"')
    elif i == 150:
        line = line.replace('"created_at":"', '"created_at":"x', 1)
    elif i == 201:
        line = line.replace('"attempt_count":', '"attempt_count":1', 1)
    elif i == 250:
        line = line.replace('"payload":"', '"payload":"not base64 ', 1)
    lines.append(line)
    if i == 120:
        lines.append("")
open("samples/dlq-sample.jsonl", "w").write("\n".join(lines) + "\n")
