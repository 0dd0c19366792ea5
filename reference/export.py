"""What the model is offered of the pool: deferral and the API export (REG-DEFER-1, REG-EXPORT-1).

Kept apart from :mod:`reference.registry` so that ToolSearch, which answers with
export objects (REG-SEARCH-2), can use it without importing the registry that
registers ToolSearch.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from reference.tool import Tool

_CONSTRAINT_KEYWORDS = {  # pydantic leaves these as-is on an optional field's branch
    "ge": "minimum",
    "le": "maximum",
    "gt": "exclusiveMinimum",
    "lt": "exclusiveMaximum",
}


def is_deferred(tool: Tool) -> bool:
    """REG-DEFER-1: ``should_defer`` and not ``always_load``."""
    return tool.should_defer and not tool.always_load


@functools.cache
def _strict_schema_text(model: type[BaseModel]) -> str:
    schema = model.model_json_schema()
    definitions = schema.pop("$defs", {})
    return json.dumps(_strict(schema, definitions))


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """TOOL-SCHEMA-1 / REG-EXPORT-1: the input model as a strict JSON Schema.

    ``$ref``s are inlined and titles dropped; every object level has
    ``type: object``, ``properties``, ``required`` and ``additionalProperties:
    false``; an optional field is exported as its own type (absent, not null,
    is how the model leaves it out). A fresh copy on every call: callers may
    change it.
    """
    result: dict[str, Any] = json.loads(_strict_schema_text(model))
    return result


def _strict(node: Any, definitions: Mapping[str, Any]) -> Any:
    if isinstance(node, list):
        return [_strict(item, definitions) for item in node]
    if not isinstance(node, Mapping):
        return node
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        merged = {**definitions[name], **{k: v for k, v in node.items() if k != "$ref"}}
        return _strict(merged, definitions)
    branches = node.get("anyOf")
    if isinstance(branches, list):
        kept = [b for b in branches if not (isinstance(b, Mapping) and b.get("type") == "null")]
        if len(kept) == 1 and len(kept) < len(branches):  # Optional[T] = None: T, left out
            rest = {k: v for k, v in node.items() if k != "anyOf"}
            if rest.get("default", 0) is None:
                del rest["default"]
            return _strict({**kept[0], **rest}, definitions)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title":
            continue
        if key == "properties" and isinstance(value, Mapping):
            out[key] = {name: _strict(prop, definitions) for name, prop in value.items()}
        else:
            out[_CONSTRAINT_KEYWORDS.get(key) or key] = _strict(value, definitions)
    if out.get("type") == "object" or "properties" in out:
        out = {
            "type": "object",
            "properties": out.pop("properties", {}),
            "required": out.pop("required", []),
            **{k: v for k, v in out.items() if k != "type"},
            "additionalProperties": False,
        }
    return out


def api_tool(tool: Tool) -> dict[str, Any]:
    """REG-EXPORT-1: one tool as the API sees it."""
    return {
        "name": tool.name,
        "description": tool.description,
        "input_schema": strict_schema(tool.input_model),
    }


def api_export(tools: Sequence[Tool], discovered: Collection[str]) -> list[dict[str, Any]]:
    """REG-EXPORT-1: every tool that is not deferred or was discovered, in pool order."""
    return [api_tool(t) for t in tools if not is_deferred(t) or t.name in discovered]


def deferred_names(tools: Sequence[Tool], discovered: Collection[str]) -> list[str]:
    """REG-EXPORT-1 / PROTO-TOOLS-1: the deferred tools not yet discovered, in pool order."""
    return [t.name for t in tools if is_deferred(t) and t.name not in discovered]
