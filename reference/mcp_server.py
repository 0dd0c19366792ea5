"""``python -m reference.mcp_server``: the reference engine's tools over MCP (stdio).

Any MCP client (an agent, an IDE, the conformance suite's ``mcp:`` connector)
can use the engine through this server, built on the official ``mcp`` SDK
(the ``[mcp]`` extra). One connection is one session (PROTO-MCP-SESSION-1):
the session begins when the connection is set up, in the server's root (its
working directory unless ``--root`` says otherwise), and ends with it, so
the read-file state and the read-before-write contract span every call of
one connection and never leak into the next.

The tools are the session's API export, with their SPEC input schemas
(PROTO-MCP-TOOLS-1); a call runs through the whole pipeline, and its
tool_result becomes MCP content blocks: text, image, and a PDF as an
embedded blob resource (PROTO-MCP-RESULT-1). What the model would not see
(the protocol v1 ``outcome`` and ``events``) travels in the result's
``_meta`` under ``toolconf/outcome`` and ``toolconf/events``, so a client
that knows protocol v1 can judge the call as it would through the adapter.

Settings come from the usual files (``/etc/claude-code/managed-settings.json``,
``~/.claude/settings.json``, ``ROOT/.claude/settings.json``,
``ROOT/.claude/settings.local.json``) or from options (``--settings``,
``--settings-source``, ``--permission-mode``); the engine's knobs come from
the server's environment, as a CLI's do. Example client entry::

    {"mcpServers": {"toolconf": {"command": "python",
                                 "args": ["-m", "reference.mcp_server"]}}}
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Final

import anyio
import anyio.to_thread
from mcp import types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server

from reference import __version__
from reference.engine import Engine
from reference.settings import PERMISSION_MODES, SOURCES

__all__ = [
    "EVENTS_META",
    "OUTCOME_META",
    "SERVER_NAME",
    "TOOL_USE_ID_META",
    "EngineSession",
    "SessionOptions",
    "main",
    "to_mcp_content",
]

SERVER_NAME: Final = "toolconf"
OUTCOME_META: Final = "toolconf/outcome"
"""Result ``_meta`` key: the protocol v1 ``outcome`` of the call."""
EVENTS_META: Final = "toolconf/events"
"""Result ``_meta`` key: the protocol v1 ``events`` of the call."""
TOOL_USE_ID_META: Final = "toolconf/tool_use_id"
"""Request ``_meta`` key a client may set: the tool_use id the call runs under."""

_USUAL_FILES: Final = {
    "policySettings": ("/etc/claude-code/managed-settings.json",),
    "userSettings": ("{home}/.claude/settings.json",),
    "projectSettings": ("{root}/.claude/settings.json",),
    "localSettings": ("{root}/.claude/settings.local.json",),
}
"""Where each file source lives when no option gives it (PERM-SOURCE-1's sources)."""


class SetupError(Exception):
    """The options or a settings file cannot start a session."""


class SessionOptions:
    """What one session is begun with: the protocol v1 ``session`` object, from options."""

    def __init__(
        self,
        *,
        root: str,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        settings: Mapping[str, Mapping[str, Any]] | None = None,
        prompt: str = "deny",
        session_dir: str | None = None,
        test_tools: bool = False,
    ) -> None:
        self.root = root
        self.cwd = cwd or root
        self.env = dict(env if env is not None else os.environ)
        self.settings = dict(settings or {})
        self.prompt = prompt
        self.session_dir = session_dir
        self.test_tools = test_tools

    def session(self) -> dict[str, Any]:
        """The ``begin`` request's session object (PROTO-BEGIN-1, PROTO-BEGIN-2)."""
        body: dict[str, Any] = {
            "root": self.root,
            "cwd": self.cwd,
            "env": self.env,
            "settings": self.settings,
            "prompt": self.prompt,
            "test_tools": self.test_tools,
        }
        if "HOME" in self.env:
            body["home"] = self.env["HOME"]
        if self.session_dir:
            body["session_dir"] = self.session_dir
        return body


class EngineSession:
    """One MCP connection's session of the reference engine (PROTO-MCP-SESSION-1).

    Begun on construction and ended by ``close``; calls run one at a time
    (the engine serves one request at a time), from any thread.

    Raises:
        SetupError: the engine refused the session (a bad root, a bad option).
    """

    def __init__(self, options: SessionOptions) -> None:
        self._engine = Engine()
        self._lock = threading.Lock()
        self._seq = 0
        self._ids = 0
        answer = self._request({"cmd": "begin", "session": options.session()})
        if "error" in answer:
            raise SetupError(f"cannot begin the session: {answer['error']['message']}")

    def _request(self, body: Mapping[str, Any]) -> dict[str, Any]:
        with self._lock:
            self._seq += 1
            # a JSON round trip: the engine sees what the adapter would be sent
            request = json.loads(json.dumps({"seq": self._seq, **body}))
            return self._engine.handle(request)

    def tools(self) -> list[dict[str, Any]]:
        """The session's API export (REG-EXPORT-1): name, description, input_schema."""
        answer = self._request({"cmd": "tools"})
        if "error" in answer:
            raise SetupError(answer["error"]["message"])
        exported: list[dict[str, Any]] = answer["tools"]
        return exported

    def call(
        self, name: str, arguments: Mapping[str, Any], tool_use_id: str | None
    ) -> dict[str, Any]:
        """One tool_use through the pipeline: the protocol v1 ``call`` answer (PROTO-CALL-1)."""
        if tool_use_id is None:
            self._ids += 1
            tool_use_id = f"toolu_mcp_{self._ids}"
        tool_use = {"type": "tool_use", "id": tool_use_id, "name": name, "input": dict(arguments)}
        return self._request({"cmd": "call", "tool_use": tool_use})

    def close(self) -> None:
        """End the session (PROTO-END-1: background tasks killed)."""
        self._request({"cmd": "end"})


def to_mcp_content(content: object) -> list[dict[str, Any]]:
    """A tool_result's ``content`` as MCP content blocks (PROTO-MCP-RESULT-1).

    A string is one text block; a text block stays one; an image block
    becomes an image block (base64 data and MIME type); a PDF document block
    becomes an embedded resource holding the same bytes as a blob. Nothing
    else appears in a tool_result (RES-BLOCK-1).
    """
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    blocks: list[dict[str, Any]] = []
    for index, block in enumerate(content if isinstance(content, list) else []):
        kind = block.get("type")
        if kind == "text":
            blocks.append({"type": "text", "text": str(block.get("text", ""))})
        elif kind in ("image", "document"):
            source = block.get("source") or {}
            data, mime = str(source.get("data", "")), str(source.get("media_type", ""))
            if kind == "image":
                blocks.append({"type": "image", "data": data, "mimeType": mime})
            else:
                uri = f"toolconf://document/{index}"
                resource = {"uri": uri, "mimeType": mime, "blob": data}
                blocks.append({"type": "resource", "resource": resource})
    return blocks


def _load_json(path: Path, what: str) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise SetupError(f"{what} {path}: {exc}") from exc
    if not isinstance(value, dict):
        raise SetupError(f"{what} {path}: not a JSON object")
    return value


def settings_from(args: argparse.Namespace, root: str, home: str) -> dict[str, dict[str, Any]]:
    """Every settings source: the options' files first, else the usual places.

    ``--settings FILE`` is ``flagSettings`` and ``--permission-mode`` the
    ``cliArg`` source, as Claude Code's command line gives them;
    ``--settings-source NAME=FILE`` gives any source. ``--no-settings-files``
    skips the usual places.
    """
    settings: dict[str, dict[str, Any]] = {}
    given: dict[str, Path] = {}
    for item in args.settings_source:
        name, sep, file = item.partition("=")
        if not sep or name not in SOURCES:
            raise SetupError(f"--settings-source {item!r}: give NAME=FILE, NAME one of {SOURCES}")
        given[name] = Path(file)
    if args.settings:
        given.setdefault("flagSettings", Path(args.settings))
    for name, path in given.items():
        settings[name] = _load_json(path, name)
    if not args.no_settings_files:
        for name, patterns in _USUAL_FILES.items():
            if name in settings:
                continue
            for pattern in patterns:
                path = Path(pattern.format(home=home, root=root))
                if path.is_file():
                    settings[name] = _load_json(path, name)
    if args.permission_mode:
        cli = settings.setdefault("cliArg", {})
        cli.setdefault("permissions", {})["defaultMode"] = args.permission_mode
    return settings


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m reference.mcp_server",
        description="The reference engine's tools over MCP (stdio); one connection, one session.",
    )
    parser.add_argument("--root", help="the session root (default: the working directory)")
    parser.add_argument("--cwd", help="the session's starting cwd (default: the root)")
    parser.add_argument("--settings", help="a settings.json for the flagSettings source")
    parser.add_argument(
        "--settings-source",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="a settings.json for the source NAME (repeatable), instead of its usual file",
    )
    parser.add_argument(
        "--no-settings-files", action="store_true", help="read no settings from the usual places"
    )
    parser.add_argument(
        "--permission-mode", choices=sorted(PERMISSION_MODES), help="the cliArg defaultMode"
    )
    parser.add_argument(
        "--prompt",
        choices=("allow", "deny"),
        default="deny",
        help="how a permission ask is answered (PERM-PROMPT-1; default deny)",
    )
    parser.add_argument("--session-dir", help="where persisted results and task output go")
    parser.add_argument("--test-tools", action="store_true", help="register the Probe test tools")
    return parser


def options_from(argv: Sequence[str] | None = None) -> SessionOptions:
    """The session the command line asks for.

    Raises:
        SetupError: a settings file is unreadable or an option is malformed.
    """
    args = _parser().parse_args(argv)
    root = os.path.abspath(args.root or os.getcwd())
    env = {k: v for k, v in os.environ.items() if isinstance(v, str)}
    home = env.get("HOME") or str(Path.home())
    return SessionOptions(
        root=root,
        cwd=os.path.abspath(args.cwd) if args.cwd else root,
        env=env,
        settings=settings_from(args, root, home),
        prompt=args.prompt,
        session_dir=os.path.abspath(args.session_dir) if args.session_dir else None,
        test_tools=args.test_tools,
    )


def build_server(options: SessionOptions) -> Server[EngineSession]:
    """The SDK server: a session per connection, begun in its lifespan (PROTO-MCP-SESSION-1)."""

    @asynccontextmanager
    async def lifespan(_server: Any) -> AsyncIterator[EngineSession]:
        session = EngineSession(options)
        try:
            yield session
        finally:
            session.close()

    async def list_tools(
        ctx: ServerRequestContext[EngineSession], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        # PROTO-MCP-TOOLS-1: the API export with its SPEC input schemas, in pool order
        exported = await anyio.to_thread.run_sync(ctx.lifespan_context.tools)
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=tool["name"],
                    description=tool.get("description"),
                    input_schema=tool["input_schema"],
                )
                for tool in exported
            ]
        )

    async def call_tool(
        ctx: ServerRequestContext[EngineSession], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        meta = dict(params.meta or {})
        given = meta.get(TOOL_USE_ID_META)
        tool_use_id = given if isinstance(given, str) and given else None
        session = ctx.lifespan_context
        answer = await anyio.to_thread.run_sync(
            session.call, params.name, params.arguments or {}, tool_use_id
        )
        if "error" in answer:  # the engine's own fault (PROTO-INTERNAL-1): an MCP error result
            text = f"toolconf engine error: {answer['error']['message']}"
            return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)
        tool_result = answer["tool_result"]
        # PROTO-MCP-RESULT-1: content blocks and isError as the model would see them
        return types.CallToolResult.model_validate(
            {
                "content": to_mcp_content(tool_result.get("content")),
                "isError": bool(tool_result.get("is_error")),
                "_meta": {OUTCOME_META: answer["outcome"], EVENTS_META: answer["events"]},
            }
        )

    return Server(
        SERVER_NAME,
        version=__version__,
        instructions="The reference tool system of toolsys-reference; one connection, one session.",
        lifespan=lifespan,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def _serve(options: SessionOptions) -> None:
    server = build_server(options)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main(argv: Sequence[str] | None = None) -> int:
    """Serve one connection on stdin/stdout until it closes; 2 on a bad setup."""
    try:
        options = options_from(argv)
        EngineSession(options).close()  # a bad root or settings file fails before serving
    except SetupError as exc:
        print(f"reference.mcp_server: {exc}", file=sys.stderr)
        return 2
    anyio.run(_serve, options)
    return 0


if __name__ == "__main__":
    sys.exit(main())
