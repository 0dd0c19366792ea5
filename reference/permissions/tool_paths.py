"""TOOL-PATH-1 for the file tools: the expanded path their path rules match.

Read, Write and Edit plug :func:`file_path_of` in as ``get_path``; Read's own
check (PERM-READ-1) takes its path from the same function.
"""

from __future__ import annotations

from typing import Any

from reference import paths
from reference.tool import ToolUseContext


def file_path_of(inp: Any, ctx: ToolUseContext) -> str | None:
    """The expanded ``file_path`` (FILE-PATH-1) against the context's cwd.

    None for a path ``validate_input`` refuses before any file system access
    (a NUL, FILE-PATH-2; a UNC path, FILE-PATH-3) and for a ``file_path`` that
    is not a string.
    """
    raw = inp.file_path
    if not isinstance(raw, str) or paths.has_nul(raw) or paths.is_unc(raw):
        return None
    return ctx.expand(raw)
