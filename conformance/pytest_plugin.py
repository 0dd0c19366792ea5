"""Run conformance scenarios as pytest items (registered as the ``toolconf`` plugin).

Scenario YAML files are collected only when asked for, so the project's unit
tests never pick them up by accident::

    pytest conformance/scenarios                  # every scenario
    pytest conformance/scenarios/edit             # one area
    pytest conformance/scenarios/edit/x.yaml      # one file (any YAML path given explicitly works)
    pytest --toolconf                             # the unit tests and all scenarios
    pytest conformance/scenarios -k stale         # pytest's own selection by id
    pytest conformance/scenarios --impl "stdio:node adapter.js" --toolconf-timeout 20
    pytest conformance/scenarios --toolconf-expected-failures known.yaml
    pytest conformance/scenarios --toolconf-levels behaviour   # only behaviour decides

Each file is one ``ScenarioItem`` named by its scenario id. A scenario whose
required features the implementation lacks is skipped with the reason; a
failure shows the step, the field, and expected versus actual. Expected
failures become strict ``xfail`` marks. One implementation instance serves the
whole session and is restarted after a crash.

Property tests that drive an implementation themselves should take the
``toolconf_impl`` and ``toolconf_options`` fixtures and call
``conformance.connect`` rather than add their own ``--impl`` option.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.checks import LEVELS
from conformance.connectors import ConnectorOptions, connect
from conformance.console import describe_result
from conformance.errors import AdapterFailure, ConformanceError, ScenarioLoadError
from conformance.registry import DEFAULT_SCENARIOS
from conformance.results import Outcome, ScenarioResult
from conformance.runner import Runner
from conformance.scenario import Scenario, load_scenario
from conformance.xfail import load_expected_failures

__all__ = ["ScenarioFailed", "ScenarioFile", "ScenarioItem"]

_STATE = pytest.StashKey["_SessionRunner"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--toolconf``, ``--impl``, ``--toolconf-timeout``, ``--toolconf-expected-failures``,
    ``--toolconf-levels``."""
    group = parser.getgroup("toolconf", "tool-system conformance scenarios")
    group.addoption(
        "--toolconf", action="store_true", help="also collect conformance/scenarios/**/*.yaml"
    )
    group.addoption(
        "--impl", default="direct", help="implementation: direct | stdio:COMMAND | mutant:NAME"
    )
    group.addoption(
        "--toolconf-timeout", type=float, default=10.0, help="seconds per request (default 10)"
    )
    group.addoption(
        "--toolconf-expected-failures", type=Path, default=None, help="YAML {scenario-id: reason}"
    )
    group.addoption(
        "--toolconf-levels",
        default=",".join(LEVELS),
        help="assertion levels that decide pass or fail (default behaviour,identity,rendering)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """With ``--toolconf``, add the scenarios directory to what pytest collects."""
    config.stash[_STATE] = _SessionRunner(config)
    wanted = config.getoption("toolconf") and DEFAULT_SCENARIOS.is_dir()
    if wanted and not any(_inside(DEFAULT_SCENARIOS, arg) for arg in _arg_paths(config)):
        config.args.append(str(DEFAULT_SCENARIOS))


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the implementation."""
    state = config.stash.get(_STATE, None)
    if state is not None:
        state.close()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """Collect a YAML file given explicitly, or under the scenarios directory when asked for."""
    if file_path.suffix != ".yaml":
        return None
    config = parent.config
    path = file_path.resolve()
    args = _arg_paths(config)
    if path in args:
        return ScenarioFile.from_parent(parent, path=file_path)
    scenarios = DEFAULT_SCENARIOS.resolve()
    if _inside(path, scenarios) and (
        config.getoption("toolconf")
        or any(_inside(arg, scenarios) and _inside(path, arg) for arg in args)
    ):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


@pytest.fixture(scope="session")
def toolconf_impl(pytestconfig: pytest.Config) -> str:
    """The implementation spec given with ``--impl`` (default ``direct``)."""
    impl: str = pytestconfig.getoption("impl")
    return impl


@pytest.fixture(scope="session")
def toolconf_options(pytestconfig: pytest.Config) -> ConnectorOptions:
    """Connector options from ``--toolconf-timeout``."""
    timeout: float = pytestconfig.getoption("toolconf_timeout")
    return ConnectorOptions(timeout=timeout, hello_timeout=max(timeout, 30.0))


def _arg_paths(config: pytest.Config) -> list[Path]:
    return [Path(str(arg).split("::", 1)[0]).resolve() for arg in config.args]


def _inside(path: Path, directory: Path) -> bool:
    return path == directory or directory in path.parents


class _SessionRunner:
    """One runner per pytest session, started on first use."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.runner: Runner | None = None
        self.failure: str | None = None
        self._expected: dict[str, str] | None = None

    def expected(self) -> dict[str, str]:
        if self._expected is None:
            path: Path | None = self.config.getoption("toolconf_expected_failures")
            self._expected = load_expected_failures(path) if path else {}
        return self._expected

    def get(self) -> Runner:
        if self.failure is not None:
            raise ScenarioFailed(None, self.failure)
        if self.runner is None:
            impl: str = self.config.getoption("impl")
            timeout: float = self.config.getoption("toolconf_timeout")
            try:
                levels = [p.strip() for p in self.config.getoption("toolconf_levels").split(",")]
                unknown = [level for level in levels if level not in LEVELS]
                if unknown or not levels:
                    raise ConformanceError(f"--toolconf-levels: unknown level {unknown}")
                runner = Runner(
                    connect(
                        impl, ConnectorOptions(timeout=timeout, hello_timeout=max(timeout, 30.0))
                    ),
                    levels=levels,
                )
                runner.start()
            except (AdapterFailure, ConformanceError) as exc:
                self.failure = f"cannot start implementation {impl!r}: {exc}"
                raise ScenarioFailed(None, self.failure) from exc
            self.runner = runner
        return self.runner

    def close(self) -> None:
        if self.runner is not None:
            self.runner.close()
            self.runner = None


class ScenarioFailed(Exception):
    """A scenario did not pass; carries the result for ``repr_failure``."""

    def __init__(self, result: ScenarioResult | None, message: str = "") -> None:
        self.result = result
        super().__init__(message or (describe_result(result) if result else "scenario failed"))


class ScenarioFile(pytest.File):
    """One scenario YAML file; a file that does not load is a collection error."""

    def collect(self) -> Iterator[pytest.Item]:
        """Yield the file's single scenario."""
        try:
            scenario = load_scenario(self.path, root=DEFAULT_SCENARIOS)
        except ScenarioLoadError as exc:
            raise self.CollectError(str(exc)) from exc
        item = ScenarioItem.from_parent(self, name=scenario.id, scenario=scenario)
        reason = self.config.stash[_STATE].expected().get(scenario.id)
        if reason is not None:
            item.add_marker(pytest.mark.xfail(reason=reason, strict=True, raises=ScenarioFailed))
        yield item


class ScenarioItem(pytest.Item):
    """One scenario run through the session's implementation."""

    def __init__(self, *, scenario: Scenario, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario

    def runtest(self) -> None:
        """Run the scenario; skip when not applicable, raise ``ScenarioFailed`` unless it passed."""
        result = self.config.stash[_STATE].get().run(self.scenario)
        if result.outcome is Outcome.NOT_APPLICABLE:
            pytest.skip(f"not applicable: {result.reason}")
        if result.outcome is not Outcome.PASS:
            raise ScenarioFailed(result)

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str:
        """The step, field, expected and actual, instead of a Python traceback."""
        if isinstance(excinfo.value, ScenarioFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the scenario lives and what it checks, for pytest's report headers."""
        return self.path, 0, f"scenario {self.scenario.id} [{', '.join(self.scenario.spec)}]"
