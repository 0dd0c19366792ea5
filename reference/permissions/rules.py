"""Permission rules: ``Tool`` and ``Tool(specifier)``, and path-rule matching.

Path specifiers use gitignore pattern syntax with four anchors (section 4.2 of
SPEC.md): ``//p`` from the filesystem root, ``~/p`` from home, ``/p`` from the
session root, ``./p`` or a bare ``p`` from the working directory. A bare name
without a slash matches at any depth below its anchor, and a pattern that
matches a directory matches everything under it.
"""

from __future__ import annotations

import functools
import os
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final, Literal

Behavior = Literal["allow", "deny", "ask"]
_NAME_TREE = re.compile(r"^[^/]+/\*\*$")
_RULE = re.compile(r"^(?P<tool>[^()\s]+)(?:\((?P<spec>.*)\))?$", re.DOTALL)


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    tool: str
    specifier: str | None
    behavior: Behavior
    source: str

    @property
    def text(self) -> str:
        return self.tool if self.specifier is None else f"{self.tool}({self.specifier})"


def parse_rule(text: str, *, behavior: Behavior, source: str) -> Rule | None:
    """Parse ``Tool`` or ``Tool(specifier)``; ``Tool(*)`` means ``Tool``.

    Returns None for text that is not a rule (it is ignored, never an error).
    """
    match = _RULE.match(text.strip())
    if match is None:
        return None  # PERM-RULE-1: unparseable rules are ignored
    spec = match.group("spec")
    if spec is not None and not _balanced(spec):
        return None  # PERM-RULE-1: unbalanced parentheses
    if spec is not None and spec.strip() == "":
        return None  # PERM-RULE-1: empty parentheses
    if spec is not None and spec.strip() == "*":
        spec = None
    return Rule(tool=match.group("tool"), specifier=spec, behavior=behavior, source=source)


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


@functools.lru_cache(maxsize=1024)
def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """gitignore-style glob: ``*`` and ``?`` within a segment, ``**`` across."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i + 1 :]:
            end = pattern.index("]", i + 1)
            body = pattern[i + 1 : end].replace("\\", "\\\\")
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append(f"[{body}]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z", re.DOTALL)


def anchored_pattern(
    specifier: str, *, root: str, cwd: str, home: str, behavior: Behavior = "deny"
) -> str:
    """The absolute glob a path specifier stands for (PERM-PATH-1, PERM-PATH-2)."""
    if specifier.startswith("//"):
        return "/" + specifier[2:].lstrip("/")
    if specifier.startswith("~/"):
        return posixpath.join(home, specifier[2:])
    if specifier.startswith("/"):
        return posixpath.join(root, specifier[1:])
    relative = specifier[2:] if specifier.startswith("./") else specifier
    if not specifier.startswith("./"):
        if "/" not in relative.rstrip("/"):
            relative = "**/" + relative  # a bare name matches at any depth
        elif behavior != "allow" and _NAME_TREE.match(relative):
            relative = "**/" + relative  # deny/ask NAME/** matches NAME at any depth
    return posixpath.join(cwd, relative)


def path_matches(
    specifier: str, path: str, *, root: str, cwd: str, home: str, behavior: Behavior = "deny"
) -> bool:
    """Whether the absolute ``path`` (or a directory above it) matches the specifier.

    PERM-PATH-2: the match ignores case.
    """
    glob = glob_to_regex(
        anchored_pattern(
            specifier.rstrip("/") or "/", root=root, cwd=cwd, home=home, behavior=behavior
        )
    )
    pattern = re.compile(glob.pattern, glob.flags | re.IGNORECASE)
    candidate = path
    while True:
        if pattern.match(candidate):
            return True
        parent = posixpath.dirname(candidate)
        if parent == candidate:
            return False
        candidate = parent


def path_candidates(path: str) -> tuple[str, ...]:
    """The path and, when different, the path with symlinks resolved."""
    resolved = resolve_path(path)
    return (path,) if resolved == path else (path, resolved)


_O_PATH: Final = getattr(os, "O_PATH", 0)
_FD_LINKS: Final = "/proc/self/fd/"
_DELETED: Final = " (deleted)"


def resolve_path(path: str) -> str:
    """PERM-PATH-3: ``path`` with every symlink resolved.

    A path that does not exist yet is resolved through its longest existing
    parent: the existing part is resolved and the rest appended unchanged. A
    dangling link resolves to its target.

    An existing path is resolved by the kernel: opened with ``O_PATH`` (which
    reads nothing, so a FIFO or a device cannot block) and named by its
    ``/proc/self/fd`` link, three system calls where ``os.path.realpath``
    makes one ``lstat`` per component. Whatever that cannot answer exactly (no
    ``O_PATH`` or ``/proc``, a missing path, a file deleted meanwhile, a name
    outside this mount namespace) falls back to ``os.path.realpath``, so the
    answer is always the one ``realpath`` gives.

    PERM-PATH-5: a path the file system cannot encode (a lone surrogate
    outside ``surrogateescape``'s range, sent as a ``\\ud800`` escape) names
    no file; ``realpath`` would raise on it, so ``_resolve_unnameable`` gives
    the answer ``realpath`` gives for any missing component instead.
    """
    if not _nameable(path):
        return _resolve_unnameable(path)
    if _O_PATH and path.startswith("/"):
        try:
            fd = os.open(path, _O_PATH | os.O_CLOEXEC)
        except (OSError, ValueError):
            return os.path.realpath(path)
        try:
            resolved = os.readlink(f"{_FD_LINKS}{fd}")
        except OSError:
            resolved = ""
        finally:
            os.close(fd)
        if resolved.startswith("/") and not resolved.endswith(_DELETED):
            return resolved
    return os.path.realpath(path)


def _nameable(path: str) -> bool:
    """Whether ``path`` can be encoded for the file system (so it may name a file)."""
    try:
        os.fsencode(path)
    except UnicodeEncodeError:
        return False
    return True


def _resolve_unnameable(path: str) -> str:
    """PERM-PATH-5: PERM-PATH-3 for a path holding a component no file can have.

    Its longest nameable leading part is resolved; from the first unnameable
    component on, the components are taken as ``realpath`` takes missing
    ones: appended as written, ``..`` dropping the last one, ``.`` and empty
    ones skipped; a component appended to a nameable path is resolved with it
    (a ``..`` may have left the missing part, and what follows may be a link).
    """
    if not path.startswith("/"):
        path = posixpath.join(os.getcwd(), path)
    parts = path.split("/")
    first = next(i for i, part in enumerate(parts) if not _nameable(part))
    current = resolve_path("/".join(parts[:first]) or "/")
    for part in parts[first:]:
        if part in ("", "."):
            continue
        if part == "..":
            current = posixpath.dirname(current)
            continue
        joined = posixpath.join(current, part)
        current = resolve_path(joined) if _nameable(joined) else joined
    return current


def is_under(path: str, directory: str) -> bool:
    """Whether ``path`` is ``directory`` itself or below it (both absolute, normalized)."""
    if directory == "/":
        return path.startswith("/")
    return path == directory or path.startswith(directory.rstrip("/") + "/")


@dataclass(slots=True)
class PathForms:
    """PERM-PATH-3: one expanded path and the anchors its rules are matched from.

    Both as written and, computed once on first need, with every symlink
    resolved: one scan over a session's rules resolves the four paths once,
    not once per rule. A form lives for one scan only, so a link changed
    between two calls is seen by the second (PERM-DIRS-1).
    """

    path: str
    root: str
    cwd: str
    home: str
    _resolved: PathForms | None = field(default=None, repr=False)

    def resolved(self) -> PathForms:
        if self._resolved is None:
            self._resolved = PathForms(
                resolve_path(self.path),
                resolve_path(self.root),
                resolve_path(self.cwd),
                resolve_path(self.home),
            )
        return self._resolved


def _matches(specifier: str, forms: PathForms, behavior: Behavior) -> bool:
    return path_matches(
        specifier, forms.path, root=forms.root, cwd=forms.cwd, home=forms.home, behavior=behavior
    )


def path_rule_matches(specifier: str, forms: PathForms, *, behavior: Behavior) -> bool:
    """PERM-PATH-3: whether a path rule of ``behavior`` applies to the expanded path.

    The expanded path is matched against the rule's anchor as written; the path
    with every symlink resolved, against the anchor (``root``, ``cwd``,
    ``home``; ``/`` for ``//p``) resolved the same way. A deny or ask rule
    applies when either matches, an allow rule only when both do, so a link can
    neither route around a deny nor borrow an allow.
    """
    as_written = _matches(specifier, forms, behavior)
    if behavior != "allow" and as_written:
        return True  # PERM-PATH-3: deny/ask on either form
    if behavior == "allow" and not as_written:
        return False  # PERM-PATH-3: allow needs both forms
    return _matches(specifier, forms.resolved(), behavior)


def denied_tool_names(entries: Iterable[tuple[str, str]]) -> frozenset[str]:
    """REG-DENY-1: names of tools a deny rule names whole (``Tool`` or ``Tool(*)``)."""
    names = set()
    for source, entry in entries:
        rule = parse_rule(entry, behavior="deny", source=source)
        if rule is not None and rule.specifier is None:
            names.add(rule.tool)
    return frozenset(names)
