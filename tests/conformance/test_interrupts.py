"""SIGTERM and Ctrl-C unwind a command, held through the steps that must finish.

Each case runs in a Python of its own, which signals itself: the test process's own
handlers stay as they are. It starts with Ctrl-C's default handler, as Python in the
foreground does, whatever the test runner inherited (a background job ignores SIGINT).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

_PRELUDE = """
import os, signal, sys
from conformance.interrupts import ended_by_signals, uninterrupted
signal.signal(signal.SIGINT, signal.default_int_handler)  # as if started in the foreground
said = []
def report(exc):
    code = getattr(exc, "code", None)
    print(type(exc).__name__, *([code] if code is not None else []), *said, flush=True)
"""


def _run(body: str) -> str:
    program = _PRELUDE + textwrap.dedent(body)
    done = subprocess.run(
        [sys.executable, "-c", program],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.subprocess
def test_a_sigterm_unwinds_at_once_outside_any_step() -> None:
    out = _run("""
        try:
            with ended_by_signals():
                os.kill(os.getpid(), signal.SIGTERM)
                said.append("after")
        except SystemExit as exc:
            report(exc)
    """)
    assert out == "SystemExit 143"


@pytest.mark.subprocess
def test_a_sigterm_in_a_step_is_raised_as_the_outermost_step_ends() -> None:
    out = _run("""
        try:
            with ended_by_signals():
                with uninterrupted():
                    with uninterrupted():
                        os.kill(os.getpid(), signal.SIGTERM)
                        said.append("inner")
                    said.append("outer")
                said.append("after")
        except SystemExit as exc:
            report(exc)
    """)
    assert out == "SystemExit 143 inner outer"


@pytest.mark.subprocess
def test_a_step_that_fails_meanwhile_still_ends_the_run() -> None:
    out = _run("""
        try:
            with ended_by_signals():
                try:
                    with uninterrupted():
                        os.kill(os.getpid(), signal.SIGTERM)
                        raise ValueError("the step's own failure")
                except ValueError:
                    said.append("caught")
        except SystemExit as exc:
            said.append(type(exc.__context__).__name__)
            report(exc)
    """)
    assert out == "SystemExit 143 ValueError"


@pytest.mark.subprocess
def test_ctrl_c_in_a_step_is_a_keyboard_interrupt_as_it_ends() -> None:
    out = _run("""
        try:
            with ended_by_signals():
                with uninterrupted():
                    os.kill(os.getpid(), signal.SIGINT)
                    said.append("inner")
        except KeyboardInterrupt as exc:
            report(exc)
    """)
    assert out == "KeyboardInterrupt inner"


@pytest.mark.subprocess
def test_handlers_are_put_back_and_an_ignored_signal_stays_ignored() -> None:
    out = _run("""
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        with ended_by_signals():
            os.kill(os.getpid(), signal.SIGINT)
            said.append(str(signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL))
        said.append(str(signal.getsignal(signal.SIGTERM) is signal.SIG_DFL))
        said.append(str(signal.getsignal(signal.SIGINT) is signal.SIG_IGN))
        print(*said)
    """)
    assert out == "True True True"


@pytest.mark.subprocess
def test_outside_the_main_thread_nothing_is_set_or_held() -> None:
    out = _run("""
        import threading
        def work():
            with ended_by_signals():
                said.append(str(signal.getsignal(signal.SIGTERM) is signal.SIG_DFL))
                with uninterrupted():
                    said.append("step")
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
        print(*said)
    """)
    assert out == "True step"
