"""Shared setup for the benchmarks: real files on the real disk, a live session."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from conformance.instruments.bench import corpus
from reference.session import Session
from reference.settings import Settings
from reference.tool import ToolUseContext


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
        path.write_text(corpus.generate("source", size), encoding="utf-8")
        os.utime(path, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
        return path

    return make
