"""The ``mcp:MAPPING`` connector: an MCP server played through a mapping file.

``--impl mcp:toolconf`` (a shipped mapping's name) or ``--impl
mcp:path/to/peer.yaml`` loads the mapping, installs its peer into the cache
on first use (``install.ensure_peer``) and serves protocol v1 in process
through ``McpAdapter``, one server process per session. A call that does not
come back within the run's timeout is a ``timeout`` and the server is stopped
(PROTO-MCP-HANG-1); a server that dies or cannot start or be installed is a
``crash``; either way ``restart`` brings up a fresh adapter.
"""

from __future__ import annotations

from conformance.errors import AdapterCrash, AdapterTimeout
from conformance.peers.inprocess import FailureMap, InProcessConnector
from conformance.peers.mcp.adapter import McpAdapter
from conformance.peers.mcp.client import ServerCrash, ServerTimeout
from conformance.peers.mcp.install import ensure_peer
from conformance.peers.mcp.mapping import load_mapping
from conformance.wire.connector import ConnectorOptions

__all__ = ["connect"]

FAILURES: FailureMap = {
    ServerTimeout: AdapterTimeout,
    ServerCrash: AdapterCrash,
}
"""What the adapter's failures mean; a peer that cannot be installed (``PeerUnavailable``)
is none of them: it ends the run."""


def connect(rest: str, options: ConnectorOptions) -> InProcessConnector:
    """The factory behind ``mcp:MAPPING`` (a shipped mapping name or a YAML path)."""
    spec = rest or "toolconf"
    mapping = load_mapping(spec)

    def launch() -> McpAdapter:
        return McpAdapter(mapping, ensure_peer(mapping), call_timeout=options.timeout)

    return InProcessConnector(f"mcp:{spec}", options, launch, FAILURES, label=mapping.name)
