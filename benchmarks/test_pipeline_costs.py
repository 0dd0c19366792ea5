"""What the dispatch pipeline, the scheduler and a hook add to a call."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_benchmark.fixture import BenchmarkFixture

from reference.dispatch import dispatch
from reference.engine import Engine
from reference.events import EventLog
from reference.scheduler import Scheduler
from reference.tool import ToolUseContext
from reference.tools.read.tool import READ_TOOL, ReadInput

HOOK = Path(__file__).resolve().parents[1] / "fixtures" / "hooks" / "echo_decision.py"


def _engine(tmp_path: Path, settings: dict[str, Any] | None = None) -> Engine:
    engine = Engine()
    session = {"root": str(tmp_path), "prompt": "allow", "settings": settings or {}}
    assert engine.handle({"seq": 1, "cmd": "begin", "session": session})["ok"]
    return engine


def _read(path: Path, tool_use_id: str = "toolu_bench") -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": tool_use_id,
        "name": "Read",
        "input": {"file_path": str(path)},
    }


def test_dedup_hit_tool_call_only(
    benchmark: BenchmarkFixture,
    text_file: Callable[[int], Path],
    make_context: Callable[..., ToolUseContext],
) -> None:
    """The floor for the pipeline comparison: READ_TOOL.call on a dedup hit."""
    ctx = make_context()
    inp = ReadInput(file_path=str(text_file(10_000)))
    READ_TOOL.call(inp, ctx)
    ctx.session.turn += 1  # READ-DEDUP-5: the re-reads come in a later message
    assert benchmark(READ_TOOL.call, inp, ctx).outcome == {"dedup": True}


def test_dedup_hit_through_the_pipeline(
    benchmark: BenchmarkFixture, tmp_path: Path, text_file: Callable[[int], Path]
) -> None:
    """The same hit through every phase: find, schema, backfill, validate, hooks, permission."""
    engine = _engine(tmp_path)
    assert engine.session is not None
    ctx = ToolUseContext(session=engine.session, tool_use_id="toolu_bench", cwd=str(tmp_path))
    block = _read(text_file(10_000))
    dispatch(engine.tools, block, ctx)
    engine.session.turn += 1  # READ-DEDUP-5: the re-reads come in a later message
    assert benchmark(dispatch, engine.tools, block, ctx).dedup


def test_dedup_hit_through_the_engine(
    benchmark: BenchmarkFixture, tmp_path: Path, text_file: Callable[[int], Path]
) -> None:
    """The same hit as a protocol ``call`` command, in process: scheduler, events, response."""
    engine = _engine(tmp_path)
    request = {"seq": 2, "cmd": "call", "tool_use": _read(text_file(10_000))}
    assert engine.handle(request)["outcome"]["dedup"] is False
    response = benchmark(engine.handle, request)
    assert response["outcome"]["dedup"] is True


def test_message_of_ten_reads(
    benchmark: BenchmarkFixture, tmp_path: Path, text_file: Callable[[int], Path]
) -> None:
    """Scheduler overhead: ten dedup-hit Reads in one concurrency-safe batch."""
    engine = _engine(tmp_path)
    assert engine.session is not None
    session = engine.session
    path = text_file(10_000)
    blocks = [_read(path, f"toolu_{i}") for i in range(10)]
    Scheduler(engine.tools, session, EventLog()).run(blocks[:1])

    def run() -> list[str]:
        result = Scheduler(engine.tools, session, EventLog()).run(blocks)
        return [outcome.stage for outcome in result.results]

    assert benchmark(run) == ["done"] * 10


def test_dedup_hit_with_one_pre_tool_use_hook(
    benchmark: BenchmarkFixture, tmp_path: Path, text_file: Callable[[int], Path]
) -> None:
    """Hook cost: the same hit with one PreToolUse command hook (a real subprocess)."""
    command = f"{sys.executable} {HOOK} allow"
    hooks = {
        "PreToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": command}]}]
    }
    engine = _engine(tmp_path, {"userSettings": {"hooks": hooks}})
    assert engine.session is not None
    ctx = ToolUseContext(session=engine.session, tool_use_id="toolu_bench", cwd=str(tmp_path))
    block = _read(text_file(10_000))
    dispatch(engine.tools, block, ctx)
    engine.session.turn += 1  # READ-DEDUP-5: the re-reads come in a later message
    assert benchmark(dispatch, engine.tools, block, ctx).dedup
