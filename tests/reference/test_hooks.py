"""Hooks (SPEC.md section 5): configuration, matchers, real subprocess runs, interpretation.

Every hook here is a real ``/bin/sh -c`` subprocess, most of them the scripts
of ``fixtures/hooks``. Every wait is bounded: handlers get explicit timeouts
and concurrency is proven by two hooks that wait for each other's marker
file, never by timing.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import sys
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import pytest

from reference import hooks
from reference.engine import Engine
from reference.events import EventLog
from reference.hook_matcher import matcher_matches
from reference.hooks import (
    DEFAULT_TIMEOUT_S,
    MAX_TIMEOUT_S,
    Handler,
    HookText,
    PostToolUseResult,
    PreToolUseResult,
    context_blocks,
    handler_timeout,
    matching_handlers,
    run_post_tool_use,
    run_post_tool_use_failure,
    run_pre_tool_use,
)
from reference.session import Session
from reference.settings import SOURCES, Settings
from reference.tool import ToolUseContext

FIXTURES: Final = Path(__file__).resolve().parents[2] / "fixtures" / "hooks"
TEST_TIMEOUT: Final = 30  # every handler's bound unless a test says otherwise
PRE: Final = "PreToolUse"
POST: Final = "PostToolUse"
FAILURE: Final = "PostToolUseFailure"


def fx(script: str, *args: object) -> str:
    """The shell command running fixture ``script`` with ``args``.

    The interpreter is named explicitly: a ``#!/usr/bin/env python3`` shebang
    may go through a version-manager shim that rewrites PATH.
    """
    return shlex.join([sys.executable, str(FIXTURES / script), *(str(arg) for arg in args)])


def sh_json(data: Mapping[str, Any], exit_code: int = 0) -> str:
    """A command printing ``data`` as JSON on stdout and exiting ``exit_code``."""
    return fx("print_output.py", json.dumps(data), exit_code)


def decision(value: str, reason: str | None = None, event: str = PRE) -> str:
    """A hook printing ``permissionDecision`` ``value`` (for ``event`` when a reason is given)."""
    return fx("echo_decision.py", value, *([reason, event] if reason is not None else []))


def specific(event: str = PRE, **fields: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": event, **fields}}


def handler(command: str, timeout: object = TEST_TIMEOUT) -> dict[str, Any]:
    return {"type": "command", "command": command, "timeout": timeout}


def group(*commands: str, matcher: object = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"hooks": [handler(command) for command in commands]}
    if matcher is not None:
        entry["matcher"] = matcher
    return entry


def make_session(
    tmp_path: Path,
    hooks: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    *,
    by_source: Mapping[str, Mapping[str, Any]] | None = None,
    **session: Any,
) -> Session:
    """A session rooted in ``tmp_path``; ``hooks`` go to ``projectSettings``."""
    sources = dict(by_source or {})
    if hooks is not None:
        sources["projectSettings"] = {"hooks": dict(hooks)}
    session_dir = tmp_path / "session-dir"
    session_dir.mkdir(exist_ok=True)
    return Session.create(
        root=str(tmp_path),
        settings=Settings(by_source=sources),
        session_dir=str(session_dir),
        **session,
    )


def context(
    session: Session, events: EventLog | None = None, *, cwd: str | None = None
) -> ToolUseContext:
    """The context of call ``toolu_1``, in ``cwd`` (else the session's current one)."""
    return ToolUseContext(
        session=session,
        tool_use_id="toolu_1",
        cwd=cwd if cwd is not None else session.cwd,
        events=events if events is not None else EventLog(),
    )


def pre(
    session: Session,
    tool_name: str = "Write",
    tool_input: Mapping[str, Any] | None = None,
    events: EventLog | None = None,
) -> PreToolUseResult:
    return run_pre_tool_use(
        context(session, events),
        tool_name=tool_name,
        tool_input=tool_input if tool_input is not None else {"file_path": "/x", "content": ""},
    )


def post(session: Session, events: EventLog | None = None) -> PostToolUseResult:
    return run_post_tool_use(
        context(session, events),
        tool_name="Write",
        tool_input={"file_path": "/x", "content": ""},
        tool_response={"type": "create", "filePath": "/x"},
    )


def failure(session: Session, events: EventLog | None = None) -> PostToolUseResult:
    return run_post_tool_use_failure(
        context(session, events),
        tool_name="Write",
        tool_input={"file_path": "/x", "content": ""},
        error="File has not been read yet.",
    )


def pre_with(tmp_path: Path, *commands: str, events: EventLog | None = None) -> PreToolUseResult:
    """Run PreToolUse with one group holding ``commands``, in that order."""
    return pre(make_session(tmp_path, {PRE: [group(*commands)]}), events=events)


def hook_events(events: EventLog) -> list[dict[str, Any]]:
    return [event for event in events.items() if event["type"] == "hook"]


def gone(pid: int, bound_s: float = 5.0) -> bool:
    """Whether process ``pid`` ended (exited or a zombie), polling for at most ``bound_s``."""
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.02)
    return False


# --------------------------------------------------------------------------- matchers


@pytest.mark.parametrize("matcher", [None, "", "*"])
@pytest.mark.parametrize("name", ["Bash", "NotebookEdit", "mcp__memory__create"])
def test_absent_empty_and_star_matchers_match_every_tool(matcher: object, name: str) -> None:
    """SPEC: HOOK-MATCH-1"""
    assert matcher_matches(matcher, name)


@pytest.mark.parametrize(
    ("matcher", "name", "expected"),
    [
        ("Bash", "Bash", True),
        ("Bash", "BashOutput", False),
        ("Bash", "bash", False),
        ("Edit|Write", "Write", True),
        ("Edit|Write", "NotebookEdit", False),
        ("Edit,Write", "Edit", True),
        (" Edit , Write | Read ", "Read", True),
        ("Edit | Write", "Write", True),
        ("my-tool", "my-tool", True),
        ("my-tool", "my-toolbox", False),
        ("mcp__memory", "mcp__memory__create", False),
        ("Read_2", "Read_2", True),
    ],
)
def test_matcher_of_names_is_an_exact_list(matcher: str, name: str, expected: bool) -> None:
    """SPEC: HOOK-MATCH-1"""
    assert matcher_matches(matcher, name) is expected


@pytest.mark.parametrize(
    ("matcher", "name", "expected"),
    [
        ("Edit.*", "NotebookEdit", True),
        ("Edit.*", "Edit", True),
        ("^Edit$", "NotebookEdit", False),
        ("^Edit$", "Edit", True),
        ("mcp__memory__.*", "mcp__memory__create", True),
        ("mcp__memory__.*", "mcp__github__create", False),
        ("Bas.", "BashOutput", True),
        ("^(Read|Glob)$", "Grep", False),
        ("[GR]rep", "Grep", True),
    ],
)
def test_other_matchers_are_unanchored_regular_expressions(
    matcher: str, name: str, expected: bool
) -> None:
    """SPEC: HOOK-MATCH-1"""
    assert matcher_matches(matcher, name) is expected


@pytest.mark.parametrize("matcher", ["[", "(Bash", "*Bash", "a{2,1}", "Bash)"])
def test_an_invalid_expression_matches_nothing(matcher: str) -> None:
    """SPEC: HOOK-MATCH-1"""
    assert not any(matcher_matches(matcher, name) for name in ("Bash", "(Bash", "[", "a"))


@pytest.mark.parametrize("matcher", [7, ["Bash"], {"tool": "Bash"}, True])
def test_a_matcher_that_is_not_a_string_matches_nothing(matcher: object) -> None:
    """Reference-defined: HOOK-MATCH-1 says nothing of non-strings; one is treated as invalid."""
    assert not matcher_matches(matcher, "Bash")


def test_groups_are_selected_by_the_tools_name(tmp_path: Path) -> None:
    """SPEC: HOOK-MATCH-1, HOOK-CONFIG-1"""
    session = make_session(
        tmp_path,
        {
            PRE: [
                group("a", matcher="Bash"),
                group("b", matcher="Edit|Write"),
                group("c", matcher="Edit.*"),
                group("d"),
                group("e", matcher="["),
            ]
        },
    )
    names = {
        tool: [h.command for h in matching_handlers(session.settings, PRE, tool)]
        for tool in ("Bash", "Edit", "NotebookEdit", "Read")
    }
    assert names == {
        "Bash": ["a", "d"],
        "Edit": ["b", "c", "d"],
        "NotebookEdit": ["c", "d"],
        "Read": ["d"],
    }


# --------------------------------------------------------------------------- configuration


def test_hooks_of_every_source_merge_in_source_order(tmp_path: Path) -> None:
    """SPEC: HOOK-CONFIG-1, PERM-SOURCE-1

    The settings are given in reverse source order; configuration order is
    the sources' order of PERM-SOURCE-1, then groups, then handlers.
    """
    by_source = {
        source: {"hooks": {PRE: [group(f"true {source} 1", f"true {source} 2"), group(source)]}}
        for source in reversed(SOURCES)
    }
    session = make_session(tmp_path, by_source=by_source)
    commands = [h.command for h in matching_handlers(session.settings, PRE, "Read")]
    assert commands == [
        command
        for source in SOURCES
        for command in (f"true {source} 1", f"true {source} 2", source)
    ]


@pytest.mark.subprocess
def test_hooks_run_and_report_in_configuration_order_across_sources(tmp_path: Path) -> None:
    """SPEC: HOOK-CONFIG-1, HOOK-EVENT-1"""
    by_source = {
        "session": {"hooks": {PRE: [group("exit 5")]}},
        "userSettings": {"hooks": {PRE: [group("exit 4")]}},
        "policySettings": {"hooks": {PRE: [group("exit 3")]}},
    }
    events = EventLog()
    pre(make_session(tmp_path, by_source=by_source), events=events)
    assert [e["exit_code"] for e in hook_events(events)] == [3, 4, 5]


@pytest.mark.subprocess
def test_other_handler_types_fields_events_and_malformed_entries_are_ignored(
    tmp_path: Path,
) -> None:
    """SPEC: HOOK-CONFIG-1"""
    hooks: dict[str, Any] = {
        PRE: [
            {
                "matcher": "*",
                "hooks": [
                    {"type": "http", "url": "http://127.0.0.1:9/"},
                    {"type": "prompt", "prompt": "is it fine?"},
                    {"type": "agent", "prompt": "check"},
                    {"type": "mcp_tool", "server": "s", "tool": "t"},
                    {"command": "exit 9"},  # no type
                    {"type": "command"},  # no command
                    {"type": "command", "command": ["exit", "9"]},
                    "exit 9",
                    {"type": "command", "command": "exit 1", "if": "Bash(git *)", "async": True},
                ],
            },
            "not a group",
            {"matcher": "*", "hooks": "exit 9"},
        ],
        "Stop": [group("exit 9")],
        "UserPromptSubmit": [group("exit 9")],
    }
    events = EventLog()
    pre(make_session(tmp_path, hooks), events=events)
    assert [(e["command"], e["exit_code"]) for e in hook_events(events)] == [("exit 1", 1)]
    nothing = EventLog()
    pre(make_session(tmp_path, {PRE: "exit 9"}), events=nothing)  # type: ignore[dict-item]
    assert hook_events(nothing) == []


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_command_matched_twice_runs_once_with_its_first_timeout(tmp_path: Path) -> None:
    """SPEC: HOOK-DEDUP-1, HOOK-TIMEOUT-1"""
    sleeper = fx("sleep.py", 60)
    by_source: dict[str, dict[str, Any]] = {
        "localSettings": {"hooks": {PRE: [{"hooks": [handler(sleeper, timeout=1)]}]}},
        "userSettings": {"hooks": {PRE: [{"matcher": "Write", "hooks": [handler(sleeper, 600)]}]}},
        "session": {"hooks": {PRE: [group("exit 0", sleeper)]}},
    }
    session = make_session(tmp_path, by_source=by_source)
    assert matching_handlers(session.settings, PRE, "Write") == [
        Handler(sleeper, 1.0),
        Handler("exit 0", float(TEST_TIMEOUT)),
    ]
    events = EventLog()
    pre(session, events=events)
    assert [(e["command"], e["timed_out"]) for e in hook_events(events)] == [
        (sleeper, True),
        ("exit 0", False),
    ]


def test_dedup_applies_to_the_handlers_that_match_this_call(tmp_path: Path) -> None:
    """SPEC: HOOK-DEDUP-1

    A handler whose group does not match the call does not take the slot of
    the same command in a group that does, so the matching one's timeout holds.
    """
    session = make_session(
        tmp_path,
        {
            PRE: [
                {"matcher": "Bash", "hooks": [handler("exit 0", 5)]},
                {"matcher": "Write", "hooks": [handler("exit 0", 7), handler("exit 0", 9)]},
            ]
        },
    )
    assert matching_handlers(session.settings, PRE, "Write") == [Handler("exit 0", 7.0)]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, DEFAULT_TIMEOUT_S),
        (0, DEFAULT_TIMEOUT_S),
        (-3, DEFAULT_TIMEOUT_S),
        ("5", DEFAULT_TIMEOUT_S),
        (True, DEFAULT_TIMEOUT_S),
        (float("nan"), DEFAULT_TIMEOUT_S),
        (float("inf"), DEFAULT_TIMEOUT_S),
        (1, 1.0),
        (2.5, 2.5),
        (10**400, MAX_TIMEOUT_S),
        (1e300, MAX_TIMEOUT_S),
    ],
)
def test_timeout_is_a_positive_number_of_seconds_else_600(value: object, expected: float) -> None:
    """SPEC: HOOK-TIMEOUT-1

    Reference-defined: a timeout beyond MAX_TIMEOUT_S (23 days) is cut to it.
    """
    assert DEFAULT_TIMEOUT_S == 600
    assert handler_timeout(value) == expected


# --------------------------------------------------------------------------- running


@pytest.mark.subprocess
def test_pre_tool_use_input_has_every_field(tmp_path: Path) -> None:
    """SPEC: HOOK-INPUT-1, HOOK-RUN-1"""
    record = tmp_path / "input.json"
    session = make_session(tmp_path, {PRE: [group(fx("record_input.py", record))]})
    tool_input = {"file_path": str(tmp_path / "a.txt"), "content": "héllo"}
    pre(session, tool_input=tool_input)
    assert json.loads(record.read_text(encoding="utf-8")) == {
        "session_id": session.session_id,
        "transcript_path": os.path.join(session.session_dir, "transcript.jsonl"),
        "cwd": session.cwd,
        "permission_mode": "default",
        "hook_event_name": PRE,
        "tool_name": "Write",
        "tool_input": tool_input,
        "tool_use_id": "toolu_1",
    }


@pytest.mark.subprocess
def test_lone_surrogates_reach_the_hook_as_escapes_in_valid_utf8(tmp_path: Path) -> None:
    """SPEC: HOOK-INPUT-2, HOOK-INPUT-1, PROTO-INTERNAL-1

    Through the engine, as a request carrying ``\\ud800`` escapes arrives:
    the call is served (not answered ``internal``), the hook ran, and its
    input decodes strictly to the very strings sent.
    """
    record = tmp_path / "input.json"
    settings = {"projectSettings": {"hooks": {PRE: [group(fx("record_input.py", record))]}}}
    engine = Engine()
    spec = {
        "root": str(tmp_path),
        "prompt": "allow",
        "settings": settings,
        "session_dir": str(tmp_path / "session-dir"),
    }
    assert engine.handle({"seq": 1, "cmd": "begin", "session": spec}) == {"seq": 1, "ok": True}
    tool_use_id = "t\udc80é\ud800"
    tool_input = {"pattern": "\udfff*.txt", "path": str(tmp_path)}
    use = {"type": "tool_use", "id": tool_use_id, "name": "Glob", "input": tool_input}
    answer = engine.handle({"seq": 2, "cmd": "call", "tool_use": use})
    assert "error" not in answer, answer
    assert answer["tool_result"]["tool_use_id"] == tool_use_id
    assert [e["exit_code"] for e in answer["events"] if e["type"] == "hook"] == [0]
    got = json.loads(record.read_bytes().decode("utf-8"))  # strict
    assert (got["tool_use_id"], got["tool_input"]) == (tool_use_id, tool_input)
    assert "é" in record.read_text(encoding="utf-8")  # other text stays itself, not escaped


@pytest.mark.subprocess
@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions", "plan", "dontAsk"])
def test_hook_input_names_the_permission_mode(tmp_path: Path, mode: str) -> None:
    """SPEC: HOOK-INPUT-1, PERM-MODE-1, PERM-SOURCE-1"""
    record = tmp_path / "input.json"
    by_source: dict[str, dict[str, Any]] = {
        "userSettings": {"permissions": {"defaultMode": "auto"}},
        "localSettings": {
            "permissions": {"defaultMode": mode},
            "hooks": {PRE: [group(fx("record_input.py", record))]},
        },
    }
    pre(make_session(tmp_path, by_source=by_source))
    assert json.loads(record.read_text(encoding="utf-8"))["permission_mode"] == mode


@pytest.mark.subprocess
def test_post_tool_use_input_adds_the_tool_response(tmp_path: Path) -> None:
    """SPEC: HOOK-INPUT-1"""
    record = tmp_path / "input.json"
    session = make_session(tmp_path, {POST: [group(fx("record_input.py", record))]})
    post(session)
    got = json.loads(record.read_text(encoding="utf-8"))
    assert got["hook_event_name"] == POST
    assert got["tool_response"] == {"type": "create", "filePath": "/x"}
    assert "error" not in got


@pytest.mark.subprocess
def test_post_tool_use_failure_input_adds_the_error_and_is_interrupt(tmp_path: Path) -> None:
    """SPEC: HOOK-INPUT-1, HOOK-FAILURE-1"""
    record = tmp_path / "input.json"
    session = make_session(tmp_path, {FAILURE: [group(fx("record_input.py", record))]})
    failure(session)
    got = json.loads(record.read_text(encoding="utf-8"))
    assert got["hook_event_name"] == FAILURE
    assert (got["error"], got["is_interrupt"]) == ("File has not been read yet.", False)
    assert "tool_response" not in got


def test_session_id_is_made_once_per_session(tmp_path: Path) -> None:
    """SPEC: HOOK-INPUT-1"""
    first = make_session(tmp_path)
    second = make_session(tmp_path)
    assert uuid.UUID(first.session_id).version == 4
    assert first.session_id != second.session_id
    assert first.session_id == first.session_id


@pytest.mark.subprocess
def test_hook_runs_in_the_session_cwd_with_its_environment(tmp_path: Path) -> None:
    """SPEC: HOOK-RUN-1"""
    record = tmp_path / "env.json"
    (tmp_path / "sub").mkdir()
    home = tmp_path / "home"
    names = ("TOOLSYS_HOOK_VAR", "CLAUDE_PROJECT_DIR", "HOME", "PATH")
    session = make_session(
        tmp_path,
        {PRE: [group(fx("record_env.py", record, *names))]},
        cwd=str(tmp_path / "sub"),
        env={"TOOLSYS_HOOK_VAR": "from session", "HOME": "/not/this/one"},
        home=str(home),
    )
    pre(session)
    facts = json.loads(record.read_text(encoding="utf-8"))
    assert facts["cwd"] == str(tmp_path / "sub")
    # its own process group, led by the shell in a new session
    assert facts["pgid"] == facts["sid"] != os.getpgrp()
    assert facts["env"] == {
        "TOOLSYS_HOOK_VAR": "from session",
        "CLAUDE_PROJECT_DIR": str(tmp_path),
        "HOME": str(home),
        "PATH": os.environ["PATH"],
    }


@pytest.mark.subprocess
def test_hook_runs_in_the_cwd_the_pipeline_gives(tmp_path: Path) -> None:
    """SPEC: HOOK-RUN-1, HOOK-INPUT-1

    The session's current cwd is the default; the pipeline may pass the
    call's own (after a ``cd`` in Bash).
    """
    record, inputs = tmp_path / "env.json", tmp_path / "input.json"
    (tmp_path / "moved").mkdir()
    session = make_session(
        tmp_path, {PRE: [group(fx("record_env.py", record), fx("record_input.py", inputs))]}
    )
    run_pre_tool_use(
        context(session, cwd=str(tmp_path / "moved")),
        tool_name="Bash",
        tool_input={"command": "ls"},
    )
    assert json.loads(record.read_text())["cwd"] == str(tmp_path / "moved")
    assert json.loads(inputs.read_text())["cwd"] == str(tmp_path / "moved")


@pytest.mark.subprocess
def test_env_without_a_session_home_keeps_the_sessions_home(tmp_path: Path) -> None:
    """SPEC: HOOK-RUN-1"""
    record = tmp_path / "env.json"
    session = make_session(
        tmp_path, {PRE: [group(fx("record_env.py", record, "HOME"))]}, env={"HOME": "/from/env"}
    )
    pre(session)
    assert json.loads(record.read_text())["env"] == {"HOME": "/from/env"}


@pytest.mark.subprocess
def test_handlers_of_one_event_run_concurrently(tmp_path: Path) -> None:
    """SPEC: HOOK-PARALLEL-1

    Each hook creates its marker and waits (at most 10 s) for the other's:
    both succeed only when they run at the same time.
    """
    a, b = tmp_path / "a", tmp_path / "b"
    events = EventLog()
    pre(
        make_session(tmp_path, {PRE: [group(fx("wait_for.py", a, b), fx("wait_for.py", b, a))]}),
        events=events,
    )
    assert [e["exit_code"] for e in hook_events(events)] == [0, 0]


@pytest.mark.subprocess
def test_the_pipeline_continues_only_when_every_handler_ended(tmp_path: Path) -> None:
    """SPEC: HOOK-PARALLEL-1, HOOK-RUN-1"""
    target = tmp_path / "changed.txt"
    commands = [fx("sleep.py", 0.3), fx("modify_file.py", target, "changed by a hook")]
    events = EventLog()
    pre_with(tmp_path, *commands, events=events)
    assert [e["exit_code"] for e in hook_events(events)] == [0, 0]
    assert target.read_text(encoding="utf-8") == "changed by a hook"


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_timed_out_handler_is_killed_with_its_group_and_never_blocks(tmp_path: Path) -> None:
    """SPEC: HOOK-TIMEOUT-1, HOOK-EVENT-1, HOOK-RUN-1

    The command starts a background grandchild in the handler's process
    group; killing the group at the timeout ends it too.
    """
    pidfile = tmp_path / "pid"
    wait = f"while [ ! -e {shlex.quote(str(pidfile))} ]; do sleep 0.01; done"
    command = f"{fx('sleep.py', 60, pidfile)} & {wait}; {fx('sleep.py', 60)}"
    session = make_session(tmp_path, {PRE: [{"hooks": [handler(command, timeout=1)]}]})
    events = EventLog()
    result = pre(session, events=events)
    assert (result.decision, result.block_reason) == (None, None)
    assert hook_events(events) == [
        {
            "type": "hook",
            "event": PRE,
            "id": "toolu_1",
            "command": command,
            "exit_code": None,
            "timed_out": True,
        }
    ]
    assert gone(int(pidfile.read_text()))


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.skipif(shutil.which("setsid") is None, reason="needs setsid(1)")
def test_a_detached_process_holding_the_pipes_cannot_hang_the_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reference-defined: every wait is bounded (HOOK-RUN-1, HOOK-TIMEOUT-1).

    The shell exits at once, but a grandchild in another session keeps its
    standard output open: the handler counts as running until its timeout,
    then the pipes are closed after a bounded drain.
    """
    monkeypatch.setattr(hooks, "_DRAIN_S", 0.5)
    pidfile = tmp_path / "pid"
    wait = f"while [ ! -e {shlex.quote(str(pidfile))} ]; do sleep 0.01; done"
    command = f"setsid {fx('sleep.py', 60, pidfile)} & {wait}; exit 0"
    session = make_session(tmp_path, {PRE: [{"hooks": [handler(command, timeout=1)]}]})
    events = EventLog()
    try:
        result = pre(session, events=events)
    finally:
        with contextlib.suppress(FileNotFoundError, ProcessLookupError, ValueError):
            os.kill(int(pidfile.read_text()), signal.SIGKILL)
    assert result.decision is None
    assert [(e["exit_code"], e["timed_out"]) for e in hook_events(events)] == [(None, True)]


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_timed_out_handlers_output_is_not_honoured(tmp_path: Path) -> None:
    """SPEC: HOOK-TIMEOUT-1

    It printed a deny before it was killed: a timed-out hook never blocks.
    """
    command = f"{decision('deny', 'too late')} && {fx('sleep.py', 60)}"
    session = make_session(tmp_path, {PRE: [{"hooks": [handler(command, timeout=1)]}]})
    result = pre(session)
    assert (result.decision, result.block_reason) == (None, None)


@pytest.mark.subprocess
def test_a_hook_that_does_not_read_a_large_input_does_not_hang(tmp_path: Path) -> None:
    """Reference-defined: HOOK-RUN-1's input is written without blocking on a full pipe."""
    events = EventLog()
    pre(
        make_session(tmp_path, {PRE: [group("exit 0")]}),
        tool_input={"file_path": "/x", "content": "x" * 2_000_000},
        events=events,
    )
    assert [(e["exit_code"], e["timed_out"]) for e in hook_events(events)] == [(0, False)]


@pytest.mark.subprocess
def test_a_handler_that_cannot_start_is_a_non_blocking_error(tmp_path: Path) -> None:
    """Reference-defined: a missing cwd fails the spawn, a non-blocking error (HOOK-EXIT-1)."""
    session = make_session(tmp_path, {PRE: [group("exit 2")]}, cwd=str(tmp_path / "missing"))
    events = EventLog()
    result = pre(session, events=events)
    assert result.decision is None
    assert [(e["exit_code"], e["timed_out"]) for e in hook_events(events)] == [(None, False)]


def test_no_matching_handler_runs_nothing(tmp_path: Path) -> None:
    """SPEC: HOOK-MATCH-1, HOOK-EVENT-1"""
    events = EventLog()
    session = make_session(tmp_path, {PRE: [group("exit 2", matcher="Bash")]})
    result = pre(session, events=events)
    assert result == PreToolUseResult()
    assert post(session, events) == PostToolUseResult()
    assert events.items() == []


# --------------------------------------------------------------------------- exit codes and JSON


@pytest.mark.subprocess
def test_exit_2_denies_with_stderr_and_ignores_stdout(tmp_path: Path) -> None:
    """SPEC: HOOK-EXIT-1, HOOK-DECISION-1, HOOK-BLOCK-1"""
    allow = json.dumps(specific(permissionDecision="allow", updatedInput={"file_path": "/y"}))
    command = f"echo {shlex.quote(allow)}; printf '  no writes here\\n\\n' >&2; exit 2"
    result = pre_with(tmp_path, command)
    assert result.decision == "deny"
    assert result.block_reason == "Blocked by PreToolUse hook: no writes here"
    assert result.updated_input is None


@pytest.mark.subprocess
def test_exit_2_without_stderr_blocks_without_a_reason(tmp_path: Path) -> None:
    """SPEC: HOOK-BLOCK-1"""
    result = pre_with(tmp_path, "exit 2")
    assert (result.decision, result.block_reason) == ("deny", "Blocked by PreToolUse hook")


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "command",
    [fx("exit_code.py", 1, "oops"), fx("exit_code.py", 3), "kill -9 $$", "exit 255"],
)
def test_other_exit_codes_and_signals_are_non_blocking(tmp_path: Path, command: str) -> None:
    """SPEC: HOOK-EXIT-1"""
    events = EventLog()
    result = pre_with(tmp_path, command, events=events)
    assert (result.decision, result.block_reason) == (None, None)
    assert len(hook_events(events)) == 1
    session = make_session(tmp_path, {POST: [group(command)], FAILURE: [group(command)]})
    for outcome in (post(session), failure(session)):  # stderr reaches the model only on exit 2
        assert outcome.texts == []


@pytest.mark.subprocess
def test_exit_codes_are_reported_and_a_signal_is_null(tmp_path: Path) -> None:
    """SPEC: HOOK-EVENT-1"""
    events = EventLog()
    pre(
        make_session(tmp_path, {PRE: [group("exit 0", "exit 1", "exit 2", "kill -9 $$")]}),
        events=events,
    )
    assert [(e["command"], e["exit_code"], e["timed_out"]) for e in hook_events(events)] == [
        ("exit 0", 0, False),
        ("exit 1", 1, False),
        ("exit 2", 2, False),
        ("kill -9 $$", None, False),
    ]


@pytest.mark.subprocess
def test_a_non_blocking_error_still_honours_a_json_object(tmp_path: Path) -> None:
    """SPEC: HOOK-EXIT-1, HOOK-JSON-1"""
    command = sh_json(specific(permissionDecision="deny", permissionDecisionReason="json"), 1)
    result = pre_with(tmp_path, command)
    assert (result.decision, result.block_reason) == ("deny", "Blocked by PreToolUse hook: json")


DENY_JSON: Final = json.dumps(specific(permissionDecision="deny", permissionDecisionReason="r"))


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("stdout", "expected"),
    [
        (DENY_JSON, "deny"),
        (" \n\t " + DENY_JSON + "\n\n", "deny"),
        ("note: " + DENY_JSON, None),
        ("{not json", None),
        (DENY_JSON + " trailing words", None),
        ("[" + DENY_JSON + "]", None),
        ('"' + "deny" + '"', None),
        ("", None),
        (json.dumps(specific(POST, permissionDecision="deny")), None),
        (json.dumps({"hookSpecificOutput": {"permissionDecision": "deny"}}), None),
        (json.dumps({"hookSpecificOutput": "deny"}), None),
        (
            json.dumps(
                {
                    "suppressOutput": True,
                    "systemMessage": "hi",
                    "whatever": [1],
                    **specific(permissionDecision="deny", extra=1),
                }
            ),
            "deny",
        ),
    ],
)
def test_stdout_is_json_only_when_it_is_an_object(
    tmp_path: Path, stdout: str, expected: str | None
) -> None:
    """SPEC: HOOK-JSON-1"""
    assert pre_with(tmp_path, fx("print_output.py", stdout)).decision == expected


# --------------------------------------------------------------------------- PreToolUse decisions


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (specific(permissionDecision="allow"), "allow"),
        (specific(permissionDecision="ask"), "ask"),
        (specific(permissionDecision="deny"), "deny"),
        (specific(permissionDecision="defer"), None),
        (specific(permissionDecision="Allow"), None),
        (specific(permissionDecision=None), None),
        (specific(), None),
        ({"decision": "approve"}, "allow"),
        ({"decision": "block", "reason": "old"}, "deny"),
        ({"decision": "allow"}, None),
        ({"decision": "deny"}, None),
        ({**specific(permissionDecision="allow"), "decision": "block"}, "allow"),
        ({**specific(permissionDecision="defer"), "decision": "block"}, "deny"),
        ({**specific(POST, permissionDecision="deny"), "decision": "approve"}, "allow"),
    ],
)
def test_one_hooks_decision(tmp_path: Path, output: dict[str, Any], expected: str | None) -> None:
    """SPEC: HOOK-DECISION-1"""
    assert pre_with(tmp_path, sh_json(output)).decision == expected


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("decisions", "expected"),
    [
        (["allow", "ask"], "ask"),
        (["ask", "allow"], "ask"),
        (["allow", "deny", "ask"], "deny"),
        (["defer", "allow"], "allow"),
        (["defer", "defer"], None),
        (["allow", "allow"], "allow"),
    ],
)
def test_decisions_combine_deny_over_ask_over_allow(
    tmp_path: Path, decisions: list[str], expected: str | None
) -> None:
    """SPEC: HOOK-DECISION-1"""
    commands = [decision(value, f"why {i}") for i, value in enumerate(decisions)]
    result = pre_with(tmp_path, *commands)
    assert result.decision == expected
    assert result.blocked is (expected == "deny")


@pytest.mark.subprocess
def test_exit_2_outranks_another_hooks_allow(tmp_path: Path) -> None:
    """SPEC: HOOK-DECISION-1, HOOK-EXIT-1"""
    result = pre_with(tmp_path, decision("allow"), fx("exit_code.py", 2, "stop"))
    assert (result.decision, result.block_reason) == ("deny", "Blocked by PreToolUse hook: stop")


@pytest.mark.subprocess
def test_block_reasons_are_joined_in_configuration_order(tmp_path: Path) -> None:
    """SPEC: HOOK-BLOCK-1, HOOK-CONFIG-1

    Only denying hooks give reasons: a JSON deny's permissionDecisionReason,
    a deprecated block's reason, an exit 2's stripped stderr; a deny without
    a reason adds nothing.
    """
    by_source = {
        "session": {"hooks": {PRE: [group(decision("deny", "from session"))]}},
        "policySettings": {
            "hooks": {
                PRE: [
                    group(
                        decision("deny", "first"),
                        decision("allow", "allowed, not a reason"),
                        fx("exit_code.py", 2, "\n  second line  \n"),
                        decision("deny"),
                        sh_json({"decision": "block", "reason": "deprecated"}),
                        decision("ask", "asked, not a reason"),
                    )
                ]
            }
        },
    }
    result = pre(make_session(tmp_path, by_source=by_source))
    assert result.decision == "deny"
    assert result.block_reason == (
        "Blocked by PreToolUse hook: first\nsecond line\ndeprecated\nfrom session"
    )


@pytest.mark.subprocess
def test_a_json_deny_may_give_its_reason_the_deprecated_way(tmp_path: Path) -> None:
    """SPEC: HOOK-BLOCK-1"""
    output = {**specific(permissionDecision="deny"), "reason": "top-level"}
    result = pre_with(tmp_path, sh_json(output))
    assert result.block_reason == "Blocked by PreToolUse hook: top-level"


@pytest.mark.subprocess
@pytest.mark.parametrize("value", ["allow", "ask"])
def test_allow_and_ask_are_reported_for_the_permission_decision(tmp_path: Path, value: str) -> None:
    """SPEC: HOOK-ALLOW-1, HOOK-DECISION-1

    The hooks module only reports them; the permission decision places them
    at steps 5 and 9 of PERM-ORDER-1. Neither blocks.
    """
    result = pre_with(tmp_path, decision(value, "reason shown to the user only"))
    assert (result.decision, result.block_reason, result.blocked) == (value, None, False)


# --------------------------------------------------------------------------- updatedInput


def updated(tool_input: Mapping[str, Any], value: str = "allow") -> str:
    return fx("updated_input.py", json.dumps(tool_input), value)


@pytest.mark.subprocess
def test_updated_input_of_an_allowing_hook_replaces_the_input(tmp_path: Path) -> None:
    """SPEC: HOOK-UPDATE-1"""
    new = {"file_path": "/elsewhere", "content": "é"}
    assert pre_with(tmp_path, updated(new)).updated_input == new


@pytest.mark.subprocess
def test_updated_input_is_honoured_with_ask(tmp_path: Path) -> None:
    """SPEC: HOOK-UPDATE-1"""
    result = pre_with(tmp_path, decision("allow"), updated({"a": 1}, "ask"))
    assert (result.decision, result.updated_input) == ("ask", {"a": 1})


@pytest.mark.subprocess
def test_the_first_updated_input_in_configuration_order_wins(tmp_path: Path) -> None:
    """SPEC: HOOK-UPDATE-1, HOOK-CONFIG-1"""
    by_source = {
        "session": {"hooks": {PRE: [group(updated({"n": 0}))]}},
        "projectSettings": {"hooks": {PRE: [group(updated({"n": 1}, "ask"), updated({"n": 2}))]}},
    }
    assert pre(make_session(tmp_path, by_source=by_source)).updated_input == {"n": 1}


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "output",
    [
        specific(updatedInput={"n": 1}),
        specific(permissionDecision="defer", updatedInput={"n": 1}),
        specific(permissionDecision="deny", updatedInput={"n": 1}),
        specific(POST, permissionDecision="allow", updatedInput={"n": 1}),
        specific(permissionDecision="allow", updatedInput=[1]),
        specific(permissionDecision="allow", updatedInput="{}"),
    ],
)
def test_updated_input_needs_its_hooks_allow_or_ask(tmp_path: Path, output: dict[str, Any]) -> None:
    """SPEC: HOOK-UPDATE-1"""
    assert pre_with(tmp_path, sh_json(output)).updated_input is None


@pytest.mark.subprocess
def test_a_combined_deny_drops_every_updated_input(tmp_path: Path) -> None:
    """SPEC: HOOK-UPDATE-1, HOOK-DECISION-1"""
    result = pre_with(tmp_path, updated({"n": 1}), "exit 2")
    assert (result.decision, result.updated_input) == ("deny", None)


@pytest.mark.subprocess
def test_a_later_hooks_input_is_used_when_the_first_gives_none(tmp_path: Path) -> None:
    """SPEC: HOOK-UPDATE-1"""
    result = pre_with(tmp_path, sh_json(specific(updatedInput={"n": 0})), updated({"n": 2}))
    assert result.updated_input == {"n": 2}


# --------------------------------------------------------------------------- context and feedback


@pytest.mark.subprocess
def test_pre_tool_use_additional_context_becomes_system_reminders(tmp_path: Path) -> None:
    """SPEC: HOOK-CONTEXT-1"""
    result = pre_with(
        tmp_path,
        sh_json(specific(additionalContext="one")),
        sh_json(specific(POST, additionalContext="wrong event")),
        "exit 0",
        sh_json(specific(permissionDecision="deny", additionalContext="two")),
    )
    reminder = "<system-reminder>PreToolUse hook additional context: {}</system-reminder>"
    assert context_blocks(PRE, result) == [
        {"type": "text", "text": reminder.format("one")},
        {"type": "text", "text": reminder.format("two")},
    ]


@pytest.mark.subprocess
def test_post_texts_keep_configuration_order_across_kinds(tmp_path: Path) -> None:
    """SPEC: HOOK-CONTEXT-1, HOOK-POST-1"""
    commands = [
        fx("exit_code.py", 2, "  exit two  \n"),
        sh_json(
            {"decision": "block", "reason": "blocked", **specific(POST, additionalContext="ctx")}
        ),
        sh_json(specific(POST, additionalContext="later")),
        sh_json({"decision": "block"}),  # no reason: nothing to say
        sh_json({"decision": "approve", "reason": "not a block"}),
    ]
    result = post(make_session(tmp_path, {POST: [group(*commands)]}))
    assert [block["text"] for block in context_blocks(POST, result)] == [
        "<system-reminder>PostToolUse hook feedback: exit two</system-reminder>",
        "<system-reminder>PostToolUse hook additional context: ctx</system-reminder>",
        "<system-reminder>PostToolUse hook feedback: blocked</system-reminder>",
        "<system-reminder>PostToolUse hook additional context: later</system-reminder>",
    ]


@pytest.mark.subprocess
def test_post_tool_use_captures_the_updated_mcp_output(tmp_path: Path) -> None:
    """SPEC: HOOK-POST-1"""
    commands = [
        "exit 0",
        sh_json(specific(POST, updatedMCPToolOutput=[{"type": "text", "text": "new"}])),
        sh_json(specific(POST, updatedMCPToolOutput="second")),
    ]
    result = post(make_session(tmp_path, {POST: [group(*commands)]}))
    assert result.updated_mcp_output == [{"type": "text", "text": "new"}]
    assert result.texts == []


@pytest.mark.subprocess
def test_post_tool_use_failure_feedback_and_context(tmp_path: Path) -> None:
    """SPEC: HOOK-FAILURE-1, HOOK-CONTEXT-1, HOOK-EXIT-1"""
    commands = [
        sh_json(specific(FAILURE, additionalContext="try reading first")),
        fx("exit_code.py", 2, "it failed\n"),
        sh_json(specific(POST, additionalContext="not this event")),
        sh_json(specific(FAILURE, updatedMCPToolOutput="ignored here")),
    ]
    result = failure(make_session(tmp_path, {FAILURE: [group(*commands)]}))
    assert result.updated_mcp_output is None
    assert [block["text"] for block in context_blocks(FAILURE, result)] == [
        f"<system-reminder>{FAILURE} hook additional context: try reading first</system-reminder>",
        f"<system-reminder>{FAILURE} hook feedback: it failed</system-reminder>",
    ]


@pytest.mark.subprocess
def test_hooks_of_one_event_only_run_for_that_event(tmp_path: Path) -> None:
    """SPEC: HOOK-CONFIG-1, HOOK-FAILURE-1"""
    session = make_session(
        tmp_path, {PRE: [group("exit 1")], POST: [group("exit 3")], FAILURE: [group("exit 4")]}
    )
    events = EventLog()
    pre(session, events=events)
    post(session, events)
    failure(session, events)
    assert [(e["event"], e["exit_code"]) for e in hook_events(events)] == [
        (PRE, 1),
        (POST, 3),
        (FAILURE, 4),
    ]


# --------------------------------------------------------------------------- continue: false


@pytest.mark.subprocess
def test_continue_false_blocks_a_pre_tool_use_whatever_it_decided(tmp_path: Path) -> None:
    """SPEC: HOOK-CONTINUE-1, HOOK-BLOCK-1"""
    stop = {
        "continue": False,
        "stopReason": "not shown to the model",
        **specific(permissionDecision="allow", updatedInput={"n": 1}, additionalContext="ctx"),
    }
    result = pre_with(tmp_path, decision("deny", "earlier"), sh_json(stop))
    assert result.decision == "deny"
    assert result.block_reason == "Blocked by PreToolUse hook: earlier\nthe hook stopped execution"
    assert (result.prevent_continuation, result.stop_reason) == (True, "not shown to the model")
    assert result.updated_input is None
    assert "not shown" not in (result.block_reason or "")


@pytest.mark.subprocess
def test_continue_false_without_a_stop_reason(tmp_path: Path) -> None:
    """SPEC: HOOK-CONTINUE-1"""
    result = pre_with(tmp_path, sh_json({"continue": False}), sh_json({"continue": True}))
    assert result.block_reason == "Blocked by PreToolUse hook: the hook stopped execution"
    assert (result.prevent_continuation, result.stop_reason) == (True, None)


@pytest.mark.subprocess
def test_continue_true_or_absent_changes_nothing(tmp_path: Path) -> None:
    """SPEC: HOOK-CONTINUE-1"""
    result = pre_with(tmp_path, sh_json({"continue": True}), sh_json({"continue": 0}))
    assert (result.decision, result.prevent_continuation, result.stop_reason) == (None, False, None)


@pytest.mark.subprocess
def test_continue_false_on_post_events_leaves_the_result(tmp_path: Path) -> None:
    """SPEC: HOOK-CONTINUE-1"""
    stop = {"continue": False, "stopReason": "enough", **specific(POST, additionalContext="ctx")}
    session = make_session(tmp_path, {POST: [group(sh_json(stop))]})
    result = post(session)
    assert (result.prevent_continuation, result.stop_reason) == (True, "enough")
    assert result.texts == [HookText("additional context", "ctx")]


# --------------------------------------------------------------------------- events


@pytest.mark.subprocess
def test_hook_events_come_in_configuration_order_after_all_ended(tmp_path: Path) -> None:
    """SPEC: HOOK-EVENT-1, HOOK-PARALLEL-1

    The first hook cannot end before the second made its marker, so the
    second ends first; the events still follow configuration order.
    """
    a, b = tmp_path / "a", tmp_path / "b"
    first, second = fx("wait_for.py", a, b), fx("modify_file.py", b, "x")
    events = EventLog()
    pre(make_session(tmp_path, {PRE: [group(first, second)]}), events=events)
    fields = {"type": "hook", "event": PRE, "id": "toolu_1", "exit_code": 0, "timed_out": False}
    assert hook_events(events) == [
        {**fields, "command": first},
        {**fields, "command": second},
    ]


@pytest.mark.parametrize(
    ("matcher", "name", "expected"),
    [
        ("Read|Write", "Write", True),
        ("Read | Write", "Write", False),
        ("Read,Write", "Write", False),
        ("Read | Write", "Read | Write", True),
    ],
)
def test_a_profile_without_spaced_lists_reads_spaces_and_commas_as_an_expression(
    matcher: str, name: str, expected: bool
) -> None:
    """SPEC: HOOK-MATCH-1"""
    assert matcher_matches(matcher, name, spaced_lists=False) is expected
