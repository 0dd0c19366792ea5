"""toolconf bench's measurements, against the reference in process and the fake adapter."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import FAKE

from conformance.instruments.bench import measure
from conformance.instruments.bench.session import Answer, BenchSession, count_tokens, result_text
from conformance.instruments.bench.trace import make_trace
from conformance.peers.registry import connect

DEDUP_STUB_BYTES = 156  # READ-DEDUP-1's stub, UTF-8 (its dash is three bytes)


def _session(spec: str, tmp_path: Path) -> Iterator[BenchSession]:
    connector = connect(spec)
    connector.start()
    root, session_dir = tmp_path / "root", tmp_path / "session"
    root.mkdir()
    session_dir.mkdir()
    yield BenchSession(connector, root, session_dir)
    connector.close()


@pytest.fixture
def reference(tmp_path: Path) -> Iterator[BenchSession]:
    yield from _session("direct", tmp_path)


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[BenchSession]:
    yield from _session(FAKE, tmp_path)


def test_dedup_by_size_times_full_reads_and_hits_and_sizes_the_stub(
    reference: BenchSession,
) -> None:
    points, floor = measure.dedup_by_size(reference, rounds=2, sizes=(1024, 16_384))
    assert [p.size for p in points] == [1024, 16_384]
    for point in points:
        assert point.hit_seconds is not None
        assert point.hit_seconds > 0
        assert point.full_seconds > 0
        assert (point.stub_bytes, point.stub_tokens) == (
            DEDUP_STUB_BYTES,
            count_tokens(
                "File unchanged since last read. The content from the earlier Read "
                "tool_result in this conversation is still current \u2014 refer to that "
                "instead of re-reading."
            ),
        )
    assert points[1].full_tokens > 4 * points[0].full_tokens
    assert floor > 0


def test_an_implementation_without_dedup_has_no_hit_figure(fake: BenchSession) -> None:
    points, _ = measure.dedup_by_size(fake, rounds=1, sizes=(1024,))
    assert (points[0].hit_seconds, points[0].stub_bytes) == (None, None)


@pytest.mark.parametrize(("stage", "dedup"), [("call", False), ("validate", False), ("done", True)])
def test_a_refused_or_stubbed_answer_is_never_taken_as_a_full_read(stage: str, dedup: bool) -> None:
    """A bench figure is never taken from a call that did not return the content."""
    answer = Answer(seconds=0.0, stage=stage, error_name="E", dedup=dedup, text="")
    with pytest.raises(measure.BenchFailure, match="expected a full answer"):
        measure._expect_done("full Read")(answer)


def test_the_size_cap_refuses_sparse_files_of_any_size_and_they_are_removed(
    reference: BenchSession,
) -> None:
    assert measure.sparse_supported(reference.root)
    points = measure.size_cap(reference, rounds=2, sizes=(1 << 20, 64 << 20))
    assert {p.error_name for p in points} == {measure.SIZE_ERROR}
    assert all(0 < p.result_bytes < 400 for p in points)
    assert not list(reference.root.glob("sparse-*"))


def test_the_gate_returns_small_files_and_refuses_big_ones_in_a_few_bytes(
    reference: BenchSession,
) -> None:
    points = measure.gate(reference, rounds=1, kinds=("source", "cjk"), sizes=(8192, 262_144))
    by_key = {(p.kind, p.size): p for p in points}
    assert by_key["source", 8192].stage == "done"
    assert by_key["source", 8192].result_tokens > by_key["source", 8192].text_tokens
    for kind in ("source", "cjk"):
        refused = by_key[kind, 262_144]
        assert (refused.stage, refused.error_name) == ("call", "MaxFileReadTokenExceededError")
        assert refused.result_tokens < 100 < measure.GATE_CAP < refused.text_tokens


def test_a_replay_with_dedup_stubs_exactly_the_unchanged_rereads(
    reference: BenchSession,
) -> None:
    """READ-DEDUP-1/3/4 over a whole trace: the stub for ``reread``, content for the rest."""
    tree = {
        f"src/m{n}.py": "".join(
            f"value_{n}_{i} = {i} * 2\n" for i in range(50 + 300 * (n % 4 == 0))
        )
        for n in range(12)
    }
    trace = make_trace(tree, reads=80, after_edit_share=0.4, seed=7)
    on = measure.replay(reference, trace, dedup=True)
    off = measure.replay(reference, trace, dedup=False)
    assert (on.reads, off.reads) == (80, 80)
    assert (on.failed_reads, on.failed_edits, off.failed_reads, off.failed_edits) == (0, 0, 0, 0)
    assert on.stubs == trace.count("reread") > 0
    assert off.stubs == 0
    assert on.tokens < off.tokens
    assert on.tokens_by_kind["first"] == off.tokens_by_kind["first"]
    assert on.tokens_by_kind["reread_after_edit"] == off.tokens_by_kind["reread_after_edit"]
    assert on.tokens_by_kind["reread"] < off.tokens_by_kind["reread"]
    assert (reference.root / "trace-dedup-on" / "src" / "m0.py").exists()


def test_result_text_reads_strings_text_blocks_and_image_data() -> None:
    assert result_text({"content": "plain"}) == "plain"
    blocks = [
        {"type": "text", "text": "a"},
        {"type": "image", "source": {"type": "base64", "data": "QUJD"}},
        {"type": "text", "text": "b"},
        "not a block",
    ]
    assert result_text({"content": blocks}) == "aQUJDb"
    assert result_text({}) == ""
