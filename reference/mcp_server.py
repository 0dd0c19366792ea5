"""``python -m reference.mcp_server``: the reference engine's tools over MCP (stdio or HTTP).

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
the server's environment, as a CLI's do. ``--http 127.0.0.1:PORT`` serves
streamable HTTP at ``/mcp`` instead, on the loopback address only, printing
the endpoint's URL first; there each MCP session is a session of its own.
Example client entry::

    {"mcpServers": {"toolconf": {"command": "python",
                                 "args": ["-m", "reference.mcp_server"]}}}
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any, Final, TypeVar

try:
    import anyio
    import anyio.to_thread
    import uvicorn
    from mcp import types
    from mcp.server import Server
    from mcp.server.context import ServerRequestContext
    from mcp.server.stdio import stdio_server
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.datastructures import Headers
    from starlette.requests import Request
    from starlette.routing import Route
    from starlette.types import Receive, Scope, Send
except ModuleNotFoundError as missing:  # the SDK is the mcp extra
    if __name__ == "__main__":
        sys.exit(
            "reference.mcp_server needs the mcp extra: pip install 'toolsys-reference[mcp]' "
            f"({missing})"
        )
    raise

from reference.engine import Engine
from reference.settings import PERMISSION_MODES, SOURCES
from reference.version import __version__

__all__ = [
    "EVENTS_META",
    "HTTP_HOST",
    "HTTP_PATH",
    "OUTCOME_META",
    "SERVER_NAME",
    "TOOL_USE_ID_META",
    "EngineSession",
    "HttpSessions",
    "SessionOptions",
    "build_http_app",
    "http_address",
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
HTTP_HOST: Final = "127.0.0.1"
"""The one address ``--http`` binds: loopback, never a reachable interface."""
HTTP_PATH: Final = "/mcp"
_SESSION_HEADER: Final = "mcp-session-id"
LifespanT = TypeVar("LifespanT")

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
        description="The reference engine's tools over MCP (stdio, or HTTP with --http); "
        "one connection, one session.",
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
    parser.add_argument(
        "--http",
        metavar="127.0.0.1:PORT",
        help="serve streamable HTTP at /mcp instead of stdio, a session per MCP session "
        "(loopback only; port 0 picks one; the URL is printed first)",
    )
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

    async def session_of(ctx: ServerRequestContext[EngineSession]) -> EngineSession:
        return ctx.lifespan_context

    return _build(lifespan, session_of)


def _build(
    lifespan: Callable[[Any], AbstractAsyncContextManager[LifespanT]],
    session_of: Callable[[ServerRequestContext[LifespanT]], Awaitable[EngineSession]],
) -> Server[LifespanT]:
    """The SDK server whose handlers run on the session ``session_of`` finds for a request."""

    async def list_tools(
        ctx: ServerRequestContext[LifespanT], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        # PROTO-MCP-TOOLS-1: the API export with its SPEC input schemas, in pool order
        session = await session_of(ctx)
        exported = await anyio.to_thread.run_sync(session.tools)
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
        ctx: ServerRequestContext[LifespanT], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        meta = dict(params.meta or {})
        given = meta.get(TOOL_USE_ID_META)
        tool_use_id = given if isinstance(given, str) and given else None
        session = await session_of(ctx)
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


class HttpSessions:
    """The sessions of a streamable-HTTP server, one per MCP session id (PROTO-MCP-HTTP-1).

    A session begins with the first request of its ``Mcp-Session-Id`` and
    ends at the ``DELETE`` that terminates it, or when the server stops.
    """

    def __init__(self, options: SessionOptions) -> None:
        self._options = options
        self._open: dict[str, EngineSession] = {}
        self._lock = threading.Lock()

    def of(self, session_id: str) -> EngineSession:
        """The session of this MCP session id, begun on first use."""
        with self._lock:
            session = self._open.get(session_id)
            if session is None:
                session = self._open[session_id] = EngineSession(self._options)
            return session

    def end(self, session_id: str) -> None:
        """End the session of this id, if one began (PROTO-END-1)."""
        with self._lock:
            session = self._open.pop(session_id, None)
        if session is not None:
            session.close()

    def end_all(self) -> None:
        """End every open session: the server stops."""
        with self._lock:
            sessions, self._open = list(self._open.values()), {}
        for session in sessions:
            session.close()


def build_http_app(options: SessionOptions) -> Starlette:
    """The ASGI app serving streamable HTTP at ``/mcp``, a session per MCP session.

    PROTO-MCP-HTTP-1: every MCP session id is a session of its own.
    """
    sessions = HttpSessions(options)

    @asynccontextmanager
    async def no_lifespan(_server: Any) -> AsyncIterator[HttpSessions]:
        yield sessions

    async def session_of(ctx: ServerRequestContext[HttpSessions]) -> EngineSession:
        request = ctx.request
        session_id = request.headers.get(_SESSION_HEADER) if isinstance(request, Request) else None
        if not session_id:  # the stateful manager gives every request after initialize one
            raise SetupError("a request with no MCP session id")
        return await anyio.to_thread.run_sync(ctx.lifespan_context.of, session_id)

    manager = StreamableHTTPSessionManager(
        app=_build(no_lifespan, session_of), session_idle_timeout=None
    )

    async def endpoint(scope: Scope, receive: Receive, send: Send) -> None:
        await manager.handle_request(scope, receive, send)
        if scope["type"] == "http" and scope["method"] == "DELETE":
            given = Headers(scope=scope).get(_SESSION_HEADER)
            if given:  # PROTO-MCP-HTTP-1: the DELETE that terminates an MCP session ends ours
                await anyio.to_thread.run_sync(sessions.end, given)

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            try:
                yield
            finally:
                await anyio.to_thread.run_sync(sessions.end_all)

    return Starlette(routes=[Route(HTTP_PATH, endpoint=_Asgi(endpoint))], lifespan=lifespan)


class _Asgi:
    """A plain ASGI callable, which Starlette's ``Route`` serves as it is (every method)."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)


def http_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` of ``--http``, the host the loopback address (PROTO-MCP-HTTP-1).

    Raises:
        SetupError: not ``127.0.0.1:PORT`` with a port from 0 to 65535.
    """
    host, sep, port = text.rpartition(":")
    if not sep or host != HTTP_HOST or not port.isdigit() or int(port) > 65535:
        raise SetupError(f"--http {text!r}: give {HTTP_HOST}:PORT (loopback only; port 0: any)")
    return host, int(port)


async def _serve_http(options: SessionOptions, sock: socket.socket) -> None:
    config = uvicorn.Config(
        build_http_app(options), log_level="warning", lifespan="on", timeout_graceful_shutdown=5
    )
    await uvicorn.Server(config).serve(sockets=[sock])


def main(argv: Sequence[str] | None = None) -> int:
    """Serve one connection on stdin/stdout until it closes; 2 on a bad setup.

    With ``--http 127.0.0.1:PORT``, serve streamable HTTP until stopped,
    after printing the endpoint's URL as the first line on stdout
    (PROTO-MCP-HTTP-1).
    """
    try:
        options = options_from(argv)
        EngineSession(options).close()  # a bad root or settings file fails before serving
        http = _parser().parse_args(argv).http
        address = http_address(http) if http else None
    except SetupError as exc:
        print(f"reference.mcp_server: {exc}", file=sys.stderr)
        return 2
    if address is None:
        anyio.run(_serve, options)
        return 0
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        print(f"reference.mcp_server: --http {http}: {exc}", file=sys.stderr)
        return 2
    sock.listen(64)
    print(f"http://{HTTP_HOST}:{sock.getsockname()[1]}{HTTP_PATH}", flush=True)
    anyio.run(_serve_http, options, sock)
    return 0


if __name__ == "__main__":
    sys.exit(main())
