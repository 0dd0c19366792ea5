"""What ``toolconf bench`` measures in one implementation, through protocol v1.

Four measurements, each in a fresh session over files the bench writes itself:

- ``dedup_by_size``: a full Read (dedup off by READ-DEDUP-4's killswitch)
  against a dedup hit, for files of 1 KiB to 256 KiB, and the floor a call can
  reach (a Read of a missing file: one round trip and one failed ``stat``);
- ``size_cap``: the whole-file Read of sparse files of 1 MiB to 1 GiB (4 KiB
  of source code, then a hole), which
  READ-SIZE-1 refuses from ``stat`` alone, so its cost must not grow;
- ``gate``: Reads of each corpus kind at three sizes under the default
  25,000-token cap (TOK-GATE-1/2), with what each answer costs the model and
  what the file's text would have cost;
- ``replay``: a ``trace.Trace`` replayed with dedup on and off.

Every timed figure is the median of ``rounds`` calls after ``WARMUP`` untimed
ones. A Read shows the whole file (``limit`` ``WHOLE``) wherever the point is
cost against size, so the 2,000-line default does not cut a large file short.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Final

from conformance.instruments.bench import corpus
from conformance.instruments.bench.session import Answer, BenchSession, count_tokens
from conformance.instruments.bench.trace import EditStep, ReadKind, Trace

WARMUP: Final = 2
WHOLE: Final = 1_000_000  # a limit no bench file reaches
UNCAPPED: Final = {"fileReadMaxOutputTokens": 10**9}  # TOK-CAP-1
DEDUP_OFF: Final = {"readDedupKillswitch": True}  # READ-DEDUP-4
DEDUP_SIZES: Final = (1024, 4096, 16_384, 65_536, 100_000, 262_144)
CAP_SIZES: Final = (1 << 20, 16 << 20, 256 << 20, 1 << 30)
SPARSE_HEAD: Final = 4096  # bytes of text before the hole
GATE_SIZES: Final = (8 * 1024, 64 * 1024, 256 * 1024)
GATE_CAP: Final = 25_000  # TOK-CAP-1's default
SIZE_ERROR: Final = "MaxFileReadSizeExceededError"


class BenchFailure(Exception):
    """An answer the measurement cannot use (e.g. a full Read that failed)."""


@dataclass(frozen=True, slots=True)
class DedupPoint:
    """One file size: full Read against dedup hit, and what each returns."""

    size: int
    full_seconds: float
    hit_seconds: float | None  # None: the implementation never answered with the stub
    full_bytes: int
    full_tokens: int
    stub_bytes: int | None
    stub_tokens: int | None


@dataclass(frozen=True, slots=True)
class CapPoint:
    """The refusal of one over-cap file."""

    size: int
    seconds: float
    error_name: str | None
    result_bytes: int


@dataclass(frozen=True, slots=True)
class GatePoint:
    """One corpus file through the token gate."""

    kind: str
    size: int
    seconds: float
    stage: str
    error_name: str | None
    result_bytes: int
    result_tokens: int
    text_tokens: int  # the file's own text, counted by the bench


@dataclass(slots=True)
class ReplayTotals:
    """A trace replayed once: what the model received, and how long it took."""

    dedup: bool
    seconds: float = 0.0
    reads: int = 0
    stubs: int = 0
    failed_reads: int = 0
    failed_edits: int = 0
    bytes: int = 0
    tokens: int = 0
    tokens_by_kind: dict[str, int] = field(default_factory=dict)
    bytes_by_kind: dict[str, int] = field(default_factory=dict)
    seconds_by_kind: dict[str, float] = field(default_factory=dict)


def _median(samples: Sequence[float]) -> float:
    return statistics.median(samples)


def _timed(rounds: int, call: Callable[[], Answer], check: Callable[[Answer], None]) -> float:
    """The median of ``rounds`` calls after the warm-up; every answer is checked."""
    for _ in range(WARMUP):
        check(call())
    samples: list[float] = []
    for _ in range(rounds):
        answer = call()
        check(answer)
        samples.append(answer.seconds)
    return _median(samples)


def _expect_done(what: str) -> Callable[[Answer], None]:
    def check(answer: Answer) -> None:
        if answer.stage != "done" or answer.dedup:
            raise BenchFailure(
                f"{what}: expected a full answer, got stage {answer.stage!r}"
                f" ({answer.error_name}), dedup {answer.dedup}"
            )

    return check


def _write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


def dedup_by_size(
    session: BenchSession, rounds: int, sizes: Sequence[int] = DEDUP_SIZES
) -> tuple[list[DedupPoint], float]:
    """Full Read against dedup hit per size, and the floor (a missing file's Read)."""
    files = {
        size: _write(session.root / f"dedup-{size}.py", corpus.generate("source", size))
        for size in sizes
    }
    session.begin({**UNCAPPED, **DEDUP_OFF})
    full: dict[int, float] = {}
    for size, path in files.items():
        full[size] = _timed(
            rounds, partial(session.read, path, limit=WHOLE), _expect_done(f"full Read {size}")
        )
    session.end()

    session.begin(UNCAPPED)
    points: list[DedupPoint] = []
    missing = session.root / "no-such-file.py"
    floors: list[float] = []
    for size, path in files.items():
        first = session.read(path, limit=WHOLE)
        _expect_done(f"first Read {size}")(first)
        answers: list[Answer] = []
        for round_number in range(WARMUP + rounds):  # hits and floors taken turn about
            hit, floor_answer = session.read(path, limit=WHOLE), session.read(missing)
            if round_number >= WARMUP:
                answers.append(hit)
                floors.append(floor_answer.seconds)
        hits = all(answer.dedup and answer.stage == "done" for answer in answers)
        stub = answers[-1]
        points.append(
            DedupPoint(
                size=size,
                full_seconds=full[size],
                hit_seconds=_median([a.seconds for a in answers]) if hits else None,
                full_bytes=first.bytes,
                full_tokens=first.tokens,
                stub_bytes=stub.bytes if hits else None,
                stub_tokens=stub.tokens if hits else None,
            )
        )
    floor = _median(floors)
    session.end()
    return points, floor


def size_cap(
    session: BenchSession, rounds: int, sizes: Sequence[int] = CAP_SIZES
) -> list[CapPoint]:
    """READ-SIZE-1: whole-file Reads of sparse files over the 256 KiB cap."""
    files: dict[int, Path] = {}
    head = corpus.generate("source", SPARSE_HEAD).encode("utf-8")
    for size in sizes:
        path = session.root / f"sparse-{size}.py"
        with open(path, "wb") as handle:
            handle.write(head)  # a text file, whatever an implementation looks at first
            handle.truncate(size)
        files[size] = path
    session.begin()
    points: list[CapPoint] = []
    for size, path in files.items():
        answers: list[Answer] = []
        seconds = _timed(rounds, partial(session.read, path), answers.append)
        points.append(
            CapPoint(
                size=size,
                seconds=seconds,
                error_name=answers[-1].error_name,
                result_bytes=answers[-1].bytes,
            )
        )
    session.end()
    for path in files.values():
        path.unlink()
    return points


def gate(
    session: BenchSession,
    rounds: int,
    kinds: Sequence[str] = corpus.KINDS,
    sizes: Sequence[int] = GATE_SIZES,
) -> list[GatePoint]:
    """TOK-GATE-1/2: each kind at each size, whole, under the default cap, dedup off."""
    files = {
        (kind, size): _write(
            session.root / f"gate-{kind}-{size}.txt", corpus.generate(kind, size, seed=1)
        )
        for kind in kinds
        for size in sizes
    }
    session.begin({**DEDUP_OFF, "fileReadMaxOutputTokens": GATE_CAP})
    points: list[GatePoint] = []
    for (kind, size), path in files.items():
        answers: list[Answer] = []
        seconds = _timed(rounds, partial(session.read, path, limit=WHOLE), answers.append)
        last = answers[-1]
        points.append(
            GatePoint(
                kind=kind,
                size=size,
                seconds=seconds,
                stage=last.stage,
                error_name=last.error_name,
                result_bytes=last.bytes,
                result_tokens=last.tokens,
                text_tokens=count_tokens(path.read_text(encoding="utf-8")),
            )
        )
    session.end()
    return points


@dataclass(frozen=True, slots=True)
class TraceRun:
    """A trace's calls as made: each Read's answer, and the clock around all the calls."""

    dedup: bool
    seconds: float
    answers: tuple[tuple[ReadKind, Answer], ...]
    failed_edits: int


def run_trace(session: BenchSession, trace: Trace, *, dedup: bool) -> TraceRun:
    """Make ``trace``'s calls over a fresh copy of its tree; dedup on or off (READ-DEDUP-4).

    Only the calls are timed: writing the tree and sizing the answers are not.
    """
    tree = session.root / ("trace-dedup-on" if dedup else "trace-dedup-off")
    trace.materialize(tree)
    session.begin({} if dedup else DEDUP_OFF)
    answers: list[tuple[ReadKind, Answer]] = []
    failed_edits = 0
    started = time.perf_counter_ns()
    for step in trace.steps:
        target = tree / step.path
        if isinstance(step, EditStep):
            edit = session.call(
                "Edit",
                {
                    "file_path": str(target),
                    "old_string": step.old_string,
                    "new_string": step.new_string,
                },
            )
            failed_edits += edit.stage != "done"
            continue
        ranges = {
            name: value
            for name, value in (("offset", step.offset), ("limit", step.limit))
            if value is not None
        }
        answers.append((step.kind, session.read(target, **ranges)))
    seconds = (time.perf_counter_ns() - started) / 1e9
    session.end()
    return TraceRun(dedup, seconds, tuple(answers), failed_edits)


def tally(run: TraceRun) -> ReplayTotals:
    """What the model received over a trace run: bytes and cl100k tokens, per kind of Read."""
    totals = ReplayTotals(dedup=run.dedup, seconds=run.seconds, failed_edits=run.failed_edits)
    for kind, answer in run.answers:
        size, tokens = answer.bytes, answer.tokens
        totals.reads += 1
        totals.stubs += answer.dedup
        totals.failed_reads += answer.stage != "done"
        totals.bytes += size
        totals.tokens += tokens
        totals.bytes_by_kind[kind] = totals.bytes_by_kind.get(kind, 0) + size
        totals.tokens_by_kind[kind] = totals.tokens_by_kind.get(kind, 0) + tokens
        totals.seconds_by_kind[kind] = totals.seconds_by_kind.get(kind, 0.0) + answer.seconds
    return totals


def replay(session: BenchSession, trace: Trace, *, dedup: bool) -> ReplayTotals:
    """``run_trace`` then ``tally``."""
    return tally(run_trace(session, trace, dedup=dedup))


def sparse_supported(directory: Path) -> bool:
    """Whether ``directory``'s filesystem stores a 16 MiB hole without 16 MiB of blocks."""
    probe = directory / ".sparse-probe"
    with open(probe, "wb") as handle:
        handle.truncate(16 << 20)
    try:
        return os.stat(probe).st_blocks * 512 < (1 << 20)
    finally:
        probe.unlink()
