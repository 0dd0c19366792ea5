"""Result size and persistence of large results (SPEC.md, section 7)."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from typing import Final

from reference.tool import ResultContent

PREVIEW_CHARS: Final = 2000  # RES-PREVIEW-1
_PLAIN_ID: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")  # RES-PERSIST-3


def result_file_name(tool_use_id: str) -> str:
    """RES-PERSIST-3: the file name of a persisted result; the id never names a path.

    An id of 1 to 64 characters from ``[A-Za-z0-9_-]`` is kept (``<id>.txt``);
    any other id (a ``/``, ``..``, a NUL, a surrogate, 300 characters) becomes
    ``sha256.<hex>.txt``, the SHA-256 of its UTF-8 bytes (a lone surrogate
    encoded as ``surrogatepass`` does). The ``.`` after ``sha256`` is outside
    the kept alphabet, so the two forms never collide.
    """
    if _PLAIN_ID.fullmatch(tool_use_id):
        return f"{tool_use_id}.txt"
    digest = hashlib.sha256(tool_use_id.encode("utf-8", "surrogatepass")).hexdigest()
    return f"sha256.{digest}.txt"


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
    """RES-PERSIST-1: write the full text; return (preview content, absolute path).

    RES-PERSIST-3: the name comes from ``result_file_name``, and the text is
    written to a temporary file in the directory and renamed over the name, so
    a symlink planted at the name is replaced, never followed.
    """
    directory = os.path.abspath(os.path.join(session_dir, "tool-results"))
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, result_file_name(tool_use_id))
    full = text_of(content)
    fd, tmp = tempfile.mkstemp(prefix=".result.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogatepass") as handle:
            handle.write(full)
        os.replace(tmp, path)  # RES-PERSIST-3: the entry is replaced, a link not followed
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise
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
