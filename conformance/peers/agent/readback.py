"""A tool result, as the agent showed it to its model, read back for protocol v1.

Three sources decide ``is_error``, in this order, and any of them makes it
true:

1. the dialect's own flag (Anthropic ``is_error``, Gemini's ``error`` key);
2. the tool's result rule: a ``json_record`` whose ``ok_key`` is false or
   whose ``error_key`` is set (cline wraps every result so);
3. the definition's inference table: a row with ``means: error`` whose
   pattern is found in the text (PROTO-INFER-1; the hello names the table).

``dedup`` is true only through a ``means: dedup`` row of the same table.
The text is the protocol's reading of the result, which scenarios match:
the text the model read, except that a ``json_record`` gives the record's
result text, unescaped (or its error text when a failure has no result
text), and a list of parts is joined with line feeds. What the model read,
byte for byte, is ``ToolResult.model_text``, which the adapter hands back
as ``outcome.received`` wherever the two differ.

The content protocol v1 reports is that text, or, for a definition whose
``results`` are ``blocks``, the content blocks the model saw (text, image,
document). A block protocol v1 cannot carry (a ``tool_reference``) is not
passed on changed or dropped: the result is ``Unmappable``
(PROTO-UNSUPPORTED-1).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from conformance.peers.agent.definition import AgentDefinition, ToolMap
from conformance.peers.agent.model_api import ToolResult
from conformance.peers.peer_rules import Unmappable

__all__ = ["CARRIED_BLOCKS", "Reading", "read_back"]

CARRIED_BLOCKS: Final = frozenset({"text", "image", "document"})
"""The tool_result content blocks protocol v1 carries (its schema, reference/protocol)."""


@dataclass(frozen=True, slots=True)
class Reading:
    """What protocol v1 reports of one result, and why it says is_error."""

    text: str
    is_error: bool
    dedup: bool
    error_source: str | None
    """``dialect``, ``result`` or ``inference`` (the first that said error), else None."""
    raw: str
    """The result's text before the result rule (a ``json_record`` still wrapped)."""
    content: str | list[Any] = ""
    """What protocol v1's tool_result carries: the text, or the content blocks."""


def read_back(
    definition: AgentDefinition, protocol_tool: str, tool_map: ToolMap, result: ToolResult
) -> Reading:
    """The protocol reading of ``result``, a ``protocol_tool`` call played by ``tool_map``.

    Raises:
        Unmappable: the result holds a content block protocol v1 cannot carry.
    """
    text = result.text
    source = "dialect" if result.is_error else None
    rule = tool_map.result
    if rule.format == "json_record":
        record = _record(text)
        if record is not None:
            ok = record.get(rule.ok_key) if rule.ok_key else None
            error = record.get(rule.error_key) if rule.error_key else None
            failed = ok is False or bool(error)
            body = record.get(rule.text_key or "")
            if failed and not body and isinstance(error, str):
                body = error  # a failure with no result text shows its error
            text = body if isinstance(body, str) else json.dumps(body)
            if failed and source is None:
                source = "result"
    dedup = False
    for row in definition.inferences:
        if row.matches(protocol_tool, text):
            if row.means == "dedup":
                dedup = True
            elif source is None:
                source = "inference"
    content: str | list[Any] = text
    if definition.results == "blocks" and isinstance(result.raw, Mapping):
        content = _blocks(result.raw.get("content", ""), result.call_id)
    is_error = source is not None
    return Reading(text, is_error, dedup and not is_error, source, result.text, content)


def _blocks(content: Any, call_id: str | None) -> str | list[Any]:
    """The result's content as the model saw it, if protocol v1 can carry every block."""
    if not isinstance(content, list):
        return content if isinstance(content, str) else ""
    for part in content:
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind not in CARRIED_BLOCKS:  # PROTO-UNSUPPORTED-1: shown as it is, or not at all
            raise Unmappable(
                f"the result of {call_id!r} holds a {kind!r} block (a ToolSearch answers "
                "tool_reference blocks), which protocol v1 cannot carry"
            )
    return list(content)


def _record(text: str) -> Mapping[str, Any] | None:
    """The one JSON record ``text`` holds (an object, or a list of exactly one), else None."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    return value if isinstance(value, dict) else None
