"""One run of scenarios against one implementation, as the CLI and the pytest plugin make it.

A ``RunSession`` is given a connector by its caller (this layer knows no
peer kind) and the run's ``RunSettings``. ``start`` brings the implementation
up and shakes hands; ``judge`` runs one scenario and applies the expected
failures to its result; ``judge_all`` runs many, in order, and stops after
``maxfail`` bad results; ``close`` stops the implementation. Every result
judged is kept in ``results``, so whoever writes the reports sees the same
run the console saw.

With ``jobs`` above one in the settings and a ``spare`` connector factory,
``judge_all`` judges on that many sessions at once (``SessionPool``): the
results, their order and the reports are those of a serial run.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from conformance.run.parallel import SessionPool
from conformance.run.results import ScenarioResult
from conformance.run.runner import Runner
from conformance.run.xfail import apply_expected_failures, unknown_entries
from conformance.suite.checks import LEVELS
from conformance.suite.registry import DEFAULT_FIXTURES
from conformance.suite.scenario import Scenario
from conformance.wire.connector import Connector
from conformance.wire.profiles import DEFAULT_PROFILE
from conformance.wire.protocol import Hello

__all__ = ["RunSession", "RunSettings"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunSettings:
    """How a run judges, whatever implementation it judges."""

    features: frozenset[str] | None = None
    """Features to assume instead of those the implementation's hello declares."""
    fixtures: Path = DEFAULT_FIXTURES
    keep: bool = False
    """Keep each scenario's sandbox on disk."""
    levels: tuple[str, ...] = LEVELS
    """The assertion levels that decide pass or fail (PROTO-LEVEL-1)."""
    host_paths: bool = False
    """Run scenarios aiming at real host paths even when not isolated (PROTO-ISOLATE-2)."""
    profile: str = DEFAULT_PROFILE
    """The behaviour profile judged (PROFILE-RUN-1)."""
    expected_failures: Mapping[str, str] = field(default_factory=dict)
    """Scenario id -> why the implementation is expected to fail it (strict)."""
    jobs: int = 1
    """Sessions judging at once (``run --jobs``); more than one needs a ``spare`` factory."""


class RunSession:
    """A run: one connector, started once, judging scenarios until closed."""

    def __init__(
        self,
        connector: Connector,
        settings: RunSettings | None = None,
        *,
        spare: Callable[[], Connector] | None = None,
    ) -> None:
        """``spare`` makes another connector to the same implementation, for each further
        session of ``settings.jobs``."""
        self.settings = settings or RunSettings()
        self.spare = spare
        self.runner = Runner(
            connector,
            features=self.settings.features,
            fixtures=self.settings.fixtures,
            keep=self.settings.keep,
            levels=self.settings.levels,
            host_paths=self.settings.host_paths,
            profile=self.settings.profile,
        )
        self.results: list[ScenarioResult] = []
        """Every result judged so far, expected failures applied, in order."""
        self.started = ""
        """When ``start`` was called (ISO 8601, UTC, seconds)."""
        self.sessions = 1
        """How many sessions judged the last ``judge_all``."""
        self.unstarted: list[str] = []
        """Why each spare session of the last ``judge_all`` did not start."""
        self._features_used: frozenset[str] = frozenset()
        self._hello: Hello | None = None

    @property
    def connector(self) -> Connector:
        """The implementation's connector."""
        return self.runner.connector

    @property
    def hello(self) -> Hello | None:
        """The last handshake of the implementation (kept after ``close``), or None before
        ``start``."""
        return self.runner.hello or self._hello

    @property
    def isolated(self) -> bool:
        """Whether the implementation runs isolated from the host (PROTO-ISOLATE-1)."""
        return self.runner.isolated

    def start(self) -> Hello:
        """Start the implementation and shake hands.

        Raises:
            AdapterFailure: it cannot start, or speaks another protocol.
        """
        self.started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        hello = self.runner.start()
        self._hello = hello
        self._features_used = self.runner.features
        return hello

    def evaluate(self, scenario: Scenario) -> ScenarioResult:
        """Run one scenario; its result as the expected failures see it, not kept."""
        result = apply_expected_failures(self.runner.run(scenario), self.settings.expected_failures)
        if self.runner.hello is not None:
            self._hello = self.runner.hello
            self._features_used = self.runner.features
        return result

    def judge(self, scenario: Scenario) -> ScenarioResult:
        """Run one scenario; its result as the expected failures see it, also kept."""
        result = self.evaluate(scenario)
        self.results.append(result)
        return result

    def judge_all(
        self, scenarios: Iterable[Scenario], *, maxfail: int | None = None
    ) -> Iterator[ScenarioResult]:
        """Judge scenarios, yielding (and keeping) each result in their order; stop after
        ``maxfail`` bad ones. With ``jobs`` above one, on that many sessions at once."""
        if self.settings.jobs > 1 and self.spare is not None:
            yield from self._judge_parallel(scenarios, maxfail)
            return
        self.sessions = 1
        bad = 0
        for scenario in scenarios:
            result = self.judge(scenario)
            yield result
            bad += result.bad
            if maxfail is not None and bad >= maxfail:
                return

    def _judge_parallel(
        self, scenarios: Iterable[Scenario], maxfail: int | None
    ) -> Iterator[ScenarioResult]:
        spare = self.spare
        assert spare is not None

        def session() -> RunSession:
            return RunSession(spare(), self.settings)

        pool = SessionPool(self, session, self.settings.jobs)
        try:
            for result in pool.judge_all(scenarios, maxfail=maxfail):
                self.results.append(result)
                yield result
        finally:
            self.sessions = pool.sessions - len(pool.unstarted)
            self.unstarted = list(pool.unstarted)

    @property
    def features_used(self) -> list[str]:
        """The features scenarios were checked against, sorted (the last hello's or assumed)."""
        return sorted(self._features_used)

    def stale_expected_failures(self, known_ids: Iterable[str]) -> list[str]:
        """Expected-failure entries naming no scenario in ``known_ids``: stale."""
        return unknown_entries(self.settings.expected_failures, known_ids)

    def take_stderr(self) -> str:
        """What the implementation wrote on stderr since last asked."""
        return self.connector.take_stderr()

    def close(self) -> None:
        """Stop the implementation; the results stay."""
        self.runner.close()

    def __enter__(self) -> RunSession:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
