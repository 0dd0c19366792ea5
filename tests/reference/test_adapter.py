"""``python -m reference.adapter`` as a real subprocess: protocol v1 over stdio."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from refsupport import READ_REMINDER

from reference.adapter import top_level_seq

ADAPTER_TIMEOUT_S = 60


def run_adapter(*lines: str) -> tuple[list[dict[str, Any]], int]:
    """Feed ``lines`` to a fresh adapter, close stdin, and collect every answer."""
    with subprocess.Popen(
        [sys.executable, "-m", "reference.adapter"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    ) as proc:
        try:
            out, _err = proc.communicate(
                "".join(f"{line}\n" for line in lines), timeout=ADAPTER_TIMEOUT_S
            )
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise
    return [json.loads(line) for line in out.splitlines()], proc.returncode


def request(seq: int, cmd: str, **fields: Any) -> str:
    return json.dumps({"seq": seq, "cmd": cmd, **fields})


def session(tmp_path: Path, session_dir: Path) -> dict[str, Any]:
    return {"root": str(tmp_path), "prompt": "allow", "session_dir": str(session_dir)}


@pytest.mark.subprocess
def test_hello_begin_call_end_then_eof_exits_0(tmp_path: Path, session_dir: Path) -> None:
    """SPEC: PROTO-HELLO-1, PROTO-BEGIN-1, PROTO-CALL-1, PROTO-END-1, PROTO-EOF-1, PROTO-SEQ-1"""
    path = tmp_path / "a.txt"
    write = {"id": "w1", "name": "Write", "input": {"file_path": str(path), "content": "hi\n"}}
    read = {"id": "r1", "name": "Read", "input": {"file_path": str(path)}}
    answers, status = run_adapter(
        request(1, "hello", protocol=1),
        request(2, "begin", session=session(tmp_path, session_dir)),
        request(3, "call", tool_use=write),
        request(4, "call", tool_use=read),
        request(5, "end"),
    )
    assert status == 0
    assert [answer["seq"] for answer in answers] == [1, 2, 3, 4, 5]
    hello = answers[0]
    assert hello["protocol"] == 1
    assert set(hello["implementation"]) == {"name", "version", "language"}
    assert {"read", "write", "edit", "dedup", "token_gate"} <= set(hello["features"])
    assert answers[1] == {"seq": 2, "ok": True}
    assert answers[2]["outcome"]["stage"] == "done"
    assert answers[3]["tool_result"] == {
        "type": "tool_result",
        "tool_use_id": "r1",
        "content": "1\thi\n2\t" + READ_REMINDER,
        "is_error": False,
    }
    assert answers[4] == {"seq": 5, "ok": True}
    assert path.read_bytes() == b"hi\n"


@pytest.mark.subprocess
def test_eof_without_any_request_exits_0() -> None:
    """SPEC: PROTO-EOF-1"""
    assert run_adapter() == ([], 0)


@pytest.mark.subprocess
def test_bad_lines_get_bad_request_and_serving_goes_on(tmp_path: Path, session_dir: Path) -> None:
    """SPEC: PROTO-BAD-1, PROTO-SEQ-1"""
    read = {"id": "r", "name": "Read", "input": {"file_path": "/dev/null"}}
    answers, status = run_adapter(
        "{not json",
        "[1, 2]",
        '{"cmd": "hello", "protocol": 1}',
        '{"seq": true, "cmd": "hello", "protocol": 1}',
        request(5, "dance"),
        request(6, "call", tool_use=read),  # no session yet
        request(7, "begin", session=session(tmp_path, session_dir)),
        request(8, "call", tool_use="Read"),
        request(9, "end"),
        request(10, "call", tool_use=read),  # the session has ended
        request(11, "hello", protocol=1),
    )
    assert status == 0
    assert [answer["seq"] for answer in answers] == [None, None, None, None, *range(5, 12)]
    bad = [answer for answer in answers if "error" in answer]
    assert [answer["seq"] for answer in bad] == [None, None, None, None, 5, 6, 8, 10]
    assert {answer["error"]["kind"] for answer in bad} == {"bad_request"}
    assert answers[-1]["protocol"] == 1


@pytest.mark.subprocess
def test_tool_use_without_a_string_id_or_an_input_key_is_a_bad_request(
    tmp_path: Path, session_dir: Path
) -> None:
    """SPEC: PROTO-BAD-1"""
    answers, _ = run_adapter(
        request(1, "begin", session=session(tmp_path, session_dir)),
        request(2, "call", tool_use={"name": "Read", "input": {"file_path": "/dev/null"}}),
        request(3, "call", tool_use={"id": 7, "name": "Read", "input": {"file_path": "/dev/null"}}),
        request(4, "call", tool_use={"id": "x", "name": "Read"}),
    )
    assert [(answer["seq"], answer.get("error", {}).get("kind")) for answer in answers[1:]] == [
        (2, "bad_request"),
        (3, "bad_request"),
        (4, "bad_request"),
    ]


@pytest.mark.subprocess
def test_non_object_input_is_the_model_mistake_not_a_bad_request(
    tmp_path: Path, session_dir: Path
) -> None:
    """SPEC: PROTO-BAD-1, DISP-SCHEMA-2"""
    answers, _ = run_adapter(
        request(1, "begin", session=session(tmp_path, session_dir)),
        request(2, "call", tool_use={"id": "x", "name": "Read", "input": "oops"}),
    )
    assert answers[1]["outcome"]["stage"] == "input_schema"


@pytest.mark.subprocess
def test_begin_ignores_unknown_settings_sources(tmp_path: Path, session_dir: Path) -> None:
    """SPEC: PROTO-BEGIN-1"""
    spec = {**session(tmp_path, session_dir), "settings": {"someFutureSource": {"x": 1}}}
    answers, _ = run_adapter(request(1, "begin", session=spec))
    assert answers == [{"seq": 1, "ok": True}]


@pytest.mark.subprocess
def test_begin_creates_a_missing_session_dir(tmp_path: Path) -> None:
    """SPEC: PROTO-BEGIN-2"""
    session_dir = tmp_path / "not" / "yet"
    (tmp_path / "root").mkdir()
    spec = {"root": str(tmp_path / "root"), "session_dir": str(session_dir)}
    answers, _ = run_adapter(request(1, "begin", session=spec))
    assert answers == [{"seq": 1, "ok": True}]
    assert session_dir.is_dir()


@pytest.mark.subprocess
def test_a_session_dir_that_cannot_be_a_directory_is_a_bad_request(tmp_path: Path) -> None:
    """SPEC: PROTO-BEGIN-4, PROTO-BAD-1, PROTO-SEQ-1

    A file, a device, a FIFO, a path under a file and an unencodable name
    each get a coded refusal, never ``internal``; what was there is left
    as it was, and the adapter goes on serving.
    """
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "file").write_text("kept\n")
    os.mkfifo(tmp_path / "fifo")
    bad = [
        str(tmp_path / "file"),
        "/dev/null",
        str(tmp_path / "fifo"),
        str(tmp_path / "file" / "below"),
        str(tmp_path / "nul\0name"),
        str(tmp_path / "lone\ud800"),
    ]
    lines = [
        request(n, "begin", session={"root": str(root), "session_dir": d})
        for n, d in enumerate(bad)
    ]
    good = request(
        len(bad), "begin", session={"root": str(root), "session_dir": str(tmp_path / "s")}
    )
    answers, status = run_adapter(*lines, good)
    assert status == 0
    assert [answer["seq"] for answer in answers] == list(range(len(bad) + 1))
    kinds = [answer.get("error", {}).get("kind") for answer in answers]
    assert kinds == ["bad_request"] * len(bad) + [None], answers
    assert all("session_dir" in answer["error"]["message"] for answer in answers[:-1])
    assert (tmp_path / "file").read_text() == "kept\n"
    assert stat.S_ISFIFO(os.lstat(tmp_path / "fifo").st_mode)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def run_adapter_bytes(data: bytes) -> tuple[list[bytes], int]:
    """Feed raw ``data`` to a fresh adapter, close stdin; its answer lines as bytes, and status."""
    with subprocess.Popen(
        [sys.executable, "-m", "reference.adapter"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        try:
            out, _err = proc.communicate(data, timeout=ADAPTER_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise
    return out.split(b"\n")[:-1], proc.returncode


@pytest.mark.subprocess
def test_nesting_too_deep_to_parse_is_a_bad_request_not_an_exit() -> None:
    """SPEC: PROTO-BAD-1, PROTO-SEQ-1"""
    deep = "[" * 100_000 + "]" * 100_000
    nested_input = '{"seq": 2, "cmd": "hello", "protocol": ' + "[" * 5_000 + "]" * 5_000 + "}"
    lines, status = run_adapter_bytes(
        f"{deep}\n{nested_input}\n{request(3, 'hello', protocol=1)}\n".encode()
    )
    assert status == 0
    answers = [json.loads(line) for line in lines]
    assert [answer["seq"] for answer in answers] == [None, 2, 3]  # 2: found by the scan
    assert [answer.get("error", {}).get("kind") for answer in answers] == [
        "bad_request",
        "bad_request",
        None,
    ]


@pytest.mark.parametrize(
    ("line", "seq"),
    [
        ('{"seq": 12, "x": ' + "[" * 5_000, 12),
        ('{"a": {"seq": 3}, "b": "\\"seq\\": 4", "seq": 7, "x": ' + "{" * 3_000, 7),
        ('{"x": ' + "[" * 3_000 + '{"seq": 5}', None),
        ('{"seq": "1", "x": [', None),
        ('{"seq": 1.5, "x": [', None),
        ("[" * 100, None),
    ],
)
def test_the_seq_of_a_line_too_deep_to_parse_is_found_at_its_top_level(
    line: str, seq: int | None
) -> None:
    """SPEC: PROTO-BAD-1"""
    assert top_level_seq(line) == seq


@pytest.mark.subprocess
def test_lone_surrogates_are_echoed_as_escapes_in_valid_utf8(
    tmp_path: Path, session_dir: Path
) -> None:
    """SPEC: PROTO-TRANSPORT-3, PROTO-SEQ-1"""
    begin = request(1, "begin", session=session(tmp_path, session_dir))
    calls = [
        request(2 + n, "call", tool_use={"id": f"i{s}", "name": name, "input": {"file_path": s}})
        for n, (s, name) in enumerate(
            [("\ud800", "Read"), ("\udc80", "Read"), ("\udcff", "Nope\ud800"), ("é\ud800", "Read")]
        )
    ]
    lines, status = run_adapter_bytes("\n".join([begin, *calls, ""]).encode("ascii"))
    assert status == 0
    for line in lines:
        line.decode("utf-8")  # strict: no raw invalid bytes, no encoded surrogates
    answers = [json.loads(line) for line in lines]
    assert [answer["seq"] for answer in answers] == [1, 2, 3, 4, 5]
    ids = [answer["tool_result"]["tool_use_id"] for answer in answers[1:]]
    assert ids == ["i\ud800", "i\udc80", "i\udcff", "ié\ud800"]


@pytest.mark.subprocess
def test_a_raw_cr_never_ends_a_request(tmp_path: Path, session_dir: Path) -> None:
    """SPEC: PROTO-TRANSPORT-2, PROTO-SEQ-1"""
    spec = json.dumps(session(tmp_path, session_dir))
    data = (
        b'{"seq": 1,\r "cmd": "begin", "session": ' + spec.encode() + b"}\n"
        b'{"seq": 2, "cmd": "hello", "protocol": 1}\r\n'
        b'{"seq": 3, "cmd": "hello", "protocol": 1, "x": "a\rb"}\n'
        b'{"seq": 4, "cmd": "hello", "protocol": 1}\n'
    )
    lines, status = run_adapter_bytes(data)
    assert status == 0
    answers = [json.loads(line) for line in lines]
    assert [answer["seq"] for answer in answers] == [1, 2, None, 4]
    assert answers[0] == {"seq": 1, "ok": True}  # a CR between tokens is whitespace
    assert answers[1]["protocol"] == 1  # CRLF ends a line: the CR is trailing whitespace
    assert answers[2]["error"]["kind"] == "bad_request"  # a raw CR in a string is not JSON
    assert answers[3]["protocol"] == 1


@pytest.mark.subprocess
def test_a_message_whose_call_fails_inside_the_engine_is_answered(
    tmp_path: Path, session_dir: Path
) -> None:
    """SPEC: SCHED-FAULT-1, PROTO-INTERNAL-1, PROTO-SEQ-1"""
    (tmp_path / "a.txt").write_text("a\n")
    read = {"name": "Read", "input": {"file_path": str(tmp_path / "a.txt")}}
    loud = {"name": "Bash", "input": {"command": "yes | head -c 100000"}}
    # ids a file name cannot hold, each beside a second block: the engine's
    # own fault (persisting a large result under a name too long, or with a
    # NUL) once escaped on a worker and the message waited for ever
    answers, status = run_adapter(
        request(1, "begin", session=session(tmp_path, session_dir)),
        request(2, "message", content=[{"id": "a" * 300, **loud}, {"id": "r", **read}]),
        request(3, "message", content=[{"id": "a\u0000b", **loud}, {"id": "r", **read}]),
        request(4, "message", content=[{"id": "r", **read}]),
    )
    assert status == 0
    assert [answer["seq"] for answer in answers] == [1, 2, 3, 4]
    for answer in answers[1:3]:  # internal today; a served result once ids are escaped
        assert "results" in answer or answer["error"]["kind"] == "internal"
    assert answers[3]["results"][0]["outcome"]["stage"] == "done"


class _Adapter:
    """One live adapter process, spoken to a line at a time."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "reference.adapter"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
            env=env,
        )
        self.seq = 0

    def send(self, cmd: str, **fields: Any) -> None:
        assert self.proc.stdin is not None
        self.seq += 1
        self.proc.stdin.write(request(self.seq, cmd, **fields) + "\n")
        self.proc.stdin.flush()

    def answer(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, "the adapter ended"
        answer: dict[str, Any] = json.loads(line)
        assert answer["seq"] == self.seq
        return answer

    def close(self) -> None:
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=ADAPTER_TIMEOUT_S)
        self.proc.stdout.close()


@pytest.mark.subprocess
def test_two_adapters_editing_one_file_never_lose_an_edit(tmp_path: Path) -> None:
    """SPEC: STATE-LOCK-1, STATE-STALE-2, STATE-SESSION-1"""
    root = tmp_path / "root"
    root.mkdir()
    path = root / "shared.txt"
    adapters = [_Adapter(), _Adapter()]
    words = ["alpha", "beta"]
    lost: list[tuple[int, str]] = []
    done = 0
    try:
        for n, adapter in enumerate(adapters):
            spec = {"root": str(root), "prompt": "allow", "session_dir": str(tmp_path / f"s{n}")}
            adapter.send("begin", session=spec)
            assert adapter.answer() == {"seq": 1, "ok": True}
        for round_ in range(40):
            path.write_text("alpha\nbeta\n")
            os.utime(path, ns=(10**18 + round_ * 10**9, 10**18 + round_ * 10**9))
            for adapter in adapters:  # both sessions have read the same text
                adapter.send(
                    "call", tool_use={"id": "r", "name": "Read", "input": {"file_path": str(path)}}
                )
                assert adapter.answer()["outcome"]["stage"] == "done"
            for adapter, word in zip(adapters, words, strict=True):  # both edit at once
                edit = {
                    "file_path": str(path),
                    "old_string": word,
                    "new_string": f"{word}-{round_}",
                }
                adapter.send("call", tool_use={"id": "e", "name": "Edit", "input": edit})
            answers = [adapter.answer() for adapter in adapters]
            final = path.read_text()
            for answer, word in zip(answers, words, strict=True):
                outcome = answer["outcome"]
                if outcome["stage"] == "done":
                    done += 1
                    if f"{word}-{round_}\n" not in final:
                        lost.append((round_, word))
                else:  # refused honestly: the other session's edit came first
                    refusals = {"FileUnexpectedlyModifiedError", "FileModifiedSinceReadError"}
                    assert outcome["error_name"] in refusals, outcome
            assert final.count("\n") == 2  # never torn, never empty
    finally:
        for adapter in adapters:
            adapter.close()
    assert lost == [], f"{len(lost)} of 40 rounds lost an edit answered done"
    assert done >= 40  # at least one edit of every round went through


@pytest.mark.subprocess
def test_a_start_removes_the_session_dirs_of_killed_adapters_and_no_other(tmp_path: Path) -> None:
    """SPEC: PROTO-END-2, PROTO-BEGIN-2, PROTO-END-1

    Real adapters begun without ``session_dir`` (each makes a temporary one
    and keeps a file history in it) are SIGKILLed; a new adapter's start
    removes their directories, but not a live adapter's, nor a directory
    without an owner lock; and it finishes a removal left as trash.
    """
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    root = tmp_path / "root"
    root.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}

    def begun(n: int) -> tuple[_Adapter, Path]:
        before = set(tmp.iterdir())
        adapter = _Adapter(env)
        adapter.send("begin", session={"root": str(root), "prompt": "allow"})
        assert adapter.answer() == {"seq": 1, "ok": True}
        path = root / f"f{n}.txt"
        path.write_text("old\n")
        read = {"id": "r", "name": "Read", "input": {"file_path": str(path)}}
        edit = {"file_path": str(path), "old_string": "old", "new_string": "new"}
        adapter.send("call", tool_use=read)
        adapter.answer()
        adapter.send("call", tool_use={"id": "e", "name": "Edit", "input": edit})
        assert adapter.answer()["outcome"]["stage"] == "done"
        (made,) = set(tmp.iterdir()) - before
        assert made.name.startswith("toolsys-session-")
        return adapter, made

    killed = [begun(n) for n in range(3)]
    live, live_dir = begun(3)
    unlocked = tmp / "toolsys-session-without-lock"
    (unlocked / "file-history").mkdir(parents=True)
    trash = tmp / "toolsys-trash-cut-short"
    (trash / "file-history").mkdir(parents=True)
    fresh = None
    try:
        for adapter, _ in killed:
            adapter.proc.kill()
            adapter.proc.wait(timeout=ADAPTER_TIMEOUT_S)
        assert all(path.is_dir() for _, path in killed)  # a kill removes nothing
        fresh = _Adapter(env)
        fresh.send("hello", protocol=1)
        assert fresh.answer()["protocol"] == 1
        deadline = time.monotonic() + 30
        while any(p.exists() for _, p in killed) or trash.exists():
            assert time.monotonic() < deadline, sorted(p.name for p in tmp.iterdir())
            time.sleep(0.05)
        assert (live_dir / ".owner.lock").is_file()
        assert unlocked.is_dir()
        live.send("tools")
        assert "tools" in live.answer()  # the live session still serves
    finally:
        live.close()
        if fresh is not None:
            fresh.close()
        for adapter, _ in killed:
            for stream in (adapter.proc.stdin, adapter.proc.stdout):
                if stream is not None:
                    stream.close()
    assert not live_dir.exists()  # its own end removed it (PROTO-END-1)
    assert sorted(p.name for p in tmp.iterdir()) == [unlocked.name]
