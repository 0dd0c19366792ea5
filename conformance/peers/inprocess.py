"""One connector for every peer adapter that runs in this process.

A peer adapter (Claude Code through its CLI, an MCP server through the SDK's
client, a coding agent through its CLI) turns protocol v1 requests into what
its peer understands, in this process: ``handle(request) -> answer``,
``take_stderr()`` and ``close()``. ``InProcessConnector`` gives it the
guarantees of every connector: requests and answers go through a JSON round
trip, so the adapter sees exactly what a stdio adapter would; an answer that
cannot be encoded is a protocol error; and the adapter's own exceptions are
mapped, through the table it is given, to the failure each one means (a turn
that never came back is a timeout, a peer that died a crash), after which
``restart`` brings up a fresh adapter.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from conformance.errors import AdapterCrash, AdapterFailure, ProtocolError
from conformance.interrupts import uninterrupted
from conformance.wire.connector import ConnectorBase, ConnectorOptions

__all__ = ["FailureMap", "InProcessConnector", "PeerAdapter"]


class PeerAdapter(Protocol):
    """A protocol v1 server for one peer, in this process."""

    def handle(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Answer one request, its ``seq`` echoed; the peer's failures raise."""
        ...

    def take_stderr(self) -> str:
        """The peer's log output since the last call."""
        ...

    def close(self) -> None:
        """End the peer and remove the adapter's own files; safe to call twice."""
        ...


FailureMap = Mapping[type[BaseException], type[AdapterFailure]]
"""Which failure an exception of the adapter means, the first matching class deciding."""


class InProcessConnector(ConnectorBase):
    """A peer adapter in this process, made afresh by ``launch`` on every (re)start.

    ``launch`` may raise one of ``failures``' exceptions too (a peer that
    cannot be installed is a crash). ``label`` prefixes every failure message,
    so a report names the peer.
    """

    def __init__(
        self,
        description: str,
        options: ConnectorOptions,
        launch: Callable[[], PeerAdapter],
        failures: FailureMap,
        *,
        label: str | None = None,
    ) -> None:
        super().__init__(description, options)
        self._make = launch
        self._failures = failures
        self._label = label
        self._adapter: PeerAdapter | None = None

    def _failure(self, exc: BaseException) -> AdapterFailure | None:
        for kind, failure in self._failures.items():
            if isinstance(exc, kind):
                return failure(f"{self._label}: {exc}" if self._label else str(exc))
        return None

    def _launch(self) -> None:
        try:
            self._adapter = self._make()
        except Exception as exc:
            failure = self._failure(exc)
            if failure is None:
                raise
            raise failure from exc

    def _exchange(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        adapter = self._adapter
        if adapter is None:
            raise AdapterCrash(f"{self._label or self.description} is not running")
        wire = json.loads(json.dumps(request))
        try:
            response = adapter.handle(wire)
        except Exception as exc:
            failure = self._failure(exc)
            if failure is None:
                raise
            raise failure from exc
        try:
            return dict(json.loads(json.dumps(response, allow_nan=False)))
        except (TypeError, ValueError) as exc:
            raise ProtocolError(f"answer is not JSON: {exc}") from exc

    def take_stderr(self) -> str:
        return self._adapter.take_stderr() if self._adapter else ""

    def _stop(self, *, force: bool) -> None:
        with uninterrupted():  # PROTO-KILL-1: what the adapter started ends with it
            adapter, self._adapter = self._adapter, None
            self._hello = None
            if adapter is not None:
                adapter.close()
