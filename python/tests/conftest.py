"""Fixtures of the module's tests: the bundled sample, the installed command, scratch folders.

The suite runs against an installed wheel (CI: a fresh virtual environment; by hand:
``maturin develop`` or ``pip install .``) and compares every function with the command line
of the same installation, ``rdq-envelope`` beside the interpreter.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "dlq-sample.jsonl.zst"


def command() -> str:
    """The installed ``rdq-envelope``: the one beside this interpreter, else on PATH."""
    beside = Path(sys.executable).with_name("rdq-envelope")
    if beside.exists():
        return str(beside)
    found = shutil.which("rdq-envelope")
    if found is None:
        pytest.fail("rdq-envelope is not installed beside this Python (pip install the wheel)")
    return found


def cli(*args: str, check_status: int | None = 0) -> subprocess.CompletedProcess[bytes]:
    """Runs the command line; asserts its exit status unless ``check_status`` is None."""
    done = subprocess.run([command(), *args], capture_output=True, timeout=300)
    if check_status is not None:
        assert done.returncode == check_status, done.stderr.decode()
    return done


@pytest.fixture(scope="session")
def sample() -> Path:
    return SAMPLE


@pytest.fixture(scope="session")
def sample_lines() -> List[bytes]:
    """The sample's lines (zstd, which the tests' machines have, decompresses them)."""
    raw = subprocess.run(["zstd", "-dc", str(SAMPLE)], capture_output=True, check=True).stdout
    return raw.splitlines()


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """About 60 MB of generated envelopes (1% defective), for the runs that must last."""
    path = tmp_path_factory.mktemp("corpus") / "gen.jsonl"
    cli("gen", "--size", "60MB", "--seed", "7", "--invalid-rate", "0.01", "-o", str(path))
    return path


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty folder, the working directory for the test (given back after it)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path
