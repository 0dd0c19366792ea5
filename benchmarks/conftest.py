"""Shared setup for the benchmarks: real files on the real disk, a live session."""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from reference.session import Session
from reference.settings import Settings
from reference.tool import ToolUseContext


def source_like_text(size: int, seed: int = 7) -> str:
    """Reproducible code-like text of about ``size`` characters."""
    rng = random.Random(seed)
    words = ["self", "return", "value", "count", "items", "def", "for", "in", "if", "None"]
    lines: list[str] = []
    total = 0
    while total < size:
        indent = "    " * rng.randint(0, 3)
        line = indent + " ".join(rng.choice(words) for _ in range(rng.randint(2, 9)))
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)[:size]


@pytest.fixture
def make_context(tmp_path: Path) -> Callable[..., ToolUseContext]:
    def make(**settings: object) -> ToolUseContext:
        session = Session.create(
            root=str(tmp_path),
            settings=Settings(by_source={"userSettings": settings}),
            session_dir=str(tmp_path / ".session"),
        )
        return ToolUseContext(session=session, tool_use_id="toolu_bench", cwd=str(tmp_path))

    return make


@pytest.fixture
def text_file(tmp_path: Path) -> Callable[[int], Path]:
    def make(size: int) -> Path:
        path = tmp_path / f"file_{size}.py"
        path.write_text(source_like_text(size), encoding="utf-8")
        os.utime(path, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
        return path

    return make
