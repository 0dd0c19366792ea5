"""Hostile files and inputs, each to be answered quickly (PROTO-STRESS-1).

Devices (``/dev/zero``, ``/dev/random``, ``/dev/urandom``, ``/dev/full``,
``/dev/stdin``, ``/dev/tty``, ``/dev/fd/0``, ``/dev/null``), a FIFO with no
writer, a UNIX socket, a sparse 2 GiB file (whole, with ``offset``, with
``limit``), ``/proc`` entries, a directory, a symlink loop, a 100 MB file of
one line (Read with ``limit: 1``), plus the pathological Glob and Grep
patterns of issue 12 (catastrophic globbing and regex backtracking) and a
Grep over a tree holding the FIFO. Each item is timed from request to
answer: an answer of any kind (an error is fine) counts; the answer's size
is reported; no answer within the request timeout is a hang, and the
adapter is restarted. The harness reports the items over ``slow`` seconds;
it does not assert on them in unit tests.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.errors import AdapterCrash, AdapterFailure, AdapterTimeout
from conformance.instruments.reliability.common import RawAdapter, StressSandbox
from conformance.wire.connector import ConnectorOptions

__all__ = ["HostileFigures", "HostileItem", "items", "run_hostile"]

GIB = 1 << 30


@dataclass(frozen=True, slots=True)
class HostileItem:
    """One hostile request: a name, the tool and its input."""

    name: str
    tool: str
    given: dict[str, Any]


@dataclass
class HostileFigures:
    """Per item: seconds, answer bytes and how it ended; the totals."""

    items: list[dict[str, Any]] = field(default_factory=list)
    slow_limit: float = 2.0
    hangs: int = 0
    crashes: int = 0
    slow: int = 0
    max_seconds: float = 0.0
    max_answer_bytes: int = 0
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Every item answered, none over the slow limit."""
        return not (self.hangs or self.crashes or self.slow)


def items(root: Path, *, big_line: int) -> list[HostileItem]:
    """Make the hostile files under ``root``; the requests that use them."""
    files = root / "hostile"
    files.mkdir()
    fifo = files / "fifo"
    os.mkfifo(fifo)
    sock_path = files / "socket"
    with contextlib.suppress(OSError):
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(sock_path))
        server.close()  # the socket file stays
    sparse = files / "sparse.bin"
    with open(sparse, "wb") as handle:
        handle.truncate(2 * GIB)
    line = files / "one-line.txt"
    with open(line, "wb") as handle:
        chunk = b"x" * (1 << 20)
        for _ in range(big_line // len(chunk)):
            handle.write(chunk)
        handle.write(b"x" * (big_line % len(chunk)) + b"\n")
    (files / "dir").mkdir()
    os.symlink("loop-b", files / "loop-a")
    os.symlink("loop-a", files / "loop-b")
    os.symlink("self", files / "self")
    glob_dir = files / "globs"
    glob_dir.mkdir()
    (glob_dir / ("a" * 40)).write_text("x\n")
    (files / "regex.txt").write_text("a" * 40 + "!\n" + "a" * 26 + "\n")
    grep_tree = root / "grep-tree"
    grep_tree.mkdir()
    os.mkfifo(grep_tree / "fifo")
    (grep_tree / "a.txt").write_text("needle\n")

    def read(name: str, path: Path | str, **extra: Any) -> HostileItem:
        return HostileItem(name, "Read", {"file_path": str(path), **extra})

    found = [
        read(f"device {device}", device)
        for device in (
            "/dev/zero",
            "/dev/random",
            "/dev/urandom",
            "/dev/full",
            "/dev/stdin",
            "/dev/tty",
            "/dev/fd/0",
            "/dev/null",
        )
    ]
    found += [
        read("fifo without a writer", fifo),
        read("unix socket", sock_path),
        read("sparse 2 GiB", sparse),
        read("sparse 2 GiB, offset", sparse, offset=10),
        read("sparse 2 GiB, limit", sparse, limit=5),
        read("/proc/self/environ", "/proc/self/environ"),
        read("/proc/self/maps", "/proc/self/maps"),
        read("/proc/self/mem", "/proc/self/mem"),
        read("/proc/kcore", "/proc/kcore"),
        read("/proc/self/fd/0", "/proc/self/fd/0"),
        read("a directory", files / "dir"),
        read("symlink loop", files / "loop-a"),
        read("symlink to itself", files / "self"),
        read(f"{big_line // 1_000_000} MB line, limit 1", line, limit=1),
        HostileItem(
            "glob *a*a*...b over a×40", "Glob", {"pattern": "*a" * 10 + "*b", "path": str(glob_dir)}
        ),
        HostileItem(
            "grep (a+)+$ over a×40",
            "Grep",
            {"pattern": "(a+)+$", "path": str(files / "regex.txt"), "output_mode": "content"},
        ),
        HostileItem(
            "grep (a+)+b over a×26",
            "Grep",
            {"pattern": "(a+)+b", "path": str(files / "regex.txt"), "output_mode": "content"},
        ),
        HostileItem(
            "grep a tree holding a FIFO", "Grep", {"pattern": "needle", "path": str(grep_tree)}
        ),
        HostileItem(
            "glob a tree holding a symlink loop", "Glob", {"pattern": "**/*", "path": str(files)}
        ),
    ]
    return found


def run_hostile(
    impl: str,
    options: ConnectorOptions,
    *,
    big_line: int = 100_000_000,
    slow: float = 2.0,
    engines: tuple[str, ...] = ("",),
) -> HostileFigures:
    """Send every hostile item to ``impl`` and time it; see the module docstring.

    ``engines`` are values of the adapter's ``TOOLSYS_GREP_ENGINE``
    (GREP-ENGINE-1): ``""`` leaves it unset and runs every item; each other
    value runs the Grep items again under that engine.
    """
    figures = HostileFigures(slow_limit=slow)
    box = StressSandbox()
    try:
        requests = items(box.root, big_line=big_line)
        for engine in engines:
            # GREP-ENGINE-1: the engine process's own variable, so one adapter per engine
            adapter = RawAdapter(
                impl, options, env={"TOOLSYS_GREP_ENGINE": engine} if engine else None
            )
            try:
                adapter.start()
                box.begin(adapter, prompt="deny")
                for item in requests:
                    if engine and item.tool != "Grep":
                        continue
                    if not _one(adapter, item, engine, figures) or not adapter.alive():
                        adapter.restart()
                        box.begin(adapter, prompt="deny")
            finally:
                adapter.close()
    finally:
        box.cleanup()
    return figures


def _one(adapter: RawAdapter, item: HostileItem, engine: str, figures: HostileFigures) -> bool:
    """Time one item; False when the adapter must be restarted."""
    name = f"{item.name} [{engine}]" if engine else item.name
    started = time.perf_counter()
    row: dict[str, Any] = {"item": name}
    try:
        answer = adapter.call(item.tool, item.given)
        seconds = time.perf_counter() - started
        size = len(json.dumps(answer))
        result = answer.get("tool_result") or {}
        row |= {"seconds": round(seconds, 3), "answer_bytes": size, "end": "answered"}
        row["is_error"] = bool(result.get("is_error")) if result else None
        figures.max_answer_bytes = max(figures.max_answer_bytes, size)
    except AdapterTimeout:
        seconds = time.perf_counter() - started
        figures.hangs += 1
        row |= {"seconds": round(seconds, 3), "end": "hang"}
        figures.failures.append(f"{name}: no answer within {seconds:.1f} s")
    except AdapterCrash as exc:
        seconds = time.perf_counter() - started
        figures.crashes += 1
        row |= {"seconds": round(seconds, 3), "end": "crash"}
        figures.failures.append(f"{name}: the adapter died: {exc}")
    except AdapterFailure as exc:
        seconds = time.perf_counter() - started
        row |= {"seconds": round(seconds, 3), "end": f"protocol error: {exc}"[:200]}
        figures.failures.append(f"{name}: {exc}"[:300])
        figures.crashes += 1
    figures.max_seconds = max(figures.max_seconds, seconds)
    if seconds > figures.slow_limit and row["end"] == "answered":
        figures.slow += 1
        figures.failures.append(f"{name}: answered in {seconds:.2f} s")
    figures.items.append(row)
    return bool(row["end"] == "answered")
