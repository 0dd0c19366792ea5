"""What a dedup hit, a full Read and an exact count cost (seed 000's claims)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from reference import tokens
from reference.tool import ToolUseContext
from reference.tools.read import READ_TOOL, ReadInput

from .conftest import source_like_text


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


def test_exact_count_throughput(benchmark: BenchmarkFixture) -> None:
    """TOK-EXACT-1 over 256 KiB of code-like text, counted to the end."""
    text = source_like_text(256 * 1024)
    count = benchmark(tokens.exact_count, text)
    assert count.complete
    assert count.tokens > 25_000


def test_exact_count_early_exit(benchmark: BenchmarkFixture) -> None:
    """TOK-EXACT-2: stops once the running total passes 25,000."""
    text = source_like_text(256 * 1024)
    count = benchmark(tokens.exact_count, text, stop_above=25_000)
    assert not count.complete
    assert count.tokens > 25_000
