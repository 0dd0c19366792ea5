"""A time limit on a search's work (GLOB-TIMEOUT-1, GREP-TIMEOUT-1, and on the wall clock
GLOB-TIMEOUT-2, GREP-TIMEOUT-2).

Matching runs on the ``regex`` engine, whose calls take a ``timeout``: each
call is given what is left of the search's limit, so no single match, however
much it backtracks, can outlast it, and the walk checks it between entries.

That ``timeout`` counts the processor time the call used, not the time that
passed: on a busy host a call given 20 s may run for 27. So the limit is
also kept on the wall clock: ``within`` runs the search on a thread of its
own and stops waiting for it at the limit. For that the waiting thread must
get the interpreter back while a match runs, so every match is made with
``concurrent=True`` (the ``regex`` engine then releases the GIL), through
``match`` and ``search`` here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Final, TypeVar, cast

from reference import errors

SEARCH_TIMEOUT_S: Final = 20.0  # GLOB-TIMEOUT-1, GREP-TIMEOUT-1: rg's own limit (grep.rg_engine)
GRACE_S: Final = 0.1
"""How long past the limit ``within`` waits for the search to stop by itself."""

T = TypeVar("T")


class Deadline:
    """The end of a search's time; ``left`` raises ``SearchTimeoutError`` once it passed."""

    def __init__(self, what: str, seconds: float | None = None) -> None:
        self.what = what
        self.seconds = SEARCH_TIMEOUT_S if seconds is None else seconds
        self.end = time.monotonic() + self.seconds

    def left(self) -> float:
        """Seconds left, always positive; raises ``SearchTimeoutError`` when none are."""
        remaining = self.end - time.monotonic()
        if remaining <= 0:
            raise self.expired()
        return remaining

    def expired(self) -> errors.SearchTimeoutError:
        """The error a search past its limit ends with (also for ``regex``'s ``TimeoutError``)."""
        return errors.SearchTimeoutError(
            f"{self.what} ran longer than {self.seconds:g} s and was stopped. "
            "Use a more specific pattern or path."
        )

    def match(self, pattern: Any, text: str) -> Any:
        """``pattern.match(text)`` for a ``regex`` pattern, within what is left.

        Raises:
            errors.SearchTimeoutError: the limit passed, before or during the match.
        """
        try:
            return pattern.match(text, timeout=self.left(), concurrent=True)
        except TimeoutError:
            raise self.expired() from None

    def search(self, pattern: Any, text: str) -> Any:
        """``pattern.search(text)`` for a ``regex`` pattern, within what is left (as ``match``)."""
        try:
            return pattern.search(text, timeout=self.left(), concurrent=True)
        except TimeoutError:
            raise self.expired() from None


def within(deadline: Deadline, work: Callable[[], T]) -> T:
    """``work()``'s value or exception, or ``deadline.expired()`` once the limit passed.

    ``work`` runs on a daemon thread; this thread waits for it until the limit
    (plus ``GRACE_S``) on the wall clock. Work still running then is left
    behind: it sees the limit passed at its next ``left()``, and a match in
    progress ends when its own ``timeout`` runs out; its outcome is dropped.
    """
    outcome: list[tuple[bool, Any]] = []
    finished = threading.Event()

    def run() -> None:
        try:
            value = work()
        except BaseException as exc:  # handed to the waiting thread (or dropped, past the limit)
            outcome.append((False, exc))
        else:
            outcome.append((True, value))
        finally:
            finished.set()

    worker = threading.Thread(target=run, name=f"{deadline.what} search", daemon=True)
    worker.start()
    if not finished.wait(max(0.0, deadline.end - time.monotonic()) + GRACE_S):
        raise deadline.expired()
    ok, value = outcome[0]
    if ok:
        return cast(T, value)
    raise value
