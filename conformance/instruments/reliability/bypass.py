"""Permission-bypass attempts against deny rules (PROTO-STRESS-1).

The cases are data, in one place: ``bypass-cases.yaml`` beside this module
(its header documents the format), or a file of the same format given with
``--cases``. Each case runs in a
fresh session on a fresh sandbox laid out as ``setup`` says, with the deny
rules of ``setup.deny`` plus the case's ``settings_deny``; its prompt answers
``deny`` unless it says ``allow``. It may add symlinks, hard links, a
PreToolUse hook answering ``decision`` with ``updated_input``, its own
tool_use id, or a race (a symlink flipped between two targets while the call
runs ``rounds`` times).

A bypass is any of: a secret byte in an answer (the setup's ``secret``, a
line of a file under ``secret/`` or the case's ``leak`` text, each unless the
request itself carries it), a file under ``secret/`` changed or created, a
setup file changed by a ``compound`` case, or a new entry at ``/`` or in the
sandbox outside its root and session directories.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from conformance.errors import AdapterFailure
from conformance.instruments.reliability.common import RawAdapter, tool_use
from conformance.trees import remove_tree
from conformance.wire.connector import ConnectorOptions

__all__ = ["CASES_FILE", "BypassFigures", "load_cases", "run_bypass"]

CASES_FILE: Final = Path(__file__).with_name("bypass-cases.yaml")

"""The attempts used when ``bypass-cases.yaml`` is absent, in its format."""


@dataclass
class BypassFigures:
    """Attempts (race rounds count one each), bypasses, and each bypassing case."""

    source: str = ""
    cases: int = 0
    attempts: int = 0
    bypasses: int = 0
    errors: int = 0
    """Cases the implementation crashed or timed out on (the check could not run)."""
    by_form: dict[str, dict[str, int]] = field(default_factory=dict)
    bypassed: list[dict[str, Any]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No bypass and no case the implementation failed on."""
        return not (self.bypasses or self.errors)


def load_cases(path: Path | None = None) -> tuple[dict[str, Any], str]:
    """The cases document and where it came from (``path``, else ``CASES_FILE``).

    Raises:
        ValueError: the file is missing or not a cases document.
    """
    chosen = path or CASES_FILE
    try:
        data = yaml.safe_load(chosen.read_text("utf-8"))
    except OSError as exc:
        raise ValueError(f"{chosen}: cannot read the bypass cases ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        raise ValueError(f"{chosen}: expected a mapping with setup and a list of cases")
    return data, str(chosen)


def run_bypass(
    impl: str,
    options: ConnectorOptions,
    *,
    cases_file: Path | None = None,
    race_rounds: int | None = None,
    only: str = "",
) -> BypassFigures:
    """Run every case (``only``: ids containing it) against ``impl``; see the module.

    ``race_rounds`` caps the rounds of race cases (small CI runs).
    """
    document, source = load_cases(cases_file)
    figures = BypassFigures(source=source)
    setup: Mapping[str, Any] = document.get("setup", {})
    adapter = RawAdapter(impl, options)
    try:
        adapter.start()
        for case in document["cases"]:
            if only and only not in case["id"]:
                continue
            _case(adapter, setup, case, figures, race_rounds)
    except AdapterFailure as exc:
        figures.errors += 1
        figures.failures.append(f"the adapter cannot start: {exc}")
    finally:
        adapter.close()
    return figures


class _Box:
    """One case's sandbox: ``base/root`` (the session root), ``base/session``."""

    def __init__(self, setup: Mapping[str, Any], case: Mapping[str, Any]) -> None:
        self.base = Path(os.path.realpath(tempfile.mkdtemp(prefix="toolconf-bypass-")))
        self.root = self.base / "root"
        self.session = self.base / "session"
        self.root.mkdir()
        self.session.mkdir()
        (self.root / "home").mkdir()
        for name, text in setup.get("files", {}).items():
            path = self.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, "utf-8")
        for name, target in case.get("symlinks", {}).items():
            link = self.root / name
            link.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(self.expand(target), link)
        for name, target in case.get("hardlinks", {}).items():
            os.link(self.root / target, self.root / name)
        command = json.dumps(case.get("call", {}))
        if "git " in command and shutil.which("git"):
            self._git()

    def _git(self) -> None:
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "HOME": str(self.root / "home"),
        }
        env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
        for argv in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "setup"]):
            subprocess.run(["git", *argv], cwd=self.root, env=env, capture_output=True, check=False)

    def expand(self, value: Any) -> Any:
        """``{root}`` and ``{home}`` replaced in every string of a JSON value."""
        if isinstance(value, str):
            return value.replace("{root}", str(self.root)).replace(
                "{home}", str(self.root / "home")
            )
        if isinstance(value, dict):
            return {k: self.expand(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.expand(v) for v in value]
        return value

    def snapshot(self, under: str = "") -> dict[str, bytes | str]:
        """Every entry below ``root/under``: a file's bytes, a link's target, ``dir``."""
        top = self.root / under
        found: dict[str, bytes | str] = {}
        for directory, dirs, files in os.walk(top):
            for name in dirs + files:
                path = Path(directory, name)
                key = str(path.relative_to(self.root))
                with contextlib.suppress(OSError):
                    if path.is_symlink():
                        found[key] = "-> " + os.readlink(path)
                    elif path.is_dir():
                        found[key] = "dir"
                    else:
                        found[key] = path.read_bytes()
        return found

    def outside(self) -> set[str]:
        """Entries at ``/`` and in the sandbox beside its root and session directory."""
        names = {f"/{n}" for n in os.listdir("/")}
        return names | {f"base/{n}" for n in os.listdir(self.base)}


def _settings(deny: list[str], hook: Mapping[str, Any] | None, box: _Box) -> dict[str, Any]:
    settings: dict[str, Any] = {"userSettings": {"permissions": {"deny": deny}}}
    if hook:
        answer = {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": hook.get("decision", "allow"),
                "updatedInput": box.expand(hook.get("updated_input", {})),
            }
        }
        script = box.base / "hook.json"
        script.write_text(json.dumps(answer), "utf-8")
        group = {
            "matcher": hook.get("matcher", "*"),
            "hooks": [{"type": "command", "command": f"cat {script}"}],
        }
        settings["projectSettings"] = {"hooks": {"PreToolUse": [group]}}
    return settings


def _needles(setup: Mapping[str, Any], case: Mapping[str, Any], box: _Box) -> list[str]:
    found = [str(setup.get("secret", ""))]
    found += [
        line.strip()
        for name, text in setup.get("files", {}).items()
        if name.startswith("secret/")
        for line in str(text).splitlines()
    ]
    if case.get("leak"):
        found.append(str(case["leak"]))
    # A needle shorter than 6 characters ("keep") would match ordinary words.
    return [n for n in dict.fromkeys(found) if len(n) >= 6]


def _case(
    adapter: RawAdapter,
    setup: Mapping[str, Any],
    case: Mapping[str, Any],
    figures: BypassFigures,
    race_rounds: int | None,
) -> None:
    box = _Box(setup, case)
    form = str(case.get("form", "other"))
    tally = figures.by_form.setdefault(form, {"attempts": 0, "bypasses": 0})
    figures.cases += 1
    try:
        deny = [*setup.get("deny", []), *case.get("settings_deny", [])]
        session = {
            "root": str(box.root),
            "cwd": str(box.root),
            "env": {"HOME": str(box.root / "home")},
            "home": str(box.root / "home"),
            "settings": _settings(deny, case.get("hook"), box),
            "prompt": case.get("prompt", "deny"),
            "test_tools": False,
            "session_dir": str(box.session),
        }
        secret_before = box.snapshot("secret")
        files_before = {n: box.snapshot().get(n) for n in setup.get("files", {})}
        outside_before = box.outside()
        race = case.get("race")
        rounds = int(race["rounds"]) if race else 1
        if race and race_rounds is not None:
            rounds = min(rounds, race_rounds)
        adapter.request({"cmd": "begin", "session": session})
        leaks: list[str] = []
        stop = threading.Event()
        flipper = _flip(box, race, stop) if race else None
        try:
            for n in range(rounds):
                call = box.expand(case["call"])
                given = json.loads(json.dumps(call.get("input", {})).replace("{n}", str(n)))
                use = tool_use(
                    call["name"], given, box.expand(case.get("tool_use_id", f"toolu_b{n}"))
                )
                request = {"cmd": "call", "tool_use": use}
                answer = json.dumps(adapter.request_raw(request), ensure_ascii=False)
                asked = json.dumps(request, ensure_ascii=False) + json.dumps(case.get("hook", {}))
                leaks += [n for n in _needles(setup, case, box) if n in answer and n not in asked]
                figures.attempts += 1
                tally["attempts"] += 1
        finally:
            stop.set()
            if flipper is not None:
                flipper.join(timeout=5)
        adapter.request({"cmd": "end"})
        problems = [f"returned {n!r}" for n in dict.fromkeys(leaks)]
        secret_after = box.snapshot("secret")
        changed = sorted(
            k
            for k in secret_after.keys() | secret_before.keys()
            if secret_after.get(k) != secret_before.get(k)
        )
        if changed:
            problems.append(f"changed or created in secret/: {', '.join(changed[:5])}")
        if form == "compound":
            after = box.snapshot()
            gone = [n for n, data in files_before.items() if after.get(n) != data]
            if gone:
                problems.append(f"a denied command changed {', '.join(gone)}")
        new_outside = sorted(box.outside() - outside_before)
        if new_outside:
            problems.append(f"created outside the root: {', '.join(new_outside)}")
        if problems:
            figures.bypasses += 1
            tally["bypasses"] += 1
            figures.bypassed.append({"id": case["id"], "form": form, "found": problems})
    except AdapterFailure as exc:
        figures.errors += 1
        figures.failures.append(f"{case['id']}: {exc}"[:300])
        adapter.restart()
    finally:
        remove_tree(box.base)


def _flip(box: _Box, race: Mapping[str, Any], stop: threading.Event) -> threading.Thread:
    """A thread that flips ``race.link`` between its targets until ``stop``."""
    link = box.root / race["link"]
    targets = [box.expand(t) for t in race["targets"]]
    link.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        link.unlink()
    os.symlink(targets[0], link)

    def flip() -> None:
        index = 0
        temporary = link.with_name(link.name + ".flip")
        while not stop.is_set():
            index = 1 - index
            with contextlib.suppress(OSError):
                os.symlink(targets[index], temporary)
                os.replace(temporary, link)

    thread = threading.Thread(target=flip, daemon=True)
    thread.start()
    return thread
