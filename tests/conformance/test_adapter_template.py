"""The adapter template, used as a new user uses it: copied, made executable, run by ``toolconf``.

As shipped it declares no feature, so the whole suite passes vacuously: the
scenarios that need no feature (the protocol itself, an unknown tool) pass,
and every other one is not applicable, each group explained.
"""

from __future__ import annotations

import json
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance import adapter_template
from conformance.adapter_template import Adapter

TEMPLATE = Path(adapter_template.__file__)
TOOLCONF = Path(sys.executable).with_name("toolconf")

pytestmark = pytest.mark.subprocess


@pytest.fixture
def my_adapter(tmp_path: Path) -> Path:
    """The template copied to ``./my-adapter`` in an empty directory, made executable."""
    target = tmp_path / "my-adapter"
    shutil.copyfile(TEMPLATE, target)
    target.chmod(target.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return target


def toolconf(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    if not TOOLCONF.is_file():
        pytest.skip(f"LOUD SKIP: no toolconf script beside {sys.executable} (pip install -e .)")
    return subprocess.run(
        [str(TOOLCONF), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_template_starts_as_an_executable_with_a_shebang(my_adapter: Path) -> None:
    assert TEMPLATE.read_text("utf-8").startswith("#!/usr/bin/env python3\n")
    done = toolconf(my_adapter.parent, "smoke", "--impl", "stdio:./my-adapter")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "smoke: ok: my-agent 0 (python), protocol 1" in done.stdout
    assert "features: none" in done.stdout


def test_the_whole_suite_passes_vacuously_and_says_why(my_adapter: Path) -> None:
    done = toolconf(my_adapter.parent, "run", "--impl", "stdio:./my-adapter", "--no-progress")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    lines = done.stdout.rstrip().splitlines()
    assert lines[-1].startswith("PASSED: all "), lines[-1]
    assert "applicable scenarios passed" in lines[-1]
    assert any("need a feature the implementation does not declare in hello" in x for x in lines)
    assert not [x for x in lines if x.startswith(("FAIL ", "ERROR "))]


def _answer(adapter: Adapter, request: object) -> Any:
    return adapter.handle(json.dumps(request))


def test_bad_requests_get_bad_request_and_the_adapter_goes_on() -> None:
    adapter = Adapter()
    for line in ("not json", "[1]"):
        assert adapter.handle(line)["seq"] is None
    for seq in ("7", True, None, 1.5):
        answer = _answer(adapter, {"seq": seq, "cmd": "hello", "protocol": 1})
        assert answer == {"seq": None, "error": answer["error"]}
        assert answer["error"] == {
            "kind": "bad_request",
            "message": "a request needs an integer seq",
        }
    assert _answer(adapter, {"seq": 1, "cmd": "nope"})["error"]["kind"] == "bad_request"
    no_session = _answer(adapter, {"seq": 2, "cmd": "call", "tool_use": {}})
    assert "needs an open session" in no_session["error"]["message"]
    assert _answer(adapter, {"seq": 3, "cmd": "begin", "session": {"root": "/"}}) == {
        "seq": 3,
        "ok": True,
    }
    for use in (
        {},
        {"id": "u1"},
        {"id": "u1", "name": "Read"},
        {"id": 1, "name": "X", "input": {}},
    ):
        answer = _answer(adapter, {"seq": 4, "cmd": "call", "tool_use": use})
        assert answer["error"]["kind"] == "bad_request", use
    repeated = [{"type": "tool_use", "id": "u", "name": "X", "input": {}}] * 2
    answer = _answer(adapter, {"seq": 5, "cmd": "message", "content": repeated})
    assert "repeats a tool_use id" in answer["error"]["message"]


def test_an_unknown_tool_ends_in_the_unknown_tool_stage() -> None:
    adapter = Adapter()
    _answer(adapter, {"seq": 1, "cmd": "begin", "session": {}})
    use = {"type": "tool_use", "id": "u1", "name": "NoSuchTool", "input": {}}
    answer = _answer(adapter, {"seq": 2, "cmd": "call", "tool_use": use})
    assert answer["events"] == [
        {"type": "tool_start", "id": "u1", "name": "NoSuchTool"},
        {"type": "tool_end", "id": "u1", "stage": "unknown_tool"},
    ]
    assert answer["tool_result"]["is_error"] is True
