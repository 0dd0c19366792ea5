"""Ignore files with gitignore semantics, as ripgrep applies them.

One concept: whether an entry below a search directory is excluded by the
ignore files of that directory, of the directories between it and the entry,
and of its parents up to a top directory (the session ``root``). Glob uses
``.gitignore`` alone (GLOB-IGNORE-1); Grep uses ``.rgignore``, ``.ignore`` and
``.gitignore`` in that order of precedence (GREP-FILES-1).

The rules are git's, in the flavour of ripgrep's ``ignore`` crate, so that
the pure-Python Grep engine and ``rg`` agree:

* a line is a pattern; blank lines and lines starting with ``#`` are not;
  trailing spaces are dropped unless escaped; ``\\`` escapes the next
  character; ``!`` negates (re-includes);
* a trailing ``/`` makes the pattern match directories only;
* a pattern with a ``/`` (other than a trailing one) is anchored to the
  directory of its file; one without matches an entry's name at any depth;
* ``*`` and ``?`` never match ``/``; ``[...]`` is a class (``[!...]`` and
  ``[^...]`` negate it); ``**/`` leading, ``/**`` trailing and ``/**/``
  inside span directories; ``{a,b}`` is an alternation (not nested);
* the deepest directory with a matching pattern decides, and in it the last
  matching line; the kinds of file are consulted in precedence order, the
  first kind with a matching pattern deciding;
* an excluded directory is not entered, so nothing below it can be
  re-included (callers walking a tree stop there).

A pattern comes from a file in the tree searched or from the model, so it
may backtrack without end: it is compiled for the ``regex`` engine and,
given the search's ``Deadline``, matched within what is left of it
(GLOB-TIMEOUT-2, GREP-TIMEOUT-2). A pattern with at most ``UNTIMED_REPEATS``
unbounded repeats (``*``, ``**``, the any-depth prefix of a name) cannot
backtrack far, at worst quadratically in the path's length, so it is
matched without a timeout, which costs a clock reading per call; the limit
is still checked before every entry.
"""

from __future__ import annotations

import os
import posixpath
import re
import stat as statmod
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import regex

from reference import errors
from reference.deadline import Deadline

GITIGNORE: Final = ".gitignore"
GREP_IGNORE_FILES: Final = (".rgignore", ".ignore", GITIGNORE)  # GREP-FILES-1, precedence order
GLOB_IGNORE_FILES: Final = (GITIGNORE,)  # GLOB-IGNORE-1
UNTIMED_REPEATS: Final = 2


def glob_regex(glob: str, *, strict: bool = True) -> str:
    """The regex source (unanchored) of one gitignore-style glob.

    With ``strict``, a malformed glob raises :class:`GlobSyntaxError` as
    ripgrep's ``--glob`` does; otherwise the offending character is literal.
    """
    return _GlobCompiler(glob, strict=strict).compile()


class _GlobCompiler:
    def __init__(self, glob: str, *, strict: bool) -> None:
        self.glob = glob
        self.strict = strict
        self.repeats = 0  # unbounded repeats written, every alternative's counted

    def fail(self, message: str) -> None:
        if self.strict:
            raise errors.GlobSyntaxError(f"error parsing glob '{self.glob}': {message}")

    def compile(self) -> str:
        out, _ = self._sequence(0, in_braces=False)
        return out

    def _sequence(self, i: int, *, in_braces: bool) -> tuple[str, int]:
        """Compile from ``i`` up to the end (or, in braces, up to ``,`` or ``}``)."""
        glob, n, out = self.glob, len(self.glob), []
        while i < n:
            c = glob[i]
            if in_braces and c in ",}":
                break
            if c == "*":
                start = i
                while i < n and glob[i] == "*":
                    i += 1
                double = i - start == 2
                seg_start = start == 0 or glob[start - 1] == "/"
                seg_end = i == n or glob[i] == "/"
                self.repeats += 1
                if double and seg_start and seg_end:
                    if i == n:
                        out.append(".*")  # trailing ** (after "/": everything inside)
                    else:
                        out.append("(?:.*/)?")  # **/ : zero or more directories
                        i += 1
                else:
                    out.append("[^/]*")
                continue
            if c == "?":
                out.append("[^/]")
                i += 1
            elif c == "[":
                i = self._class(i, out)
            elif c == "{":
                i = self._braces(i, out, nested=in_braces)
            elif c == "\\":
                if i + 1 >= n:
                    self.fail("dangling '\\'")
                    out.append(re.escape("\\"))
                    i += 1
                else:
                    out.append(re.escape(glob[i + 1]))
                    i += 2
            else:
                out.append(re.escape(c))
                i += 1
        return "".join(out), i

    def _class(self, i: int, out: list[str]) -> int:
        glob, n = self.glob, len(self.glob)
        j = i + 1
        negated = j < n and glob[j] in "!^"
        if negated:
            j += 1
        members: list[str] = []
        first = True
        while j < n and (glob[j] != "]" or first):
            first = False
            lo, j = self._class_char(j)
            if j + 1 < n and glob[j] == "-" and glob[j + 1] != "]":
                hi, j = self._class_char(j + 1)
                if lo > hi:
                    self.fail(f"invalid range; '{lo}' > '{hi}'")
                    lo, hi = hi, lo
                members.append(f"{_class_escape(lo)}-{_class_escape(hi)}")
            else:
                members.append(_class_escape(lo))
        if j >= n:
            self.fail("unclosed character class; missing ']'")
            out.append(re.escape("["))
            return i + 1
        body = "".join(members)
        out.append(f"[^/{body}]" if negated else f"(?!/)[{body}]")
        return j + 1

    def _class_char(self, j: int) -> tuple[str, int]:
        glob = self.glob
        if glob[j] == "\\" and j + 1 < len(glob):
            return glob[j + 1], j + 2
        return glob[j], j + 1

    def _braces(self, i: int, out: list[str], *, nested: bool) -> int:
        if nested:
            self.fail("nested alternate groups are not allowed")
        alternatives: list[str] = []
        j = i + 1
        while True:
            part, j = self._sequence(j, in_braces=True)
            alternatives.append(part)
            if j >= len(self.glob):
                self.fail("unclosed alternate group; missing '}'")
                out.append(re.escape("{"))
                return i + 1
            if self.glob[j] == "}":
                out.append("(?:" + "|".join(alternatives) + ")")
                return j + 1
            j += 1  # the comma


def _class_escape(char: str) -> str:
    return char if char.isalnum() else f"\\U{ord(char):08x}"


@dataclass(frozen=True, slots=True)
class IgnorePattern:
    """One gitignore line: ``negated`` re-includes, ``dir_only`` matches directories."""

    regex: Any  # a ``regex`` pattern
    negated: bool
    dir_only: bool
    timed: bool = True
    """Whether a match within a deadline gets a timeout (see the module docstring)."""

    def matches(self, rel: str, is_dir: bool, deadline: Deadline | None = None) -> bool:
        """Whether the pattern covers ``rel``; within ``deadline`` when given (raises past it).

        GLOB-TIMEOUT-2, GREP-TIMEOUT-2: an ignore file's line is matched within the limit.
        """
        if not is_dir and self.dir_only:
            return False
        if deadline is None or not self.timed:
            return self.regex.match(rel) is not None
        return deadline.match(self.regex, rel) is not None


def compile_line(line: str, *, strict: bool = False) -> IgnorePattern | None:
    """One line of an ignore file (or one ``--glob``); None for blanks and comments."""
    if line.endswith("\r"):
        line = line[:-1]
    if not line or line.startswith("#"):
        return None
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    while line.endswith(" ") and not line.endswith("\\ "):
        line = line[:-1]
    dir_only = line.endswith("/")
    if dir_only:
        line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    line = line.lstrip("/") if anchored else line
    compiler = _GlobCompiler(line, strict=strict)
    body = compiler.compile()
    prefix = "" if anchored else "(?:.*/)?"  # no slash: the name at any depth
    compiled = regex.compile(prefix + body + r"\Z", regex.DOTALL | regex.VERSION0)
    repeats = compiler.repeats + (0 if anchored else 1)
    return IgnorePattern(compiled, negated, dir_only, timed=repeats > UNTIMED_REPEATS)


def parse_ignore_text(text: str) -> tuple[IgnorePattern, ...]:
    """Every pattern of an ignore file; malformed lines are skipped (as ripgrep does)."""
    patterns = []
    for line in text.split("\n"):
        try:
            pattern = compile_line(line, strict=True)
        except errors.GlobSyntaxError:
            continue
        if pattern is not None:
            patterns.append(pattern)
    return tuple(patterns)


def last_match(
    patterns: Sequence[IgnorePattern], rel: str, is_dir: bool, deadline: Deadline | None = None
) -> bool | None:
    """The last matching pattern's verdict: True excluded, False re-included, None no match.

    With ``deadline``: raises ``SearchTimeoutError`` once it passed, before or during a match.
    """
    if deadline is not None:
        deadline.left()
    for pattern in reversed(patterns):
        if pattern.matches(rel, is_dir, deadline):
            return not pattern.negated
    return None


@dataclass(frozen=True, slots=True)
class _DirRules:
    directory: str
    by_kind: tuple[tuple[IgnorePattern, ...], ...]  # one entry per ignore-file name


Chain = tuple[_DirRules, ...]
"""The ignore rules that apply below a directory, shallowest first."""


@dataclass(slots=True)
class IgnoreFiles:
    """The ignore files one search consults: their names in precedence order and ``top``.

    ``top`` is the highest directory whose ignore files apply to a search
    directory below it (GLOB-IGNORE-1, GREP-FILES-1: "its parents up to root").
    Files are read once per search; their patterns are matched within
    ``deadline`` when one is given.
    """

    names: tuple[str, ...]
    top: str
    deadline: Deadline | None = None
    _cache: dict[str, _DirRules | None] = field(default_factory=dict)

    def rules_of(self, directory: str, present: Collection[str] | None = None) -> _DirRules | None:
        """The rules of ``directory``'s own ignore files (None when it has none).

        ``present`` is the directory's listing when the caller has it (saves a stat per name).
        """
        if directory in self._cache:
            return self._cache[directory]
        by_kind: list[tuple[IgnorePattern, ...]] = []
        for name in self.names:
            if present is not None and name not in present:
                by_kind.append(())
                continue
            by_kind.append(_read_patterns(posixpath.join(directory, name)))
        rules = _DirRules(directory, tuple(by_kind)) if any(by_kind) else None
        self._cache[directory] = rules
        return rules

    def chain_for(self, search_dir: str) -> Chain:
        """The rules of ``search_dir``'s parents up to ``top`` and of ``search_dir`` itself."""
        directories = [search_dir]
        if _is_under(search_dir, self.top):
            current = search_dir
            while current != self.top:
                parent = posixpath.dirname(current)
                if parent == current:
                    break
                directories.append(parent)
                current = parent
        chain: Chain = ()
        for directory in reversed(directories):
            chain = self.extend(chain, directory)
        return chain

    def extend(self, chain: Chain, directory: str, present: Collection[str] | None = None) -> Chain:
        """The chain that applies below ``directory``, a child of the chain's last directory."""
        rules = self.rules_of(directory, present)
        return chain if rules is None else (*chain, rules)

    def is_ignored(self, chain: Chain, path: str, is_dir: bool) -> bool:
        """Whether ``path`` (a direct entry of the chain's deepest directory) is excluded."""
        for kind in range(len(self.names)):
            for rules in reversed(chain):
                patterns = rules.by_kind[kind]
                if not patterns:
                    continue
                directory = rules.directory
                rel = path[len(directory) + 1 :] if directory != "/" else path[1:]
                verdict = last_match(patterns, rel, is_dir, self.deadline)
                if verdict is not None:
                    return verdict
        return False

    def is_ignored_below(self, search_dir: str, path: str) -> bool:
        """Whether ``path`` or a directory between ``search_dir`` and it is excluded.

        For a path found some other way than by walking (it is assumed to exist).
        """
        rel = path[len(search_dir) :].strip("/") if _is_under(path, search_dir) else ""
        if not rel:
            return False
        chain = self.chain_for(search_dir)
        current = search_dir
        parts = rel.split("/")
        for index, part in enumerate(parts):
            entry = posixpath.join(current, part)
            is_dir = index < len(parts) - 1
            if self.is_ignored(chain, entry, is_dir):
                return True
            if is_dir:
                chain = self.extend(chain, entry)
                current = entry
        return False


def _read_patterns(path: str) -> tuple[IgnorePattern, ...]:
    """An ignore file's patterns; only a regular file is opened (FILE-PATH-4)."""
    try:
        st = os.stat(path)
        if not statmod.S_ISREG(st.st_mode):
            return ()
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return ()
    return parse_ignore_text(data.decode("utf-8", errors="replace"))


def _is_under(path: str, directory: str) -> bool:
    if directory == "/":
        return path.startswith("/")
    return path == directory or path.startswith(directory + "/")
