"""Adapter protocol v1 (SPEC.md section 18): every answer checked against one schema.

The contract is ``reference/protocol/protocol-v1.json`` (draft 2020-12): requests
and responses of every command, and the error answer. Connectors move JSON objects
and check ``seq``; this module says whether an answer has the shape its command
promises, so a malformed one is reported as a ``SchemaViolation`` naming the
JSON path, instead of surfacing later as a confusing mismatch.

Each check runs a predicate compiled once from the schema
(``reference.protocol.schema``); only a failing answer is handed to
``jsonschema``, which names the path and the rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from conformance.errors import SchemaViolation, VersionMismatch
from conformance.wire.profiles import played_profiles
from reference.protocol.schema import PROTOCOL, SCHEMA_PATH, protocol_schema, violation
from reference.protocol.server import COMMANDS as SERVED_COMMANDS

__all__ = [
    "COMMANDS",
    "PROTOCOL_VERSION",
    "SCHEMA_PATH",
    "Hello",
    "check_answer",
    "check_call_response",
    "check_message_response",
    "check_ok",
    "check_request",
    "check_response",
    "check_tools_response",
    "parse_hello",
    "protocol_schema",
]

PROTOCOL_VERSION: Final = PROTOCOL
COMMANDS: Final = SERVED_COMMANDS
"""Every command of protocol v1 and its extensions (PROTO-HELLO-1 to PROTO-END-1)."""


def _check(pointer: str, instance: Any, what: str) -> None:
    problem = violation(pointer, instance)  # PROTO-SCHEMA-1
    if problem is not None:
        raise SchemaViolation(what, problem.path, problem.reason)


def check_response(command: str, response: Mapping[str, Any]) -> None:
    """``response`` is a served answer to ``command`` (PROTO-HELLO-1 to PROTO-END-1).

    Raises:
        SchemaViolation: it is not, or ``command`` is not a protocol command.
    """
    if command not in COMMANDS:
        raise SchemaViolation(f"{command!r} response", "$", "no such protocol command")
    _check(f"#/$defs/{command}/$defs/response", response, f"{command} response")


def check_answer(command: object, response: Mapping[str, Any]) -> None:
    """``response`` is any well-formed answer to a request naming ``command``.

    An ``error`` answer has the shape of PROTO-BAD-1 / PROTO-INTERNAL-1 whatever
    the command; any other answer is the command's served answer, so a request
    with an unknown command must be refused.

    Raises:
        SchemaViolation: it is neither.
    """
    if "error" in response:
        _check("#/$defs/error", response, "error answer")
    elif isinstance(command, str) and command in COMMANDS:
        check_response(command, response)
    else:
        raise SchemaViolation(
            f"answer to cmd {command!r}", "$", "an unknown command must get an error answer"
        )


def check_request(request: Mapping[str, Any]) -> None:
    """``request`` is a well-formed protocol request (what the runner sends).

    Raises:
        SchemaViolation: it is not.
    """
    _check("#/$defs/request", request, f"{request.get('cmd')!r} request")


def check_ok(response: Mapping[str, Any], cmd: str) -> None:
    """``begin`` and ``end`` answer ``{"seq", "ok": true}``."""
    check_response(cmd, response)


_REPORTED_OUTCOME = ("stage", "error_code", "error_name")


def _check_reported(
    what: str, path: str, answer: Mapping[str, Any], unreported: frozenset[str]
) -> None:
    """PROTO-UNREPORTED-1: what the schema leaves optional is required unless hello says not."""
    outcome = answer.get("outcome")
    if isinstance(outcome, Mapping):
        for key in _REPORTED_OUTCOME:
            if key not in outcome and key not in unreported:
                message = f"{key!r} is required: hello does not list it as unreported"
                raise SchemaViolation(what, f"{path}.outcome", message)
    if "events.permission_request.reason" in unreported:
        return
    for index, event in enumerate(answer.get("events") or []):
        asked = isinstance(event, Mapping) and event.get("type") == "permission_request"
        if asked and "reason" not in event:
            message = "'reason' is required: hello does not list it as unreported"
            raise SchemaViolation(what, f"{path}.events[{index}]", message)


def check_call_response(
    response: Mapping[str, Any], unreported: frozenset[str] = frozenset()
) -> None:
    """A ``call`` answer (PROTO-CALL-1), with the fields hello did not call unreported."""
    check_response("call", response)
    _check_reported("call response", "$", response, unreported)


def check_tools_response(response: Mapping[str, Any]) -> None:
    """A ``tools`` answer (PROTO-TOOLS-1)."""
    check_response("tools", response)


def check_message_response(
    response: Mapping[str, Any], count: int, unreported: frozenset[str] = frozenset()
) -> None:
    """A ``message`` answer with one result per ``tool_use`` block sent (PROTO-MESSAGE-1).

    The count, and the fields required unless hello calls them unreported
    (PROTO-UNREPORTED-1), are the rules the schema cannot state.
    """
    check_response("message", response)
    if len(response["results"]) != count:
        raise SchemaViolation(
            "message response",
            "$.results",
            f"expected {count} results, got {len(response['results'])}",
        )
    if "batches" not in response and "batches" not in unreported:
        message = "'batches' is required: hello does not list it as unreported"
        raise SchemaViolation("message response", "$", message)
    for index, result in enumerate(response["results"]):
        _check_reported("message response", f"$.results[{index}]", result, unreported)
    _check_reported("message response", "$", {"events": response.get("events")}, unreported)


@dataclass(frozen=True, slots=True, kw_only=True)
class Hello:
    """What an implementation said about itself in the handshake.

    ``unreported`` names the outcome fields it cannot report
    (PROTO-UNREPORTED-1); ``inferences`` the fields it infers from message text
    and the mapping table it uses for each (PROTO-INFER-1), as given.
    """

    protocol: int
    implementation: Mapping[str, Any]
    features: frozenset[str]
    raw: Mapping[str, Any] = field(default_factory=dict)
    unreported: frozenset[str] = frozenset()
    inferences: tuple[Mapping[str, Any], ...] = ()
    profiles: tuple[str, ...] = ("documented",)
    """PROTO-HELLO-2: the behaviour profiles it plays."""

    @property
    def name(self) -> str:
        """``name version`` of the implementation, for reports."""
        name = str(self.implementation.get("name", "?"))
        version = self.implementation.get("version")
        return f"{name} {version}" if version else name


def parse_hello(response: Mapping[str, Any]) -> Hello:
    """Validate the answer to ``hello`` (PROTO-HELLO-1).

    Raises:
        VersionMismatch: the implementation speaks another protocol (checked first).
        SchemaViolation: the answer is malformed.
    """
    protocol = response.get("protocol")
    if protocol != PROTOCOL_VERSION:
        raise VersionMismatch(PROTOCOL_VERSION, protocol)
    check_response("hello", response)
    return Hello(
        protocol=PROTOCOL_VERSION,
        implementation=dict(response["implementation"]),
        features=frozenset(response["features"]),
        raw=dict(response),
        unreported=frozenset(response.get("unreported", ())),
        inferences=tuple(dict(i) for i in response.get("inferences", ())),
        profiles=played_profiles(response),
    )
