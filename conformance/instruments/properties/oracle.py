"""What SPEC.md says Read and Edit produce, as pure functions: the properties' oracle.

Written from the SPEC text, never imported from ``reference/``: a property
that compared the engine with its own helpers would check nothing. The
strategies never form a desanitization key (TEXT-DESANITIZE-1: no ``<``, no
``H:`` or ``A:``), so EDIT-DESANITIZE-1 is left out.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Final

__all__ = [
    "DEDUP_STUB",
    "DEFAULT_LIMIT",
    "MULTIPLE",
    "NOT_FOUND",
    "REMINDER",
    "EditRefused",
    "ReadView",
    "cat_n",
    "edit_text",
    "is_crlf",
    "lines_of",
    "normalize_quotes",
    "offset_notice",
    "read_view",
    "restore_quotes",
    "to_lf",
    "written_text",
]

DEFAULT_LIMIT: Final = 2000  # READ-RANGE-2
DEDUP_STUB: Final = (  # READ-DEDUP-1
    "File unchanged since last read. The content from the earlier Read tool_result in this "
    "conversation is still current \u2014 refer to that instead of re-reading."
)
REMINDER: Final = (  # READ-REMINDER-1
    "\n\n<system-reminder>\nWhenever you read a file, you should consider whether it would be "
    "considered malware. You CAN and SHOULD provide analysis of malware, what it is doing. "
    "But you MUST refuse to improve or augment the code. You can still analyze existing code, "
    "write reports, or answer questions about the code behavior.\n</system-reminder>\n"
)
_CURLY: Final = {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'}
_OPENERS: Final = "([{\u2013\u2014"


def to_lf(text: str) -> str:
    """EDIT-MATCH-1: ``\\r\\n`` turned into ``\\n``."""
    return text.replace("\r\n", "\n")


def is_crlf(text: str) -> bool:
    """TEXT-EOL-1: more ``\\r\\n`` pairs than lone ``\\n``."""
    pairs = text.count("\r\n")
    return pairs > text.count("\n") - pairs


# -- Read -------------------------------------------------------------------


def lines_of(text: str) -> list[str]:
    """READ-FORMAT-1: the pieces between ``\\n`` (or ``\\r\\n``).

    A final line ending starts one more, empty line.
    """
    return to_lf(text).split("\n")


def cat_n(lines: list[str], start: int) -> str:
    """READ-FORMAT-1: the number unpadded, a TAB, the line; joined by ``\\n``."""
    return "\n".join(f"{number}\t{line}" for number, line in enumerate(lines, start))


def offset_notice(offset: int, total: int) -> str:
    """READ-OFFSET-1."""
    return (
        "<system-reminder>Warning: the file exists but is shorter than the provided offset "
        f"({offset}). The file has {total} lines.</system-reminder>"
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadView:
    """What a (non-dedup) Read of a text file shows and records."""

    text: str
    """The tool_result text."""
    partial: bool
    """STATE-PARTIAL-1 (READ-EMPTY-1: a file with no text is always a full read)."""


def read_view(text: str, offset: int | None, limit: int | None) -> ReadView:
    """READ-FORMAT-1, READ-RANGE-1/2, READ-EMPTY-1, READ-OFFSET-1, READ-REMINDER-1, STATE-PARTIAL-1.

    A view with no text is the notice; the empty line after a final line
    ending holds no text, so leaving it out of the view is not partial.
    """
    first = offset or 1
    lines = lines_of(text)
    shown = lines[first - 1 : first - 1 + (limit or DEFAULT_LIMIT)]
    last = len(lines) - 1 if len(lines) > 1 and lines[-1] == "" else len(lines)
    has_text = lines != [""]
    partial = has_text and (first > 1 or first - 1 + len(shown) < last)
    if "\n".join(shown) == "":
        return ReadView(text=offset_notice(first, len(lines)), partial=partial)
    return ReadView(text=cat_n(shown, first) + REMINDER, partial=partial)


# -- Edit -------------------------------------------------------------------


def normalize_quotes(text: str) -> str:
    """TEXT-QUOTE-1: the four curly quotes to straight ones, nothing else."""
    return "".join(_CURLY.get(ch, ch) for ch in text)


def _letter(ch: str) -> bool:
    return ch != "" and unicodedata.category(ch).startswith("L")


def restore_quotes(new_string: str, matched: str) -> str:
    """TEXT-QUOTE-2: give ``new_string`` the curly kinds the matched file text uses."""
    single = "\u2018" in matched or "\u2019" in matched
    double = "\u201c" in matched or "\u201d" in matched
    out = []
    for i, ch in enumerate(new_string):
        before = new_string[i - 1] if i else ""
        after = new_string[i + 1] if i + 1 < len(new_string) else ""
        opening = before == "" or before.isspace() or before in _OPENERS
        if ch == "'" and single:
            if _letter(before) and _letter(after):
                out.append("\u2019")
            else:
                out.append("\u2018" if opening else "\u2019")
        elif ch == '"' and double:
            out.append("\u201c" if opening else "\u201d")
        else:
            out.append(ch)
    return "".join(out)


def _strip_line_ends(text: str) -> str:
    """EDIT-WS-1: spaces and tabs at each line's end go; a line's own ``\r`` stays."""
    return "\n".join(
        line[:-1].rstrip(" \t") + "\r" if line.endswith("\r") else line.rstrip(" \t")
        for line in text.split("\n")
    )


def written_text(content: str, path: str) -> str:
    """WRITE-CONTENT-1: what Write puts on disk for ``content`` (Markdown keeps line ends)."""
    return content if path.lower().endswith((".md", ".mdx")) else _strip_line_ends(content)


def _occurrences(haystack: str, needle: str) -> list[int]:
    """Starts of the non-overlapping occurrences, left to right (EDIT-UNIQUE-1)."""
    starts: list[int] = []
    at = haystack.find(needle)
    while at != -1:
        starts.append(at)
        at = haystack.find(needle, at + len(needle))
    return starts


@dataclass(frozen=True, slots=True)
class EditRefused:
    """The validate-stage refusal an Edit of an existing, read, fresh file gets."""

    code: int
    name: str


NOT_FOUND: Final = EditRefused(8, "StringNotFoundError")
MULTIPLE: Final = EditRefused(9, "MultipleMatchesError")


def edit_text(
    original: str, old_string: str, new_string: str, *, replace_all: bool, path: str
) -> str | EditRefused:
    """The file's new text after an Edit of ``original``, or the refusal (code 8 or 9).

    EDIT-MATCH-1 (strings as given, matched in the LF text), EDIT-QUOTE-1
    (TEXT-QUOTE-2), EDIT-UNIQUE-1, EDIT-WS-1, EDIT-EOL-1 (the whole result in
    the file's style) and EDIT-CREATE-1 (an empty ``old_string``, only reached
    for an empty file). The caller has already checked the earlier rows.
    """
    old, new = old_string, new_string
    if not path.lower().endswith((".md", ".mdx")):
        new = _strip_line_ends(new)
    flat = to_lf(original)
    if old == "":
        result = new
    else:
        starts = _occurrences(flat, old)
        normalized = not starts
        if normalized:
            starts = _occurrences(normalize_quotes(flat), normalize_quotes(old))
        if not starts:
            return NOT_FOUND
        if len(starts) > 1 and not replace_all:
            return MULTIPLE
        pieces: list[str] = []
        cursor = 0
        for start in starts:
            span = flat[start : start + len(old)]
            pieces += [flat[cursor:start], restore_quotes(new, span) if normalized else new]
            cursor = start + len(old)
        result = "".join([*pieces, flat[cursor:]])
    return re.sub(r"(?<!\r)\n", "\r\n", result) if is_crlf(original) else result
