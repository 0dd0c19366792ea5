"""A coding-agent CLI behind protocol v1, through its definition.

``AgentAdapter`` answers protocol v1 requests (SPEC.md section 18) for one
agent: ``hello`` from the definition (its features, profiles, what it leaves
unreported, and the tables inferences are read through); ``begin`` checks
that the session can be given to the agent and keeps it; the agent itself
(``session.AgentSession``) starts at the session's first ``call`` or
``message``, so a scenario that is not applicable costs no start-up;
``call`` is one assistant turn with one tool call, ``message`` one turn with
all its calls, each mapped through the definition (``mapping``) and read
back (``readback``), with the text exactly as the model received it in
``outcome.received`` wherever the reading differs from it (cline's JSON
records, a list of parts); ``end`` ends the agent's whole process group. The
agent's stderr, and every attempt it made to reach beyond the loopback, go
to the run's report through ``take_stderr``.

Honesty (PROTO-UNSUPPORTED-1): nothing the agent lacks is added, and what it
cannot be given is not applicable, never a failure. So ``unsupported``
answers: a profile it does not play; settings other than allow rules when
the definition has no settings mapper (such an agent runs with every call
allowed, so allow rules change nothing, while deny and ask rules, modes and
hooks have no counterpart), and what its mapper refuses when it has one;
test tools, unless the definition names the tools that play Probe
(``probe``); an engine knob in the session's environment the agent does not
read; ``tools``, unless the agent's tool pool is this tool system's own; an
interrupt; a tool the definition does not play (with a pool of its own: that
the agent does not offer, for ToolSearch), an input it cannot carry, a call
naming the session directory's own files (the agent keeps its own
elsewhere) or a counted task id (``conformance.peers.peer_rules``); a result
holding a block protocol v1 cannot carry; and a call after the agent ended
the conversation itself.

What the definition's capabilities add (``definition``): the session's
settings through its mapper, at ``begin``; the prompt tool's answer (the
session's ``prompt``, ``deny`` when it gives none) and every question it
answered as a ``permission_request`` event; test tools' MCP servers; each
call's structured result from the transcript (``outcome.output``); the text
blocks of a message sent with its calls, and its streaming pace.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from conformance.peers.agent.definition import AgentDefinition, ToolMap
from conformance.peers.agent.install import InstalledAgent
from conformance.peers.agent.mapping import AgentCall, file_on_disk, map_call
from conformance.peers.agent.pieces import SettingsContext, SettingsMapper, SettingsPlan, load_piece
from conformance.peers.agent.probe import probe_call, probe_output, sees_trail
from conformance.peers.agent.readback import read_back
from conformance.peers.agent.session import (
    AgentCrash,
    AgentSession,
    AgentTimeout,
    ConversationEnded,
)
from conformance.peers.npm import PeerUnavailable
from conformance.peers.peer_rules import Unmappable, counted_task_id, names_own_files
from reference.errors import BadRequest
from reference.protocol.schema import PROTOCOL
from reference.protocol.server import Handler, ProtocolServer
from reference.session_dirs import make_session_dir
from reference.settings import SOURCES

__all__ = ["KNOB", "AgentAdapter"]

KNOB: Final = re.compile(r"^(CLAUDE_|BASH_DEFAULT_TIMEOUT_MS$|BASH_MAX_TIMEOUT_MS$)")
"""The session environment's engine knobs (PROTO-BEGIN-1's ``env``); other variables are
the environment of the agent and its commands, and pass."""
_DEFINITIONS: Final = "conformance/peers/agent/definitions"


class AgentAdapter(ProtocolServer):
    """One agent serving protocol v1, one agent process per session.

    ``turn_timeout`` bounds each call or message (at least the definition's
    own turn timeout); past it the agent is killed and ``AgentTimeout``
    escapes ``handle``, as ``AgentCrash`` does when it dies (the connector
    reports a timeout or a crash and restarts the adapter).
    """

    PASS_THROUGH = (AgentTimeout, AgentCrash, PeerUnavailable)

    def __init__(
        self,
        definition: AgentDefinition,
        agent: InstalledAgent,
        *,
        turn_timeout: float,
        isolate: bool | None = None,
    ) -> None:
        self.definition = definition
        self.agent = agent
        self.turn_timeout = max(turn_timeout, definition.launch.turn_timeout)
        self.isolate = isolate
        self._session: Mapping[str, Any] | None = None
        self._running: AgentSession | None = None
        self._log: list[str] = []
        self._settings = SettingsPlan()
        self._probes_done = 0  # Probes that succeeded in this session
        self._mapper: SettingsMapper | None = None
        if definition.permissions is not None:
            self._mapper = load_piece(definition.permissions.settings, "permissions.settings")

    # -- protocol -----------------------------------------------------------

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
        return self._session is not None

    def close(self) -> None:
        """End any agent and remove the adapter's own files; safe to call twice."""
        self._stop()
        self._session = None

    def take_stderr(self) -> str:
        """The agent's stderr and the adapter's notes since the last call."""
        running = self._running
        text = "".join(self._log) + (running.take_stderr() if running else "")
        self._log.clear()
        return text

    # -- commands -----------------------------------------------------------

    def _hello(self, _request: Mapping[str, Any]) -> dict[str, Any]:
        definition = self.definition
        answer: dict[str, Any] = {
            "protocol": PROTOCOL,
            "implementation": definition.implementation.model_dump(),
            "features": list(definition.features),
            "unreported": list(definition.unreported),
        }
        if definition.profiles:
            answer["profiles"] = list(definition.profiles)  # PROTO-HELLO-2
        table = f"{_DEFINITIONS}/{definition.name}.yaml: inferences"
        inferred = sorted(
            {"is_error" if r.means == "error" else "dedup" for r in definition.inferences}
        )
        if inferred:  # PROTO-INFER-1
            answer["inferences"] = [
                {"field": field, "from": "tool_result text", "table": table} for field in inferred
            ]
        return answer

    def _begin(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """A new session; one the agent cannot be given leaves the current one running, as
        an ``unsupported`` answer changes nothing (PROTO-UNSUPPORTED-1)."""
        session: Mapping[str, Any] = request["session"]
        definition = self.definition
        wanted = session.get("profile")
        if wanted is not None and wanted not in definition.profiles:  # PROTO-BEGIN-3
            plays = ", ".join(definition.profiles) or "documented only"
            raise Unmappable(f"{definition.name} plays {plays}, not {wanted}")
        settings = session.get("settings") or {}
        if self._mapper is None:
            _check_settings(definition.name, settings)
            plan = SettingsPlan()
        else:
            root = str(session["root"])
            context = SettingsContext(
                root=root, cwd=str(session.get("cwd") or root), env=definition.launch.env
            )
            plan = self._mapper(settings, context)
        if session.get("test_tools") and definition.test_tools is None:
            raise Unmappable(f"{definition.name} registers no test tools (no Probe, no test MCP)")
        env = {str(k): str(v) for k, v in (session.get("env") or {}).items()}
        unread = sorted(
            name
            for name in env
            if KNOB.match(name) and not any(re.search(p, name) for p in definition.env_knobs)
        )
        if unread:
            raise Unmappable(f"{definition.name} reads no {', '.join(unread)}")
        if session.get("session_dir"):  # PROTO-BEGIN-4, as the engine checks it
            make_session_dir(str(session["session_dir"]))
        self._stop()
        self._settings = plan
        self._session = dict(session)
        self._probes_done = 0
        return {"ok": True}

    def _call(self, request: Mapping[str, Any]) -> dict[str, Any]:
        tool_use = request["tool_use"]
        (result,) = self._turn([tool_use], "", 0.0)
        return result

    def _message(self, request: Mapping[str, Any]) -> dict[str, Any]:
        content = request["content"]
        uses = [b for b in content if b.get("type", "tool_use") == "tool_use"]  # DISP-EXTRACT-1
        ids = [str(use["id"]) for use in uses]
        if len(set(ids)) != len(ids):
            raise BadRequest("message repeats a tool_use id")  # PROTO-BAD-1
        if "interrupt" in request:
            raise Unmappable("an interrupt has no counterpart: the agent runs its turn whole")
        # the model's text goes with its calls; thinking needs a real signature
        text = "\n\n".join(str(b.get("text", "")) for b in content if b.get("type") == "text")
        delay = float(request.get("block_delay_ms") or 0) / 1000.0
        results = self._turn(uses, text, delay if request.get("streaming") else 0.0)
        events = [event for result in results for event in result.pop("events")]
        return {"results": results, "events": events}

    def _tools(self, _request: Mapping[str, Any]) -> dict[str, Any]:
        if self.definition.tool_pool != "own":
            raise Unmappable(f"{self.definition.name}'s own tool pool is not this tool system's")
        offered = self._ensure_running().tools
        exported = [
            {
                "name": tool.name,
                **({"description": tool.description} if tool.description else {}),
                "input_schema": dict(tool.schema),
            }
            for tool in offered
        ]
        return {"tools": exported, "deferred": []}

    def _end(self, _request: Mapping[str, Any]) -> dict[str, Any]:
        self._stop()
        self._session = None
        return {"ok": True}

    # -- turns --------------------------------------------------------------

    def _turn(
        self, uses: Sequence[Mapping[str, Any]], text: str, block_delay: float
    ) -> list[dict[str, Any]]:
        """Each use mapped (all before any is sent), sent as one turn, and read back."""
        definition = self.definition
        test_tools = self._test_tools()
        if test_tools and sees_trail(uses, earlier=self._probes_done):
            raise Unmappable(
                "a Probe here would see an earlier Probe's context modifier (PROTO-PROBE-3); "
                "the agent's Probe is an MCP tool, which has none"
            )
        calls: list[tuple[str, str, ToolMap, AgentCall]] = []
        for use in uses:
            name, tool_use_id = str(use["name"]), str(use["id"])
            self._check_addressable(name, use.get("input"))
            tool_map, call = self._map(name, use.get("input"), test_tools)
            calls.append((tool_use_id, name, tool_map, call))
        running = self._ensure_running()
        offered = {tool.name for tool in running.tools} if running.request else None
        if unoffered := self._unoffered_search(uses, offered, test_tools):
            raise Unmappable(unoffered)
        try:
            found = running.take_turn(
                [(i, call) for i, _, _, call in calls],
                timeout=self.turn_timeout,
                text=text,
                block_delay=block_delay,
            )
        except ConversationEnded as exc:  # PROTO-UNSUPPORTED-1: no later turn can be sent
            raise Unmappable(f"{exc}; later calls of the session cannot be sent") from exc
        ids = [tool_use_id for tool_use_id, _, _, _ in calls]
        structured = running.structured(ids)
        asked = running.take_prompts()
        answers: list[dict[str, Any]] = []
        for tool_use_id, name, tool_map, _call in calls:
            result = found.get(tool_use_id)
            if result is None:
                raise AgentCrash(f"{definition.name} sent back no result for {tool_use_id}")
            reading = read_back(definition, name, tool_map, result)
            block = {
                "type": "tool_result",
                "tool_use_id": tool_use_id,
                "content": reading.content,
                "is_error": reading.is_error,
            }
            outcome: dict[str, Any] = {"dedup": reading.dedup}
            if result.model_text != reading.text:  # PROTO-OUTCOME-1's received
                outcome["received"] = result.model_text
            if isinstance(structured.get(tool_use_id), dict):
                outcome["output"] = structured[tool_use_id]
            elif name == "Probe" and test_tools:  # PROTO-PROBE-3: its output is its text
                outcome["output"] = probe_output(reading.text, is_error=reading.is_error)
            elif definition.transcript is not None:
                # PROTO-OUTCOME-1: a call the transcript gives no structured result for (a
                # refusal, an error) has a null output, as any implementation reports it
                outcome["output"] = None
            if name == "Probe" and test_tools and not reading.is_error:
                self._probes_done += 1  # its context modifier joins the session's (PROTO-PROBE-3)
            events = [
                {
                    "type": "permission_request",  # PERM-PROMPT-1
                    "id": tool_use_id,
                    "tool": name,
                    "answer": question.get("answer"),
                }
                for question in asked
                if question.get("tool_use_id") in (tool_use_id, None)
            ]
            answers.append({"tool_result": block, "outcome": outcome, "events": events})
        return answers

    def _map(self, name: str, tool_input: object, test_tools: bool) -> tuple[ToolMap, AgentCall]:
        """The agent's call for a protocol ``name`` call, and the map its result is read by."""
        definition = self.definition
        probe = definition.test_tools
        if name == "Probe" and test_tools and probe is not None:
            call = probe_call(probe, tool_input)
            return ToolMap(tool=call.name), call
        tool_map = definition.played(name)
        if tool_map is not None:
            return tool_map, map_call(name, tool_map, tool_input, file_on_disk)
        if definition.tool_pool == "own":  # its own tool of that name, or its "no such tool"
            arguments = dict(tool_input) if isinstance(tool_input, Mapping) else {}
            return ToolMap(tool=name), AgentCall(name, "function", arguments)
        raise Unmappable(f"{definition.name} has no tool playing {name}")

    def _test_tools(self) -> bool:
        return bool((self._session or {}).get("test_tools"))

    def _unoffered_search(
        self, uses: Sequence[Mapping[str, Any]], offered: Collection[str] | None, test_tools: bool
    ) -> str | None:
        """Why a ToolSearch has no counterpart: with test tools, an agent that offers none
        (``offered`` names what it offers) defers none of them, so the scenario's deferral
        has no counterpart."""
        if not test_tools or self.definition.tool_pool != "own" or offered is None:
            return None
        if "ToolSearch" in offered or not any(use.get("name") == "ToolSearch" for use in uses):
            return None
        return f"{self.definition.name} offers no ToolSearch here: it defers none of these tools"

    def _check_addressable(self, name: str, tool_input: object) -> None:
        session = self._session or {}
        session_dir = session.get("session_dir")
        if session_dir and names_own_files(tool_input, str(session_dir)):
            raise Unmappable(
                f"{self.definition.name} is given no session directory: the call names its file "
                "history, persisted results or task output, which the agent keeps elsewhere"
            )
        task_id = counted_task_id(name, tool_input)
        if task_id is not None:
            raise Unmappable(f"{name} names the counted task id {task_id!r} (BASH-BG-1)")

    def _ensure_running(self) -> AgentSession:
        if self._running is not None:
            return self._running
        session = self._session
        assert session is not None
        env = {str(k): str(v) for k, v in (session.get("env") or {}).items()}
        home = session.get("home") or env.get("HOME")
        root = Path(str(session["root"]))
        running = AgentSession(
            self.definition,
            self.agent,
            root=root,
            cwd=Path(str(session.get("cwd") or root)),
            env=env,
            home=Path(str(home)) if home else None,
            isolate=self.isolate,
            settings=self._settings,
            prompt_answer=str(session.get("prompt") or "deny"),
            test_tools=self._test_tools(),
        )
        self._running = running.start()
        return running

    def _stop(self) -> None:
        running, self._running = self._running, None
        if running is None:
            return
        running.close()
        self._log.append(running.take_stderr())
        escapes = running.escapes()
        if escapes:
            self._log.append(
                "toolconf: the agent tried to reach beyond the loopback: "
                + ", ".join(str(e) for e in escapes)
                + "\n"
            )


def _check_settings(name: str, settings: Mapping[str, Any]) -> None:
    """Only allow rules can be given: the agent allows every call, so they change nothing."""
    for source, value in settings.items():
        if source not in SOURCES or not value:
            continue  # PROTO-BEGIN-1: unknown sources are ignored
        permissions = value.get("permissions") if isinstance(value, Mapping) else None
        others = set(value) - {"permissions"} if isinstance(value, Mapping) else {"?"}
        extra: set[str] = set()
        if isinstance(permissions, Mapping):
            extra = set(permissions) - {"allow"}
        elif permissions is not None:
            extra = {"permissions"}
        if others or extra:
            raise Unmappable(
                f"{name} runs with every call allowed and has no counterpart for {source} "
                f"settings {sorted(others | extra)}"
            )
