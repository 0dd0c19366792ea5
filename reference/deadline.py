"""A time limit on a search's work (GLOB-TIMEOUT-1, GREP-TIMEOUT-1).

Matching runs on the ``regex`` engine, whose calls take a ``timeout``: each
call is given what is left of the search's limit, so no single match, however
much it backtracks, can outlast it, and the walk checks it between entries.
"""

from __future__ import annotations

import time
from typing import Final

from reference import errors

SEARCH_TIMEOUT_S: Final = 20.0  # GLOB-TIMEOUT-1, GREP-TIMEOUT-1: rg's own limit (grep.rg_engine)


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
