"""What refusing a file over the 256 KiB whole-file cap costs, from 1 MiB to 1 GiB.

READ-SIZE-1: ``stat`` alone decides, before any byte of the file is read, so
the cost must not depend on the size. The files are sparse (a 4 KiB text head,
then a hole made by ``os.truncate``), so a 1 GiB file costs no disk; the head
makes Read see a text file rather than an empty or binary one.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from conformance.instruments.bench import corpus
from reference import errors, fileio
from reference.dispatch import dispatch
from reference.engine import Engine
from reference.tool import ToolUseContext
from reference.tools.read.tool import MAX_WHOLE_FILE_BYTES, READ_TOOL, ReadInput

MIB = 1024 * 1024
SIZES = pytest.mark.parametrize(
    "size", [MIB, 16 * MIB, 256 * MIB, 1024 * MIB], ids=["1MiB", "16MiB", "256MiB", "1GiB"]
)
HEAD_BYTES = 4096
DENSE_LIMIT = 16 * MIB  # without sparse files, bigger files are not worth writing out


def _sparse_files_work(directory: Path) -> bool:
    probe = directory / "sparse_probe"
    probe.write_bytes(b"x")
    os.truncate(probe, 16 * MIB)
    blocks = probe.stat().st_blocks
    probe.unlink()
    return blocks * 512 < MIB


@pytest.fixture
def big_file(tmp_path: Path) -> Callable[[int], Path]:
    """A text file of ``size`` bytes: a 4 KiB head of source code, then a hole."""
    sparse = _sparse_files_work(tmp_path)

    def make(size: int) -> Path:
        if not sparse and size > DENSE_LIMIT:
            pytest.skip(
                f"the filesystem of {tmp_path} makes no sparse files, so a {size}-byte file "
                "would have to be written out in full"
            )
        path = tmp_path / f"big_{size}.py"
        path.write_text(corpus.generate("source", HEAD_BYTES), encoding="utf-8")
        os.truncate(path, size)
        st = path.stat()
        assert st.st_size == size
        if sparse:
            assert st.st_blocks * 512 < size // 2, "expected a sparse file"
        return path

    return make


@pytest.fixture
def whole_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths ``fileio.read_bytes`` reads whole while the test runs."""
    seen: list[str] = []
    read_bytes = fileio.read_bytes

    def spy(path: str) -> bytes:
        seen.append(path)
        return read_bytes(path)

    monkeypatch.setattr(fileio, "read_bytes", spy)
    return seen


def _refusal(inp: ReadInput, ctx: ToolUseContext) -> errors.ToolCallError:
    """READ_TOOL.call, which must raise; the error is returned so it can be checked."""
    try:
        READ_TOOL.call(inp, ctx)
    except errors.MaxFileReadSizeExceededError as exc:
        return exc
    pytest.fail("Read returned a result for a file over the size cap")


@SIZES
def test_size_cap_rejection_at_tool_level(
    benchmark: BenchmarkFixture,
    size: int,
    big_file: Callable[[int], Path],
    make_context: Callable[..., ToolUseContext],
    whole_reads: list[str],
) -> None:
    """READ-SIZE-1 at the tool: the same refusal whatever the size."""
    path = str(big_file(size))
    ctx = make_context()
    benchmark.extra_info.update({"size": size, "allocated": os.stat(path).st_blocks * 512})
    error = benchmark(_refusal, ReadInput(file_path=path), ctx)
    assert type(error) is errors.MaxFileReadSizeExceededError
    assert error.error_name == "MaxFileReadSizeExceededError"
    assert f"({size} bytes)" in error.message
    assert f"({MAX_WHOLE_FILE_BYTES} bytes)" in error.message
    assert whole_reads == []  # never read whole: only the 16-byte kind sniff touches the file
    assert ctx.session.read_state.get(path) is None  # nothing recorded


def _engine(root: Path) -> Engine:
    engine = Engine()
    session: dict[str, Any] = {"root": str(root), "prompt": "allow", "settings": {}}
    assert engine.handle({"seq": 1, "cmd": "begin", "session": session})["ok"]
    return engine


def test_size_cap_rejection_through_dispatch(
    benchmark: BenchmarkFixture,
    tmp_path: Path,
    big_file: Callable[[int], Path],
    whole_reads: list[str],
) -> None:
    """READ-SIZE-1 through the whole pipeline, on the 1 GiB file: stage call, no code."""
    path = big_file(1024 * MIB)
    engine = _engine(tmp_path)
    assert engine.session is not None
    ctx = ToolUseContext(session=engine.session, tool_use_id="toolu_bench", cwd=str(tmp_path))
    block = {
        "type": "tool_use",
        "id": "toolu_bench",
        "name": "Read",
        "input": {"file_path": str(path)},
    }
    outcome = benchmark(dispatch, engine.tools, block, ctx)
    assert outcome.is_error
    assert outcome.stage == "call"
    assert outcome.error_code is None  # ERR-CODE-2: errors raised in call() carry a name only
    assert outcome.error_name == "MaxFileReadSizeExceededError"
    assert whole_reads == []
    assert engine.session.read_state.get(str(path)) is None
