"""The bench's trace: reproducible, 18% re-reads, each labelled as SPEC.md's dedup sees it."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.instruments.bench.trace import (
    REREAD_KINDS,
    EditStep,
    ReadStep,
    Trace,
    default_tree,
    make_trace,
    snapshot,
)


def _tree(files: int = 30) -> dict[str, str]:
    """Small files, some with many lines so ranged Reads happen."""
    tree: dict[str, str] = {}
    for number in range(files):
        lines = 600 if number % 5 == 0 else 40
        body = "\n".join(f"line {i} of file {number} says something" for i in range(lines))
        tree[f"pkg/mod_{number:02d}.py"] = body + "\n"
    return tree


def test_same_seed_same_trace_other_seed_other_trace() -> None:
    tree = _tree()
    assert make_trace(tree, reads=120, seed=3) == make_trace(tree, reads=120, seed=3)
    assert make_trace(tree, reads=120, seed=3).steps != make_trace(tree, reads=120, seed=4).steps


@pytest.mark.parametrize(("reads", "share"), [(100, 0.18), (300, 0.18), (50, 0.0), (200, 0.5)])
def test_the_share_of_rereads_is_the_one_asked_for(reads: int, share: float) -> None:
    trace = make_trace(_tree(), reads=reads, reread_share=share)
    rereads = sum(trace.count(kind) for kind in REREAD_KINDS)
    assert len(trace.reads) == reads
    assert rereads == round(reads * share)
    assert trace.count("first") == reads - rereads


def test_first_reads_never_repeat_a_range_and_rereads_always_do() -> None:
    trace = make_trace(_tree(), reads=300, seed=1)
    seen: set[tuple[str, int | None, int | None]] = set()
    for step in trace.reads:
        key = (step.path, step.offset, step.limit)
        assert (key in seen) == (step.kind != "first"), step
        seen.add(key)
    assert any(step.offset is not None for step in trace.reads), "no ranged Read at all"


def test_each_reread_is_labelled_as_the_one_record_per_path_state_sees_it() -> None:
    """STATE-RECORD-1: one record per path, the latest; an Edit makes the next Read full."""
    trace = make_trace(_tree(), reads=300, after_edit_share=0.4, seed=2)
    latest: dict[str, tuple[int | None, int | None]] = {}
    edited: set[str] = set()
    for step in trace.steps:
        if isinstance(step, EditStep):
            edited.add(step.path)
            continue
        ranged = (step.offset, step.limit)
        if step.kind == "reread_after_edit":
            assert step.path in edited
        elif step.kind == "reread":
            assert latest[step.path] == ranged
            assert step.path not in edited
        elif step.kind == "reread_other_range":
            assert latest[step.path] != ranged
            assert step.path not in edited
        edited.discard(step.path)
        latest[step.path] = ranged
    assert {trace.count(kind) > 0 for kind in REREAD_KINDS} == {True}


def test_every_edit_replaces_a_string_found_once_and_precedes_its_reread() -> None:
    tree = _tree()
    trace = make_trace(tree, reads=300, after_edit_share=0.5, seed=5)
    current = dict(tree)
    steps = list(trace.steps)
    edits = [index for index, step in enumerate(steps) if isinstance(step, EditStep)]
    assert edits
    for index in edits:
        edit = steps[index]
        assert isinstance(edit, EditStep)
        assert current[edit.path].count(edit.old_string) == 1
        current[edit.path] = current[edit.path].replace(edit.old_string, edit.new_string)
        follower = steps[index + 1]
        assert isinstance(follower, ReadStep)
        assert (follower.path, follower.kind) == (edit.path, "reread_after_edit")


def test_edits_spare_files_whose_whole_read_may_not_pass_the_gate() -> None:
    tree = {"big.py": "x = 'a fairly long unique line number %d'\n" * 2000, **_tree(3)}
    trace = make_trace(tree, reads=200, reread_share=0.4, after_edit_share=1.0, seed=0)
    assert all(step.path != "big.py" for step in trace.steps if isinstance(step, EditStep))


def test_the_tree_is_written_byte_for_byte(tmp_path: Path) -> None:
    tree = {"a/b.py": "caf\u00e9\r\nline\n", "c.md": "# title\n"}
    Trace(files=tree, steps=(), seed=0).materialize(tmp_path)
    assert (tmp_path / "a" / "b.py").read_bytes() == "caf\u00e9\r\nline\n".encode()
    assert snapshot([tmp_path], base=tmp_path) == tree


def test_snapshot_skips_caches_hidden_files_and_non_utf8(tmp_path: Path) -> None:
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "x.py").write_text("cached")
    (tmp_path / ".hidden.py").write_text("hidden")
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    (tmp_path / "kept.py").write_text("kept")
    assert snapshot([tmp_path], base=tmp_path) == {"kept.py": "kept"}


def test_the_default_tree_is_this_projects_code() -> None:
    tree = default_tree()
    assert "reference/tools/read/tool.py" in tree
    assert "conformance/instruments/bench/trace.py" in tree
    assert all(path.endswith((".py", ".md")) for path in tree)
    assert not any(path.startswith("conformance/scenarios/") for path in tree)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="no file"):
        make_trace({})
    with pytest.raises(ValueError, match="shares"):
        make_trace(_tree(), reread_share=1.0)
    with pytest.raises(ValueError, match="too small"):
        make_trace({"one.py": "x\n"}, reads=10, reread_share=0.0)
