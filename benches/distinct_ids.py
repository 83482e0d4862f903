#!/usr/bin/env python3
"""Writes N small valid envelopes with N distinct IDs to standard output, for measuring
`dedupe`'s memory per distinct ID (benches/throughput.py --dedupe-ids N).

    python3 benches/distinct_ids.py 10000000 | rdq-envelope dedupe --keep first -o /dev/null

The IDs are ULIDs of one millisecond whose 80 random bits are i scrambled by an odd multiplier
(a bijection modulo 2^80): distinct, and spread over the key space as real ULIDs are. Every
fourth envelope has one failed attempt and a redrive, so `--keep newest` has history to rank.
"""

import sys

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
# Two base32 characters per 10 bits: 1,024 entries, so an ID is eight lookups.
PAIRS = [CROCKFORD[i >> 5] + CROCKFORD[i & 31] for i in range(1024)]
MASK80 = (1 << 80) - 1
MULTIPLIER = 0x9E3779B97F4A7C15F39D  # odd, so i -> i * M mod 2^80 is a bijection

HEAD = ('{"envelope_version":2,"id":"01HWT68NT0%s","queue":"orders.fulfilment",'
        '"handler_ref":"order.ship","payload":"eyJvIjoxfQ==",'
        '"payload_content_type":"application/json","payload_ref":null,"headers":{},"origin":{"source":"bench"},')
PENDING = ('"status":"PENDING","attempt_count":0,"redrive_count":0,'
           '"next_attempt_at":"2024-05-01T13:42:24.406Z","lease_expires_at":null,'
           '"created_at":"2024-05-01T13:42:22.272Z","attempts":[]}\n')
DEAD = ('"status":"DEAD","attempt_count":1,"redrive_count":1,"next_attempt_at":null,'
        '"lease_expires_at":null,"created_at":"2024-05-01T13:42:22.272Z","attempts":[{'
        '"attempt_no":1,"started_at":"2024-05-01T13:42:23.000Z",'
        '"finished_at":"2024-05-01T13:42:24.000Z","duration_ms":1000,"outcome":"PERMANENT_FAILURE",'
        '"worker_id":"w-1","error":{"type":"java.lang.IllegalStateException",'
        '"message":"boom","stack":null}}]}\n')


def random_part(i):
    x = (i * MULTIPLIER) & MASK80
    return "".join(PAIRS[(x >> shift) & 1023] for shift in range(70, -1, -10))


def main():
    n = int(sys.argv[1])
    out = sys.stdout.buffer
    batch = []
    for i in range(n):
        batch.append(HEAD % random_part(i) + (DEAD if i % 4 == 3 else PENDING))
        if len(batch) == 20000:
            out.write("".join(batch).encode())
            batch.clear()
    out.write("".join(batch).encode())


if __name__ == "__main__":
    main()
