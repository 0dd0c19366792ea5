"""A scripted model API on the loopback: the model an agent CLI talks to under test.

``ScriptedModel`` serves one dialect (``dialect.Dialect``), once started,
over HTTP on 127.0.0.1 and, when asked, on a Unix socket too (the loopback-only network
namespace relays its own 127.0.0.1 port to that socket). Every generation
request is one of two kinds:

- a **main-loop request** (by default one that offers tools; a peer
  definition may also require named tools) is handed to the caller
  (``next_request``), which answers it with the next scripted turn
  (``MainRequest.answer``); the request carries the tool results of the
  previous turn exactly as the agent shows them to its model;
- a **side request** (a title, a summary, a memory agent: no tools) gets a
  short text at once and never uses up a scripted turn.

Everything is bounded: bodies over ``max_body`` bytes are refused (413),
reading a body times out, at most ``max_connections`` are served at once, a
main request nobody answers within ``hold`` seconds gets a final text turn
(so the agent ends), and a client that disconnects while its main request
waits is noticed: the request is marked ``gone`` and never handed out.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import json
import os
import queue
import select
import socket
import socketserver
import threading
import time
import zlib
from collections.abc import Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

from conformance.peers.agent.model_api.dialect import Dialect, Route
from conformance.peers.agent.model_api.turns import OfferedTool, ToolResult, Turn

__all__ = ["MainRequest", "ScriptedModel"]

MAX_BODY: Final = 64 * 1024 * 1024
"""The largest request body accepted, decoded (a conversation holding a 2 MiB file many times)."""
READ_TIMEOUT: Final = 30.0
"""Seconds a client may take to send a request once connected."""
MAX_CONNECTIONS: Final = 32
HOLD: Final = 600.0
_POLL: Final = 0.1
_KEEP: Final = 64
_BUSY: Final = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


class MainRequest:
    """One main-loop request, waiting for its scripted answer."""

    def __init__(self, dialect: Dialect, path: str, body: Mapping[str, Any]) -> None:
        self.dialect = dialect
        self.path = path
        self.body = body
        self.tools: list[OfferedTool] = dialect.offered_tools(body)
        """The tools the agent offered its model in this request."""
        self.gone = threading.Event()
        """Set when the client disconnected before an answer was sent."""
        self.delivered = threading.Event()
        """Set once the whole answer was written to the client."""
        self.expired = threading.Event()
        """Set when nobody answered within the hold and the final text went instead."""
        self._answer: queue.SimpleQueue[Turn] = queue.SimpleQueue()

    @property
    def results(self) -> list[ToolResult]:
        """Every tool result the request's conversation carries, oldest first."""
        return self.dialect.tool_results(self.body)

    def results_for(self, calls: Sequence[tuple[str, str]]) -> dict[str, ToolResult]:
        """The result of each ``(call id, tool name)`` of the previous turn, by call id.

        Results are matched by id; where the dialect's results carry no id
        (Gemini may omit it), the last group's results are matched to the
        calls in order, by name. A call without a result is left out.
        """
        results = self.results
        by_id = {r.call_id: r for r in results if r.call_id is not None}
        found = {call_id: by_id[call_id] for call_id, _ in calls if call_id in by_id}
        if len(found) == len(calls) or not results:
            return found
        last = max(r.group for r in results)
        anonymous = [r for r in results if r.group == last and r.call_id is None]
        for call_id, name in calls:
            if call_id in found:
                continue
            for index, result in enumerate(anonymous):
                if result.name in (None, name):
                    found[call_id] = anonymous.pop(index)
                    break
        return found

    def answer(self, turn: Turn) -> bool:
        """Release the request with ``turn``; False when its client is already gone."""
        if self.gone.is_set():
            return False
        self._answer.put(turn)
        return True

    def offers(self, name: str) -> bool:
        """Whether the agent offered a tool named ``name``."""
        return any(tool.name == name for tool in self.tools)


class ScriptedModel:
    """The HTTP server of one dialect, and the hand-off of main-loop requests."""

    def __init__(
        self,
        dialect: Dialect,
        *,
        model: str = "toolconf-model",
        side_text: str = "ok",
        main_requires: Sequence[str] = (),
        unix_path: Path | None = None,
        hold: float = HOLD,
        max_body: int = MAX_BODY,
        read_timeout: float = READ_TIMEOUT,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        self.dialect = dialect
        self.model = model
        self.side_text = side_text
        self.main_requires = tuple(main_requires)
        self.hold = hold
        self.max_body = max_body
        self._main: queue.SimpleQueue[MainRequest] = queue.SimpleQueue()
        self._ids = itertools.count(1)
        self._slots = threading.BoundedSemaphore(max_connections)
        self.side_requests: collections.deque[dict[str, Any]] = collections.deque(maxlen=_KEEP)
        """Side requests answered with text, kept (path and body) for diagnosis."""
        self.strays: collections.deque[str] = collections.deque(maxlen=_KEEP)
        """Requests for paths this dialect does not serve, and refused bodies, as text."""
        self.main_count = 0
        """Main-loop requests received so far."""
        self.unix_path = unix_path
        self._handler = _handler_class(self, read_timeout)
        self._tcp: ThreadingHTTPServer | None = None
        self._servers: list[socketserver.BaseServer] = []

    def start(self) -> ScriptedModel:
        """Serve on a free loopback port (and the Unix socket); returns itself."""
        self._tcp = ThreadingHTTPServer(("127.0.0.1", 0), self._handler)
        self._tcp.daemon_threads = True
        self._servers.append(self._tcp)
        if self.unix_path is not None:
            with contextlib.suppress(FileNotFoundError):
                self.unix_path.unlink()
            self._servers.append(_UnixHTTPServer(str(self.unix_path), self._handler))
        for server in self._servers:
            threading.Thread(
                target=server.serve_forever,
                args=(_POLL,),
                name=f"toolconf-{self.dialect.name}",
                daemon=True,
            ).start()
        return self

    @property
    def port(self) -> int:
        """The TCP port on 127.0.0.1 (once started)."""
        if self._tcp is None:
            raise RuntimeError("the scripted model is not started")
        return int(self._tcp.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``, without a path."""
        return f"http://127.0.0.1:{self.port}"

    def next_request(self, timeout: float) -> MainRequest | None:
        """The next main-loop request whose client still waits, or None after ``timeout`` s."""
        deadline = _now() + timeout
        while True:
            left = deadline - _now()
            try:
                request = self._main.get(timeout=max(0.0, min(left, _POLL)))
            except queue.Empty:
                if left <= 0:
                    return None
                continue
            if not request.gone.is_set():
                return request

    def drain(self, text: str = "Done.") -> None:
        """Answer every waiting main-loop request with a final text turn."""
        while True:
            try:
                request = self._main.get_nowait()
            except queue.Empty:
                return
            request.answer(Turn(text=text))

    def close(self) -> None:
        """Stop serving; waiting requests get a final text turn first. Safe to call twice."""
        self.drain()
        servers, self._servers = self._servers, []
        for server in servers:
            server.shutdown()
            server.server_close()
        if self.unix_path is not None:
            with contextlib.suppress(OSError):
                self.unix_path.unlink()

    # -- serving ------------------------------------------------------------

    def serve(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        """Answer one HTTP request (the handler's entry point)."""
        parts = urlsplit(handler.path)
        route = self.dialect.route(method, parts.path, parse_qs(parts.query))
        try:
            raw = _read_body(handler, self.max_body) if method == "POST" else b""
        except _Refused as exc:
            self.strays.append(f"{method} {parts.path}: {exc.message}")
            handler.close_connection = True
            self._reply(handler, exc.status, self.dialect.error(exc.status, exc.message))
            return
        if route is None:
            self.strays.append(f"{method} {parts.path}")
            self._reply(handler, 404, self.dialect.error(404, f"no such endpoint: {parts.path}"))
            return
        if route.kind == "models":
            self._reply(handler, 200, self.dialect.models(self.model))
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        if not isinstance(body, dict):
            self.strays.append(f"{method} {parts.path}: body is not a JSON object")
            self._reply(handler, 400, self.dialect.error(400, "the body is not a JSON object"))
            return
        if route.kind == "count":
            self._reply(handler, 200, self.dialect.count(body))
            return
        request = MainRequest(self.dialect, parts.path, body)
        if self._is_main(request):
            self.main_count += 1
            self._main.put(request)
            turn = self._hold(handler, request)
            if turn is None:
                return
        else:
            self.side_requests.append({"path": parts.path, "body": body})
            turn = Turn(text=self.dialect.side_text(body, self.side_text))
        self._send(handler, route, body, turn, request)

    def _is_main(self, request: MainRequest) -> bool:
        offered = [tool for tool in request.tools if tool.kind != "other"]
        return bool(offered) and all(request.offers(name) for name in self.main_requires)

    def _hold(self, handler: BaseHTTPRequestHandler, request: MainRequest) -> Turn | None:
        """The scripted turn for ``request``; None when its client disconnected first."""
        deadline = _now() + self.hold
        while _now() < deadline:
            try:
                return request._answer.get(timeout=_POLL)
            except queue.Empty:
                pass
            if _disconnected(handler.connection):
                request.gone.set()
                handler.close_connection = True
                return None
        request.expired.set()
        return Turn(text="Done.")

    def _send(
        self,
        handler: BaseHTTPRequestHandler,
        route: Route,
        body: Mapping[str, Any],
        turn: Turn,
        request: MainRequest,
    ) -> None:
        response_id = f"toolconf_{next(self._ids)}"
        if not self.dialect.wants_stream(body, route):
            if self._reply(handler, 200, self.dialect.respond(body, turn, response_id)):
                request.delivered.set()
            return
        handler.close_connection = True
        try:
            handler.send_response(200)
            handler.send_header("Content-Type", "text/event-stream")
            handler.send_header("Cache-Control", "no-cache")
            handler.send_header("Connection", "close")
            handler.end_headers()
            for frame in self.dialect.stream(body, turn, response_id):
                if frame.pause > 0:
                    handler.wfile.flush()
                    threading.Event().wait(frame.pause)
                handler.wfile.write(frame.data)
            handler.wfile.flush()
        except OSError:
            request.gone.set()
            return
        request.delivered.set()

    def _reply(self, handler: BaseHTTPRequestHandler, status: int, data: Mapping[str, Any]) -> bool:
        payload = json.dumps(data).encode()
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(payload)))
            if handler.close_connection:
                handler.send_header("Connection", "close")
            handler.end_headers()
            handler.wfile.write(payload)
            handler.wfile.flush()
        except OSError:
            handler.close_connection = True
            return False
        return True

    def slot(self) -> bool:
        """Take a connection slot; False when ``max_connections`` are already served."""
        return self._slots.acquire(blocking=False)

    def release(self) -> None:
        """Give a connection slot back."""
        self._slots.release()


class _UnixHTTPServer(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True

    def server_bind(self) -> None:
        super().server_bind()
        os.chmod(str(self.server_address), 0o600)


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _handler_class(model: ScriptedModel, read_timeout: float) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = read_timeout

        def log_message(self, format: str, *args: Any) -> None:
            """Silent: an agent's traffic is not the run's log."""

        def address_string(self) -> str:
            return "127.0.0.1"  # a Unix socket peer has no address

        def handle(self) -> None:
            if not model.slot():
                with contextlib.suppress(OSError):
                    self.wfile.write(_BUSY)
                return
            try:
                super().handle()
            except (OSError, TimeoutError):
                self.close_connection = True
            finally:
                model.release()

        def do_POST(self) -> None:
            model.serve(self, "POST")

        def do_GET(self) -> None:
            model.serve(self, "GET")

        def do_PUT(self) -> None:
            model.serve(self, "PUT")

        def do_DELETE(self) -> None:
            model.serve(self, "DELETE")

    return Handler


def _read_body(handler: BaseHTTPRequestHandler, limit: int) -> bytes:
    """The request body, bounded by ``limit`` bytes (raw and decoded), decoded if compressed."""
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        raw = _read_chunked(handler, limit)
    else:
        try:
            length = int(handler.headers.get("Content-Length") or 0)
        except ValueError as exc:
            raise _Refused(400, "bad Content-Length") from exc
        if length < 0 or length > limit:
            raise _Refused(413, f"the body has {length} bytes; at most {limit} are accepted")
        raw = handler.rfile.read(length)
        if len(raw) < length:
            raise _Refused(400, "the body ended early")
    encoding = handler.headers.get("Content-Encoding", "identity").lower()
    if encoding in {"identity", ""}:
        return raw
    if encoding in {"gzip", "deflate"}:
        wbits = 16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS
        decoder = zlib.decompressobj(wbits)
        try:
            decoded = decoder.decompress(raw, limit + 1)
        except zlib.error as exc:
            raise _Refused(400, f"the {encoding} body does not decode: {exc}") from exc
        if len(decoded) > limit:
            raise _Refused(413, f"the decoded body passes {limit} bytes")
        return decoded
    raise _Refused(415, f"Content-Encoding {encoding} is not supported here")


def _read_chunked(handler: BaseHTTPRequestHandler, limit: int) -> bytes:
    pieces: list[bytes] = []
    total = 0
    while True:
        line = handler.rfile.readline(1024)
        try:
            size = int(line.split(b";", 1)[0].strip() or b"x", 16)
        except ValueError as exc:
            raise _Refused(400, "bad chunk size") from exc
        if size == 0:
            while handler.rfile.readline(1024).strip():
                pass  # trailers
            return b"".join(pieces)
        total += size
        if total > limit:
            raise _Refused(413, f"the chunked body passes {limit} bytes")
        piece = handler.rfile.read(size)
        if len(piece) < size:
            raise _Refused(400, "the chunked body ended early")
        pieces.append(piece)
        handler.rfile.readline(8)


def _disconnected(connection: socket.socket) -> bool:
    """Whether the peer closed ``connection`` (readable with nothing to read)."""
    try:
        readable, _, _ = select.select([connection], [], [], 0)
        if not readable:
            return False
        return connection.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


def _now() -> float:
    return time.monotonic()
