"""The rules Write, Edit and NotebookEdit share, once for each of the three tools.

Staleness (STATE-STALE-1 and -2), the file history (HIST-1) and the record a
change leaves (STATE-UPDATE-1) are the same rules for every tool that changes
a file. Each tool is one row of ``FAMILY``: a file it can change, the input
that changes it, what another writer puts there instead, its stale error, and
the bytes and record the change leaves. Rules only one tool has stay in that
tool's own test module.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from refsupport import (
    Call,
    FileFacts,
    Unchanged,
    Use,
    assert_done,
    assert_refused,
    error_text,
    file_facts,
    modify_externally,
    record_of,
    touch_forward,
    with_hook_after_validate,
)

from reference.engine import Engine
from reference.tool import Tool, ToolUseContext
from reference.tools.edit import EDIT_TOOL
from reference.tools.notebook_edit import NOTEBOOK_EDIT_TOOL
from reference.tools.read.tool import READ_TOOL
from reference.tools.write import WRITE_TOOL

MODIFIED_SINCE_READ = (
    "File has been modified since read, either by the user or by a linter. "
    "Read it again before attempting to write it."
)
TEN_SECONDS_BACK_NS = -10_000_000_000


def one_cell_notebook(source: str) -> bytes:
    """An nbformat 4.5 notebook of one markdown cell ``m1``, laid out as NBEDIT-WRITE-1
    writes it (indented by one, keys in their order, no final newline)."""
    cell = {"cell_type": "markdown", "id": "m1", "metadata": {}, "source": source}
    doc = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(doc, indent=1).encode()


@dataclasses.dataclass(frozen=True, kw_only=True)
class Member:
    """One tool of the write family, as the shared rules need it."""

    tool: Tool
    file_name: str
    path_key: str
    before: bytes
    """A file the tool can change."""
    change: Mapping[str, Any]
    """The input, less the path, that changes ``before``."""
    after: bytes
    """The bytes ``change`` leaves on ``before``."""
    theirs: bytes
    """What another writer puts there instead: a file ``change`` still applies to."""
    theirs_after: bytes
    """The bytes ``change`` leaves on ``theirs``."""
    stale_code: int
    stale_name: str
    source: str
    """The record's ``source`` after the change (STATE-RECORD-1)."""
    create: Mapping[str, Any] | None
    """An input that creates a missing file, for a tool that can."""

    def input(self, path: Path, given: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return {self.path_key: str(path), **(self.change if given is None else given)}


WRITE = Member(
    tool=WRITE_TOOL,
    file_name="a.txt",
    path_key="file_path",
    before=b"old\r\n",
    change={"content": "new\n"},
    after=b"new\n",
    theirs=b"theirs\n",
    theirs_after=b"new\n",
    stale_code=3,
    stale_name="FileModifiedSinceReadError",
    source="write",
    create={"content": "x"},
)
EDIT = Member(
    tool=EDIT_TOOL,
    file_name="a.txt",
    path_key="file_path",
    before=b"one\r\ntwo\r\n",
    change={"old_string": "two", "new_string": "2"},
    after=b"one\r\n2\r\n",
    theirs=b"zero\r\ntwo\r\n",
    theirs_after=b"zero\r\n2\r\n",
    stale_code=7,
    stale_name="FileModifiedSinceReadError",
    source="edit",
    create={"old_string": "", "new_string": "x"},
)
NOTEBOOK_EDIT = Member(
    tool=NOTEBOOK_EDIT_TOOL,
    file_name="nb.ipynb",
    path_key="notebook_path",
    before=one_cell_notebook("old"),
    change={"cell_id": "m1", "new_source": "new"},
    after=one_cell_notebook("new"),
    theirs=one_cell_notebook("theirs"),
    theirs_after=one_cell_notebook("new"),
    stale_code=9,
    stale_name="FileModifiedSinceReadError",
    source="edit",
    create=None,  # NBEDIT-VALIDATE-1 refuses a missing notebook
)
MEMBERS = (WRITE, EDIT, NOTEBOOK_EDIT)
FAMILY = pytest.mark.parametrize("member", MEMBERS, ids=lambda m: m.tool.name)
CREATORS = pytest.mark.parametrize(
    "member", [m for m in MEMBERS if m.create is not None], ids=lambda m: m.tool.name
)


def read_file(member: Member, tmp_path: Path, call: Call) -> Path:
    """``member.before`` on disk, read in full."""
    path = tmp_path / member.file_name
    path.write_bytes(member.before)
    assert_done(call("Read", file_path=str(path)))
    return path


def read_through(member: Member, tmp_path: Path, use: Use) -> Path:
    """``member.before`` on disk, read in full in the ``ctx`` session."""
    path = tmp_path / member.file_name
    path.write_bytes(member.before)
    assert use(READ_TOOL, file_path=str(path)).stage == "done"
    return path


# --- staleness before the call ----------------------------------------------------------


@FAMILY
def test_a_file_modified_since_read_is_refused_with_the_tools_code(
    member: Member, tmp_path: Path, engine: Engine, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: STATE-STALE-1, STATE-STALE-2, STATE-UPDATE-2
    SPEC: WRITE-VALIDATE-1, EDIT-VALIDATE-1, NBEDIT-VALIDATE-1
    """
    path = read_file(member, tmp_path, call)
    before = record_of(engine, path)
    modify_externally(path, member.theirs)
    with unchanged():
        response = call(member.tool.name, **member.input(path))
    assert_refused(response, stage="validate", code=member.stale_code, name=member.stale_name)
    assert error_text(response) == MODIFIED_SINCE_READ
    assert path.read_bytes() == member.theirs
    assert record_of(engine, path) is before


@FAMILY
def test_a_file_restored_with_an_older_mtime_is_not_stale(
    member: Member, tmp_path: Path, call: Call
) -> None:
    """SPEC: STATE-STALE-1"""
    path = read_file(member, tmp_path, call)
    modify_externally(path, member.theirs, shift_ns=TEN_SECONDS_BACK_NS)
    assert_done(call(member.tool.name, **member.input(path)))
    assert path.read_bytes() == member.theirs_after


@FAMILY
def test_a_touched_file_with_identical_text_is_refused_before_the_call(
    member: Member, tmp_path: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: STATE-STALE-1, STATE-STALE-2, WRITE-VALIDATE-1, EDIT-VALIDATE-1, NBEDIT-VALIDATE-1"""
    path = read_file(member, tmp_path, call)
    touch_forward(path)
    with unchanged():
        response = call(member.tool.name, **member.input(path))
    assert_refused(response, stage="validate", code=member.stale_code, name=member.stale_name)


# --- staleness between validate and call ------------------------------------------------


@FAMILY
def test_a_file_changed_between_validate_and_call_is_not_overwritten(
    member: Member, tmp_path: Path, ctx: ToolUseContext, use: Use
) -> None:
    """SPEC: STATE-STALE-2, STATE-UPDATE-2, ERR-CODE-2, WRITE-SEQ-1, EDIT-SEQ-1, NBEDIT-WRITE-1"""
    path = read_through(member, tmp_path, use)
    before = ctx.session.read_state.get(str(path))
    external: list[FileFacts] = []

    def change_it() -> None:
        modify_externally(path, member.theirs)
        external.append(file_facts(path))

    outcome = use(with_hook_after_validate(member.tool, change_it), **member.input(path))
    assert (outcome.stage, outcome.error_code, outcome.error_name, outcome.is_error) == (
        "call",
        None,
        "FileUnexpectedlyModifiedError",
        True,
    )
    assert external == [file_facts(path)]  # bytes, mtime_ns and mode as the other writer left them
    assert ctx.session.read_state.get(str(path)) is before


@FAMILY
def test_a_touch_between_validate_and_call_does_not_stop_the_change(
    member: Member, tmp_path: Path, use: Use
) -> None:
    """SPEC: STATE-STALE-1, STATE-STALE-2, EDIT-SEQ-1, NBEDIT-WRITE-1"""
    path = read_through(member, tmp_path, use)
    touched = with_hook_after_validate(member.tool, lambda: touch_forward(path))
    assert use(touched, **member.input(path)).stage == "done"
    assert path.read_bytes() == member.after


# --- the file history -------------------------------------------------------------------


@FAMILY
def test_the_old_bytes_are_backed_up_in_the_file_history(
    member: Member, tmp_path: Path, session_dir: Path, call: Call
) -> None:
    """SPEC: HIST-1, WRITE-SEQ-1, EDIT-SEQ-1, NBEDIT-WRITE-1"""
    path = read_file(member, tmp_path, call)
    assert_done(call(member.tool.name, **member.input(path)))
    assert path.read_bytes() == member.after
    backup = session_dir / "file-history" / hashlib.sha256(member.before).hexdigest()
    assert backup.read_bytes() == member.before


@CREATORS
def test_creating_a_file_backs_nothing_up(
    member: Member, tmp_path: Path, session_dir: Path, call: Call
) -> None:
    """SPEC: HIST-1"""
    path = tmp_path / member.file_name
    assert member.create is not None
    assert_done(call(member.tool.name, **member.input(path, member.create)))
    assert path.exists()
    history_dir = session_dir / "file-history"
    assert not history_dir.exists() or not any(history_dir.iterdir())


# --- the record a change leaves ---------------------------------------------------------


@FAMILY
def test_the_record_after_a_change_holds_the_new_text_and_the_real_mtime(
    member: Member, tmp_path: Path, engine: Engine, call: Call
) -> None:
    """SPEC: STATE-UPDATE-1, STATE-RECORD-1, WRITE-STATE-1, EDIT-STATE-1, NBEDIT-STATE-1"""
    path = read_file(member, tmp_path, call)
    assert_done(call(member.tool.name, **member.input(path)))
    record = record_of(engine, path)
    st = path.stat()
    assert record is not None
    assert (record.text, record.mtime_ns, record.size) == (
        member.after.decode("utf-8"),
        st.st_mtime_ns,
        st.st_size,
    )
    assert (record.offset, record.limit, record.partial, record.source) == (
        None,
        None,
        False,
        member.source,
    )
