"""Claude Code's stream-json stdout, read for what its next request does not carry.

``claude -p --output-format stream-json --verbose`` writes one JSON record a
line. The ``user`` records hold each turn's ``tool_result`` blocks and, for
a built-in tool, its structured result (``tool_use_result``: protocol v1's
``outcome.output``); the final ``result`` record holds what the CLI said
last. ``StreamJson`` is the ``transcript`` the Claude Code definitions name
(``conformance.peers.agent.pieces.Transcript``): the agent session feeds it
every line from a reader thread. When the CLI ends the conversation after a
turn (a hook's ``continue: false`` does), that turn's results are read from
here, since no next request comes.
"""

from __future__ import annotations

import collections
import contextlib
import json
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any, Final

__all__ = ["StreamJson", "clean_result"]

_KEEP_OTHER: Final = 8
_LINE_KEEP: Final = 2000


def clean_result(block: Mapping[str, Any]) -> dict[str, Any]:
    """A tool_result block as protocol v1 carries it: no cache_control, is_error always there."""
    return {
        "type": "tool_result",
        "tool_use_id": block.get("tool_use_id"),
        "content": block.get("content", ""),
        "is_error": bool(block.get("is_error", False)),
    }


class StreamJson:
    """The tool_result blocks, structured results and final record of one CLI process."""

    def __init__(self) -> None:
        self._blocks: dict[str, dict[str, Any]] = {}
        self._structured: dict[str, Any] = {}
        self._other: collections.deque[str] = collections.deque(maxlen=_KEEP_OTHER)
        self._changed = threading.Condition()

    def feed(self, line: str) -> None:
        """Take one stdout line: a ``user`` record's results, else kept for last words."""
        try:
            record = json.loads(line)
        except ValueError:
            return
        if not isinstance(record, dict) or record.get("type") != "user":
            self._other.append(line[:_LINE_KEEP])
            return
        content = (record.get("message") or {}).get("content")
        if not isinstance(content, list):
            return
        with self._changed:
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    tool_use_id = str(block.get("tool_use_id"))
                    self._blocks.setdefault(tool_use_id, clean_result(block))
                    if "tool_use_result" in record:
                        self._structured[tool_use_id] = record["tool_use_result"]
            self._changed.notify_all()

    def results(self, ids: Sequence[str], wait: float) -> dict[str, Mapping[str, Any]]:
        deadline = time.monotonic() + wait
        with self._changed:
            while not all(i in self._blocks for i in ids):
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._changed.wait(left)
            return {i: self._blocks[i] for i in ids if i in self._blocks}

    def structured(self, ids: Sequence[str]) -> dict[str, Any]:
        with self._changed:
            return {i: self._structured[i] for i in ids if i in self._structured}

    def last_words(self) -> str | None:
        """The result text of the final ``result`` record, else the last other lines."""
        other = list(self._other)
        for line in reversed(other):
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                if isinstance(record, dict) and record.get("type") == "result":
                    return f"its result was {str(record.get('result'))[:500]!r}"
        if not other:
            return None
        return "its last stream-json lines: " + "".join(other)[-1500:]
