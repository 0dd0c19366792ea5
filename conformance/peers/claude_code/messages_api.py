"""A scripted Messages API on 127.0.0.1: the model Claude Code talks to under test.

Claude Code sends ``POST /v1/messages`` with the conversation so far. The
main loop's requests (those that offer tools) are handed to the
connector one at a time (``next_turn``), which answers each with the
assistant turn it scripts (``answer``): tool_use blocks, or text that ends
the conversation. Every other request (titles, summaries, side questions)
gets a short text at once. ``/v1/messages/count_tokens`` is answered from
cl100k_base, as the reference counts for the Read token gate.

Answers are streamed as server-sent events when the request asks for it,
block by block, with an optional pause between blocks so a streaming
executor sees them arrive apart. Every wait is bounded: a request nobody
answers within ``hold`` seconds gets ``end_turn`` text, so the CLI exits.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import queue
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from reference.tokens import exact_count  # the reference's own cl100k_base counter

__all__ = ["MainRequest", "ScriptedModel", "Turn", "count_tokens"]

_MODEL = "claude-sonnet-4-5"
_HOLD = 600.0


def count_tokens(body: Mapping[str, Any]) -> int:
    """cl100k_base tokens of every text in a count_tokens request (its messages and system)."""
    texts: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, Mapping):
            for key, item in value.items():
                if key in {"text", "content", "input"} or not isinstance(item, str):
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(body.get("messages", []))
    walk(body.get("system", []))
    return exact_count("\n".join(texts)).tokens if texts else 0


@dataclass(frozen=True, slots=True)
class Turn:
    """An assistant turn to send: content blocks, the stop reason, pauses between blocks."""

    content: Sequence[Mapping[str, Any]]
    stop_reason: str = "tool_use"
    block_delay: float = 0.0


@dataclass(slots=True)
class MainRequest:
    """One request of Claude Code's main loop, waiting for its scripted answer."""

    body: dict[str, Any]
    _answer: queue.SimpleQueue[Turn] = field(default_factory=queue.SimpleQueue)

    @property
    def last_user_content(self) -> list[Any]:
        """The content blocks of the last user message (where tool_result blocks arrive)."""
        for message in reversed(self.body.get("messages", [])):
            if message.get("role") == "user":
                content = message.get("content", [])
                return [{"type": "text", "text": content}] if isinstance(content, str) else content
        return []

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tool definitions Claude Code offered the model in this request."""
        tools: list[dict[str, Any]] = self.body.get("tools", [])
        return tools


class ScriptedModel:
    """The HTTP server and the hand-off of main-loop requests to the connector.

    ``start`` binds a free port on 127.0.0.1 and serves from a thread of its
    own; ``close`` stops it.
    """

    def __init__(self, hold: float = _HOLD) -> None:
        self.hold = hold
        self._main: queue.SimpleQueue[MainRequest] = queue.SimpleQueue()
        self.side_requests: list[dict[str, Any]] = []
        """Requests outside the main loop, kept for diagnosis."""
        self._ids = itertools.count(1)
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                """Silent: the CLI's traffic is not the run's log."""

            def do_POST(self) -> None:
                model._serve(self)

            def do_GET(self) -> None:
                _reply_json(self, 404, {"type": "error", "error": {"type": "not_found_error"}})

            do_HEAD = do_GET  # noqa: N815

        self._handler = Handler
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> ScriptedModel:
        """Serve on a free loopback port; returns itself, for ``ScriptedModel().start()``."""
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="toolconf-messages-api", daemon=True
        )
        self._thread.start()
        return self

    @property
    def base_url(self) -> str:
        """What ``ANTHROPIC_BASE_URL`` is set to."""
        assert self._server is not None, "start() first"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def next_turn(self, timeout: float) -> MainRequest | None:
        """The next main-loop request, or None when none came within ``timeout`` seconds."""
        try:
            return self._main.get(timeout=timeout)
        except queue.Empty:
            return None

    def drain(self) -> None:
        """Answer every waiting main-loop request with end_turn (a session is over)."""
        while True:
            try:
                pending = self._main.get_nowait()
            except queue.Empty:
                return
            answer(pending, Turn([{"type": "text", "text": "Done."}], "end_turn"))

    def close(self) -> None:
        """Stop serving; waiting requests get end_turn first. Safe before ``start``."""
        self.drain()
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    # -- serving ------------------------------------------------------------

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        try:
            body = json.loads(handler.rfile.read(length) or b"{}")
        except ValueError:
            _reply_json(handler, 400, {"type": "error", "error": {"type": "invalid_request_error"}})
            return
        path = handler.path.split("?", 1)[0]
        if path.endswith("/count_tokens"):
            _reply_json(handler, 200, {"input_tokens": count_tokens(body)})
            return
        if not path.endswith("/v1/messages"):
            _reply_json(handler, 404, {"type": "error", "error": {"type": "not_found_error"}})
            return
        # the main loop offers its tools; a pool without Read (a deny rule removed it) is one too
        offered = [tool for tool in body.get("tools", []) if isinstance(tool, dict)]
        if offered:
            request = MainRequest(body)
            self._main.put(request)
            try:
                turn = request._answer.get(timeout=self.hold)
            except queue.Empty:
                turn = Turn([{"type": "text", "text": "Done."}], "end_turn")
        else:
            self.side_requests.append(body)
            turn = Turn([{"type": "text", "text": "ok"}], "end_turn")
        self._send(handler, body, turn)

    def _send(self, handler: BaseHTTPRequestHandler, body: Mapping[str, Any], turn: Turn) -> None:
        message_id = f"msg_toolconf_{next(self._ids)}"
        usage = {"input_tokens": 1, "output_tokens": 1}
        if not body.get("stream"):
            content = [dict(block) for block in turn.content]
            _reply_json(
                handler,
                200,
                {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model", _MODEL),
                    "content": content,
                    "stop_reason": turn.stop_reason,
                    "stop_sequence": None,
                    "usage": usage,
                },
            )
            return
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.close_connection = True
        start = {
            "type": "message_start",
            "message": {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": body.get("model", _MODEL),
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage,
            },
        }
        with contextlib.suppress(OSError):
            _event(handler, "message_start", start)
            for index, block in enumerate(turn.content):
                if index and turn.block_delay:
                    time.sleep(turn.block_delay)
                for name, data in _block_events(index, block):
                    _event(handler, name, data)
            delta = {
                "type": "message_delta",
                "delta": {"stop_reason": turn.stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": 1},
            }
            _event(handler, "message_delta", delta)
            _event(handler, "message_stop", {"type": "message_stop"})


def answer(request: MainRequest, turn: Turn) -> None:
    """Release a waiting main-loop request with ``turn`` as the model's answer."""
    request._answer.put(turn)


def _block_events(index: int, block: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    if block.get("type") == "tool_use":
        start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block.get("input", {}))}
    else:
        start = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": str(block.get("text", ""))}
    return [
        (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start},
        ),
        ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": index}),
    ]


def _event(handler: BaseHTTPRequestHandler, name: str, data: Mapping[str, Any]) -> None:
    handler.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
    handler.wfile.flush()


def _reply_json(handler: BaseHTTPRequestHandler, status: int, data: Mapping[str, Any]) -> None:
    payload = json.dumps(data).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(payload)))
    handler.end_headers()
    handler.wfile.write(payload)
