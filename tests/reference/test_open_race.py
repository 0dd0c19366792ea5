"""FILE-OPEN-1: the resolution that is checked is the one used, under a flipping symlink.

A thread and a process flip a link between an allowed and a denied target while Reads
and Writes go through the engine; no Read may return the secret and no Write
may create a file in the denied directory. Bounded iterations, no timing
assertions: a race that is not hit simply counts nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from refsupport import Begin

from reference import fileio

ROUNDS = 300
DENY = {"session": {"permissions": {"deny": ["Read(/secret/**)", "Edit(/secret/**)"]}}}


@pytest.fixture(autouse=True)
def _often_switching_threads() -> Iterator[None]:
    """Let the flipping thread run between any two steps of a call, not every 5 ms."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(before)


_FLIP = """
import os, sys
link, a, b = sys.argv[1:4]
spare = link + ".pnext"
n = 0
while True:
    if os.path.lexists(spare):
        os.unlink(spare)
    os.symlink((a, b)[n % 2], spare)
    os.replace(spare, link)  # atomic: the link always exists
    n += 1
"""


class Flipper:
    """Flip ``link`` between two targets on a thread and in a process (two cores)."""

    def __init__(self, link: Path, targets: tuple[Path, Path]) -> None:
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(link, targets), daemon=True)
        self.process = subprocess.Popen(
            [sys.executable, "-c", _FLIP, str(link), *map(str, targets)]
        )
        self.link = link

    def _run(self, link: Path, targets: tuple[Path, Path]) -> None:
        spare = link.with_name(link.name + ".next")
        n = 0
        while not self.stop.is_set():
            if os.path.lexists(spare):
                spare.unlink()
            spare.symlink_to(targets[n % 2])
            os.replace(spare, link)
            n += 1

    def __enter__(self) -> Flipper:
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop.set()
        self.thread.join()
        self.process.kill()
        self.process.wait()


def _call(engine: Any, n: int, name: str, **tool_input: Any) -> dict[str, Any]:
    request = {"seq": n, "cmd": "call", "tool_use": {"id": f"t{n}", "name": name}}
    request["tool_use"]["input"] = tool_input
    response: dict[str, Any] = engine.handle(request)
    return response


@pytest.mark.subprocess
def test_reads_through_a_flipping_link_never_return_the_secret(
    tmp_path: Path, begin: Begin
) -> None:
    """SPEC: FILE-OPEN-1, PERM-PATH-3"""
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "k").write_text("s3cret\n")
    (tmp_path / "open").mkdir()
    (tmp_path / "open" / "a.txt").write_text("open\n")
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "open" / "a.txt")
    engine = begin(settings=DENY, prompt="deny")
    leaks = answered = 0
    with Flipper(link, (tmp_path / "open" / "a.txt", tmp_path / "secret" / "k")):
        for n in range(1, ROUNDS + 1):
            response = _call(engine, n, "Read", file_path=str(link), offset=1 + n % 2)
            answered += "tool_result" in response
            leaks += "s3cret" in str(response)
    assert answered == ROUNDS
    assert leaks == 0
    assert (tmp_path / "secret" / "k").read_text() == "s3cret\n"


@pytest.mark.subprocess
def test_writes_through_a_flipping_directory_link_never_land_in_the_denied_one(
    tmp_path: Path, begin: Begin
) -> None:
    """SPEC: FILE-OPEN-1, WRITE-ATOMIC-1, PERM-READDENY-1"""
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "k").write_text("s3cret\n")
    (tmp_path / "open").mkdir()
    link = tmp_path / "d"
    link.symlink_to(tmp_path / "open")
    engine = begin(settings=DENY, prompt="allow")
    answered = written = 0
    with Flipper(link, (tmp_path / "open", tmp_path / "secret")):
        for n in range(1, ROUNDS + 1):
            response = _call(engine, n, "Write", file_path=f"{link}/w{n}.txt", content="leak\n")
            answered += "tool_result" in response
            written += response.get("outcome", {}).get("stage") == "done"
    assert answered == ROUNDS
    assert written > 0  # the writes ran (through the allowed target), not all refused
    assert sorted(p.name for p in (tmp_path / "secret").iterdir()) == ["k"]  # 0 leaks
    assert (tmp_path / "secret" / "k").read_bytes() == b"s3cret\n"
    assert all(p.read_text() == "leak\n" for p in (tmp_path / "open").iterdir())


def test_a_link_flipped_right_before_the_read_is_refused(
    tmp_path: Path, begin: Begin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: FILE-OPEN-1"""
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "k").write_text("s3cret\n")
    (tmp_path / "a.txt").write_text("open\n")
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "a.txt")
    engine = begin(settings=DENY, prompt="deny")
    original = fileio.read_bytes

    def flip_then_read(path: str) -> bytes:
        link.unlink()
        link.symlink_to(tmp_path / "secret" / "k")  # the worst moment: after every check
        return original(path)

    monkeypatch.setattr(fileio, "read_bytes", flip_then_read)
    response = _call(engine, 1, "Read", file_path=str(link))
    assert "s3cret" not in str(response)
    assert response["tool_result"]["is_error"] is True
    assert response["outcome"]["error_name"] == "OpenedFileDeniedError"


def test_a_link_flipped_right_before_the_write_is_refused(
    tmp_path: Path, begin: Begin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: FILE-OPEN-1, WRITE-ATOMIC-1"""
    (tmp_path / "secret").mkdir()
    (tmp_path / "open").mkdir()
    link = tmp_path / "d"
    link.symlink_to(tmp_path / "open")
    engine = begin(settings=DENY, prompt="allow")
    original = fileio.atomic_write

    def flip_then_write(path: str, data: bytes, **options: bool) -> fileio.Stat:
        link.unlink()
        link.symlink_to(tmp_path / "secret")
        return original(path, data, **options)

    monkeypatch.setattr(fileio, "atomic_write", flip_then_write)
    response = _call(engine, 1, "Write", file_path=f"{link}/new.txt", content="leak\n")
    assert response["tool_result"]["is_error"] is True
    assert response["outcome"]["error_name"] == "OpenedFileDeniedError"
    assert list((tmp_path / "secret").iterdir()) == []
    assert list((tmp_path / "open").iterdir()) == []
