"""The skeleton of every protocol v1 server: one request in, one answer out.

A server names its commands in a table; ``ProtocolServer.handle`` does the
rest, the same for every server: a request that is not an object or has no
integer ``seq`` is refused with ``seq: null`` (PROTO-SEQ-1); a request the
schema rejects is refused before any command sees it (PROTO-BAD-1,
PROTO-SCHEMA-1), so handlers read well-formed input only; a command the
server does not serve is ``unsupported`` (PROTO-UNSUPPORTED-1); a command
that needs a session before ``begin`` is refused; and any other exception of
a handler is an ``internal`` answer with its traceback (PROTO-INTERNAL-1),
except the ones a server lets through on purpose (a peer adapter's "the CLI
hung", which its connector turns into a timeout).
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final

from reference.errors import BadRequest
from reference.protocol.schema import violation

__all__ = ["COMMANDS", "Handler", "ProtocolServer", "Unsupported", "bad_request", "internal_error"]

COMMANDS: Final = ("hello", "begin", "call", "message", "tools", "end")
"""Every command of protocol v1 (PROTO-HELLO-1 to PROTO-END-1)."""

Handler = Callable[[Mapping[str, Any]], dict[str, Any]]
"""Serves one well-formed request: the answer without its ``seq``."""


class Unsupported(Exception):
    """PROTO-UNSUPPORTED-1: a request this server cannot serve faithfully."""


def bad_request(seq: object, message: str) -> dict[str, Any]:
    """PROTO-BAD-1: the answer to a request that is refused."""
    return {"seq": seq, "error": {"kind": "bad_request", "message": message}}


def internal_error(seq: object, exc: BaseException) -> dict[str, Any]:
    """PROTO-INTERNAL-1: the answer to a request the server failed to serve by its own fault."""
    return {
        "seq": seq,
        "error": {
            "kind": "internal",
            "message": f"{type(exc).__name__}: {exc}",
            "traceback": "".join(traceback.format_exception(exc)),
        },
    }


class ProtocolServer:
    """Serves protocol v1 through the table ``commands()`` returns.

    Subclasses set ``NEEDS_SESSION`` (the commands refused before ``begin``),
    ``PASS_THROUGH`` (exception types ``handle`` lets escape) and implement
    ``commands`` and ``in_session``.
    """

    NEEDS_SESSION: ClassVar[frozenset[str]] = frozenset({"call", "message", "tools"})
    PASS_THROUGH: ClassVar[tuple[type[BaseException], ...]] = ()

    def commands(self) -> Mapping[str, Handler]:
        """The commands served, by name; a protocol command missing here is unsupported."""
        raise NotImplementedError

    def in_session(self) -> bool:
        """Whether a session is open (``begin`` answered and no ``end`` since)."""
        raise NotImplementedError

    def handle(self, request: object) -> dict[str, Any]:
        """Answer one request; never raises, but for ``PASS_THROUGH`` exceptions."""
        if not isinstance(request, Mapping):
            return bad_request(None, "a request must be a JSON object")
        seq = request.get("seq")  # PROTO-SEQ-1: an integer, echoed in the answer
        if not isinstance(seq, int) or isinstance(seq, bool):
            return bad_request(None, "a request needs an integer seq")
        problem = violation("#/$defs/request", request)  # PROTO-BAD-1
        if problem is not None:
            return bad_request(
                seq, f"{request.get('cmd')!r} request at {problem.path}: {problem.reason}"
            )
        cmd = str(request["cmd"])
        handler = self.commands().get(cmd)
        if handler is None:
            return {
                "seq": seq,
                "error": {"kind": "unsupported", "message": f"{cmd} is not served here"},
            }
        if cmd in self.NEEDS_SESSION and not self.in_session():
            return bad_request(seq, f"no session: send begin before {cmd}")
        try:
            return {"seq": seq, **handler(request)}
        except self.PASS_THROUGH:
            raise
        except BadRequest as exc:
            return bad_request(seq, str(exc))
        except Unsupported as exc:
            return {"seq": seq, "error": {"kind": "unsupported", "message": str(exc)}}
        except Exception as exc:  # PROTO-INTERNAL-1: a fault of the server is an answer
            return internal_error(seq, exc)
