"""The ``claude-code:VERSION`` connector: a pinned Claude Code release as the implementation.

``--impl claude-code:2.1.88`` (or ``claude-code:latest``) installs the release
into the cache on first use (``install.ensure_release``) and serves protocol
v1 in process through ``ClaudeCodeAdapter``. A turn that does not come back
within the run's timeout kills the CLI and is a ``timeout``; a CLI that dies,
or a release that cannot be installed, is a ``crash``; either way
``restart`` brings up a fresh adapter.
"""

from __future__ import annotations

from conformance.errors import AdapterCrash, AdapterTimeout
from conformance.peers.claude_code.adapter import ClaudeCodeAdapter, played_profile
from conformance.peers.claude_code.conversation import CliCrash, CliTimeout
from conformance.peers.claude_code.install import ClaudeCodeUnavailable, ensure_release
from conformance.peers.inprocess import FailureMap, InProcessConnector
from conformance.wire.connector import ConnectorOptions

__all__ = ["DEFAULT_TURN_TIMEOUT", "connect"]

DEFAULT_TURN_TIMEOUT = 20.0
"""Seconds per turn when the run keeps the default 10 s timeout (the CLI is slower)."""

FAILURES: FailureMap = {
    CliTimeout: AdapterTimeout,
    CliCrash: AdapterCrash,
    ClaudeCodeUnavailable: AdapterCrash,
}


def connect(rest: str, options: ConnectorOptions) -> InProcessConnector:
    """The factory behind ``claude-code:VERSION`` (``latest`` when no version is given)."""
    version = rest or "latest"

    def launch() -> ClaudeCodeAdapter:
        release = ensure_release(version)
        return ClaudeCodeAdapter(
            release,
            turn_timeout=max(options.timeout, DEFAULT_TURN_TIMEOUT),
            profile=played_profile(version, release.version),  # PROTO-HELLO-2
        )

    return InProcessConnector(f"claude-code:{version}", options, launch, FAILURES)
