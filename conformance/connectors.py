"""Connectors: how the runner reaches an implementation.

A connector is named by a string ``scheme[:rest]``:

- ``direct`` (the default): the reference engine in this process,
  ``reference.engine.Engine``; ``direct:module:attr`` uses another in-process
  engine class or factory (anything with ``handle(request) -> response``).
- ``stdio:<command>``: any implementation behind an adapter process speaking
  protocol v1 on stdin/stdout (the command is split with ``shlex``).
- ``mcp:<mapping>``: an MCP server played through a mapping file (``conformance.mcp``).
- ``mutant:<name>``: reserved for the deliberately broken variants of the
  reference; the factory is looked up lazily as ``conformance.mutants:connect``.

New schemes are added with ``register_connector``. Every connector gives the
same guarantees: each request is answered within its timeout or raises an
``AdapterFailure`` (crash, timeout, protocol error, internal error), and after such a failure
``restart()`` brings up a fresh instance with ``hello`` replayed.
"""

from __future__ import annotations

import collections
import contextlib
import importlib
import json
import os
import queue
import shlex
import shutil
import subprocess
import tempfile
import threading
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal, Protocol, TypeAlias, cast

from conformance.errors import (
    AdapterCrash,
    AdapterError,
    AdapterFailure,
    AdapterInternalError,
    AdapterTimeout,
    AdapterUnsupported,
    ConformanceError,
    ProtocolError,
)
from conformance.isolation import descendants, isolation_available, kill_tree, scrubbed_env, wrap
from conformance.protocol import PROTOCOL_VERSION, Hello, check_answer, parse_hello
from conformance.sandbox import remove_tree

__all__ = [
    "Connector",
    "ConnectorFactory",
    "ConnectorOptions",
    "DirectConnector",
    "EngineLike",
    "StdioConnector",
    "connect",
    "known_schemes",
    "register_connector",
]

DEFAULT_TIMEOUT = 10.0
_STDERR_KEEP = 64 * 1024


class EngineLike(Protocol):
    """An in-process implementation: one protocol-v1 request in, one response out."""

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """Answer ``request`` (including its ``seq``)."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectorOptions:
    """Settings every connector factory receives."""

    timeout: float = DEFAULT_TIMEOUT
    """Seconds to wait for each response."""
    hello_timeout: float = 30.0
    """Seconds to wait for the first response, which may include start-up."""
    isolation: Literal["auto", "on", "off"] = "auto"
    """PROTO-ISOLATE-1 for adapter processes: ``auto`` isolates when the host
    permits, ``on`` refuses to start without isolation, ``off`` never isolates."""
    pass_env: tuple[str, ...] = ()
    """Names of the runner's variables an adapter inherits beyond the allowlist (PROTO-ENV-1)."""


class Connector(Protocol):
    """A live link to one implementation."""

    description: str
    """The spec string it was made from, for reports."""

    @property
    def hello(self) -> Hello | None:
        """The handshake of the running instance, or None before ``start``."""
        ...

    def start(self) -> Hello:
        """Bring the implementation up and shake hands.

        Raises:
            AdapterFailure: including ``VersionMismatch`` for another protocol.
        """
        ...

    def restart(self) -> Hello:
        """``close`` then ``start``: a fresh instance after a failure."""
        ...

    def request(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """Send one request (``seq`` is added) and return its answer.

        Raises:
            AdapterFailure: crash, timeout, bad JSON, wrong seq, or an ``error``
                answer (``AdapterInternalError`` for ``kind: "internal"``).
        """
        ...

    def request_raw(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """Send a request as given and return the answer, even an ``error`` one.

        A ``seq`` is added (and its echo checked) only when ``body`` has none,
        so scenarios can probe how bad requests are answered. The answer must
        still be a well-formed one (``protocol.check_answer``): an error answer,
        or the served answer of the command named.

        Raises:
            AdapterFailure: crash, timeout, bad JSON, a ``SchemaViolation``, or
                (added seq only) wrong seq.
        """
        ...

    def take_stderr(self) -> str:
        """The implementation's log output since the last call (may be truncated)."""
        ...

    def close(self) -> None:
        """Stop the implementation; safe to call twice."""
        ...


class _BaseConnector:
    """Sequence numbers, the handshake and answer checks shared by every connector."""

    def __init__(self, description: str, options: ConnectorOptions) -> None:
        self.description = description
        self.options = options
        self._seq = 0
        self._hello: Hello | None = None
        self._failed = False

    @property
    def hello(self) -> Hello | None:
        return self._hello

    def _launch(self) -> None:
        raise NotImplementedError

    def _exchange(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        raise NotImplementedError

    def _stop(self, *, force: bool) -> None:
        raise NotImplementedError

    def close(self) -> None:
        self._stop(force=self._failed)

    def start(self) -> Hello:
        self._seq = 0
        self._hello = None
        self._failed = False
        self._launch()
        try:
            response = self._send(
                {"cmd": "hello", "protocol": PROTOCOL_VERSION}, self.options.hello_timeout
            )
            self._hello = parse_hello(response)
        except AdapterFailure:
            self._stop(force=True)
            raise
        return self._hello

    def restart(self) -> Hello:
        self._stop(force=True)
        return self.start()

    def request(self, body: Mapping[str, Any]) -> dict[str, Any]:
        return self._send(body, self.options.timeout)

    def request_raw(self, body: Mapping[str, Any]) -> dict[str, Any]:
        if "seq" not in body:
            response = self._send(body, self.options.timeout, refusals_ok=True)
        else:
            response = self._transmit(dict(body), self.options.timeout)
        check_answer(body.get("cmd"), response)
        return response

    def _transmit(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        try:
            return self._exchange(request, timeout)
        except AdapterFailure:
            self._failed = True
            raise

    def _send(
        self, body: Mapping[str, Any], timeout: float, *, refusals_ok: bool = False
    ) -> dict[str, Any]:
        self._seq += 1
        request = {"seq": self._seq, **body}
        response = self._transmit(request, timeout)
        if response.get("seq") != self._seq:
            self._failed = True
            got = response.get("seq")
            raise ProtocolError(
                f"answer to {body.get('cmd')!r} has seq {got!r}, expected {self._seq}"
            )
        error = response.get("error")
        if error is not None and not refusals_ok:
            check_answer(body.get("cmd"), response)
            cmd = body.get("cmd")
            if error["kind"] == "internal":  # PROTO-INTERNAL-1
                detail = f"\n{error['traceback']}" if error.get("traceback") else ""
                raise AdapterInternalError(
                    f"adapter failed on {cmd!r} (internal): {error['message']}{detail}"
                )
            if error["kind"] == "unsupported":  # PROTO-UNSUPPORTED-1
                raise AdapterUnsupported(f"{cmd} not supported: {error['message']}")
            raise AdapterError(
                f"adapter refused {cmd!r} ({error['kind']}): {error['message']}", error["kind"]
            )
        return response


class _Worker:
    """A daemon thread that runs one engine call at a time, so calls can time out.

    A hung call leaves its worker blocked forever; the worker is then
    abandoned (daemon threads never delay interpreter exit).
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], Any] | None] = queue.SimpleQueue()
        self._done: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
        threading.Thread(target=self._loop, name="toolconf-direct", daemon=True).start()

    def _loop(self) -> None:
        while (job := self._jobs.get()) is not None:
            try:
                self._done.put((True, job()))
            except BaseException as exc:
                self._done.put((False, exc))

    def run(self, job: Callable[[], Any], timeout: float) -> tuple[bool, Any]:
        self._jobs.put(job)
        return self._done.get(timeout=timeout)

    def stop(self) -> None:
        """Let the thread end once it is idle."""
        self._jobs.put(None)


class DirectConnector(_BaseConnector):
    """An in-process engine, made afresh by ``factory`` on every (re)start.

    Requests and answers go through a JSON round trip, so the engine sees
    exactly what a stdio adapter would; an answer that cannot be encoded is an
    internal error, as the reference adapter reports it (PROTO-INTERNAL-1). The
    reference engine answers its own exceptions with ``kind: "internal"``; an
    exception that escapes another engine's ``handle`` counts as a crash (the
    in-process twin of an adapter that died), its traceback being the
    connector's stderr.
    """

    def __init__(
        self,
        factory: Callable[[], EngineLike],
        *,
        description: str = "direct",
        options: ConnectorOptions | None = None,
    ) -> None:
        super().__init__(description, options or ConnectorOptions())
        self._factory = factory
        self._engine: EngineLike | None = None
        self._worker: _Worker | None = None
        self._stderr: list[str] = []

    def _launch(self) -> None:
        self._worker = _Worker()
        ok, value = self._call(self._factory, self.options.hello_timeout)
        if not ok:
            raise AdapterCrash(f"creating the engine raised {value!r}")
        self._engine = cast(EngineLike, value)

    def _call(self, job: Callable[[], Any], timeout: float) -> tuple[bool, Any]:
        assert self._worker is not None, "start() first"
        try:
            ok, value = self._worker.run(job, timeout)
        except queue.Empty:
            self._worker = None
            raise AdapterTimeout(f"no answer within {timeout:g} s") from None
        if not ok:
            self._stderr.append("".join(traceback.format_exception(value)))
        return ok, value

    def _exchange(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        engine = self._engine
        if engine is None or self._worker is None:
            raise AdapterCrash("the engine is not running")
        wire = json.loads(json.dumps(request))
        ok, value = self._call(lambda: engine.handle(wire), timeout)
        if not ok:
            self._engine = None
            raise AdapterCrash(f"engine.handle raised {type(value).__name__}: {value}")
        try:
            response = json.loads(json.dumps(value, allow_nan=False))
        except (TypeError, ValueError) as exc:
            # PROTO-INTERNAL-1: what the stdio adapter answers when it cannot encode an answer
            raise AdapterInternalError(f"answer is not JSON: {type(exc).__name__}: {exc}") from exc
        if not isinstance(response, dict):
            raise ProtocolError(f"answer is not a JSON object: {value!r:.200}")
        return response

    def take_stderr(self) -> str:
        text = "".join(self._stderr)
        self._stderr.clear()
        return text

    def _stop(self, *, force: bool) -> None:
        if self._worker is not None:
            self._worker.stop()
        self._engine = None
        self._worker = None
        self._hello = None


class StdioConnector(_BaseConnector):
    """An adapter process: JSON lines on stdin/stdout, stderr kept for reports.

    Lines are read whole by a reader thread, so an answer written in several
    chunks is fine. EOF or an exit is a crash; silence past the timeout is a
    timeout; anything but one JSON object per line is a protocol error. After
    any of these the process is killed by ``close``/``restart``.

    Each start gets a private directory of its own (removed at stop) holding
    the adapter's ``HOME`` and ``TMPDIR``; the adapter inherits only the
    allowlisted variables plus ``env`` (PROTO-ENV-1), runs in namespaces of
    its own when ``options.isolation`` allows and the host permits
    (PROTO-ISOLATE-1), leads a process group of its own, and stopping it kills
    that group and every descendant (PROTO-KILL-1).
    """

    def __init__(
        self,
        argv: list[str],
        *,
        description: str | None = None,
        options: ConnectorOptions | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> None:
        super().__init__(description or "stdio:" + shlex.join(argv), options or ConnectorOptions())
        if not argv:
            raise ConformanceError("stdio: needs a command")
        self.argv = argv
        self._env = dict(env) if env is not None else None
        self._cwd = cwd
        self._process: subprocess.Popen[bytes] | None = None
        self._private: Path | None = None
        self.isolated = False
        """Whether the running adapter is isolated (PROTO-ISOLATE-1)."""
        self._lines: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._stderr: collections.deque[bytes] = collections.deque()
        self._stderr_lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def _launch(self) -> None:
        mode = self.options.isolation
        isolate = mode == "on" or (mode == "auto" and isolation_available())
        if mode == "on" and not isolation_available():
            raise AdapterCrash(
                "isolation is required but unavailable here (PROTO-ISOLATE-1: Linux and unshare)"
            )
        private = Path(os.path.realpath(tempfile.mkdtemp(prefix="toolconf-impl-")))
        env = scrubbed_env(private, extra=self._env, passed=self.options.pass_env)
        argv = self.argv
        if isolate:
            program = self.argv[0]
            if "/" in program and self._cwd and not os.path.isabs(program):
                program = os.path.join(self._cwd, program)
            if shutil.which(program, path=env["PATH"]) is None:
                remove_tree(private)
                raise AdapterCrash(f"cannot start {shlex.join(self.argv)}: no such program")
            argv = wrap(self.argv, private)
        try:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=self._cwd,
                start_new_session=True,  # PROTO-KILL-1
            )
        except OSError as exc:
            remove_tree(private)
            raise AdapterCrash(f"cannot start {shlex.join(self.argv)}: {exc}") from exc
        self._process = process
        self._private = private
        self.isolated = isolate
        lines: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._lines = lines
        assert process.stdout is not None
        assert process.stderr is not None
        self._threads = [
            threading.Thread(target=_read_lines, args=(process.stdout, lines), daemon=True),
            threading.Thread(target=self._read_stderr, args=(process.stderr,), daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _read_stderr(self, stream: IO[bytes]) -> None:
        fd = stream.fileno()
        for chunk in iter(lambda: _read_some(fd), b""):
            with self._stderr_lock:
                self._stderr.append(chunk)
                while sum(map(len, self._stderr)) > _STDERR_KEEP and len(self._stderr) > 1:
                    self._stderr.popleft()

    def take_stderr(self) -> str:
        with self._stderr_lock:
            data = b"".join(self._stderr)
            self._stderr.clear()
        return data.decode("utf-8", "replace")

    def _exchange(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        process = self._process
        if process is None or process.stdin is None:
            raise AdapterCrash("the adapter is not running")
        try:
            process.stdin.write(json.dumps(request).encode("utf-8") + b"\n")
            process.stdin.flush()
        except OSError as exc:
            raise AdapterCrash(f"cannot write to the adapter ({exc}){self._exit_note()}") from exc
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AdapterTimeout(
                f"no answer to {request.get('cmd')!r} within {timeout:g} s"
            ) from None
        if line is None:
            raise AdapterCrash(f"the adapter closed its stdout{self._exit_note()}")
        try:
            response = json.loads(line)
        except ValueError as exc:
            raise ProtocolError(f"answer is not JSON ({exc}): {line[:200]!r}") from exc
        if not isinstance(response, dict):
            raise ProtocolError(f"answer is not a JSON object: {line[:200]!r}")
        return response

    def _exit_note(self) -> str:
        if self._process is None:
            return ""
        with contextlib.suppress(subprocess.TimeoutExpired):
            code = self._process.wait(timeout=1.0)
            return f"; it exited with status {code}"
        return ""

    def _stop(self, *, force: bool) -> None:
        """Close stdin and let the adapter exit (EOF means exit 0); kill it if forced or slow.

        Either way its process group and every descendant found before it
        exited are killed then (PROTO-KILL-1): nothing it started outlives it.
        """
        process, self._process = self._process, None
        private, self._private = self._private, None
        self._hello = None
        if process is None:
            return
        family = descendants(process.pid)
        if force:
            kill_tree(process.pid)
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        try:
            process.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            kill_tree(process.pid)
            process.wait(timeout=5.0)
        kill_tree(process.pid)  # PROTO-KILL-1: what it left in its group
        for pid in family:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, 9)
        for thread in self._threads:
            thread.join(timeout=2.0)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
        if private is not None:
            remove_tree(private)


def _read_some(fd: int) -> bytes:
    try:
        return os.read(fd, 4096)
    except OSError:
        return b""


def _read_lines(stream: IO[bytes], lines: queue.SimpleQueue[bytes | None]) -> None:
    with contextlib.suppress(OSError, ValueError):
        for line in iter(stream.readline, b""):
            lines.put(line)
    lines.put(None)


# -- the registry -----------------------------------------------------------

ConnectorFactory: TypeAlias = Callable[[str, ConnectorOptions], Connector]
"""Makes an unstarted connector from the text after ``scheme:`` (maybe empty)."""

_REGISTRY: dict[str, ConnectorFactory | str] = {}


def register_connector(
    scheme: str, factory: ConnectorFactory | str, *, replace: bool = False
) -> None:
    """Make ``scheme:rest`` available to ``connect``, the CLI and the pytest plugin.

    ``factory`` may be a ``"module:attr"`` string, imported on first use.

    Raises:
        ValueError: the scheme is taken and ``replace`` is false.
    """
    if scheme in _REGISTRY and not replace:
        raise ValueError(f"connector scheme {scheme!r} is already registered")
    _REGISTRY[scheme] = factory


def known_schemes() -> list[str]:
    """The registered schemes, sorted."""
    return sorted(_REGISTRY)


def connect(spec: str, options: ConnectorOptions | None = None) -> Connector:
    """Make the (unstarted) connector that ``spec`` names, such as ``stdio:./adapter``.

    Raises:
        ConformanceError: unknown scheme, or a factory that cannot be loaded.
    """
    scheme, _, rest = spec.partition(":")
    factory = _REGISTRY.get(scheme)
    if factory is None:
        raise ConformanceError(
            f"unknown implementation {spec!r}; schemes: {', '.join(known_schemes())}"
        )
    if isinstance(factory, str):
        factory = cast(ConnectorFactory, _import(factory, f"connector scheme {scheme!r}"))
    return factory(rest, options or ConnectorOptions())


def _import(target: str, what: str) -> Any:
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
        return getattr(module, attr)
    except (ImportError, AttributeError) as exc:
        raise ConformanceError(f"{what}: cannot load {target} ({exc})") from exc


def _direct(rest: str, options: ConnectorOptions) -> Connector:
    target = rest or "reference.engine:Engine"
    if ":" not in target:
        target += ":Engine"
    make = _import(target, "direct connector")

    def factory() -> EngineLike:
        return cast(EngineLike, make())

    return DirectConnector(
        factory, description="direct:" + target if rest else "direct", options=options
    )


def _stdio(rest: str, options: ConnectorOptions) -> Connector:
    argv = shlex.split(rest)
    if not argv:
        raise ConformanceError("stdio: needs a command, as in stdio:./my-adapter --flag")
    return StdioConnector(argv, description="stdio:" + rest, options=options)


register_connector("direct", _direct)
register_connector("stdio", _stdio)
register_connector("mutant", "conformance.mutants:connect")
register_connector("claude-code", "conformance.claude_code.connector:connect")
register_connector("mcp", "conformance.mcp.connector:connect")
