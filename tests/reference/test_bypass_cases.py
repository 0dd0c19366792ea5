"""Every permission-bypass attempt of the stress harness's bypass cases, on the reference.

Each case runs in a fresh engine and sandbox; a bypass is
the secret or a secret file's name (or the case's ``leak`` text) in the answer, a change under
``secret/``, a changed setup file for a ``compound`` case (the deny rule
``Bash(rm:*)`` must hold), or an entry created beside the sandbox. 0 expected.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path
from typing import Any, Final

import pytest
import yaml
from test_open_race import Flipper

from reference.engine import Engine

REPO: Final = Path(__file__).resolve().parents[2]
DATA: Final = yaml.safe_load(
    (REPO / "conformance/instruments/reliability/bypass-cases.yaml").read_text()
)
SETUP: Final[dict[str, Any]] = DATA["setup"]
CASES: Final[list[dict[str, Any]]] = DATA["cases"]


def _fill(value: Any, root: Path, n: int = 0) -> Any:
    """``{root}`` and ``{n}`` in every string of a JSON value."""
    if isinstance(value, str):
        return value.replace("{root}", str(root)).replace("{n}", str(n))
    if isinstance(value, list):
        return [_fill(item, root, n) for item in value]
    if isinstance(value, dict):
        return {key: _fill(item, root, n) for key, item in value.items()}
    return value


def _snapshot(top: Path) -> dict[str, bytes | None]:
    found: dict[str, bytes | None] = {}
    for directory, dirs, files in os.walk(top):
        for name in [*dirs, *files]:
            path = Path(directory, name)
            found[str(path.relative_to(top))] = None if path.is_dir() else path.read_bytes()
    return found


def _settings(case: dict[str, Any], root: Path) -> dict[str, Any]:
    deny = [*SETUP["deny"], *case.get("settings_deny", [])]
    settings: dict[str, Any] = {"session": {"permissions": {"deny": deny}}}
    hook = case.get("hook")
    if hook is not None:
        script = REPO / "fixtures/hooks/updated_input.py"
        replacement = json.dumps(_fill(hook["updated_input"], root))
        command = f"python3 {script} {shlex.quote(replacement)} {hook['decision']}"
        entry = {"matcher": hook["matcher"], "hooks": [{"type": "command", "command": command}]}
        settings["projectSettings"] = {"hooks": {"PreToolUse": [entry]}}
    return settings


def _lay_out(case: dict[str, Any], root: Path) -> None:
    for name, text in SETUP["files"].items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    for name, target in case.get("symlinks", {}).items():
        (root / name).symlink_to(_fill(target, root))
    for name, target in case.get("hardlinks", {}).items():
        os.link(root / target, root / name)
    if case.get("git"):
        git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
        subprocess.run([*git, "init", "-q"], check=True)
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", "all"], check=True)


def _run(case: dict[str, Any], tmp_path: Path) -> int:
    """The number of bypasses one case achieves against the reference."""
    root = tmp_path / "root"
    root.mkdir()
    session_dir = tmp_path / "session-1"
    session_dir.mkdir()
    _lay_out(case, root)
    home = str(root / "home")
    engine = Engine()
    session = {
        "root": str(root),
        "session_dir": str(session_dir),
        "home": home,
        "env": {"HOME": home},
        "prompt": case.get("prompt", "deny"),
        "settings": _settings(case, root),
    }
    assert engine.handle({"seq": 0, "cmd": "begin", "session": session}) == {"seq": 0, "ok": True}
    secret_before = _snapshot(root / "secret")
    files_before = _snapshot(root)
    beside_before = sorted(p.name for p in tmp_path.iterdir())
    leaks = [case["leak"]] if "leak" in case else [SETUP["secret"], SETUP["name"]]
    race = case.get("race")
    rounds = race["rounds"] if race else 1
    bypasses = 0

    def call(n: int) -> None:
        nonlocal bypasses
        tool_use = {"id": case.get("tool_use_id", f"t{n}"), **_fill(case["call"], root, n)}
        response = engine.handle({"seq": n, "cmd": "call", "tool_use": tool_use})
        assert "tool_result" in response, response
        text = json.dumps(response["tool_result"])
        bypasses += any(leak in text for leak in leaks)

    if race is not None:
        link = root / race["link"]
        first, second = (Path(t) for t in _fill(race["targets"], root))
        link.symlink_to(first)
        with Flipper(link, (first, second)):
            for n in range(1, rounds + 1):
                call(n)
    else:
        call(1)
    bypasses += _snapshot(root / "secret") != secret_before
    if case["form"] == "compound":
        now = _snapshot(root)
        bypasses += any(now.get(name) != files_before[name] for name in SETUP["files"])
    bypasses += sorted(p.name for p in tmp_path.iterdir()) != beside_before
    return bypasses


def _marks(case: dict[str, Any]) -> list[pytest.MarkDecorator]:
    """``subprocess`` for a case that starts processes: git to lay it out, a hook, the link
    flipper of a race, ripgrep, or a Bash command the prompt lets run (the deny rule refuses
    every ``compound`` one before it starts)."""
    name = case["call"]["name"]
    allowed = case.get("prompt") == "allow" and case["form"] != "compound"
    runs = name == "Grep" or (name == "Bash" and allowed)
    if runs or any(case.get(key) for key in ("git", "hook", "race")):
        return [pytest.mark.subprocess]
    return []


@pytest.mark.parametrize(
    "case", [pytest.param(case, id=case["id"], marks=_marks(case)) for case in CASES]
)
def test_no_bypass(case: dict[str, Any], tmp_path: Path) -> None:
    """SPEC: RES-PERSIST-3, BASH-PERM-2, PERM-BASH-4, PERM-PATH-4, FILE-OPEN-1"""
    assert _run(case, tmp_path) == 0


def test_the_cases_cover_every_form_of_issue_12() -> None:
    """SPEC: RES-PERSIST-3, BASH-PERM-2, PERM-BASH-4, PERM-PATH-4, FILE-OPEN-1"""
    forms = {case["form"] for case in CASES}
    assert forms >= {"expansion", "recursive", "compound", "tool_use id", "symlink", ".."}
    assert forms >= {"~", "/proc/self/root", "hard link", "hook", "check-then-use race"}
    assert len({case["id"] for case in CASES}) == len(CASES)
    attempts = sum(case.get("race", {}).get("rounds", 1) for case in CASES)
    assert attempts >= 600 + len(CASES) - 2
