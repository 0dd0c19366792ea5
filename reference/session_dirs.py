"""The temporary session directories the engine makes, and the removal of dead ones.

A session begun without ``session_dir`` gets a temporary directory, removed
at ``end`` (PROTO-BEGIN-2, PROTO-END-1). An engine that is killed never gets
there, so each start of an engine removes the ones dead engines left
(PROTO-END-2), and never one a live engine still uses:

- the owner holds an exclusive ``flock`` on ``OWNER_LOCK`` inside its
  directory for the session's life. The lock file is made and locked under
  another name, then renamed into place, so it is never seen unlocked while
  its owner lives. The descriptor is not inherited by Bash or hooks, so the
  kernel releases the lock exactly when the owner dies;
- a sweeper that gets the lock without waiting knows the owner is gone. While
  holding it, it renames the directory to a ``TRASH_PREFIX`` name (so no
  other sweeper takes it for a session's), then removes it. A directory with
  no lock file (still being made, or made by an engine without this scheme)
  is never touched, nor one owned by another user;
- a trash directory is always a dead one: any sweep removes it, so a removal
  cut short is finished by the next start.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import stat as statmod
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Final

from reference.errors import BadRequest

PREFIX: Final = "toolsys-session-"
TRASH_PREFIX: Final = "toolsys-trash-"
OWNER_LOCK: Final = ".owner.lock"
_UNPLACED_LOCK: Final = ".owner.lock.new"


@dataclass(slots=True)
class OwnedDir:
    """A temporary session directory and the open, locked descriptor that says it is alive."""

    path: str
    _lock: int = field(repr=False)

    def remove(self) -> None:
        """Delete the directory, then let the lock go (PROTO-END-1)."""
        shutil.rmtree(self.path, ignore_errors=True)
        with contextlib.suppress(OSError):
            os.close(self._lock)


def make_owned_dir(parent: str | None = None) -> OwnedDir:
    """A new ``PREFIX`` directory under ``parent`` (the temporary directory), locked as owned."""
    path = tempfile.mkdtemp(prefix=PREFIX, dir=parent)
    unplaced = os.path.join(path, _UNPLACED_LOCK)
    lock = os.open(unplaced, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        os.rename(unplaced, os.path.join(path, OWNER_LOCK))  # seen only once locked
    except OSError:
        os.close(lock)
        shutil.rmtree(path, ignore_errors=True)
        raise
    return OwnedDir(path, lock)


def sweep(parent: str | None = None) -> list[str]:
    """PROTO-END-2: remove the session directories under ``parent`` whose engine died.

    Returns the directories removed (trash left by an earlier sweep included).
    Never raises for a directory it cannot inspect or remove: it leaves it.
    """
    parent = tempfile.gettempdir() if parent is None else parent
    removed: list[str] = []
    try:
        with os.scandir(parent) as listing:
            entries = [e for e in listing if e.name.startswith((PREFIX, TRASH_PREFIX))]
    except OSError:
        return removed
    for entry in entries:
        if not _own_directory(entry):
            continue
        if entry.name.startswith(TRASH_PREFIX):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(entry.path)
        elif (trash := _claim(entry.path)) is not None:
            shutil.rmtree(trash, ignore_errors=True)
            removed.append(entry.path)
    return removed


def _own_directory(entry: os.DirEntry[str]) -> bool:
    """A real directory (not a link to one) of this user."""
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError:
        return False
    return statmod.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()


def _claim(path: str) -> str | None:
    """The trash name ``path`` was moved to if its owner is dead; None if it lives or is gone."""
    lock_path = os.path.join(path, OWNER_LOCK)
    try:
        lock = os.open(lock_path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None  # no lock file: being made, or not made by this scheme
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return None  # held: a live engine's
        try:  # still this directory's lock file, not one a new owner placed since
            if not os.path.samestat(os.fstat(lock), os.stat(lock_path, follow_symlinks=False)):
                return None
            trash = os.path.join(
                os.path.dirname(path), TRASH_PREFIX + os.path.basename(path)[len(PREFIX) :]
            )
            os.rename(path, trash)
        except OSError:
            return None
        return trash
    finally:
        os.close(lock)


_swept = threading.Event()
_sweeping = threading.Lock()


def sweep_once_in_background() -> None:
    """PROTO-END-2 at an engine's start: one sweep per process, on a daemon thread.

    The start does not wait for it; a sweep cut short by an exit leaves only
    trash, which the next start removes.
    """
    with _sweeping:
        if _swept.is_set():
            return
        _swept.set()
    threading.Thread(target=sweep, name="session dir sweep", daemon=True).start()


def make_session_dir(path: str) -> None:
    """PROTO-BEGIN-2: ``path`` made a directory if missing.

    Raises:
        BadRequest: PROTO-BEGIN-4: it exists as something else (a file, a
            device), or cannot be made (a parent that is a file, no
            permission, a name the file system cannot hold).
    """
    try:
        os.makedirs(path, exist_ok=True)
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise BadRequest(f"session.session_dir cannot be made a directory ({reason})") from exc
    if not os.path.isdir(path):
        raise BadRequest("session.session_dir is not a directory")
