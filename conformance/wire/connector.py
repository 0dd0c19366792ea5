"""What a connector is: a live link to one implementation, speaking protocol v1.

The runner and every instrument see an implementation only through
``Connector``; the peer kinds that make one (``conformance.peers``) build on
``ConnectorBase``, which keeps the parts every kind shares.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from conformance.errors import (
    AdapterError,
    AdapterFailure,
    AdapterInternalError,
    AdapterUnsupported,
    ProtocolError,
)
from conformance.wire.protocol import PROTOCOL_VERSION, Hello, check_answer, parse_hello

__all__ = ["DEFAULT_TIMEOUT", "Connector", "ConnectorBase", "ConnectorOptions", "EngineLike"]

DEFAULT_TIMEOUT = 10.0


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


class ConnectorBase:
    """Sequence numbers, the handshake and answer checks shared by every connector.

    A connector kind supplies three methods: ``_launch`` brings its
    implementation up, ``_exchange`` carries one request and returns the raw
    answer (raising ``AdapterFailure`` for a crash, a timeout or a bad answer),
    and ``_stop`` ends it; plus ``take_stderr``. The rest, the same for every
    kind, is here: ``seq`` numbering and its echo (PROTO-SEQ-1), the ``hello``
    handshake, the answer checks, and error answers raised as the failure their
    kind names (PROTO-INTERNAL-1, PROTO-UNSUPPORTED-1).
    """

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
        """Bring the implementation up (before the handshake)."""
        raise NotImplementedError

    def _exchange(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Carry ``request`` and return the raw answer within ``timeout`` seconds."""
        raise NotImplementedError

    def _stop(self, *, force: bool) -> None:
        """End the implementation; ``force`` after a failure, when it may not listen."""
        raise NotImplementedError

    def take_stderr(self) -> str:
        """The implementation's log output since the last call (may be truncated)."""
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
        except BaseException:  # a failure, or a signal that ends the run meanwhile
            self._stop(force=True)  # PROTO-KILL-1
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
