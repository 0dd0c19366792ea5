"""Write (SPEC.md section 13) through the protocol engine, on a real disk.

Staleness, the file history and the record after a write, which Write shares
with Edit and NotebookEdit, are tested once for the three in
``test_write_family.py``.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest
from refsupport import (
    READ_REMINDER,
    Begin,
    Call,
    FileFacts,
    Unchanged,
    Use,
    assert_done,
    assert_refused,
    content,
    file_facts,
    forbid_file_reads,
    modify_externally,
    record_of,
    run_bounded,
    with_hook_after_validate,
)

from reference import fileio, history
from reference.engine import Engine
from reference.observer import Change
from reference.tools.read.tool import READ_TOOL
from reference.tools.write import WRITE_TOOL

NOT_READ_YET = "File has not been read yet. Read it first before writing to it."


class Recorder:
    """A file-change observer that remembers what it was told."""

    def __init__(self) -> None:
        self.changes: list[tuple[str, Change]] = []

    def file_changed(self, path: str, change: Change) -> None:
        self.changes.append((path, change))


def read_then_write(call: Call, path: Path, new: str) -> dict[str, Any]:
    assert_done(call("Read", file_path=str(path)))
    return call("Write", file_path=str(path), content=new)


# --- creating -------------------------------------------------------------------------


def test_new_file_is_created_without_a_read(tmp_path: Path, call: Call) -> None:
    """SPEC: WRITE-NEW-1, WRITE-RESULT-1, WRITE-CONTENT-1"""
    path = tmp_path / "new.txt"
    response = call("Write", file_path=str(path), content="hello\n")
    output = assert_done(response)
    assert path.read_bytes() == b"hello\n"
    assert content(response) == f"File created successfully at: {path}"
    assert output["type"] == "create"
    assert (output["filePath"], output["content"], output["originalFile"]) == (
        str(path),
        "hello\n",
        None,
    )
    assert isinstance(output["structuredPatch"], list)


def test_missing_parent_directories_are_created(tmp_path: Path, call: Call) -> None:
    """SPEC: WRITE-NEW-1, WRITE-SEQ-1"""
    path = tmp_path / "a" / "b" / "c.txt"
    assert_done(call("Write", file_path=str(path), content="deep"))
    assert path.read_bytes() == b"deep"


def test_new_file_is_utf8_without_a_byte_order_mark(tmp_path: Path, call: Call) -> None:
    """SPEC: WRITE-ENC-1, TEXT-ENC-1"""
    path = tmp_path / "new.txt"
    assert_done(call("Write", file_path=str(path), content="caf\u00e9 \u2014 \u4e2d\u6587"))
    assert path.read_bytes() == "caf\u00e9 \u2014 \u4e2d\u6587".encode()


def test_relative_path_is_written_under_the_session_cwd(
    tmp_path: Path, begin: Begin, call: Call
) -> None:
    """SPEC: FILE-PATH-1"""
    (tmp_path / "sub").mkdir()
    begin(cwd=str(tmp_path / "sub"))
    response = call("Write", file_path="../out/x.txt", content="x")
    assert assert_done(response)["filePath"] == str(tmp_path / "out" / "x.txt")
    assert (tmp_path / "out" / "x.txt").read_bytes() == b"x"


# --- read-before-write ----------------------------------------------------------------


def test_existing_file_without_a_record_is_refused_with_code_2(
    tmp_path: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: WRITE-VALIDATE-1, WRITE-READ-1, ERR-CODE-1"""
    path = tmp_path / "a.txt"
    path.write_bytes(b"old\n")
    with unchanged():
        response = call("Write", file_path=str(path), content="new\n")
    assert_refused(response, stage="validate", code=2, name="FileNotReadError")
    assert content(response) == f"<tool_use_error>{NOT_READ_YET}</tool_use_error>"


def test_partial_record_is_refused_with_code_2_and_left_as_it_was(
    tmp_path: Path, engine: Engine, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: WRITE-READ-1, STATE-PARTIAL-1, STATE-UPDATE-2"""
    path = tmp_path / "a.txt"
    path.write_bytes(b"1\n2\n3\n")
    call("Read", file_path=str(path), limit=2)
    before = record_of(engine, path)
    with unchanged():
        response = call("Write", file_path=str(path), content="new\n")
    assert_refused(response, stage="validate", code=2, name="FileNotReadError")
    assert record_of(engine, path) is before


def test_record_made_by_an_earlier_write_counts_as_a_read(tmp_path: Path, call: Call) -> None:
    """SPEC: WRITE-READ-1, WRITE-STATE-1"""
    path = tmp_path / "a.txt"
    assert_done(call("Write", file_path=str(path), content="one"))
    assert_done(call("Write", file_path=str(path), content="two"))
    assert path.read_bytes() == b"two"


def test_record_made_by_an_edit_counts_as_a_read(tmp_path: Path, call: Call) -> None:
    """SPEC: WRITE-READ-1, EDIT-STATE-1"""
    path = tmp_path / "a.txt"
    path.write_bytes(b"alpha\n")
    call("Read", file_path=str(path), offset=1, limit=1)  # partial is enough for Edit
    assert_done(call("Edit", file_path=str(path), old_string="alpha", new_string="beta"))
    assert_done(call("Write", file_path=str(path), content="gamma\n"))
    assert path.read_bytes() == b"gamma\n"


# --- staleness ------------------------------------------------------------------------


def test_file_created_between_validate_and_call_is_not_overwritten(
    tmp_path: Path, use: Use
) -> None:
    """SPEC: STATE-STALE-2, WRITE-NEW-1"""
    path = tmp_path / "new.txt"
    external: list[FileFacts] = []

    def create_it() -> None:
        path.write_bytes(b"theirs\n")
        external.append(file_facts(path))

    racing = with_hook_after_validate(WRITE_TOOL, create_it)
    outcome = use(racing, file_path=str(path), content="mine\n")
    assert (outcome.stage, outcome.error_name) == ("call", "FileUnexpectedlyModifiedError")
    assert path.read_bytes() == b"theirs\n"
    assert external == [file_facts(path)]


# --- content, line endings, encodings -------------------------------------------------


def test_content_is_written_verbatim_but_for_trailing_whitespace(
    tmp_path: Path, call: Call
) -> None:
    """SPEC: WRITE-CONTENT-1"""
    path = tmp_path / "a.py"
    path.write_bytes(b"old\n")
    text = "x = 1   \n\ty = 'it\u2019s'\t\r\n\n<fnr> \"q\"  "
    done = read_then_write(call, path, text)
    assert_done(done)
    stripped = "x = 1\n\ty = 'it\u2019s'\r\n\n<fnr> \"q\""
    assert path.read_bytes() == stripped.encode()
    assert done["outcome"]["output"]["content"] == stripped


@pytest.mark.parametrize("name", ["notes.md", "NOTES.MD", "page.mdx"])
def test_markdown_keeps_trailing_whitespace(tmp_path: Path, call: Call, name: str) -> None:
    """SPEC: WRITE-CONTENT-1"""
    path = tmp_path / name
    assert_done(call("Write", file_path=str(path), content="a  \nb\t\n"))
    assert path.read_bytes() == b"a  \nb\t\n"


def test_crlf_file_replaced_with_lf_content_becomes_lf(tmp_path: Path, call: Call) -> None:
    """SPEC: WRITE-EOL-1, WRITE-CONTENT-1"""
    path = tmp_path / "run.sh"
    path.write_bytes(b"#!/bin/sh\r\necho old\r\n")
    assert_done(read_then_write(call, path, "#!/bin/sh\necho new\n"))
    assert path.read_bytes() == b"#!/bin/sh\necho new\n"


def test_crlf_inside_content_is_kept(tmp_path: Path, call: Call) -> None:
    """SPEC: WRITE-EOL-1"""
    path = tmp_path / "a.bat"
    path.write_bytes(b"old\n")
    assert_done(read_then_write(call, path, "one\r\ntwo\r\nthree\n"))
    assert path.read_bytes() == b"one\r\ntwo\r\nthree\n"


def test_utf8_byte_order_mark_is_dropped(tmp_path: Path, call: Call) -> None:
    """SPEC: WRITE-ENC-1, TEXT-ENC-1"""
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbfold\n")
    assert_done(read_then_write(call, path, "n\u00e9w\n"))
    assert path.read_bytes() == "n\u00e9w\n".encode()


def test_utf16le_file_is_written_back_in_utf16le_without_its_mark(
    tmp_path: Path, call: Call
) -> None:
    """SPEC: WRITE-ENC-1, TEXT-ENC-1"""
    path = tmp_path / "wide.txt"
    path.write_bytes(b"\xff\xfe" + "old\r\n".encode("utf-16-le"))
    assert_done(read_then_write(call, path, "n\u00e9w\n"))
    assert path.read_bytes() == "n\u00e9w\n".encode("utf-16-le")


# --- atomic replacement ---------------------------------------------------------------


def test_file_mode_is_kept(tmp_path: Path, call: Call) -> None:
    """SPEC: WRITE-ATOMIC-1"""
    path = tmp_path / "a.txt"
    path.write_bytes(b"old\n")
    path.chmod(0o640)
    assert_done(read_then_write(call, path, "new\n"))
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert path.read_bytes() == b"new\n"


def test_new_file_mode_is_0o666_less_the_umask(tmp_path: Path, call: Call) -> None:
    """SPEC: WRITE-ATOMIC-1"""
    previous = os.umask(0o027)
    try:
        assert_done(call("Write", file_path=str(tmp_path / "new.txt"), content="x"))
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640


def test_symlink_target_is_replaced_and_the_link_stays(tmp_path: Path, call: Call) -> None:
    """SPEC: WRITE-ATOMIC-1"""
    target = tmp_path / "target.txt"
    target.write_bytes(b"old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    assert_done(read_then_write(call, link, "new\n"))
    assert link.is_symlink()
    assert os.readlink(link) == str(target)
    assert target.read_bytes() == b"new\n"


def test_write_replaces_the_file_by_rename_and_leaves_no_temporary_file(
    tmp_path: Path, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: WRITE-ATOMIC-1"""
    path = tmp_path / "a.txt"
    path.write_bytes(b"old\n")
    call("Read", file_path=str(path))
    renames: list[tuple[str, str]] = []
    synced: list[int] = []
    real_replace, real_fsync = os.replace, os.fsync

    def spy_replace(src: Any, dst: Any, **dir_fds: Any) -> None:
        # FILE-OPEN-1: the rename goes through the checked directory's descriptor
        base = dir_fds.get("dst_dir_fd")
        where = "" if base is None else os.readlink(f"/proc/self/fd/{base}")
        renames.append((os.path.join(where, os.fspath(src)), os.path.join(where, os.fspath(dst))))
        real_replace(src, dst, **dir_fds)

    def spy_fsync(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "replace", spy_replace)
    monkeypatch.setattr(os, "fsync", spy_fsync)
    old_inode = path.stat().st_ino
    assert_done(call("Write", file_path=str(path), content="new\n"))
    monkeypatch.undo()
    target_renames = [(src, dst) for src, dst in renames if dst == str(path)]
    assert len(target_renames) == 1
    assert os.path.dirname(target_renames[0][0]) == str(tmp_path)
    assert synced
    assert path.stat().st_ino != old_inode
    assert sorted(os.listdir(tmp_path)) == ["a.txt"]


# --- sequence, history, record, result ------------------------------------------------


def test_call_runs_mkdir_backup_then_stat_read_write(
    tmp_path: Path, use: Use, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: WRITE-SEQ-1, HIST-1"""
    path = tmp_path / "a.txt"
    path.write_bytes(b"old\n")
    use(READ_TOOL, file_path=str(path))
    log: list[str] = []

    def spy(name: str, real: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            log.append(name)
            return real(*args, **kwargs)

        return wrapper

    real_makedirs = os.makedirs

    def spy_makedirs(name: Any, *args: Any, **kwargs: Any) -> None:
        if os.fspath(name) == str(tmp_path):
            log.append("makedirs")
        real_makedirs(name, *args, **kwargs)

    monkeypatch.setattr(os, "makedirs", spy_makedirs)
    monkeypatch.setattr(history, "backup", spy("backup", history.backup))
    monkeypatch.setattr(fileio, "stat", spy("stat", fileio.stat))
    monkeypatch.setattr(fileio, "read_bytes", spy("read_bytes", fileio.read_bytes))
    monkeypatch.setattr(fileio, "atomic_write", spy("atomic_write", fileio.atomic_write))
    tool = with_hook_after_validate(WRITE_TOOL, log.clear)  # keep call()'s steps only
    assert use(tool, file_path=str(path), content="new\n").stage == "done"
    assert log[0] == "makedirs"
    backup_at, write_at = log.index("backup"), log.index("atomic_write")
    assert log[backup_at + 1 : write_at + 1] == ["stat", "read_bytes", "atomic_write"]


def test_read_right_after_write_returns_the_content(tmp_path: Path, call: Call) -> None:
    """SPEC: WRITE-STATE-1, READ-DEDUP-3"""
    path = tmp_path / "a.txt"
    assert_done(call("Write", file_path=str(path), content="fresh\n"))
    response = call("Read", file_path=str(path))
    assert (response["outcome"]["dedup"], content(response)) == (
        False,
        "1\tfresh\n2\t" + READ_REMINDER,
    )


def test_update_result_carries_the_original_and_the_patch(tmp_path: Path, call: Call) -> None:
    """SPEC: WRITE-RESULT-1, PATCH-1"""
    path = tmp_path / "a.txt"
    path.write_bytes(b"a\nb\nc")
    response = read_then_write(call, path, "a\nB\nc")
    assert content(response) == f"The file {path} has been updated successfully."
    assert assert_done(response) == {
        "type": "update",
        "filePath": str(path),
        "content": "a\nB\nc",
        "originalFile": "a\nb\nc",
        "structuredPatch": [
            {
                "oldStart": 1,
                "oldLines": 3,
                "newStart": 1,
                "newLines": 3,
                "lines": [" a", "-b", "+B", " c"],
            }
        ],
    }


def test_observers_and_events_hear_created_then_changed(
    tmp_path: Path, engine: Engine, call: Call
) -> None:
    """SPEC: WRITE-NOTIFY-1"""
    recorder = Recorder()
    assert engine.session is not None
    engine.session.observers.append(recorder)
    path = tmp_path / "a.txt"
    first = call("Write", file_path=str(path), content="1")
    second = call("Write", file_path=str(path), content="2")
    assert recorder.changes == [(str(path), "created"), (str(path), "changed")]
    for response, change in ((first, "created"), (second, "changed")):
        events = [event for event in response["events"] if event["type"] == "file_changed"]
        tool_use_id = response["tool_result"]["tool_use_id"]
        assert events == [
            {"type": "file_changed", "id": tool_use_id, "path": str(path), "change": change}
        ]


def test_refused_write_notifies_nobody(
    tmp_path: Path, engine: Engine, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: WRITE-NOTIFY-1, STATE-UPDATE-2"""
    recorder = Recorder()
    assert engine.session is not None
    engine.session.observers.append(recorder)
    path = tmp_path / "a.txt"
    path.write_bytes(b"old")
    with unchanged():
        response = call("Write", file_path=str(path), content="new")
    assert_refused(response, stage="validate", code=2, name="FileNotReadError")
    assert recorder.changes == []
    assert [e for e in response["events"] if e["type"] == "file_changed"] == []
    assert record_of(engine, path) is None


# --- the validate table ---------------------------------------------------------------


@pytest.mark.parametrize(
    "case",
    [
        ("{root}/a.txt\x00", 4, "InvalidPathError"),
        ("\\\\server\\share\\a.txt\x00", 4, "InvalidPathError"),
        ("\\\\server\\share\\a.txt", 5, "UncPathError"),
    ],
    ids=["nul", "nul-before-unc", "unc"],
)
def test_path_syntax_is_refused_before_deny_rules_and_any_file_access(
    tmp_path: Path,
    begin: Begin,
    monkeypatch: pytest.MonkeyPatch,
    unchanged: Unchanged,
    case: tuple[str, int, str],
) -> None:
    """SPEC: FILE-PATH-2, FILE-PATH-3, WRITE-VALIDATE-1"""
    raw_path, code, name = case
    engine = begin(settings={"userSettings": {"permissions": {"deny": ["Edit(//**)"]}}})
    (tmp_path / "a.txt").write_bytes(b"keep\n")

    def no_stat(path: str) -> fileio.Stat:
        raise AssertionError(f"stat({path!r})")

    monkeypatch.setattr(fileio, "stat", no_stat)
    forbid_file_reads(monkeypatch)
    tool_input = {"file_path": raw_path.format(root=tmp_path), "content": "x"}
    with unchanged():
        response = engine.handle(
            {"seq": 1, "cmd": "call", "tool_use": {"id": "t", "name": "Write", "input": tool_input}}
        )
    assert_refused(response, stage="validate", code=code, name=name)


@pytest.mark.parametrize("rule", ["Edit(a.txt)", "Read(a.txt)", "Edit(//**)", "Read(/**)"])
def test_edit_or_read_deny_rule_refuses_with_code_1(
    tmp_path: Path, begin: Begin, call: Call, unchanged: Unchanged, rule: str
) -> None:
    """SPEC: WRITE-VALIDATE-1"""
    begin(settings={"localSettings": {"permissions": {"deny": [rule]}}})
    path = tmp_path / "a.txt"
    path.write_bytes(b"keep\n")
    with unchanged():
        response = call("Write", file_path=str(path), content="x")
    assert_refused(response, stage="validate", code=1, name="WriteDeniedError")


@pytest.mark.parametrize("rule", ["Edit", "Read", "Edit(*)"])
def test_bare_deny_rule_on_another_tool_does_not_refuse_a_write(
    tmp_path: Path, begin: Begin, call: Call, rule: str
) -> None:
    """SPEC: WRITE-VALIDATE-1, REG-DENY-1"""
    begin(settings={"localSettings": {"permissions": {"deny": [rule]}}})
    assert_done(call("Write", file_path=str(tmp_path / "a.txt"), content="x"))
    assert (tmp_path / "a.txt").read_bytes() == b"x"


def test_deny_rule_refuses_creating_a_new_file(
    tmp_path: Path, begin: Begin, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: WRITE-VALIDATE-1"""
    begin(settings={"localSettings": {"permissions": {"deny": ["Edit(*.env)"]}}})
    with unchanged():
        response = call("Write", file_path=str(tmp_path / "x" / ".env"), content="K=V")
    assert_refused(response, stage="validate", code=1, name="WriteDeniedError")


def test_deny_rule_is_checked_before_the_file_kind(
    tmp_path: Path, begin: Begin, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: WRITE-VALIDATE-1"""
    begin(settings={"localSettings": {"permissions": {"deny": ["Edit(dir)"]}}})
    (tmp_path / "dir").mkdir()
    with unchanged():
        response = call("Write", file_path=str(tmp_path / "dir"), content="x")
    assert_refused(response, stage="validate", code=1, name="WriteDeniedError")


def test_directory_is_refused_with_code_6(tmp_path: Path, call: Call, unchanged: Unchanged) -> None:
    """SPEC: WRITE-VALIDATE-1, FILE-PATH-4"""
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "inside.txt").write_bytes(b"keep")
    with unchanged():
        response = call("Write", file_path=str(tmp_path / "dir"), content="x")
    assert_refused(response, stage="validate", code=6, name="NotARegularFileError")


def test_fifo_is_refused_with_code_6_without_blocking(
    tmp_path: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: WRITE-VALIDATE-1, FILE-PATH-4"""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with unchanged():
        response = run_bounded(
            lambda: call("Write", file_path=str(fifo), content="x"), unblock=fifo
        )
    assert_refused(response, stage="validate", code=6, name="NotARegularFileError")


def test_partial_record_is_refused_before_staleness(
    tmp_path: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: WRITE-VALIDATE-1"""
    path = tmp_path / "a.txt"
    path.write_bytes(b"1\n2\n")
    call("Read", file_path=str(path), offset=2)
    modify_externally(path, b"changed\n")
    with unchanged():
        response = call("Write", file_path=str(path), content="x")
    assert_refused(response, stage="validate", code=2, name="FileNotReadError")


def test_session_home_is_used_for_tilde(tmp_path: Path, begin: Begin, call: Call) -> None:
    """SPEC: FILE-PATH-1"""
    home = tmp_path / "home"
    home.mkdir()
    begin(home=str(home))
    assert_done(call("Write", file_path="~/x.txt", content="x"))
    assert (home / "x.txt").read_bytes() == b"x"
