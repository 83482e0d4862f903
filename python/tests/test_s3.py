"""Object storage from Python: `s3://` and `http://` sources and an `s3://` destination, on
moto's S3 server started on 127.0.0.1 on a free port (skipped without `moto_server`, except
under CI). No request goes anywhere else: the endpoint and credentials are set, and the
metadata service is off."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Iterator

import pyarrow as pa
import pytest

import rdq_envelope


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    server = shutil.which("moto_server")
    if server is None:
        if os.environ.get("CI"):
            pytest.fail("moto_server is needed under CI (pip install 'moto[server]')")
        pytest.skip("skipped: moto_server is not installed (pip install 'moto[server]')")
    port = free_port()
    child = subprocess.Popen(
        [server, "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(url, timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        urllib.request.urlopen(urllib.request.Request(f"{url}/bucket", method="PUT"), timeout=5).close()
        yield url
    finally:
        child.terminate()
        child.wait(timeout=10)


@pytest.fixture
def s3(endpoint: str, monkeypatch: pytest.MonkeyPatch) -> str:
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(name, raising=False)
    for name, value in {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1",
        "AWS_ALLOW_HTTP": "true",
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/credentials",
        "AWS_CONFIG_FILE": "/nonexistent/config",
    }.items():
        monkeypatch.setenv(name, value)
    return endpoint


def test_s3_and_http_sources_and_an_s3_destination(s3: str, sample: Path) -> None:
    # Without a content type, urllib's default (a form) keeps moto parsing the body.
    put = urllib.request.Request(
        f"{s3}/bucket/dlq.jsonl.zst",
        data=sample.read_bytes(),
        method="PUT",
        headers={"Content-Type": "application/octet-stream", "x-amz-acl": "public-read"},
    )
    urllib.request.urlopen(put, timeout=10).close()
    local = pa.table(rdq_envelope.read(sample))
    assert pa.table(rdq_envelope.read("s3://bucket/dlq.jsonl.zst")).equals(local)
    assert pa.table(rdq_envelope.read(f"{s3}/bucket/dlq.jsonl.zst")).equals(local)
    books = rdq_envelope.migrate(sample, "s3://bucket/v2.jsonl.zst", to=2)
    assert books["emitted"] == 293
    assert rdq_envelope.validate("s3://bucket/v2.jsonl.zst", require_version=2).valid
    with pytest.raises(rdq_envelope.Error) as raised:
        pa.table(rdq_envelope.validate("s3://bucket/missing.jsonl").diagnostics)
    assert raised.value.args[0] == "INPUT" and "missing.jsonl" in raised.value.args[1]
