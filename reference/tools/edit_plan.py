"""The pure part of Edit: where ``old_string`` is and what the file becomes.

Used twice with the same inputs, by ``validate_input`` (to refuse early) and by
``call()`` on the text it re-read inside the critical section, so both phases
decide identically.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from reference import errors, text

_LONE_LF: Final = re.compile(r"(?<!\r)\n")


@dataclass(frozen=True, slots=True, kw_only=True)
class EditPlan:
    """The replacements, as ``(start, end, text)`` spans of the LF-normalized file."""

    spans: tuple[tuple[int, int, str], ...]
    new_text: str  # LF text of the whole file after the edit

    @property
    def matches(self) -> int:
        return len(self.spans)


def normalize_new_string(new_string: str, file_path: str) -> str:
    """EDIT-WS-1 applied to ``new_string``; its ``\r\n`` stay (EDIT-MATCH-1)."""
    if text.keeps_trailing_whitespace(file_path):
        return new_string
    return text.strip_trailing_whitespace(new_string)


def _find_all(haystack: str, needle: str) -> list[int]:
    """Start offsets of the non-overlapping occurrences of ``needle``."""
    found: list[int] = []
    start = haystack.find(needle)
    while start != -1:
        found.append(start)
        start = haystack.find(needle, start + len(needle))
    return found


def _locate(file_lf: str, old: str) -> tuple[list[int], bool]:
    """Exact matches, else quote-normalized ones (EDIT-QUOTE-1); flag says which."""
    exact = _find_all(file_lf, old)
    if exact:
        return exact, False
    return _find_all(text.normalize_quotes(file_lf), text.normalize_quotes(old)), True


def plan_edit(
    file_lf: str, old_string: str, new_string: str, *, replace_all: bool, file_path: str
) -> EditPlan:
    """Compute the edit on LF text.

    Raises:
        StringNotFoundError: not found even after normalization (EDIT-VALIDATE-1 code 8).
        MultipleMatchesError: several matches without ``replace_all`` (EDIT-VALIDATE-1 code 9).
    """
    old = old_string  # EDIT-MATCH-1: as given, so a \r\n in it never matches LF text
    new = normalize_new_string(new_string, file_path)
    if old == "":
        return EditPlan(spans=((0, len(file_lf), new),), new_text=new)  # EDIT-CREATE-1
    starts, normalized = _locate(file_lf, old)
    if not starts:  # EDIT-DESANITIZE-1
        desanitized, applied = text.desanitize(old)
        if applied:  # exactly only: 2.1.88 does not also normalize quotes here
            starts, normalized = _find_all(file_lf, desanitized), False
            if starts:
                old, new = desanitized, text.apply_replacements(new, applied)
    if not starts:
        raise errors.StringNotFoundError(
            f"String to replace not found in file.\nString: {old_string}"
        )
    if len(starts) > 1 and not replace_all:  # EDIT-UNIQUE-1
        raise errors.MultipleMatchesError(
            f"Found {len(starts)} matches of the string to replace, but replace_all is false. "
            "To replace all occurrences, set replace_all to true. To replace only one "
            "occurrence, please provide more context to uniquely identify the instance.\n"
            f"String: {old_string}"
        )
    spans = tuple(
        (start, start + len(old), text.restore_quote_style(new, file_lf[start : start + len(old)]))
        if normalized  # the file's own text at that place decides its quote style
        else (start, start + len(old), new)
        for start in starts
    )
    return EditPlan(spans=spans, new_text=_splice(file_lf, spans))


def _splice(original: str, spans: tuple[tuple[int, int, str], ...]) -> str:
    pieces: list[str] = []
    cursor = 0
    for start, end, replacement in spans:
        pieces.extend((original[cursor:start], replacement))
        cursor = end
    pieces.append(original[cursor:])
    return "".join(pieces)


def apply_to_original(original: str, plan: EditPlan) -> str:
    """EDIT-EOL-1: the whole edited LF text takes the file's style (TEXT-EOL-1).

    In a CRLF file every ``\n`` not already preceded by ``\r`` becomes
    ``\r\n``; in an LF file the LF text is written as it is (a ``\r\n`` the
    model put in ``new_string`` included).
    """
    if not text.is_crlf(original):
        return plan.new_text
    return _LONE_LF.sub("\r\n", plan.new_text)
