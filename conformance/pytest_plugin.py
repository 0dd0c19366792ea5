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
    pytest --toolconf --toolconf-spec READ-DEDUP --toolconf-report jsonl=r.jsonl

Under a directory given on the command line (or in ``testpaths``), a YAML file
is collected when it looks like a scenario: top-level ``id``, ``spec`` and
``steps`` keys. Other YAML (CI workflows, configuration) is left alone. Every
option is prefixed ``--toolconf``, so the plugin, registered in every pytest
run once the package is installed, takes no name another plugin might want.
The options are ``toolconf run``'s, with its meanings (``conformance.commands.options``):
``-impl``, ``-timeout``, ``-isolation``, ``-pass-env``, ``-profile``,
``-features``, ``-levels``, ``-expected-failures``, ``-host-paths``,
``-report``, and the selection ``-spec``, ``-area``, ``-level``,
``-feature``, ``-provenance``; pytest's own ``-k``, ``-x``, ``--maxfail`` and ``--lf`` do
the rest.

Each file is one ``ScenarioItem`` named by its scenario id and marked
``toolconf`` and with its requirement level. A scenario whose required
features the implementation lacks is skipped with the reason. A failure shows
the scenario file and the failing step's line, the SPEC IDs, each assertion's
expected value against what came back, and the command that reruns that
scenario alone. Expected failures become strict ``xfail`` marks. One
implementation instance serves the whole session and is restarted after a
crash.

Under pytest-xdist (``pytest --toolconf -n 2``) each worker process has its
own session and implementation instance; each sends its results, as a
JSON-lines report, to the controller, which merges them into the one run's
``--toolconf-report`` reports, the results in collection order
(``conformance.analysis.merge``).

Property tests that drive an implementation themselves should take the
``toolconf_impl`` and ``toolconf_options`` fixtures and call
``conformance.connect`` rather than add their own option.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.analysis.console import describe_result
from conformance.analysis.merge import MergeError, Part, merge_parts, parse_part, run_info
from conformance.analysis.reports import write_report
from conformance.commands.options import (
    assertion_levels,
    feature_list,
    feature_name,
    impl_help,
    requirement_level,
    spec_pattern,
)
from conformance.commands.run import (
    EXIT_UNAVAILABLE,
    RUN_REPORTS,
    open_output,
    run_info_of,
    write_reports,
)
from conformance.commands.select import spec_provenances, spec_sections
from conformance.errors import (
    AdapterFailure,
    ConformanceError,
    ImplementationUnavailable,
    ScenarioLoadError,
)
from conformance.peers.registry import connect
from conformance.run.results import Outcome, ScenarioResult
from conformance.run.session import RunSession, RunSettings
from conformance.run.xfail import load_expected_failures
from conformance.suite.checks import LEVELS
from conformance.suite.provenance import PROVENANCES, scenario_provenance
from conformance.suite.registry import DEFAULT_SCENARIOS
from conformance.suite.scenario import Scenario, load_scenario
from conformance.suite.selection import Selection
from conformance.wire.connector import ConnectorOptions
from conformance.wire.profiles import DEFAULT_PROFILE, PROFILE_NAMES

__all__ = ["ScenarioFailed", "ScenarioFile", "ScenarioItem"]

_STATE = pytest.StashKey["_PluginSession"]()
_WORKER_REPORT = "toolconf_report"
"""The key of a pytest-xdist worker's output that holds its JSON-lines report."""

# A scenario file's top-level keys (schema/scenario.schema.json requires them).
_SCENARIO_KEYS = tuple(re.compile(rf"^{key}:", re.MULTILINE) for key in ("id", "spec", "steps"))

MARKERS = {
    "toolconf": "a conformance scenario run through the toolconf implementation",
    "MUST": "a conformance scenario checking a MUST requirement",
    "SHOULD": "a conformance scenario checking a SHOULD requirement",
    "MAY": "a conformance scenario checking a MAY requirement",
}
"""The markers every scenario item carries (registered, so ``--strict-markers`` holds)."""


def _report_option(text: str) -> tuple[str, str]:
    """``--toolconf-report FORMAT[=PATH]``, as ``toolconf run --report`` reads it."""
    fmt, sep, path = text.partition("=")
    if fmt not in RUN_REPORTS.defaults or (sep and not path):
        raise argparse.ArgumentTypeError(
            f"--toolconf-report {text}: FORMAT[=PATH], FORMAT one of "
            f"{', '.join(RUN_REPORTS.defaults)}"
        )
    return fmt, path if sep else RUN_REPORTS.defaults[fmt]


def pytest_addoption(parser: pytest.Parser) -> None:
    """The options of ``toolconf run``, each prefixed ``--toolconf-``, with the same meaning."""
    group = parser.getgroup("toolconf", "tool-system conformance scenarios")
    group.addoption(
        "--toolconf", action="store_true", help="also collect the shipped scenario suite"
    )
    group.addoption("--toolconf-impl", default="direct", metavar="IMPL", help=impl_help())
    group.addoption(
        "--toolconf-timeout", type=float, default=10.0, help="seconds per request (default 10)"
    )
    group.addoption(
        "--toolconf-isolation",
        choices=("auto", "on", "off"),
        default="auto",
        help="adapter processes in namespaces of their own (PROTO-ISOLATE-1; default auto)",
    )
    group.addoption(
        "--toolconf-pass-env",
        action="append",
        default=[],
        metavar="NAME",
        help="a variable the adapter inherits beyond the allowlist (PROTO-ENV-1); repeatable",
    )
    group.addoption(
        "--toolconf-profile",
        choices=PROFILE_NAMES,
        default=DEFAULT_PROFILE,
        help="the behaviour profile to judge (PROFILE-RUN-1; default documented)",
    )
    group.addoption(
        "--toolconf-features",
        type=feature_list,
        default=None,
        metavar="F,...",
        help="judge as if hello declared these features, instead of its own",
    )
    group.addoption(
        "--toolconf-levels",
        type=assertion_levels,
        default=LEVELS,
        metavar="L,...",
        help="assertion levels that decide pass or fail (default behaviour,identity,rendering)",
    )
    group.addoption(
        "--toolconf-expected-failures",
        type=Path,
        default=None,
        metavar="FILE",
        help="the implementation's expected failures, YAML {scenario-id: reason} (strict xfail)",
    )
    group.addoption(
        "--toolconf-host-paths",
        action="store_true",
        help="also run scenarios aiming at real host paths when not isolated (PROTO-ISOLATE-2)",
    )
    group.addoption(
        "--toolconf-report",
        action="append",
        default=[],
        type=_report_option,
        metavar="FORMAT[=PATH]",
        help=RUN_REPORTS.help(),
    )
    group.addoption(
        "--toolconf-spec",
        action="append",
        default=[],
        type=spec_pattern,
        metavar="ID",
        help="only scenarios citing a SPEC ID (ID, dash-ended prefix or glob); repeatable",
    )
    group.addoption(
        "--toolconf-area", action="append", default=[], metavar="NAME", help="only this area"
    )
    group.addoption(
        "--toolconf-level",
        action="append",
        default=[],
        type=requirement_level,
        metavar="MUST|SHOULD|MAY",
        help="only this requirement level (also -m MUST)",
    )
    group.addoption(
        "--toolconf-provenance",
        action="append",
        default=[],
        choices=PROVENANCES,
        help="only scenarios whose SPEC IDs all have this provenance or another given one "
        "(PROTO-PROVENANCE-1); repeatable",
    )
    group.addoption(
        "--toolconf-feature",
        action="append",
        default=[],
        type=feature_name,
        metavar="NAME",
        help="only scenarios requiring this feature",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the markers; with ``--toolconf``, add the suite to what pytest collects."""
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
    config.stash[_STATE] = _PluginSession(config)
    wanted = config.getoption("toolconf") and DEFAULT_SCENARIOS.is_dir()
    if wanted and not any(_inside(DEFAULT_SCENARIOS, arg) for arg in _arg_paths(config)):
        config.args.append(str(DEFAULT_SCENARIOS))


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the implementation."""
    state = config.stash.get(_STATE, None)
    if state is not None:
        state.close()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the scenarios ``--toolconf-spec``, ``-area``, ``-level``, ``-feature`` leave out."""
    selection = Selection(
        spec=tuple(config.getoption("toolconf_spec")),
        areas=tuple(config.getoption("toolconf_area")),
        levels=tuple(config.getoption("toolconf_level")),
        features=tuple(config.getoption("toolconf_feature")),
    )
    provenances = _chosen_provenances(config)
    if selection.empty and not provenances:
        return
    of = spec_provenances() if provenances else {}
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        chosen = not isinstance(item, ScenarioItem) or (
            selection.wants(item.scenario)
            and (not provenances or scenario_provenance(item.scenario.spec, of) in provenances)
        )
        (kept if chosen else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def _chosen_provenances(config: pytest.Config) -> tuple[str, ...]:
    """``--toolconf-provenance``'s choices, strongest first (empty: every scenario)."""
    given = config.getoption("toolconf_provenance")
    return tuple(p for p in PROVENANCES if p in given)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Write the ``--toolconf-report`` reports of the scenarios run, and say where."""
    for line in config.stash[_STATE].write_reports():
        terminalreporter.write_line(line)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """On a pytest-xdist worker: hand this worker's results to the controller, as a
    JSON-lines report whose order is the collection's."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is None or not session.config.getoption("toolconf_report"):
        return
    order = [item.scenario.id for item in session.items if isinstance(item, ScenarioItem)]
    text = session.config.stash[_STATE].report_text(order)
    if text is not None:
        workeroutput[_WORKER_REPORT] = text


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """On the pytest-xdist controller: keep a finished worker's report for the merge."""
    text = getattr(node, "workeroutput", {}).get(_WORKER_REPORT)
    if isinstance(text, str):
        name = f"pytest-xdist worker {getattr(node.gateway, 'id', '?')}"
        node.config.stash[_STATE].parts.append(parse_part(name, text))


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


def _connector_options(config: pytest.Config) -> ConnectorOptions:
    timeout: float = config.getoption("toolconf_timeout")
    return ConnectorOptions(
        timeout=timeout,
        hello_timeout=max(timeout, 30.0),
        isolation=config.getoption("toolconf_isolation"),
        pass_env=tuple(config.getoption("toolconf_pass_env")),
    )


@pytest.fixture(scope="session")
def toolconf_impl(pytestconfig: pytest.Config) -> str:
    """The implementation spec given with ``--toolconf-impl`` (default ``direct``)."""
    impl: str = pytestconfig.getoption("toolconf_impl")
    return impl


@pytest.fixture(scope="session")
def toolconf_options(pytestconfig: pytest.Config) -> ConnectorOptions:
    """Connector options from ``--toolconf-timeout``, ``-isolation`` and ``-pass-env``."""
    return _connector_options(pytestconfig)


def _arg_paths(config: pytest.Config) -> list[Path]:
    return [Path(str(arg).split("::", 1)[0]).resolve() for arg in config.args]


def _inside(path: Path, directory: Path) -> bool:
    return path == directory or directory in path.parents


class _PluginSession:
    """The pytest session's ``RunSession``, made and started on first use.

    The implementation starts with pytest's output capture suspended, so a
    first install's progress (an npm peer) reaches the terminal.
    """

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.session: RunSession | None = None
        self.failure: str | None = None
        self.parts: list[Part] = []
        """The reports of the pytest-xdist workers (on the controller)."""
        self._expected: dict[str, str] | None = None

    def expected(self) -> dict[str, str]:
        """The expected failures of ``--toolconf-expected-failures`` (read once)."""
        if self._expected is None:
            path: Path | None = self.config.getoption("toolconf_expected_failures")
            self._expected = load_expected_failures(path) if path else {}
        return self._expected

    def settings(self) -> RunSettings:
        """The run settings the options give."""
        get = self.config.getoption
        return RunSettings(
            features=get("toolconf_features"),
            levels=tuple(get("toolconf_levels")),
            host_paths=get("toolconf_host_paths"),
            profile=get("toolconf_profile"),
            expected_failures=self.expected(),
        )

    def get(self) -> RunSession:
        """The started session; a start that failed fails every scenario with its reason, but
        an implementation that cannot run here at all ends the session (``runtest``)."""
        if self.failure is not None:
            raise ScenarioFailed(None, self.failure)
        if self.session is None:
            impl: str = self.config.getoption("toolconf_impl")
            try:
                session = RunSession(
                    connect(impl, _connector_options(self.config)), self.settings()
                )
                with self._uncaptured():
                    session.start()
            except ImplementationUnavailable:
                raise
            except (AdapterFailure, ConformanceError) as exc:
                self.failure = f"cannot start implementation {impl!r}: {exc}"
                raise ScenarioFailed(None, self.failure) from exc
            self.session = session
        return self.session

    def _uncaptured(self) -> contextlib.AbstractContextManager[None]:
        capture = self.config.pluginmanager.getplugin("capturemanager")
        if capture is None:
            return contextlib.nullcontext()
        manager: contextlib.AbstractContextManager[None] = capture.global_and_fixture_disabled()
        return manager

    def report_text(self, order: list[str]) -> str | None:
        """This session's results as a JSON-lines report whose ``shard.order`` is ``order``,
        or None when it judged nothing."""
        if self.session is None or not self.session.results:
            return None
        impl: str = self.config.getoption("toolconf_impl")
        info = run_info_of(
            self.session,
            impl,
            provenances=spec_provenances(),
            selected=_chosen_provenances(self.config) or PROVENANCES,
            shard={"order": order},
        )
        buffer = io.StringIO()
        write_report("jsonl", self.session.results, info, buffer)
        return buffer.getvalue()

    def write_reports(self) -> list[str]:
        """Write the ``--toolconf-report`` reports; one line per report written (none on a
        pytest-xdist worker: the controller writes them)."""
        reports: list[tuple[str, str]] = self.config.getoption("toolconf_report")
        if hasattr(self.config, "workerinput"):
            return []
        if reports and self.parts:
            return self._write_merged(reports)
        if not reports or self.session is None or not self.session.results:
            return []
        impl: str = self.config.getoption("toolconf_impl")
        chosen = _chosen_provenances(self.config) or PROVENANCES
        return write_reports(
            self.session,
            self.session.results,
            reports,
            impl,
            provenances=spec_provenances(),
            selected=chosen,
        )

    def _write_merged(self, reports: list[tuple[str, str]]) -> list[str]:
        """The reports of the workers' results merged, in collection order."""
        try:
            merged = merge_parts(self.parts, every_shard=False)
        except MergeError as exc:
            return [f"toolconf: reports not written: {exc}"]
        info = run_info(merged.header, provenances=spec_provenances(), sections=spec_sections())
        lines = [f"toolconf: {note}" for note in merged.notes]
        for fmt, path in reports:
            with open_output(path) as out:
                write_report(fmt, merged.results, info, out)
            if path != "-":
                lines.append(f"report ({fmt}): {path}")
        return lines

    def close(self) -> None:
        """Stop the implementation."""
        if self.session is not None:
            self.session.close()
            self.session = None


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
        """Run the scenario; skip when not applicable, raise ``ScenarioFailed`` unless it passed.

        A listed expected failure carries a strict ``xfail`` mark: its failure is
        ``xfailed``, and a pass (``xpass``) fails as pytest's strict marks do.
        """
        try:
            result = self.config.stash[_STATE].get().judge(self.scenario)
        except ImplementationUnavailable as exc:  # no scenario can run: the session ends
            impl = self.config.getoption("toolconf_impl")
            pytest.exit(f"toolconf: cannot run {impl}: {exc}", returncode=EXIT_UNAVAILABLE)
        if result.outcome is Outcome.NOT_APPLICABLE:
            pytest.skip(f"not applicable: {result.reason or result.message}")
        if result.outcome not in (Outcome.PASS, Outcome.XPASS):
            raise ScenarioFailed(result)  # an xfail stays one under its strict mark

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
        if tuple(options.toolconf_levels) != LEVELS:
            argv += ["--toolconf-levels", ",".join(options.toolconf_levels)]
        if options.toolconf_profile != DEFAULT_PROFILE:
            argv += ["--toolconf-profile", options.toolconf_profile]
        if options.toolconf_features is not None:
            argv += ["--toolconf-features", ",".join(sorted(options.toolconf_features))]
        if options.toolconf_isolation != "auto":
            argv += ["--toolconf-isolation", options.toolconf_isolation]
        for name in options.toolconf_pass_env:
            argv += ["--toolconf-pass-env", name]
        if options.toolconf_host_paths:
            argv.append("--toolconf-host-paths")
        if options.toolconf_expected_failures:
            argv += ["--toolconf-expected-failures", str(options.toolconf_expected_failures)]
        return shlex.join(argv)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the scenario lives and what it checks, for pytest's report headers."""
        return self.path, 0, f"scenario {self.scenario.id} [{', '.join(self.scenario.spec)}]"
