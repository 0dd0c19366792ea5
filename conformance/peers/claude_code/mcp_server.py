"""The MCP servers the connector gives a Claude Code session, over stdio.

Claude Code starts them from the ``--mcp-config`` the connector writes. The
``toolconf`` server (``--role toolconf``) plays the parts of protocol v1 that
live outside the CLI:

- ``prompt``, the emulated user (``--permission-prompt-tool
  mcp__toolconf__prompt``): every question is answered as the session's
  ``prompt`` says and appended as one JSON line to ``--log``, which the
  connector turns into ``permission_request`` events (PERM-PROMPT-1);
- ``probe`` and ``probe_safe``, the Probe test tool (PROTO-PROBE-1 to
  PROTO-PROBE-3) as MCP tools, ``probe_safe`` annotated read-only: an MCP
  tool's concurrency safety is per tool, not per input, so the connector
  sends a Probe with ``concurrency_safe: true`` to ``probe_safe``. MCP tools
  have no context modifiers, so the trail is always empty.

The ``test`` server (``--role test``) is PROTO-TESTMCP-1's: ``echo`` and a
``Read`` that the built-in Read must win over.

It speaks just enough MCP (JSON-RPC 2.0, one message per line): ``initialize``,
``tools/list``, ``tools/call``, ``ping``. Calls run on their own threads, so
concurrent Probes overlap as they would in process. Every wait is bounded
(``timeout_ms``), and a line that is not JSON gets a JSON-RPC error.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any, Final

from reference.probeboard import ProbeBoard

__all__ = ["PROBE_TOOLS", "PROMPT_TOOL", "SERVER_NAME", "main"]

SERVER_NAME: Final = "toolconf"
PROMPT_TOOL: Final = f"mcp__{SERVER_NAME}__prompt"
"""The name given to ``--permission-prompt-tool``."""
PROBE_TOOLS: Final = (f"mcp__{SERVER_NAME}__probe", f"mcp__{SERVER_NAME}__probe_safe")
"""Probe as Claude Code names it: not concurrency-safe, and safe."""

_NEVER: Final = threading.Event()  # a Probe here is never aborted: the CLI just stops waiting
_RECORDED: Final = frozenset({"tool_name", "input", "tool_use_id"})
_DENY_MESSAGE: Final = "The user denied this tool use (toolconf emulated prompt)."
_PROBE_SCHEMA: Final = {
    "type": "object",
    "properties": {
        "label": {"type": "string"},
        "concurrency_safe": {"type": "boolean"},
        "sleep_ms": {"type": "integer", "minimum": 0},
        "await_started": {"type": "array", "items": {"type": "string"}},
        "timeout_ms": {"type": "integer", "minimum": 0},
        "fail": {"type": "boolean"},
        "bash_error": {"type": "boolean"},
    },
    "required": ["label"],
    "additionalProperties": False,
}
_ROLES: Final[dict[str, list[dict[str, Any]]]] = {
    "toolconf": [
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
        },
        {
            "name": "probe",
            "description": "Probe test tool (not concurrency-safe).",
            "inputSchema": _PROBE_SCHEMA,
            "annotations": {"readOnlyHint": False},
        },
        {
            "name": "probe_safe",
            "description": "Probe test tool (concurrency-safe).",
            "inputSchema": _PROBE_SCHEMA,
            "annotations": {"readOnlyHint": True},
        },
    ],
    "test": [
        {
            "name": "echo",
            "description": "Echo the given text.",
            "inputSchema": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
                "additionalProperties": False,
            },
            "annotations": {"readOnlyHint": True},
        },
        {
            "name": "Read",
            "description": "Test tool registered without the MCP prefix; the built-in Read wins.",
            "inputSchema": {
                "type": "object",
                "properties": {"file_path": {"type": "string"}},
                "required": ["file_path"],
                "additionalProperties": False,
            },
        },
    ],
}


def _text(text: str, *, is_error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def _probe(arguments: Mapping[str, Any], board: ProbeBoard) -> dict[str, Any]:
    """PROTO-PROBE-2 on the reference's own board; no context, so the trail is empty."""
    label = str(arguments.get("label", ""))
    key = board.start(label)
    try:
        waited = [str(x) for x in arguments.get("await_started") or []]
        if waited:
            deadline = time.monotonic() + float(arguments.get("timeout_ms", 2000)) / 1000.0
            missing = board.wait_started(waited, deadline, _NEVER)
            if missing:
                return _text(
                    f"Probe {label} timed out waiting for: {', '.join(missing)}", is_error=True
                )
        time.sleep(float(arguments.get("sleep_ms", 0)) / 1000.0)
        if arguments.get("fail"):
            return _text(f"Probe {label} failed", is_error=True)
    finally:
        max_concurrent = board.end(key)
    return _text(json.dumps({"label": label, "max_concurrent": max_concurrent, "trail": []}))


def _prompt(arguments: Mapping[str, Any], answer: str, log: str) -> dict[str, Any]:
    record = {
        "tool_use_id": arguments.get("tool_use_id"),
        "tool_name": arguments.get("tool_name"),
        "input": arguments.get("input"),
        "answer": answer,
        "asked": {
            k: v for k, v in arguments.items() if k not in ("tool_name", "input", "tool_use_id")
        },
    }
    with open(log, "a", encoding="utf-8") as sink:
        sink.write(json.dumps(record) + "\n")
    if answer == "allow":
        decision: dict[str, Any] = {"behavior": "allow", "updatedInput": arguments.get("input", {})}
    else:
        decision = {"behavior": "deny", "message": _DENY_MESSAGE}
    return _text(json.dumps(decision))


class _Server:
    def __init__(self, role: str, answer: str, log: str) -> None:
        self.role = role
        self.answer = answer
        self.log = log
        self.board = ProbeBoard()
        self._out = threading.Lock()

    def send(self, reply: Mapping[str, Any]) -> None:
        with self._out:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()

    def call(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        if self.role == "test":
            if name == "echo":
                text = str(arguments.get("text", ""))
                return _text("echo failed", is_error=True) if text == "fail" else _text(text)
            return _text("shadowed")
        if name == "prompt":
            return _prompt(arguments, self.answer, self.log)
        return _probe(arguments, self.board)

    def handle(self, message: Mapping[str, Any]) -> None:
        if "id" not in message:
            return  # a notification (initialized, cancelled): nothing to answer
        method = message.get("method")
        params = message.get("params") or {}
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if method == "initialize":
            reply["result"] = {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": self.role, "version": "1"},
            }
        elif method == "tools/list":
            reply["result"] = {"tools": _ROLES[self.role]}
        elif method == "tools/call":
            name = str(params.get("name"))
            arguments = params.get("arguments") or {}

            def run() -> None:
                try:
                    result = self.call(name, arguments)
                except Exception as exc:  # a malformed input must still get an answer
                    result = _text(f"{name} failed: {type(exc).__name__}: {exc}", is_error=True)
                self.send({**reply, "result": result})

            threading.Thread(target=run, daemon=True).start()
            return
        elif method == "ping":
            reply["result"] = {}
        else:
            reply["error"] = {"code": -32601, "message": f"method not found: {method}"}
        self.send(reply)


def main(argv: list[str] | None = None) -> int:
    """Serve until stdin closes."""
    parser = argparse.ArgumentParser(prog="python -m conformance.peers.claude_code.mcp_server")
    parser.add_argument("--role", choices=sorted(_ROLES), default="toolconf")
    parser.add_argument("--answer", choices=("allow", "deny"), default="deny")
    parser.add_argument("--log", default="/dev/null")
    args = parser.parse_args(argv)
    server = _Server(args.role, args.answer, args.log)
    for raw in sys.stdin.buffer:
        try:
            message = json.loads(raw)
        except ValueError:
            message = None
        if isinstance(message, dict):
            server.handle(message)
        else:
            server.send(
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}}
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
