"""Gemini: ``POST …/models/M:generateContent`` and ``:streamGenerateContent?alt=sse``.

A turn is one candidate whose ``content`` (role ``model``) holds ``text``
parts and ``functionCall`` parts (``name``, ``args`` and the call's ``id``).
A stream sends one ``GenerateContentResponse`` per part as ``data:`` lines
(CRLF-separated, as the API does), the last with ``finishReason: STOP`` and
the usage. Tool results are ``functionResponse`` parts (``name``,
``response``, and ``id`` when the client echoes it). The API's convention
makes ``response.error`` an error and ``response.output`` the output, so
``is_error`` is whether ``error`` is there. ``:countTokens`` counts the
contents' texts with cl100k_base.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from conformance.peers.agent.model_api.dialect import (
    Dialect,
    Frame,
    Route,
    count_texts,
    texts_in,
)
from conformance.peers.agent.model_api.turns import OfferedTool, ToolResult, Turn

__all__ = ["Gemini"]


class Gemini(Dialect):
    """The Gemini API gemini-cli calls."""

    name = "gemini"

    def route(self, method: str, path: str, query: Mapping[str, Sequence[str]]) -> Route | None:
        if method == "GET" and "/models" in path:
            return Route("models")
        if method != "POST":
            return None
        if path.endswith(":streamGenerateContent"):
            return Route("generate", stream=True)
        if path.endswith(":generateContent"):
            return Route("generate")
        if path.endswith(":countTokens"):
            return Route("count")
        return None

    def wants_stream(self, body: Mapping[str, Any], route: Route) -> bool:
        return route.stream

    def side_text(self, body: Mapping[str, Any], default: str) -> str:
        config = body.get("generationConfig")
        if isinstance(config, Mapping) and config.get("responseMimeType") == "application/json":
            return "{}"
        return default

    def offered_tools(self, body: Mapping[str, Any]) -> list[OfferedTool]:
        tools = body.get("tools")
        offered: list[OfferedTool] = []
        for tool in tools if isinstance(tools, list) else ():
            if not isinstance(tool, Mapping):
                continue
            declarations = tool.get("functionDeclarations", tool.get("function_declarations"))
            if not isinstance(declarations, list):
                offered.extend(OfferedTool(str(key), "other") for key in tool)
                continue
            for declaration in declarations:
                if not isinstance(declaration, Mapping):
                    continue
                schema = declaration.get("parametersJsonSchema", declaration.get("parameters"))
                offered.append(
                    OfferedTool(
                        name=str(declaration.get("name")),
                        kind="function",
                        schema=schema if isinstance(schema, Mapping) else {},
                        description=str(declaration.get("description") or ""),
                    )
                )
        return offered

    def tool_results(self, body: Mapping[str, Any]) -> list[ToolResult]:
        results: list[ToolResult] = []
        contents = body.get("contents")
        for group, content in enumerate(contents if isinstance(contents, list) else ()):
            parts = content.get("parts") if isinstance(content, Mapping) else None
            for part in parts if isinstance(parts, list) else ():
                found = part.get("functionResponse") if isinstance(part, Mapping) else None
                if not isinstance(found, Mapping):
                    continue
                response = found.get("response")
                response = response if isinstance(response, Mapping) else {"output": response}
                call_id = found.get("id")
                results.append(
                    ToolResult(
                        call_id=str(call_id) if isinstance(call_id, str) and call_id else None,
                        name=str(found.get("name")) if found.get("name") is not None else None,
                        text=_text_of(response),
                        is_error="error" in response,
                        group=group,
                        raw=dict(found),
                    )
                )
        return results

    def respond(self, body: Mapping[str, Any], turn: Turn, response_id: str) -> dict[str, Any]:
        return _chunk(_parts(turn), response_id, body, last=True)

    def stream(self, body: Mapping[str, Any], turn: Turn, response_id: str) -> Iterator[Frame]:
        parts = _parts(turn)
        for index, part in enumerate(parts):
            pause = turn.block_delay if index and "functionCall" in part else 0.0
            data = _chunk([part], response_id, body, last=index == len(parts) - 1)
            yield Frame(f"data: {json.dumps(data)}\r\n\r\n".encode(), pause)

    def count(self, body: Mapping[str, Any]) -> dict[str, Any]:
        request = body.get("generateContentRequest")
        source = request if isinstance(request, Mapping) else body
        return {"totalTokens": count_texts(texts_in(source.get("contents", [])))}

    def models(self, model: str) -> dict[str, Any]:
        return {
            "name": f"models/{model}",
            "displayName": model,
            "inputTokenLimit": 1_048_576,
            "outputTokenLimit": 65_536,
            "supportedGenerationMethods": ["generateContent", "countTokens"],
        }

    def error(self, status: int, message: str) -> dict[str, Any]:
        return {"error": {"code": status, "message": message, "status": "INVALID_ARGUMENT"}}


def _parts(turn: Turn) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = [{"text": turn.text}] if turn.text or turn.final else []
    for call in turn.calls:
        args = call.arguments if isinstance(call.arguments, Mapping) else {"input": call.arguments}
        parts.append({"functionCall": {"name": call.name, "args": dict(args), "id": call.id}})
    return parts


def _chunk(
    parts: list[dict[str, Any]], response_id: str, body: Mapping[str, Any], *, last: bool
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if last:
        candidate["finishReason"] = "STOP"
    chunk: dict[str, Any] = {"candidates": [candidate], "responseId": response_id}
    if last:
        chunk["usageMetadata"] = {
            "promptTokenCount": 1,
            "candidatesTokenCount": 1,
            "totalTokenCount": 2,
        }
    chunk["modelVersion"] = str(body.get("model") or "gemini-2.5-pro")
    return chunk


def _text_of(response: Mapping[str, Any]) -> str:
    for key in ("output", "error"):
        if key in response:
            value = response[key]
            return value if isinstance(value, str) else json.dumps(value)
    return json.dumps(response)
