"""What every stress class shares: a raw adapter process, a sandbox, a session.

``RawAdapter`` is a ``StdioConnector`` (so isolation, the scrubbed
environment and the process-group kill of PROTO-ISOLATE-1, PROTO-ENV-1 and
PROTO-KILL-1 apply) that can also send a line of arbitrary bytes, read answer
lines one by one, and be killed with SIGKILL at any moment.
"""

from __future__ import annotations

import os
import queue
import shlex
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.errors import AdapterCrash, AdapterTimeout, ConformanceError
from conformance.peers.isolation import kill_tree
from conformance.peers.stdio import StdioConnector
from conformance.trees import remove_tree
from conformance.wire.connector import ConnectorOptions

__all__ = [
    "BIG_TOKENS",
    "DEFAULT_IMPL",
    "RawAdapter",
    "StressSandbox",
    "adapter_argv",
    "tool_use",
]

DEFAULT_IMPL = f"stdio:{shlex.quote(os.path.abspath(sys.executable))} -m reference.adapter"
"""The reference adapter, run with this Python."""

BIG_TOKENS = "100000000"
"""A Read token budget no stress file reaches (CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS)."""


def adapter_argv(spec: str) -> list[str]:
    """The command of an implementation spec: ``stdio:COMMAND`` or ``mutant:NAME``.

    Raises:
        ConformanceError: another scheme (stress needs a process it can kill).
    """
    scheme, _, rest = spec.partition(":")
    if scheme == "stdio" and rest.strip():
        return shlex.split(rest)
    if scheme == "mutant" and rest:
        from conformance.instruments.mutants import adapter_argv as mutant_argv  # noqa: PLC0415

        return mutant_argv(rest)
    raise ConformanceError(
        f"stress needs an adapter process (stdio:COMMAND or mutant:NAME), not {spec!r}"
    )


class RawAdapter(StdioConnector):
    """An adapter process driven line by line; see the module docstring."""

    def __init__(
        self, spec: str, options: ConnectorOptions, *, env: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(adapter_argv(spec), description=spec, options=options, env=env)

    @property
    def pid(self) -> int | None:
        """The adapter's process id (the namespace launcher's when isolated)."""
        return self._process.pid if self._process is not None else None

    def alive(self) -> bool:
        """Whether the adapter process is still running."""
        return self._process is not None and self._process.poll() is None

    def send_line(self, data: bytes) -> None:
        """Write ``data`` and a newline as they are.

        Raises:
            AdapterCrash: the adapter is gone.
        """
        process = self._process
        if process is None or process.stdin is None:
            raise AdapterCrash("the adapter is not running")
        try:
            process.stdin.write(data + b"\n")
            process.stdin.flush()
        except OSError as exc:
            raise AdapterCrash(f"cannot write to the adapter ({exc})") from exc

    def read_line(self, timeout: float) -> bytes:
        """The next answer line as bytes.

        Raises:
            AdapterTimeout: none within ``timeout`` seconds.
            AdapterCrash: the adapter closed its standard output.
        """
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AdapterTimeout(f"no answer within {timeout:g} s") from None
        if line is None:
            raise AdapterCrash("the adapter closed its stdout")
        return line

    def drain(self, wait: float) -> list[bytes]:
        """Every line that arrives within ``wait`` seconds (stray answers)."""
        found: list[bytes] = []
        deadline = time.monotonic() + wait
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                break
            found.append(line)
        return found

    def sigkill(self) -> None:
        """SIGKILL the adapter, its group and its descendants, and reap it."""
        process = self._process
        if process is None:
            return
        kill_tree(process.pid)
        process.wait(timeout=10)
        self._failed = True

    def call(self, name: str, given: Mapping[str, Any], *, id_: str = "") -> dict[str, Any]:
        """One ``call`` answered (errors included), the answer whole.

        Raises:
            AdapterFailure: crash, timeout or a protocol error.
        """
        use = tool_use(name, given, id_ or f"toolu_{time.monotonic_ns()}")
        return self.request_raw({"cmd": "call", "tool_use": use})


def tool_use(name: str, given: Mapping[str, Any], id_: str) -> dict[str, Any]:
    """A tool_use block."""
    return {"type": "tool_use", "id": id_, "name": name, "input": dict(given)}


@dataclass
class StressSandbox:
    """A directory tree for one stress class: ``root/`` with ``root/home``, session dirs."""

    base: Path = field(
        default_factory=lambda: Path(os.path.realpath(tempfile.mkdtemp(prefix="toolconf-stress-")))
    )
    sessions: int = 0

    def __post_init__(self) -> None:
        self.root.mkdir(exist_ok=True)
        self.home.mkdir(exist_ok=True)

    @property
    def root(self) -> Path:
        """The session root."""
        return self.base / "root"

    @property
    def home(self) -> Path:
        """The session's home (inside the root)."""
        return self.root / "home"

    def begin(
        self,
        adapter: RawAdapter,
        *,
        settings: Mapping[str, Any] | None = None,
        prompt: str = "deny",
        env: Mapping[str, str] | None = None,
    ) -> None:
        """Begin a fresh session on ``adapter`` (a new session directory each time).

        Raises:
            AdapterFailure: the adapter failed or refused.
        """
        self.sessions += 1
        session_dir = self.base / f"session-{self.sessions}"
        session_dir.mkdir()
        session = {
            "root": str(self.root),
            "cwd": str(self.root),
            "env": {
                "HOME": str(self.home),
                "CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS": BIG_TOKENS,
                **(env or {}),
            },
            "home": str(self.home),
            "settings": dict(settings or {}),
            "prompt": prompt,
            "test_tools": False,
            "session_dir": str(session_dir),
        }
        adapter.request({"cmd": "begin", "session": session})

    def cleanup(self) -> None:
        """Remove the whole tree."""
        remove_tree(self.base)
