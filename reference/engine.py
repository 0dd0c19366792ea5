"""The engine behind protocol v1: one request object in, one response out.

Both front doors use it: the stdio adapter (``python -m reference.adapter``)
and the conformance runner's in-process ``direct`` connector, so the two can
never disagree. ``handle`` never raises: even its own faults are answers
(PROTO-INTERNAL-1), so neither front door has a failure path of its own. The
shapes of every request and answer are ``reference/protocol/protocol-v1.json``,
and ``reference.protocol.server`` checks each request against it first.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Final

from reference import session_dirs
from reference.errors import BadRequest
from reference.events import EventLog
from reference.profiles import DEFAULT_PROFILE, PROFILES, profile_named
from reference.protocol.schema import PROTOCOL
from reference.protocol.server import Handler, ProtocolServer, Unsupported
from reference.registry import api_export, build_pool, deferred_names, removed_tool_names
from reference.scheduler import Scheduler
from reference.session import Session
from reference.settings import SOURCES, Settings
from reference.tool import Tool
from reference.version import __version__

FEATURES: Final = (  # PROTO-FEATURES-1: the names of its table this engine supports
    "read",
    "write",
    "edit",
    "notebook_edit",
    "dedup",
    "token_gate",
    "glob",
    "grep",
    "images",
    "pdf",
    "notebooks",
    "bash",
    "permissions",
    "hooks",
    "scheduler",
    "streaming",
    "result_persistence",
    "test_tools",
    "registry",
    "profiles",
    "engine_names",
)


class Engine(ProtocolServer):
    """Holds at most one session at a time (PROTO-BEGIN-1, PROTO-END-1).

    ``handle`` (``ProtocolServer``) never raises: bad input gets a
    ``bad_request`` answer (PROTO-BAD-1), a request the schema rejects never
    reaches a command, and any other exception, a fault of the engine, gets a
    ``kind: "internal"`` answer (PROTO-INTERNAL-1) while the engine goes on
    serving. Every answer has the shape the protocol schema gives it
    (PROTO-SCHEMA-1).
    """

    def __init__(self) -> None:
        self.session: Session | None = None
        self.tools: list[Tool] = []
        session_dirs.sweep_once_in_background()  # PROTO-END-2: dead engines' directories

    def commands(self) -> Mapping[str, Handler]:
        return {
            "hello": self._hello,
            "begin": self._begin,
            "call": self._call,
            "message": self._message,
            "tools": self._tools,
            "end": self._end,
        }

    def in_session(self) -> bool:
        return self.session is not None

    def _hello(self, request: Mapping[str, Any]) -> dict[str, Any]:
        # PROTO-HELLO-1: the protocol spoken, the implementation and its features
        if request.get("protocol") != PROTOCOL:
            raise BadRequest(f"unsupported protocol {request['protocol']!r}; this is {PROTOCOL}")
        return {
            "protocol": PROTOCOL,
            "implementation": {"name": "reference", "version": __version__, "language": "python"},
            "features": list(FEATURES),
            "profiles": list(PROFILES),  # PROTO-HELLO-2: every profile it plays
        }

    def _begin(self, request: Mapping[str, Any]) -> dict[str, Any]:
        # The schema has checked the shape (types, the prompt's values, each
        # source an object); what it cannot state is checked here.
        spec = request["session"]
        root = spec["root"]
        if not os.path.isabs(root) or not os.path.isdir(root):
            raise BadRequest("session.root must be an absolute path to a directory")
        cwd = spec.get("cwd", root)
        if not os.path.isabs(cwd):
            raise BadRequest("session.cwd must be an absolute path")
        home = spec.get("home")  # PROTO-BEGIN-4: the schema refuses a NUL in it, cwd or env.HOME
        # PROTO-BEGIN-1: unknown sources are ignored, whatever they hold
        settings = {name: v for name, v in (spec.get("settings") or {}).items() if name in SOURCES}
        session_dir = spec.get("session_dir")
        if session_dir is not None:
            if not os.path.isabs(session_dir):
                raise BadRequest("session.session_dir must be an absolute path")
            session_dirs.make_session_dir(session_dir)  # PROTO-BEGIN-2, PROTO-BEGIN-4
        profile_name = spec.get("profile", DEFAULT_PROFILE)
        profile = profile_named(profile_name)  # PROTO-BEGIN-3
        if profile is None:
            raise Unsupported(
                f"profile {profile_name!r} is not one this engine plays ({', '.join(PROFILES)})"
            )
        if self.session is not None:
            self._end(request)  # PROTO-BEGIN-1: the open session ends first
        self.session = Session.create(
            root=root,
            cwd=cwd,
            env=spec.get("env") or {},
            settings=Settings(by_source=settings),
            session_dir=session_dir,
            home=home,
            prompt=spec.get("prompt", "deny"),
            test_tools=spec.get("test_tools") is True,
            profile=profile,
        )
        self.tools = build_pool(self.session)  # section 2: gates, deny rules, MCP tools
        self.session.removed_tools = removed_tool_names(self.session)  # REG-DENY-1
        return {"ok": True}

    def _end(self, _request: Mapping[str, Any]) -> dict[str, Any]:
        if self.session is not None:
            self.session.tasks.stop_all()  # PROTO-END-1, BASH-BG-1: background tasks killed
        if self.session is not None and self.session.owned_dir is not None:  # PROTO-END-1
            self.session.owned_dir.remove()
        self.session = None
        self.tools = []
        return {"ok": True}

    def _require_session(self) -> Session:
        if self.session is None:  # ProtocolServer.NEEDS_SESSION refuses these first
            raise BadRequest("no session: send begin first")
        return self.session

    def _tools(self, _request: Mapping[str, Any]) -> dict[str, Any]:
        """PROTO-TOOLS-1: the API export and the deferred, undiscovered names."""
        discovered = self._require_session().discovered_tools
        return {
            "tools": api_export(self.tools, discovered),
            "deferred": deferred_names(self.tools, discovered),
        }

    def _call(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """PROTO-CALL-1: one block through the pipeline (a batch of one, SCHED-CONTEXT-1)."""
        session = self._require_session()
        tool_use = _tool_use(request.get("tool_use"))
        events = EventLog()
        run = Scheduler(self.tools, session, events).run([tool_use])
        return {**run.results[0].to_protocol(), "events": events.items()}

    def _message(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """PROTO-MESSAGE-1: a whole assistant message through the scheduler."""
        session = self._require_session()
        content = request.get("content")
        if not isinstance(content, list):
            raise BadRequest("message needs a content list")
        # DISP-EXTRACT-1: only tool_use blocks are dispatched
        blocks = [
            _tool_use(block)
            for block in content
            if isinstance(block, Mapping) and block.get("type", "tool_use") == "tool_use"
        ]
        ids = [block["id"] for block in blocks]
        if len(set(ids)) != len(ids):
            raise BadRequest("tool_use ids must be unique within a message")  # PROTO-BAD-1
        interrupt = request.get("interrupt") or {}  # PROTO-MESSAGE-2
        after = interrupt.get("after_started", []) if isinstance(interrupt, Mapping) else []
        delay = request.get("block_delay_ms", 0)
        if not isinstance(after, list) or not all(isinstance(i, str) for i in after):
            raise BadRequest("interrupt.after_started must be a list of ids")
        if not isinstance(delay, int) or isinstance(delay, bool) or delay < 0:
            raise BadRequest("block_delay_ms must be a non-negative integer")
        events = EventLog()
        run = Scheduler(self.tools, session, events).run(
            blocks,
            interrupt_after=after,
            streaming=request.get("streaming") is True,  # PROTO-MESSAGE-3
            block_delay_ms=delay,
        )
        return {
            "results": [outcome.to_protocol() for outcome in run.results],
            "batches": run.batches,
            "events": events.items(),
        }


def _tool_use(value: object) -> Mapping[str, Any]:
    """PROTO-BAD-1: a tool_use needs a string id, a string name and an input."""
    if not isinstance(value, Mapping):
        raise BadRequest("a tool_use must be an object")
    tool_use_id = value.get("id")
    if not isinstance(tool_use_id, str) or not tool_use_id:
        raise BadRequest("tool_use.id must be a non-empty string")
    if not isinstance(value.get("name"), str):
        raise BadRequest("tool_use.name must be a string")
    if "input" not in value:
        raise BadRequest("tool_use needs an input")
    return value
