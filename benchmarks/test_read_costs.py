"""What a dedup hit and a full Read cost (seed 000's claims).

The exact count's costs, to the end and with the early exit, are measured per
kind of file in ``test_token_gate.py``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from reference.tool import ToolUseContext
from reference.tools.read import READ_TOOL, ReadInput


def test_bare_stat_floor(benchmark: BenchmarkFixture, text_file: Callable[[int], Path]) -> None:
    """The floor a dedup hit can reach: one os.stat of the same file."""
    path = str(text_file(100_000))
    result = benchmark(os.stat, path)
    assert result.st_size == 100_000


def test_dedup_hit_at_tool_level(
    benchmark: BenchmarkFixture,
    text_file: Callable[[int], Path],
    make_context: Callable[..., ToolUseContext],
) -> None:
    """READ-DEDUP-2: a hit is one stat and a stub, whatever the file size."""
    ctx = make_context()
    inp = ReadInput(file_path=str(text_file(100_000)))
    READ_TOOL.call(inp, ctx)
    result = benchmark(READ_TOOL.call, inp, ctx)
    assert result.outcome == {"dedup": True}


@pytest.mark.parametrize("size", [1_000, 10_000, 100_000, 250_000])
def test_full_read(
    benchmark: BenchmarkFixture,
    size: int,
    text_file: Callable[[int], Path],
    make_context: Callable[..., ToolUseContext],
) -> None:
    """A full Read with dedup off: read, decode, number, gate, record."""
    ctx = make_context(readDedupKillswitch=True, fileReadMaxOutputTokens=10**9)
    inp = ReadInput(file_path=str(text_file(size)), limit=10**9)
    result = benchmark(READ_TOOL.call, inp, ctx)
    assert result.data["type"] == "text"
