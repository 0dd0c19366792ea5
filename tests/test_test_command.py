"""The README's test command (``.ci/tests``) prints its coverage report when a test fails,
and still exits non-zero then, whichever of its processes ran the failing test; ended by a
signal, it ends every one of its processes."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / ".ci" / "tests"

pytestmark = pytest.mark.subprocess


def _env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHON": sys.executable,
        "COVERAGE_FILE": str(tmp_path / "cov"),
        "TOOLSYS_TEST_SPLITS": "2",
    }


def run_script(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    test = tmp_path / "test_one.py"
    test.write_text(f"from conformance.suite.selection import spec_matches\n\n\n{body}")
    return subprocess.run(
        [str(SCRIPT), "-q", "-p", "no:randomly", str(test)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=_env(tmp_path),
    )


_IN_THE_FOREGROUND = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)
"""Become the command with Ctrl-C's default disposition, as a shell in the foreground has it:
a shell cannot trap a signal ignored when it started, and a runner in the background (CI)
ignores SIGINT."""


def _pytests_of(test: Path, *, besides: int) -> list[int]:
    """Live processes but ``besides`` (the command itself) whose command line names ``test``:
    the command's pytest processes."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == besides:
            continue
        try:
            if str(test).encode() in (entry / "cmdline").read_bytes():
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    found.append(int(entry.name))
        except (OSError, IndexError):
            continue
    return found


def test_a_failing_test_still_prints_the_coverage_report_and_fails(tmp_path: Path) -> None:
    done = run_script(tmp_path, "def test_fails() -> None:\n    assert spec_matches('A-1', 'B')\n")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed" in done.stdout
    assert "TOTAL" in done.stdout.split("1 failed")[1]


def test_a_failure_in_the_second_share_fails_the_command_and_is_shown(tmp_path: Path) -> None:
    body = (
        "def test_passes() -> None:\n    assert spec_matches('A-1', 'A')\n\n\n"
        "def test_fails() -> None:\n    assert spec_matches('A-1', 'B')\n"
    )
    done = run_script(tmp_path, body)
    assert done.returncode == 1, done.stdout + done.stderr
    first, second = done.stdout.split("== tests, group 2 of 2")
    assert "1 passed" in first
    assert "1 failed" in second
    assert "FAILED" in second
    assert "TOTAL" in second.split("1 failed")[1]


def test_a_passing_run_prints_the_report_and_passes(tmp_path: Path) -> None:
    done = run_script(tmp_path, "def test_passes() -> None:\n    assert spec_matches('A-1', 'A')\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "TOTAL" in done.stdout


def test_the_readme_and_ci_run_it() -> None:
    assert ".ci/tests" in (ROOT / "README.md").read_text("utf-8")
    assert "PYTHON=python .ci/tests" in (ROOT / ".ci" / "run").read_text("utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_every_group(tmp_path: Path, sig: signal.Signals) -> None:
    test = tmp_path / "test_slow.py"
    test.write_text(
        "import time\n\n\ndef test_a() -> None:\n    time.sleep(120)\n\n\n"
        "def test_b() -> None:\n    time.sleep(120)\n"
    )
    script = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _IN_THE_FOREGROUND,
            str(SCRIPT),
            "-q",
            "-p",
            "no:randomly",
            str(test),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=_env(tmp_path),
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(_pytests_of(test, besides=script.pid)) < 2:
            time.sleep(0.1)
        assert len(_pytests_of(test, besides=script.pid)) >= 2, "both groups did not start"
        os.kill(script.pid, sig)
        assert script.wait(timeout=30) == 128 + sig
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _pytests_of(test, besides=script.pid):
            time.sleep(0.1)
        left = _pytests_of(test, besides=script.pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(script.pid, signal.SIGKILL)
        script.wait(timeout=30)
    assert left == [], "a group outlived the command"
