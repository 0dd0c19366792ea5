"""The runner's safeguards against a broken implementation (SPEC.md 18.6).

A deliberately reckless adapter (``reckless_adapter.py``) writes wherever it
is told and leaves children behind; these tests check that the host's
``/dev/null`` and real home stay untouched, that nothing it started outlives
it, and what environment it starts with.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import DEFAULT_SCENARIOS, main
from conformance.errors import AdapterTimeout
from conformance.peers.isolation import isolation_available, mount_plan, real_home, wait_gone
from conformance.peers.stdio import StdioConnector
from conformance.run.results import Outcome
from conformance.run.runner import HOST_PATHS_REASON, Runner
from conformance.suite.scenario import Scenario, load_scenario, load_scenarios
from conformance.suite.steps import CallStep, MessageStep
from conformance.wire.connector import ConnectorOptions

RECKLESS = [sys.executable, str(Path(__file__).with_name("reckless_adapter.py"))]
DEV_NULL = load_scenario(DEFAULT_SCENARIOS / "paths" / "paths-write-dev-null-refused.yaml")
needs_isolation = pytest.mark.skipif(
    not isolation_available(), reason="PROTO-ISOLATE-1 needs Linux, unshare and namespaces"
)


def _connector(isolation: str, **options: Any) -> StdioConnector:
    return StdioConnector(
        RECKLESS,
        options=ConnectorOptions(timeout=2.0, hello_timeout=30.0, isolation=isolation, **options),  # type: ignore[arg-type]
    )


@pytest.fixture
def reckless() -> Iterator[StdioConnector]:
    """The reckless adapter, isolated, started."""
    connector = _connector("on")
    connector.start()
    try:
        yield connector
    finally:
        connector.close()


def _sleepers(seconds: str) -> list[int]:
    """Host pids of live ``sleep SECONDS`` processes (a unique SECONDS tags a test's)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                argv = Path("/proc", entry, "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv[:2] == [b"sleep", seconds.encode()]:
                found.append(int(entry))
    return wait_gone(found, 0)


def _spawn(connector: StdioConnector) -> tuple[str, list[int]]:
    seconds = f"300.{uuid.uuid4().int % 10**9:09d}"
    answer = json.loads(_call(connector, "Spawn", seconds=seconds)["content"])
    assert len(answer) == 2
    deadline = time.monotonic() + 10
    while len(pids := _sleepers(seconds)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(pids) == 2
    return seconds, pids


def _call(connector: StdioConnector, name: str, **given: Any) -> dict[str, Any]:
    use = {"type": "tool_use", "id": f"t-{uuid.uuid4().hex[:8]}", "name": name, "input": given}
    answer: dict[str, Any] = connector.request({"cmd": "call", "tool_use": use})
    result: dict[str, Any] = answer["tool_result"]
    return result


@pytest.fixture(params=["where it is", "under the temporary directory", "around it"])
def home_at(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The runner's HOME as it is, moved under ``$TMPDIR``, or holding ``$TMPDIR``."""
    where: str = request.param
    if where == "where it is":
        yield where
        return
    home = Path(os.path.realpath(tempfile.mkdtemp(prefix="toolconf-test-home-")))
    monkeypatch.setenv("HOME", str(home))
    if where == "around it":
        inner = home / "tmp"
        inner.mkdir()
        monkeypatch.setenv("TMPDIR", str(inner))
        monkeypatch.setattr(tempfile, "tempdir", str(inner))
    try:
        yield where
    finally:
        shutil.rmtree(home, ignore_errors=True)


@pytest.mark.subprocess
@needs_isolation
def test_a_broken_adapter_cannot_replace_dev_null_or_write_the_real_home(home_at: str) -> None:
    """SPEC: PROTO-ISOLATE-1

    Wherever the real home lives, the temporary directory included.
    """
    home = real_home()
    assert home is not None
    canary = home / f"toolconf-canary-{uuid.uuid4().hex}"
    with Runner(_connector("on")) as runner:
        assert runner.isolated
        result = runner.run(DEV_NULL)
        # It ran (isolated), and the reckless Write failed it without harm.
        assert result.outcome is Outcome.FAIL
        written = _call(runner.connector, "Write", file_path=str(canary), content="x")  # type: ignore[arg-type]
        assert written["is_error"] is True
        tilde = _call(runner.connector, "Write", file_path="~/canary.txt", content="y")  # type: ignore[arg-type]
        assert tilde["is_error"] is False
        private_home = Path(json.loads(_call(runner.connector, "Env")["content"])["HOME"])  # type: ignore[arg-type]
        assert (private_home / "canary.txt").read_text() == "y"
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert not canary.exists()
    assert not (home / "canary.txt").exists()
    assert not private_home.exists()  # removed with its adapter (PROTO-ENV-1)


def test_the_deeper_path_decides_whether_it_is_writable(tmp_path: Path) -> None:
    """SPEC: PROTO-ISOLATE-1

    The real home is read-only under the writable temporary directory. The
    mounts are made shallowest first; a path both read-only and writable
    stays writable, and a mount that changes nothing is not made.
    """
    tmp, home, private = tmp_path / "tmp", tmp_path / "tmp" / "home", tmp_path / "tmp" / "impl"
    inner = tmp_path / "home2" / "tmp"
    for path in (home, private, inner):
        path.mkdir(parents=True)
    root = Path("/")
    assert mount_plan([root, home], [tmp, private]) == [(root, False), (tmp, True), (home, False)]
    assert mount_plan([root, inner.parent], [inner]) == [(root, False), (inner, True)]
    assert mount_plan([root, tmp], [tmp]) == [(root, False), (tmp, True)]
    assert mount_plan([root, tmp_path / "missing"], [tmp]) == [(root, False), (tmp, True)]


@pytest.mark.subprocess
def test_host_path_scenarios_are_skipped_loudly_unless_isolated() -> None:
    with Runner(_connector("off")) as runner:
        assert not runner.isolated
        skipped = runner.run(DEV_NULL)
    assert skipped.outcome is Outcome.NOT_APPLICABLE
    assert skipped.reason.startswith(HOST_PATHS_REASON)
    assert "/dev/null" in skipped.reason
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.subprocess
def test_the_cli_says_in_one_line_why_host_path_scenarios_were_skipped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["run", "--impl", "stdio:" + " ".join(RECKLESS), "--isolation", "off", "--no-progress"]
    main([*argv, str(DEV_NULL.path)])
    out = capsys.readouterr().out
    # PROTO-ISOLATE-2: after the summary, one line naming the scenario and the flag
    after_summary = out.split("\nlevels: ", 1)[1].splitlines()
    (warning,) = [line for line in after_summary if "real host paths" in line]
    assert warning.startswith("  1 aims at real host paths (/dev/null) and stdio:")
    assert "is not isolated: --host-paths runs it, at this host's risk" in warning
    assert warning.endswith("(paths-write-dev-null-refused)")


def _aims(scenario: Scenario) -> list[str]:
    keys = {"Write": "file_path", "Edit": "file_path", "NotebookEdit": "notebook_path"}
    found = []
    for step in scenario.steps:
        uses = [step.call] if isinstance(step, CallStep) else []
        uses += list(step.calls) if isinstance(step, MessageStep) else []
        for use in uses:
            key = keys.get(use.name)
            path = use.input.get(key) if key and isinstance(use.input, dict) else None
            inside = isinstance(path, str) and path.startswith(
                ("{root}", "{home}", "{session_dir}")
            )
            if isinstance(path, str) and path[:1] in ("/", "~") and not inside:
                found.append(path)
    return found


@pytest.mark.slow
def test_every_scenario_aiming_at_host_paths_declares_them() -> None:
    scenarios, errors = load_scenarios([DEFAULT_SCENARIOS], root=DEFAULT_SCENARIOS)
    assert not errors
    undeclared = {
        s.id: missing
        for s in scenarios
        if (missing := [p for p in _aims(s) if p not in s.host_paths])
    }
    assert undeclared == {}
    assert DEV_NULL.host_paths == ("/dev/null",)


@pytest.mark.subprocess
@pytest.mark.parametrize("isolation", ["off", pytest.param("on", marks=needs_isolation)])
def test_stopping_an_adapter_leaves_no_process(isolation: str) -> None:
    connector = _connector(isolation)
    connector.start()
    seconds, pids = _spawn(connector)
    connector.close()
    assert wait_gone(pids, 5.0) == []
    assert _sleepers(seconds) == []


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("isolation", ["off", pytest.param("on", marks=needs_isolation)])
def test_a_timed_out_adapter_is_killed_with_its_children(isolation: str) -> None:
    connector = _connector(isolation)
    connector.start()
    seconds, pids = _spawn(connector)
    with pytest.raises(AdapterTimeout):
        _call(connector, "Hang")
    connector.restart()  # what the runner does after a timeout
    try:
        assert wait_gone(pids, 5.0) == []
        assert _sleepers(seconds) == []
        assert _call(connector, "Glob")["content"] == "ok"
    finally:
        connector.close()


@pytest.mark.subprocess
@pytest.mark.parametrize("isolation", ["off", pytest.param("on", marks=needs_isolation)])
def test_an_adapter_starts_with_a_scrubbed_environment_and_a_private_home(
    isolation: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLCONF_TEST_SECRET", "s3cret")
    monkeypatch.setenv("TOOLCONF_TEST_DECLARED", "given")
    monkeypatch.setenv("LC_TIME", "C")
    connector = _connector(isolation, pass_env=("TOOLCONF_TEST_DECLARED",))
    connector.start()
    try:
        env = json.loads(_call(connector, "Env")["content"])
    finally:
        connector.close()
    assert "TOOLCONF_TEST_SECRET" not in env
    assert env["TOOLCONF_TEST_DECLARED"] == "given"
    assert env["LC_TIME"] == "C"
    assert env["PATH"] == os.environ["PATH"]
    home, tmp = Path(env["HOME"]), Path(env["TMPDIR"])
    assert home.parent == tmp.parent
    assert home.parent.name.startswith("toolconf-impl-")
    assert str(home) != str(real_home())
    allowed = {"PATH", "LANG", "LANGUAGE", "TZ", "TERM", "PYTHONPATH", "HOME", "TMPDIR"}
    extra = {
        k
        for k in env
        if k not in allowed and not k.startswith(("LC_", "TOOLSYS_", "TOOLCONF_TEST_"))
    }
    assert extra <= {"PWD", "SHLVL", "_"}  # what a shell or Python itself may add


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("isolation", ["off", pytest.param("on", marks=needs_isolation)])
def test_a_hook_of_a_timed_out_adapter_is_killed_too(isolation: str, tmp_path: Path) -> None:
    """The reference adapter runs a hook in a session of its own; the adapter's timeout kills it."""
    seconds = f"300.{uuid.uuid4().int % 10**9:09d}"
    root = tmp_path / "root"
    (root / "home").mkdir(parents=True)
    (root / "a.txt").write_text("a\n")
    hook = {"type": "command", "command": f"sleep {seconds}", "timeout": 600}
    session = {
        "root": str(root),
        "cwd": str(root),
        "env": {"HOME": str(root / "home")},
        "settings": {
            "projectSettings": {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [hook]}]}}
        },
        "prompt": "allow",
        "session_dir": str(tmp_path / "session"),
    }
    options = ConnectorOptions(timeout=2.0, hello_timeout=60.0, isolation=isolation)  # type: ignore[arg-type]
    connector = StdioConnector([sys.executable, "-m", "reference.adapter"], options=options)
    connector.start()
    try:
        connector.request({"cmd": "begin", "session": session})
        with pytest.raises(AdapterTimeout):
            _call(connector, "Read", file_path=str(root / "a.txt"))
        assert len(_sleepers(seconds)) == 1  # the hook is running, in a group of its own
    finally:
        connector.close()
    assert wait_gone(_sleepers(seconds), 5.0) == []
