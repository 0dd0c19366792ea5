"""What Glob and Grep share: their path, the Read deny filter, the mtime order."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from reference import paths
from reference.permissions.session_rules import READ_RULES, matching_deny_rule
from reference.session import Session
from reference.tool import ToolUseContext


def search_path_of(inp: Any, ctx: ToolUseContext) -> str | None:
    """TOOL-PATH-1 for Glob and Grep: the expanded ``path``, else the current ``cwd``.

    None for a path that is refused before any file system access (NUL, UNC).
    """
    raw = inp.path
    if raw is None:
        return ctx.cwd
    if paths.has_nul(raw) or paths.is_unc(raw):
        return None
    return ctx.expand(raw)


def env_is_false(session: Session, name: str) -> bool:
    """GLOB-HIDDEN-1 / GLOB-IGNORE-1: a switch set to ``false`` or ``0``, in any case."""
    return session.env.get(name, "").strip().lower() in ("false", "0")


def shown_filter(session: Session) -> Callable[[str], bool]:
    """PERM-FILTER-1: whether a found file may be shown (no ``Read`` deny rule matches it)."""
    return lambda path: matching_deny_rule(session, path, READ_RULES) is None


def mtime_ns(path: str) -> int:
    """The modification time the order uses (the target's, for a symlink); 0 if gone."""
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


def newest_first(found: Iterable[tuple[str, int]]) -> list[str]:
    """GREP-FILESMODE-1: newest mtime first, ties by path in code-point order."""
    return [path for path, _ in sorted(found, key=lambda item: (-item[1], item[0]))]


def oldest_first(found: Iterable[tuple[str, int]]) -> list[str]:
    """GLOB-SORT-1: oldest mtime first, ties by path in code-point order."""
    return [path for path, _ in sorted(found, key=lambda item: (item[1], item[0]))]
