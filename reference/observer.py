"""File-change observers: the stand-in for the LSP/IDE notification (WRITE-NOTIFY-1)."""

from __future__ import annotations

from typing import Literal, Protocol

Change = Literal["created", "changed"]


class FileChangeObserver(Protocol):
    """Told after Write or Edit changed a file on disk."""

    def file_changed(self, path: str, change: Change) -> None: ...
