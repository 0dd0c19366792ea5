"""The ``stdio:COMMAND`` connector: an adapter process speaking JSON lines (PROTO-TRANSPORT-1)."""

from __future__ import annotations

import collections
import contextlib
import json
import os
import queue
import shlex
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from conformance.errors import AdapterCrash, AdapterTimeout, ConformanceError, ProtocolError
from conformance.interrupts import uninterrupted
from conformance.peers.isolation import (
    descendants,
    isolation_available,
    kill_tree,
    scrubbed_env,
    wrap,
)
from conformance.trees import remove_tree
from conformance.wire.connector import ConnectorBase, ConnectorOptions

__all__ = ["StdioConnector"]

_STDERR_KEEP = 64 * 1024


class StdioConnector(ConnectorBase):
    """An adapter process: JSON lines on stdin/stdout, stderr kept for reports.

    Lines are read whole by a reader thread, so an answer written in several
    chunks is fine. EOF or an exit is a crash; silence past the timeout is a
    timeout; anything but one JSON object per line is a protocol error. After
    any of these the process is killed by ``close``/``restart``.

    Each start gets a private directory of its own (removed at stop) holding
    the adapter's ``HOME`` and ``TMPDIR``; the adapter inherits only the
    allowlisted variables plus ``env`` (PROTO-ENV-1), runs in namespaces of
    its own when ``options.isolation`` allows and the host permits
    (PROTO-ISOLATE-1), leads a process group of its own, and stopping it kills
    that group and every descendant (PROTO-KILL-1).
    """

    def __init__(
        self,
        argv: list[str],
        *,
        description: str | None = None,
        options: ConnectorOptions | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> None:
        super().__init__(description or "stdio:" + shlex.join(argv), options or ConnectorOptions())
        if not argv:
            raise ConformanceError("stdio: needs a command")
        self.argv = argv
        self._env = dict(env) if env is not None else None
        self._cwd = cwd
        self._process: subprocess.Popen[bytes] | None = None
        self._private: Path | None = None
        self.isolated = False
        """Whether the running adapter is isolated (PROTO-ISOLATE-1)."""
        self._lines: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._stderr: collections.deque[bytes] = collections.deque()
        self._stderr_lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def _launch(self) -> None:
        """Start the adapter; a signal meanwhile waits until it is recorded (PROTO-KILL-1)."""
        with uninterrupted():
            self._launch_now()

    def _launch_now(self) -> None:
        mode = self.options.isolation
        isolate = mode == "on" or (mode == "auto" and isolation_available())
        if mode == "on" and not isolation_available():
            raise AdapterCrash(
                "isolation is required but unavailable here (PROTO-ISOLATE-1: Linux and unshare)"
            )
        private = Path(os.path.realpath(tempfile.mkdtemp(prefix="toolconf-impl-")))
        env = scrubbed_env(private, extra=self._env, passed=self.options.pass_env)
        argv = self.argv
        if isolate:
            program = self.argv[0]
            if "/" in program and self._cwd and not os.path.isabs(program):
                program = os.path.join(self._cwd, program)
            if shutil.which(program, path=env["PATH"]) is None:
                remove_tree(private)
                raise AdapterCrash(f"cannot start {shlex.join(self.argv)}: no such program")
            argv = wrap(self.argv, private)
        try:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=self._cwd,
                start_new_session=True,  # PROTO-KILL-1
            )
        except OSError as exc:
            remove_tree(private)
            raise AdapterCrash(f"cannot start {shlex.join(self.argv)}: {exc}") from exc
        self._process = process
        self._private = private
        self.isolated = isolate
        lines: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._lines = lines
        assert process.stdout is not None
        assert process.stderr is not None
        self._threads = [
            threading.Thread(target=_read_lines, args=(process.stdout, lines), daemon=True),
            threading.Thread(target=self._read_stderr, args=(process.stderr,), daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _read_stderr(self, stream: IO[bytes]) -> None:
        fd = stream.fileno()
        for chunk in iter(lambda: _read_some(fd), b""):
            with self._stderr_lock:
                self._stderr.append(chunk)
                while sum(map(len, self._stderr)) > _STDERR_KEEP and len(self._stderr) > 1:
                    self._stderr.popleft()

    def take_stderr(self) -> str:
        with self._stderr_lock:
            data = b"".join(self._stderr)
            self._stderr.clear()
        return data.decode("utf-8", "replace")

    def _exchange(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        process = self._process
        if process is None or process.stdin is None:
            raise AdapterCrash("the adapter is not running")
        try:
            process.stdin.write(json.dumps(request).encode("utf-8") + b"\n")
            process.stdin.flush()
        except OSError as exc:
            raise AdapterCrash(f"cannot write to the adapter ({exc}){self._exit_note()}") from exc
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AdapterTimeout(
                f"no answer to {request.get('cmd')!r} within {timeout:g} s"
            ) from None
        if line is None:
            raise AdapterCrash(f"the adapter closed its stdout{self._exit_note()}")
        try:
            response = json.loads(line)
        except ValueError as exc:
            raise ProtocolError(f"answer is not JSON ({exc}): {line[:200]!r}") from exc
        if not isinstance(response, dict):
            raise ProtocolError(f"answer is not a JSON object: {line[:200]!r}")
        return response

    def _exit_note(self) -> str:
        if self._process is None:
            return ""
        with contextlib.suppress(subprocess.TimeoutExpired):
            code = self._process.wait(timeout=1.0)
            return f"; it exited with status {code}"
        return ""

    def _stop(self, *, force: bool) -> None:
        """Close stdin and let the adapter exit (EOF means exit 0); kill it if forced or slow.

        Either way its process group and every descendant found before it
        exited are killed then (PROTO-KILL-1): nothing it started outlives it. A stop
        once begun is not cut short by a signal: it forgets the process first.
        """
        with uninterrupted():
            self._stop_now(force=force)

    def _stop_now(self, *, force: bool) -> None:
        process, self._process = self._process, None
        private, self._private = self._private, None
        self._hello = None
        if process is None:
            return
        family = descendants(process.pid)
        if force:
            kill_tree(process.pid)
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        try:
            process.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            kill_tree(process.pid)
            with contextlib.suppress(subprocess.TimeoutExpired):  # a loaded host: go on killing
                process.wait(timeout=5.0)
        kill_tree(process.pid)  # PROTO-KILL-1: what it left in its group
        for pid in family:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, 9)
        for thread in self._threads:
            thread.join(timeout=2.0)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
        if private is not None:
            remove_tree(private)


def _read_some(fd: int) -> bytes:
    try:
        return os.read(fd, 4096)
    except OSError:
        return b""


def _read_lines(stream: IO[bytes], lines: queue.SimpleQueue[bytes | None]) -> None:
    with contextlib.suppress(OSError, ValueError):
        for line in iter(stream.readline, b""):
            lines.put(line)
    lines.put(None)
