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
from reference.tools.read.tool import READ_TOOL, ReadInput

SIZES = pytest.mark.parametrize(
    "size",
    [1_000, 4_000, 16_000, 64_000, 100_000, 256_000],
    ids=["1KB", "4KB", "16KB", "64KB", "100KB", "256KB"],
)


@SIZES
def test_bare_stat_floor(
    benchmark: BenchmarkFixture, size: int, text_file: Callable[[int], Path]
) -> None:
    """The floor a dedup hit can reach: one os.stat of the same file."""
    path = str(text_file(size))
    result = benchmark(os.stat, path)
    assert size - 4 <= result.st_size <= size  # the corpus cuts on a character boundary


@SIZES
def test_dedup_hit_at_tool_level(
    benchmark: BenchmarkFixture,
    size: int,
    text_file: Callable[[int], Path],
    make_context: Callable[..., ToolUseContext],
) -> None:
    """READ-DEDUP-2: a hit is one stat and a stub, whatever the file size."""
    ctx = make_context(fileReadMaxOutputTokens=10**9)
    inp = ReadInput(file_path=str(text_file(size)), limit=10**9)
    assert READ_TOOL.call(inp, ctx).data["type"] == "text"
    ctx.session.turn += 1  # READ-DEDUP-5: the re-reads come in a later message
    result = benchmark(READ_TOOL.call, inp, ctx)
    assert result.outcome == {"dedup": True}
    assert result.data == {"type": "file_unchanged", "file": {"filePath": inp.file_path}}


@SIZES
def test_full_read(
    benchmark: BenchmarkFixture,
    size: int,
    text_file: Callable[[int], Path],
    make_context: Callable[..., ToolUseContext],
) -> None:
    """A full Read of the same file with dedup off: read, decode, number, gate, record."""
    ctx = make_context(readDedupKillswitch=True, fileReadMaxOutputTokens=10**9)
    inp = ReadInput(file_path=str(text_file(size)), limit=10**9)
    result = benchmark(READ_TOOL.call, inp, ctx)
    assert result.data["type"] == "text"
    assert result.data["file"]["numLines"] == result.data["file"]["totalLines"] > 0
