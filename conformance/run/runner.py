"""Running scenarios against a connector.

``run_scenario`` runs one scenario on a started connector: sandbox, setup
files, ``begin``, every step in order, the final file checks, ``end``. A
mismatch never stops it (PROTO-LEVEL-1): every assertion is evaluated, each
counted under its level; only a failure of the implementation itself (crash,
timeout, protocol violation) or of the scenario stops it. ``levels`` says
which levels decide ``pass`` / ``fail``; the others are still evaluated and
reported. ``Runner`` runs many: it starts the connector
once, restarts it (replaying ``hello``) after a crash, timeout or protocol
error, and decides applicability from the features the implementation
declared. Neither ever raises for a problem of the scenario or of the
implementation; those become outcomes.

Programmatic use::

    from conformance import Runner, connect, load_scenario

    with Runner(connect("direct")) as runner:
        result = runner.run(load_scenario(Path("conformance/scenarios/read/read-basic.yaml")))
        print(result.outcome, result.where, *result.mismatches)
"""

from __future__ import annotations

import contextlib
import time
import traceback
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any

from conformance.errors import (
    AdapterError,
    AdapterFailure,
    ConformanceError,
    ImplementationUnavailable,
    ScenarioError,
)
from conformance.run.results import Outcome, ScenarioResult, level_counts
from conformance.run.sandbox import Sandbox
from conformance.suite.checks import BEHAVIOUR, LEVELS, Tally
from conformance.suite.registry import DEFAULT_FIXTURES
from conformance.suite.scenario import Scenario
from conformance.suite.steps import Step, ToolUse, refused
from conformance.wire.connector import Connector
from conformance.wire.profiles import DEFAULT_PROFILE, holds_under, placeholders_of
from conformance.wire.protocol import Hello, check_ok

__all__ = [
    "DEFAULT_FIXTURES",
    "HOST_PATHS_REASON",
    "NOT_PLAYED_REASON",
    "OTHER_PROFILE_REASON",
    "REQUIRES_REASON",
    "Runner",
    "run_scenario",
]

HOST_PATHS_REASON = "skipped: aims at real host paths and the implementation is not isolated"
"""PROTO-ISOLATE-2: the reason of such a skip (``--host-paths`` runs it anyway)."""
OTHER_PROFILE_REASON = "holds under "
"""PROFILE-SCENARIO-1: how the reason of a scenario of other profiles starts
(``holds under P1, P2, not P``)."""
REQUIRES_REASON = "requires "
"""How the reason of a scenario needing undeclared features starts (``requires F1, F2``)."""
NOT_PLAYED_REASON = "the implementation does not play profile "
"""PROFILE-RUN-1: the reason of every scenario when the profile judged is not played."""


@dataclass(slots=True)
class _Refused(Exception):
    """``begin`` was refused as ``bad_request``: the scenario cannot go on (PROTO-BADVALID-1)."""

    tally: Tally


def result_of(scenario: Scenario, outcome: Outcome, **fields: Any) -> ScenarioResult:
    """A result of ``scenario`` with its identifying fields, ``outcome`` and ``fields``."""
    return ScenarioResult(
        id=scenario.id,
        outcome=outcome,
        title=scenario.title,
        spec=scenario.spec,
        level=scenario.level,
        area=scenario.area,
        path=str(scenario.path) if scenario.path else None,
        requires=scenario.requires,
        **fields,
    )


def run_scenario(
    scenario: Scenario,
    connector: Connector,
    features: Iterable[str],
    *,
    fixtures: Path = DEFAULT_FIXTURES,
    keep: bool = False,
    unreported: Iterable[str] = (),
    levels: Iterable[str] = LEVELS,
    profile: str = DEFAULT_PROFILE,
) -> ScenarioResult:
    """Run one scenario on a started connector; never raises for scenario or adapter problems.

    ``profile`` is the behaviour profile the run judges (PROFILE-RUN-1): a
    scenario that does not hold under it is ``not_applicable``, and ``begin``
    asks for it (PROTO-BEGIN-3).

    ``features`` are those the implementation supports (normally its hello);
    a scenario requiring others is ``not_applicable``. ``unreported`` are the
    fields it cannot report (hello's, PROTO-UNREPORTED-1): assertions on them
    are not observed. The scenario fails when an assertion of one of
    ``levels`` fails. With ``keep`` the sandbox stays on disk and its path is
    in the result's message.
    """
    base = result_of(scenario, Outcome.PASS)
    if not holds_under(scenario.profiles, profile):  # PROFILE-SCENARIO-1
        return replace(
            base,
            outcome=Outcome.NOT_APPLICABLE,
            reason=f"{OTHER_PROFILE_REASON}{', '.join(scenario.profiles)}, not {profile}",
        )
    available = set(features)
    missing = [f for f in scenario.requires if f not in available]
    if missing:
        return replace(
            base, outcome=Outcome.NOT_APPLICABLE, reason=f"{REQUIRES_REASON}{', '.join(missing)}"
        )
    started = time.perf_counter()
    execution = _Execution(
        scenario, connector, fixtures, frozenset(unreported), frozenset(levels), profile=profile
    )
    try:
        result = execution.run(base)
    finally:
        if not keep:
            execution.sandbox.cleanup()
    if keep:
        result = replace(
            result,
            message=f"{result.message} [sandbox kept: {execution.sandbox.base}]".strip(),
            kept=str(execution.sandbox.base),
        )
    return replace(result, duration=time.perf_counter() - started, stderr=connector.take_stderr())


class _Execution:
    """The state of one scenario run: sandbox, session, tool_use id counter, assertions."""

    def __init__(
        self,
        scenario: Scenario,
        connector: Connector,
        fixtures: Path,
        unreported: frozenset[str],
        levels: frozenset[str],
        *,
        profile: str = DEFAULT_PROFILE,
    ) -> None:
        self.scenario = scenario
        self.connector = connector
        self.sandbox = Sandbox(fixtures, extra=placeholders_of(profile))  # PROFILE-SCENARIO-2
        self.cwd = self.sandbox.root
        self.ids = 0
        self.in_session = False
        self._unreported = unreported
        self.levels = levels
        self.tally = Tally(unreported=unreported)
        self.profile = profile
        """PROTO-BEGIN-3: the profile ``begin`` asks for (not sent when it is the default)."""
        self.places: dict[int | None, str] = {}
        """Step -> where it is, in words, for each step that found a mismatch."""

    @property
    def unreported(self) -> frozenset[str]:
        """The fields the implementation cannot report."""
        return self._unreported

    def _count(self, found: Tally, step: int | None, where: str) -> None:
        """Add a step's assertions; a mismatch's path names no sandbox directory.

        A path can hold an expanded placeholder (``{root}`` in a key); written
        back as the placeholder, it is the same in every run, as a baseline's
        failure signature must be.
        """
        if found.mismatches:
            self.places.setdefault(step, where)
        root, base = str(self.sandbox.root), str(self.sandbox.base)
        found.mismatches = [
            replace(m, path=m.path.replace(root, "{root}").replace(base, "{sandbox}"))
            if base in m.path
            else m
            for m in found.mismatches
        ]
        self.tally.add(found, step)

    def run(self, base: ScenarioResult) -> ScenarioResult:
        where = "setup"
        step_index: int | None = None
        try:
            setup = self.scenario.setup
            self.cwd = self.sandbox.materialize(setup.files, setup.cwd)
            self._begin()
            for step_index, step in enumerate(self.scenario.steps, start=1):
                where = _where(step_index, step)
                self._count(step.run(self), step_index, where)
            step_index = None
            where = "final"
            final = Tally(unreported=self._unreported)
            for want in self.scenario.final:
                final.check(BEHAVIOUR, (), partial(self.sandbox.check_final, [want]))
            self._count(final, None, where)
            where = "end"
            self._end()
        except _Refused as refusal:
            self._count(refusal.tally, step_index, where)
            self._end_quietly()
        except AdapterFailure as exc:
            if not exc.restart:
                self._end_quietly()
            return replace(
                base,
                outcome=Outcome(exc.outcome),
                kind=exc.kind,
                step=step_index,
                where=where,
                message=f"{where}: {exc}",
                connection_broken=exc.restart,
                **self._evidence(),
            )
        except ScenarioError as exc:
            self._end_quietly()
            return replace(
                base,
                outcome=Outcome.ERROR,
                kind="scenario",
                step=step_index,
                where=where,
                message=f"{where}: {exc}",
                **self._evidence(),
            )
        except ImplementationUnavailable:  # no scenario can run: the run ends with it
            self._end_quietly()
            raise
        except Exception as exc:  # a runner bug must not stop the run
            self._end_quietly()
            detail = "".join(traceback.format_exception(exc))
            return replace(
                base,
                outcome=Outcome.ERROR,
                kind="harness",
                step=step_index,
                where=where,
                message=f"{where}: runner error {exc!r}\n{detail}",
                **self._evidence(),
            )
        return self._judged(base)

    def _evidence(self) -> dict[str, Any]:
        """The mismatches and counts so far, for a result the checks did not decide."""
        return {"mismatches": tuple(self.tally.mismatches), "levels": level_counts(self.tally)}

    def _judged(self, base: ScenarioResult) -> ScenarioResult:
        """``fail`` when an assertion of a deciding level failed, else ``pass``."""
        mismatches = self.tally.mismatches
        deciding = [m for m in mismatches if m.level in self.levels]
        result = replace(base, **self._evidence())
        if not deciding:
            return result
        first = deciding[0]
        where = self.places.get(first.step, "")
        more = f" (+{len(deciding) - 1} more)" if len(deciding) > 1 else ""
        return replace(
            result,
            outcome=Outcome.FAIL,
            step=first.step,
            where=where,
            message=f"{where}: {first}{more}",
        )

    # -- session -----------------------------------------------------------

    def _begin(self) -> None:
        setup = self.scenario.setup
        env = {"HOME": str(self.sandbox.home), **self.sandbox.expand(dict(setup.env))}
        session_dir = self.sandbox.new_session_dir()
        session: dict[str, Any] = {
            "root": str(self.sandbox.root),
            "cwd": str(self.cwd),
            "env": env,
            "home": env["HOME"],
            "settings": self.sandbox.expand(dict(setup.settings)),
            "prompt": setup.prompt,
            "test_tools": setup.test_tools,
            "session_dir": str(session_dir),
        }
        if self.profile != DEFAULT_PROFILE:
            session["profile"] = self.profile  # PROTO-BEGIN-3
        try:
            answer = self.connector.request({"cmd": "begin", "session": session})
        except AdapterError as exc:
            raise _Refused(refused(exc, "begin")) from exc
        check_ok(answer, "begin")
        self.in_session = True

    def _end(self) -> None:
        if self.in_session:
            self.in_session = False
            check_ok(self.connector.request({"cmd": "end"}), "end")

    def _end_quietly(self) -> None:
        """End the session after a failure; a broken adapter is noticed by the next request."""
        with contextlib.suppress(ConformanceError):
            self._end()

    # -- what steps use (conformance.suite.steps.StepContext) ----------------------

    def tool_use(self, use: ToolUse) -> dict[str, Any]:
        """The protocol block for ``use``: input expanded, ``toolu_N`` when it has no id."""
        tool_use_id = use.id
        if tool_use_id is None:
            self.ids += 1
            tool_use_id = f"toolu_{self.ids}"
        return {
            "type": "tool_use",
            "id": tool_use_id,
            "name": use.name,
            "input": self.sandbox.expand(use.input),
        }

    def restart_session(self) -> None:
        """End the session and begin a new one with the same setup (a ``session`` step)."""
        self._end()
        self._begin()


def _where(index: int, step: Step) -> str:
    text = step.describe()
    if step.line:
        text = f"{text}, line {step.line}"
    return f"step {index} ({text})"


class Runner:
    """Runs many scenarios on one connector, restarting it when it breaks.

    ``features`` overrides what the implementation declared (to run a subset,
    or to force scenarios on); ``levels`` are the assertion levels that decide
    pass or fail (default all three); ``profile`` the behaviour profile the
    run judges (PROFILE-RUN-1). A scenario aiming at real host paths is
    ``not_applicable`` (reason ``HOST_PATHS_REASON``) unless the connector is
    isolated or ``host_paths`` is true (PROTO-ISOLATE-2). Use as a context manager, or call
    ``start`` and ``close``.
    """

    def __init__(
        self,
        connector: Connector,
        *,
        features: Iterable[str] | None = None,
        fixtures: Path = DEFAULT_FIXTURES,
        keep: bool = False,
        levels: Iterable[str] = LEVELS,
        host_paths: bool = False,
        profile: str = DEFAULT_PROFILE,
    ) -> None:
        self.connector = connector
        self.host_paths = host_paths
        """Run scenarios aiming at real host paths even when not isolated (PROTO-ISOLATE-2)."""
        self.levels = frozenset(levels)
        self.profile = profile
        self.features_override = None if features is None else frozenset(features)
        self.fixtures = fixtures
        self.keep = keep
        self._hello: Hello | None = None
        self._broken = False

    @property
    def hello(self) -> Hello | None:
        """The handshake of the running implementation, or None before ``start``."""
        return self._hello

    @property
    def features(self) -> frozenset[str]:
        """The features scenarios are checked against."""
        if self.features_override is not None:
            return self.features_override
        return self._hello.features if self._hello else frozenset()

    def start(self) -> Hello:
        """Start the implementation and shake hands.

        Raises:
            AdapterFailure: it cannot start, or speaks another protocol.
        """
        self._hello = self.connector.start()
        self._broken = False
        return self._hello

    def run(self, scenario: Scenario) -> ScenarioResult:
        """Run one scenario, first restarting the connector if the last one broke it."""
        if self._hello is None or self._broken:
            try:
                self._hello = self.connector.restart()
                self._broken = False
            except AdapterFailure as exc:
                return result_of(
                    scenario,
                    Outcome(exc.outcome),
                    kind=exc.kind,
                    where="start",
                    message=f"cannot (re)start the implementation: {exc}",
                    stderr=self.connector.take_stderr(),
                )
        if scenario.host_paths and not self.host_paths and not self.isolated:
            return result_of(  # PROTO-ISOLATE-2
                scenario,
                Outcome.NOT_APPLICABLE,
                reason=f"{HOST_PATHS_REASON} ({', '.join(scenario.host_paths)})",
            )
        hello = self._hello
        if self.profile != DEFAULT_PROFILE and hello and self.profile not in hello.profiles:
            return result_of(  # PROFILE-RUN-1, PROTO-HELLO-2
                scenario,
                Outcome.NOT_APPLICABLE,
                reason=f"{NOT_PLAYED_REASON}{self.profile}",
            )
        result = run_scenario(
            scenario,
            self.connector,
            self.features,
            fixtures=self.fixtures,
            keep=self.keep,
            unreported=self._hello.unreported if self._hello else (),
            levels=self.levels,
            profile=self.profile,
        )
        self._broken = result.connection_broken
        return result

    @property
    def isolated(self) -> bool:
        """Whether the implementation runs isolated from the host (PROTO-ISOLATE-1)."""
        return bool(getattr(self.connector, "isolated", False))

    def run_all(self, scenarios: Iterable[Scenario]) -> Iterator[ScenarioResult]:
        """Run scenarios in order, yielding each result as it is known."""
        for scenario in scenarios:
            yield self.run(scenario)

    def close(self) -> None:
        """Stop the implementation."""
        self.connector.close()
        self._hello = None

    def __enter__(self) -> Runner:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
