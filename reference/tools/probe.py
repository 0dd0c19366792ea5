"""Probe: the test tool that proves scheduler behaviour by ordering (SPEC.md section 18.4).

Registered only when ``begin`` sets ``test_tools``. It keeps every
``build_tool`` default except concurrency safety (from its input) and its
interrupt behaviour (``cancel``), so the defaults are observable.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any, Final

from pydantic import Field

from reference import errors
from reference.tool import ResultContent, Tool, ToolResult, ToolUseContext, build_tool
from reference.tools.common import JsonInt, StrictInput

NAME: Final = "Probe"


class ProbeInput(StrictInput):  # PROTO-PROBE-1: the input and its defaults
    label: str
    concurrency_safe: bool = False
    sleep_ms: JsonInt = Field(default=0, ge=0)
    await_started: list[str] = Field(default_factory=list)
    timeout_ms: JsonInt = Field(default=2000, ge=0)
    fail: bool = False
    bash_error: bool = False


def call(inp: ProbeInput, ctx: ToolUseContext) -> ToolResult:
    board = ctx.session.probe_board
    trail = list(ctx.probe_trail)
    key = board.start(inp.label)
    try:
        if inp.await_started:
            deadline = time.monotonic() + inp.timeout_ms / 1000
            missing = board.wait_started(inp.await_started, deadline, ctx.abort)
            if ctx.abort.is_set():
                raise errors.CallAbortedError("aborted")
            if missing:
                raise errors.ProbeTimeoutError(
                    f"Probe {inp.label} timed out waiting for: {', '.join(missing)}"
                )
        if inp.sleep_ms and ctx.abort.wait(inp.sleep_ms / 1000):  # SCHED-ABORT-1
            raise errors.CallAbortedError("aborted")
        if ctx.abort.is_set():
            raise errors.CallAbortedError("aborted")
        if inp.fail:
            raise errors.ProbeFailure(f"Probe {inp.label} failed")
    finally:
        max_concurrent = board.end(key)
    label = inp.label
    return ToolResult(
        {"label": label, "max_concurrent": max_concurrent, "trail": trail},
        context_modifier=lambda c: c.with_trail(label),  # PROTO-PROBE-3
    )


def map_result(data: Mapping[str, Any]) -> ResultContent:
    """PROTO-PROBE-3: exactly this JSON, keys in order."""
    return json.dumps(
        {"label": data["label"], "max_concurrent": data["max_concurrent"], "trail": data["trail"]},
        ensure_ascii=False,
    )


def cascade_description(inp: ProbeInput, exc: BaseException) -> str | None:
    """SCHED-CASCADE-1, SCHED-CASCADE-2: a ``ProbeFailure`` with ``bash_error`` cascades.

    It cancels its batch as a Bash failure does.

    A timeout, an abort, or ``bash_error`` without ``fail`` cascades nothing
    (PROTO-PROBE-2, SCHED-CASCADE-3).
    """
    if inp.bash_error and isinstance(exc, errors.ProbeFailure):
        return f"Probe({inp.label})"
    return None


PROBE_TOOL: Final[Tool[ProbeInput]] = build_tool(
    name=NAME,
    input_model=ProbeInput,
    call=call,
    description="Test tool: records its start, waits, sleeps and reports concurrency.",
    is_concurrency_safe=lambda inp: inp.concurrency_safe,
    map_result=map_result,
    interrupt_behavior="cancel",
    cascade_description=cascade_description,
)
