"""Result size and persistence of large results (SPEC.md, section 7)."""

from __future__ import annotations

import os
from typing import Final

from reference.tool import ResultContent

PREVIEW_CHARS: Final = 2000  # RES-PREVIEW-1


def text_of(content: ResultContent) -> str:
    """The text a result carries: the string, or its text blocks joined by newlines."""
    if isinstance(content, str):
        return content
    return "\n".join(str(block.get("text", "")) for block in content if block.get("type") == "text")


def size_of(content: ResultContent) -> int:
    """RES-SIZE-1: code points of the text; image and document blocks count nothing."""
    if isinstance(content, str):
        return len(content)
    return sum(len(str(block.get("text", ""))) for block in content if block.get("type") == "text")


def persist(content: ResultContent, *, session_dir: str, tool_use_id: str) -> tuple[str, str]:
    """RES-PERSIST-1: write the full text; return (preview content, absolute path)."""
    directory = os.path.join(session_dir, "tool-results")
    os.makedirs(directory, exist_ok=True)
    path = os.path.abspath(os.path.join(directory, f"{tool_use_id}.txt"))
    full = text_of(content)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(full)
    preview = (
        "<persisted-output>\n"
        f"Output too large ({size_of(content)} characters). Full output saved to: {path}\n\n"
        f"Preview (first {PREVIEW_CHARS} characters):\n{full[:PREVIEW_CHARS]}\n...\n"
        "</persisted-output>"
    )
    return preview, path


def with_text_blocks(content: ResultContent, blocks: list[dict[str, str]]) -> ResultContent:
    """HOOK-CONTEXT-1: append text blocks; a string content becomes one text block first."""
    if not blocks:
        return content
    head: list[dict[str, object]] = (
        [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    )
    return [*head, *blocks]
