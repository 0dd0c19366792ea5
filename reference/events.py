"""The ordered log of what happened during one protocol request (SPEC.md section 18.3)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

Listener = Callable[[dict[str, Any]], None]


class EventLog:
    """Thread-safe, append-only; order of ``emit`` calls is the order reported."""

    def __init__(self) -> None:
        self._items: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> None:
        """Call ``listener`` after every later ``emit``, outside the log's lock."""
        self._listeners.append(listener)

    def emit(self, event_type: str, **fields: Any) -> None:
        event = {"type": event_type, **fields}
        with self._lock:
            self._items.append(event)
        for listener in list(self._listeners):
            listener(event)

    def items(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._items)
