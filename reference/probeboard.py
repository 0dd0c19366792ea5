"""Probe's per-session record: labels started, probes running (PROTO-PROBE-2, PROTO-PROBE-3)."""

from __future__ import annotations

import threading
import time
from typing import Protocol


class _Abortable(Protocol):
    def is_set(self) -> bool: ...


class ProbeBoard:
    """Per-session record of which probes started and how many run at once."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._started: set[str] = set()
        self._running: dict[int, int] = {}  # call key -> largest concurrency seen
        self._next_key = 0

    def start(self, label: str) -> int:
        with self._cond:
            key = self._next_key
            self._next_key += 1
            self._started.add(label)
            self._running[key] = 0
            count = len(self._running)
            for running in self._running:
                self._running[running] = max(self._running[running], count)
            self._cond.notify_all()
            return key

    def end(self, key: int) -> int:
        with self._cond:
            return self._running.pop(key)

    def missing(self, labels: list[str]) -> list[str]:
        with self._cond:
            return [label for label in labels if label not in self._started]

    def wait_started(self, labels: list[str], deadline: float, abort: _Abortable) -> list[str]:
        """Wait until every label started, the deadline passes or the call is aborted."""
        with self._cond:
            while True:
                missing = [label for label in labels if label not in self._started]
                remaining = deadline - time.monotonic()
                if not missing or remaining <= 0 or abort.is_set():
                    return missing
                self._cond.wait(min(remaining, 0.05))
