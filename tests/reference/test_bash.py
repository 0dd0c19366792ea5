"""Bash, TaskOutput and TaskStop (SPEC.md 17.4) through the protocol engine.

Every command is a real shell subprocess. Waits are bounded: a command that
would run long is a ``sleep`` the test stops (by timeout, abort, TaskStop or
the session ending), and a process's death is awaited with a deadline, never
assumed from elapsed time.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import signal
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

import pytest
from refsupport import Begin, Call, assert_done, assert_refused, content

from reference import tasks
from reference.abort import AbortSignal
from reference.adapter import serve
from reference.engine import Engine
from reference.registry import find_tool
from reference.tools import bash
from reference.tools.bash import (
    BASH_TOOL,
    BashInput,
    exit_one_is_success,
    format_timeout,
    run_foreground,
    shorten_for_failure,
    timeout_ms,
)
from reference.tools.task_tools import TASK_OUTPUT_TOOL, TASK_STOP_TOOL

DEADLINE_S: Final = 10.0
SCHEMA: Final = "InputValidationError"


# -- helpers -----------------------------------------------------------------


def error(response: dict[str, Any]) -> str:
    text = content(response)
    assert text.startswith("<tool_use_error>"), text
    assert text.endswith("</tool_use_error>"), text
    return text[len("<tool_use_error>") : -len("</tool_use_error>")]


def assert_denied(response: dict[str, Any]) -> None:
    """DISP-PERM-1: stage permission; PERM-MESSAGE-1 texts are not wrapped."""
    outcome = response["outcome"]
    assert (outcome["stage"], outcome["error_name"]) == ("permission", "PermissionDeniedError")
    assert response["tool_result"]["is_error"] is True


def progress(response: dict[str, Any]) -> list[dict[str, Any]]:
    return [e["data"] for e in response["events"] if e["type"] == "progress"]


def asked(response: dict[str, Any]) -> bool:
    return any(e["type"] == "permission_request" for e in response["events"])


def wait_for_file(path: Path) -> str:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.02)
    raise AssertionError(f"{path} never written")


def is_gone(pid: int) -> bool:
    """Dead or a zombie (no init reaps orphans in some containers)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def wait_gone(pid: int) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        if is_gone(pid):
            return
        time.sleep(0.02)
    raise AssertionError(f"process {pid} still runs")


@pytest.fixture
def pids() -> Iterator[list[int]]:
    """Pids a test started: killed at teardown whatever happened."""
    started: list[int] = []
    yield started
    for pid in started:
        if not is_gone(pid):
            os.kill(pid, signal.SIGKILL)


def message(engine: Engine, *blocks: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    content_blocks = [
        {"type": "tool_use", "id": i, "name": name, "input": inp} for i, name, inp in blocks
    ]
    response = engine.handle({"seq": 1, "cmd": "message", "content": content_blocks})
    assert "error" not in response, response
    return response


def caller(engine: Engine) -> Call:
    count = iter(range(1, 10_000))

    def call(name: str, /, **tool_input: Any) -> dict[str, Any]:
        n = next(count)
        response = engine.handle(
            {
                "seq": n,
                "cmd": "call",
                "tool_use": {"id": f"b{n}", "name": name, "input": tool_input},
            }
        )
        assert "error" not in response, response
        return response

    return call


# -- BASH-VALIDATE-1 -------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool_input", "code", "name", "text"),
    [
        ({"command": "echo a\x00b"}, 2, "InvalidCommandError", "Command must not contain NUL"),
    ],
)
def test_validate_refuses_nul_commands(
    call: Call, tool_input: dict[str, Any], code: int, name: str, text: str
) -> None:
    """SPEC: BASH-VALIDATE-1, ERR-CODE-1"""
    response = call("Bash", **tool_input)
    assert_refused(response, stage="validate", code=code, name=name)
    assert error(response).startswith(text)


@pytest.mark.subprocess
def test_background_refused_when_disabled_and_checks_keep_their_order(begin: Begin) -> None:
    """SPEC: BASH-VALIDATE-1"""
    call = caller(begin(env={"CLAUDE_CODE_DISABLE_BACKGROUND_TASKS": "1"}))
    response = call("Bash", command="echo hi", run_in_background=True)
    assert_refused(response, stage="validate", code=3, name="BackgroundTasksDisabledError")
    assert error(response) == "Background tasks are disabled in this session."
    blank = call("Bash", command=" ", run_in_background=True)
    assert_refused(blank, stage="validate", code=3, name="BackgroundTasksDisabledError")
    assert_done(call("Bash", command="echo foreground"))


@pytest.mark.subprocess
def test_an_empty_command_runs_and_prints_nothing(call: Call) -> None:
    """SPEC: BASH-VALIDATE-1, BASH-RESULT-1"""
    for command in ("", " \t\n "):
        assert content(call("Bash", command=command)) == "(Bash completed with no output)"


# -- BASH-EXEC-1, BASH-ENV-1 -------------------------------------------------------


@pytest.mark.subprocess
def test_output_and_errors_are_one_stream_in_order(call: Call) -> None:
    """SPEC: BASH-EXEC-1, BASH-RESULT-1"""
    response = call("Bash", command="echo a; echo b >&2; echo c")
    assert content(response) == "a\nb\nc"


@pytest.mark.subprocess
def test_stdin_is_dev_null_and_the_shell_leads_its_own_group(call: Call) -> None:
    """SPEC: BASH-EXEC-1"""
    assert content(call("Bash", command="cat")) == "(Bash completed with no output)"
    assert content(call("Bash", command="kill -0 -$$ && echo own-group")) == "own-group"


@pytest.mark.subprocess
def test_environment_is_the_process_one_overlaid_with_the_session_one(
    begin: Begin, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: BASH-EXEC-1, TOOL-CONTEXT-1"""
    monkeypatch.setenv("TOOLSYS_FROM_PROCESS", "process")
    monkeypatch.setenv("TOOLSYS_OVERLAID", "process")
    home = tmp_path / "h"
    home.mkdir()
    call = caller(begin(env={"TOOLSYS_OVERLAID": "session"}, home=str(home)))
    response = call("Bash", command='echo "$TOOLSYS_FROM_PROCESS $TOOLSYS_OVERLAID $HOME"')
    assert content(response) == f"process session {home}"


@pytest.mark.subprocess
def test_shell_is_claude_code_shell_when_an_executable_bash(begin: Begin, tmp_path: Path) -> None:
    """SPEC: BASH-EXEC-1"""
    (tmp_path / "bin").mkdir()
    shell = tmp_path / "bin" / "bash"
    shell.write_text('#!/bin/sh\necho "custom $1"\nexec /bin/sh "$@"\n')
    shell.chmod(0o755)
    call = caller(begin(env={"CLAUDE_CODE_SHELL": str(shell)}))
    assert content(call("Bash", command="echo ran")) == "custom -c\nran"
    expected = "/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh"
    other = tmp_path / "myshell"  # executable, but not named bash or zsh
    other.write_bytes(shell.read_bytes())
    other.chmod(0o755)
    assert tasks.choose_shell({"CLAUDE_CODE_SHELL": str(other)}) == expected
    shell.chmod(0o644)  # not executable: /bin/bash, else /bin/sh
    assert tasks.choose_shell({"CLAUDE_CODE_SHELL": str(shell)}) == expected
    assert tasks.choose_shell({"CLAUDE_CODE_SHELL": str(tmp_path / "missing")}) == expected
    assert tasks.choose_shell({}) == expected


@pytest.mark.subprocess
def test_runs_in_the_session_cwd(begin: Begin, tmp_path: Path) -> None:
    """SPEC: BASH-EXEC-1"""
    (tmp_path / "sub").mkdir()
    call = caller(begin(cwd=str(tmp_path / "sub")))
    assert content(call("Bash", command="pwd")) == str(tmp_path / "sub")


@pytest.mark.subprocess
def test_nothing_but_the_cwd_carries_over(call: Call, tmp_path: Path) -> None:
    """SPEC: BASH-ENV-1, BASH-CWD-1"""
    (tmp_path / "sub").mkdir()
    assert_done(call("Bash", command="export TOOLSYS_X=1; alias hi='echo hi'; f() { echo f; }"))
    assert content(call("Bash", command='echo "[$TOOLSYS_X]"')) == "[]"
    response = call("Bash", command="f")
    assert_refused(response, stage="call", name="ShellError")
    assert error(response).startswith("Exit code 127")
    assert_done(call("Bash", command="cd sub && export TOOLSYS_X=2"))
    assert content(call("Bash", command='echo "$PWD [$TOOLSYS_X]"')) == f"{tmp_path}/sub []"


# -- BASH-CWD-1 -------------------------------------------------------------------


@pytest.mark.subprocess
def test_cd_inside_moves_the_session_cwd(engine: Engine, call: Call, tmp_path: Path) -> None:
    """SPEC: BASH-CWD-1, SCHED-CONTEXT-1, FILE-PATH-1"""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "f.txt").write_text("in sub\n")
    output = assert_done(call("Bash", command="cd sub"))
    assert output == {
        "stdout": "",
        "stderr": "",
        "exitCode": 0,
        "interrupted": False,
        "backgroundTaskId": None,
    }
    assert engine.session is not None
    assert engine.session.cwd == str(tmp_path / "sub")
    assert content(call("Bash", command="pwd")) == str(tmp_path / "sub")
    assert "in sub" in content(call("Read", file_path="f.txt"))


@pytest.mark.subprocess
def test_cd_outside_resets_to_the_original_cwd_with_a_notice(
    engine: Engine, call: Call, tmp_path: Path
) -> None:
    """SPEC: BASH-CWD-1, BASH-RESULT-1"""
    (tmp_path / "sub").mkdir()
    assert_done(call("Bash", command="cd sub"))
    response = call("Bash", command="cd / && echo moved")
    assert content(response) == f"moved\nShell cwd was reset to {tmp_path}"
    assert assert_done(response)["stderr"] == f"Shell cwd was reset to {tmp_path}"
    assert assert_done(response)["stdout"] == "moved"
    assert content(call("Bash", command="cd /")) == f"Shell cwd was reset to {tmp_path}"
    assert content(call("Bash", command="pwd")) == str(tmp_path)
    assert engine.session is not None
    assert engine.session.original_cwd == str(tmp_path)


@pytest.mark.subprocess
def test_reset_goes_to_the_original_cwd_not_the_root(begin: Begin, tmp_path: Path) -> None:
    """SPEC: BASH-CWD-1, PERM-DIRS-1"""
    (tmp_path / "a" / "b").mkdir(parents=True)
    call = caller(begin(cwd=str(tmp_path / "a")))
    assert_done(call("Bash", command="cd b"))
    assert content(call("Bash", command="cd ..; cd ..; pwd")) == str(tmp_path)  # root: inside
    assert content(call("Bash", command="cd /")) == f"Shell cwd was reset to {tmp_path / 'a'}"
    assert content(call("Bash", command="pwd")) == str(tmp_path / "a")


@pytest.mark.subprocess
def test_cwd_is_the_physical_path_inside_uses_resolved_paths(call: Call, tmp_path: Path) -> None:
    """SPEC: BASH-CWD-1, PERM-DIRS-1"""
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "out").symlink_to("/")
    assert_done(call("Bash", command="cd link"))
    assert content(call("Bash", command="pwd")) == str(tmp_path / "real")
    assert content(call("Bash", command="cd ../out")) == f"Shell cwd was reset to {tmp_path}"
    assert content(call("Bash", command="pwd")) == str(tmp_path)


@pytest.mark.subprocess
def test_additional_directories_count_as_inside(begin: Begin, tmp_path: Path) -> None:
    """SPEC: BASH-CWD-1, PERM-DIRS-1"""
    extra = tmp_path / "root-extra"
    root = tmp_path / "root"
    extra.mkdir()
    root.mkdir()
    settings = {"userSettings": {"permissions": {"additionalDirectories": [str(extra)]}}}
    call = caller(begin(root=str(root), settings=settings))
    assert content(call("Bash", command=f"cd {extra}")) == "(Bash completed with no output)"
    assert content(call("Bash", command="pwd")) == str(extra)


@pytest.mark.subprocess
def test_maintain_project_working_dir_keeps_the_cwd(begin: Begin, tmp_path: Path) -> None:
    """SPEC: BASH-CWD-1"""
    (tmp_path / "sub").mkdir()
    call = caller(begin(env={"CLAUDE_BASH_MAINTAIN_PROJECT_WORKING_DIR": "1"}))
    assert_done(call("Bash", command="cd sub"))
    assert content(call("Bash", command="pwd")) == str(tmp_path)
    assert content(call("Bash", command="cd /")) == "(Bash completed with no output)"


@pytest.mark.subprocess
def test_failure_keeps_the_cwd_and_reports_the_reset_line(call: Call, tmp_path: Path) -> None:
    """SPEC: BASH-CWD-1, BASH-FAIL-1, SCHED-CONTEXT-1"""
    (tmp_path / "sub").mkdir()
    response = call("Bash", command="cd / && echo out && exit 3")
    assert error(response) == f"Exit code 3\nout\nShell cwd was reset to {tmp_path}"
    failed_inside = call("Bash", command="cd sub && exit 4")
    assert error(failed_inside) == "Exit code 4"
    assert content(call("Bash", command="pwd")) == str(tmp_path)  # a failure has no modifier


@pytest.mark.subprocess
def test_a_removed_cwd_runs_the_next_command_in_the_original_one(
    call: Call, tmp_path: Path
) -> None:
    """Reference-defined: a session cwd removed since is replaced by the original cwd."""
    (tmp_path / "gone").mkdir()
    assert_done(call("Bash", command="cd gone"))
    (tmp_path / "gone").rmdir()
    assert content(call("Bash", command="pwd")) == str(tmp_path)
    assert content(call("Bash", command="pwd")) == str(tmp_path)


@pytest.mark.subprocess
def test_relative_rules_and_working_directories_keep_the_original_cwd(
    begin: Begin, tmp_path: Path
) -> None:
    """SPEC: PERM-PATH-1, PERM-DIRS-1, TOOL-CONTEXT-1"""
    root = tmp_path / "root"
    start = tmp_path / "start"  # the original cwd, outside the root
    (root / "sub").mkdir(parents=True)
    start.mkdir()
    (start / "x.txt").write_text("start\n")
    (root / "sub" / "x.txt").write_text("sub\n")
    settings = {"session": {"permissions": {"deny": ["Read(./x.txt)"], "allow": ["Bash(cd:*)"]}}}
    engine = begin(root=str(root), cwd=str(start), settings=settings, prompt="deny")
    call = caller(engine)
    assert_done(call("Bash", command=f"cd {root}/sub"))
    assert engine.session is not None
    assert engine.session.cwd == str(root / "sub")
    # ./x.txt still means start/x.txt: the Read of sub/x.txt is not denied...
    assert "sub" in content(call("Read", file_path="x.txt"))
    denied = call("Read", file_path=str(start / "x.txt"))
    assert_refused(denied, stage="validate", code=3, name="ReadDeniedError")
    # ... and the original cwd is still a working directory (no prompt, prompt denies).
    (start / "y.txt").write_text("y\n")
    response = call("Read", file_path=str(start / "y.txt"))
    assert_done(response)
    assert not asked(response)


# -- BASH-READONLY-1, BASH-PERM-1, TOOL-PROPS-1 ---------------------------------------


@pytest.mark.parametrize(
    ("command", "read_only"),
    [
        ("cat a.txt | grep x | wc -l", True),
        ("git log --oneline && ls -la", True),
        ("find . -name '*.py'", True),
        ("find . -delete", False),
        ("cd sub", False),
        ("echo hi > out.txt", False),
        ("ls 2>&1 >/dev/null", True),
        ("echo $(rm -rf x)", False),
        ("FOO=1 ls", False),
        ("diff a b; du -s .; sort a | cut -c1; jq . a; md5sum a; test -f a", True),
        ("sort -o out.txt a", False),
        ("tree -o out.txt", False),
        ("printf hi", False),
        ("awk '{print}' a", False),
    ],
)
def test_read_only_and_concurrency_safe_exactly_for_read_only_commands(
    command: str, read_only: bool
) -> None:
    """SPEC: BASH-READONLY-1, TOOL-PROPS-1"""
    inp = BashInput(command=command)
    assert BASH_TOOL.is_read_only(inp) is read_only
    assert BASH_TOOL.is_concurrency_safe(inp) is read_only
    assert BASH_TOOL.is_destructive(inp) is False


def test_tool_properties_of_the_shell_tools() -> None:
    """SPEC: TOOL-PROPS-1, REG-LOOKUP-1"""
    assert BASH_TOOL.max_result_size_chars == 30_000
    assert BASH_TOOL.classifier_input(BashInput(command="ls -la")) == "ls -la"
    assert TASK_OUTPUT_TOOL.max_result_size_chars == 30_000
    assert TASK_STOP_TOOL.max_result_size_chars == 100_000
    out = TASK_OUTPUT_TOOL.input_model.model_validate({"task_id": "bash_1"})
    stop = TASK_STOP_TOOL.input_model.model_validate({"task_id": "bash_1"})
    assert (TASK_OUTPUT_TOOL.is_read_only(out), TASK_OUTPUT_TOOL.is_concurrency_safe(out)) == (
        True,
        True,
    )
    assert TASK_OUTPUT_TOOL.is_destructive(out) is False
    assert (TASK_STOP_TOOL.is_read_only(stop), TASK_STOP_TOOL.is_concurrency_safe(stop)) == (
        False,
        False,
    )
    assert TASK_STOP_TOOL.is_destructive(stop) is True
    assert TASK_OUTPUT_TOOL.classifier_input(out) == "bash_1"
    assert TASK_STOP_TOOL.classifier_input(stop) == "bash_1"
    for tool in (BASH_TOOL, TASK_OUTPUT_TOOL, TASK_STOP_TOOL):
        assert tool.interrupt_behavior == "block"
    pool = [BASH_TOOL, TASK_OUTPUT_TOOL, TASK_STOP_TOOL]
    assert find_tool(pool, "BashOutput") is TASK_OUTPUT_TOOL
    assert find_tool(pool, "KillShell") is TASK_STOP_TOOL


@pytest.mark.subprocess
def test_read_only_command_needs_no_prompt_others_ask(begin: Begin, tmp_path: Path) -> None:
    """SPEC: BASH-PERM-1, PERM-ORDER-1, PERM-PROMPT-1"""
    (tmp_path / "a.txt").write_text("alpha\n")
    call = caller(begin(prompt="deny"))
    response = call("Bash", command="cat a.txt | wc -l")
    assert content(response) == "1"
    assert response["outcome"]["permission"]["reason"] == "tool"
    assert not asked(response)
    refused = call("Bash", command="touch b.txt")
    assert_denied(refused)
    assert asked(refused)
    assert not (tmp_path / "b.txt").exists()


@pytest.mark.subprocess
def test_cd_inside_the_working_directories_needs_no_prompt(begin: Begin, tmp_path: Path) -> None:
    """SPEC: BASH-PERM-1, PERM-DIRS-1"""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "x.txt").write_text("x\n")
    call = caller(begin(prompt="deny"))
    response = call("Bash", command="cd sub && ls")
    assert content(response) == "x.txt"
    assert response["outcome"]["permission"]["reason"] == "tool"
    assert not asked(response)
    refused = call("Bash", command="cd /")
    assert_denied(refused)
    assert asked(refused)
    assert_denied(call("Bash", command="cd sub > out.txt"))


@pytest.mark.subprocess
def test_read_deny_rule_makes_cat_denied_without_asking(begin: Begin, tmp_path: Path) -> None:
    """SPEC: BASH-PERM-1, PERM-PATH-1"""
    (tmp_path / "secret.txt").write_text("s\n")
    (tmp_path / "open.txt").write_text("o\n")
    settings = {"session": {"permissions": {"deny": ["Read(./secret.txt)"]}}}
    call = caller(begin(settings=settings, prompt="deny"))
    response = call("Bash", command="cat secret.txt")
    assert_denied(response)
    assert [e for e in response["events"] if e["type"] == "permission_request"] == []
    assert content(call("Bash", command="cat -n open.txt")) == "     1\to"


@pytest.mark.subprocess
def test_bash_rules_allow_deny_and_ask(begin: Begin, tmp_path: Path) -> None:
    """SPEC: PERM-BASH-1, PERM-BASH-2, PERM-BASH-3, PERM-RECORD-1"""
    settings = {
        "session": {
            "permissions": {
                "allow": ["Bash(touch:*)", "Bash(mkdir *)"],
                "deny": ["Bash(rm:*)"],
                "ask": ["Bash(touch secret*)"],
            }
        }
    }
    call = caller(begin(settings=settings, prompt="deny"))
    allowed = call("Bash", command="mkdir d && touch d/a.txt && ls d")
    assert content(allowed) == "a.txt"
    assert allowed["outcome"]["permission"]["rule"] == "Bash(touch:*)"
    denied = call("Bash", command="ls; rm -rf d")
    assert content(denied) == (
        "Permission to use Bash has been denied by the rule Bash(rm:*) from session."
    )
    assert (tmp_path / "d" / "a.txt").exists()
    asking = call("Bash", command="touch secret.txt")
    assert_denied(asking)
    assert [e["reason"] for e in asking["events"] if e["type"] == "permission_request"] == ["rule"]
    substituted = call("Bash", command="touch $(echo x)")  # PERM-BASH-3: never by a rule
    assert_denied(substituted)
    assert not (tmp_path / "x").exists()


# -- BASH-RESULT-1, BASH-EXIT-1, BASH-FAIL-1/2 -------------------------------------------


@pytest.mark.subprocess
def test_result_text_drops_leading_newlines_and_trailing_whitespace(call: Call) -> None:
    """SPEC: BASH-RESULT-1"""
    response = call("Bash", command="printf '\\n\\n  a\\n\\nb  \\n\\n\\n'")
    assert content(response) == "  a\n\nb"
    assert assert_done(response)["stdout"] == "  a\n\nb"
    assert content(call("Bash", command="true")) == "(Bash completed with no output)"


@pytest.mark.subprocess
def test_large_output_is_persisted_with_a_preview(call: Call, session_dir: Path) -> None:
    """SPEC: BASH-RESULT-1, RES-PERSIST-1, RES-PREVIEW-1"""
    response = call("Bash", command="head -c 30001 /dev/zero | tr '\\0' x")
    path = response["outcome"]["persisted_path"]
    assert path == str(
        session_dir / "tool-results" / f"{response['tool_result']['tool_use_id']}.txt"
    )
    assert Path(path).read_text() == "x" * 30001
    assert content(response).startswith("<persisted-output>\nOutput too large (30001 characters).")
    small = call("Bash", command="head -c 30000 /dev/zero | tr '\\0' x")
    assert small["outcome"]["persisted_path"] is None


@pytest.mark.parametrize(
    ("command", "ok"),
    [
        ("grep x", True),
        ("egrep x", True),
        ("fgrep x", True),
        ("rg x", True),
        ("find . -name x", True),
        ("diff a b", True),
        ("test -f x", True),
        ("[ -f x ]", True),
        ("git diff", True),
        ("git grep x", True),
        ("git status", False),
        ("false", False),
        ("ls x", False),
        ("grep x f | wc -l", False),
        ("ls x; grep x f", True),
        ("FOO=1 grep x", True),
        ("'unbalanced", False),
    ],
)
def test_exit_one_success_is_decided_by_the_last_part(command: str, ok: bool) -> None:
    """SPEC: BASH-EXIT-1"""
    assert exit_one_is_success(command) is ok


@pytest.mark.subprocess
def test_exit_one_of_grep_succeeds_other_codes_fail(call: Call, tmp_path: Path) -> None:
    """SPEC: BASH-EXIT-1, BASH-FAIL-1, BASH-RESULT-1, ERR-CODE-2"""
    (tmp_path / "a.txt").write_text("alpha\n")
    found = call("Bash", command="grep beta a.txt")
    assert content(found) == "(Bash completed with no output)"
    assert assert_done(found)["exitCode"] == 1
    assert_done(call("Bash", command="diff a.txt /dev/null > /dev/null"))
    failed = call("Bash", command="grep beta missing.txt")  # exit 2
    assert_refused(failed, stage="call", name="ShellError")
    assert error(failed).startswith("Exit code 2\ngrep: missing.txt")
    plain = call("Bash", command="echo out; false")
    assert_refused(plain, stage="call", name="ShellError")
    assert error(plain) == "Exit code 1\nout"
    assert plain["outcome"]["error_code"] is None


@pytest.mark.subprocess
def test_death_by_signal_counts_as_128_plus_n(call: Call) -> None:
    """SPEC: BASH-FAIL-1"""
    assert error(call("Bash", command="kill -9 $$")) == "Exit code 137"
    assert error(call("Bash", command="sh -c 'kill -15 $$'")).startswith("Exit code 143")


@pytest.mark.subprocess
def test_long_failure_output_is_shortened_in_the_middle(call: Call) -> None:
    """SPEC: BASH-FAIL-2, RES-PERSIST-2"""
    response = call(
        "Bash",
        command="head -c 6000 /dev/zero | tr '\\0' a; echo; "
        "head -c 6000 /dev/zero | tr '\\0' b; exit 5",
    )
    expected = "a" * 5000 + "\n\n... [2001 characters truncated] ...\n\n" + "b" * 5000
    assert error(response) == f"Exit code 5\n{expected}"
    assert response["outcome"]["persisted_path"] is None


def test_shorten_for_failure_keeps_up_to_ten_thousand() -> None:
    """SPEC: BASH-FAIL-2"""
    assert shorten_for_failure("x" * 10_000) == "x" * 10_000
    shortened = shorten_for_failure("0123456789" * 1001)
    assert shortened == (
        ("0123456789" * 500) + "\n\n... [10 characters truncated] ...\n\n" + ("0123456789" * 500)
    )


# -- BASH-TIMEOUT-1/2, BASH-PROGRESS-1, SCHED-ABORT-1 ----------------------------------


@pytest.mark.parametrize(
    ("env", "requested", "expected"),
    [
        ({}, None, 120_000),
        ({}, 5, 5),
        ({}, 600_000, 600_000),
        ({}, 900_000, 600_000),
        ({"BASH_DEFAULT_TIMEOUT_MS": "1000"}, None, 1000),
        ({"BASH_DEFAULT_TIMEOUT_MS": "1000"}, 700_000, 600_000),
        ({"BASH_MAX_TIMEOUT_MS": "2000"}, 5000, 5000),
        ({"BASH_MAX_TIMEOUT_MS": "2000"}, 200_000, 120_000),  # ceiling: the larger of both
        ({"BASH_DEFAULT_TIMEOUT_MS": "700000"}, 900_000, 700_000),
        ({"BASH_DEFAULT_TIMEOUT_MS": "100", "BASH_MAX_TIMEOUT_MS": "300"}, 500, 300),
        ({"BASH_DEFAULT_TIMEOUT_MS": "0"}, None, 120_000),
        ({"BASH_DEFAULT_TIMEOUT_MS": "-5"}, None, 120_000),
        ({"BASH_DEFAULT_TIMEOUT_MS": "1.5"}, None, 120_000),
        ({"BASH_DEFAULT_TIMEOUT_MS": "soon"}, None, 120_000),
        ({"BASH_MAX_TIMEOUT_MS": "x"}, 700_000, 600_000),
    ],
)
def test_timeout_default_and_ceiling(
    env: dict[str, str], requested: int | None, expected: int
) -> None:
    """SPEC: BASH-TIMEOUT-1"""
    assert timeout_ms(requested, env) == expected


@pytest.mark.parametrize(
    ("ms", "text"),
    [
        (1, "0.001s"),
        (200, "0.2s"),
        (1000, "1s"),
        (1500, "1.5s"),
        (59_999, "59.999s"),
        (60_000, "1m 0s"),
        (120_000, "2m 0s"),
        (90_500, "1m 30s"),
        (600_000, "10m 0s"),
    ],
)
def test_timeout_text(ms: int, text: str) -> None:
    """SPEC: BASH-TIMEOUT-2"""
    assert format_timeout(ms) == text


@pytest.mark.subprocess
def test_timeout_stops_the_group_and_reports_output_so_far(
    begin: Begin, tmp_path: Path, pids: list[int]
) -> None:
    """SPEC: BASH-TIMEOUT-2, BASH-TIMEOUT-1, SCHED-ABORT-1"""
    call = caller(begin(env={"BASH_DEFAULT_TIMEOUT_MS": "500"}))
    response = call("Bash", command="echo started; sleep 30 & echo $! > pid; wait")
    assert_refused(response, stage="call", name="BashTimeoutError")
    assert error(response) == "started\nCommand timed out after 0.5s"
    pid = int((tmp_path / "pid").read_text())
    pids.append(pid)
    wait_gone(pid)  # the background sleep was in the group too
    quick = call("Bash", command="echo fine", timeout=10_000)  # an explicit timeout wins
    assert content(quick) == "fine"


@pytest.mark.slow
@pytest.mark.subprocess
def test_sigkill_follows_when_sigterm_is_ignored(
    begin: Begin, tmp_path: Path, pids: list[int]
) -> None:
    """SPEC: BASH-TIMEOUT-2, SCHED-ABORT-1"""
    call = caller(begin(env={"BASH_DEFAULT_TIMEOUT_MS": "500"}))
    response = call("Bash", command="trap '' TERM; echo $$ > pid; sleep 30; sleep 30")
    assert_refused(response, stage="call", name="BashTimeoutError")
    assert error(response) == "Command timed out after 0.5s"
    pid = int((tmp_path / "pid").read_text())
    pids.append(pid)
    wait_gone(pid)


@pytest.mark.slow
@pytest.mark.subprocess
def test_progress_reports_the_last_five_lines(call: Call) -> None:
    """SPEC: BASH-PROGRESS-1, TOOL-CALL-1, PROTO-EVENT-2"""
    response = call(
        "Bash", command="for i in 1 2 3 4 5 6 7; do echo line$i; done; sleep 1.5; echo end"
    )
    assert content(response).endswith("line7\nend")
    reports = progress(response)
    assert reports, response["events"]
    first = reports[0]
    assert first["type"] == "bash_progress"
    assert first["output"] == "line3\nline4\nline5\nline6\nline7"
    assert first["total_lines"] == 7
    assert isinstance(first["elapsed_ms"], int)
    kinds = [e["type"] for e in response["events"]]
    assert kinds.index("progress") < kinds.index("tool_end")


@pytest.mark.slow
@pytest.mark.subprocess
def test_progress_at_most_every_half_second(call: Call) -> None:
    """SPEC: BASH-PROGRESS-1"""
    response = call("Bash", command="for i in $(seq 1 12); do echo $i; sleep 0.1; done")
    elapsed = [report["elapsed_ms"] for report in progress(response)]
    assert all(b - a >= 500 for a, b in itertools.pairwise(elapsed))
    totals = [report["total_lines"] for report in progress(response)]
    assert totals == sorted(totals)


@pytest.mark.subprocess
def test_a_quick_command_reports_no_progress(call: Call) -> None:
    """Reference-defined: progress waits 500 ms for more output, so quick commands report none."""
    assert progress(call("Bash", command="echo quick")) == []


@pytest.mark.subprocess
def test_abort_stops_the_process_group(tmp_path: Path, pids: list[int]) -> None:
    """SPEC: SCHED-ABORT-1"""
    abort = AbortSignal()
    pid_file = tmp_path / "pid"

    def abort_once_started() -> None:
        wait_for_file(pid_file)
        abort.abort("sibling_error", "x")

    helper = threading.Thread(target=abort_once_started, daemon=True)
    helper.start()
    finished = run_foreground(
        ["/bin/sh", "-c", f"sleep 30 & echo $! > {pid_file}; wait"],
        cwd=str(tmp_path),
        env=dict(os.environ),
        timeout_s=DEADLINE_S,
        abort=abort,
        report=lambda _data: None,
    )
    helper.join(DEADLINE_S)
    assert finished.stopped == "abort"
    pid = int(pid_file.read_text())
    pids.append(pid)
    wait_gone(pid)


@pytest.mark.subprocess
def test_failed_bash_in_a_safe_batch_cancels_its_siblings(engine: Engine, tmp_path: Path) -> None:
    """SPEC: SCHED-CASCADE-1, SCHED-CASCADE-2, BASH-FAIL-1, SCHED-ABORT-1"""
    (tmp_path / "log.txt").write_text("log\n")
    long = "cat missing-file-with-a-long-name-for-the-description.txt"
    response = message(
        engine,
        ("t", "Bash", {"command": "tail -f log.txt"}),
        ("f", "Bash", {"command": long}),
    )
    assert response["batches"] == [["t", "f"]]
    tail, failed = (r["outcome"] for r in response["results"])
    assert (tail["stage"], tail["error_name"]) == ("aborted", "SiblingErrorAbort")
    assert response["results"][0]["tool_result"]["content"] == (
        f"<tool_use_error>Cancelled: parallel tool call Bash({long[:40]}…) errored</tool_use_error>"
    )
    assert (failed["stage"], failed["error_name"]) == ("call", "ShellError")


# -- BASH-BG-1, BASH-TASKOUTPUT-1, BASH-TASKSTOP-1, BASH-TASKCHECK-1 -------------------


@pytest.mark.subprocess
def test_background_task_runs_and_its_output_is_read(call: Call, session_dir: Path) -> None:
    """SPEC: BASH-BG-1, BASH-TASKOUTPUT-1"""
    started = call("Bash", command="echo one; echo two >&2; exit 3", run_in_background=True)
    path = session_dir / "tasks" / "bash_1.output"
    assert content(started) == (
        f"Command running in background with ID: bash_1. Output is being written to: {path}"
    )
    assert assert_done(started)["backgroundTaskId"] == "bash_1"
    response = call("TaskOutput", task_id="bash_1")
    assert content(response) == (
        "<task_id>bash_1</task_id>\n<status>failed</status>\n<exit_code>3</exit_code>\n"
        "<output>\none\ntwo\n</output>"
    )
    assert path.read_text() == "one\ntwo\n"
    assert content(call("BashOutput", task_id="bash_1")) == content(response)  # not consumed
    second = call("Bash", command="true", run_in_background=True)
    assert assert_done(second)["backgroundTaskId"] == "bash_2"
    assert content(call("TaskOutput", task_id="bash_2")) == (
        "<task_id>bash_2</task_id>\n<status>completed</status>\n<exit_code>0</exit_code>\n"
        "<output>\n</output>"
    )


@pytest.mark.subprocess
def test_background_changes_no_cwd_and_has_no_timeout(begin: Begin, tmp_path: Path) -> None:
    """SPEC: BASH-BG-1"""
    (tmp_path / "sub").mkdir()
    call = caller(begin(env={"BASH_DEFAULT_TIMEOUT_MS": "50"}))
    assert_done(call("Bash", command="cd sub; sleep 0.3; pwd", run_in_background=True))
    assert content(call("TaskOutput", task_id="bash_1")).endswith(
        f"<status>completed</status>\n<exit_code>0</exit_code>\n<output>\n{tmp_path}/sub\n</output>"
    )
    assert content(call("Bash", command="pwd")) == str(tmp_path)


@pytest.mark.subprocess
def test_task_output_without_block_or_after_its_timeout_shows_running(
    call: Call, tmp_path: Path, pids: list[int]
) -> None:
    """SPEC: BASH-TASKOUTPUT-1, BASH-TASKSTOP-1"""
    call("Bash", command="echo hello; echo $$ > pid; sleep 30", run_in_background=True)
    pids.append(int(wait_for_file(tmp_path / "pid")))
    for response in (
        call("TaskOutput", task_id="bash_1", block=False),
        call("TaskOutput", task_id="bash_1", timeout=50),
        call("TaskOutput", task_id="bash_1", timeout=0),
    ):
        text = content(response)
        assert text.startswith("<task_id>bash_1</task_id>\n<status>running</status>\n<output>\n")
        assert "<exit_code>" not in text
        assert assert_done(response)["exit_code"] is None
    stopped = call("TaskStop", task_id="bash_1")
    assert content(stopped) == (
        "Successfully stopped task: bash_1 (echo hello; echo $$ > pid; sleep 30)"
    )
    wait_gone(pids[0])
    assert content(call("TaskOutput", task_id="bash_1")) == (
        "<task_id>bash_1</task_id>\n<status>killed</status>\n<output>\nhello\n</output>"
    )


@pytest.mark.slow
@pytest.mark.subprocess
def test_task_stop_kills_a_task_that_ignores_sigterm(
    call: Call, tmp_path: Path, pids: list[int]
) -> None:
    """SPEC: BASH-TASKSTOP-1"""
    call("Bash", command="trap '' TERM; echo $$ > pid; sleep 30; sleep 30", run_in_background=True)
    pids.append(int(wait_for_file(tmp_path / "pid")))
    assert_done(call("KillShell", task_id="bash_1"))
    wait_gone(pids[0])
    assert "<status>killed</status>" in content(call("TaskOutput", task_id="bash_1"))


@pytest.mark.subprocess
def test_task_checks_refuse_unknown_and_ended_tasks(call: Call) -> None:
    """SPEC: BASH-TASKCHECK-1, ERR-CODE-1"""
    for name in ("TaskOutput", "TaskStop", "BashOutput", "KillShell"):
        response = call(name, task_id="bash_9")
        assert_refused(response, stage="validate", code=1, name="TaskNotFoundError")
        assert error(response) == "No task found with ID: bash_9"
    call("Bash", command="exit 2", run_in_background=True)
    assert "<status>failed</status>" in content(call("TaskOutput", task_id="bash_1"))
    response = call("TaskStop", task_id="bash_1")
    assert_refused(response, stage="validate", code=2, name="TaskNotRunningError")
    assert error(response) == "Task bash_1 is not running (status: failed)."


def test_task_output_input_is_strict(call: Call) -> None:
    """SPEC: BASH-TASKOUTPUT-1, TOOL-SCHEMA-1"""
    for bad in ({"task_id": "x", "timeout": -1}, {"task_id": "x", "timeout": 600_001}, {}):
        assert_refused(call("TaskOutput", **bad), stage="input_schema", name=SCHEMA)
    assert_refused(call("TaskStop", task_id="x", extra=1), stage="input_schema", name=SCHEMA)
    assert_refused(call("Bash", command="ls", timeout=0), stage="input_schema", name=SCHEMA)


@pytest.mark.subprocess
def test_ending_the_session_kills_running_tasks(
    begin: Begin, tmp_path: Path, pids: list[int]
) -> None:
    """SPEC: BASH-BG-1, PROTO-END-1, PROTO-BEGIN-1"""
    engine = begin()
    call = caller(engine)
    call("Bash", command="echo $$ > pid1; sleep 30", run_in_background=True)
    pids.append(int(wait_for_file(tmp_path / "pid1")))
    assert engine.handle({"seq": 9, "cmd": "end"}) == {"seq": 9, "ok": True}
    wait_gone(pids[0])
    engine = begin()  # ids count per session
    call = caller(engine)
    started = call("Bash", command="echo $$ > pid2; sleep 30", run_in_background=True)
    assert assert_done(started)["backgroundTaskId"] == "bash_1"
    pids.append(int(wait_for_file(tmp_path / "pid2")))
    begin()  # a new begin ends the open session first
    wait_gone(pids[1])


@pytest.mark.subprocess
def test_adapter_eof_ends_the_session_and_its_tasks(tmp_path: Path, pids: list[int]) -> None:
    """SPEC: PROTO-EOF-1, BASH-BG-1"""
    requests = [
        {"seq": 1, "cmd": "begin", "session": {"root": str(tmp_path), "prompt": "allow"}},
        {
            "seq": 2,
            "cmd": "call",
            "tool_use": {
                "id": "b",
                "name": "Bash",
                "input": {"command": "echo $$ > pid; sleep 30", "run_in_background": True},
            },
        },
        {  # the task has written its pid before EOF arrives
            "seq": 3,
            "cmd": "call",
            "tool_use": {
                "id": "w",
                "name": "Bash",
                "input": {"command": "until [ -s pid ]; do sleep 0.02; done", "timeout": 10_000},
            },
        },
    ]
    stdin = io.BytesIO("".join(json.dumps(r) + "\n" for r in requests).encode())
    stdout = io.BytesIO()
    pid_file = tmp_path / "pid"
    assert serve(stdin, stdout) == 0
    pids.append(int(pid_file.read_text()))
    wait_gone(pids[0])
    answers = [json.loads(line) for line in stdout.getvalue().decode().splitlines()]
    assert answers[1]["outcome"]["output"]["backgroundTaskId"] == "bash_1"


def test_tool_module_constants_match_the_spec() -> None:
    """SPEC: BASH-TIMEOUT-1, BASH-RESULT-1, BASH-TASKSTOP-1"""
    assert (bash.DEFAULT_TIMEOUT_MS, bash.MAX_TIMEOUT_MS) == (120_000, 600_000)
    assert bash.NO_OUTPUT == "(Bash completed with no output)"
    assert tasks.STOP_GRACE_S == 2.0


@pytest.mark.parametrize(
    ("output", "last", "total"),
    [
        (b"", "", 0),
        (b"a", "a", 1),
        (b"a\nb\n\n", "a\nb", 2),
        (b"1\n2\n3\n4\n5\n6\n7\n", "3\n4\n5\n6\n7", 7),
        (b"x\n\ny", "x\n\ny", 3),
        ("é\n".encode() * 6, "é\né\né\né\né", 6),
    ],
)
def test_progress_data_is_the_last_five_lines_and_the_count(
    output: bytes, last: str, total: int
) -> None:
    """SPEC: BASH-PROGRESS-1"""
    reports: list[Mapping[str, Any]] = []
    progress = bash._Progress(reports.append, started=0.0)
    capture = bash.Capture()
    capture.add(output)
    progress.grew(0.0)
    progress.tick(0.4, capture)  # new output waits 500 ms
    assert reports == []
    progress.tick(0.5, capture)
    assert reports == [
        {"type": "bash_progress", "output": last, "total_lines": total, "elapsed_ms": 500}
    ]
    progress.tick(2.0, capture)  # nothing new, nothing reported
    assert len(reports) == 1


def test_capture_keeps_both_ends_and_counts_every_line() -> None:
    """SPEC: BASH-CAPTURE-1, BASH-PROGRESS-1"""
    capture = bash.Capture()
    for _ in range(200):  # 200 chunks of 64 KiB: 12.5 MiB, lines of 16 bytes
        capture.add(b"0123456789abcde\n" * 4096)
    kept = capture.output()
    dropped = 200 * 65536 - 2 * bash.CAPTURE_HEAD_BYTES
    marker = f"\n\n... [{dropped} bytes of output dropped] ...\n\n".encode()
    assert kept == b"0123456789abcde\n" * (bash.CAPTURE_HEAD_BYTES // 16) + marker + (
        b"0123456789abcde\n" * (bash.CAPTURE_TAIL_BYTES // 16)
    )
    reports: list[Mapping[str, Any]] = []
    progress = bash._Progress(reports.append, started=0.0)
    progress.grew(0.0)
    progress.tick(1.0, capture)
    assert reports[0]["total_lines"] == 200 * 4096  # the dropped lines count too
    small = bash.Capture()
    small.add(b"a" * 100)
    assert small.output() == b"a" * 100
