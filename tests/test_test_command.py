"""The README's test command (``.ci/tests``) prints its coverage report when a test fails,
and still exits non-zero then, whichever of its processes ran the failing test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / ".ci" / "tests"

pytestmark = pytest.mark.subprocess


def run_script(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    test = tmp_path / "test_one.py"
    test.write_text(f"from conformance.suite.selection import spec_matches\n\n\n{body}")
    return subprocess.run(
        [str(SCRIPT), "-q", "-p", "no:randomly", str(test)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={
            **os.environ,
            "PYTHON": sys.executable,
            "COVERAGE_FILE": str(tmp_path / "cov"),
            "TOOLSYS_TEST_SPLITS": "2",
        },
    )


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
