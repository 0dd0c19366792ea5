"""Temporary session directories: owned under a lock, removed once their owner died."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from reference import session_dirs
from reference.session_dirs import OWNER_LOCK, OwnedDir, make_owned_dir, sweep


def _die(owned: OwnedDir) -> None:
    """What a SIGKILL does to an owner: the descriptor closes, the directory stays."""
    os.close(owned._lock)


def test_a_live_directory_stays_and_a_dead_one_goes(tmp_path: Path) -> None:
    """SPEC: PROTO-END-2, PROTO-END-1"""
    live = make_owned_dir(str(tmp_path))
    dead = make_owned_dir(str(tmp_path))
    Path(dead.path, "file-history").mkdir()
    Path(dead.path, "file-history", "backup").write_text("x")
    _die(dead)
    assert sweep(str(tmp_path)) == [dead.path]
    assert not os.path.exists(dead.path)
    assert Path(live.path, OWNER_LOCK).is_file()  # held by this process: alive
    live.remove()
    assert list(tmp_path.iterdir()) == []


def test_what_is_not_a_locked_directory_of_this_user_is_never_touched(tmp_path: Path) -> None:
    """SPEC: PROTO-END-2

    Being made, made without a lock, or a link: left alone.
    """
    being_made = tmp_path / f"{session_dirs.PREFIX}made"
    being_made.mkdir()
    (being_made / ".owner.lock.new").write_text("")  # made, not yet locked and placed
    no_lock = tmp_path / f"{session_dirs.PREFIX}older-engine"
    no_lock.mkdir()
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / OWNER_LOCK).write_text("")
    link = tmp_path / f"{session_dirs.PREFIX}link"
    link.symlink_to(target)
    assert sweep(str(tmp_path)) == []
    assert being_made.is_dir()
    assert no_lock.is_dir()
    assert link.is_symlink()
    assert (target / OWNER_LOCK).is_file()


def test_sweepers_racing_owners_never_remove_a_live_directory(tmp_path: Path) -> None:
    """SPEC: PROTO-END-2

    Owners make directories (half of them then die) while sweepers run
    over and over; every live directory survives, every dead one is gone.
    """
    live: list[OwnedDir] = []
    dead: list[str] = []
    stop = threading.Event()
    lock = threading.Lock()

    def owner() -> None:
        for n in range(60):
            owned = make_owned_dir(str(tmp_path))
            with lock:
                if n % 2:
                    _die(owned)
                    dead.append(owned.path)
                else:
                    live.append(owned)

    def sweeper() -> None:
        while not stop.is_set():
            sweep(str(tmp_path))

    sweepers = [threading.Thread(target=sweeper) for _ in range(3)]
    owners = [threading.Thread(target=owner) for _ in range(3)]
    for thread in (*sweepers, *owners):
        thread.start()
    for thread in owners:
        thread.join(60)
    stop.set()
    for thread in sweepers:
        thread.join(60)
    sweep(str(tmp_path))
    assert all(Path(owned.path, OWNER_LOCK).is_file() for owned in live)
    assert not any(os.path.exists(path) for path in dead)
    for owned in live:
        owned.remove()
    assert list(tmp_path.iterdir()) == []
