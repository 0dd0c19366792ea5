"""A run ended by SIGTERM still ends every process of its implementation (PROTO-KILL-1).

The implementation here is the reference adapter under a shell that outlives it by ten
minutes, in the adapter's process group: only the connector's close ends that shell. Its
processes are found by a token of this test in their command line (the adapter may run in
a PID namespace of its own, where ``$$`` names another process than on the host); the
runner's own command line holds the token too, and is not counted.

The signal comes at two moments: in the middle of the judging (after the runner has said
which implementation it judges), and while the implementation is starting, before it has
answered ``hello`` (its start is delayed so that the moment is certain).
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import IO

import pytest

REPO = Path(__file__).resolve().parents[2]


def _marked(token: str, *, besides: int) -> list[int]:
    """Live processes but ``besides`` whose command line holds ``token`` (zombies are not
    alive)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == besides:
            continue
        try:
            command = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if token.encode() in command and state != "Z":
            found.append(int(entry.name))
    return found


def _lines(stream: IO[bytes]) -> queue.SimpleQueue[bytes]:
    lines: queue.SimpleQueue[bytes] = queue.SimpleQueue()

    def read() -> None:
        for line in iter(stream.readline, b""):
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    return lines


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("jobs", "moment"),
    [("1", "judging"), ("2", "judging"), ("1", "starting")],
)
def test_sigterm_ends_the_run_and_every_process_of_its_implementation(
    jobs: str, moment: str
) -> None:
    token = f"toolconf-sigterm-{uuid.uuid4().hex}"
    delay = "sleep 5; " if moment == "starting" else ""
    adapter = f"sh -c '{delay}{sys.executable} -m reference.adapter; sleep 600' {token}"
    runner = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "conformance",
            "run",
            "--no-progress",
            "--jobs",
            jobs,
            "--impl",
            f"stdio:{adapter}",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert runner.stdout is not None
    said = _lines(runner.stdout)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not _marked(token, besides=runner.pid):
            time.sleep(0.05)
        assert _marked(token, besides=runner.pid), "the implementation did not start"
        if moment == "judging":
            announced = said.get(timeout=60)
            assert b" via stdio:" in announced, announced
            time.sleep(1)
        else:
            time.sleep(0.5)
            assert said.empty(), "the implementation answered hello before its delay"
        runner.send_signal(signal.SIGTERM)
        assert runner.wait(timeout=30) == 128 + signal.SIGTERM
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _marked(token, besides=runner.pid):
            time.sleep(0.1)
        left = _marked(token, besides=runner.pid)
    finally:
        if runner.poll() is None:
            runner.kill()
        for pid in _marked(token, besides=runner.pid):  # this test's own, by their token
            os.kill(pid, signal.SIGKILL)
        runner.stdout.close()
    assert left == [], "processes of the implementation outlived the run"
