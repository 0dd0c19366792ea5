"""Structured patches: unified-diff hunks as data (PATCH-1)."""

from __future__ import annotations

import difflib
from typing import TypedDict

from reference.text import to_lf


class Hunk(TypedDict):
    oldStart: int
    oldLines: int
    newStart: int
    newLines: int
    lines: list[str]


def _lines(text: str) -> list[str]:
    """Lines as a unified diff sees them: a final newline ends the last line."""
    lines = to_lf(text).split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def structured_patch(old: str, new: str, *, context: int = 3) -> list[Hunk]:
    """PATCH-1: hunks of the diff of two texts, with ``\\r\\n`` read as ``\\n``."""
    old_lines = _lines(old)
    new_lines = _lines(new)
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    hunks: list[Hunk] = []
    for group in matcher.get_grouped_opcodes(context):
        first, last = group[0], group[-1]
        lines: list[str] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines.extend(" " + line for line in old_lines[i1:i2])
                continue
            lines.extend("-" + line for line in old_lines[i1:i2])
            lines.extend("+" + line for line in new_lines[j1:j2])
        old_count = last[2] - first[1]
        new_count = last[4] - first[3]
        hunks.append(
            Hunk(
                oldStart=first[1] + 1 if old_count else first[1],
                oldLines=old_count,
                newStart=first[3] + 1 if new_count else first[3],
                newLines=new_count,
                lines=lines,
            )
        )
    return hunks
