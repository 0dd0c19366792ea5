"""The ``direct`` connector: an engine in this process, reached as an adapter would be."""

from __future__ import annotations

import json
import queue
import threading
import traceback
from collections.abc import Callable
from typing import Any, cast

from conformance.errors import AdapterCrash, AdapterInternalError, AdapterTimeout, ProtocolError
from conformance.wire.connector import ConnectorBase, ConnectorOptions, EngineLike

__all__ = ["DirectConnector"]


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


class DirectConnector(ConnectorBase):
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
