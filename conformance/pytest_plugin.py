"""Run conformance scenarios as pytest items (registered as the ``toolconf`` plugin).

Scenario YAML files are collected only when asked for, so a project's unit
tests never pick them up by accident::

    pytest --toolconf                             # the shipped suite (beside the other tests)
    pytest my-scenarios/                          # a user's own scenarios
    pytest --toolconf my-scenarios/               # both
    pytest conformance/scenarios/edit             # one area of the suite in a checkout
    pytest my-scenarios/x.yaml                    # one file (any YAML path given explicitly)
    pytest --toolconf -k stale                    # pytest's own selection by id
    pytest --toolconf -m "not SHOULD"           # markers: toolconf, MUST, SHOULD, MAY
    pytest --toolconf --toolconf-impl "stdio:node adapter.js" --toolconf-timeout 20
    pytest --toolconf --toolconf-expected-failures known.yaml
    pytest --toolconf --toolconf-levels behaviour # only behaviour decides

Under a directory given on the command line (or in ``testpaths``), a YAML file
is collected when it looks like a scenario: top-level ``id``, ``spec`` and
``steps`` keys. Other YAML (CI workflows, configuration) is left alone. Every
option is prefixed ``--toolconf``, so the plugin, registered in every pytest
run once the package is installed, takes no name another plugin might want.

Each file is one ``ScenarioItem`` named by its scenario id and marked
``toolconf`` and with its requirement level. A scenario whose required
features the implementation lacks is skipped with the reason. A failure shows
the scenario file and the failing step's line, the SPEC IDs, each assertion's
expected value against what came back, and the command that reruns that
scenario alone. Expected failures become strict ``xfail`` marks. One
implementation instance serves the whole session and is restarted after a
crash.

Property tests that drive an implementation themselves should take the
``toolconf_impl`` and ``toolconf_options`` fixtures and call
``conformance.connect`` rather than add their own option.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.analysis.console import describe_result
from conformance.errors import AdapterFailure, ConformanceError, ScenarioLoadError
from conformance.peers.registry import connect
from conformance.run.results import Outcome, ScenarioResult
from conformance.run.runner import Runner
from conformance.run.xfail import load_expected_failures
from conformance.suite.checks import LEVELS
from conformance.suite.registry import DEFAULT_SCENARIOS
from conformance.suite.scenario import Scenario, load_scenario
from conformance.wire.connector import ConnectorOptions

__all__ = ["ScenarioFailed", "ScenarioFile", "ScenarioItem"]

_STATE = pytest.StashKey["_SessionRunner"]()

# A scenario file's top-level keys (schema/scenario.schema.json requires them).
_SCENARIO_KEYS = tuple(re.compile(rf"^{key}:", re.MULTILINE) for key in ("id", "spec", "steps"))

MARKERS = {
    "toolconf": "a conformance scenario run through the toolconf implementation",
    "MUST": "a conformance scenario checking a MUST requirement",
    "SHOULD": "a conformance scenario checking a SHOULD requirement",
    "MAY": "a conformance scenario checking a MAY requirement",
}
"""The markers every scenario item carries (registered, so ``--strict-markers`` holds)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--toolconf``, ``--toolconf-impl``, ``--toolconf-timeout``,
    ``--toolconf-expected-failures``, ``--toolconf-levels``."""
    group = parser.getgroup("toolconf", "tool-system conformance scenarios")
    group.addoption(
        "--toolconf", action="store_true", help="also collect the shipped scenario suite"
    )
    group.addoption(
        "--toolconf-impl",
        default="direct",
        help="implementation: direct | stdio:COMMAND | mutant:NAME (default direct)",
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
    """Register the markers; with ``--toolconf``, add the suite to what pytest collects."""
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
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
    """Collect a YAML file given explicitly; under the suite when asked for; under a
    directory argument when it looks like a scenario."""
    if file_path.suffix != ".yaml":
        return None
    config = parent.config
    path = file_path.resolve()
    args = _arg_paths(config)
    if path in args:
        return ScenarioFile.from_parent(parent, path=file_path)
    scenarios = DEFAULT_SCENARIOS.resolve()
    if _inside(path, scenarios):
        if config.getoption("toolconf") or any(
            _inside(arg, scenarios) and _inside(path, arg) for arg in args
        ):
            return ScenarioFile.from_parent(parent, path=file_path)
        return None
    if any(arg.is_dir() and _inside(path, arg) for arg in args) and _looks_like_scenario(path):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


def _looks_like_scenario(path: Path) -> bool:
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return all(key.search(text) for key in _SCENARIO_KEYS)


@pytest.fixture(scope="session")
def toolconf_impl(pytestconfig: pytest.Config) -> str:
    """The implementation spec given with ``--toolconf-impl`` (default ``direct``)."""
    impl: str = pytestconfig.getoption("toolconf_impl")
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
            impl: str = self.config.getoption("toolconf_impl")
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
        item.add_marker(pytest.mark.toolconf(spec=scenario.spec, area=scenario.area))
        item.add_marker(scenario.level)
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
        """Where (file and line), what (SPEC IDs), expected against what came back, and
        the command that reruns the scenario alone, instead of a Python traceback."""
        if isinstance(excinfo.value, ScenarioFailed):
            lines = [f"{self.path}:{self.failing_line(excinfo.value.result)}: {self.scenario.id}"]
            return "\n".join([*lines, str(excinfo.value), f"rerun: {self.rerun_command()}"])
        return str(super().repr_failure(excinfo, style=style))

    def failing_line(self, result: ScenarioResult | None) -> int:
        """The line of the first failing step (1-based), or of the file's start."""
        step = result.step if result else None
        if step is not None and 1 <= step <= len(self.scenario.steps):
            line = self.scenario.steps[step - 1].line
            if line is not None:
                return line
        return 1

    def rerun_command(self) -> str:
        """``pytest FILE::ID`` with this run's toolconf options: the scenario alone."""
        options = self.config.option
        argv = ["pytest", f"{self.path}::{self.name}"]
        if options.toolconf_impl != "direct":
            argv += ["--toolconf-impl", options.toolconf_impl]
        if options.toolconf_timeout != 10.0:
            argv += ["--toolconf-timeout", f"{options.toolconf_timeout:g}"]
        if options.toolconf_levels != ",".join(LEVELS):
            argv += ["--toolconf-levels", options.toolconf_levels]
        if options.toolconf_expected_failures:
            argv += ["--toolconf-expected-failures", str(options.toolconf_expected_failures)]
        return shlex.join(argv)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the scenario lives and what it checks, for pytest's report headers."""
        return self.path, 0, f"scenario {self.scenario.id} [{', '.join(self.scenario.spec)}]"
