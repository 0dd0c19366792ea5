"""MCP tools as tools of section 1 (SPEC.md REG-MCP-1, TOOL-PROPS-1).

An MCP server lists tools (name, description, a JSON Schema of the input, the
``readOnlyHint`` annotation) and runs them, answering with content blocks and
an ``isError`` flag. :func:`mcp_tools` turns each listed tool into a
:class:`~reference.tool.Tool` named ``mcp__<server>__<tool>`` that goes through
the same pipeline as any built-in: its input is checked against a strict
pydantic model built from the server's schema, rules and hook matchers see its
pool name, and a result the server marks as an error ends the call with
``McpToolError``.

Only in-process servers exist here (the test server of PROTO-TESTMCP-1); a
transport to an external server would implement :class:`McpServer`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol, cast

from pydantic import BaseModel, Field, create_model

from reference import errors
from reference.profiles import Profile
from reference.tool import McpInfo, ResultContent, Tool, ToolResult, ToolUseContext, build_tool
from reference.tools.common import JsonInt, StrictInput

PREFIX: Final = "mcp__"
_NAME_CHARS: Final = re.compile(r"[^A-Za-z0-9_-]")

_SCALARS: Final[Mapping[str, Any]] = {
    "string": str,
    "integer": JsonInt,
    "number": float,
    "boolean": bool,
}
_CONSTRAINTS: Final = {
    "minimum": "ge",
    "maximum": "le",
    "exclusiveMinimum": "gt",
    "exclusiveMaximum": "lt",
    "minLength": "min_length",
    "maxLength": "max_length",
    "minItems": "min_length",
    "maxItems": "max_length",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class McpToolDefinition:
    """One entry of a server's tool list.

    ``unprefixed`` registers the tool under its own name instead of
    ``mcp__<server>__<tool>`` (REG-MCP-1); it then competes for that name
    (REG-ASSEMBLE-1).
    """

    name: str
    description: str
    input_schema: Mapping[str, Any]
    read_only_hint: bool = False
    unprefixed: bool = False


@dataclass(frozen=True, slots=True)
class McpCallResult:
    """A server's answer to one call: content blocks and the error flag."""

    content: tuple[Mapping[str, Any], ...]
    is_error: bool = False


def text_result(text: str, *, is_error: bool = False) -> McpCallResult:
    return McpCallResult(({"type": "text", "text": text},), is_error=is_error)


class McpServer(Protocol):
    """A connected MCP server: what the engine needs of one."""

    @property
    def name(self) -> str: ...

    def list_tools(self) -> Sequence[McpToolDefinition]: ...

    def call_tool(self, name: str, arguments: Mapping[str, Any]) -> McpCallResult: ...


def sanitize(name: str) -> str:
    """REG-MCP-1: every character outside ``[A-Za-z0-9_-]`` becomes ``_``."""
    return _NAME_CHARS.sub("_", name)


def mcp_tool_name(server: str, tool: str) -> str:
    """REG-MCP-1: ``mcp__<server>__<tool>``, both parts sanitized."""
    return f"{PREFIX}{sanitize(server)}__{sanitize(tool)}"


def server_rule_names(tool: Tool) -> tuple[str, ...]:
    """REG-DENY-1 / PERM-RULE-2: the rule names that cover every tool of ``tool``'s server."""
    if tool.mcp_info is None:
        return ()
    server = f"{PREFIX}{sanitize(tool.mcp_info.server_name)}"
    return (server, f"{server}__*")


# -- the input model --------------------------------------------------------


def model_from_schema(name: str, schema: Mapping[str, Any]) -> type[BaseModel]:
    """A strict model (TOOL-SCHEMA-1) for an object schema of the JSON Schema subset MCP tools use.

    Properties of type string, integer, number, boolean, array (with
    ``items``) and object (recursively), ``enum``, ``default``,
    ``description``, numeric bounds and length bounds. Whatever the schema says
    about additional properties, none are accepted.

    Raises:
        errors.UnsupportedSchemaError: anything else.
    """
    if schema.get("type", "object") != "object":
        raise errors.UnsupportedSchemaError(f"{name}: the input schema must be an object")
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    if not isinstance(properties, Mapping):
        raise errors.UnsupportedSchemaError(f"{name}: properties must be an object")
    fields: dict[str, Any] = {}
    for prop, prop_schema in properties.items():
        if not isinstance(prop_schema, Mapping):
            raise errors.UnsupportedSchemaError(
                f"{name}.{prop}: a property schema must be an object"
            )
        annotation = _annotation(f"{name}_{prop}", prop_schema)
        options = {
            _CONSTRAINTS[key]: value for key, value in prop_schema.items() if key in _CONSTRAINTS
        }
        if "description" in prop_schema:
            options["description"] = str(prop_schema["description"])
        if prop in required:
            fields[prop] = (annotation, Field(..., **options))
        elif "default" in prop_schema:
            fields[prop] = (annotation, Field(default=prop_schema["default"], **options))
        else:
            fields[prop] = (annotation | None, Field(default=None, **options))
    model: type[BaseModel] = create_model(name, __base__=StrictInput, **fields)
    return model


def _annotation(name: str, schema: Mapping[str, Any]) -> Any:
    if "enum" in schema:
        return cast(Any, Literal)[tuple(schema["enum"])]
    kind = schema.get("type")
    if isinstance(kind, str) and kind in _SCALARS:
        return _SCALARS[kind]
    if kind == "array":
        items = schema.get("items")
        element = _annotation(name, items) if isinstance(items, Mapping) else Any
        return cast(Any, list)[element]
    if kind == "object":
        return model_from_schema(name, schema)
    raise errors.UnsupportedSchemaError(f"{name}: unsupported schema {dict(schema)!r}")


# -- the tool ---------------------------------------------------------------


def _arguments(inp: BaseModel) -> dict[str, Any]:
    """What the server receives: the fields the model gave (TOOL-CALL-1)."""
    return inp.model_dump(mode="json", exclude_unset=True)


def _classifier_input(inp: BaseModel) -> str:
    """TOOL-PROPS-1: an MCP tool's classifier input is its input as compact JSON."""
    return json.dumps(_arguments(inp), ensure_ascii=False, separators=(",", ":"))


def _text_of(content: Sequence[Mapping[str, Any]]) -> str:
    return "\n".join(str(b.get("text", "")) for b in content if b.get("type") == "text")


def map_result(data: Mapping[str, Any], profile: Profile) -> ResultContent:
    """The server's content: its text when every block is text, else the blocks."""
    content: list[dict[str, Any]] = list(data["content"])
    if all(block.get("type") == "text" for block in content):
        return _text_of(content)
    return content


@dataclass(frozen=True, slots=True)
class _Caller:
    """``call()`` of one MCP tool: forwards the input, raises on an error result."""

    server: McpServer
    tool_name: str

    def __call__(self, inp: BaseModel, _ctx: ToolUseContext) -> ToolResult:
        result = self.server.call_tool(self.tool_name, _arguments(inp))
        content = [dict(block) for block in result.content]
        if result.is_error:  # REG-MCP-1
            raise errors.McpToolError(_text_of(content) or f"MCP tool {self.tool_name} failed")
        return ToolResult({"content": content})


def mcp_tool(server: McpServer, definition: McpToolDefinition) -> Tool[BaseModel]:
    """REG-MCP-1 / TOOL-PROPS-1: one server tool as a tool of section 1."""
    name = definition.name if definition.unprefixed else mcp_tool_name(server.name, definition.name)
    read_only = definition.read_only_hint
    return build_tool(
        name=name,
        input_model=model_from_schema(f"Mcp_{sanitize(name)}", definition.input_schema),
        call=_Caller(server, definition.name),
        description=definition.description,
        is_concurrency_safe=lambda _inp: read_only,
        is_read_only=lambda _inp: read_only,
        map_result=map_result,
        classifier_input=_classifier_input,
        should_defer=True,  # REG-DEFER-1: every MCP tool is deferred
        mcp_info=McpInfo(
            server_name=server.name,
            tool_name=definition.name,
            input_schema=json.dumps(
                definition.input_schema, separators=(",", ":"), ensure_ascii=False
            ),
        ),
    )


def mcp_tools(server: McpServer) -> list[Tool]:
    """Every tool the server lists, in its order."""
    return [mcp_tool(server, definition) for definition in server.list_tools()]
