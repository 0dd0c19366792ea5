"""OpenAI Responses: ``POST …/responses`` and ``GET …/models``.

A turn is a list of output items: a ``message`` with ``output_text``, a
``function_call`` (``call_id``, ``name``, ``arguments`` as a JSON string)
or a ``custom_tool_call`` (``call_id``, ``name``, raw ``input``: a freeform
tool such as codex's ``apply_patch``). A stream is ``response.created``,
``response.in_progress``, then per item ``response.output_item.added``, its
deltas and ``…done`` events, ``response.output_item.done``, and finally
``response.completed`` carrying every item; each event has a
``sequence_number``. Tool results are ``function_call_output`` and
``custom_tool_call_output`` input items keyed by ``call_id``; the API has
no error flag, so ``is_error`` is None.
"""

from __future__ import annotations

import itertools
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

__all__ = ["Responses"]

_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})
_TEXT_PARTS = frozenset({"input_text", "output_text"})


class Responses(Dialect):
    """The Responses API codex calls."""

    name = "openai_responses"

    def route(self, method: str, path: str, query: Mapping[str, Sequence[str]]) -> Route | None:
        if method == "POST" and path.endswith("/responses"):
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
            kind = tool.get("type")
            name = tool.get("name")
            if kind == "function" and isinstance(name, str):
                parameters = tool.get("parameters")
                schema = parameters if isinstance(parameters, Mapping) else {}
                description = str(tool.get("description") or "")
                offered.append(OfferedTool(name, "function", schema, description))
            elif kind == "custom" and isinstance(name, str):
                fmt = tool.get("format")
                schema = fmt if isinstance(fmt, Mapping) else {}
                description = str(tool.get("description") or "")
                offered.append(OfferedTool(name, "custom", schema, description))
            else:
                offered.append(OfferedTool(str(name or kind), "other"))
        return offered

    def tool_results(self, body: Mapping[str, Any]) -> list[ToolResult]:
        results: list[ToolResult] = []
        items = body.get("input")
        group = 0
        previous_was_output = False
        for item in items if isinstance(items, list) else ():
            if not isinstance(item, Mapping):
                continue
            is_output = item.get("type") in _OUTPUTS
            if is_output and not previous_was_output:
                group += 1
            previous_was_output = is_output
            if is_output:
                results.append(
                    ToolResult(
                        call_id=str(item.get("call_id")),
                        name=None,
                        text=_text_of(item.get("output")),
                        received=carried_text(item.get("output"), _TEXT_PARTS),
                        is_error=None,
                        group=group,
                        raw=dict(item),
                    )
                )
        return results

    def respond(self, body: Mapping[str, Any], turn: Turn, response_id: str) -> dict[str, Any]:
        return _response(body, response_id, "completed", _items(turn, response_id))

    def stream(self, body: Mapping[str, Any], turn: Turn, response_id: str) -> Iterator[Frame]:
        numbers = itertools.count()

        def event(kind: str, pause: float = 0.0, **fields: Any) -> Frame:
            data = {"type": kind, "sequence_number": next(numbers), **fields}
            return Frame(f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode(), pause)

        items = _items(turn, response_id)
        started = _response(body, response_id, "in_progress", [])
        yield event("response.created", response=started)
        yield event("response.in_progress", response=started)
        calls_seen = 0
        for index, item in enumerate(items):
            kind = item["type"]
            pause = 0.0
            if kind != "message":
                pause = turn.block_delay if calls_seen else 0.0
                calls_seen += 1
            common = {"output_index": index, "item_id": item["id"]}
            if kind == "message":
                text = item["content"][0]["text"]
                opened = {**item, "status": "in_progress", "content": []}
                empty = {"type": "output_text", "text": "", "annotations": []}
                part = {**common, "content_index": 0}
                yield event("response.output_item.added", output_index=index, item=opened)
                yield event("response.content_part.added", **part, part=empty)
                yield event("response.output_text.delta", **part, delta=text)
                yield event("response.output_text.done", **part, text=text)
                yield event("response.content_part.done", **part, part=item["content"][0])
            elif kind == "function_call":
                opened = {**item, "status": "in_progress", "arguments": ""}
                yield event("response.output_item.added", pause, output_index=index, item=opened)
                arguments = item["arguments"]
                yield event("response.function_call_arguments.delta", **common, delta=arguments)
                yield event("response.function_call_arguments.done", **common, arguments=arguments)
            else:
                opened = {**item, "status": "in_progress", "input": ""}
                yield event("response.output_item.added", pause, output_index=index, item=opened)
                yield event("response.custom_tool_call_input.delta", **common, delta=item["input"])
                yield event("response.custom_tool_call_input.done", **common, input=item["input"])
            yield event("response.output_item.done", output_index=index, item=item)
        yield event("response.completed", response=_response(body, response_id, "completed", items))

    def models(self, model: str) -> dict[str, Any]:
        entry = {"id": model, "object": "model", "created": 0, "owned_by": "toolconf"}
        return {"object": "list", "data": [entry]}

    def error(self, status: int, message: str) -> dict[str, Any]:
        return {"error": {"message": message, "type": "invalid_request_error", "code": status}}


def _items(turn: Turn, response_id: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if turn.text or turn.final:
        items.append(
            {
                "id": f"msg_{response_id}",
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": turn.text, "annotations": []}],
            }
        )
    for index, call in enumerate(turn.calls):
        if call.kind == "custom":
            raw = call.arguments if isinstance(call.arguments, str) else json_text(call.arguments)
            items.append(
                {
                    "id": f"ctc_{response_id}_{index}",
                    "type": "custom_tool_call",
                    "status": "completed",
                    "call_id": call.id,
                    "name": call.name,
                    "input": raw,
                }
            )
        else:
            arguments = (
                call.arguments if isinstance(call.arguments, str) else json_text(call.arguments)
            )
            items.append(
                {
                    "id": f"fc_{response_id}_{index}",
                    "type": "function_call",
                    "status": "completed",
                    "call_id": call.id,
                    "name": call.name,
                    "arguments": arguments,
                }
            )
    return items


def _response(
    body: Mapping[str, Any], response_id: str, status: str, items: list[dict[str, Any]]
) -> dict[str, Any]:
    usage = {
        "input_tokens": 1,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 1,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 2,
    }
    return {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "model": str(body.get("model") or "toolconf-model"),
        "output": items,
        "parallel_tool_calls": bool(body.get("parallel_tool_calls", True)),
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": [],
        "usage": usage if status == "completed" else None,
        "error": None,
        "incomplete_details": None,
    }


def _text_of(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "\n".join(
            str(part.get("text", ""))
            for part in output
            if isinstance(part, Mapping) and part.get("type") in {"input_text", "output_text"}
        )
    return "" if output is None else json.dumps(output)
