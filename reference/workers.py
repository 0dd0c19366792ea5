"""Worker threads kept between calls, so a call does not pay for starting one.

Starting a thread and waiting for it to run costs a few hundred microseconds
here, more than a dedup hit's whole pipeline. The scheduler hands each call to
``WORKERS.run``, which gives it a thread of its own at once: an idle worker
when there is one, a new one otherwise. No call ever waits behind another, so
calls that may overlap still overlap (SCHED-RUN-1); how many overlap is the
scheduler's decision (SCHED-LIMIT-1), not the pool's.

Workers are daemon threads, as the scheduler's own threads were: a call that
never ends (a hung hook, say) cannot keep the process from exiting.
"""

from __future__ import annotations

import queue
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Final


class Workers:
    """A pool that grows to the largest number of calls ever running at once."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._lock = threading.Lock()
        self._idle = 0  # workers free or about to be; never fewer than the jobs queued
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._started = 0

    def run(self, job: Callable[[], None]) -> None:
        """Start ``job`` on a thread of its own now; return without waiting for it."""
        with self._lock:
            spawn = self._idle == 0
            if spawn:
                self._started += 1
                number = self._started
            else:
                self._idle -= 1
        self._jobs.put(job)
        if spawn:
            name = f"{self._name}-{number}"
            threading.Thread(target=self._serve, name=name, daemon=True).start()

    @property
    def size(self) -> int:
        """How many workers were ever started."""
        return self._started

    @property
    def idle(self) -> int:
        """How many workers have no job (a worker counts itself idle after its job returns)."""
        return self._idle

    def _serve(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                job()
            except Exception:  # a job's own failure must not cost the pool a worker
                traceback.print_exc(file=sys.stderr)
            with self._lock:
                self._idle += 1


WORKERS: Final = Workers("toolsys-call")
