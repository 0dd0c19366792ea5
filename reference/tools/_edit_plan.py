"""The pure part of Edit: where ``old_string`` is and what the file becomes.

Used twice with the same inputs, by ``validate_input`` (to refuse early) and by
``call()`` on the text it re-read inside the critical section, so both phases
decide identically.
"""

from __future__ import annotations

from dataclasses import dataclass

from reference import errors, text


@dataclass(frozen=True, slots=True, kw_only=True)
class EditPlan:
    new_text: str  # LF text of the whole file after the edit
    matches: int


def normalize_new_string(new_string: str, file_path: str) -> str:
    """EDIT-MATCH-1 and EDIT-WS-1 applied to ``new_string``."""
    new_string = text.to_lf(new_string)
    if file_path.lower().endswith((".md", ".mdx")):
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
        StringNotFoundError: not found even after normalization (code 8).
        MultipleMatchesError: several matches without ``replace_all`` (code 9).
    """
    old = text.to_lf(old_string)
    new = normalize_new_string(new_string, file_path)
    if old == "":
        return EditPlan(new_text=new, matches=0)  # EDIT-CREATE-1: empty file gets new_string
    starts, normalized = _locate(file_lf, old)
    if not starts:  # EDIT-DESANITIZE-1
        desanitized, applied = text.desanitize(old)
        if applied:
            starts, normalized = _locate(file_lf, desanitized)
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
    pieces: list[str] = []
    cursor = 0
    for start in starts:
        end = start + len(old)
        actual = file_lf[start:end]  # the file's own text, curly quotes included
        replacement = text.restore_quote_style(new, actual) if normalized else new
        pieces.extend((file_lf[cursor:start], replacement))
        cursor = end
    pieces.append(file_lf[cursor:])
    return EditPlan(new_text="".join(pieces), matches=len(starts))
