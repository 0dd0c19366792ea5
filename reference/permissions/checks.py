"""Tools' own permission checks (``Tool.check_permissions``) that live with the rules.

PERM-READ-1 for Read, Glob and Grep: ``allow`` inside the working directories
(PERM-DIRS-1), ``passthrough`` elsewhere, so a read elsewhere needs an allow
rule, a mode or the user. BASH-PERM-1 for Bash: ``allow`` for a read-only
command, ``passthrough`` otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reference.permissions import bash_rules
from reference.permissions.directories import is_inside_working_directories
from reference.permissions.session_rules import read_guard
from reference.permissions.tool_paths import file_path_of
from reference.tool import PASSTHROUGH, PermissionCheck, ToolUseContext

PathGetter = Callable[[Any, ToolUseContext], str | None]
CheckFn = Callable[[Any, ToolUseContext], PermissionCheck]

ALLOW = PermissionCheck("allow")


def working_directories_check(get_path: PathGetter) -> CheckFn:
    """PERM-READ-1 for a tool whose TOOL-PATH-1 path ``get_path`` gives.

    The check allows when the path is inside the working directories of the
    context's session and passes through otherwise (a tool without a path,
    None, passes through).
    """

    def check(inp: Any, ctx: ToolUseContext) -> PermissionCheck:
        path = get_path(inp, ctx)
        if path is not None and is_inside_working_directories(path, ctx.session):
            return ALLOW  # PERM-READ-1
        return PASSTHROUGH  # PERM-READ-1: elsewhere the general flow decides

    return check


check_read_permissions: CheckFn = working_directories_check(file_path_of)
"""PERM-READ-1 for Read: plug in as ``READ_TOOL.check_permissions``."""


def check_bash_permissions(inp: Any, ctx: ToolUseContext) -> PermissionCheck:
    """BASH-PERM-1 for an input with a ``command``: ``allow`` when every part is
    read-only or a ``cd`` into the working directories, else passthrough.

    A read-only part with an argument (not starting with ``-``) that, taken as
    a path relative to the context's cwd, matches a ``Read`` deny rule denies
    the command, as Claude Code 2.1.88 does, without asking.
    """
    command = inp.command
    guard = read_guard(ctx)  # BASH-PERM-1, BASH-PERM-2
    parts = bash_rules.split_command(command) if isinstance(command, str) else None
    if parts and any(bash_rules.names_denied_path(part, guard) for part in parts):
        return PermissionCheck(  # BASH-PERM-1: a read-only command naming a Read-denied path
            "deny", f"Permission to use Bash with command {command} has been denied."
        )
    if parts and guard.active and len(parts) > 1 and any(bash_rules.moves(p) for p in parts):
        return PASSTHROUGH  # BASH-PERM-2: later parts' relative paths are not known

    wider = ctx.session.profile.bash_wider_read_only  # BASH-READONLY-1, the profile's

    def allowed(part: str) -> bool:
        if bash_rules.is_read_only_part(part, guard, wider=wider):
            return True
        target = bash_rules.cd_target(part)  # BASH-PERM-1: cd inside the working directories
        return target is not None and is_inside_working_directories(ctx.expand(target), ctx.session)

    if parts and all(allowed(part) for part in parts):
        return ALLOW  # BASH-PERM-1
    return PASSTHROUGH
