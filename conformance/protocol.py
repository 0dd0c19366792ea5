"""Adapter protocol v1 (shared/design/adapter-protocol.md): handshake and response shapes.

Connectors move JSON objects and check ``seq``; this module says what a
well-formed answer to each command looks like, so a malformed one is reported
as a protocol error instead of surfacing later as a confusing mismatch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from conformance.errors import ProtocolError, VersionMismatch

__all__ = [
    "PROTOCOL_VERSION",
    "Hello",
    "check_call_response",
    "check_message_response",
    "check_ok",
    "check_tools_response",
    "parse_hello",
]

PROTOCOL_VERSION: Final = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class Hello:
    """What an implementation said about itself in the handshake."""

    protocol: int
    implementation: Mapping[str, Any]
    features: frozenset[str]
    raw: Mapping[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """``name version`` of the implementation, for reports."""
        name = str(self.implementation.get("name", "?"))
        version = self.implementation.get("version")
        return f"{name} {version}" if version else name


def parse_hello(response: Mapping[str, Any]) -> Hello:
    """Validate the answer to ``hello``.

    Raises:
        VersionMismatch: the implementation speaks another protocol.
        ProtocolError: the answer is malformed.
    """
    protocol = response.get("protocol")
    if protocol != PROTOCOL_VERSION:
        raise VersionMismatch(PROTOCOL_VERSION, protocol)
    implementation = response.get("implementation", {})
    if not isinstance(implementation, Mapping):
        raise ProtocolError(f"hello: implementation must be an object, got {implementation!r}")
    features = response.get("features", [])
    if not isinstance(features, list) or not all(isinstance(f, str) for f in features):
        raise ProtocolError(f"hello: features must be a list of strings, got {features!r}")
    return Hello(
        protocol=PROTOCOL_VERSION,
        implementation=dict(implementation),
        features=frozenset(features),
        raw=dict(response),
    )


def check_ok(response: Mapping[str, Any], cmd: str) -> None:
    """``begin`` and ``end`` answer ``{"ok": true}``."""
    if response.get("ok") is not True:
        raise ProtocolError(f"{cmd}: expected ok: true, got {_brief(response)}")


def check_call_response(response: Mapping[str, Any]) -> None:
    """A ``call`` answer has a tool_result, an outcome and (optionally) events."""
    _check_result(response, "call")
    _check_events(response, "call")


def check_message_response(response: Mapping[str, Any], count: int) -> None:
    """A ``message`` answer has ``count`` results in order, a batch plan and events."""
    results = response.get("results")
    if not isinstance(results, list) or len(results) != count:
        raise ProtocolError(f"message: expected {count} results, got {_brief(results)}")
    for i, result in enumerate(results):
        if not isinstance(result, Mapping):
            raise ProtocolError(f"message: results[{i}] is not an object")
        _check_result(result, f"message: results[{i}]")
    batches = response.get("batches")
    if not isinstance(batches, list) or not all(isinstance(b, list) for b in batches):
        raise ProtocolError(f"message: batches must be a list of lists, got {_brief(batches)}")
    _check_events(response, "message")


def check_tools_response(response: Mapping[str, Any]) -> None:
    """A ``tools`` answer (extension PROTO-TOOLS-1) has ``tools`` and ``deferred`` lists."""
    for key in ("tools", "deferred"):
        if not isinstance(response.get(key), list):
            raise ProtocolError(f"tools: {key} must be a list, got {_brief(response.get(key))}")


def _check_result(response: Mapping[str, Any], where: str) -> None:
    result = response.get("tool_result")
    if not isinstance(result, Mapping) or result.get("type") != "tool_result":
        raise ProtocolError(
            f"{where}: tool_result must be a tool_result object, got {_brief(result)}"
        )
    content = result.get("content", "")
    if not isinstance(content, str | list):
        raise ProtocolError(f"{where}: tool_result.content must be a string or a list of blocks")
    outcome = response.get("outcome")
    if not isinstance(outcome, Mapping) or not isinstance(outcome.get("stage"), str):
        raise ProtocolError(
            f"{where}: outcome must be an object with a stage, got {_brief(outcome)}"
        )


def _check_events(response: Mapping[str, Any], where: str) -> None:
    events = response.get("events", [])
    if not isinstance(events, list) or not all(isinstance(e, Mapping) for e in events):
        raise ProtocolError(f"{where}: events must be a list of objects, got {_brief(events)}")


def _brief(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
