"""The tool registry: base tools, the pool, lookup by name or alias (SPEC.md REG-*)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from reference.tool import Tool
from reference.tools.edit import EDIT_TOOL
from reference.tools.read import READ_TOOL
from reference.tools.write import WRITE_TOOL


def all_base_tools() -> list[Tool]:
    """The built-in tools before any gate or rule is applied."""
    return [READ_TOOL, WRITE_TOOL, EDIT_TOOL]


def assemble_pool(built_in: Iterable[Tool], external: Iterable[Tool] = ()) -> list[Tool]:
    """Built-ins first, each partition sorted by name, the first of a name wins."""
    pool: list[Tool] = []
    seen: set[str] = set()
    for tool in [*sorted(built_in, key=lambda t: t.name), *sorted(external, key=lambda t: t.name)]:
        if tool.name not in seen:
            seen.add(tool.name)
            pool.append(tool)
    return pool


def find_tool(tools: Sequence[Tool], name: str) -> Tool | None:
    """The first tool answering to ``name`` or having it as an alias."""
    return next((tool for tool in tools if tool.matches_name(name)), None)
