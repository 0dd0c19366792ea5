"""A run ended by SIGTERM still ends every process of its implementation (PROTO-KILL-1).

The implementation here is the reference adapter under a shell that outlives it by ten
minutes, in the adapter's process group: only the connector's close ends that shell. Its
processes are found by a token of this test in their command line (the adapter may run in
a PID namespace of its own, where ``$$`` names another process than on the host).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _marked(token: str) -> list[int]:
    """Live processes whose command line holds ``token`` (zombies are not alive)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if token.encode() in command and state != "Z":
            found.append(int(entry.name))
    return found


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_sigterm_ends_the_run_and_every_process_of_its_implementation(jobs: str) -> None:
    token = f"toolconf-sigterm-{uuid.uuid4().hex}"
    adapter = f"sh -c '{sys.executable} -m reference.adapter; sleep 600' {token}"
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
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(_marked(token)) < int(jobs):
            time.sleep(0.1)
        assert len(_marked(token)) >= int(jobs), "the implementation did not start"
        time.sleep(1)  # mid-run
        runner.send_signal(signal.SIGTERM)
        assert runner.wait(timeout=30) == 128 + signal.SIGTERM
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _marked(token):
            time.sleep(0.1)
        left = _marked(token)
    finally:
        if runner.poll() is None:
            runner.kill()
        for pid in _marked(token):  # only this test's own processes, by their token
            os.kill(pid, signal.SIGKILL)
    assert left == [], "processes of the implementation outlived the run"
