"""The pure-Python Grep engine: ripgrep's results without ``rg`` (GREP-ENGINE-1).

It walks the search directory with ripgrep's selection (``grep.search``),
decodes each file as ``rg`` does (a UTF-8 byte-order mark dropped, UTF-16
with a byte-order mark transcoded, bad UTF-8 replaced), skips files that
hold a NUL byte, and matches the pattern translated from Rust's syntax
(``grep.pattern``) line by line, or over the whole text in multiline mode
(GREP-MATCH-1).

GREP-TIMEOUT-2: every match it makes, of the pattern, of a ``glob``, of an
ignore file's line or of a type's globs, gets what is left of one
``Deadline``, and the search runs ``within`` it, so the answer comes at the
limit on the wall clock too.
"""

from __future__ import annotations

import codecs
import os
import stat as statmod
from collections.abc import Iterator
from typing import Any

from reference import errors
from reference.abort import AbortSignal
from reference.deadline import Deadline, within
from reference.gitignore import Chain
from reference.tools.grep.pattern import compile_pattern
from reference.tools.grep.search import (
    FileHits,
    SearchRequest,
    Selection,
)

_UTF16_BOMS = ((codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
_CHUNK = 1 << 20


def search(
    request: SearchRequest, abort: AbortSignal, deadline: Deadline | None = None
) -> list[FileHits]:
    """Every file with a match, in no particular order, within GREP-TIMEOUT-1's limit.

    ``deadline`` (a fresh one by default) bounds the whole search, on the wall
    clock too (GREP-TIMEOUT-2: ``within`` it).
    """
    bound = Deadline("Grep") if deadline is None else deadline
    return within(bound, lambda: _bounded_search(request, abort, bound))


def _bounded_search(
    request: SearchRequest, abort: AbortSignal, deadline: Deadline
) -> list[FileHits]:
    try:
        return _search(request, abort, deadline)
    except TimeoutError:  # a regex call ran out of the time it was given
        raise deadline.expired() from None


def _search(request: SearchRequest, abort: AbortSignal, deadline: Deadline) -> list[FileHits]:
    regex = compile_regex(request)
    # A file with no match anywhere in its text has none in a line either, unless the
    # pattern holds \A or \Z (start and end of a line here, of the text there).
    prefilter = not request.multiline and "\\A" not in regex.pattern and "\\Z" not in regex.pattern
    hits: list[FileHits] = []
    for path in files(request, abort, deadline):
        deadline.left()  # GREP-TIMEOUT-1: checked between files too
        text = read_text(path)
        if text is None or (prefilter and deadline.search(regex, text) is None):
            continue
        lines = _lines(text)
        starts: int | None = None
        if request.multiline:
            numbers, at_end = multiline_matches(regex, text, lines, deadline)
            starts = match_start_lines(regex, text, lines, deadline)  # GREP-COUNT-1
        else:
            numbers, at_end = line_matches(regex, lines, deadline), False
        if numbers:
            shown = with_context(numbers, lines, request.before, request.after, at_end=at_end)
            hits.append(FileHits(path, shown, count=starts))
    return hits


def compile_regex(request: SearchRequest) -> Any:
    """GREP-ERROR-1: Rust's syntax checked and translated; a refusal is InvalidPatternError."""
    try:
        return compile_pattern(
            request.pattern, ignore_case=request.ignore_case, multiline=request.multiline
        )
    except errors.RegexError as exc:
        raise errors.InvalidPatternError(f"Invalid regex pattern: {exc}") from exc


def files(request: SearchRequest, abort: AbortSignal, deadline: Deadline) -> Iterator[str]:
    """GREP-FILES-1: the file searched alone, or every selected regular file below."""
    if not request.target_is_dir:
        if _is_regular(request.target):  # FILE-PATH-4
            yield request.target
        return
    selection = Selection.build(request, request.target, deadline)
    chain = selection.ignores.chain_for(request.target)
    yield from _walk(selection, request.target, "", chain, abort)


def _walk(
    selection: Selection, directory: str, prefix: str, chain: Chain, abort: AbortSignal
) -> Iterator[str]:
    if abort.is_set():
        raise errors.CallAbortedError("aborted")
    selection.deadline.left()  # GREP-TIMEOUT-1: checked between directories too
    try:
        with os.scandir(directory) as listing:
            entries = list(listing)
    except OSError:
        return
    below = []
    for entry in entries:
        name = entry.name
        rel = f"{prefix}/{name}" if prefix else name
        try:
            if entry.is_symlink():
                continue  # GREP-FILES-1: no symlink is followed
            is_dir = entry.is_dir(follow_symlinks=False)
            if not is_dir and not entry.is_file(follow_symlinks=False):
                continue  # FILE-PATH-4: FIFOs, sockets and devices are never opened
        except OSError:
            continue
        if not selection.allows(chain, entry.path, rel, name, is_dir):
            continue
        if is_dir:
            below.append((entry.path, rel))
        else:
            yield entry.path
    for path, rel in below:
        names = _listing(path)
        yield from _walk(selection, path, rel, selection.ignores.extend(chain, path, names), abort)


def _listing(directory: str) -> set[str] | None:
    try:
        return set(os.listdir(directory))
    except OSError:
        return None


def _is_regular(path: str) -> bool:
    try:
        return statmod.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def read_text(path: str) -> str | None:
    """The file's text as ``rg`` sees it, or None to skip it (unreadable, or holds NUL).

    Read in chunks so that a binary file is given up at its first NUL byte.
    """
    chunks: list[bytes] = []
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(_CHUNK):
                if not chunks and chunk.startswith(tuple(bom for bom, _ in _UTF16_BOMS)):
                    chunks.append(chunk + handle.read())  # UTF-16: NUL bytes are text
                    break
                if b"\x00" in chunk:
                    return None  # GREP-FILES-1: a file holding a NUL byte is binary
                chunks.append(chunk)
    except OSError:
        return None
    data = b"".join(chunks)
    for bom, encoding in _UTF16_BOMS:
        if data.startswith(bom):
            text = data[len(bom) :].decode(encoding, errors="replace")
            return None if "\x00" in text else text
    if b"\x00" in data:
        return None  # GREP-FILES-1: a file holding a NUL byte is binary
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    return data.decode("utf-8", errors="replace")


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # a final newline ends the last line, it starts none
    return lines


def line_matches(regex: Any, lines: list[str], deadline: Deadline | None = None) -> list[int]:
    """GREP-MATCH-1: the numbers of the lines the pattern matches, one line at a time.

    GREP-TIMEOUT-1: each line's search gets what is left of ``deadline``.
    """
    if deadline is None:
        return [number for number, line in enumerate(lines, 1) if regex.search(line)]
    search = deadline.search
    return [number for number, line in enumerate(lines, 1) if search(regex, line)]


def multiline_matches(
    regex: Any, text: str, lines: list[str], deadline: Deadline | None = None
) -> tuple[list[int], bool]:
    """GREP-MATCH-1 with ``multiline``: the numbers of every line a match touches.

    The flag says whether the pattern also matched (empty) after the final
    newline: no line holds that match, but ``rg`` shows the lines before it
    as context, and so does this engine.
    """
    if not lines:
        return [], False
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    end_of_text = starts[-1] + len(lines[-1])
    matched: set[int] = set()
    first = 0
    timeout = None if deadline is None else deadline.left()  # GREP-TIMEOUT-1
    for match in regex.finditer(text, timeout=timeout, concurrent=True):
        start, end = match.span()
        if start > end_of_text:
            return sorted(matched), True  # empty, after the final newline
        first = _line_at(starts, start, first)
        last = _line_at(starts, end - 1, first) if end > start else first
        matched.update(range(first + 1, last + 2))
    return sorted(matched), False


def match_start_lines(
    regex: Any, text: str, lines: list[str], deadline: Deadline | None = None
) -> int:
    """GREP-COUNT-1 with ``multiline``: how many lines a match starts on (ripgrep's ``-c -U``)."""
    if not lines:
        return 0
    end_of_text = len(text) if not text.endswith("\n") else len(text) - 1
    found: set[int] = set()
    timeout = None if deadline is None else deadline.left()  # GREP-TIMEOUT-1
    for match in regex.finditer(text, timeout=timeout, concurrent=True):
        if match.start() > end_of_text:
            break
        found.add(text.count("\n", 0, match.start()))
    return len(found)


def _line_at(starts: list[int], offset: int, hint: int) -> int:
    """The index of the line holding ``offset`` (searching forward from ``hint``)."""
    index = hint
    while index + 1 < len(starts) and starts[index + 1] <= offset:
        index += 1
    return index


def with_context(
    numbers: list[int], lines: list[str], before: int, after: int, *, at_end: bool = False
) -> list[tuple[int, str, bool]]:
    """GREP-CONTENT-1: the matching lines and up to ``before``/``after`` lines around each.

    ``at_end``: a match after the last line, whose ``before`` lines are context too.
    """
    if not (before or after):
        return [(n, lines[n - 1], True) for n in numbers]
    matched = set(numbers)
    shown: set[int] = set()
    for number in [*numbers, len(lines) + 1] if at_end else numbers:
        shown.update(range(max(1, number - before), min(len(lines), number + after) + 1))
    return [(n, lines[n - 1], n in matched) for n in sorted(shown)]
