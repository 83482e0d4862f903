"""``where``: the jq expression evaluated by the command line in a process of its own.

jq cannot be interrupted inside one evaluation, so an expression that never ends, recurses past
the stack or fills the memory could only be stopped in this process by ending it. The command
line ends such a run by its limits (``--where-timeout``, ``--where-max-memory``, a stack
overflow turned into status 2), every output as it was. So a call with ``where`` runs
``rdq-envelope filter`` (this package's own command, ``python -m rdq_envelope``) with the
call's options, and Python is never at risk: a runaway expression is an :class:`Error`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from typing import Any, Dict, List, Optional, Tuple

from . import _native


def filter_argv(
    common: Dict[str, Any],
    predicates: Dict[str, Any],
    *,
    where_timeout: Optional[float],
    where_max_memory: Optional[int],
) -> List[str]:
    """The arguments of ``rdq-envelope filter`` for a call's options (not its inputs and
    outputs)."""
    if common["require_version"] is not None:
        raise ValueError("require_version does not go with where (filter has no --require-version)")
    argv = ["filter", "-q"]
    flags = {
        "status": "--status",
        "queue": "--queue",
        "handler": "--handler",
        "id": "--id",
        "error_type": "--error-type",
        "last_error_type": "--last-error-type",
        "outcome": "--outcome",
        "payload_contains": "--payload-contains",
        "fingerprint": "--fingerprint",
        "error_message": "--error-message",
    }
    for name, flag in flags.items():
        for value in predicates[name]:
            argv += [flag, value]
    for name in ("min_attempts", "max_attempts", "min_redrives", "since", "until", "failed_since", "failed_until"):
        if predicates[name] is not None:
            argv += ["--" + name.replace("_", "-"), str(predicates[name])]
    for key, glob in predicates["header"]:
        argv += ["--header", f"{key}={glob}"]
    argv += ["--where", predicates["where"]]
    if where_timeout is not None:
        argv += ["--where-timeout", repr(float(where_timeout))]
    if where_max_memory is not None:
        argv += ["--where-max-memory", str(where_max_memory)]
    if common["threads"] is not None:
        argv += ["-j", str(common["threads"])]
    if common["max_line_bytes"] is not None:
        argv += ["--max-line-bytes", str(common["max_line_bytes"])]
    if common["max_envelope_bytes"] is not None:
        argv += ["--max-envelope-bytes", str(common["max_envelope_bytes"])]
    for queue, limit in (common["queue_limits"] or {}).items():
        argv += ["--queue-limit", f"{queue}={limit}"]
    return argv


class Child:
    """``rdq-envelope filter`` running in a process of its own: its inputs given as paths,
    or fed to its standard input (bytes and file objects; one such input at most), its books
    in a summary file, its messages kept for an error."""

    def __init__(self, argv: List[str], inputs: List[Tuple[str, Any, Optional[str]]], stdout: Any) -> None:
        self.folder = tempfile.TemporaryDirectory(prefix="rdq-where-")
        self.summary = os.path.join(self.folder.name, "summary.json")
        self.stderr = open(os.path.join(self.folder.name, "stderr"), "w+b")
        streamed = [i for i in inputs if i[0] != "path"]
        if len(streamed) > 1:
            raise ValueError("source: with where, at most one input may be bytes or a file object")
        names = [value if kind == "path" else "-" for kind, value, _ in inputs]
        command = [sys.executable, "-m", "rdq_envelope", *argv, "--summary", self.summary, *names]
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE if streamed else subprocess.DEVNULL,
            stdout=stdout,
            stderr=self.stderr,
        )
        self.feeder: Optional[threading.Thread] = None
        if streamed:
            self.feeder = threading.Thread(target=self._feed, args=(streamed[0],), daemon=True)
            self.feeder.start()

    def _feed(self, source: Tuple[str, Any, Optional[str]]) -> None:
        kind, value, _ = source
        stdin = self.process.stdin
        assert stdin is not None
        try:
            if kind == "bytes":
                stdin.write(value)
            else:
                while True:
                    block = value.read(1 << 20)
                    if not block:
                        break
                    stdin.write(block)
        except (BrokenPipeError, OSError):
            pass  # the command stopped reading (--limit, an error): it says why
        finally:
            try:
                stdin.close()
            except OSError:
                pass

    def wait(self) -> Dict[str, Any]:
        """Waits for the command (Ctrl-C is handed on to it, which then leaves every output
        as it was) and returns its books, or raises its error."""
        try:
            status = self.process.wait()
        except KeyboardInterrupt:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
            self.close()
            raise
        if self.feeder is not None:
            self.feeder.join()
        try:
            if status not in (0, 1):
                self.stderr.seek(0)
                message = self.stderr.read().decode("utf-8", "replace").strip()
                message = message.removeprefix("rdq-envelope: ")
                code = "WHERE" if "--where" in message else "INPUT"
                raise _native.Error(code, message or f"the command ended with status {status}")
            with open(self.summary, encoding="utf-8") as summary:
                books: Dict[str, Any] = json.load(summary)
            return books
        finally:
            self.close()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.stderr.close()
        self.folder.cleanup()


class Lines:
    """The command's standard output as the module's input: a read at its end waits for the
    command, and a command that failed is an error there, never an input that looks whole."""

    name = "<where>"

    def __init__(self, child: Child) -> None:
        self.child = child
        self.books: Optional[Dict[str, Any]] = None
        stdout = child.process.stdout
        assert stdout is not None
        self.fd = stdout.fileno()

    def read(self, n: int = -1) -> bytes:
        data = os.read(self.fd, n if n and n > 0 else 1 << 20)
        if data:
            return data
        if self.books is None:
            try:
                self.books = self.child.wait()
            except _native.Error as e:
                raise OSError(f"{e.args[0]}: {e.args[1]}") from None
        return b""


class WhereStream:
    """``read`` with ``where``: the module's stream over the command's matching lines, whose
    books are the command's (every line it read, rejected and filtered out included)."""

    def __init__(self, inner: Any, lines: Lines) -> None:
        self.inner = inner
        self.lines = lines

    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object:
        return self.inner.__arrow_c_stream__(requested_schema)

    def __arrow_c_schema__(self) -> object:
        return self.inner.__arrow_c_schema__()

    def books(self) -> Optional[str]:
        if self.inner.books() is None or self.lines.books is None:
            return None
        return json.dumps(self.lines.books)

    def close(self) -> None:
        self.inner.close()
        self.lines.child.close()
