"""``toolconf bench``: every measurement, for every implementation, in one run.

Implementations are measured one after the other on the same machine, each
through its own connector and in its own sandbox, over the same files and the
same trace. One that cannot be started or answers badly is reported with the
reason and the others are still measured.
"""

from __future__ import annotations

import datetime
import os
import platform
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.errors import AdapterFailure
from conformance.instruments.bench import measure
from conformance.instruments.bench.session import BenchSession
from conformance.instruments.bench.trace import (
    AFTER_EDIT_SHARE,
    REREAD_KINDS,
    SEED_REREAD_SHARE,
    Trace,
    default_tree,
    make_trace,
)
from conformance.peers.registry import connect
from conformance.wire.connector import ConnectorOptions

REFERENCE_LABEL = "reference"


def reference_spec() -> str:
    """The reference engine behind the same stdio transport as any other adapter."""
    return f"stdio:{sys.executable} -m reference.adapter"


@dataclass(slots=True)
class ImplementationRun:
    """Everything measured for one implementation; ``failure`` says why a part is missing."""

    label: str
    spec: str
    name: str = "?"
    dedup: list[measure.DedupPoint] = field(default_factory=list)
    floor_seconds: float | None = None
    size_cap: list[measure.CapPoint] = field(default_factory=list)
    size_cap_note: str | None = None
    gate: list[measure.GatePoint] = field(default_factory=list)
    replay_on: measure.ReplayTotals | None = None
    replay_off: measure.ReplayTotals | None = None
    failure: str | None = None


@dataclass(frozen=True, slots=True)
class TraceSummary:
    """What the replayed trace holds, for the report."""

    files: int
    tree_bytes: int
    reads: int
    rereads: int
    rereads_unchanged: int  # dedup may answer these with the stub
    rereads_other_range: int
    rereads_after_edit: int
    edits: int
    seed: int

    @classmethod
    def of(cls, trace: Trace) -> TraceSummary:
        return cls(
            files=len(trace.files),
            tree_bytes=sum(len(text.encode("utf-8")) for text in trace.files.values()),
            reads=len(trace.reads),
            rereads=sum(trace.count(kind) for kind in REREAD_KINDS),
            rereads_unchanged=trace.count("reread"),
            rereads_other_range=trace.count("reread_other_range"),
            rereads_after_edit=trace.count("reread_after_edit"),
            edits=len(trace.steps) - len(trace.reads),
            seed=trace.seed,
        )


@dataclass(slots=True)
class BenchRun:
    """One ``toolconf bench`` run: the machine, the settings, every implementation."""

    started: str
    machine: dict[str, Any]
    rounds: int
    trace: TraceSummary
    implementations: list[ImplementationRun]


def machine() -> dict[str, Any]:
    """Where the figures come from: enough to judge whether two runs compare."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {
        "cpu": model,
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "load_average_1min": load,
    }


def bench(
    specs: Sequence[tuple[str, str]],
    *,
    rounds: int = 15,
    reads: int = 1000,
    seed: int = 0,
    reread_share: float = SEED_REREAD_SHARE,
    after_edit_share: float = AFTER_EDIT_SHARE,
    timeout: float = 60.0,
    say: Callable[[str], None] = print,
) -> BenchRun:
    """Measure each ``(label, connector spec)`` in turn; never raises for an implementation.

    Raises:
        ValueError: trace shares outside [0, 1).
    """
    trace = make_trace(
        default_tree(),
        reads=reads,
        reread_share=reread_share,
        after_edit_share=after_edit_share,
        seed=seed,
    )
    run = BenchRun(
        started=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        machine=machine(),
        rounds=rounds,
        trace=TraceSummary.of(trace),
        implementations=[],
    )
    for label, spec in specs:
        say(f"bench: measuring {label} ({spec})")
        run.implementations.append(
            _measure_one(label, spec, trace=trace, rounds=rounds, timeout=timeout, say=say)
        )
    return run


def _measure_one(
    label: str,
    spec: str,
    *,
    trace: Trace,
    rounds: int,
    timeout: float,
    say: Callable[[str], None],
) -> ImplementationRun:
    result = ImplementationRun(label=label, spec=spec)
    connector = connect(spec, ConnectorOptions(timeout=timeout, hello_timeout=max(timeout, 30.0)))
    try:
        result.name = connector.start().name
        with tempfile.TemporaryDirectory(prefix="toolconf-bench-") as base:
            root, session_dir = Path(base, "root"), Path(base, "session")
            root.mkdir()
            session_dir.mkdir()
            session = BenchSession(connector, root, session_dir)
            say("  dedup against file size")
            result.dedup, result.floor_seconds = measure.dedup_by_size(session, rounds)
            if measure.sparse_supported(root):
                say("  over-cap refusal against file size (sparse files)")
                result.size_cap = measure.size_cap(session, rounds)
            else:
                result.size_cap_note = "the filesystem cannot make sparse files: not measured"
            say("  the token gate over the corpus")
            result.gate = measure.gate(session, rounds)
            say(f"  trace replay: {len(trace.reads)} Reads, dedup on then off")
            result.replay_on = measure.replay(session, trace, dedup=True)
            result.replay_off = measure.replay(session, trace, dedup=False)
    except (AdapterFailure, measure.BenchFailure) as exc:
        result.failure = f"{type(exc).__name__}: {exc}"
        if stderr := connector.take_stderr().strip():
            result.failure += f"\n{stderr[-2000:]}"
        say(f"  failed: {result.failure}")
    finally:
        connector.close()
    return result
