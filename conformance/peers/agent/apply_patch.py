"""Write and Edit as codex's ``apply_patch`` patches, where a patch can say the same.

``apply_patch`` is a freeform tool whose input is a patch: ``*** Begin
Patch``, one hunk, ``*** End Patch``. An ``Add File`` hunk is the new file's
lines, each after ``+``; an ``Update File`` hunk removes lines (``-``) and
adds lines (``+``). A patch works on whole lines, so:

- a Write is an ``Add File`` only when its content is not empty, ends with a
  line feed and holds no carriage return (each added line gets a line feed;
  measured: a ``\\r`` in an added line is dropped);
- an Edit is an ``Update File`` only when ``old_string`` is not empty, both
  strings end with a line feed or neither does (or ``new_string`` is empty,
  deleting whole lines), neither holds a carriage return, and, where
  ``old_string`` is found in the file, it starts at a line's start and ends
  at a line's end. Where it is not found (or there is no file) the patch is
  sent as it is and codex's own refusal comes back.

Anything else raises ``Inexpressible``: the call is not applicable, never
approximated.
"""

from __future__ import annotations

from conformance.errors import ConformanceError

__all__ = ["Inexpressible", "add_file", "update_file"]

_BEGIN = "*** Begin Patch\n"
_END = "*** End Patch\n"


class Inexpressible(ConformanceError):
    """What a protocol call asks for has no apply_patch patch."""


def add_file(path: str, content: str) -> str:
    """The patch creating ``path`` with ``content``.

    Raises:
        Inexpressible: see the module's rules for Write.
    """
    _check_path(path)
    if not content or not content.endswith("\n"):
        raise Inexpressible("an apply_patch Add File writes whole lines: content must end with \\n")
    if "\r" in content:
        raise Inexpressible("an apply_patch Add File line cannot hold a carriage return")
    lines = content[:-1].split("\n")
    body = "".join(f"+{line}\n" for line in lines)
    return f"{_BEGIN}*** Add File: {path}\n{body}{_END}"


def update_file(path: str, old: str, new: str, current: bytes | None) -> str:
    """The patch replacing the lines ``old`` with the lines ``new`` in ``path``.

    ``current`` is the file's bytes now (None when it does not exist), read
    only to tell whether ``old`` covers whole lines where it occurs.

    Raises:
        Inexpressible: see the module's rules for Edit.
    """
    _check_path(path)
    if not old:
        raise Inexpressible("an apply_patch Update File needs lines to replace, not ''")
    if "\r" in old or "\r" in new:
        raise Inexpressible("an apply_patch line cannot hold a carriage return")
    whole = old.endswith("\n")
    if new and new.endswith("\n") != whole:
        raise Inexpressible(
            "an apply_patch Update File replaces whole lines: old_string and new_string must "
            "both end with \\n or neither"
        )
    if not whole and not new:
        raise Inexpressible(
            "an apply_patch Update File cannot empty a line while keeping its line feed"
        )
    if current is not None:
        _check_whole_lines(current.decode("utf-8", "surrogateescape"), old)
    old_lines = (old[:-1] if whole else old).split("\n")
    new_lines = [] if not new else (new[:-1] if whole else new).split("\n")
    body = "".join(f"-{line}\n" for line in old_lines) + "".join(f"+{line}\n" for line in new_lines)
    return f"{_BEGIN}*** Update File: {path}\n@@\n{body}{_END}"


def _check_path(path: str) -> None:
    if not path or "\n" in path or "\r" in path:
        raise Inexpressible("an apply_patch file name is one line")


def _check_whole_lines(text: str, old: str) -> None:
    start = text.find(old)
    while start != -1:
        end = start + len(old)
        starts_line = start == 0 or text[start - 1] == "\n"
        ends_line = old.endswith("\n") or end == len(text) or text[end] in "\r\n"
        if not (starts_line and ends_line):
            raise Inexpressible(
                "apply_patch replaces whole lines; old_string covers part of a line of the file"
            )
        start = text.find(old, start + 1)
