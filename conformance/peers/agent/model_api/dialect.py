"""The interface every model API dialect implements, and helpers they share.

A dialect knows one API's wire shapes: which paths it serves (``route``),
how a request lists the tools offered and the tool results, and how an
assistant turn is written back, whole (``respond``) or as a stream of
server-sent-event frames (``stream``). The server (``server.ScriptedModel``)
does everything else: reading bounded bodies, telling main-loop requests
from side requests, holding a main request until the script answers it.
"""

from __future__ import annotations

import abc
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from conformance.peers.agent.model_api.turns import OfferedTool, ToolResult, Turn
from reference.tokens import exact_count  # the reference's cl100k_base counter

__all__ = ["Dialect", "Frame", "Route", "carried_text", "count_texts", "json_text", "texts_in"]


@dataclass(frozen=True, slots=True)
class Route:
    """What a request path asks for: a generation (streamed or not), a token count, a listing."""

    kind: Literal["generate", "count", "models"]
    stream: bool = False


@dataclass(frozen=True, slots=True)
class Frame:
    """One piece of a streamed answer, written after a pause of ``pause`` seconds."""

    data: bytes
    pause: float = 0.0


class Dialect(abc.ABC):
    """One model API's wire shapes. Instances hold no state; one serves many requests."""

    name: ClassVar[str]
    """The dialect's name in peer definitions."""

    @abc.abstractmethod
    def route(self, method: str, path: str, query: Mapping[str, Sequence[str]]) -> Route | None:
        """What ``method path?query`` asks for, or None when this API has no such endpoint."""

    @abc.abstractmethod
    def offered_tools(self, body: Mapping[str, Any]) -> list[OfferedTool]:
        """The tools a generation request offers its model, in the order given."""

    @abc.abstractmethod
    def tool_results(self, body: Mapping[str, Any]) -> list[ToolResult]:
        """Every tool result the request's conversation carries, oldest first."""

    @abc.abstractmethod
    def respond(self, body: Mapping[str, Any], turn: Turn, response_id: str) -> dict[str, Any]:
        """The whole (non-streamed) answer carrying ``turn``."""

    @abc.abstractmethod
    def stream(self, body: Mapping[str, Any], turn: Turn, response_id: str) -> Iterator[Frame]:
        """The streamed answer carrying ``turn``, frame by frame."""

    def wants_stream(self, body: Mapping[str, Any], route: Route) -> bool:
        """Whether the answer is streamed: by the path, else by the body's ``stream`` flag."""
        return route.stream or body.get("stream") is True

    def side_text(self, body: Mapping[str, Any], default: str) -> str:
        """The text a side request gets (a dialect may need another shape, such as JSON)."""
        return default

    def count(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """The answer to a token-count request."""
        raise NotImplementedError(f"{self.name} counts no tokens")

    def models(self, model: str) -> dict[str, Any]:
        """The answer to a model listing."""
        raise NotImplementedError(f"{self.name} lists no models")

    @abc.abstractmethod
    def error(self, status: int, message: str) -> dict[str, Any]:
        """An error body in this API's shape."""


def texts_in(value: Any) -> list[str]:
    """Every string of a JSON value, depth first (what a token count counts)."""
    found: list[str] = []
    todo: list[Any] = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, Mapping):
            todo.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            todo.extend(reversed(item))
    return found


def count_texts(texts: Sequence[str]) -> int:
    """cl100k_base tokens of ``texts`` joined by newlines, as the reference counts."""
    return exact_count("\n".join(texts)).tokens if texts else 0


def json_text(value: Any) -> str:
    """Compact JSON, as APIs put tool arguments into strings."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def carried_text(content: Any, text_types: frozenset[str]) -> str | None:
    """What a tool result's list of parts carries to the model, as one text; None for a string.

    Parts of ``text_types`` give their ``text``, end to end with nothing
    added; any other part (an image, a file) gives its compact JSON, the bytes
    the request spends on it.
    """
    if not isinstance(content, list):
        return None
    pieces: list[str] = []
    for part in content:
        if isinstance(part, Mapping) and part.get("type") in text_types:
            pieces.append(str(part.get("text", "")))
        else:
            pieces.append(json_text(part))
    return "".join(pieces)
