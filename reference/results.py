"""Result size and persistence of large results (SPEC.md, section 7)."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Mapping
from typing import Any, Final

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


OUTPUT_SLACK_CHARS: Final = 65_536  # RES-OUTPUT-1
OUTPUT_STRING_CHARS: Final = 2_000  # RES-OUTPUT-1: a string's share of the summary
OUTPUT_CAP_CHARS: Final = 4_194_304  # RES-OUTPUT-1: the most it holds, whatever the model got


def _model_chars(content: ResultContent) -> int:
    """RES-OUTPUT-1: the characters of what the model got, image and document data included."""
    if isinstance(content, str):
        return len(content)
    total = 0
    for block in content:
        total += len(str(block.get("text", "")))
        source = block.get("source")
        if isinstance(source, dict):
            total += len(str(source.get("data", "")))
    return total


def _chars_over(value: object, budget: int) -> int:
    """The characters of ``value``'s strings (keys and items cost one each), or past ``budget``.

    Stops as soon as the count passes ``budget``: the check costs at most what
    is allowed, never what the output holds.
    """
    stack = [value]
    total = 0
    while stack and total <= budget:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, dict):
            total += len(item)
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            total += len(item)
            stack.extend(item)
    return total


class _Cutter:
    """RES-OUTPUT-1: a copy of the output whose strings and lists fit in a budget."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.cut = 0

    def copy(self, value: Any) -> Any:
        if isinstance(value, str):
            keep = max(0, min(len(value), OUTPUT_STRING_CHARS, self.budget))
            self.budget -= keep
            self.cut += len(value) - keep
            return value[:keep]
        if isinstance(value, dict):
            self.budget -= len(value)
            return {key: self.copy(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            kept: list[Any] = []
            for index, item in enumerate(value):
                if self.budget <= 0:  # the rest is left out whole, and only counted
                    rest = value[index:]
                    self.cut += sum(
                        len(x) if isinstance(x, str) else _chars_over(x, 1 << 62) for x in rest
                    )
                    break
                self.budget -= 1
                kept.append(self.copy(item))
            return kept
        return value


def bound_output(
    output: Mapping[str, Any] | None, content: ResultContent
) -> tuple[Mapping[str, Any] | None, int | None]:
    """RES-OUTPUT-1: the structured output as the protocol carries it, and what was cut.

    Unchanged (with ``None``) when its strings hold at most the characters of
    what the model got plus ``OUTPUT_SLACK_CHARS``, and at most
    ``OUTPUT_CAP_CHARS`` in all; otherwise a summary of the
    same shape, every string cut to its first ``OUTPUT_STRING_CHARS``
    characters and lists to their first items, within ``OUTPUT_SLACK_CHARS``,
    with the number of characters left out.
    """
    if output is None:
        return None, None
    allowed = min(_model_chars(content) + OUTPUT_SLACK_CHARS, OUTPUT_CAP_CHARS)
    if _chars_over(output, allowed) <= allowed:
        return output, None
    cutter = _Cutter(OUTPUT_SLACK_CHARS)
    summary = cutter.copy(dict(output))
    return summary, cutter.cut
