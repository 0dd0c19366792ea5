"""A SIGTERM or Ctrl-C ends a command by unwinding it, except through a step that must finish.

Python's default for SIGTERM ends the process at once, so no connector is closed and every
peer process started in a session of its own is left to init. ``ended_by_signals`` makes a
SIGTERM raise ``SystemExit(128 + SIGTERM)`` instead, as Ctrl-C raises
``KeyboardInterrupt``; unwinding then runs each close, which kills the implementation's
whole process group (PROTO-KILL-1).

Either exception comes in the main thread at whatever line it is running. Cut between
starting a process and recording it, or between forgetting a process and killing it, the
unwinding has nothing left to close, and the process outlives the run. ``uninterrupted``
marks such a step: a signal that comes during one, on the main thread, is held and raised
as the outermost step ends. Each step it marks is bounded by its own waits, so a held
signal is raised within those bounds. Other threads need no marking: no signal exception
is raised in them.

No signal mask is used for this: a mask is inherited across ``exec``, so a process started
inside the step would ignore the very signals that must end it.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType
from typing import Final

__all__ = ["ended_by_signals", "uninterrupted"]

_SIGNALS: Final = {signal.SIGTERM: signal.SIG_DFL, signal.SIGINT: signal.default_int_handler}
"""Each signal handled, and the handler it must have for this module to take it over: a
signal the runner's own parent set to be ignored stays ignored."""


@dataclass(slots=True)
class _Steps:
    """The main thread's ``uninterrupted`` steps: how deep it is, what came meanwhile."""

    depth: int = 0
    held: list[int] = field(default_factory=list)
    """The signals that came during the steps, first first."""


_STEPS: Final = _Steps()


def _raise_for(signum: int) -> None:
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise SystemExit(128 + signum)


def _arrived(signum: int, frame: FrameType | None) -> None:
    if _STEPS.depth:
        _STEPS.held.append(signum)
        return
    _raise_for(signum)


@contextmanager
def ended_by_signals() -> Iterator[None]:
    """Within the block, SIGTERM and Ctrl-C unwind it, held through ``uninterrupted`` steps.

    A signal whose handler is not Python's default is left alone: one the runner was
    started ignoring (a background job's Ctrl-C) stays ignored. Outside the main thread (a
    caller's thread) no handler can be set, and none is. The handlers there before are put
    back at the end.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {
        signum: signal.signal(signum, _arrived)
        for signum, default in _SIGNALS.items()
        if signal.getsignal(signum) is default
    }
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)
        _STEPS.held.clear()


@contextmanager
def uninterrupted() -> Iterator[None]:
    """A step no signal cuts in two: one that comes during it is raised as it ends.

    When the step itself raises, the held signal's exception replaces that one (with it as
    its context), so that a caller which handles the step's failure still ends.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _STEPS.depth += 1
    try:
        yield
    finally:
        _STEPS.depth -= 1
        if not _STEPS.depth and _STEPS.held:
            signum = _STEPS.held[0]
            _STEPS.held.clear()
            _raise_for(signum)
