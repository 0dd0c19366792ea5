"""Glob: files whose path matches a pattern, oldest first (SPEC.md section 17.2).

A pattern without ``/`` matches a file's name at any depth below the search
directory; one with ``/`` matches the file's path relative to the session
cwd (GLOB-BASE-1, ripgrep's ``--glob`` rule, as Claude Code 2.1.88 applies
it). Brace groups do not nest (GLOB-SYNTAX-1). The walk enters every
directory, ``.git`` too, but no symlinked one, and lists regular files only
(GLOB-WALK-1). Hidden entries
and ``.gitignore`` apply only when the session environment switches them
(GLOB-HIDDEN-1, GLOB-IGNORE-1); ``Read`` deny rules filter what is found
(PERM-FILTER-1).
"""

from __future__ import annotations

import os
import posixpath
import re
import stat as statmod
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

import regex as regex_engine
from pydantic import Field

from reference import errors, paths
from reference.abort import AbortSignal
from reference.deadline import Deadline, within
from reference.gitignore import GLOB_IGNORE_FILES, Chain, IgnoreFiles
from reference.permissions.checks import working_directories_check
from reference.profiles import Profile
from reference.tool import ResultContent, Tool, ToolResult, ToolUseContext, build_tool
from reference.tools.common import StrictInput
from reference.tools.search_scope import (
    env_is_false,
    mtime_ns,
    oldest_first,
    shown_filter,
    shown_path,
)

NAME: Final = "Glob"
MAX_RESULTS: Final = 100  # GLOB-SORT-1
HIDDEN_ENV: Final = "CLAUDE_CODE_GLOB_HIDDEN"  # GLOB-HIDDEN-1
NO_IGNORE_ENV: Final = "CLAUDE_CODE_GLOB_NO_IGNORE"  # GLOB-IGNORE-1
TRUNCATED_NOTE: Final = (
    "(Results are truncated. Consider using a more specific path or pattern.)"  # GLOB-OUTPUT-1
)
NO_FILES: Final = "No files found"
MAGIC: Final = frozenset("*?[{")
MAX_BRACE_EXPANSIONS: Final = 4096  # a bound on the work one pattern can ask for


class GlobInput(StrictInput):
    pattern: str = Field(description="The glob pattern to match files against")
    path: str | None = Field(
        default=None,
        description="The directory to search in; the current working directory when omitted",
    )


# --- the pattern (GLOB-SYNTAX-1) -------------------------------------------------------


def expand_braces(pattern: str) -> list[str]:
    """GLOB-SYNTAX-1: ``{a,b}`` alternatives; ``{a}`` is a group of one; groups never nest.

    A pattern holding a group inside a group has no alternatives at all (it
    matches nothing, as ripgrep refuses it). An unbalanced brace is literal. A
    backslash keeps the next character literal.
    """
    group = _first_group(pattern)
    if group is None:
        return [pattern]
    start, end, alternatives = group
    if any(_first_group(alternative) is not None for alternative in alternatives):
        return []  # GLOB-SYNTAX-1: nested groups are not allowed
    head, tail = pattern[:start], pattern[end + 1 :]
    expanded: list[str] = []
    for tail_variant in expand_braces(tail):
        for alternative in alternatives:
            expanded.append(head + alternative + tail_variant)
            if len(expanded) > MAX_BRACE_EXPANSIONS:
                return expanded
    return expanded


def _first_group(pattern: str) -> tuple[int, int, list[str]] | None:
    """The first closed brace group: (start, end, alternatives split at its top-level commas)."""
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if char == "{":
            close, commas = _group_extent(pattern, i)
            if close is not None:
                parts, last = [], i + 1
                for comma in commas:
                    parts.append(pattern[last:comma])
                    last = comma + 1
                parts.append(pattern[last:close])
                return i, close, parts
        i += 1
    return None


def _group_extent(pattern: str, start: int) -> tuple[int | None, list[int]]:
    """The index of the brace closing the one at ``start`` and its top-level commas."""
    depth, i = 0, start
    commas: list[int] = []
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return i, commas
        elif char == "," and depth == 1:
            commas.append(i)
        i += 1
    return None, []


def _segment_regex(segment: str) -> str:
    """GLOB-SYNTAX-1 within one segment: ``*``, ``?``, ``[...]``, escapes; never ``/``."""
    out, i, n = [], 0, len(segment)
    while i < n:
        char = segment[i]
        if char == "*":
            while i < n and segment[i] == "*":
                i += 1
            out.append("[^/]*")
            continue
        if char == "?":
            out.append("[^/]")
        elif char == "[":
            parsed = _class_regex(segment, i)
            if parsed is not None:
                regex, i = parsed
                out.append(regex)
                continue
            out.append(re.escape(char))
        elif char == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(segment[i]))
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def _class_regex(segment: str, start: int) -> tuple[str, int] | None:
    """``[...]`` at ``start`` (``[!...]``/``[^...]`` negated), or None when unclosed."""
    i = start + 1
    negated = i < len(segment) and segment[i] in "!^"
    if negated:
        i += 1
    members: list[str] = []
    first = True
    while i < len(segment) and (segment[i] != "]" or first):
        first = False
        char = segment[i]
        if char == "\\" and i + 1 < len(segment):
            i += 1
            char = segment[i]
        if char == "-" and members and i + 1 < len(segment) and segment[i + 1] != "]":
            members.append("-")
        else:
            members.append(char if char.isalnum() else f"\\U{ord(char):08x}")
        i += 1
    if i >= len(segment):
        return None
    body = "".join(members)
    return (f"[^/{body}]" if negated else f"(?!/)[{body}]"), i + 1


def pattern_regex(pattern: str) -> str:
    """One brace-free pattern as a regex over ``/``-separated relative paths.

    ``**`` as a whole segment matches zero or more segments (GLOB-SYNTAX-1).
    """
    segments = [s for s in pattern.split("/") if s != ""]
    out: list[str] = []
    pending_globstar = False
    for segment in segments:
        if segment == "**":
            pending_globstar = True
            continue
        piece = _segment_regex(segment)
        if out:
            out.append("/(?:.*/)?" if pending_globstar else "/")
        elif pending_globstar:
            out.append("(?:.*/)?")
        out.append(piece)
        pending_globstar = False
    if pending_globstar:
        out.append("(?:/.*)?" if out else ".*")
    return "".join(out)


def _has_magic(segment: str) -> bool:
    return any(char in MAGIC or char == "\\" for char in segment)


@dataclass(frozen=True, slots=True)
class _Plan:
    """Where to walk and what to match for one brace alternative."""

    regex: Any  # a ``regex`` pattern
    start: tuple[str, ...]  # the literal leading directories: where the walk starts
    max_depth: int | None  # segments below the start; None when ``**`` is present
    by_name: bool = False  # GLOB-BASE-1: the regex matches a file's name, at any depth
    dir_regex: Any = None  # GLOB-HIDDEN-1: a directory matching ripgrep's way (else regex)


def plan(pattern: str, *, whole_walk: bool = False) -> tuple[_Plan, ...]:
    """The walk for a relative pattern, one start per brace alternative.

    A pattern without ``/`` matches names at any depth (GLOB-BASE-1). With
    ``whole_walk`` the walk covers the whole search directory (its paths are
    matched relative to another anchor, the session cwd).
    """
    pattern = pattern.removeprefix("./")
    by_name = "/" not in pattern
    plans = []
    for alternative in expand_braces(pattern):
        regex = _compiled(alternative)
        # GLOB-HIDDEN-1: for ripgrep a trailing /** matches below a directory, not the
        # directory itself
        dir_regex = _compiled(alternative[:-2] + "*/**") if alternative.endswith("/**") else regex
        if by_name or whole_walk:
            plans.append(_Plan(regex, (), None, by_name, dir_regex))
            continue
        segments = [s for s in alternative.split("/") if s != ""]
        literal: list[str] = []
        for segment in segments[:-1]:
            if _has_magic(segment) or segment in (".", ".."):
                break
            literal.append(segment)
        rest = segments[len(literal) :]
        max_depth = None if "**" in rest else len(rest)
        plans.append(_Plan(regex, tuple(literal), max_depth, dir_regex=dir_regex))
    return tuple(plans)


def _compiled(alternative: str) -> Any:
    """GLOB-TIMEOUT-1: a pattern's regex in the regex engine, whose match takes a timeout."""
    return regex_engine.compile(pattern_regex(alternative) + r"\Z", regex_engine.DOTALL)


def base_of(pattern: str, path: str) -> tuple[str, str]:
    """GLOB-BASE-1: the search directory and the pattern relative to it.

    An absolute pattern's base is its segments before the first holding ``*``,
    ``?``, ``[`` or ``{`` (for a pattern without any: its directory).
    """
    if not pattern.startswith("/"):
        return path, pattern
    segments = pattern.split("/")
    for index, segment in enumerate(segments):
        if any(char in MAGIC for char in segment):
            base = "/".join(segments[:index]) or "/"
            return posixpath.normpath(base), "/".join(segments[index:])
    base, name = posixpath.split(pattern)
    return posixpath.normpath(base or "/"), name


# --- the walk (GLOB-WALK-1, GLOB-HIDDEN-1, GLOB-IGNORE-1) --------------------------------


@dataclass(slots=True)
class _Walker:
    search_dir: str
    include_hidden: bool
    ignores: IgnoreFiles | None
    abort: AbortSignal

    def entries(
        self,
        start: tuple[str, ...],
        max_depth: int | None,
        enters_hidden: Callable[[str, str], bool] | None = None,
    ) -> Iterator[tuple[str, str]]:
        """(relative path, absolute path) of every file below ``start`` the rules allow.

        ``enters_hidden`` (GLOB-HIDDEN-1's ``pattern-wins``) decides, from its relative
        and absolute paths, whether a dot directory is entered; dot files are then listed
        like any other.
        """
        directory, chain = self.search_dir, self._root_chain()
        for index, name in enumerate(start):  # the literal leading directories, checked
            child = posixpath.join(directory, name)  # like walked ones
            if name.startswith(".") and not self._enters(
                "/".join(start[: index + 1]), child, enters_hidden
            ):
                return
            try:
                st = os.lstat(child)
            except OSError:
                return
            if not statmod.S_ISDIR(st.st_mode):  # GLOB-WALK-1: symlinked dirs not entered
                return
            if self.ignores is not None and self.ignores.is_ignored(chain, child, True):
                return
            directory = child
            chain = self._extend(chain, directory, None)
        prefix = "/".join(start)
        yield from self._walk(directory, prefix, chain, max_depth, enters_hidden)

    def _enters(
        self, rel: str, path: str, enters_hidden: Callable[[str, str], bool] | None
    ) -> bool:
        """GLOB-HIDDEN-1: whether the dot directory at ``rel`` is entered."""
        if not self.include_hidden:
            return False
        return enters_hidden is None or enters_hidden(rel, path)

    def _root_chain(self) -> Chain:
        if self.ignores is None:
            return ()
        return self.ignores.chain_for(self.search_dir)

    def _extend(self, chain: Chain, directory: str, present: set[str] | None) -> Chain:
        if self.ignores is None:
            return chain
        return self.ignores.extend(chain, directory, present)

    def _walk(
        self,
        directory: str,
        prefix: str,
        chain: Chain,
        depth: int | None,
        enters_hidden: Callable[[str, str], bool] | None,
    ) -> Iterator[tuple[str, str]]:
        if depth is not None and depth <= 0:
            return
        if self.abort.is_set():
            raise errors.CallAbortedError("aborted")
        try:
            with os.scandir(directory) as listing:
                found = list(listing)
        except OSError:
            return
        below: list[tuple[str, str]] = []
        for entry in found:
            name = entry.name
            if not self.include_hidden and name.startswith("."):
                continue  # GLOB-HIDDEN-1: a dot file or dot directory left out
            rel = f"{prefix}/{name}" if prefix else name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if name.startswith(".") and not self._enters(rel, entry.path, enters_hidden):
                        continue  # GLOB-HIDDEN-1
                    below.append((entry.path, rel))  # GLOB-WALK-1: .git is entered too
                    continue
                if not entry.is_file(follow_symlinks=False):
                    continue  # GLOB-WALK-1: regular files only, never a symlink
            except OSError:
                continue
            if self.ignores is not None and self.ignores.is_ignored(chain, entry.path, False):
                continue  # GLOB-IGNORE-1
            yield rel, entry.path
        next_depth = None if depth is None else depth - 1
        if next_depth is not None and next_depth <= 0:
            return
        for path, rel in below:
            if self.ignores is not None and self.ignores.is_ignored(chain, path, True):
                continue  # GLOB-IGNORE-1: an excluded directory is not entered
            yield from self._walk(
                path, rel, self._extend(chain, path, None), next_depth, enters_hidden
            )


# --- the tool ---------------------------------------------------------------------------


def get_path(inp: GlobInput, ctx: ToolUseContext) -> str | None:
    """TOOL-PATH-1: the search directory, or the base of an absolute pattern (GLOB-BASE-1)."""
    if paths.has_nul(inp.pattern):
        return None
    if inp.path is not None and (paths.has_nul(inp.path) or paths.is_unc(inp.path)):
        return None
    path = ctx.cwd if inp.path is None else ctx.expand(inp.path)
    return base_of(inp.pattern, path)[0]


def validate_input(inp: GlobInput, ctx: ToolUseContext) -> None:
    """GLOB-VALIDATE-1: the table of SPEC.md 17.2, in order."""
    if paths.has_nul(inp.pattern) or (inp.path is not None and paths.has_nul(inp.path)):
        raise errors.InvalidPathError("Pattern and path must not contain NUL characters.")
    if inp.path is None:
        return
    if paths.is_unc(inp.path):  # FILE-PATH-3
        raise errors.UncPathError("UNC paths are not supported: refusing to touch a network share.")
    path = ctx.expand(inp.path)
    if not os.path.lexists(path):
        raise errors.PathDoesNotExistError(
            f"Directory does not exist: {path}. Note: your current working directory is {ctx.cwd}."
        )
    if not os.path.isdir(path):
        raise errors.NotADirectoryRefusal(f"Path is not a directory: {path}")


def _anchor(pattern: str, search_dir: str, ctx: ToolUseContext) -> str:
    """GLOB-BASE-1: what a pattern with ``/`` is matched relative to.

    The session cwd for a relative pattern (ripgrep's rule, measured in Claude
    Code 2.1.88: ``b/*.py`` searched in ``a`` finds nothing, ``a/b/*.py`` finds
    ``a/b/c.py``); the base for an absolute one.
    """
    return search_dir if pattern.startswith("/") else ctx.cwd


def find(inp: GlobInput, ctx: ToolUseContext) -> tuple[list[str], bool]:
    """The matches shown, oldest first and capped, and whether there were more.

    GLOB-TIMEOUT-2: the whole search runs within one ``Deadline``, its
    matches (the pattern's and the ignore files') within what is left of it.
    """
    deadline = Deadline(NAME)
    return within(deadline, lambda: _find(inp, ctx, deadline))


def _find(inp: GlobInput, ctx: ToolUseContext, deadline: Deadline) -> tuple[list[str], bool]:
    path = ctx.cwd if inp.path is None else ctx.expand(inp.path)
    search_dir, pattern = base_of(inp.pattern, path)  # GLOB-BASE-1
    anchor = _anchor(inp.pattern, search_dir, ctx)
    env_session = ctx.session
    profile = env_session.profile  # GLOB-HIDDEN-1, GLOB-IGNORE-1: whether it reads the switches
    hidden_off = env_is_false(env_session, HIDDEN_ENV)
    pattern_wins = hidden_off and profile.glob_hidden_switch == "pattern-wins"
    walker = _Walker(
        search_dir=search_dir,
        include_hidden=not hidden_off or pattern_wins,
        ignores=(
            IgnoreFiles(GLOB_IGNORE_FILES, top=env_session.root, deadline=deadline)
            if profile.glob_ignore_switch and env_is_false(env_session, NO_IGNORE_ENV)
            else None
        ),
        abort=ctx.abort,
    )
    if not os.path.isdir(search_dir):
        return [], False
    shown = shown_filter(env_session)
    found: dict[str, int] = {}
    for step in plan(pattern, whole_walk=anchor != search_dir):
        enters_hidden = _matching_dirs(step, anchor, search_dir, deadline) if pattern_wins else None
        for rel, absolute in walker.entries(step.start, step.max_depth, enters_hidden):
            subject = _subject(step, rel, absolute, anchor, search_dir)
            if absolute in found or subject is None:
                continue
            if not deadline.match(step.regex, subject):  # GLOB-TIMEOUT-1
                continue
            if shown(absolute):  # PERM-FILTER-1: counted only when shown
                found[absolute] = mtime_ns(absolute)
    ordered = oldest_first(found.items())  # GLOB-SORT-1
    return ordered[:MAX_RESULTS], len(ordered) > MAX_RESULTS


def _matching_dirs(
    step: _Plan, anchor: str, search_dir: str, deadline: Deadline
) -> Callable[[str, str], bool]:
    """GLOB-HIDDEN-1 (``pattern-wins``): a dot directory is entered when its own path
    matches, as ripgrep's globs override its hidden rule."""

    def enters(rel: str, absolute: str) -> bool:
        subject = _subject(step, rel, absolute, anchor, search_dir)
        return subject is not None and bool(deadline.match(step.dir_regex, subject))

    return enters


def _subject(step: _Plan, rel: str, absolute: str, anchor: str, search_dir: str) -> str | None:
    """GLOB-BASE-1: the string a plan's regex is matched against; None when it cannot match."""
    if step.by_name:
        return posixpath.basename(rel)
    if anchor == search_dir:
        return rel
    prefix = anchor.rstrip("/") + "/"
    return absolute[len(prefix) :] if absolute.startswith(prefix) else None


def call(inp: GlobInput, ctx: ToolUseContext) -> ToolResult:
    started = time.monotonic()
    found, truncated = find(inp, ctx)
    relative = ctx.session.profile.glob_paths_relative
    filenames = [shown_path(path, ctx.cwd, relative=relative) for path in found]
    return ToolResult(
        data={  # GLOB-OUTPUT-1
            "durationMs": round((time.monotonic() - started) * 1000),
            "numFiles": len(filenames),
            "filenames": filenames,
            "truncated": truncated,
        }
    )


def map_result(data: Mapping[str, Any], profile: Profile) -> ResultContent:
    """GLOB-OUTPUT-1: absolute paths one per line, the truncation note, or ``No files found``."""
    filenames = list(data["filenames"])
    if not filenames:
        return NO_FILES
    if data["truncated"]:
        filenames.append(TRUNCATED_NOTE)
    return "\n".join(filenames)


GLOB_TOOL: Final[Tool[GlobInput]] = build_tool(
    name=NAME,
    input_model=GlobInput,
    call=call,
    validate_input=validate_input,
    description=(
        "Fast file pattern matching. Supports glob patterns like '**/*.js' or "
        "'src/**/*.{ts,tsx}'; returns matching file paths, most recently modified first."
    ),
    error_codes={
        errors.InvalidPathError: 1,
        errors.UncPathError: 2,
        errors.PathDoesNotExistError: 3,
        errors.NotADirectoryRefusal: 4,
    },
    is_concurrency_safe=lambda _inp: True,  # TOOL-PROPS-1
    is_read_only=lambda _inp: True,
    map_result=map_result,
    path_fields=("path",),
    get_path=get_path,
    path_rules="read",  # PERM-RULE-2: Read rules govern Glob
    classifier_input=lambda inp: inp.pattern,
    check_permissions=working_directories_check(get_path),  # PERM-READ-1
)
