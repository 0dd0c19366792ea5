"""An abort signal that says why (TOOL-CONTEXT-1): ``sibling_error`` or ``user_interrupt``."""

from __future__ import annotations

import threading
from typing import Literal

AbortReason = Literal["sibling_error", "user_interrupt"]


class AbortSignal:
    """A one-shot flag with a reason; ``wait`` lets a tool sleep until aborted."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason: AbortReason | None = None
        self.detail = ""

    def abort(self, reason: AbortReason, detail: str = "") -> None:
        """Set once; the first reason wins."""
        if not self._event.is_set():
            self.reason = reason
            self.detail = detail
            self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float | None) -> bool:
        """Block up to ``timeout`` seconds; True when aborted."""
        return self._event.wait(timeout)
