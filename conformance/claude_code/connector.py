"""The ``claude-code:VERSION`` connector: a pinned Claude Code release as the implementation.

``--impl claude-code:2.1.88`` (or ``claude-code:latest``) installs the release
into the cache on first use (``install.ensure_release``) and serves protocol
v1 in process through ``ClaudeCodeAdapter``. The connector keeps the
guarantees of every connector: a turn that does not come back within the
run's timeout kills the CLI and is a ``timeout``; a CLI that dies is a
``crash``; either way ``restart`` brings up a fresh adapter.
"""

from __future__ import annotations

import json
from typing import Any

from conformance.claude_code.adapter import ClaudeCodeAdapter, played_profile
from conformance.claude_code.conversation import CliCrash, CliTimeout
from conformance.claude_code.install import ClaudeCodeUnavailable, ensure_release
from conformance.connectors import ConnectorOptions, _BaseConnector
from conformance.errors import AdapterCrash, AdapterTimeout, ProtocolError

__all__ = ["ClaudeCodeConnector", "connect"]

DEFAULT_TURN_TIMEOUT = 20.0
"""Seconds per turn when the run keeps the default 10 s timeout (the CLI is slower)."""


class ClaudeCodeConnector(_BaseConnector):
    """A Claude Code release driven through its CLI, in this process."""

    def __init__(self, version: str, options: ConnectorOptions) -> None:
        super().__init__(f"claude-code:{version}", options)
        self.version = version
        self._adapter: ClaudeCodeAdapter | None = None

    def _launch(self) -> None:
        try:
            release = ensure_release(self.version)
        except ClaudeCodeUnavailable as exc:
            raise AdapterCrash(str(exc)) from exc
        self._adapter = ClaudeCodeAdapter(
            release,
            turn_timeout=max(self.options.timeout, DEFAULT_TURN_TIMEOUT),
            profile=played_profile(self.version, release.version),  # PROTO-HELLO-2
        )

    def _exchange(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        adapter = self._adapter
        if adapter is None:
            raise AdapterCrash("Claude Code is not running")
        wire = json.loads(json.dumps(request))
        try:
            response = adapter.handle(wire)
        except CliTimeout as exc:
            raise AdapterTimeout(str(exc)) from exc
        except CliCrash as exc:
            raise AdapterCrash(str(exc)) from exc
        try:
            return dict(json.loads(json.dumps(response, allow_nan=False)))
        except (TypeError, ValueError) as exc:
            raise ProtocolError(f"answer is not JSON: {exc}") from exc

    def take_stderr(self) -> str:
        return self._adapter.take_stderr() if self._adapter else ""

    def _stop(self, *, force: bool) -> None:
        adapter, self._adapter = self._adapter, None
        self._hello = None
        if adapter is not None:
            adapter.close()


def connect(rest: str, options: ConnectorOptions) -> ClaudeCodeConnector:
    """The factory behind ``claude-code:VERSION`` (``latest`` when no version is given)."""
    return ClaudeCodeConnector(rest or "latest", options)
