"""A search's time limit on the wall clock (GLOB-TIMEOUT-1, GREP-TIMEOUT-1)."""

from __future__ import annotations

import threading
import time

import pytest
import regex

from reference.deadline import GRACE_S, Deadline, within
from reference.errors import SearchTimeoutError


def test_work_that_ends_in_time_gives_its_value_or_its_error() -> None:
    """SPEC: GREP-TIMEOUT-1"""
    assert within(Deadline("Grep", 5.0), lambda: 42) == 42

    def fails() -> int:
        raise ValueError("the work's own error")

    with pytest.raises(ValueError, match="the work's own error"):
        within(Deadline("Grep", 5.0), fails)


def test_work_past_the_limit_is_left_behind_at_the_limit() -> None:
    """SPEC: GREP-TIMEOUT-2, GLOB-TIMEOUT-2

    The wait ends at the limit, whatever the work does.
    """
    release = threading.Event()
    started = time.monotonic()
    with pytest.raises(SearchTimeoutError, match=r"Glob ran longer than 0\.3 s"):
        within(Deadline("Glob", 0.3), lambda: release.wait(30))
    waited = time.monotonic() - started
    release.set()
    assert 0.3 <= waited < 0.3 + GRACE_S + 0.5


def test_a_match_past_the_limit_is_a_search_timeout() -> None:
    """SPEC: GREP-TIMEOUT-1

    ``regex``'s TimeoutError becomes the coded SearchTimeoutError.
    """
    backtracking = regex.compile("(a|aa)+$")
    deadline = Deadline("Grep", 0.2)
    with pytest.raises(SearchTimeoutError):
        deadline.search(backtracking, "a" * 5_000 + "!")
    with pytest.raises(SearchTimeoutError):
        deadline.match(regex.compile("x"), "x")  # nothing left: refused before matching
