"""The pytest plugin, exercised in a pytest subprocess (bounded by a timeout)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from conftest import DATA, FAKE

_INSTALLED = any(ep.name == "toolconf" for ep in entry_points(group="pytest11"))
PLUGIN = [] if _INSTALLED else ["-p", "conformance.pytest_plugin"]


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """A copy of the example scenarios in a directory with no pytest configuration."""
    shutil.copytree(DATA / "suite", tmp_path / "suite")
    return tmp_path / "suite"


def pytest_run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", *PLUGIN, "-p", "no:cacheprovider", "-rsx", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_explicit_files_become_items_with_readable_failures(suite: Path) -> None:
    files = sorted(str(p) for p in suite.rglob("*.yaml"))
    done = pytest_run(suite, *files, "--impl", FAKE)
    out = done.stdout
    assert done.returncode == 1, out
    assert "1 failed, 2 passed, 1 skipped" in out
    assert "at step 1 (call Read, line 7):" in out
    assert "content: 'hello' not found in 'ok: Read'" in out
    assert "not applicable: requires bash" in out
    assert "Traceback" not in out


def test_yaml_under_an_ordinary_directory_is_not_collected(suite: Path) -> None:
    done = pytest_run(suite, str(suite), "--impl", FAKE)
    assert done.returncode == 5, done.stdout  # no tests collected


def test_expected_failures_become_strict_xfails(suite: Path, tmp_path: Path) -> None:
    xfail = tmp_path / "xfail.yaml"
    xfail.write_text("content-mismatch: the fake never reads\ncall-ok: wrongly listed\n")
    files = [str(suite / "basic" / "content-mismatch.yaml"), str(suite / "basic" / "call-ok.yaml")]
    done = pytest_run(suite, *files, "--impl", FAKE, "--toolconf-expected-failures", str(xfail))
    assert done.returncode == 1, done.stdout
    assert "1 failed, 1 xfailed" in done.stdout
    assert "XPASS(strict)" in done.stdout


def test_a_file_that_does_not_load_is_a_collection_error_with_its_line(suite: Path) -> None:
    bad = suite / "basic" / "bad.yaml"
    bad.write_text(
        "id: bad\ntitle: t\nspec: [A-1]\nlevel: MUST\nsteps:\n  - call: {name: X, nme: y}\n"
    )
    done = pytest_run(suite, str(bad), "--impl", FAKE)
    assert done.returncode == 2, done.stdout
    assert "bad.yaml:6: steps[0].call.nme: unknown field 'nme'" in done.stdout


def test_an_implementation_that_cannot_start_fails_every_item(suite: Path) -> None:
    done = pytest_run(
        suite, str(suite / "basic" / "call-ok.yaml"), "--impl", "stdio:/nonexistent/adapter"
    )
    assert done.returncode == 1
    assert "cannot start implementation" in done.stdout


REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "conformance" / "scenarios"
has_scenarios = pytest.mark.skipif(
    not any(SCENARIOS.rglob("*.yaml")), reason="no scenarios in conformance/scenarios yet"
)


def collected(*args: str) -> list[str]:
    done = pytest_run(REPO, "--collect-only", "-q", *args)
    assert done.returncode == 0, done.stdout + done.stderr
    return [line for line in done.stdout.splitlines() if "::" in line]


@has_scenarios
def test_the_suite_is_collected_only_when_asked_for() -> None:
    unit = "tests/conformance/test_baseline.py"
    assert not any(".yaml::" in item for item in collected(unit))
    with_suite = collected("--toolconf", unit)
    assert any(item.startswith("conformance/scenarios/") for item in with_suite)
    assert any(item.startswith(unit) for item in with_suite)
    area = next(p for p in sorted(SCENARIOS.iterdir()) if any(p.glob("*.yaml")))
    items = collected(str(area.relative_to(REPO)))
    assert items
    assert all(item.startswith(f"conformance/scenarios/{area.name}/") for item in items)


def test_toolconf_levels_chooses_the_deciding_levels(suite: Path) -> None:
    mismatch = str(suite / "basic" / "content-mismatch.yaml")  # fails in behaviour and rendering
    done = pytest_run(suite, mismatch, "--impl", FAKE, "--toolconf-levels", "identity")
    assert done.returncode == 0, done.stdout
    assert "1 passed" in done.stdout
    wrong = pytest_run(suite, mismatch, "--impl", FAKE, "--toolconf-levels", "looks")
    assert wrong.returncode == 1, wrong.stdout
    assert "unknown level" in wrong.stdout
