"""Judging scenarios on several sessions of one implementation at once (``run --jobs N``).

``SessionPool.judge_all`` hands a list of scenarios to up to ``jobs``
sessions, each on a thread of its own. The first session is the caller's,
already started; the others are made by ``spare`` and started on their own
threads, so their start-ups overlap. Each session takes the next scenario
nobody has taken from one shared queue, and restarts its implementation
after a crash or a timeout as a session alone does (``Runner``).

Results come out in the order of the scenarios, each once every one before
it is known, so the caller sees what a serial run would have yielded. After
``maxfail`` bad results nothing more comes out, and what the other sessions
judged beyond that point is dropped: a serial run would not have judged it.

Threads suit every connector kind: an adapter process, a peer CLI or an MCP
server is waited on, not computed, and the reference engine keeps no state
shared between its instances. Every wait here is bounded by the connectors'
own: each request has its timeout, after which its session replaces its
implementation, so a session always comes back with a result and a hung
implementation never stalls the run. An implementation that cannot be
installed or run here (``ImplementationUnavailable``) ends the run, as it
does a serial one: every session stops, and ``judge_all`` raises it.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import traceback
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol, TypeAlias

from conformance.errors import ImplementationUnavailable
from conformance.run.results import Outcome, ScenarioResult
from conformance.run.runner import result_of
from conformance.suite.scenario import Scenario
from conformance.wire.protocol import Hello

__all__ = ["Judge", "SessionPool"]


class Judge(Protocol):
    """What the pool needs of a session (``RunSession`` is one)."""

    def start(self) -> Hello:
        """Start the implementation; raises on failure."""
        ...

    def evaluate(self, scenario: Scenario) -> ScenarioResult:
        """Judge one scenario; never raises for a problem of the scenario or the peer."""
        ...

    def close(self) -> None:
        """Stop the implementation."""
        ...


_Done: TypeAlias = tuple[int, ScenarioResult] | None
"""A judged scenario by its index, or None: a session has ended."""


class SessionPool:
    """Up to ``jobs`` sessions of one implementation judging one list of scenarios together.

    ``first`` is started and stays the caller's (it is not closed here);
    each spare session ``spare`` makes is started and closed here.
    ``unstarted`` says, after a ``judge_all``, why each spare that did not
    start failed; the others judged its share.
    """

    def __init__(self, first: Judge, spare: Callable[[], Judge], jobs: int) -> None:
        if jobs < 1:
            raise ValueError(f"jobs must be at least 1, not {jobs}")
        self.first = first
        self.spare = spare
        self.jobs = jobs
        self.unstarted: list[str] = []
        self.fatal: ImplementationUnavailable | None = None
        """What ended the last ``judge_all`` early: the implementation cannot run here."""
        self.sessions = 0
        """How many sessions judged in the last ``judge_all``."""

    def judge_all(
        self, scenarios: Iterable[Scenario], *, maxfail: int | None = None
    ) -> Iterator[ScenarioResult]:
        """Judge ``scenarios`` on the sessions, yielding each result in the scenarios' order;
        stop after ``maxfail`` bad ones."""
        chosen = list(scenarios)
        todo: queue.SimpleQueue[tuple[int, Scenario]] = queue.SimpleQueue()
        for item in enumerate(chosen):
            todo.put(item)
        done: queue.SimpleQueue[_Done] = queue.SimpleQueue()
        stop = threading.Event()
        self.unstarted = []
        self.fatal = None
        self.sessions = max(1, min(self.jobs, len(chosen)))
        for number in range(self.sessions):
            threading.Thread(
                target=self._work,
                args=(self.first if number == 0 else None, todo, done, stop),
                name=f"toolconf-session-{number + 1}",
                daemon=True,
            ).start()
        running = self.sessions
        known: dict[int, ScenarioResult] = {}
        bad = 0
        try:
            for index, scenario in enumerate(chosen):
                while index not in known and running:
                    answer = done.get()
                    if answer is None:
                        running -= 1
                    else:
                        known[answer[0]] = answer[1]
                if self.fatal is not None:
                    raise self.fatal
                result = known.pop(index, None) or _unjudged(scenario)
                yield result
                bad += result.bad
                if maxfail is not None and bad >= maxfail:
                    return
        finally:
            stop.set()
            while running:  # each session ends its scenario before the caller closes the first
                if done.get() is None:
                    running -= 1
        if self.fatal is not None:  # a session met it after the last result came out
            raise self.fatal

    def _work(
        self,
        session: Judge | None,
        todo: queue.SimpleQueue[tuple[int, Scenario]],
        done: queue.SimpleQueue[_Done],
        stop: threading.Event,
    ) -> None:
        """One session's loop: start it if it is a spare, judge until nothing is left."""
        own = session is None
        try:
            if session is None:
                session = self._start_spare()
                if session is None:
                    return
            while not stop.is_set():
                try:
                    index, scenario = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    result = _evaluate(session, scenario)
                except ImplementationUnavailable as exc:
                    self.fatal = exc
                    stop.set()
                    return
                done.put((index, result))
        finally:
            if own and session is not None:
                with contextlib.suppress(Exception):
                    session.close()
            done.put(None)

    def _start_spare(self) -> Judge | None:
        """A started spare session, or None (its failure noted in ``unstarted``)."""
        session: Judge | None = None
        try:
            session = self.spare()
            session.start()
        except Exception as exc:
            kind = getattr(exc, "kind", type(exc).__name__)
            self.unstarted.append(f"[{kind}] {exc}")
            if session is not None:
                with contextlib.suppress(Exception):
                    session.close()
            return None
        return session


def _evaluate(session: Judge, scenario: Scenario) -> ScenarioResult:
    """The session's result, or an ``error`` naming the harness when judging itself broke."""
    try:
        return session.evaluate(scenario)
    except ImplementationUnavailable:
        raise
    except Exception as exc:
        detail = "".join(traceback.format_exception(exc))
        return result_of(
            scenario,
            Outcome.ERROR,
            kind="harness",
            where="runner",
            message=f"runner error {exc!r}\n{detail}",
        )


def _unjudged(scenario: Scenario) -> ScenarioResult:
    """The result of a scenario no session was left to judge (every one had ended)."""
    return result_of(
        scenario,
        Outcome.ERROR,
        kind="harness",
        where="runner",
        message="no session was left to judge this scenario",
    )
