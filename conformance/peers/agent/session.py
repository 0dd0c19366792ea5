"""One agent CLI conversation: its process, its scripted model, its turns.

``AgentSession`` starts the agent its definition describes in a session's
cwd, with a home and configuration of its own (the definition's files and
setup commands), the programs it needs on PATH, and, where the host permits,
inside a loopback-only network namespace (``loopback``) whose escapes are
recorded. The agent's first main-loop request is held until a turn is sent;
each turn (``take_turn``) answers the held request with tool calls and waits
for the next, which carries the tool results exactly as the agent shows them
to its model. ``close`` sends a final text, lets the agent exit and ends its
whole process group (PROTO-KILL-1), killing it on overrun.

A definition's capabilities (``definition``) add to the launch: the
settings mapper's files and arguments for the session (``settings``), an
MCP configuration file of the servers it names (``mcp_servers``), the
prompt tool's answer and log (``take_prompts`` reads the questions asked),
and a transcript of stdout (``structured`` gives each call's structured
result). A process that ends the conversation right after a turn, with that
turn's results on its transcript, has answered the turn; the next one raises
``ConversationEnded``.

Every wait is bounded: start-up, each turn and the exit; past a deadline the
process group is killed and ``AgentTimeout`` raised. A process that exits
mid-conversation raises ``AgentCrash`` with its last words. The agent's
stdout and stderr are kept, capped, for reports.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

from conformance.errors import ConformanceError
from conformance.interrupts import uninterrupted
from conformance.peers.agent.definition import AgentDefinition
from conformance.peers.agent.install import InstalledAgent, find_path_tool
from conformance.peers.agent.loopback import (
    Escape,
    loopback_available,
    read_escapes,
    wrap_loopback,
)
from conformance.peers.agent.mapping import AgentCall
from conformance.peers.agent.mcp_servers import write_mcp_config
from conformance.peers.agent.model_api import (
    MainRequest,
    OfferedTool,
    ScriptedModel,
    ToolCall,
    ToolResult,
    Turn,
    dialect,
)
from conformance.peers.agent.model_api.anthropic import text_of
from conformance.peers.agent.pieces import SettingsPlan, Transcript, load_piece
from conformance.peers.isolation import kill_tree
from conformance.peers.npm import PeerUnavailable

__all__ = [
    "AgentCrash",
    "AgentSession",
    "AgentTimeout",
    "ConversationEnded",
    "SessionTimes",
]

_KEEP: Final = 64 * 1024
_FINAL: Final = "Done."
_TRANSCRIPT_GRACE: Final = 2.0
"""Seconds a turn's results may take to show on the transcript after its next request."""
_KILLED_WAIT: Final = 5.0
"""Seconds to read what a killed setup command left in its pipe."""


class AgentTimeout(ConformanceError):
    """The agent did not reach the next step within its deadline; it has been killed."""


class AgentCrash(ConformanceError):
    """The agent exited, or could not start, in the middle of a conversation."""


class ConversationEnded(ConformanceError):
    """The agent ended the conversation itself; no later turn can be sent."""


@dataclass(slots=True)
class SessionTimes:
    """Seconds spent: starting up (to the first main-loop request), per turn, exiting."""

    start: float = 0.0
    turns: list[float] | None = None
    exit: float = 0.0


class AgentSession:
    """A running agent CLI and the main-loop request it waits on."""

    def __init__(
        self,
        definition: AgentDefinition,
        agent: InstalledAgent,
        *,
        root: Path,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        home: Path | None = None,
        isolate: bool | None = None,
        settings: SettingsPlan | None = None,
        prompt_answer: str = "allow",
        test_tools: bool = False,
    ) -> None:
        self.definition = definition
        self.agent = agent
        self.root = root
        self.cwd = cwd or root
        self.env = dict(env or {})
        self.settings = settings or SettingsPlan()
        """The settings mapper's files and arguments for this session (none without one)."""
        self.prompt_answer = prompt_answer
        """How the prompt tool answers the agent's questions (``permissions.prompt``)."""
        self.test_tools = test_tools
        """Whether the MCP servers given only with test tools are given."""
        self.times = SessionTimes(turns=[])
        self.isolated = loopback_available() if isolate is None else isolate
        if isolate and not loopback_available():
            raise PeerUnavailable(
                "a loopback-only network namespace is required but unavailable here "
                "(Linux, util-linux unshare, user or root namespaces)"
            )
        self.work = Path(tempfile.mkdtemp(prefix="toolconf-agent-"))
        self.home = home or self.work / "home"
        """The agent's HOME: the session's home when given, else one of its own."""
        self._record = self.work / "escapes.jsonl"
        self._prompt_log = self.work / "prompts.jsonl"
        self._prompts_seen = 0
        self.transcript: Transcript | None = None
        if definition.transcript is not None:
            self.transcript = load_piece(definition.transcript, "transcript")()
        self._stdout: collections.deque[str] = collections.deque()
        self._stderr: collections.deque[str] = collections.deque()
        self._pending: MainRequest | None = None
        self._readers: list[threading.Thread] = []
        self._escapes: list[Escape] | None = None
        self.process: subprocess.Popen[str] | None = None
        api = definition.model_api
        self.model = ScriptedModel(
            dialect(api.dialect),
            model=api.model,
            side_text=api.side_text,
            main_requires=api.main_requires,
            unix_path=self.work / "model.sock" if self.isolated else None,
        )

    def start(self) -> AgentSession:
        """Start the model and the agent, and wait for its first main-loop request.

        Raises:
            PeerUnavailable: a program the agent needs is missing.
            AgentCrash: the agent or a setup command exited first.
            AgentTimeout: no first request within the start timeout.
        """
        try:
            self.model.start()
            self._start()
        except BaseException:
            self.kill()
            raise
        return self

    # -- start --------------------------------------------------------------

    def _start(self) -> None:
        definition, agent, root, cwd, env = (
            self.definition,
            self.agent,
            self.root,
            self.cwd,
            self.env,
        )
        launch = definition.launch
        home = self.home
        home.mkdir(parents=True, exist_ok=True)
        (self.work / "tmp").mkdir()
        values = {
            "program": str(agent.program),
            "package": str(agent.package),
            "prompt": launch.prompt,
            "base_url": self.model.base_url,
            "port": str(self.model.port),
            "model": definition.model_api.model,
            "root": str(root),
            "cwd": str(cwd),
            "home": str(home),
            "work": str(self.work),
            "mcp_config": str(self.work / "mcp.json"),
            "prompt_answer": self.prompt_answer,
            "prompt_log": str(self._prompt_log),
        }
        for spec in launch.files:
            path = Path(_expand(spec.path, values))
            path.parent.mkdir(parents=True, exist_ok=True)
            if spec.json_ is not None:
                path.write_text(json.dumps(_expand_json(spec.json_, values), indent=2), "utf-8")
            else:
                path.write_text(_expand(spec.text or "", values), "utf-8")
        for written, value in self.settings.files.items():  # contents as they are
            path = Path(_expand(written, values))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(value, indent=2), "utf-8")
        self._prompt_log.touch()
        if definition.mcp_servers:
            write_mcp_config(
                Path(values["mcp_config"]),
                {
                    server.name: [_expand(a, values) for a in server.args]
                    for server in definition.mcp_servers
                    if server.when == "always" or self.test_tools
                },
                {server.name: server.module for server in definition.mcp_servers},
            )
        process_env = self._environment(home, values, env)
        for command in launch.setup:
            self._setup([_expand(a, values) for a in command], cwd, process_env)
        argv = self._wrap([_expand(a, values) for a in (*launch.argv, *self.settings.argv)])
        started = time.monotonic()
        try:
            with uninterrupted():  # PROTO-KILL-1: a process started is a process recorded
                self.process = subprocess.Popen(
                    argv,
                    cwd=cwd,
                    env=process_env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                    encoding="utf-8",
                    errors="replace",
                    start_new_session=True,
                )
        except OSError as exc:
            raise AgentCrash(f"cannot start {argv[0]}: {exc}") from exc
        streams = (
            (self.process.stdout, self._stdout, self.transcript),
            (self.process.stderr, self._stderr, None),
        )
        for stream, kept, transcript in streams:
            reader = threading.Thread(target=_keep, args=(stream, kept, transcript), daemon=True)
            reader.start()
            self._readers.append(reader)
        self._pending = self._wait_request(launch.start_timeout, "start")
        self.times.start = time.monotonic() - started

    def _environment(
        self, home: Path, values: Mapping[str, str], env: Mapping[str, str]
    ) -> dict[str, str]:
        bin_dir = self.work / "bin"
        bin_dir.mkdir()
        for tool in self.definition.launch.path_tools:
            found = find_path_tool(tool)
            if found is None:
                raise PeerUnavailable(
                    f"{self.definition.name} needs {tool} on PATH and none was found "
                    f"(for ripgrep: pip install ripgrep, or apt-get install ripgrep)"
                )
            (bin_dir / tool).symlink_to(found)
        inherited = {
            k: v for k, v in os.environ.items() if k in {"LANG", "TZ"} or k.startswith("LC_")
        }
        process_env = {
            "LANG": "C.UTF-8",
            **inherited,
            "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', os.defpath)}",
            "TMPDIR": str(self.work / "tmp"),
            "TERM": "dumb",
            "SHELL": shutil.which("bash") or "/bin/sh",
            "NO_COLOR": "1",
            **env,
            "HOME": str(home),  # PROTO-BEGIN-2: the session's home wins over its env's HOME
        }
        launch = self.definition.launch
        process_env.update({k: _expand(v, values) for k, v in launch.env.items()})
        for name, document in launch.env_json.items():
            process_env[name] = json.dumps(_expand_json(document, values))
        return process_env

    def _wrap(self, argv: list[str]) -> list[str]:
        if not self.isolated:
            return argv
        return wrap_loopback(
            argv,
            self.work,
            port=self.model.port,
            unix_path=self.work / "model.sock",
            record=self._record,
        )

    def _setup(self, argv: list[str], cwd: Path, env: Mapping[str, str]) -> None:
        timeout = self.definition.launch.start_timeout
        with uninterrupted():  # PROTO-KILL-1: a process started is a process recorded
            setup = subprocess.Popen(
                self._wrap(argv),
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
                start_new_session=True,
            )
        with setup:
            try:
                output, _ = setup.communicate(timeout=timeout)
            except BaseException as exc:  # its time is up, or a signal ends the run
                kill_tree(setup.pid)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    setup.communicate(timeout=_KILLED_WAIT)
                if isinstance(exc, subprocess.TimeoutExpired):
                    raise AgentTimeout(f"setup {argv[1:3]} took over {timeout:g} s") from exc
                raise
        if setup.returncode != 0:
            raise AgentCrash(
                f"setup {' '.join(argv[1:4])} exited with status {setup.returncode}: "
                f"{output.strip()[-1000:]}"
            )

    # -- turns --------------------------------------------------------------

    @property
    def tools(self) -> list[OfferedTool]:
        """The tools the agent offered its model in the request it waits on."""
        return self._pending.tools if self._pending else []

    @property
    def request(self) -> MainRequest | None:
        """The main-loop request the agent waits on."""
        return self._pending

    def take_turn(
        self,
        calls: Sequence[tuple[str, AgentCall]],
        *,
        timeout: float | None = None,
        text: str = "",
        block_delay: float = 0.0,
    ) -> dict[str, ToolResult]:
        """Send ``calls`` (id, call), after ``text``, as the model's turn; the agent's result
        of each, by id. ``block_delay`` paces a streamed answer's blocks.

        Raises:
            ConversationEnded: the agent ended the conversation before this turn.
            AgentTimeout: no next request within the turn timeout (the agent is killed).
            AgentCrash: the agent exited before its next request (and its transcript, if
                any, does not hold the turn's results).
        """
        pending = self._pending
        if pending is None:
            raise ConversationEnded(
                f"{self.definition.name} ended the conversation after the previous turn "
                f"({self._last_words()})"
            )
        self._pending = None
        turn = Turn(
            calls=[
                ToolCall(i, c.name, c.arguments, "custom" if c.kind == "custom" else "function")
                for i, c in calls
            ],
            text=text,
            block_delay=block_delay,
        )
        started = time.monotonic()
        if not pending.answer(turn):
            raise AgentCrash(f"{self.definition.name} dropped its request before the turn was sent")
        limit = timeout if timeout is not None else self.definition.launch.turn_timeout
        ids = [i for i, _ in calls]
        try:
            following = self._wait_request(limit, "turn")
        except AgentCrash:
            shown = self._from_transcript(ids)
            if shown is None:
                raise
            return shown  # it ended the conversation after answering this turn
        if self.times.turns is not None:
            self.times.turns.append(time.monotonic() - started)
        self._pending = following
        if self.transcript is not None:
            self.transcript.results(ids, _TRANSCRIPT_GRACE)  # its structured results follow
        return following.results_for([(i, c.name) for i, c in calls])

    def structured(self, ids: Sequence[str]) -> dict[str, Any]:
        """The structured result of each of ``ids`` the transcript shows (none without one)."""
        return self.transcript.structured(ids) if self.transcript is not None else {}

    def take_prompts(self) -> list[dict[str, Any]]:
        """The questions the prompt tool answered since the last call, as it logged them."""
        try:
            lines = self._prompt_log.read_text(encoding="utf-8").splitlines()
        except OSError:
            return []
        new, self._prompts_seen = lines[self._prompts_seen :], len(lines)
        asked: list[dict[str, Any]] = []
        for line in new:
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                if isinstance(record, dict):
                    asked.append(record)
        return asked

    def _from_transcript(self, ids: Sequence[str]) -> dict[str, ToolResult] | None:
        """The turn's results as the transcript showed them, or None when it lacks one."""
        if self.transcript is None:
            return None
        shown = self.transcript.results(ids, _TRANSCRIPT_GRACE)
        if len(shown) != len(ids):
            return None
        return {
            i: ToolResult(
                call_id=i,
                name=None,
                text=text_of(block.get("content")),
                is_error=bool(block.get("is_error", False)),
                group=-1,
                raw=dict(block),
            )
            for i, block in shown.items()
        }

    def close(self) -> None:
        """End the conversation: a final text, the exit awaited, the process group ended."""
        pending, self._pending = self._pending, None
        started = time.monotonic()
        if pending is not None:
            pending.answer(Turn(text=_FINAL))
        process = self.process
        if process is not None:
            deadline = started + self.definition.launch.exit_grace
            while process.poll() is None and time.monotonic() < deadline:
                self.model.drain(_FINAL)  # an agent that asks again gets the final text too
                time.sleep(0.05)
        self.times.exit = time.monotonic() - started
        self.kill()

    def kill(self) -> None:
        """End the process group now (PROTO-KILL-1), stop the model, remove the work files.

        Idempotent: the escapes read at the first kill stay. A signal meanwhile is raised
        once all is ended.
        """
        with uninterrupted():
            self._kill_now()

    def _kill_now(self) -> None:
        if self._escapes is not None:
            return
        process = self.process
        if process is not None:
            if process.poll() is None:
                kill_tree(process.pid)
            else:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, 9)  # what it left behind in its group
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5.0)
            for reader in self._readers:
                reader.join(timeout=2.0)  # what is left in the pipes, then end of file
            for stream in (process.stdout, process.stderr):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
        self.model.close()
        self._escapes = read_escapes(self._record)
        shutil.rmtree(self.work, ignore_errors=True)

    # -- what it left -------------------------------------------------------

    def escapes(self) -> list[Escape]:
        """Connection attempts beyond the loopback so far (all of them once killed)."""
        return self._escapes if self._escapes is not None else read_escapes(self._record)

    def take_stderr(self) -> str:
        """The agent's stderr since the last call (capped)."""
        text = "".join(self._stderr)
        self._stderr.clear()
        return text

    def output(self) -> tuple[str, str]:
        """The agent's stdout and stderr so far (each capped)."""
        return "".join(self._stdout), "".join(self._stderr)

    # -- internals ----------------------------------------------------------

    def _wait_request(self, timeout: float, what: str) -> MainRequest:
        deadline = time.monotonic() + timeout
        process = self.process
        assert process is not None
        while True:
            request = self.model.next_request(0.1)
            if request is not None:
                return request
            if process.poll() is not None:
                time.sleep(0.2)  # let the readers take the last lines
                raise AgentCrash(
                    f"{self.definition.name} exited with status {process.returncode} ({what}): "
                    f"{self._last_words()}"
                )
            if time.monotonic() > deadline:
                words = self._last_words()
                self.kill()
                raise AgentTimeout(
                    f"{self.definition.name} did not come back within {timeout:g} s ({what}): "
                    f"{words}"
                )

    def _last_words(self) -> str:
        said = self.transcript.last_words() if self.transcript is not None else None
        if said is not None:
            return said
        out, err = self.output()
        return f"stdout ends {out.strip()[-600:]!r}; stderr ends {err.strip()[-600:]!r}"


def _keep(
    stream: IO[str] | None, kept: collections.deque[str], transcript: Transcript | None
) -> None:
    if stream is None:
        return
    with contextlib.suppress(OSError, ValueError):
        for chunk in stream:
            kept.append(chunk)
            while sum(map(len, kept)) > _KEEP and len(kept) > 1:
                kept.popleft()
            if transcript is not None:
                transcript.feed(chunk)


def _expand(text: str, values: Mapping[str, str]) -> str:
    for name, value in values.items():
        text = text.replace("{" + name + "}", value)
    return text


def _expand_json(value: Any, values: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return _expand(value, values)
    if isinstance(value, Mapping):
        return {_expand(str(k), values): _expand_json(v, values) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_expand_json(v, values) for v in value]
    return value
