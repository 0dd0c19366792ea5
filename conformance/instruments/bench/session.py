"""One benchmark session against an implementation, through protocol v1.

Times are wall-clock round trips seen by the runner (``perf_counter_ns``
around ``call``): they include the transport, which is the same for every
implementation measured through the same connector kind. Sizes are what the
model receives: the text of ``outcome.received`` where a connector hands it
back (an agent's result exactly as its next model request carried it,
PROTO-OUTCOME-1), else of the ``tool_result`` content (RES-BLOCK-1); its
UTF-8 bytes, and its cl100k_base tokens as the reference's counter counts
them (``reference.tokens``), whatever the implementation's own model reads
with.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.errors import AdapterUnsupported
from conformance.wire.connector import Connector
from conformance.wire.protocol import check_call_response, check_ok
from reference.tokens import ENCODING_NAME, exact_count

__all__ = [
    "ENCODING_NAME",
    "Answer",
    "BenchSession",
    "NotApplicable",
    "count_tokens",
    "received_text",
    "result_text",
]


def count_tokens(text: str) -> int:
    """The cl100k_base count of ``text``, special tokens read as plain text (TOK-EXACT-1)."""
    return exact_count(text).tokens


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


def received_text(response: Mapping[str, Any]) -> str:
    """What the model received for one call's answer: ``outcome.received``, else the content."""
    received = response["outcome"].get("received")
    return received if isinstance(received, str) else result_text(response["tool_result"])


class NotApplicable(Exception):
    """The implementation cannot be given the call (PROTO-UNSUPPORTED-1): a tool it lacks."""


@dataclass(frozen=True, slots=True)
class Answer:
    """One call's answer, timed and sized."""

    seconds: float
    stage: str
    error_name: str | None
    dedup: bool
    text: str
    is_error: bool = False

    @property
    def bytes(self) -> int:
        return len(self.text.encode("utf-8"))

    @property
    def tokens(self) -> int:
        return count_tokens(self.text)


class BenchSession:
    """A fresh protocol session in its own sandbox ``root`` (see ``begin``).

    ``home`` is the session's home (its ``env.HOME``), ``root`` unless given;
    ``unreported`` the outcome fields the implementation's hello calls
    unreported (PROTO-UNREPORTED-1), which its answers may then lack.
    """

    def __init__(
        self,
        connector: Connector,
        root: Path,
        session_dir: Path,
        *,
        home: Path | None = None,
        unreported: frozenset[str] = frozenset(),
    ) -> None:
        self.connector = connector
        self.root = root
        self.session_dir = session_dir
        self.home = home or root
        self.unreported = unreported
        self._ids = 0

    def begin(self, settings: Mapping[str, Any] | None = None) -> None:
        """Start a session: the user answers every permission ask with allow."""
        session = {
            "root": str(self.root),
            "cwd": str(self.root),
            "env": {"HOME": str(self.home)},
            "settings": {"userSettings": dict(settings or {})},
            "prompt": "allow",
            "test_tools": False,
            "session_dir": str(self.session_dir),
        }
        check_ok(self.connector.request({"cmd": "begin", "session": session}), "begin")

    def end(self) -> None:
        check_ok(self.connector.request({"cmd": "end"}), "end")

    def call(self, name: str, tool_input: Mapping[str, Any]) -> Answer:
        """One tool_use through the whole pipeline, timed from request to answer.

        Raises:
            NotApplicable: the implementation answered ``unsupported``.
        """
        self._ids += 1
        tool_use = {
            "type": "tool_use",
            "id": f"toolu_bench_{self._ids:06d}",
            "name": name,
            "input": dict(tool_input),
        }
        started = time.perf_counter_ns()
        try:
            response = self.connector.request({"cmd": "call", "tool_use": tool_use})
        except AdapterUnsupported as exc:
            raise NotApplicable(str(exc)) from exc
        seconds = (time.perf_counter_ns() - started) / 1e9
        check_call_response(response, self.unreported)
        outcome = response["outcome"]
        return Answer(
            seconds=seconds,
            stage=str(outcome.get("stage")),
            error_name=outcome.get("error_name"),
            dedup=outcome.get("dedup") is True,
            text=received_text(response),
            is_error=response["tool_result"]["is_error"] is True,
        )

    def read(self, path: Path, **ranges: int) -> Answer:
        return self.call("Read", {"file_path": str(path), **ranges})
