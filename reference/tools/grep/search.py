"""What both Grep engines share: the request, the result, the errors, the file selection.

The file selection is ripgrep's (GREP-FILES-1), as Claude Code 2.1.88 runs
it: ``--glob`` overrides first (the version-control directories excluded,
then the model's globs, the last matching one deciding; a glob that
whitelists a path skips the ignore files and the type), then
``.rgignore``/``.ignore`` files and, inside a git repository only,
``.gitignore`` files, with gitignore semantics, then the ``--type`` globs;
hidden files included. The pure-Python engine walks with it, matching every
glob and ignore pattern within its search's ``Deadline`` (GREP-TIMEOUT-1).
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import regex

from reference import errors
from reference.deadline import Deadline
from reference.gitignore import (
    GITIGNORE,
    GREP_IGNORE_FILES,
    Chain,
    IgnoreFiles,
    IgnorePattern,
    compile_line,
    glob_regex,
    last_match,
)
from reference.tools.grep.file_types import FILE_TYPES

VCS_DIRECTORIES: Final = (".git", ".svn", ".hg", ".bzr", ".jj", ".sl")  # GREP-FILES-1


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchRequest:
    """One search, engine-neutral.

    ``target`` is the expanded path searched (a directory, or a file searched
    alone), ``top`` the highest directory whose ignore files apply (``root``).
    ``before``/``after`` are context lines (0 outside ``content`` mode).
    ``wants`` is what the output mode needs: the lines (``content``), the
    number of matching lines per file (``count``) or only the files; an
    engine may give more.
    """

    pattern: str
    target: str
    target_is_dir: bool
    top: str
    globs: tuple[str, ...] = ()
    file_type: str | None = None
    ignore_case: bool = False
    multiline: bool = False
    before: int = 0
    after: int = 0
    wants: Literal["lines", "counts", "files"] = "lines"


@dataclass(slots=True)
class FileHits:
    """The lines one file contributes: (number, text, is_match), by line number.

    ``text`` is the line without its ``\\n``. Context lines are present only
    when the request asked for them; an engine asked only for counts or
    files may give ``count`` (or nothing) instead of lines.
    """

    path: str
    lines: list[tuple[int, str, bool]] = field(default_factory=list)
    count: int | None = None  # the matching lines, when an engine counted without lines

    @property
    def matching_lines(self) -> int:
        if self.count is not None:
            return self.count
        return sum(1 for _, _, is_match in self.lines if is_match)


def unknown_type(name: str) -> errors.UnknownFileTypeError:
    return errors.UnknownFileTypeError(f"Unknown file type: {name}")


def split_globs(glob: str | None) -> tuple[str, ...]:
    """GREP-FILES-1: ``glob`` holds whitespace-separated globs."""
    return tuple(glob.split()) if glob else ()


IgnoreVerdict = Literal["whitelist", "ignore"] | None


@dataclass(slots=True)
class Selection:
    """Which entries below a search directory are searched (GREP-FILES-1)."""

    search_dir: str
    overrides: tuple[IgnorePattern, ...]
    whitelists: int
    type_regex: Any  # a ``regex`` pattern, or None without a type
    ignores: IgnoreFiles
    deadline: Deadline

    @classmethod
    def build(
        cls, request: SearchRequest, search_dir: str, deadline: Deadline, *, lenient: bool = False
    ) -> Selection:
        """The selection of a request; raises for a bad glob or an unknown type.

        Every pattern it holds is matched within ``deadline``. ``lenient``
        (for ``rg``'s results, which rg already filtered) skips a glob or a
        type this module cannot read instead of raising.
        """
        overrides = [compile_line(f"!{name}", strict=True) for name in VCS_DIRECTORIES]
        for glob in request.globs:
            try:
                pattern = compile_line(glob, strict=not lenient)
            except errors.GlobSyntaxError as exc:
                raise errors.InvalidGlobError(str(exc)) from exc
            if pattern is not None:
                overrides.append(pattern)
        try:
            by_type = type_regex(request.file_type)
        except errors.UnknownFileTypeError:
            if not lenient:
                raise
            by_type = None
        names = GREP_IGNORE_FILES if in_git_repository(search_dir) else _WITHOUT_GITIGNORE
        kept = tuple(p for p in overrides if p is not None)
        return cls(
            search_dir=search_dir,
            overrides=kept,
            whitelists=sum(1 for p in kept if not p.negated),
            type_regex=by_type,
            ignores=IgnoreFiles(names, top=request.top, deadline=deadline),
            deadline=deadline,
        )

    def override(self, rel: str, is_dir: bool) -> IgnoreVerdict:
        """ripgrep's ``--glob``: the last matching glob decides, ``!`` excludes."""
        if not self.overrides:
            return None
        excluded = last_match(self.overrides, rel, is_dir, self.deadline)
        if excluded is None:
            return "ignore" if self.whitelists and not is_dir else None
        return "whitelist" if excluded else "ignore"  # a plain glob is a gitignore "exclude"

    def allows(self, chain: Chain, path: str, rel: str, name: str, is_dir: bool) -> bool:
        """Whether a walked entry is searched (a directory: entered)."""
        verdict = self.override(rel, is_dir)
        if verdict is not None:
            return verdict == "whitelist"  # GREP-FILES-1: a matching glob decides alone
        if self.ignores.is_ignored(chain, path, is_dir):
            return False
        if is_dir or self.type_regex is None:
            return True
        # The types' globs are fixed and simple (one repeat each): no timeout needed, as for
        # the ignore patterns of gitignore.UNTIMED_REPEATS; the limit was checked above.
        return self.type_regex.match(name) is not None


_WITHOUT_GITIGNORE: Final = tuple(name for name in GREP_IGNORE_FILES if name != GITIGNORE)


def in_git_repository(directory: str) -> bool:
    """GREP-FILES-1: whether ``directory`` or a parent holds ``.git`` (ripgrep's test)."""
    current = posixpath.normpath(directory)
    while True:
        if os.path.lexists(posixpath.join(current, ".git")):
            return True
        parent = posixpath.dirname(current)
        if parent == current:
            return False
        current = parent


def type_regex(name: str | None) -> Any:
    """The file-name ``regex`` pattern of a ripgrep type (``all``: any type); None without one."""
    if name is None:
        return None
    if name == "all":
        globs = tuple(g for type_globs in FILE_TYPES.values() for g in type_globs)
    elif name in FILE_TYPES:
        globs = FILE_TYPES[name]
    else:
        raise unknown_type(name)
    source = "(?:" + "|".join(glob_regex(g) for g in globs) + r")\Z"
    return regex.compile(source, regex.DOTALL | regex.VERSION0)
