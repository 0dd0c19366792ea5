"""The read-file state and the staleness rule (SPEC.md section 9)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from refsupport import Begin, Call, Unchanged, assert_done, assert_refused, record_of

from reference.engine import Engine
from reference.filestate import ReadFileState, ReadRecord, is_stale, modified_since, needs_text
from reference.session import Session


def record(text: str = "old", mtime_ns: int = 100) -> ReadRecord:
    return ReadRecord(
        text=text,
        mtime_ns=mtime_ns,
        size=len(text),
        offset=1,
        limit=2000,
        partial=False,
        source="read",
    )


def test_record_holds_the_fields_spec_lists() -> None:
    """SPEC: STATE-RECORD-1"""
    names = {field.name for field in dataclasses.fields(ReadRecord)}
    assert names == {"text", "mtime_ns", "size", "offset", "limit", "partial", "source", "turn"}


@pytest.mark.parametrize(
    ("mtime_ns", "current", "stale"),
    [
        (100, "old", False),
        (100, "changed", False),  # same mtime: not stale, whatever the text
        (200, "old", False),  # touched: identical text is not stale in call()
        (200, "changed", True),
        (50, "changed", False),  # an older mtime is not later: the seeds' >
    ],
)
def test_stale_means_mtime_later_and_text_differs(mtime_ns: int, current: str, stale: bool) -> None:
    """SPEC: STATE-STALE-1"""
    assert is_stale(record(), mtime_ns=mtime_ns, text=current) is stale


def test_text_is_needed_only_when_the_mtime_is_later() -> None:
    """SPEC: STATE-STALE-1"""
    assert needs_text(record(), mtime_ns=100) is False
    assert needs_text(record(), mtime_ns=99) is False
    assert needs_text(record(), mtime_ns=101) is True


def test_validate_input_goes_by_a_later_mtime_alone() -> None:
    """SPEC: STATE-STALE-1, STATE-STALE-2"""
    assert modified_since(record(), mtime_ns=101) is True
    assert modified_since(record(), mtime_ns=100) is False
    assert modified_since(record(), mtime_ns=50) is False


def test_state_keeps_one_record_per_path_and_replaces_it() -> None:
    """SPEC: STATE-UPDATE-1"""
    state = ReadFileState()
    first, second = record("a"), record("b")
    state.set("/x", first)
    state.set("/x", second)
    assert (state.get("/x"), state.get("/y"), len(state)) == (second, None, 1)


def test_a_new_session_starts_with_an_empty_state(tmp_path: Path) -> None:
    """SPEC: STATE-SESSION-1"""
    assert len(Session.create(root=str(tmp_path), session_dir=str(tmp_path)).read_state) == 0


def test_beginning_a_new_session_forgets_what_was_read(
    tmp_path: Path, begin: Begin, engine: Engine, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: STATE-SESSION-1"""
    path = tmp_path / "a.txt"
    path.write_bytes(b"seen\n")
    assert_done(call("Read", file_path=str(path)))
    assert engine.handle({"seq": 90, "cmd": "end"}) == {"seq": 90, "ok": True}
    begin()
    assert record_of(engine, path) is None
    with unchanged():
        response = call("Write", file_path=str(path), content="new\n")
    assert_refused(response, stage="validate", code=2, name="FileNotReadError")


def test_a_read_in_one_session_does_not_let_another_session_write(
    tmp_path: Path, session_dir: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: STATE-SESSION-1"""
    path = tmp_path / "a.txt"
    path.write_bytes(b"seen\n")
    assert_done(call("Read", file_path=str(path)))
    other = Engine()
    spec = {"root": str(tmp_path), "prompt": "allow", "session_dir": str(session_dir)}
    assert other.handle({"seq": 1, "cmd": "begin", "session": spec}) == {"seq": 1, "ok": True}
    tool_use = {
        "id": "t",
        "name": "Edit",
        "input": {"file_path": str(path), "old_string": "seen", "new_string": "x"},
    }
    with unchanged():
        response = other.handle({"seq": 2, "cmd": "call", "tool_use": tool_use})
    assert_refused(response, stage="validate", code=6, name="FileNotReadError")
