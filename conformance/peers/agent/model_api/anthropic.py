"""Anthropic Messages: ``POST /v1/messages`` and ``/v1/messages/count_tokens``.

A turn is a list of content blocks (``text``, ``tool_use``); a stream is
``message_start``, then per block ``content_block_start`` / one
``content_block_delta`` (``text_delta`` or ``input_json_delta``) /
``content_block_stop``, then ``message_delta`` with the stop reason and
``message_stop``. Tool results arrive as ``tool_result`` blocks of user
messages, with ``is_error``. The token count counts the texts of the
messages and the system prompt with cl100k_base, as the reference counts
for the Read token gate.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from conformance.peers.agent.model_api.dialect import (
    Dialect,
    Frame,
    Route,
    carried_text,
    count_texts,
)
from conformance.peers.agent.model_api.turns import OfferedTool, ToolResult, Turn

__all__ = ["AnthropicMessages", "text_of"]

_MODEL = "claude-sonnet-4-5"
_TEXT_PARTS = frozenset({"text"})


class AnthropicMessages(Dialect):
    """The Messages API Claude Code calls."""

    name = "anthropic_messages"

    def route(self, method: str, path: str, query: Mapping[str, Sequence[str]]) -> Route | None:
        if method != "POST":
            return None
        if path.endswith("/v1/messages/count_tokens"):
            return Route("count")
        if path.endswith("/v1/messages"):
            return Route("generate")
        return None

    def offered_tools(self, body: Mapping[str, Any]) -> list[OfferedTool]:
        tools = body.get("tools")
        offered: list[OfferedTool] = []
        for tool in tools if isinstance(tools, list) else ():
            if isinstance(tool, Mapping) and isinstance(tool.get("name"), str):
                schema = tool.get("input_schema")
                offered.append(
                    OfferedTool(
                        name=tool["name"],
                        kind="function" if isinstance(schema, Mapping) else "other",
                        schema=schema if isinstance(schema, Mapping) else {},
                        description=str(tool.get("description") or ""),
                    )
                )
        return offered

    def tool_results(self, body: Mapping[str, Any]) -> list[ToolResult]:
        results: list[ToolResult] = []
        messages = body.get("messages")
        for group, message in enumerate(messages if isinstance(messages, list) else ()):
            if not isinstance(message, Mapping) or message.get("role") != "user":
                continue
            content = message.get("content")
            for block in content if isinstance(content, list) else ():
                if isinstance(block, Mapping) and block.get("type") == "tool_result":
                    results.append(
                        ToolResult(
                            call_id=str(block.get("tool_use_id")),
                            name=None,
                            text=text_of(block.get("content")),
                            received=carried_text(block.get("content"), _TEXT_PARTS),
                            is_error=bool(block.get("is_error", False)),
                            group=group,
                            raw=dict(block),
                        )
                    )
        return results

    def respond(self, body: Mapping[str, Any], turn: Turn, response_id: str) -> dict[str, Any]:
        return {
            "id": response_id,
            "type": "message",
            "role": "assistant",
            "model": body.get("model", _MODEL),
            "content": _blocks(turn),
            "stop_reason": "end_turn" if turn.final else "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }

    def stream(self, body: Mapping[str, Any], turn: Turn, response_id: str) -> Iterator[Frame]:
        start = {
            "type": "message_start",
            "message": {
                **self.respond(body, turn, response_id),
                "content": [],
                "stop_reason": None,
            },
        }
        yield _event(start)
        for index, block in enumerate(_blocks(turn)):
            pause = turn.block_delay if index else 0.0
            if block["type"] == "tool_use":
                opened = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            else:
                opened = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            yield _event(
                {"type": "content_block_start", "index": index, "content_block": opened}, pause
            )
            yield _event({"type": "content_block_delta", "index": index, "delta": delta})
            yield _event({"type": "content_block_stop", "index": index})
        stop = "end_turn" if turn.final else "tool_use"
        yield _event(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 1},
            }
        )
        yield _event({"type": "message_stop"})

    def count(self, body: Mapping[str, Any]) -> dict[str, Any]:
        texts: list[str] = []
        _walk(body.get("messages", []), texts)
        _walk(body.get("system", []), texts)
        return {"input_tokens": count_texts(texts)}

    def error(self, status: int, message: str) -> dict[str, Any]:
        kind = {400: "invalid_request_error", 404: "not_found_error", 413: "request_too_large"}
        return {
            "type": "error",
            "error": {"type": kind.get(status, "api_error"), "message": message},
        }


def _blocks(turn: Turn) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": turn.text}] if turn.text else []
    for call in turn.calls:
        arguments = call.arguments if isinstance(call.arguments, Mapping) else {}
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": arguments})
    if not blocks:
        blocks.append({"type": "text", "text": ""})
    return blocks


def text_of(content: Any) -> str:
    """A tool_result block's content as text: itself, or its text blocks joined by line feeds."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, Mapping) and part.get("type") == "text"
        )
    return ""


def _walk(value: Any, texts: list[str]) -> None:
    """The texts a count covers: strings under ``text``, ``content`` and ``input`` keys."""
    if isinstance(value, str):
        texts.append(value)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if key in {"text", "content", "input"} or not isinstance(item, str):
                _walk(item, texts)
    elif isinstance(value, list):
        for item in value:
            _walk(item, texts)


def _event(data: Mapping[str, Any], pause: float = 0.0) -> Frame:
    return Frame(f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode(), pause)
