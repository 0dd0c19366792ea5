"""The ``agent:NAME`` connector: a coding-agent CLI, through its definition, as the implementation.

``--impl agent:qwen-code`` loads ``definitions/qwen-code.yaml`` (or a path to
a definition file), installs the pinned agent into the cache on first use
and serves protocol v1 in process through ``AgentAdapter``. A turn that does
not come back in time kills the agent and is a ``timeout``; an agent that
dies, or cannot be installed or started, is a ``crash``; either way
``restart`` brings up a fresh adapter.

The adapter runs in this process, but the agent, the implementation under
test, runs in mount, PID and network namespaces of its own wherever the host
permits (``loopback``): the connector then reports itself ``isolated``
(PROTO-ISOLATE-1), so scenarios aiming at real host paths run against it.
"""

from __future__ import annotations

from conformance.errors import AdapterCrash, AdapterTimeout
from conformance.peers.agent.adapter import AgentAdapter
from conformance.peers.agent.definition import load_definition
from conformance.peers.agent.install import ensure_installed
from conformance.peers.agent.loopback import loopback_available
from conformance.peers.agent.session import AgentCrash, AgentTimeout
from conformance.peers.inprocess import FailureMap, InProcessConnector
from conformance.peers.npm import PeerUnavailable
from conformance.wire.connector import ConnectorOptions

__all__ = ["FAILURES", "AgentConnector", "connect"]

FAILURES: FailureMap = {
    AgentTimeout: AdapterTimeout,
    AgentCrash: AdapterCrash,
    PeerUnavailable: AdapterCrash,
}


class AgentConnector(InProcessConnector):
    """An ``InProcessConnector`` whose implementation runs isolated when ``isolated`` says."""

    isolated: bool = False
    """PROTO-ISOLATE-1: whether every agent process runs in namespaces of its own."""


def connect(rest: str, options: ConnectorOptions) -> AgentConnector:
    """The factory behind ``agent:NAME`` (a shipped definition's name or a YAML path)."""
    definition = load_definition(rest)
    isolate = {"on": True, "off": False}.get(options.isolation)

    def launch() -> AgentAdapter:
        return AgentAdapter(
            definition, ensure_installed(definition), turn_timeout=options.timeout, isolate=isolate
        )

    connector = AgentConnector(
        f"agent:{definition.name}", options, launch, FAILURES, label=definition.name
    )
    connector.isolated = isolate is True or (isolate is None and loopback_available())
    return connector
