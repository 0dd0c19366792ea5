"""What a read-only Bash command may reach while a ``Read`` deny rule is in force.

SPEC.md BASH-PERM-2: with a ``Read`` deny rule in force, Bash's own check
allows a read-only part only when the shell grammar reads it completely,
every word and redirection target is literal (nothing the shell would
expand), the program is not ``git``, no argument (an option's value
included) is a denied path, and no directory a listing or recursive program
reaches holds a denied path. This module walks those directories, a bounded
number of entries; past the bound it answers "not allowed" (fail closed).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from reference.permissions import bash_parse

WALK_LIMIT: Final = 5000  # BASH-PERM-2: entries looked at per part before failing closed
# BASH-PERM-2: programs that list or read whole directory trees.
RECURSIVE_PROGRAMS: Final = frozenset({"find", "rg", "du", "tree", "diff"})
GREP_PROGRAMS: Final = frozenset({"grep", "egrep", "fgrep"})


@dataclass(frozen=True, slots=True)
class ReadGuard:
    """BASH-PERM-1/BASH-PERM-2: the session's ``Read`` deny rules, seen from Bash.

    ``denied`` takes a command argument (relative to the session cwd, or
    absolute) and says whether it matches a ``Read`` deny rule (PERM-PATH-3,
    and PERM-PATH-4 for a file with several links); ``active`` is false
    when no ``Read`` deny rule is in force, and then only literal arguments
    are checked, as BASH-PERM-1 says. ``cwd`` is where relative arguments and
    the default ``.`` of a recursive program point.
    """

    active: bool
    denied: Callable[[str], bool]
    cwd: str


def _short_cluster_has(arg: str, letters: str) -> bool:
    return arg.startswith("-") and not arg.startswith("--") and any(c in arg[1:] for c in letters)


def _reach_depth(program: str, args: list[str]) -> int | None:
    """BASH-PERM-2: how deep the program lists directory arguments (None: not at all)."""
    if program in RECURSIVE_PROGRAMS:
        return -1  # the whole tree
    if program in GREP_PROGRAMS:
        recursive = any(
            _short_cluster_has(a, "rR")
            or a in ("--recursive", "--dereference-recursive", "--directories=recurse")
            for a in args
        )
        return -1 if recursive else None
    if program == "ls":
        recursive = any(_short_cluster_has(a, "R") or a == "--recursive" for a in args)
        return -1 if recursive else 1
    return None


def _candidate_paths(args: list[str]) -> list[str]:
    """Every argument that may name a file: positionals, ``--opt=VALUE``, ``-xVALUE``."""
    found: list[str] = []
    for arg in args:
        if not arg:
            continue
        if not arg.startswith("-"):
            found.append(arg)
        elif arg.startswith("--") and "=" in arg:
            found.append(arg.split("=", 1)[1])
        elif not arg.startswith("--") and len(arg) > 2:
            found.append(arg[2:])
    return [path for path in found if path]


def _tree_reaches_denied(top: str, depth: int, guard: ReadGuard, budget: list[int]) -> bool:
    """Whether an entry under ``top`` (``depth`` levels, -1 all) is denied; True past the budget.

    Symlinked directories are followed (``grep -R``, ``find -L``), each real
    directory once; every entry is checked, a symlink by what it resolves to.
    """
    seen: set[str] = set()
    stack: list[tuple[str, int]] = [(top, 0)]
    while stack:
        directory, level = stack.pop()
        real = os.path.realpath(directory)
        if real in seen:
            continue
        seen.add(real)
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue  # not a directory, or unreadable: nothing listed from it
        for entry in entries:
            budget[0] -= 1
            if budget[0] < 0:
                return True  # BASH-PERM-2: too large to check, fail closed
            if guard.denied(entry.path):
                return True
            try:
                is_dir = entry.is_dir()  # follows a symlink
            except OSError:
                is_dir = False
            if is_dir and (depth < 0 or level + 1 < depth):
                stack.append((entry.path, level + 1))
    return False


def part_allowed(part: str, guard: ReadGuard) -> bool:
    """BASH-PERM-2 for one read-only part; True when it cannot reach a denied path."""
    cwd = guard.cwd
    if not guard.active:
        return True
    parsed = bash_parse.parse(part)
    if not parsed.complete or not parsed.commands:
        return False  # BASH-PERM-2: what the grammar cannot read asks
    targets = [t.value for t in parsed.redirect_targets]
    if any(t is None for t in targets):
        return False
    if any(t is not None and guard.denied(t) for t in targets):
        return False
    budget = [WALK_LIMIT]
    for simple in parsed.commands:
        values = [w.value for w in simple.words]
        if not values or any(v is None for v in values):
            return False  # BASH-PERM-2: the shell would expand a word
        words = [v for v in values if v is not None]
        program, args = words[0], words[1:]
        if program == "git":
            return False  # BASH-PERM-2: history and objects cannot be checked against paths
        paths = _candidate_paths(args)
        if any(guard.denied(path) for path in paths):
            return False
        depth = _reach_depth(program, args)
        if depth is None:
            continue
        tops = [p for p in paths if os.path.isdir(os.path.join(cwd, p))]
        positionals = [a for a in args if a and not a.startswith("-")]
        if not positionals or (program in (*GREP_PROGRAMS, "rg") and len(positionals) < 2):
            tops.append(".")  # the program's default: the working directory
        for top in tops:
            if _tree_reaches_denied(os.path.join(cwd, top), depth, guard, budget):
                return False
    return True
