"""Removing a directory tree that a scenario or an adapter may have locked down.

A base module, like ``conformance.errors``: every layer may use it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

__all__ = ["remove_tree"]


def remove_tree(path: Path) -> None:
    """``rm -rf`` that first makes every directory writable (scenarios chmod them)."""
    with contextlib.suppress(OSError):
        os.chmod(path, 0o700)
    for directory, subdirs, _files in os.walk(path):
        for name in subdirs:  # before os.walk descends, so unreadable ones open too
            sub = os.path.join(directory, name)
            if not os.path.islink(sub):
                with contextlib.suppress(OSError):
                    os.chmod(sub, 0o700)
    shutil.rmtree(path, ignore_errors=True)
