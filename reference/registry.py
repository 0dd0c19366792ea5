"""The tool registry: base tools and their gates, the pool, lookup (SPEC.md section 2).

The pool of a session is made in four steps (:func:`build_pool`):

1. gates decide which base tools exist (REG-GATE-1), read from the session;
2. deny rules that name a whole tool remove it, built-in or MCP (REG-DENY-1);
3. the connected MCP servers' tools are merged in after the built-ins, the
   first tool of a name winning (REG-MCP-1, REG-ASSEMBLE-1);
4. ToolSearch joins the built-ins when the pool holds a deferred tool.

What the model is offered of the pool is :func:`api_export` (REG-EXPORT-1).
Lookup, :func:`find_tool`, lives beside ``Tool`` in :mod:`reference.tool`, so the
dispatch pipeline does not import every tool; it is re-exported here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Final

from reference.export import api_export, api_tool, deferred_names, is_deferred, strict_schema
from reference.mcp import McpServer, mcp_tools, server_rule_names
from reference.mcp_test_server import TEST_SERVER
from reference.permissions.rules import denied_tool_names
from reference.session import Session
from reference.tool import Tool, find_tool
from reference.tools.bash import BASH_TOOL
from reference.tools.edit import EDIT_TOOL
from reference.tools.glob import GLOB_TOOL
from reference.tools.grep.tool import GREP_TOOL
from reference.tools.notebook_edit import NOTEBOOK_EDIT_TOOL
from reference.tools.probe import PROBE_TOOL
from reference.tools.read.tool import READ_TOOL
from reference.tools.task_tools import TASK_OUTPUT_TOOL, TASK_STOP_TOOL
from reference.tools.tool_search import TOOL_SEARCH_TOOL
from reference.tools.write import WRITE_TOOL

__all__ = [
    "GATES",
    "all_base_tools",
    "api_export",
    "api_tool",
    "assemble_pool",
    "base_tools",
    "build_pool",
    "deferred_names",
    "find_tool",
    "get_tools",
    "is_deferred",
    "is_denied",
    "mcp_servers",
    "strict_schema",
]

SIMPLE_ENV: Final = "CLAUDE_CODE_SIMPLE"
NO_BACKGROUND_TASKS_ENV: Final = "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS"
SHELL: Final = "/bin/sh"

Gate = Callable[[Session], bool]


def _env_set(session: Session, name: str) -> bool:
    """REG-GATE-1: a gate variable is on when the session environment sets it to ``1``."""
    return session.env.get(name) == "1"


def _not_simple(session: Session) -> bool:
    return not _env_set(session, SIMPLE_ENV)


def _background_tasks(session: Session) -> bool:
    return _not_simple(session) and not _env_set(session, NO_BACKGROUND_TASKS_ENV)


def _has_shell(_session: Session) -> bool:
    return os.path.exists(SHELL)  # the platform gate


def _test_tools(session: Session) -> bool:
    return session.test_tools


GATES: Final[Mapping[str, Gate]] = {
    # REG-GATE-1: a base tool without an entry (Read, Edit) is always there.
    "Write": _not_simple,
    "NotebookEdit": _not_simple,
    "Glob": _not_simple,
    "Grep": _not_simple,
    "Bash": _has_shell,
    "TaskOutput": _background_tasks,
    "TaskStop": _background_tasks,
    "Probe": _test_tools,  # PROTO-PROBE-1: only when begin sets test_tools
}


def all_base_tools() -> list[Tool]:
    """The built-in tools before any gate or rule is applied (ToolSearch joins later)."""
    return [
        READ_TOOL,
        WRITE_TOOL,
        EDIT_TOOL,
        NOTEBOOK_EDIT_TOOL,
        BASH_TOOL,
        TASK_OUTPUT_TOOL,
        TASK_STOP_TOOL,
        GLOB_TOOL,
        GREP_TOOL,
        PROBE_TOOL,
    ]


def base_tools(session: Session) -> list[Tool]:
    """REG-GATE-1: the base tools whose gate is open for this session."""
    return [tool for tool in all_base_tools() if GATES.get(tool.name, _always)(session)]


def _always(_session: Session) -> bool:
    return True


def mcp_servers(session: Session) -> list[McpServer]:
    """The MCP servers this session connects: the test server under ``test_tools``."""
    return [TEST_SERVER] if session.test_tools else []  # PROTO-TESTMCP-1


def is_denied(tool: Tool, denied: Collection[str]) -> bool:
    """REG-DENY-1: a whole-tool deny names the tool, an alias, or (MCP) its server."""
    return any(name in denied for name in (tool.name, *tool.aliases, *server_rule_names(tool)))


def get_tools(tools: Iterable[Tool], denied: Collection[str]) -> list[Tool]:
    """REG-GATE-1 / REG-DENY-1: the enabled tools no whole-tool deny rule names."""
    return [tool for tool in tools if tool.is_enabled() and not is_denied(tool, denied)]


def removed_tool_names(session: Session) -> frozenset[str]:
    """REG-DENY-1: the names (not aliases) of the session's built-in tools a whole-tool deny
    rule removes."""
    denied = denied_tool_names(session.settings.permission_entries("deny"))
    return frozenset(tool.name for tool in base_tools(session) if tool.name in denied)


def assemble_pool(built_in: Iterable[Tool], external: Iterable[Tool] = ()) -> list[Tool]:
    """REG-ASSEMBLE-1: built-ins first, each part sorted by name, the first of a name wins.

    Python sorts strings by code point, which is the order SPEC asks for.
    """
    pool: list[Tool] = []
    seen: set[str] = set()
    for tool in [*sorted(built_in, key=lambda t: t.name), *sorted(external, key=lambda t: t.name)]:
        if tool.name not in seen:
            seen.add(tool.name)
            pool.append(tool)
    return pool


def build_pool(session: Session, servers: Sequence[McpServer] | None = None) -> list[Tool]:
    """Section 2: the pool a session offers, in pool order.

    ``servers`` defaults to :func:`mcp_servers`.
    """
    denied = denied_tool_names(session.settings.permission_entries("deny"))
    built_in = get_tools(base_tools(session), denied)
    connected = mcp_servers(session) if servers is None else servers
    external = get_tools([t for server in connected for t in mcp_tools(server)], denied)
    pool = assemble_pool(built_in, external)
    # REG-GATE-1: ToolSearch only when the assembled pool holds a deferred tool
    if any(is_deferred(tool) for tool in pool):
        pool = assemble_pool(get_tools([*built_in, TOOL_SEARCH_TOOL], denied), external)
    return pool
