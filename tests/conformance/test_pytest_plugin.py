"""The pytest plugin, exercised in a pytest subprocess (bounded by a timeout)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from conftest import DATA, FAKE, fake_command

_INSTALLED = any(ep.name == "toolconf" for ep in entry_points(group="pytest11"))
PLUGIN = [] if _INSTALLED else ["-p", "conformance.pytest_plugin"]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.subprocess,
]  # every test runs pytest again, seconds each


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """A copy of the example scenarios in a directory with no pytest configuration."""
    shutil.copytree(DATA / "suite", tmp_path / "suite")
    return tmp_path / "suite"


def pytest_run(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", *PLUGIN, "-p", "no:cacheprovider", "-rsx", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )


def test_explicit_files_become_items_with_readable_failures(suite: Path) -> None:
    files = sorted(str(p) for p in suite.rglob("*.yaml"))
    done = pytest_run(suite, *files, "--toolconf-impl", FAKE)
    out = done.stdout
    assert done.returncode == 1, out
    assert "1 failed, 2 passed, 1 skipped" in out
    assert "at step 1 (call Read, line 7):" in out
    assert "content: 'hello' not found in 'ok: Read'" in out
    assert "not applicable: requires bash" in out
    assert "Traceback" not in out


def test_a_users_directory_is_collected_scenarios_only(suite: Path) -> None:
    workflow = suite / "basic" / "ci.yaml"
    workflow.write_text("on: push\njobs:\n  test:\n    steps: []\n")
    done = pytest_run(suite, str(suite), "--toolconf-impl", FAKE, "--collect-only", "-q")
    assert done.returncode == 0, done.stdout
    items = sorted(line for line in done.stdout.splitlines() if "::" in line)
    assert items == [
        "basic/call-ok.yaml::call-ok",
        "basic/content-mismatch.yaml::content-mismatch",
        "extra/message-ok.yaml::message-ok",
        "extra/needs-bash.yaml::needs-bash",
    ]


def test_a_failure_names_file_line_spec_expected_got_and_the_rerun_command(suite: Path) -> None:
    done = pytest_run(
        suite, str(suite / "basic"), "--toolconf-impl", FAKE, "--toolconf-timeout", "5"
    )
    out = done.stdout
    assert done.returncode == 1, out
    mismatch = suite / "basic" / "content-mismatch.yaml"
    assert f"{mismatch}:7: content-mismatch" in out
    assert "spec: " in out
    assert "content: 'hello' not found in 'ok: Read'" in out
    rerun = (
        f"rerun: pytest {mismatch}::content-mismatch --toolconf-impl {FAKE} --toolconf-timeout 5"
    )
    assert rerun in out


def test_items_carry_registered_markers(suite: Path) -> None:
    args = (str(suite), "--toolconf-impl", FAKE, "--strict-markers", "--collect-only", "-q")
    should = pytest_run(suite, *args, "-m", "SHOULD")
    assert should.returncode == 0, should.stdout
    must = pytest_run(suite, *args, "-m", "toolconf and not SHOULD")
    assert must.returncode == 0, must.stdout
    count = sum("::" in line for line in should.stdout.splitlines())
    assert count + sum("::" in line for line in must.stdout.splitlines()) == 4
    assert count >= 1
    markers = pytest_run(suite, "--markers")
    assert "@pytest.mark.toolconf:" in markers.stdout


def test_a_users_repo_runs_its_scenarios_beside_the_shipped_suite(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "scenarios").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\ntestpaths = ["tests", "scenarios"]\n'
    )
    (repo / "tests" / "test_unit.py").write_text(
        "def test_unit() -> None:\n    assert 1 + 1 == 2\n"
    )
    shutil.copy(DATA / "suite" / "basic" / "call-ok.yaml", repo / "scenarios" / "call-ok.yaml")
    done = pytest_run(repo, "--toolconf-impl", FAKE, "--collect-only", "-q")
    items = [line for line in done.stdout.splitlines() if "::" in line]
    assert items == ["tests/test_unit.py::test_unit", "scenarios/call-ok.yaml::call-ok"], (
        done.stdout
    )
    with_suite = pytest_run(repo, "--toolconf", "--collect-only", "-q")
    lines = [line for line in with_suite.stdout.splitlines() if "::" in line]
    assert len(lines) > 1000, with_suite.stdout[-2000:]


def test_expected_failures_become_strict_xfails(suite: Path, tmp_path: Path) -> None:
    xfail = tmp_path / "xfail.yaml"
    xfail.write_text("content-mismatch: the fake never reads\ncall-ok: wrongly listed\n")
    files = [str(suite / "basic" / "content-mismatch.yaml"), str(suite / "basic" / "call-ok.yaml")]
    done = pytest_run(
        suite, *files, "--toolconf-impl", FAKE, "--toolconf-expected-failures", str(xfail)
    )
    assert done.returncode == 1, done.stdout
    assert "1 failed, 1 xfailed" in done.stdout
    assert "XPASS(strict)" in done.stdout


def test_a_file_that_does_not_load_is_a_collection_error_with_its_line(suite: Path) -> None:
    bad = suite / "basic" / "bad.yaml"
    bad.write_text(
        "id: bad\ntitle: t\nspec: [A-1]\nlevel: MUST\nsteps:\n  - call: {name: X, nme: y}\n"
    )
    done = pytest_run(suite, str(bad), "--toolconf-impl", FAKE)
    assert done.returncode == 2, done.stdout
    assert "bad.yaml:6: steps[0].call.nme: unknown field 'nme'" in done.stdout


def test_an_implementation_that_cannot_start_fails_every_item(suite: Path) -> None:
    done = pytest_run(
        suite,
        str(suite / "basic" / "call-ok.yaml"),
        "--toolconf-impl",
        "stdio:/nonexistent/adapter",
    )
    assert done.returncode == 1
    assert "cannot start implementation" in done.stdout


def test_a_peer_that_cannot_be_installed_ends_the_session_with_one_line(
    suite: Path, tmp_path: Path
) -> None:
    bare = tmp_path / "bin"  # a PATH without node or npm
    bare.mkdir()
    env = {**os.environ, "PATH": str(bare), "TOOLCONF_CACHE": str(tmp_path / "cache")}
    done = pytest_run(
        suite,
        str(suite / "basic" / "call-ok.yaml"),
        str(suite / "basic"),
        "--toolconf-impl",
        "agent:gemini-cli",
        env=env,
    )
    assert done.returncode == 3, done.stdout + done.stderr
    said = [line for line in done.stdout.splitlines() if "cannot run" in line]
    assert (
        said
        == [
            "!!!!!! _pytest.outcomes.Exit: toolconf: cannot run agent:gemini-cli: node is not on "
            "PATH: npm peers need Node.js 20 or later and npm (Debian: apt-get install nodejs npm; "
            "elsewhere https://nodejs.org) !!!!!!"
        ]
        or len(said) == 1
    ), done.stdout
    assert "failed" not in done.stdout.splitlines()[-1]  # no item failed: the session ended


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
    done = pytest_run(suite, mismatch, "--toolconf-impl", FAKE, "--toolconf-levels", "identity")
    assert done.returncode == 0, done.stdout
    assert "1 passed" in done.stdout
    wrong = pytest_run(suite, mismatch, "--toolconf-impl", FAKE, "--toolconf-levels", "looks")
    assert wrong.returncode == 4, wrong.stdout  # a usage error, as toolconf run --levels looks
    assert "unknown assertion level looks" in wrong.stderr


def test_the_selection_options_match_toolconf_runs(suite: Path) -> None:
    def chosen(*args: str) -> list[str]:
        done = pytest_run(suite, str(suite), "--toolconf-impl", FAKE, "--collect-only", "-q", *args)
        assert done.returncode == 0, done.stdout + done.stderr
        return sorted(line.split("::")[1] for line in done.stdout.splitlines() if "::" in line)

    assert chosen("--toolconf-spec", "FAKE-CALL") == ["call-ok", "content-mismatch", "needs-bash"]
    assert chosen("--toolconf-spec", "fake-*-1", "--toolconf-area", "extra") == [
        "message-ok",
        "needs-bash",
    ]
    assert chosen("--toolconf-level", "should") == ["content-mismatch"]
    assert chosen("--toolconf-feature", "bash") == ["needs-bash"]
    wrong = pytest_run(suite, str(suite), "--toolconf-level", "behaviour")
    assert wrong.returncode == 4
    assert "assertion level, which decides with --levels" in wrong.stderr


def test_the_report_profile_and_features_options_match_toolconf_runs(
    suite: Path, tmp_path: Path
) -> None:
    report = tmp_path / "r.jsonl"
    done = pytest_run(
        suite,
        str(suite / "basic"),
        "--toolconf-impl",
        FAKE,
        "--toolconf-report",
        f"jsonl={report}",
        "--toolconf-features",
        "read,bash",
        "--toolconf-profile",
        "claude-code-2.1.88",
    )
    assert done.returncode == 0, done.stdout  # the fake plays no profile but documented
    assert f"report (jsonl): {report}" in done.stdout
    assert "not applicable: the implementation does not play profile claude-code-2.1.88" in (
        done.stdout
    )
    lines = [json.loads(line) for line in report.read_text().splitlines()]
    header = lines[0]
    assert (header["profile"], header["features"]) == ("claude-code-2.1.88", ["bash", "read"])
    outcomes = {line["id"]: line["outcome"] for line in lines if line["type"] == "result"}
    assert outcomes == {"call-ok": "not_applicable", "content-mismatch": "not_applicable"}


def test_under_xdist_each_worker_judges_and_the_report_is_one_runs(
    suite: Path, tmp_path: Path
) -> None:
    """``-n 2``: two worker processes, each with its own session and implementation, one
    merged report equal to a serial run's, the scenario cache written by both at once, and
    no sandbox left behind."""
    cache, temporary = tmp_path / "cache", tmp_path / "tmp"
    temporary.mkdir()
    env = {**os.environ, "TOOLCONF_SCENARIO_CACHE": str(cache), "TMPDIR": str(temporary)}
    reports = {}
    for name, workers in (("xdist", ["-n", "2"]), ("serial", [])):  # xdist fills the cache
        report = tmp_path / f"{name}.jsonl"
        options = ["--toolconf-impl", fake_command("ok"), "--toolconf-report", f"jsonl={report}"]
        pytest_argv = [sys.executable, "-m", "pytest", *PLUGIN, "-p", "no:cacheprovider"]
        done = subprocess.run(
            [*pytest_argv, *workers, str(suite), *options],
            cwd=suite,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 1, done.stdout
        assert "1 failed, 2 passed, 1 skipped" in done.stdout
        assert f"report (jsonl): {report}" in done.stdout
        assert ("2 workers" in done.stdout) == bool(workers)
        reports[name] = [json.loads(line) for line in report.read_text().splitlines()]
        for line in reports[name]:
            line.pop("duration", None)
            line.pop("started", None)
    assert reports["xdist"] == reports["serial"]
    assert "shard" not in reports["xdist"][0]
    cached = [p.name for p in cache.rglob("*") if p.is_file()]
    assert cached
    assert all(name.endswith(".pickle") for name in cached)
    assert [p.name for p in temporary.iterdir() if p.name.startswith("toolconf")] == []
