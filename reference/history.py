"""File history backups keyed by content hash (HIST-1)."""

from __future__ import annotations

import hashlib
import os


def backup(session_dir: str, data: bytes) -> str:
    """Save ``data`` once under ``file-history/<sha256>``; return the backup path."""
    directory = os.path.join(session_dir, "file-history")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, hashlib.sha256(data).hexdigest())
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    return path
