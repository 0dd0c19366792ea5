"""One MCP server process and the SDK client talking to it, behind blocking calls.

The official SDK is asynchronous; the runner is not. ``ServerProcess`` runs
an event loop on a thread of its own, enters the SDK's ``Client`` over a
``stdio_client`` transport there, and hands each request to that loop with
a deadline. A call that does not come back in time raises ``ServerTimeout``;
``close`` then cancels what is pending and lets the SDK stop the process
(stdin closed, then the process group terminated and killed, every wait
bounded), so a hanging server never stalls a run (PROTO-MCP-HANG-1).

With ``transport="http"`` the process is started here instead: its first
line on stdout is the URL of its streamable-HTTP endpoint, which must be on
the loopback address and come within the start timeout; the SDK's
``streamable_http_client`` talks to it, and ``close`` ends the MCP session
(its ``DELETE``) and then stops the process group, every wait bounded.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import queue
import signal
import subprocess
import threading
from collections.abc import Coroutine, Mapping
from pathlib import Path
from typing import IO, Any, TextIO, TypeVar, cast
from urllib.parse import urlsplit

from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, Implementation, RequestParamsMeta

from conformance.interrupts import uninterrupted

__all__ = ["ServerCrash", "ServerProcess", "ServerTimeout"]

T = TypeVar("T")
# the SDK logs a warning for each call of a tool it has not listed (an unknown tool, a
# passthrough name); the result says what happened, so a run's console is spared them
logging.getLogger("mcp.client.session").setLevel(logging.ERROR)
_STOP_GRACE = 15.0
_LOOPBACK = "127.0.0.1"


class ServerTimeout(Exception):
    """The server did not answer within the deadline."""


class ServerCrash(Exception):
    """The server could not be started, or the connection to it broke."""


class ServerProcess:
    """A started MCP server over stdio: ``list_tools``, ``call_tool``, ``close``.

    Raises (on construction):
        ServerCrash: the process did not start or the handshake failed.
        ServerTimeout: the handshake took longer than ``start_timeout``.
    """

    def __init__(
        self,
        argv: list[str],
        *,
        cwd: str,
        env: Mapping[str, str],
        stderr: Path,
        start_timeout: float,
        mode: str = "legacy",
        validate_output: bool = True,
        transport: str = "stdio",
    ) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._stop: asyncio.Event | None = None
        self._client: Client | None = None
        self._validate_output = validate_output
        self._errlog: TextIO = stderr.open("a", encoding="utf-8")
        self._process: subprocess.Popen[str] | None = None
        self.server_info: Implementation | None = None
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        if transport == "http":
            try:
                url = self._start_http(argv, cwd=cwd, env=env, timeout=start_timeout)
            except BaseException:
                self.close()
                raise
            connection: Any = streamable_http_client(url)
        else:
            params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=cwd, env=dict(env))
            connection = stdio_client(params, errlog=self._errlog)
        self._main = asyncio.run_coroutine_threadsafe(
            self._serve(connection, mode, ready), self._loop
        )
        try:
            ready.result(timeout=start_timeout)
        except concurrent.futures.TimeoutError:
            self.close()
            message = f"the server did not finish its handshake in {start_timeout:g} s"
            raise ServerTimeout(message) from None
        except (SystemExit, KeyboardInterrupt):  # a signal ends the run: not a crash
            self.close()
            raise
        except BaseException as exc:  # the handshake's own failure, a cancellation too
            self.close()
            raise ServerCrash(f"the server did not start: {_describe(exc)}") from exc

    def _start_http(
        self, argv: list[str], *, cwd: str, env: Mapping[str, str], timeout: float
    ) -> str:
        """Start an HTTP server process; the loopback URL its first stdout line gives.

        Raises:
            ServerCrash: it did not start, exited, or named no loopback URL.
            ServerTimeout: no line came within ``timeout``.
        """
        try:
            with uninterrupted():  # PROTO-KILL-1: a process started is a process recorded
                self._process = process = subprocess.Popen(
                    argv,
                    cwd=cwd,
                    env=dict(env),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=self._errlog,
                    text=True,
                    start_new_session=True,
                )
        except OSError as exc:
            raise ServerCrash(f"the server did not start: {exc}") from exc
        assert process.stdout is not None
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(
            target=_drain, args=(process.stdout, lines, self._errlog), daemon=True
        ).start()
        try:
            first = lines.get(timeout=timeout).strip()
        except queue.Empty:
            raise ServerTimeout(f"the server named no URL in {timeout:g} s") from None
        parts = urlsplit(first)
        if not first or parts.scheme != "http" or parts.hostname != _LOOPBACK:
            raise ServerCrash(
                f"the server's first line is not an http://{_LOOPBACK} URL: {first!r}"
            )
        return first

    async def _serve(
        self, connection: Any, mode: str, ready: concurrent.futures.Future[None]
    ) -> None:
        self._stop = asyncio.Event()
        try:
            async with Client(connection, mode=mode, raise_exceptions=False) as client:
                if not self._validate_output:
                    await client.list_tools()  # the SDK lists before it first validates
                self._client = client
                self.server_info = client.server_info
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise
        finally:
            self._client = None

    def _run(self, make: Coroutine[Any, Any, T], timeout: float) -> T:
        if self._client is None:
            make.close()
            raise ServerCrash("the connection to the server is closed")
        future = asyncio.run_coroutine_threadsafe(make, self._loop)
        try:
            return future.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise ServerTimeout(f"no answer within {timeout:g} s") from None
        except MCPError:
            raise
        except Exception as exc:
            raise ServerCrash(_describe(exc)) from exc

    def list_tools(self, timeout: float) -> list[dict[str, Any]]:
        """The server's tools as JSON objects (``name``, ``description``, ``inputSchema``)."""
        client = self._client
        if client is None:
            raise ServerCrash("the connection to the server is closed")
        listed = self._run(client.list_tools(), timeout)
        return [t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools]

    def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        timeout: float,
        meta: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """One ``tools/call``: the result as its JSON object (``content``, ``isError``, ``_meta``).

        Raises:
            MCPError: the server answered with a JSON-RPC error.
            ServerTimeout, ServerCrash: no answer in time, or the connection broke.
        """
        client = self._client
        if client is None:
            raise ServerCrash("the connection to the server is closed")
        if not self._validate_output:
            _forget_output_schemas(client)
        request_meta = cast(RequestParamsMeta, dict(meta)) if meta else None
        # the deadline is ours, not the SDK's: its own would come back as a JSON-RPC error
        coroutine = client.call_tool(name, arguments, meta=request_meta)
        result: CallToolResult = self._run(coroutine, timeout)
        return result.model_dump(by_alias=True, exclude_none=True, mode="json")

    def close(self) -> None:
        """Stop the server and the loop; bounded even when the server hangs.

        A signal that comes meanwhile is raised once all is stopped, not swallowed with
        the server's own failures.
        """
        with uninterrupted():
            self._close_now()

    def _close_now(self) -> None:
        loop = self._loop
        if loop.is_closed():
            return
        stop = self._stop
        if stop is not None:
            loop.call_soon_threadsafe(stop.set)
        main = getattr(self, "_main", None)
        if main is not None:
            with contextlib.suppress(BaseException):
                main.result(timeout=_STOP_GRACE)
            if not main.done():
                main.cancel()
                with contextlib.suppress(BaseException):
                    main.result(timeout=_STOP_GRACE)
        if self._process is not None:
            _stop_group(self._process)
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(timeout=_STOP_GRACE)
        if not self._thread.is_alive():
            loop.close()
        with contextlib.suppress(OSError):
            self._errlog.close()


def _drain(stream: IO[str], lines: queue.Queue[str], log: TextIO) -> None:
    """Hand the first line of ``stream`` to ``lines``, the rest to the server's log."""
    first = True
    with contextlib.suppress(OSError, ValueError):
        for line in stream:
            if first:
                lines.put(line)
                first = False
            else:
                log.write(line)
    if first:
        lines.put("")  # the server exited before it named its URL


def _stop_group(process: subprocess.Popen[str]) -> None:
    """Terminate the server's process group, then kill it; every wait bounded."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if process.poll() is not None:
            break
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=_STOP_GRACE / 3)
    if process.stdout is not None:
        with contextlib.suppress(OSError):
            process.stdout.close()


def _forget_output_schemas(client: Client) -> None:
    """Make the SDK read results as returned, without checking them against output schemas.

    The SDK checks a result's structured content against the tool's output
    schema and raises when it is missing; a mapping with ``validate_output:
    false`` judges the tool system, not the peer's MCP conformance, so the
    result is read as the peer returned it. The SDK has no switch for this:
    the schemas it cached are set to none (each call, since a listing
    refills them).
    """
    schemas = getattr(client.session, "_tool_output_schemas", None)
    if isinstance(schemas, dict):
        for name in schemas:
            schemas[name] = None


def _describe(exc: BaseException) -> str:
    """The innermost messages of an exception group, or the exception itself."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions)
    return f"{type(exc).__name__}: {exc}"
