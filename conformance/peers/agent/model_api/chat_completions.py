"""OpenAI Chat Completions: ``POST …/chat/completions`` and ``GET …/models``.

A turn is one assistant message: ``content`` text and ``tool_calls``
(``{id, type: "function", function: {name, arguments}}``, the arguments a
JSON string). A stream is ``chat.completion.chunk`` objects as ``data:``
lines: the role, the text, then for each call a first delta with its id,
name and empty arguments and a second with the arguments, then an empty
delta with ``finish_reason``, a usage chunk when ``stream_options`` asks,
and ``data: [DONE]``. Tool results are ``role: "tool"`` messages keyed by
``tool_call_id``; the API has no error flag, so ``is_error`` is None.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from conformance.peers.agent.model_api.dialect import (
    Dialect,
    Frame,
    Route,
    carried_text,
    json_text,
)
from conformance.peers.agent.model_api.turns import OfferedTool, ToolResult, Turn

__all__ = ["ChatCompletions"]

_TEXT_PARTS = frozenset({"text"})


class ChatCompletions(Dialect):
    """The Chat Completions API qwen-code, opencode, kilo and cline call."""

    name = "openai_chat"

    def route(self, method: str, path: str, query: Mapping[str, Sequence[str]]) -> Route | None:
        if method == "POST" and path.endswith("/chat/completions"):
            return Route("generate")
        if method == "GET" and path.endswith("/models"):
            return Route("models")
        return None

    def offered_tools(self, body: Mapping[str, Any]) -> list[OfferedTool]:
        tools = body.get("tools")
        offered: list[OfferedTool] = []
        for tool in tools if isinstance(tools, list) else ():
            if not isinstance(tool, Mapping):
                continue
            function = tool.get("function")
            if tool.get("type") == "function" and isinstance(function, Mapping):
                parameters = function.get("parameters")
                offered.append(
                    OfferedTool(
                        name=str(function.get("name")),
                        kind="function",
                        schema=parameters if isinstance(parameters, Mapping) else {},
                        description=str(function.get("description") or ""),
                    )
                )
            elif isinstance(tool.get("name"), str):
                offered.append(OfferedTool(name=tool["name"], kind="other"))
        return offered

    def tool_results(self, body: Mapping[str, Any]) -> list[ToolResult]:
        results: list[ToolResult] = []
        messages = body.get("messages")
        group = 0
        previous_was_tool = False
        for message in messages if isinstance(messages, list) else ():
            if not isinstance(message, Mapping):
                continue
            is_tool = message.get("role") == "tool"
            if is_tool and not previous_was_tool:
                group += 1  # consecutive tool messages answer one assistant message
            previous_was_tool = is_tool
            if is_tool:
                call_id = message.get("tool_call_id")
                results.append(
                    ToolResult(
                        call_id=str(call_id) if call_id is not None else None,
                        name=str(message["name"]) if isinstance(message.get("name"), str) else None,
                        text=_text_of(message.get("content")),
                        received=carried_text(message.get("content"), _TEXT_PARTS),
                        is_error=None,
                        group=group,
                        raw=dict(message),
                    )
                )
        return results

    def respond(self, body: Mapping[str, Any], turn: Turn, response_id: str) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
        if turn.calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": _arguments(call.arguments)},
                }
                for call in turn.calls
            ]
        return {
            "id": response_id,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(body.get("model") or "toolconf-model"),
            "choices": [{"index": 0, "message": message, "finish_reason": _finish(turn)}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    def stream(self, body: Mapping[str, Any], turn: Turn, response_id: str) -> Iterator[Frame]:
        base = {
            "id": response_id,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": str(body.get("model") or "toolconf-model"),
        }

        def chunk(delta: Mapping[str, Any], finish: str | None = None, pause: float = 0.0) -> Frame:
            choice = {"index": 0, "delta": dict(delta), "finish_reason": finish}
            return _data({**base, "choices": [choice]}, pause)

        yield chunk({"role": "assistant", "content": ""})
        if turn.text:
            yield chunk({"content": turn.text})
        for index, call in enumerate(turn.calls):
            opened = {
                "index": index,
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }
            yield chunk({"tool_calls": [opened]}, pause=turn.block_delay if index else 0.0)
            arguments = {"index": index, "function": {"arguments": _arguments(call.arguments)}}
            yield chunk({"tool_calls": [arguments]})
        yield chunk({}, _finish(turn))
        options = body.get("stream_options")
        if isinstance(options, Mapping) and options.get("include_usage"):
            usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
            yield _data({**base, "choices": [], "usage": usage})
        yield Frame(b"data: [DONE]\n\n")

    def models(self, model: str) -> dict[str, Any]:
        entry = {"id": model, "object": "model", "created": 0, "owned_by": "toolconf"}
        return {"object": "list", "data": [entry]}

    def error(self, status: int, message: str) -> dict[str, Any]:
        return {"error": {"message": message, "type": "invalid_request_error", "code": status}}


def _finish(turn: Turn) -> str:
    return "stop" if turn.final else "tool_calls"


def _arguments(arguments: Mapping[str, Any] | str) -> str:
    return arguments if isinstance(arguments, str) else json_text(arguments)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, Mapping) and part.get("type") == "text"
        )
    return "" if content is None else json.dumps(content)


def _data(data: Mapping[str, Any], pause: float = 0.0) -> Frame:
    return Frame(f"data: {json.dumps(data)}\n\n".encode(), pause)
