"""A lock that runs on one machine take in turn: shards, pytest-xdist workers, ``--jobs``.

``held(path, timeout=...)`` holds an exclusive ``flock`` on ``path`` (made
when missing) for a ``with`` block. The lock belongs to the open file, so
threads of one process exclude one another as processes do, and a process
that dies lets go of it at once. The wait is bounded: past ``timeout``
seconds it raises ``TimeoutError``, naming the file.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

__all__ = ["held"]

_POLL: Final = 0.05
"""Seconds between two tries while another holder has the lock."""


@contextlib.contextmanager
def held(path: Path, *, timeout: float) -> Iterator[None]:
    """Hold the lock of ``path`` for the block.

    Raises:
        TimeoutError: another holder kept it for over ``timeout`` seconds.
        OSError: the lock file cannot be made.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise TimeoutError(
                        f"{path} stayed locked by another run for over {timeout:g} s"
                    ) from None
                time.sleep(_POLL)
        yield
    finally:
        os.close(handle)  # lets go of the lock
