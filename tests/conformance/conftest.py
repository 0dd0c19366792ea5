"""Fixtures for the conformance runner's own tests.

The runner is tested against ``conformance.peers.fake_adapter``: in-process as
``FakeEngine`` (fast, deterministic) and as a subprocess in each of its
misbehaving modes. Every wait is bounded by a small connector timeout.
"""

from __future__ import annotations

import os
import shlex
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.peers.direct import DirectConnector
from conformance.peers.fake_adapter import FakeEngine
from conformance.run.runner import Runner
from conformance.suite.scenario import Scenario, load_scenario
from conformance.wire.connector import ConnectorOptions

DATA = Path(__file__).parent / "data"
collect_ignore = ["data"]  # its scenarios fail on purpose: the tests run them by path


@pytest.fixture(scope="session", autouse=True)
def _scenario_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The validated-scenario cache in the session's temporary directory, not ``~/.cache``:
    the tests' throwaway scenarios never reach the user's cache."""
    from conformance.suite.scenario import CACHE_ENV  # noqa: PLC0415

    before = os.environ.get(CACHE_ENV)
    os.environ[CACHE_ENV] = str(tmp_path_factory.mktemp("scenario-cache"))
    yield Path(os.environ[CACHE_ENV])
    if before is None:
        del os.environ[CACHE_ENV]
    else:
        os.environ[CACHE_ENV] = before


@pytest.fixture(scope="session", autouse=True)
def _last_failed_record(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The record of last failures (``toolconf run --last-failed``) in the session's
    temporary directory: the tests' runs never reach the user's."""
    from conformance.run.last_failed import LAST_FAILED_ENV  # noqa: PLC0415

    before = os.environ.get(LAST_FAILED_ENV)
    os.environ[LAST_FAILED_ENV] = str(tmp_path_factory.mktemp("last-failed") / "record.json")
    yield Path(os.environ[LAST_FAILED_ENV])
    if before is None:
        del os.environ[LAST_FAILED_ENV]
    else:
        os.environ[LAST_FAILED_ENV] = before


LOUD_SKIP = "LOUD SKIP"
"""How a skip reason starts when the user should hear of it (a missing browser, a missing
tool): such skips are listed, reason and all, at the end of every run."""


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """List every loud skip with its reason (the install command), which pytest's own
    summary leaves out unless asked with ``-rs``."""
    loud = [
        report
        for report in terminalreporter.stats.get("skipped", [])
        if LOUD_SKIP in str(report.longrepr)
    ]
    if not loud:
        return
    terminalreporter.section("skipped, with what would run them", yellow=True)
    for report in loud:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        terminalreporter.write_line(f"{report.nodeid}: {reason}")


FAKE = "direct:conformance.peers.fake_adapter:FakeEngine"

WriteScenario = Callable[..., Path]


def fake_command(mode: str, *extra: str) -> str:
    """The ``stdio:`` spec of the fake adapter in ``mode``."""
    argv = [sys.executable, "-m", "conformance.peers.fake_adapter", "--mode", mode, *extra]
    return "stdio:" + shlex.join(argv)


@pytest.fixture
def write_scenario(tmp_path: Path) -> WriteScenario:
    """Write YAML text (dedented) to ``<tmp>/scenarios/<area>/<name>.yaml``; return the path."""

    def write(text: str, name: str = "sample", area: str = "area") -> Path:
        path = tmp_path / "scenarios" / area / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), "utf-8")
        return path

    return write


@pytest.fixture
def load(write_scenario: WriteScenario) -> Callable[..., Scenario]:
    """Write and load a scenario in one go (name defaults to ``sample``)."""

    def load(text: str, name: str = "sample") -> Scenario:
        return load_scenario(write_scenario(text, name))

    return load


@pytest.fixture
def fake_runner() -> Iterator[Runner]:
    """A started runner on the in-process fake engine."""
    connector = DirectConnector(FakeEngine, options=ConnectorOptions(timeout=5.0))
    with Runner(connector) as runner:
        yield runner
