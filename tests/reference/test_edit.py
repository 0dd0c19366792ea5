"""Edit (SPEC.md section 14) through the protocol engine, on a real disk.

Staleness, the file history and the record after an edit, which Edit shares
with Write and NotebookEdit, are tested once for the three in
``test_write_family.py``.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from refsupport import (
    Begin,
    Call,
    Unchanged,
    Use,
    assert_done,
    assert_refused,
    content,
    error_text,
    forbid_file_reads,
    modify_externally,
    run_bounded,
    with_hook_after_validate,
)

from reference import fileio, history
from reference.engine import Engine
from reference.observer import Change
from reference.tool import ToolUseContext
from reference.tools.edit import EDIT_TOOL, EditInput
from reference.tools.read.tool import READ_TOOL

NOT_READ_YET = "File has not been read yet. Read it first before writing to it."


def read_then_edit(call: Call, path: Path, old: str, new: str, **extra: Any) -> dict[str, Any]:
    assert_done(call("Read", file_path=str(path)))
    return call("Edit", file_path=str(path), old_string=old, new_string=new, **extra)


def edited(call: Call, path: Path, data: bytes, old: str, new: str, **extra: Any) -> bytes:
    """Write ``data``, Read it, Edit it, and return the bytes on disk."""
    path.write_bytes(data)
    assert_done(read_then_edit(call, path, old, new, **extra))
    return path.read_bytes()


# --- matching and replacing -----------------------------------------------------------


def test_unique_match_is_replaced(tmp_path: Path, call: Call) -> None:
    """SPEC: EDIT-MATCH-1, EDIT-UNIQUE-1, EDIT-RESULT-1"""
    path = tmp_path / "a.txt"
    path.write_bytes(b"a\nb\nc")
    response = read_then_edit(call, path, "b", "B")
    assert path.read_bytes() == b"a\nB\nc"
    assert content(response) == f"The file {path} has been updated successfully."
    assert assert_done(response) == {
        "filePath": str(path),
        "oldString": "b",
        "newString": "B",
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
        "replaceAll": False,
        "userModified": False,
    }


def test_replace_all_replaces_every_occurrence(tmp_path: Path, call: Call) -> None:
    """SPEC: EDIT-UNIQUE-1, EDIT-RESULT-1"""
    path = tmp_path / "a.txt"
    path.write_bytes(b"x = x + x\n")
    response = read_then_edit(call, path, "x", "y", replace_all=True)
    assert path.read_bytes() == b"y = y + y\n"
    assert content(response) == (
        f"The file {path} has been updated successfully. All occurrences were replaced."
    )
    assert assert_done(response)["replaceAll"] is True


def test_several_matches_without_replace_all_are_refused_with_code_9(
    tmp_path: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: EDIT-UNIQUE-1, EDIT-VALIDATE-1"""
    path = tmp_path / "a.txt"
    path.write_bytes(b"x = x + 1\n")
    call("Read", file_path=str(path))
    with unchanged():
        response = call("Edit", file_path=str(path), old_string="x", new_string="y")
    assert_refused(response, stage="validate", code=9, name="MultipleMatchesError")


def test_overlapping_occurrences_count_once(tmp_path: Path, call: Call) -> None:
    """SPEC: EDIT-UNIQUE-1"""
    assert edited(call, tmp_path / "a.txt", b"aaa", "aa", "b") == b"ba"


def test_duplicate_outside_a_partial_view_is_still_caught(
    tmp_path: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: EDIT-READ-1, EDIT-UNIQUE-1"""
    path = tmp_path / "a.txt"
    path.write_bytes(b"target\nfiller\ntarget\n")
    call("Read", file_path=str(path), limit=1)
    with unchanged():
        response = call("Edit", file_path=str(path), old_string="target", new_string="t")
    assert_refused(response, stage="validate", code=9, name="MultipleMatchesError")


def test_partial_record_counts_as_a_read(tmp_path: Path, call: Call) -> None:
    """SPEC: EDIT-READ-1"""
    path = tmp_path / "a.txt"
    path.write_bytes(b"1\n2\n3\n")
    assert_done(call("Read", file_path=str(path), offset=3, limit=1))
    assert_done(call("Edit", file_path=str(path), old_string="1", new_string="one"))
    assert path.read_bytes() == b"one\n2\n3\n"


def test_string_not_found_is_refused_with_code_8(
    tmp_path: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: EDIT-VALIDATE-1, EDIT-MATCH-1"""
    path = tmp_path / "a.txt"
    path.write_bytes(b"hello\n")
    call("Read", file_path=str(path))
    with unchanged():
        response = call("Edit", file_path=str(path), old_string="bye", new_string="x")
    assert_refused(response, stage="validate", code=8, name="StringNotFoundError")
    assert error_text(response).startswith("String to replace not found in file.")


@pytest.mark.parametrize("old", ["a.c", "a  b", "A B", "a b\n", "^a", " a b"])
def test_matching_is_exact_with_no_regex_case_or_whitespace_tolerance(
    tmp_path: Path, call: Call, unchanged: Unchanged, old: str
) -> None:
    """SPEC: EDIT-MATCH-1"""
    path = tmp_path / "a.txt"
    path.write_bytes(b"abc\na b")
    call("Read", file_path=str(path))
    with unchanged():
        response = call("Edit", file_path=str(path), old_string=old, new_string="x")
    assert_refused(response, stage="validate", code=8, name="StringNotFoundError")


def test_crlf_in_old_string_never_matches_and_new_string_keeps_it(
    tmp_path: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: EDIT-MATCH-1, EDIT-EOL-1"""
    path = tmp_path / "a.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    call("Read", file_path=str(path))
    with unchanged():
        missing = call("Edit", file_path=str(path), old_string="one\r\ntwo", new_string="1")
    assert_refused(missing, stage="validate", code=8, name="StringNotFoundError")
    data = edited(call, tmp_path / "b.txt", b"one\ntwo\nthree\n", "one", "1\r\n2")
    assert data == b"1\r\n2\ntwo\nthree\n"
    crlf = edited(call, tmp_path / "c.txt", b"a\r\nb\r\n", "a", "x\r\ny")
    assert crlf == b"x\r\ny\r\nb\r\n"


def test_crlf_file_stays_crlf(tmp_path: Path, call: Call) -> None:
    """SPEC: EDIT-EOL-1, TEXT-EOL-1, EDIT-MATCH-1"""
    data = edited(call, tmp_path / "a.txt", b"one\r\ntwo\r\nthree\r\n", "one\ntwo", "1\n2\n2.5")
    assert data == b"1\r\n2\r\n2.5\r\nthree\r\n"


def test_lf_file_stays_lf(tmp_path: Path, call: Call) -> None:
    """SPEC: EDIT-EOL-1, TEXT-EOL-1, EDIT-MATCH-1"""
    data = edited(call, tmp_path / "a.txt", b"one\ntwo\nthree\n", "two", "2\n2.5")
    assert data == b"one\n2\n2.5\nthree\n"


def test_the_whole_file_takes_its_majority_style(tmp_path: Path, call: Call) -> None:
    """SPEC: EDIT-EOL-1"""
    mostly_crlf = b"a\r\nb\nc\r\nd\r\n"  # the lone \n after b becomes \r\n
    assert edited(call, tmp_path / "a.txt", mostly_crlf, "c", "x\ny") == (
        b"a\r\nb\r\nx\r\ny\r\nd\r\n"
    )
    mostly_lf = b"one\r\ntwo\nthree\n"  # the \r\n after one becomes \n
    assert edited(call, tmp_path / "b.txt", mostly_lf, "two", "2\n2.5") == (b"one\n2\n2.5\nthree\n")
    tie = b"a\r\nb\n"  # a tie is LF (TEXT-EOL-1)
    assert edited(call, tmp_path / "c.txt", tie, "b", "B") == b"a\nB\n"


def test_a_match_across_a_crlf_boundary_writes_the_file_style(tmp_path: Path, call: Call) -> None:
    """SPEC: EDIT-EOL-1, EDIT-MATCH-1"""
    data = edited(call, tmp_path / "a.txt", b"one\r\ntwo\r\nthree\r\n", "one\ntwo", "1\n2")
    assert data == b"1\r\n2\r\nthree\r\n"


# --- quotes and desanitization --------------------------------------------------------


def test_straight_quotes_match_curly_ones_and_the_file_style_is_kept(
    tmp_path: Path, call: Call
) -> None:
    """SPEC: EDIT-QUOTE-1, TEXT-QUOTE-1, TEXT-QUOTE-2"""
    data = edited(
        call,
        tmp_path / "a.txt",
        "He said \u201chello\u201d and it\u2019s fine\n".encode(),
        '"hello" and it\'s',
        '"goodbye" and it\'s',
    )
    assert data == "He said \u201cgoodbye\u201d and it\u2019s fine\n".encode()


def test_apostrophe_between_letters_becomes_a_right_single_quote(
    tmp_path: Path, call: Call
) -> None:
    """SPEC: TEXT-QUOTE-2, EDIT-QUOTE-1"""
    data = edited(
        call, tmp_path / "a.txt", "don\u2019t stop\n".encode(), "don't stop", "can't 'stop' now"
    )
    assert data == "can\u2019t \u2018stop\u2019 now\n".encode()


def test_quote_kind_not_curly_in_the_match_stays_straight(tmp_path: Path, call: Call) -> None:
    """SPEC: TEXT-QUOTE-2"""
    data = edited(call, tmp_path / "a.txt", 'it\u2019s "x"\n'.encode(), 'it\'s "x"', 'it\'s "y"')
    assert data == 'it\u2019s "y"\n'.encode()


def test_exact_match_leaves_new_string_quotes_alone(tmp_path: Path, call: Call) -> None:
    """SPEC: TEXT-QUOTE-2, EDIT-QUOTE-1"""
    data = edited(call, tmp_path / "a.txt", 'a \u201cx\u201d b "y"\n'.encode(), '"y"', "'z' \"z\"")
    assert data == "a \u201cx\u201d b 'z' \"z\"\n".encode()


@pytest.mark.parametrize(
    "case",
    [
        ("<function_results>ok\n", "<fnr>ok", "<fnr>done", "<function_results>done\n"),
        ("<name>x</name>\n", "<n>x", "<n>y", "<name>y</name>\n"),
        ("<output>1\n", "<o>1", "<o>2", "<output>2\n"),
        ("<error>e\n", "<e>e", "<e>f", "<error>f\n"),
        ("a\n\nHuman: hi\n", "a\n\nH: hi", "a\n\nH: bye", "a\n\nHuman: bye\n"),
        ("a\n\nAssistant: hi\n", "\n\nA: hi", "\n\nA: yo", "a\n\nAssistant: yo\n"),
        ("<name>it\u2019s\n", "<n>it\u2019s", "<n>it\u2019s ok", "<name>it\u2019s ok\n"),
    ],
    ids=["fnr", "n", "o", "e", "human", "assistant", "with-curly-quotes"],
)
def test_desanitized_old_string_is_tried_and_new_string_gets_the_same_replacements(
    tmp_path: Path, call: Call, case: tuple[str, str, str, str]
) -> None:
    """SPEC: EDIT-DESANITIZE-1, TEXT-DESANITIZE-1"""
    data, old, new, expected = case
    assert edited(call, tmp_path / "a.txt", data.encode(), old, new) == expected.encode()


def test_a_desanitized_old_string_is_not_quote_normalized(tmp_path: Path, call: Call) -> None:
    """SPEC: EDIT-DESANITIZE-1"""
    path = tmp_path / "a.txt"
    path.write_bytes("<name>it\u2019s\n".encode())
    assert_done(call("Read", file_path=str(path)))
    response = call("Edit", file_path=str(path), old_string="<n>it's", new_string="<n>ok")
    assert_refused(response, stage="validate", code=8, name="StringNotFoundError")


def test_only_entries_that_occurred_in_old_string_are_applied_to_new_string(
    tmp_path: Path, call: Call
) -> None:
    """SPEC: TEXT-DESANITIZE-1, EDIT-DESANITIZE-1"""
    data = edited(call, tmp_path / "a.txt", b"<function_results>x\n", "<fnr>x", "<fnr>y <n>")
    assert data == b"<function_results>y <n>\n"


def test_sanitized_text_present_in_the_file_is_matched_as_given(tmp_path: Path, call: Call) -> None:
    """SPEC: EDIT-DESANITIZE-1"""
    data = edited(call, tmp_path / "a.txt", b"<fnr> and <function_results>\n", "<fnr>", "<x>")
    assert data == b"<x> and <function_results>\n"


# --- whitespace, encodings, modes -----------------------------------------------------


def test_trailing_whitespace_of_new_string_is_stripped(tmp_path: Path, call: Call) -> None:
    """SPEC: EDIT-WS-1"""
    data = edited(call, tmp_path / "a.py", b"keep  \nb\n", "b", "c  \t\nd ")
    assert data == b"keep  \nc\nd\n"


@pytest.mark.parametrize("name", ["notes.md", "page.mdx", "README.MD", "Page.MdX"])
def test_trailing_whitespace_is_kept_in_markdown(tmp_path: Path, call: Call, name: str) -> None:
    """SPEC: EDIT-WS-1"""
    data = edited(call, tmp_path / name, b"line\nb\n", "b", "hard  \nbreak\t")
    assert data == b"line\nhard  \nbreak\t\n"


@pytest.mark.parametrize(
    ("mark", "codec", "eol"),
    [
        (b"\xef\xbb\xbf", "utf-8", "\n"),
        (b"\xef\xbb\xbf", "utf-8", "\r\n"),
        (b"\xff\xfe", "utf-16-le", "\n"),
        (b"\xff\xfe", "utf-16-le", "\r\n"),
    ],
    ids=["utf8-bom-lf", "utf8-bom-crlf", "utf16le-lf", "utf16le-crlf"],
)
def test_encoding_byte_order_mark_and_line_endings_are_kept(
    tmp_path: Path, call: Call, mark: bytes, codec: str, eol: str
) -> None:
    """SPEC: EDIT-ENC-1, TEXT-ENC-1, EDIT-EOL-1"""
    before = mark + f"caf\u00e9{eol}na\u00efve{eol}".encode(codec)
    data = edited(call, tmp_path / "a.txt", before, "na\u00efve", "\u4e2d\u6587\nok")
    assert data == mark + f"caf\u00e9{eol}\u4e2d\u6587{eol}ok{eol}".encode(codec)


def test_file_mode_is_kept(tmp_path: Path, call: Call) -> None:
    """SPEC: EDIT-SEQ-1, WRITE-ATOMIC-1"""
    path = tmp_path / "a.sh"
    path.write_bytes(b"echo a\n")
    path.chmod(0o640)
    assert_done(read_then_edit(call, path, "a", "b"))
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert path.read_bytes() == b"echo b\n"


def test_symlink_target_is_edited_and_the_link_stays(tmp_path: Path, call: Call) -> None:
    """SPEC: EDIT-SEQ-1, WRITE-ATOMIC-1"""
    target = tmp_path / "target.txt"
    target.write_bytes(b"old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    assert_done(read_then_edit(call, link, "old", "new"))
    assert link.is_symlink()
    assert os.readlink(link) == str(target)
    assert target.read_bytes() == b"new\n"


# --- creating with an empty old_string ------------------------------------------------


def test_empty_old_string_creates_a_missing_file_without_a_read(tmp_path: Path, call: Call) -> None:
    """SPEC: EDIT-CREATE-1, EDIT-RESULT-1"""
    path = tmp_path / "new" / "dir" / "a.txt"
    response = call("Edit", file_path=str(path), old_string="", new_string="created\n")
    output = assert_done(response)
    assert path.read_bytes() == b"created\n"
    assert (output["originalFile"], output["userModified"]) == (None, False)


def test_empty_old_string_on_an_empty_file_needs_a_read(
    tmp_path: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: EDIT-CREATE-1, EDIT-VALIDATE-1"""
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    with unchanged():
        response = call("Edit", file_path=str(path), old_string="", new_string="text\n")
    assert_refused(response, stage="validate", code=6, name="FileNotReadError")
    assert_done(read_then_edit(call, path, "", "text\n"))
    assert path.read_bytes() == b"text\n"


@pytest.mark.parametrize(
    ("mark", "codec"),
    [(b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le")],
    ids=["utf8", "utf16le"],
)
def test_empty_old_string_on_a_file_with_only_a_byte_order_mark_keeps_the_encoding(
    tmp_path: Path, call: Call, mark: bytes, codec: str
) -> None:
    """SPEC: EDIT-CREATE-1, EDIT-ENC-1, READ-EMPTY-1"""
    data = edited(call, tmp_path / "a.txt", mark, "", "caf\u00e9\n")
    assert data == "caf\u00e9\n".encode(codec)


def test_edit_of_a_file_with_text_keeps_its_byte_order_mark(tmp_path: Path, call: Call) -> None:
    """SPEC: EDIT-ENC-1"""
    data = edited(call, tmp_path / "a.txt", b"\xef\xbb\xbfone\n", "one", "two")
    assert data == b"\xef\xbb\xbftwo\n"


def test_empty_old_string_on_a_non_empty_file_is_refused_with_code_3(
    tmp_path: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: EDIT-VALIDATE-1, EDIT-CREATE-1"""
    path = tmp_path / "a.txt"
    path.write_bytes(b"content\n")
    call("Read", file_path=str(path))
    with unchanged():
        response = call("Edit", file_path=str(path), old_string="", new_string="x")
    assert_refused(response, stage="validate", code=3, name="FileAlreadyExistsError")


# --- read state and staleness ---------------------------------------------------------


def test_file_without_a_record_is_refused_with_code_6(
    tmp_path: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: EDIT-VALIDATE-1, EDIT-READ-1, ERR-CODE-1"""
    path = tmp_path / "a.txt"
    path.write_bytes(b"abc\n")
    with unchanged():
        response = call("Edit", file_path=str(path), old_string="abc", new_string="x")
    assert_refused(response, stage="validate", code=6, name="FileNotReadError")
    assert content(response) == f"<tool_use_error>{NOT_READ_YET}</tool_use_error>"


def test_call_runs_mkdir_backup_then_stat_read_write(
    tmp_path: Path, use: Use, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: EDIT-SEQ-1, HIST-1"""
    path = tmp_path / "a.txt"
    path.write_bytes(b"abc\n")
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
    tool = with_hook_after_validate(EDIT_TOOL, log.clear)
    assert use(tool, file_path=str(path), old_string="abc", new_string="x").stage == "done"
    assert log[0] == "makedirs"
    backup_at, write_at = log.index("backup"), log.index("atomic_write")
    assert log[backup_at + 1 : write_at + 1] == ["stat", "read_bytes", "atomic_write"]


def test_a_second_edit_needs_no_new_read(tmp_path: Path, call: Call) -> None:
    """SPEC: EDIT-STATE-1, STATE-STALE-1"""
    path = tmp_path / "a.txt"
    assert edited(call, path, b"a b c\n", "a", "A") == b"A b c\n"
    assert_done(call("Edit", file_path=str(path), old_string="b", new_string="B"))
    assert path.read_bytes() == b"A B c\n"


class Recorder:
    def __init__(self) -> None:
        self.changes: list[tuple[str, Change]] = []

    def file_changed(self, path: str, change: Change) -> None:
        self.changes.append((path, change))


def test_observers_and_events_hear_created_then_changed(
    tmp_path: Path, engine: Engine, call: Call
) -> None:
    """SPEC: EDIT-NOTIFY-1"""
    recorder = Recorder()
    assert engine.session is not None
    engine.session.observers.append(recorder)
    path = tmp_path / "a.txt"
    first = call("Edit", file_path=str(path), old_string="", new_string="v1")
    second = call("Edit", file_path=str(path), old_string="v1", new_string="v2")
    assert recorder.changes == [(str(path), "created"), (str(path), "changed")]
    for response, change in ((first, "created"), (second, "changed")):
        events = [event for event in response["events"] if event["type"] == "file_changed"]
        assert events == [
            {
                "type": "file_changed",
                "id": response["tool_result"]["tool_use_id"],
                "path": str(path),
                "change": change,
            }
        ]


def test_refused_edit_notifies_nobody(
    tmp_path: Path, engine: Engine, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: EDIT-NOTIFY-1"""
    recorder = Recorder()
    assert engine.session is not None
    engine.session.observers.append(recorder)
    path = tmp_path / "a.txt"
    path.write_bytes(b"abc")
    call("Read", file_path=str(path))
    with unchanged():
        response = call("Edit", file_path=str(path), old_string="zzz", new_string="y")
    assert_refused(response, stage="validate", code=8, name="StringNotFoundError")
    assert recorder.changes == []


# --- the validate table ---------------------------------------------------------------


def test_identical_strings_are_refused_with_code_1_before_anything_else(
    tmp_path: Path, call: Call, monkeypatch: pytest.MonkeyPatch, unchanged: Unchanged
) -> None:
    """SPEC: EDIT-VALIDATE-1"""
    (tmp_path / "same.txt").write_bytes(b"same\n")
    forbid_file_reads(monkeypatch)
    with unchanged():
        response = call("Edit", file_path="\\\\srv\\x\x00", old_string="same", new_string="same")
        again = call("Edit", file_path=str(tmp_path / "same.txt"), old_string="a", new_string="a")
    assert_refused(again, stage="validate", code=1, name="NoChangesError")
    assert_refused(response, stage="validate", code=1, name="NoChangesError")
    assert content(response) == (
        "<tool_use_error>No changes to make: old_string and new_string are exactly the same."
        "</tool_use_error>"
    )


@pytest.mark.parametrize(
    "case",
    [
        ("{root}/a.txt\x00", 14, "InvalidPathError"),
        ("\\\\server\\share\\a.txt\x00", 14, "InvalidPathError"),
        ("\\\\server\\share\\a.txt", 11, "UncPathError"),
    ],
    ids=["nul", "nul-before-unc", "unc-before-deny"],
)
def test_path_syntax_is_refused_before_deny_rules_and_any_file_access(
    tmp_path: Path,
    begin: Begin,
    monkeypatch: pytest.MonkeyPatch,
    unchanged: Unchanged,
    case: tuple[str, int, str],
) -> None:
    """SPEC: FILE-PATH-2, FILE-PATH-3, EDIT-VALIDATE-1"""
    raw_path, code, name = case
    engine = begin(settings={"userSettings": {"permissions": {"deny": ["Edit(//**)"]}}})
    (tmp_path / "a.txt").write_bytes(b"keep\n")

    def no_stat(path: str) -> fileio.Stat:
        raise AssertionError(f"stat({path!r})")

    monkeypatch.setattr(fileio, "stat", no_stat)
    forbid_file_reads(monkeypatch)
    tool_input = {"file_path": raw_path.format(root=tmp_path), "old_string": "k", "new_string": "x"}
    with unchanged():
        response = engine.handle(
            {"seq": 1, "cmd": "call", "tool_use": {"id": "t", "name": "Edit", "input": tool_input}}
        )
    assert_refused(response, stage="validate", code=code, name=name)


@pytest.mark.parametrize("rule", ["Edit(a.txt)", "Read(a.txt)", "Read(//**)", "Edit(/**)"])
def test_edit_or_read_deny_rule_refuses_with_code_2(
    tmp_path: Path, begin: Begin, call: Call, unchanged: Unchanged, rule: str
) -> None:
    """SPEC: EDIT-VALIDATE-1"""
    begin(settings={"policySettings": {"permissions": {"deny": [rule]}}})
    path = tmp_path / "a.txt"
    path.write_bytes(b"keep\n")
    with unchanged():
        response = call("Edit", file_path=str(path), old_string="keep", new_string="x")
    assert_refused(response, stage="validate", code=2, name="EditDeniedError")


def test_deny_rule_is_checked_before_the_file_kind(
    tmp_path: Path, begin: Begin, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: EDIT-VALIDATE-1"""
    begin(settings={"policySettings": {"permissions": {"deny": ["Edit(dir)"]}}})
    (tmp_path / "dir").mkdir()
    with unchanged():
        response = call("Edit", file_path=str(tmp_path / "dir"), old_string="a", new_string="b")
    assert_refused(response, stage="validate", code=2, name="EditDeniedError")


def test_directory_is_refused_with_code_12(
    tmp_path: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: EDIT-VALIDATE-1, FILE-PATH-4"""
    (tmp_path / "dir").mkdir()
    with unchanged():
        response = call("Edit", file_path=str(tmp_path / "dir"), old_string="a", new_string="b")
    assert_refused(response, stage="validate", code=12, name="NotARegularFileError")


def test_fifo_is_refused_with_code_12_without_blocking(
    tmp_path: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: EDIT-VALIDATE-1, FILE-PATH-4"""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with unchanged():
        response = run_bounded(
            lambda: call("Edit", file_path=str(fifo), old_string="a", new_string="b"),
            unblock=fifo,
        )
    assert_refused(response, stage="validate", code=12, name="NotARegularFileError")


def test_file_over_1_gib_is_refused_with_code_10_before_reading(
    tmp_path: Path, call: Call, unchanged: Unchanged, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: EDIT-VALIDATE-1"""
    path = tmp_path / "huge.txt"
    with path.open("wb") as handle:
        handle.truncate(1024**3 + 1)
    forbid_file_reads(monkeypatch)
    with unchanged():
        response = call("Edit", file_path=str(path), old_string="a", new_string="b")
    assert_refused(response, stage="validate", code=10, name="FileTooLargeError")


def test_missing_file_is_refused_with_code_4_and_a_similar_name(
    tmp_path: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: EDIT-VALIDATE-1, EDIT-SIMILAR-1, READ-SUGGEST-1"""
    (tmp_path / "Readme.md").write_bytes(b"x")
    with unchanged():
        response = call(
            "Edit", file_path=str(tmp_path / "README.md"), old_string="x", new_string="y"
        )
    assert_refused(response, stage="validate", code=4, name="FileDoesNotExistError")
    assert "Did you mean" in error_text(response)
    assert "Readme.md?" in error_text(response)


def test_notebook_is_refused_with_code_5(tmp_path: Path, call: Call, unchanged: Unchanged) -> None:
    """SPEC: EDIT-VALIDATE-1"""
    path = tmp_path / "nb.ipynb"
    path.write_bytes(b'{"cells": []}')
    call("Read", file_path=str(path))
    with unchanged():
        response = call("Edit", file_path=str(path), old_string="cells", new_string="x")
    assert_refused(response, stage="validate", code=5, name="NotebookFileError")


def test_a_missing_notebook_is_refused_as_missing_before_the_notebook_check(
    tmp_path: Path, call: Call
) -> None:
    """SPEC: EDIT-VALIDATE-1

    The seeds' order: existence, then the notebook check.
    """
    response = call("Edit", file_path=str(tmp_path / "nb.ipynb"), old_string="a", new_string="b")
    assert_refused(response, stage="validate", code=4, name="FileDoesNotExistError")
    assert not (tmp_path / "nb.ipynb").exists()


def test_notebook_is_refused_before_the_read_check(
    tmp_path: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: EDIT-VALIDATE-1"""
    (tmp_path / "nb.ipynb").write_bytes(b"{}")
    with unchanged():
        response = call(
            "Edit", file_path=str(tmp_path / "nb.ipynb"), old_string="{}", new_string="[]"
        )
    assert_refused(response, stage="validate", code=5, name="NotebookFileError")


def test_existing_notebook_with_empty_old_string_is_refused_with_code_5(
    tmp_path: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: EDIT-VALIDATE-1"""
    (tmp_path / "nb.ipynb").write_bytes(b"{}")
    with unchanged():
        response = call("Edit", file_path=str(tmp_path / "nb.ipynb"), old_string="", new_string="x")
    assert_refused(response, stage="validate", code=5, name="NotebookFileError")


def test_missing_notebook_with_empty_old_string_is_refused_with_code_5(
    tmp_path: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: EDIT-VALIDATE-1, EDIT-CREATE-1"""
    with unchanged():
        response = call(
            "Edit", file_path=str(tmp_path / "new.ipynb"), old_string="", new_string="{}"
        )
    assert_refused(response, stage="validate", code=5, name="NotebookFileError")
    assert not (tmp_path / "new.ipynb").exists()


@pytest.mark.parametrize(
    "data",
    [b"caf\xe9\n", b"\xff\xfe" + "ab".encode("utf-16-le") + b"\x00"],
    ids=["bad-utf8", "odd-utf16le"],
)
def test_bytes_invalid_in_their_encoding_are_refused_with_code_13(
    tmp_path: Path, call: Call, unchanged: Unchanged, data: bytes
) -> None:
    """SPEC: TEXT-ENC-2, EDIT-VALIDATE-1"""
    path = tmp_path / "a.txt"
    path.write_bytes(data)
    assert_done(call("Read", file_path=str(path)))
    with unchanged():
        response = call("Edit", file_path=str(path), old_string="zzz", new_string="y")
    assert_refused(response, stage="validate", code=13, name="UnsupportedEncodingError")


def test_staleness_is_checked_before_the_encoding(
    tmp_path: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: EDIT-VALIDATE-1"""
    path = tmp_path / "a.txt"
    path.write_bytes(b"cafe\n")
    call("Read", file_path=str(path))
    modify_externally(path, b"caf\xe9\n")
    with unchanged():
        response = call("Edit", file_path=str(path), old_string="zzz", new_string="y")
    assert_refused(response, stage="validate", code=7, name="FileModifiedSinceReadError")


# --- inputs_equivalent ----------------------------------------------------------------


def equivalent(ctx: ToolUseContext, a: dict[str, Any], b: dict[str, Any]) -> bool:
    assert EDIT_TOOL.inputs_equivalent is not None
    return EDIT_TOOL.inputs_equivalent(EditInput(**a), EditInput(**b), ctx)


def test_equal_inputs_are_equivalent(tmp_path: Path, ctx: ToolUseContext) -> None:
    """SPEC: EDIT-EQUIV-1"""
    (tmp_path / "a.txt").write_bytes(b"foo bar\n")
    same = {"file_path": str(tmp_path / "a.txt"), "old_string": "foo", "new_string": "baz"}
    assert equivalent(ctx, same, dict(same))


def test_relative_and_absolute_paths_to_the_same_file_are_equivalent(
    tmp_path: Path, ctx: ToolUseContext
) -> None:
    """SPEC: EDIT-EQUIV-1, FILE-PATH-1"""
    (tmp_path / "a.txt").write_bytes(b"foo bar\n")
    a = {"file_path": "a.txt", "old_string": "foo", "new_string": "baz"}
    b = {"file_path": str(tmp_path / "a.txt"), "old_string": "foo", "new_string": "baz"}
    assert equivalent(ctx, a, b)


def test_different_inputs_with_the_same_result_are_equivalent(
    tmp_path: Path, ctx: ToolUseContext
) -> None:
    """SPEC: EDIT-EQUIV-1"""
    (tmp_path / "a.txt").write_bytes(b"foo bar\n")
    path = str(tmp_path / "a.txt")
    a = {"file_path": path, "old_string": "foo", "new_string": "baz"}
    b = {"file_path": path, "old_string": "foo bar", "new_string": "baz bar"}
    assert equivalent(ctx, a, b)


def test_inputs_with_different_results_are_not_equivalent(
    tmp_path: Path, ctx: ToolUseContext
) -> None:
    """SPEC: EDIT-EQUIV-1"""
    (tmp_path / "a.txt").write_bytes(b"foo bar\n")
    path = str(tmp_path / "a.txt")
    a = {"file_path": path, "old_string": "foo", "new_string": "baz"}
    b = {"file_path": path, "old_string": "bar", "new_string": "baz"}
    assert not equivalent(ctx, a, b)


def test_inputs_naming_different_files_are_not_equivalent(
    tmp_path: Path, ctx: ToolUseContext
) -> None:
    """SPEC: EDIT-EQUIV-1"""
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_bytes(b"foo\n")
    a = {"file_path": str(tmp_path / "a.txt"), "old_string": "foo", "new_string": "x"}
    b = {"file_path": str(tmp_path / "b.txt"), "old_string": "foo", "new_string": "x"}
    assert not equivalent(ctx, a, b)


@pytest.mark.parametrize(
    "refused",
    [
        {"old_string": "missing", "new_string": "x"},
        {"old_string": "o", "new_string": "x"},  # two matches, replace_all false
    ],
    ids=["not-found", "ambiguous"],
)
def test_inputs_are_not_equivalent_when_one_would_be_refused(
    tmp_path: Path, ctx: ToolUseContext, refused: dict[str, str]
) -> None:
    """SPEC: EDIT-EQUIV-1"""
    (tmp_path / "a.txt").write_bytes(b"foo\n")
    path = str(tmp_path / "a.txt")
    assert not equivalent(
        ctx,
        {"file_path": path, **refused},
        {"file_path": path, "old_string": "f", "new_string": "x"},
    )


@pytest.mark.subprocess
def test_the_write_lock_is_exclusive_and_bounded(
    tmp_path: Path, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: STATE-LOCK-1"""
    path = tmp_path / "a.txt"
    path.write_text("alpha\n")
    holder = subprocess.Popen(  # another process holds the directory's lock
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            f"fd = os.open({str(tmp_path)!r}, os.O_RDONLY)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "print('held', flush=True)\n"
            "time.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "held\n"
        monkeypatch.setattr(fileio, "LOCK_WAIT_S", 0.3)
        assert call("Read", file_path=str(path))["outcome"]["stage"] == "done"
        refused = call("Edit", file_path=str(path), old_string="alpha", new_string="beta")
        assert refused["outcome"]["stage"] == "call"
        assert refused["outcome"]["error_name"] == "FileLockTimeoutError"
        assert path.read_text() == "alpha\n"  # nothing written
    finally:
        holder.kill()
        holder.wait()
        assert holder.stdout is not None
        holder.stdout.close()
    done = call("Edit", file_path=str(path), old_string="alpha", new_string="beta")
    assert done["outcome"]["stage"] == "done"  # the killed holder released it
    assert path.read_text() == "beta\n"
    assert sorted(os.listdir(tmp_path)) == ["a.txt"]  # no lock file left behind
