"""The ordered log of what happened during one protocol request (PROTO events)."""

from __future__ import annotations

import threading
from typing import Any


class EventLog:
    """Thread-safe, append-only; order of ``emit`` calls is the order reported."""

    def __init__(self) -> None:
        self._items: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def emit(self, event_type: str, **fields: Any) -> None:
        with self._lock:
            self._items.append({"type": event_type, **fields})

    def items(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._items)
