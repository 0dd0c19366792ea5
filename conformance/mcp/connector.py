"""The ``mcp:MAPPING`` connector: an MCP server played through a mapping file.

``--impl mcp:toolconf`` (a shipped mapping's name) or ``--impl
mcp:path/to/peer.yaml`` loads the mapping, installs its peer into the cache
on first use (``install.ensure_peer``) and serves protocol v1 in process
through ``McpAdapter``, one server process per session. The guarantees of
every connector hold: a call that does not come back within the run's
timeout is a ``timeout`` and the server is stopped (PROTO-MCP-HANG-1); a
server that dies or cannot start is a ``crash``; either way ``restart``
brings up a fresh adapter.
"""

from __future__ import annotations

import json
from typing import Any

from conformance.connectors import ConnectorOptions, _BaseConnector
from conformance.errors import AdapterCrash, AdapterTimeout, ProtocolError
from conformance.mcp.adapter import McpAdapter
from conformance.mcp.client import ServerCrash, ServerTimeout
from conformance.mcp.install import PeerUnavailable, ensure_peer
from conformance.mcp.mapping import McpMapping, load_mapping

__all__ = ["McpConnector", "connect"]


class McpConnector(_BaseConnector):
    """An MCP peer driven through the official SDK's client, in this process."""

    def __init__(self, mapping: McpMapping, options: ConnectorOptions, spec: str) -> None:
        super().__init__(f"mcp:{spec}", options)
        self.mapping = mapping
        self._adapter: McpAdapter | None = None

    def _launch(self) -> None:
        try:
            placeholders = ensure_peer(self.mapping)
        except PeerUnavailable as exc:
            raise AdapterCrash(str(exc)) from exc
        self._adapter = McpAdapter(self.mapping, placeholders, call_timeout=self.options.timeout)

    def _exchange(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        adapter = self._adapter
        if adapter is None:
            raise AdapterCrash("the MCP adapter is not running")
        wire = json.loads(json.dumps(request))
        try:
            response = adapter.handle(wire)
        except ServerTimeout as exc:  # PROTO-MCP-HANG-1: the server is stopped, a restart follows
            raise AdapterTimeout(f"{self.mapping.name}: {exc}") from exc
        except ServerCrash as exc:
            raise AdapterCrash(f"{self.mapping.name}: {exc}") from exc
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


def connect(rest: str, options: ConnectorOptions) -> McpConnector:
    """The factory behind ``mcp:MAPPING`` (a shipped mapping name or a YAML path)."""
    return McpConnector(load_mapping(rest or "toolconf"), options, rest or "toolconf")
