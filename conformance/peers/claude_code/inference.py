"""The one outcome field the Claude Code connector infers from message text.

Protocol v1's ``outcome.dedup`` says a Read answered with the unchanged-file
stub (READ-DEDUP-1). Claude Code reports no outcome, but its stub has a fixed
text; a tool_result whose text starts with one of ``DEDUP_STUB_PREFIXES`` is
reported as ``dedup: true``. No other field is inferred: stages, validateInput
codes and error names are ``unreported`` (``adapter.UNREPORTED``), never
guessed from wording. ``hello`` names this table under ``inferences``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["DEDUP_STUB_PREFIXES", "is_dedup_stub"]

DEDUP_STUB_PREFIXES: Final = ("File unchanged since last read.",)
"""Texts of the unchanged-re-read stub, as measured in 2.1.88."""


def is_dedup_stub(block: Mapping[str, Any]) -> bool:
    """True when a successful tool_result's text is Claude Code's unchanged-file stub."""
    if block.get("is_error"):
        return False
    content = block.get("content")
    if isinstance(content, list):
        content = "\n".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, Mapping) and b.get("type") == "text"
        )
    return isinstance(content, str) and content.startswith(DEDUP_STUB_PREFIXES)
