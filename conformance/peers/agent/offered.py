"""A definition checked against the tools the agent really offers its model.

The first main-loop request of a session carries the agent's own tool
schemas. ``mismatches`` compares the definition with them: every tool it
maps must be offered, with the kind it says (function or freeform), and
every argument its template writes must be a property of that tool's
schema. A mismatch means the definition no longer fits this release; the
connector reports it instead of sending calls the agent would refuse.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from conformance.peers.agent.definition import AgentDefinition
from conformance.peers.agent.model_api import OfferedTool

__all__ = ["mismatches"]


def mismatches(definition: AgentDefinition, offered: Sequence[OfferedTool]) -> list[str]:
    """What in ``definition`` the ``offered`` tools contradict (empty when it fits)."""
    by_name = {tool.name: tool for tool in offered}
    problems: list[str] = []
    for protocol_tool, tool_map in definition.tools.items():
        found = by_name.get(tool_map.tool)
        if found is None:
            problems.append(f"{protocol_tool}: {definition.name} offers no {tool_map.tool}")
            continue
        if found.kind != tool_map.kind:
            problems.append(
                f"{protocol_tool}: {tool_map.tool} is offered as a {found.kind} tool, "
                f"the definition says {tool_map.kind}"
            )
            continue
        if tool_map.kind != "function" or not isinstance(tool_map.input, Mapping):
            continue
        properties = found.schema.get("properties")
        known = set(properties) if isinstance(properties, Mapping) else set()
        for key in _written_keys(tool_map.input):
            if key not in known:
                problems.append(
                    f"{protocol_tool}: {tool_map.tool} has no argument {key!r} "
                    f"(it takes {', '.join(sorted(known)) or 'none'})"
                )
    return problems


def _written_keys(template: Mapping[str, Any]) -> list[str]:
    """The top-level arguments a template writes (an operator writes none of its own)."""
    if len(template) == 1 and str(next(iter(template))).startswith("$"):
        return []
    return [str(key) for key in template]
