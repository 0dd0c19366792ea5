"""The six step kinds of a scenario, each one class, and the registry of them.

A step class owns all there is to know about its kind: how it is built from
the YAML mapping the schema has already checked (``from_yaml``), the checks
the schema cannot make (``problems``), the short text that locates it in a
report (``describe``), and what it does in a running session (``run``).
``STEPS`` maps the YAML key that selects a kind to its class; the schema's
``step`` definition lists the same keys.

``run`` returns the step's ``Tally``: every assertion it made, counted per
level, and the mismatches of those that failed (``conformance.suite.checks``). A
``bad_request`` answer to the valid request a step sent is one failed
behaviour assertion (PROTO-BADVALID-1), and the scenario goes on. ``run``
raises only for what is not a mismatch: any other ``AdapterFailure``
(including a response that breaks the protocol) or a ``ScenarioError``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, TypeAlias

from conformance.errors import AdapterError, AdapterUnsupported
from conformance.suite.checks import (
    BEHAVIOUR,
    RENDERING,
    Tally,
    check_call,
    check_message,
    check_tools,
)
from conformance.suite.matchers import Mismatch, match
from conformance.suite.yamlsource import NodePath
from conformance.suite.yamlvalues import decode_b64, parse_mode, parse_mtime
from conformance.wire.profiles import DEFAULT_PROFILE
from conformance.wire.protocol import (
    check_call_response,
    check_message_response,
    check_tools_response,
)

if TYPE_CHECKING:
    from typing import Self

__all__ = [
    "FS_OPS",
    "STEPS",
    "CallStep",
    "FsOp",
    "FsStep",
    "MessageStep",
    "RawStep",
    "Requests",
    "SessionStep",
    "Step",
    "StepContext",
    "ToolUse",
    "ToolsStep",
    "Workspace",
    "expect_under",
    "parse_step",
    "refused",
]

FsOp: TypeAlias = Literal["write", "touch", "delete", "chmod", "symlink", "mkfifo", "mkdir"]
FS_OPS: tuple[FsOp, ...] = ("write", "touch", "delete", "chmod", "symlink", "mkfifo", "mkdir")

Problems: TypeAlias = Iterator[tuple[NodePath, str]]
"""Loader problems of one step: a path relative to the step, and the message."""


class Requests(Protocol):
    """The part of a ``Connector`` that steps use: sending requests."""

    def request(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """Send a request (``seq`` added); an ``error`` answer raises ``AdapterFailure``."""
        ...

    def request_raw(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """Send a request as written (``seq`` added only when absent); an ``error`` is data."""
        ...


class Workspace(Protocol):
    """The part of a scenario's sandbox that steps use: its files and placeholders."""

    def expand(self, value: Any) -> Any:
        """``value`` with the placeholders of the sandbox (``{root}``, ...) filled in."""
        ...

    def expand_expect(self, value: Any) -> Any:
        """An expectation with its placeholders filled in (regex parts escaped)."""
        ...

    def apply(self, step: FsStep) -> None:
        """Change the files as an ``fs`` step says."""
        ...


class StepContext(Protocol):
    """What a step may use of the scenario run it is part of."""

    @property
    def connector(self) -> Requests:
        """The implementation, with a session begun."""
        ...

    @property
    def sandbox(self) -> Workspace:
        """The scenario's files, and the placeholders expanded against them."""
        ...

    @property
    def unreported(self) -> frozenset[str]:
        """The fields the implementation cannot report (hello's ``unreported``)."""
        ...

    @property
    def cwd(self) -> Path:
        """The session's cwd as begun (for the shown view of paths)."""
        ...

    @property
    def profile(self) -> str:
        """The profile the run judges (PROFILE-RUN-1), for a step's ``under``."""
        ...

    def tool_use(self, use: ToolUse) -> dict[str, Any]:
        """The protocol tool_use block for ``use``: input expanded, id made up when none."""
        ...

    def restart_session(self) -> None:
        """End the session and begin a new one with the same setup."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolUse:
    """One tool_use block as written; ``id`` None means the runner makes one up.

    ``input`` is usually a mapping but may be any JSON value, so scenarios can
    send the malformed inputs a model might produce; it defaults to ``{}``.
    """

    name: str
    input: Any
    id: str | None = None

    @classmethod
    def from_yaml(cls, raw: Mapping[str, Any]) -> ToolUse:
        """A ``toolUse`` mapping of the schema as a value."""
        return cls(name=raw["name"], input=raw.get("input", {}), id=raw.get("id"))


@dataclass(frozen=True, slots=True, kw_only=True)
class Step(ABC):
    """One step of a scenario; ``line`` is where it starts in its file."""

    key: ClassVar[str]
    """The YAML key that selects this kind (``call``, ``message``, ...)."""

    line: int | None = None

    @classmethod
    @abstractmethod
    def from_yaml(cls, raw: Mapping[str, Any], line: int | None) -> Self:
        """The step a schema-valid step mapping describes."""

    @classmethod
    def problems(cls, raw: Mapping[str, Any]) -> Problems:
        """What the schema cannot check in a step of this kind (run once it holds)."""
        return iter(())

    @abstractmethod
    def describe(self) -> str:
        """A few words naming the step in a report: its kind and its subject."""

    @abstractmethod
    def run(self, context: StepContext) -> Tally:
        """Do the step in ``context``; its assertions, and the mismatches of those that failed."""


def refused(exc: AdapterError, what: str) -> Tally:
    """A ``bad_request`` answer to a valid request: one failed behaviour assertion.

    PROTO-BADVALID-1: the runner sent a request the scenario's loader checked,
    so the refusal is the implementation's failure, not an error of the run.

    Raises:
        AdapterError: ``exc`` is another kind of refusal.
    """
    if exc.error_kind != "bad_request":
        raise exc
    tally = Tally()
    message = f"a valid {what} request was refused as bad_request: {exc}"
    tally.check(BEHAVIOUR, (), lambda: [Mismatch(what, "an answer", "bad_request", message)])
    return tally


def _request(context: StepContext, body: Mapping[str, Any]) -> dict[str, Any] | Tally:
    """The answer to ``body``, or the failed assertion a ``bad_request`` answer is."""
    try:
        return context.connector.request(body)
    except AdapterError as exc:
        return refused(exc, str(body["cmd"]))


Under: TypeAlias = Mapping[str, Mapping[str, Any]]
"""PROFILE-SCENARIO-3: profile -> the expectation fields its release renders otherwise."""


def expect_under(expect: Mapping[str, Any], under: Under, profile: str) -> Mapping[str, Any]:
    """PROFILE-SCENARIO-3: ``expect`` as it holds under ``profile``.

    The profile's fields replace the step's; a ``results`` list replaces entry
    by entry, its fields merged into the step's entry, a null entry keeping it.
    """
    overlay = under.get(profile)
    if not overlay:
        return expect
    merged = {**expect, **overlay}
    if "results" in overlay:
        mine: list[Any] = list(expect.get("results") or [None] * len(overlay["results"]))
        merged["results"] = [
            own if theirs is None else {**(own or {}), **theirs}
            for own, theirs in zip(mine, overlay["results"], strict=True)
        ]
    return merged


def _event_id_problems(events: Mapping[str, Any], known: set[str]) -> Problems:
    for key in ("before", "overlap"):
        for j, pair in enumerate(events.get(key, [])):
            for name in pair:
                if name not in known:
                    message = f"unknown tool_use id {name!r}; give the call an id to refer to it"
                    yield ("expect", "events", key, j), message


@dataclass(frozen=True, slots=True, kw_only=True)
class CallStep(Step):
    """Send one tool_use through the pipeline and check the response."""

    key: ClassVar[str] = "call"

    call: ToolUse
    expect: Mapping[str, Any]
    under: Under = field(default_factory=dict)
    """PROFILE-SCENARIO-3: what a release profile renders otherwise."""

    @classmethod
    def from_yaml(cls, raw: Mapping[str, Any], line: int | None) -> Self:
        return cls(
            call=ToolUse.from_yaml(raw["call"]),
            expect=raw.get("expect", {}),
            under=raw.get("under", {}),
            line=line,
        )

    @classmethod
    def problems(cls, raw: Mapping[str, Any]) -> Problems:
        known = {raw["call"]["id"]} if "id" in raw["call"] else set()
        return _event_id_problems(raw.get("expect", {}).get("events", {}), known)

    def describe(self) -> str:
        return f"call {self.call.name}"

    def run(self, context: StepContext) -> Tally:
        tool_use = context.tool_use(self.call)
        answer = _request(context, {"cmd": "call", "tool_use": tool_use})
        if isinstance(answer, Tally):
            return answer
        check_call_response(answer, context.unreported)
        expect = context.sandbox.expand_expect(
            expect_under(self.expect, self.under, context.profile)
        )
        return check_call(
            expect, answer, tool_use["id"], unreported=context.unreported, cwd=str(context.cwd)
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageStep(Step):
    """Send a whole assistant message through the scheduler.

    ``results`` of ``expect`` has one entry per call when given (None entries
    check nothing). ``streaming``, ``block_delay_ms`` and ``interrupt_after``
    are the message options of SPEC.md PROTO-MESSAGE-2 and PROTO-MESSAGE-3.
    """

    key: ClassVar[str] = "message"

    calls: tuple[ToolUse, ...]
    expect: Mapping[str, Any]
    streaming: bool = False
    block_delay_ms: int | None = None
    interrupt_after: tuple[str, ...] | None = None
    under: Under = field(default_factory=dict)
    """PROFILE-SCENARIO-3: what a release profile renders otherwise."""

    @classmethod
    def from_yaml(cls, raw: Mapping[str, Any], line: int | None) -> Self:
        interrupt = raw.get("interrupt")
        return cls(
            calls=tuple(ToolUse.from_yaml(c) for c in raw["message"]),
            expect=raw.get("expect", {}),
            streaming=raw.get("streaming", False),
            block_delay_ms=raw.get("block_delay_ms"),
            interrupt_after=None if interrupt is None else tuple(interrupt["after_started"]),
            under=raw.get("under", {}),
            line=line,
        )

    @classmethod
    def problems(cls, raw: Mapping[str, Any]) -> Problems:
        ids: list[str] = [call["id"] for call in raw["message"] if "id" in call]
        for j, call_id in enumerate(ids):
            if call_id in ids[:j]:
                yield ("message",), f"tool_use id {call_id!r} is used twice"
        known = set(ids)
        expect = raw.get("expect", {})
        results = expect.get("results")
        if results is not None and len(results) != len(raw["message"]):
            yield ("expect", "results"), f"{len(results)} results for {len(raw['message'])} calls"
        for profile, overlay in raw.get("under", {}).items():
            theirs = overlay.get("results")
            if theirs is not None and len(theirs) != len(raw["message"]):
                message = f"{len(theirs)} results for {len(raw['message'])} calls"
                yield ("under", profile, "results"), message
        batches = expect.get("batches")
        if isinstance(batches, list):
            for j, batch in enumerate(batches):
                names = batch if isinstance(batch, list) else [batch]
                for name in names:
                    if name not in known:
                        yield ("expect", "batches", j), f"unknown tool_use id {name!r}"
        yield from _event_id_problems(expect.get("events", {}), known)
        for j, name in enumerate(raw.get("interrupt", {}).get("after_started", [])):
            if name not in known:
                yield ("interrupt", "after_started", j), f"unknown tool_use id {name!r}"

    def describe(self) -> str:
        return "message " + ", ".join(c.name for c in self.calls)

    def run(self, context: StepContext) -> Tally:
        uses = [context.tool_use(c) for c in self.calls]
        request: dict[str, Any] = {"cmd": "message", "content": uses}
        if self.streaming:
            request["streaming"] = True
        if self.block_delay_ms is not None:
            request["block_delay_ms"] = self.block_delay_ms
        if self.interrupt_after is not None:
            request["interrupt"] = {"after_started": list(self.interrupt_after)}
        answer = _request(context, request)
        if isinstance(answer, Tally):
            return answer
        check_message_response(answer, len(uses), context.unreported)
        expect = context.sandbox.expand_expect(
            expect_under(self.expect, self.under, context.profile)
        )
        ids = [u["id"] for u in uses]
        return check_message(
            expect, answer, ids, unreported=context.unreported, cwd=str(context.cwd)
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class FsStep(Step):
    """A change the runner makes on disk behind the implementation's back."""

    key: ClassVar[str] = "fs"

    op: FsOp
    path: str
    text: str | None = None
    data: bytes | None = None
    target: str | None = None
    mode: int | None = None
    mtime: float | None = None

    @classmethod
    def from_yaml(cls, raw: Mapping[str, Any], line: int | None) -> Self:
        fs: Mapping[str, Any] = raw["fs"]
        op = next(o for o in FS_OPS if o in fs)
        mtime = fs.get("mtime")
        return cls(
            op=op,
            path=fs[op],
            text=fs.get("text"),
            data=decode_b64(fs["b64"]) if "b64" in fs else None,
            target=fs.get("target"),
            mode=parse_mode(fs.get("mode")),
            mtime=None if mtime is None else parse_mtime(mtime),
            line=line,
        )

    def describe(self) -> str:
        return f"fs {self.op} {self.path}"

    def run(self, context: StepContext) -> Tally:
        context.sandbox.apply(self)
        return Tally()


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionStep(Step):
    """End the session and begin a new one with the same setup."""

    key: ClassVar[str] = "session"

    action: Literal["restart"] = "restart"

    @classmethod
    def from_yaml(cls, raw: Mapping[str, Any], line: int | None) -> Self:
        return cls(action=raw["session"], line=line)

    def describe(self) -> str:
        return f"session {self.action}"

    def run(self, context: StepContext) -> Tally:
        context.restart_session()
        return Tally()


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolsStep(Step):
    """Ask for the session's tool pool (``tools`` command) and check it."""

    key: ClassVar[str] = "tools"

    expect: Mapping[str, Any]
    under: Under = field(default_factory=dict)
    """PROFILE-SCENARIO-3: what a release profile's pool shows otherwise."""

    @classmethod
    def from_yaml(cls, raw: Mapping[str, Any], line: int | None) -> Self:
        return cls(expect=raw.get("expect", {}), under=raw.get("under", {}), line=line)

    def describe(self) -> str:
        return "tools"

    def run(self, context: StepContext) -> Tally:
        answer = _request(context, {"cmd": "tools"})
        if isinstance(answer, Tally):
            return answer
        check_tools_response(answer)
        expect = context.sandbox.expand_expect(
            expect_under(self.expect, self.under, context.profile)
        )
        return check_tools(expect, answer, unreported=context.unreported)


@dataclass(frozen=True, slots=True, kw_only=True)
class RawStep(Step):
    """Send a protocol request as written and check the whole answer.

    For the protocol's own requirements (bad requests and the like): the
    runner adds ``seq`` only when ``request`` has none, an ``error`` answer is
    data rather than a failure, and the runner's session bookkeeping does not
    follow what the request does.
    """

    key: ClassVar[str] = "raw"

    request: Mapping[str, Any]
    expect: Mapping[str, Any]
    under: Under = field(default_factory=dict)
    """PROFILE-SCENARIO-3: the whole answer as a release profile renders it."""

    @classmethod
    def from_yaml(cls, raw: Mapping[str, Any], line: int | None) -> Self:
        return cls(
            request=raw["raw"], expect=raw.get("expect", {}), under=raw.get("under", {}), line=line
        )

    def describe(self) -> str:
        return f"raw {self.request.get('cmd', '?')}"

    def _with_profile(self, context: StepContext) -> Mapping[str, Any]:
        """The request expanded; a ``begin`` naming no profile gets the run's (PROTO-BEGIN-3),
        as the runner's own begin does, so the new session plays what the run judges."""
        request: Mapping[str, Any] = context.sandbox.expand(self.request)
        session = request.get("session")
        if (
            request.get("cmd") == "begin"
            and isinstance(session, Mapping)
            and "profile" not in session
            and context.profile != DEFAULT_PROFILE
        ):
            return {**request, "session": {**session, "profile": context.profile}}
        return request

    def run(self, context: StepContext) -> Tally:
        answer = context.connector.request_raw(self._with_profile(context))
        error = answer.get("error")
        if (
            isinstance(error, Mapping)
            and error.get("kind") == "unsupported"
            and not _expects_unsupported(self.expect)
        ):
            # PROTO-UNSUPPORTED-1: what the implementation cannot be given is not applicable
            raise AdapterUnsupported(f"{self.describe()} not supported: {error.get('message')}")
        want = context.sandbox.expand_expect(expect_under(self.expect, self.under, context.profile))
        tally = Tally(unreported=context.unreported)
        if "response" in want:
            tally.check(RENDERING, (), lambda: match(want["response"], answer, "response"))
        return tally


def _expects_unsupported(expect: Mapping[str, Any]) -> bool:
    """Whether a raw step's expectation is itself the ``unsupported`` answer (PROTO-BEGIN-3):
    then that answer is the behaviour under test, not a request the implementation lacks."""
    response = expect.get("response")
    subset = response.get("json_subset") if isinstance(response, Mapping) else None
    error = subset.get("error") if isinstance(subset, Mapping) else None
    return isinstance(error, Mapping) and error.get("kind") == "unsupported"


STEPS: Mapping[str, type[Step]] = {
    cls.key: cls for cls in (CallStep, MessageStep, FsStep, SessionStep, ToolsStep, RawStep)
}
"""YAML key -> the step class it selects; a step mapping has exactly one of these keys."""


def step_class(raw: Mapping[str, Any]) -> type[Step]:
    """The class of a schema-valid step mapping (the schema allows exactly one key)."""
    return next(cls for key, cls in STEPS.items() if key in raw)


def parse_step(raw: Mapping[str, Any], line: int | None) -> Step:
    """The step a schema-valid step mapping describes."""
    return step_class(raw).from_yaml(raw, line)
