"""A fixed scripted conversation through one agent: the smoke run of a definition.

The conversation asks, in protocol v1 terms, mapped through the agent's
definition: read a file; write a new one; edit the read file; write an
existing, never-read file; edit a never-read file; read a file and re-read
it unchanged; read a file and edit it after a line was appended from
outside; read a 2 MiB, 40,331-line file; read a CRLF file and edit it (the
twelve turns), then Glob, Grep, Bash, a ranged Read, a Read of a missing
file, an Edit whose old_string is not there and one whose old_string is
there twice. A step the agent cannot be
given (its definition has no tool for it, or the mapping refuses it) is
recorded as not applicable and sends no turn.

Each step records the agent's call, the result read back (text, is_error
and its source, dedup), the time of the turn and the file's bytes after it;
the run records start-up and exit times and every escape beyond the
loopback.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from conformance.peers.agent.definition import AgentDefinition
from conformance.peers.agent.install import InstalledAgent
from conformance.peers.agent.mapping import file_on_disk, map_call
from conformance.peers.agent.offered import mismatches
from conformance.peers.agent.readback import read_back
from conformance.peers.agent.session import AgentSession
from conformance.peers.peer_rules import Unmappable

__all__ = ["BIG_LINES", "TWELVE", "StepResult", "TrialReport", "run_trial"]

BIG_LINES: Final = 40_331
"""Lines of the 2 MiB file (each ``NNNNN`` and 46 ``x``, 52 bytes with its line feed)."""
TWELVE: Final = 12
"""The conversation's first twelve steps are the timed ones."""

_FILES: Final = {
    "a.txt": b"alpha\nbeta\n",
    "b.txt": b"bee\n",
    "c.txt": b"cee\n",
    "d.txt": b"dee\n",
    "e.txt": b"eee\n",
    "crlf.txt": b"one\r\ntwo\r\n",
    "sub/g.py": b"print('grep me')\n",
    "twice.txt": b"same\nsame\n",
}


@dataclass(frozen=True, slots=True)
class Step:
    """One protocol call of the conversation, with what happens on disk before it."""

    what: str
    tool: str
    input: Mapping[str, Any]
    watch: str | None = None
    before: Callable[[Path], None] | None = None


def _append(name: str, text: bytes) -> Callable[[Path], None]:
    def run(root: Path) -> None:
        with (root / name).open("ab") as handle:
            handle.write(text)

    return run


def _steps(root: Path) -> list[Step]:
    def at(name: str) -> str:
        return str(root / name)

    return [
        Step("read a file", "Read", {"file_path": at("a.txt")}),
        Step(
            "write a new file",
            "Write",
            {"file_path": at("new.txt"), "content": "new\n"},
            "new.txt",
        ),
        Step(
            "edit the file read",
            "Edit",
            {"file_path": at("a.txt"), "old_string": "beta", "new_string": "BETA"},
            "a.txt",
        ),
        Step(
            "write an existing file never read",
            "Write",
            {"file_path": at("b.txt"), "content": "overwritten\n"},
            "b.txt",
        ),
        Step(
            "edit a file never read",
            "Edit",
            {"file_path": at("c.txt"), "old_string": "cee", "new_string": "CEE"},
            "c.txt",
        ),
        Step("read a file", "Read", {"file_path": at("d.txt")}),
        Step("re-read it unchanged", "Read", {"file_path": at("d.txt")}),
        Step("read a file", "Read", {"file_path": at("e.txt")}),
        Step(
            "edit it after a line was appended from outside",
            "Edit",
            {"file_path": at("e.txt"), "old_string": "eee", "new_string": "EEE"},
            "e.txt",
            _append("e.txt", b"appended\n"),
        ),
        Step("read a 2 MiB file", "Read", {"file_path": at("big.txt")}),
        Step("read a CRLF file", "Read", {"file_path": at("crlf.txt")}),
        Step(
            "edit the CRLF file",
            "Edit",
            {"file_path": at("crlf.txt"), "old_string": "two", "new_string": "TWO"},
            "crlf.txt",
        ),
        Step("glob **/*.py", "Glob", {"pattern": "**/*.py"}),
        Step("grep 'grep me'", "Grep", {"pattern": "grep me", "output_mode": "content"}),
        Step("a command failing with status 3", "Bash", {"command": "echo hi; exit 3"}),
        Step("read line 2 only", "Read", {"file_path": at("a.txt"), "offset": 2, "limit": 1}),
        Step("read a missing file", "Read", {"file_path": at("missing.txt")}),
        Step(
            "edit with an old_string not in the file",
            "Edit",
            {"file_path": at("a.txt"), "old_string": "nothere", "new_string": "x"},
            "a.txt",
        ),
        Step("read a file with a line twice", "Read", {"file_path": at("twice.txt")}),
        Step(
            "edit a string found twice",
            "Edit",
            {"file_path": at("twice.txt"), "old_string": "same", "new_string": "one"},
            "twice.txt",
        ),
    ]


@dataclass(slots=True)
class StepResult:
    """What one step showed."""

    what: str
    tool: str
    agent_tool: str | None = None
    not_applicable: str | None = None
    text: str | None = None
    is_error: bool | None = None
    error_source: str | None = None
    dedup: bool | None = None
    seconds: float | None = None
    file_after: str | None = None


@dataclass(slots=True)
class TrialReport:
    """The whole conversation: steps, times, escapes, and how it ended."""

    agent: str
    version: str
    isolated: bool
    start_seconds: float = 0.0
    twelve_seconds: float = 0.0
    twelve_turns: int = 0
    exit_seconds: float = 0.0
    total_seconds: float = 0.0
    offered_tools: list[str] = field(default_factory=list)
    mismatches: list[str] = field(default_factory=list)
    """Where the definition does not fit the tools the agent offered."""
    steps: list[StepResult] = field(default_factory=list)
    escapes: list[str] = field(default_factory=list)
    side_requests: int = 0
    failure: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The report as plain JSON data."""
        return dataclasses.asdict(self)


def run_trial(
    definition: AgentDefinition, agent: InstalledAgent, *, isolate: bool | None = None
) -> TrialReport:
    """The conversation through ``definition``'s agent, installed at ``agent``."""
    report = TrialReport(definition.name, definition.install.version, isolated=False)
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="toolconf-trial-") as scratch:
        root = Path(scratch)
        for name, data in _FILES.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(data)
        line = b"x" * 46
        (root / "big.txt").write_bytes(b"".join(b"%05d %s\n" % (i, line) for i in range(BIG_LINES)))
        session = AgentSession(definition, agent, root=root, isolate=isolate).start()
        report.isolated = session.isolated
        report.start_seconds = session.times.start
        report.offered_tools = [tool.name for tool in session.tools]
        report.mismatches = mismatches(definition, session.tools)
        try:
            for index, step in enumerate(_steps(root)):
                result = StepResult(step.what, step.tool)
                report.steps.append(result)
                if step.before is not None:
                    step.before(root)
                tool_map = definition.played(step.tool)
                if tool_map is None:
                    result.not_applicable = f"{definition.name} has no tool playing {step.tool}"
                    continue
                try:
                    call = map_call(step.tool, tool_map, step.input, file_on_disk)
                except Unmappable as exc:
                    result.not_applicable = str(exc)
                    continue
                result.agent_tool = call.name
                call_id = f"toolconf_{index + 1:02d}"
                started = time.monotonic()
                found = session.take_turn([(call_id, call)])
                result.seconds = time.monotonic() - started
                if index < TWELVE:
                    report.twelve_seconds += result.seconds
                    report.twelve_turns += 1
                got = found.get(call_id)
                if got is None:
                    result.text = "(no result came back)"
                else:
                    reading = read_back(definition, step.tool, tool_map, got)
                    result.text = reading.text
                    result.is_error = reading.is_error
                    result.error_source = reading.error_source
                    result.dedup = reading.dedup
                if step.watch is not None:
                    after = file_on_disk(str(root / step.watch))
                    result.file_after = None if after is None else after.decode("utf-8", "replace")
        except Exception as exc:
            report.failure = f"{type(exc).__name__}: {exc}"
            session.kill()
        else:
            session.close()
        report.exit_seconds = session.times.exit
        report.escapes = [str(e) for e in session.escapes()]
        report.side_requests = len(session.model.side_requests)
    report.total_seconds = time.monotonic() - began
    return report
