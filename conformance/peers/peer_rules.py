"""What a black-box peer shows differently by design, shared by every peer adapter.

The ``claude-code:`` connector (its CLI) and the ``mcp:`` connector (an MCP
server, ``claude mcp serve`` among them) both judge peers that keep some
things where the runner cannot point them, or name them their own way. A
request that addresses such a thing has no counterpart in the peer, so it is
answered ``unsupported`` (PROTO-UNSUPPORTED-1) and the scenario is not
applicable; these rules never stand in for a behaviour the peer lacks.

- The session directory's own files (``file-history``, ``tool-results``,
  ``tasks``, PROTO-BEGIN-2): a peer that is not given the session directory
  keeps them elsewhere (Claude Code: in its config directory), so a call
  naming a path there names nothing of the peer's.
- Counted background task ids (``bash_1``, BASH-BG-1): a peer that names its
  tasks at random (Claude Code: ``b7rp2ic6p``) has no task of that name, so a
  task tool addressing one has no counterpart.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from conformance.errors import ConformanceError
from reference.protocol.server import Unsupported

__all__ = [
    "COUNTED_TASK_ID",
    "OWN_FILES",
    "TASK_TOOLS",
    "Unmappable",
    "counted_task_id",
    "names_own_files",
]


class Unmappable(ConformanceError, Unsupported):
    """What a request asks for has no counterpart in the peer: a settings source, a
    setup or an input the peer cannot be given faithfully (PROTO-UNSUPPORTED-1,
    PROTO-MCP-APPLICABLE-1). The answer is ``unsupported``; the scenario is not applicable.
    """


TASK_TOOLS: Final = frozenset({"TaskOutput", "BashOutput", "TaskStop", "KillShell"})
"""The tools that address a background task by its id."""
COUNTED_TASK_ID: Final = re.compile(r"bash_[0-9]+")
OWN_FILES: Final = ("file-history", "tool-results", "tasks")
"""The session directory's subdirectories an engine keeps its own files in."""


def names_own_files(value: Any, session_dir: str) -> bool:
    """Whether a string in ``value`` is a path in the session directory's own subdirectories."""
    if isinstance(value, str):
        base = session_dir.rstrip("/") + "/"
        return any(value == base + n or value.startswith(base + n + "/") for n in OWN_FILES)
    if isinstance(value, dict):
        return any(names_own_files(v, session_dir) for v in value.values())
    if isinstance(value, list):
        return any(names_own_files(v, session_dir) for v in value)
    return False


def counted_task_id(name: str, tool_input: object) -> str | None:
    """The counted task id a task tool's input names (``bash_1``), or None."""
    if name not in TASK_TOOLS or not isinstance(tool_input, Mapping):
        return None
    task_id = str(tool_input.get("task_id"))
    return task_id if COUNTED_TASK_ID.fullmatch(task_id) else None
