"""The narrow seam between the tools and the real disk.

Kinds are decided by ``stat`` without opening anything, files are read only
through a descriptor checked to be a regular file (FILE-PATH-4), and every
write is atomic (WRITE-ATOMIC-1).
"""

from __future__ import annotations

import contextlib
import enum
import fcntl
import os
import stat as statmod
import tempfile
import time
from collections.abc import Iterator
from typing import Final, NamedTuple

from reference import errors
from reference.paths import DEV_NULL


class FileKind(enum.Enum):
    MISSING = "missing"
    REGULAR = "regular"
    DIRECTORY = "directory"
    DEV_NULL = "dev_null"
    OTHER = "other"  # FIFO, socket, block or character device


class Stat(NamedTuple):
    """The part of ``os.stat`` the tools decide on (a tuple: cheap on the dedup path)."""

    kind: FileKind
    mtime_ns: int = 0
    size: int = 0
    mode: int = 0


MISSING = Stat(kind=FileKind.MISSING)
_FORMAT_BITS = 0o170000  # stat.S_IFMT without the function call
_KIND_BY_FORMAT = {statmod.S_IFREG: FileKind.REGULAR, statmod.S_IFDIR: FileKind.DIRECTORY}
_OTHER = FileKind.OTHER
# Stat's own constructor is a Python function; the tuple one is not. The dedup
# hit is one call to ``stat`` (READ-DEDUP-2), so its overhead over ``os.stat``
# is most of what a hit costs.
_new_stat = Stat._make


def stat(path: str) -> Stat:
    """Follow symlinks, never open the file (FILE-PATH-4)."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return MISSING
    mode = st.st_mode
    kind = _KIND_BY_FORMAT.get(mode & _FORMAT_BITS, _OTHER)
    if kind is _OTHER and path == DEV_NULL and statmod.S_ISCHR(mode):
        kind = FileKind.DEV_NULL
    return _new_stat((kind, st.st_mtime_ns, st.st_size, mode))


def open_regular(path: str) -> int:
    """FILE-PATH-4: a blocking descriptor of ``path``, checked on itself to be a regular file.

    The open cannot block: it is made with ``O_NONBLOCK`` (a FIFO put in the
    file's place after its ``stat`` opens at once instead of waiting for a
    writer), then the descriptor itself is ``fstat``-ed, and anything but a
    regular file (or ``/dev/null``) is closed unread. Raises
    ``FileVanishedError`` for that (the file was swapped since its ``stat``),
    ``OSError`` for the open.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not statmod.S_ISREG(mode) and not (path == DEV_NULL and statmod.S_ISCHR(mode)):
            raise errors.FileVanishedError(f"{path} is no longer a regular file.")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(path: str) -> bytes:
    """The whole file; FILE-PATH-4: only ever a regular file (``open_regular``)."""
    with open(open_regular(path), "rb") as handle:
        return handle.read()


def read_head(path: str, size: int) -> bytes:
    """At most the first ``size`` bytes; FILE-PATH-4, as ``read_bytes``."""
    with open(open_regular(path), "rb") as handle:
        return handle.read(size)


LOCK_WAIT_S: Final = 30.0  # STATE-LOCK-1: the longest wait for another writer's critical section
LOCK_POLL_S: Final = 0.005


@contextlib.contextmanager
def write_lock(path: str) -> Iterator[None]:
    """STATE-LOCK-1: hold the lock of the directory the write to ``path`` lands in.

    An exclusive ``flock`` on the directory of the real target (symlinks
    followed, as ``atomic_write`` follows them), so every process and thread
    writing there through these tools takes turns, and nothing is left on
    disk: the lock dies with the descriptor, even on SIGKILL. The wait is
    bounded by ``LOCK_WAIT_S``, then ``FileLockTimeoutError``. A directory that
    cannot be opened for reading gets no lock.
    """
    directory = os.path.dirname(os.path.realpath(path))
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        fd = -1
    try:
        if fd >= 0:
            deadline = time.monotonic() + LOCK_WAIT_S
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise errors.FileLockTimeoutError(
                            f"Another writer held {directory} for {LOCK_WAIT_S:.0f} s; "
                            "nothing was written."
                        ) from None
                    time.sleep(LOCK_POLL_S)
        yield
    finally:
        if fd >= 0:
            os.close(fd)  # releases the lock


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def atomic_write(path: str, data: bytes) -> Stat:
    """WRITE-ATOMIC-1: temp file beside the target, fsync, keep mode, rename.

    A symlink is followed: its target is replaced and the link stays. Returns
    the ``stat`` of the file as written.
    """
    target = os.path.realpath(path)
    directory = os.path.dirname(target)
    try:
        mode = statmod.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = _default_mode()
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return stat(target)
