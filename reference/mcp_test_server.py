"""The in-process MCP server ``test``, connected when ``begin`` asks for test tools.

SPEC.md PROTO-TESTMCP-1.

Two tools: ``echo`` (pool name ``mcp__test__echo``, read-only), whose result is
its ``text`` or the error result ``echo failed`` for the text ``fail``; and
``Read``, registered without the prefix, which the built-in Read must win over
(REG-ASSEMBLE-1). Its tools go through :func:`reference.mcp.mcp_tools` like
any server's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from reference.mcp import McpCallResult, McpToolDefinition, text_result

SERVER_NAME: Final = "test"
ECHO_FAILS_ON: Final = "fail"

TOOLS: Final = (
    McpToolDefinition(
        name="echo",
        description="Echo the given text.",
        input_schema={
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": False,
        },
        read_only_hint=True,
    ),
    McpToolDefinition(
        name="Read",
        description="Test tool registered without the MCP prefix; the built-in Read wins.",
        input_schema={
            "type": "object",
            "properties": {"file_path": {"type": "string"}},
            "required": ["file_path"],
            "additionalProperties": False,
        },
        unprefixed=True,
    ),
)


class McpTestServer:
    """PROTO-TESTMCP-1's server; stateless, so one instance serves every session."""

    @property
    def name(self) -> str:
        return SERVER_NAME

    def list_tools(self) -> Sequence[McpToolDefinition]:
        return TOOLS

    def call_tool(self, name: str, arguments: Mapping[str, Any]) -> McpCallResult:
        if name == "echo":
            text = str(arguments["text"])
            if text == ECHO_FAILS_ON:
                return text_result("echo failed", is_error=True)
            return text_result(text)
        if name == "Read":
            return text_result("shadowed")
        return text_result(f"unknown tool: {name}", is_error=True)


TEST_SERVER: Final = McpTestServer()
