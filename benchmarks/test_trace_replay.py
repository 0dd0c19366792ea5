"""Seed 000's claim, replayed: about 18% of Reads are re-reads, and dedup answers them with a stub.

The trace (``conformance.instruments.bench.trace``) reads this project's own sources, 1,000
Reads with 18% re-reads, some right after an Edit. It is replayed through the
whole pipeline of the reference engine in process, with dedup on and off; each
benchmark records in ``extra_info`` the bytes and tokens the model received,
so ``--benchmark-json`` holds the saving beside the time.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from conformance.instruments.bench import measure
from conformance.instruments.bench.session import BenchSession, count_tokens
from conformance.instruments.bench.trace import REREAD_KINDS, Trace, default_tree, make_trace
from conformance.peers.registry import connect
from reference.tools.read.tool import DEDUP_STUB

READS = 1000


@pytest.fixture(scope="module")
def trace() -> Trace:
    return make_trace(default_tree(), reads=READS, seed=0)


@pytest.fixture
def session(tmp_path: Path) -> Iterator[BenchSession]:
    connector = connect("direct")
    connector.start()
    (tmp_path / "root").mkdir()
    (tmp_path / "session").mkdir()
    yield BenchSession(connector, tmp_path / "root", tmp_path / "session")
    connector.close()


@pytest.mark.parametrize("dedup", [True, False], ids=["dedup-on", "dedup-off"])
def test_trace_replay(
    benchmark: BenchmarkFixture, trace: Trace, session: BenchSession, dedup: bool
) -> None:
    """READ-DEDUP-1/3/4 over a whole trace: the stub for every unchanged re-read, nothing else.

    Timed: the calls, and writing the tree afresh each round; sizing the answers is not.
    """
    run = benchmark.pedantic(
        measure.run_trace, args=(session, trace), kwargs={"dedup": dedup}, rounds=3, iterations=1
    )
    totals = measure.tally(run)
    assert totals.reads == READS
    assert (totals.failed_reads, totals.failed_edits) == (0, 0)
    assert totals.stubs == (trace.count("reread") if dedup else 0)
    benchmark.extra_info.update(
        reads=totals.reads,
        rereads=sum(trace.count(kind) for kind in REREAD_KINDS),
        stubs=totals.stubs,
        bytes=totals.bytes,
        tokens=totals.tokens,
        tokens_by_kind=totals.tokens_by_kind,
        calls_seconds=round(run.seconds, 4),
    )


def test_dedup_saves_the_tokens_of_the_unchanged_rereads(
    benchmark: BenchmarkFixture, trace: Trace, session: BenchSession
) -> None:
    """The saving itself: what dedup on returns against dedup off, over the same trace."""

    def both() -> tuple[measure.TraceRun, measure.TraceRun]:
        on = measure.run_trace(session, trace, dedup=True)
        return on, measure.run_trace(session, trace, dedup=False)

    runs = benchmark.pedantic(both, rounds=1, iterations=1)
    on, off = measure.tally(runs[0]), measure.tally(runs[1])
    saved = (off.tokens - on.tokens) / off.tokens
    for kind in ("first", "reread_other_range", "reread_after_edit"):  # content either way
        assert on.tokens_by_kind.get(kind, 0) == off.tokens_by_kind.get(kind, 0)
    assert on.tokens_by_kind.get("reread", 0) == on.stubs * count_tokens(DEDUP_STUB)
    assert 0 < saved < 1
    benchmark.extra_info.update(
        tokens_on=on.tokens,
        tokens_off=off.tokens,
        tokens_saved_share=round(saved, 4),
        bytes_saved_share=round((off.bytes - on.bytes) / off.bytes, 4),
        seconds_on=round(on.seconds, 4),
        seconds_off=round(off.seconds, 4),
    )
