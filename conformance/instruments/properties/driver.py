"""Drive any implementation from a property test: one protocol session per example.

``Implementation`` owns a started connector (``hello`` done once, restarted
after a failure); ``Implementation.session()`` makes a fresh sandbox (root,
home and session directory on the real disk), sends ``begin``, and yields a
``DriverSession`` whose ``call`` sends one ``tool_use`` and returns a parsed
``Result``. Leaving the block sends ``end`` and removes the sandbox, so every
Hypothesis example (or state-machine run) starts from an empty read-file state.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.errors import AdapterFailure
from conformance.peers.registry import connect
from conformance.run.runner import DEFAULT_FIXTURES
from conformance.run.sandbox import Sandbox
from conformance.suite.checks import text_view
from conformance.wire.connector import Connector, ConnectorOptions
from conformance.wire.protocol import Hello, check_call_response, check_ok

__all__ = ["DriverSession", "Implementation", "Result"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Result:
    """One ``call`` answer, reduced to what properties check."""

    text: str
    """The tool_result text (text blocks joined with newlines)."""
    is_error: bool
    stage: str
    error_code: int | None
    error_name: str | None
    dedup: bool

    @classmethod
    def parse(cls, response: Mapping[str, Any]) -> Result:
        """Build from a ``call`` response already checked by ``check_call_response``."""
        tool_result = response["tool_result"]
        outcome = response["outcome"]
        text = text_view(tool_result.get("content", ""))
        return cls(
            text=text if isinstance(text, str) else repr(text),
            is_error=tool_result.get("is_error") is True,
            stage=outcome["stage"],
            error_code=outcome.get("error_code"),
            error_name=outcome.get("error_name"),
            dedup=outcome.get("dedup") is True,
        )

    @property
    def done(self) -> bool:
        """The call succeeded."""
        return self.stage == "done" and not self.is_error

    def __str__(self) -> str:
        code = "" if self.error_code is None else f" {self.error_code}"
        name = "" if self.error_name is None else f" {self.error_name}"
        dedup = " dedup" if self.dedup else ""
        return f"[{self.stage}{code}{name}{dedup}] {self.text[:300]!r}"


class DriverSession:
    """One ``begin``…``end`` session rooted in a fresh sandbox."""

    def __init__(self, implementation: Implementation, sandbox: Sandbox) -> None:
        self.implementation = implementation
        self.sandbox = sandbox
        self.root = sandbox.root
        self._ids = itertools.count(1)

    def path(self, relative: str) -> Path:
        """The absolute path of a root-relative name."""
        return self.root / relative

    def call(self, name: str, **tool_input: Any) -> Result:
        """Run one tool_use through the whole pipeline (PROTO-CALL-1)."""
        tool_use = {
            "type": "tool_use",
            "id": f"toolu_{next(self._ids):04d}",
            "name": name,
            "input": tool_input,
        }
        response = self.implementation.request({"cmd": "call", "tool_use": tool_use})
        check_call_response(response)
        return Result.parse(response)

    def restart(self) -> None:
        """``end``, then ``begin`` a new session on the same root (the files stay)."""
        check_ok(self.implementation.request({"cmd": "end"}), "end")
        self.implementation.begin(self.sandbox)

    # -- out-of-band changes, made by the test on the real disk ------------

    def write_file(self, relative: str, data: bytes, *, mtime_ns: int | None = None) -> None:
        """Write bytes in place, as an editor would (parents made), then set the mtime."""
        path = self.path(relative)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        if mtime_ns is not None:
            os.utime(path, ns=(mtime_ns, mtime_ns))

    def stat(self, relative: str) -> tuple[bytes, int] | None:
        """The file's bytes and mtime (ns), or None when nothing is there."""
        path = self.path(relative)
        try:
            return path.read_bytes(), path.stat().st_mtime_ns
        except FileNotFoundError:
            return None


class Implementation:
    """A started connector shared by many sessions."""

    def __init__(self, spec: str, options: ConnectorOptions | None = None) -> None:
        self.connector: Connector = connect(spec, options)
        self.hello: Hello = self.connector.start()
        self._broken = False

    @property
    def name(self) -> str:
        """The implementation's own name (its hello)."""
        return str(self.hello.implementation.get("name", "?"))

    def missing(self, *features: str) -> list[str]:
        """Those of ``features`` the implementation does not declare."""
        return [f for f in features if f not in self.hello.features]

    def request(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """One request; a crash, timeout or protocol error marks the instance for restart."""
        try:
            return self.connector.request(body)
        except AdapterFailure:
            self._broken = True
            raise

    @contextlib.contextmanager
    def session(self) -> Iterator[DriverSession]:
        """A fresh sandbox and session; ``end`` and cleanup however the block ends."""
        if self._broken:
            self.hello = self.connector.restart()
            self._broken = False
        sandbox = Sandbox(DEFAULT_FIXTURES, prefix="toolconf-prop-")
        try:
            self.begin(sandbox)
            try:
                yield DriverSession(self, sandbox)
            finally:
                if not self._broken:
                    check_ok(self.request({"cmd": "end"}), "end")
        finally:
            sandbox.cleanup()

    def begin(self, sandbox: Sandbox) -> None:
        """``begin`` a session rooted in ``sandbox`` with a new session directory."""
        begin = {
            "cmd": "begin",
            "session": {
                "root": str(sandbox.root),
                "home": str(sandbox.home),
                "env": {"HOME": str(sandbox.home)},
                "session_dir": str(sandbox.new_session_dir()),
                "prompt": "allow",
            },
        }
        check_ok(self.request(begin), "begin")

    def close(self) -> None:
        """Stop the implementation."""
        self.connector.close()
