"""The ``agent:NAME`` connector: a coding-agent CLI, through its definition, as the implementation.

``--impl agent:qwen-code`` loads ``definitions/qwen-code.yaml`` (or a path to
a definition file), installs the pinned agent into the cache on first use
and serves protocol v1 in process through ``AgentAdapter``. A turn that does
not come back in time kills the agent and is a ``timeout``; an agent that
dies is a ``crash``; either way ``restart`` brings up a fresh adapter. An
agent that cannot be installed or run here (no node, no npm, no registry, a
missing platform package or program) is neither: its ``PeerUnavailable``
ends the run with one line saying which and how to fix it.

The adapter runs in this process, but the agent, the implementation under
test, runs in mount, PID and network namespaces of its own wherever the host
permits (``loopback``): the connector then reports itself ``isolated``
(PROTO-ISOLATE-1), so scenarios aiming at real host paths run against it.
"""

from __future__ import annotations

from conformance.errors import AdapterCrash, AdapterTimeout
from conformance.peers.agent.adapter import AgentAdapter
from conformance.peers.agent.definition import AgentDefinition, load_definition
from conformance.peers.agent.install import check_runnable, ensure_installed
from conformance.peers.agent.loopback import loopback_available
from conformance.peers.agent.session import AgentCrash, AgentTimeout
from conformance.peers.inprocess import FailureMap, InProcessConnector
from conformance.wire.connector import ConnectorOptions

__all__ = ["FAILURES", "AgentConnector", "connect", "connect_definition"]

FAILURES: FailureMap = {
    AgentTimeout: AdapterTimeout,
    AgentCrash: AdapterCrash,
}
"""What the adapter's failures mean; ``PeerUnavailable`` is none of them: it ends the run."""


class AgentConnector(InProcessConnector):
    """An ``InProcessConnector`` whose implementation runs isolated when ``isolated`` says."""

    isolated: bool = False
    """PROTO-ISOLATE-1: whether every agent process runs in namespaces of its own."""


def connect(rest: str, options: ConnectorOptions) -> AgentConnector:
    """The factory behind ``agent:NAME`` (a shipped definition's name or a YAML path)."""
    definition = load_definition(rest)
    return connect_definition(definition, options, f"agent:{definition.name}")


def connect_definition(
    definition: AgentDefinition, options: ConnectorOptions, description: str
) -> AgentConnector:
    """The connector of ``definition``, described as ``description`` in reports.

    Every (re)start checks that the agent can run here (``check_runnable``),
    installing it first if it is not in the cache; when it cannot, the
    ``PeerUnavailable`` that says why escapes, unmapped, and ends the run.
    """
    isolate = {"on": True, "off": False}.get(options.isolation)

    def launch() -> AgentAdapter:
        agent = ensure_installed(definition)
        check_runnable(definition, isolate=isolate)
        return AgentAdapter(definition, agent, turn_timeout=options.timeout, isolate=isolate)

    connector = AgentConnector(description, options, launch, FAILURES, label=definition.name)
    connector.isolated = isolate is True or (isolate is None and loopback_available())
    return connector
