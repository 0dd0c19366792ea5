"""WRITE-ATOMIC-2: the temporary name of a locked write, and the umask read without a race."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reference import fileio


def test_the_temporary_name_is_fixed_and_short_enough(tmp_path: Path) -> None:
    """SPEC: WRITE-ATOMIC-2"""
    assert fileio.temp_name("a.txt") == ".a.txt.toolsys.tmp"
    long = "x" * 250
    hashed = fileio.temp_name(long)
    assert hashed.startswith(".toolsys-")
    assert hashed.endswith(".tmp")
    assert len(hashed) == len(".toolsys-") + 16 + len(".tmp")
    assert fileio.temp_name(long) == hashed != fileio.temp_name("y" * 250)
    target = tmp_path / long
    target.write_text("old")
    (tmp_path / hashed).write_text("left by a killed writer")
    with fileio.write_lock(str(target)):
        fileio.atomic_write(str(target), b"new")
    assert target.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == [long]


def test_a_leftover_is_never_followed_as_a_link(tmp_path: Path) -> None:
    """SPEC: WRITE-ATOMIC-2"""
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("old")
    (work / ".a.txt.toolsys.tmp").symlink_to(outside)
    with fileio.write_lock(str(work / "a.txt")):
        fileio.atomic_write(str(work / "a.txt"), b"new")
    assert (work / "a.txt").read_bytes() == b"new"
    assert outside.read_text() == "keep me"
    assert sorted(p.name for p in work.iterdir()) == ["a.txt"]


def test_without_the_lock_nothing_is_removed(tmp_path: Path) -> None:
    """SPEC: WRITE-ATOMIC-2"""
    (tmp_path / "a.txt").write_text("old")
    (tmp_path / ".a.txt.toolsys.tmp").write_text("maybe another writer's")
    fileio.atomic_write(str(tmp_path / "a.txt"), b"new")
    assert (tmp_path / ".a.txt.toolsys.tmp").read_text() == "maybe another writer's"


def test_the_umask_is_read_without_setting_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """SPEC: WRITE-ATOMIC-1

    Setting the umask to read it would clear it for every other thread.
    """
    old = os.umask(0o027)
    os.umask(0o027)
    try:

        def no_umask(_mask: int) -> int:
            raise AssertionError("os.umask called while tools may be creating files")

        monkeypatch.setattr(os, "umask", no_umask)
        assert fileio._default_mode() == 0o640
    finally:
        monkeypatch.undo()
        os.umask(old)
