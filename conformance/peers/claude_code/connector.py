"""The ``claude-code:VERSION`` connector: a name for Claude Code's agent definitions.

``--impl claude-code:2.1.88`` (or ``claude-code:latest``, or another release
number) is the ``agent:`` connector (``conformance.peers.agent.connector``)
with the definition ``releases.definition_for`` picks; the report names the
implementation as it was asked for. Everything else is the agent
connector's: the release installed into the cache on first use, protocol v1
served in process, a turn that does not come back in time a ``timeout``, a
CLI that dies a ``crash``, and a release that cannot be installed the end of
the run with one line saying why.
"""

from __future__ import annotations

from conformance.peers.agent.connector import AgentConnector, connect_definition
from conformance.peers.claude_code.releases import definition_for
from conformance.wire.connector import ConnectorOptions

__all__ = ["connect"]


def connect(rest: str, options: ConnectorOptions) -> AgentConnector:
    """The factory behind ``claude-code:VERSION`` (``latest`` when no version is given).

    Raises:
        PeerUnavailable: ``latest`` cannot be resolved (no npm, no registry).
    """
    version = rest or "latest"
    return connect_definition(definition_for(version), options, f"claude-code:{version}")
