"""The emulated user of a Claude Code session: an MCP server over stdio.

Claude Code starts it from the ``--mcp-config`` the connector writes, and
asks its ``prompt`` tool (``--permission-prompt-tool mcp__toolconf__prompt``)
whenever a permission check ends in "ask". It answers as the session's
``prompt`` says (``allow`` or ``deny``) and appends one JSON line per
question to ``--log``, which the connector turns into ``permission_request``
events. It speaks just enough MCP (JSON-RPC 2.0, one message per line) for
that: ``initialize``, ``tools/list``, ``tools/call``, ``ping``.

Run as ``python -m conformance.claude_code.prompt_server --answer deny --log FILE``.
Everything here is bounded: a line over 16 MiB or one that is not JSON is
answered with a JSON-RPC error and the server goes on.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["PROMPT_TOOL", "SERVER_NAME", "main"]

SERVER_NAME: Final = "toolconf"
PROMPT_TOOL: Final = f"mcp__{SERVER_NAME}__prompt"
"""The name given to ``--permission-prompt-tool``."""

_MAX_LINE: Final = 16 * 1024 * 1024
_DENY_MESSAGE: Final = "The user denied this tool use (toolconf emulated prompt)."

_TOOLS: Final = [
    {
        "name": "prompt",
        "description": "Answer a permission question as the emulated user.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "tool_name": {"type": "string"},
                "input": {"type": "object"},
                "tool_use_id": {"type": "string"},
            },
            "required": ["tool_name", "input"],
        },
    }
]


def _answer_prompt(arguments: Mapping[str, Any], answer: str, log: str) -> dict[str, Any]:
    record = {
        "tool_use_id": arguments.get("tool_use_id"),
        "tool_name": arguments.get("tool_name"),
        "input": arguments.get("input"),
        "answer": answer,
    }
    with open(log, "a", encoding="utf-8") as sink:
        sink.write(json.dumps(record) + "\n")
    if answer == "allow":
        decision: dict[str, Any] = {"behavior": "allow", "updatedInput": arguments.get("input", {})}
    else:
        decision = {"behavior": "deny", "message": _DENY_MESSAGE}
    return {"content": [{"type": "text", "text": json.dumps(decision)}]}


def _handle(message: Mapping[str, Any], answer: str, log: str) -> dict[str, Any] | None:
    method = message.get("method")
    if "id" not in message:
        return None  # a notification (initialized, cancelled): nothing to answer
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
    params = message.get("params") or {}
    if method == "initialize":
        reply["result"] = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": SERVER_NAME, "version": "1"},
        }
    elif method == "tools/list":
        reply["result"] = {"tools": _TOOLS}
    elif method == "tools/call" and params.get("name") == "prompt":
        reply["result"] = _answer_prompt(params.get("arguments") or {}, answer, log)
    elif method == "ping":
        reply["result"] = {}
    else:
        reply["error"] = {"code": -32601, "message": f"method not found: {method}"}
    return reply


def main(argv: list[str] | None = None) -> int:
    """Serve until stdin closes."""
    parser = argparse.ArgumentParser(prog="python -m conformance.claude_code.prompt_server")
    parser.add_argument("--answer", choices=("allow", "deny"), default="deny")
    parser.add_argument("--log", required=True)
    args = parser.parse_args(argv)
    for raw in sys.stdin.buffer:
        if len(raw) > _MAX_LINE:
            reply: dict[str, Any] | None = {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32600, "message": "line too long"},
            }
        else:
            try:
                message = json.loads(raw)
            except ValueError:
                message = None
            if not isinstance(message, dict):
                reply = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}}
            else:
                reply = _handle(message, args.answer, args.log)
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
