"""The Probe test tool (PROTO-PROBE-1) played by two MCP tools of the agent.

A definition's ``test_tools`` names the agent's tools that play Probe: an
MCP tool's concurrency safety is per tool, not per input, so a Probe with
``concurrency_safe: true`` goes to ``probe_safe`` and any other to
``probe``. What such a Probe cannot be, by design, is not applicable
(PROTO-UNSUPPORTED-1), never approximated:

- ``bash_error``: a failed MCP tool is no Bash;
- a Probe that would see an earlier Probe's context modifier
  (PROTO-PROBE-3): MCP tools have no context modifiers, so its trail would
  be empty where the protocol's is not (``sees_trail``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from conformance.peers.agent.definition import ProbeTools
from conformance.peers.agent.mapping import AgentCall
from conformance.peers.peer_rules import Unmappable

__all__ = ["probe_call", "sees_trail"]

_SAFE_BUILT_INS: Final = frozenset({"Read", "Glob", "Grep"})
"""The built-in tools taken to join a concurrency-safe batch."""


def probe_call(tools: ProbeTools, tool_input: object) -> AgentCall:
    """The MCP tool call playing a Probe with ``tool_input``.

    Raises:
        Unmappable: the Probe asks for ``bash_error``.
    """
    arguments = dict(tool_input) if isinstance(tool_input, Mapping) else {}
    if arguments.get("bash_error") is True:
        raise Unmappable("Probe's bash_error has no counterpart: a failed MCP tool is no Bash")
    safe = arguments.get("concurrency_safe") is True
    return AgentCall(tools.probe_safe if safe else tools.probe, "function", arguments)


def _is_safe(use: Mapping[str, Any]) -> bool:
    """Whether a block joins a concurrency-safe batch, as far as the connector can tell."""
    tool_input = use.get("input")
    if use.get("name") == "Probe":
        return isinstance(tool_input, Mapping) and tool_input.get("concurrency_safe") is True
    return use.get("name") in _SAFE_BUILT_INS


def sees_trail(uses: Sequence[Mapping[str, Any]], *, earlier: int) -> bool:
    """Whether a Probe in ``uses`` starts after another Probe's context modifier applied.

    ``earlier`` counts the Probes that succeeded in earlier turns of the
    session. Every Probe's modifier joins the context once its batch ends
    (SCHED-CONTEXT-1): a Probe of a later call sees it, and so does one of a
    later batch of the same message. Blocks other than Read, Glob, Grep and
    safe Probes are taken for batches of their own.
    """
    probes_before_batch = earlier
    probes_in_batch = 0
    batch_safe = False
    for use in uses:
        safe = _is_safe(use)
        if not (safe and batch_safe):  # a new batch: the previous one's modifiers now apply
            probes_before_batch += probes_in_batch
            probes_in_batch = 0
        batch_safe = safe
        if use.get("name") == "Probe":
            if probes_before_batch:
                return True
            probes_in_batch += 1
    return False
