"""The narrow seam between the tools and the real disk.

Kinds are decided by ``stat`` without opening anything, files are read only
through a descriptor checked to be a regular file (FILE-PATH-4), and every
write is atomic (WRITE-ATOMIC-1). FILE-OPEN-1: the file (or, for a write, the
directory) is opened first and the guard of the running call checks what was
opened, named by the kernel, before a byte is read or written.
"""

from __future__ import annotations

import contextlib
import contextvars
import enum
import fcntl
import hashlib
import os
import stat as statmod
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO, Final, NamedTuple

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
    return _stat_result(st, path)


def _stat_result(st: os.stat_result, path: str) -> Stat:
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


@dataclass(frozen=True, slots=True)
class OpenGuard:
    """FILE-OPEN-1: the running call's checks on what it opened; each raises to refuse.

    ``read`` gets the opened file's real path and ``fstat``; ``write`` gets
    the real path the write will create or replace (the opened directory's
    real path and the name).
    """

    read: Callable[[str, os.stat_result], None]
    write: Callable[[str], None]


_GUARD: contextvars.ContextVar[OpenGuard | None] = contextvars.ContextVar(
    "toolsys_open_guard", default=None
)
_FD_LINKS = "/proc/self/fd/"


@contextlib.contextmanager
def guarded(guard: OpenGuard | None) -> Iterator[None]:
    """FILE-OPEN-1: run the block (one tool call, on its own thread) under ``guard``."""
    token = _GUARD.set(guard)
    try:
        yield
    finally:
        _GUARD.reset(token)


def fd_path(fd: int, fallback: str) -> str:
    """FILE-OPEN-1: the real path of an open descriptor, as the kernel names it.

    Without ``/proc`` (or for a file deleted meanwhile) it is ``realpath``
    of ``fallback``, the path that was opened.
    """
    try:
        named = os.readlink(f"{_FD_LINKS}{fd}")
    except OSError:
        return os.path.realpath(fallback)
    if not named.startswith("/") or named.endswith(" (deleted)"):
        return os.path.realpath(fallback)
    return named


def open_read(path: str) -> BinaryIO:
    """FILE-OPEN-1: open ``path`` for reading, then let the guard check the opened file.

    FILE-PATH-4: the descriptor is ``open_regular``'s, so only a regular file
    (or ``/dev/null``) is ever read.
    """
    handle = open(open_regular(path), "rb")  # noqa: SIM115 - returned to the caller, who closes it
    guard = _GUARD.get()
    if guard is not None:
        try:
            fd = handle.fileno()
            guard.read(fd_path(fd, path), os.fstat(fd))
        except BaseException:
            handle.close()
            raise
    return handle


def read_bytes(path: str) -> bytes:
    """The whole file; FILE-PATH-4 and FILE-OPEN-1, as ``open_read``."""
    with open_read(path) as handle:
        return handle.read()


def read_head(path: str, size: int) -> bytes:
    """At most the first ``size`` bytes; FILE-PATH-4 and FILE-OPEN-1, as ``open_read``."""
    with open_read(path) as handle:
        return handle.read(size)


LOCK_WAIT_S: Final = 30.0  # STATE-LOCK-1: the longest wait for another writer's critical section
LOCK_POLL_S: Final = 0.005


_LOCKED_DIR: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "toolsys_locked_dir", default=None
)
"""The directory whose STATE-LOCK-1 lock this thread holds (WRITE-ATOMIC-2)."""
TEMP_SUFFIX: Final = ".toolsys.tmp"
NAME_MAX: Final = 255


def temp_name(name: str) -> str:
    """WRITE-ATOMIC-2: the one temporary name a locked write of ``name`` uses.

    ``.NAME.toolsys.tmp``, or ``.toolsys-HEX.tmp`` (16 hex digits of the
    SHA-256 of the name) when that would pass the 255-byte name limit.
    """
    candidate = f".{name}{TEMP_SUFFIX}"
    if len(os.fsencode(candidate)) <= NAME_MAX:
        return candidate
    digest = hashlib.sha256(os.fsencode(name)).hexdigest()[:16]
    return f".toolsys-{digest}.tmp"


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
        token = _LOCKED_DIR.set(directory if fd >= 0 else None)
        try:
            yield
        finally:
            _LOCKED_DIR.reset(token)
    finally:
        if fd >= 0:
            os.close(fd)  # releases the lock


def _umask() -> int:
    """The process umask, read without changing it where Linux says it.

    ``os.umask`` can only be read by setting it, and for that moment every
    other thread would create files with no mask at all; ``/proc/self/status``
    has it (Linux 4.7 and later). Elsewhere the read-by-setting fallback.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    umask = os.umask(0o077)
    os.umask(umask)
    return umask


def _default_mode() -> int:
    """WRITE-ATOMIC-1: a new file's permission bits, ``0o666`` less the umask."""
    return 0o666 & ~_umask()


def atomic_write(path: str, data: bytes, *, clean_killed: bool = True) -> Stat:
    """WRITE-ATOMIC-1: temp file beside the target, fsync, keep mode, rename.

    ``clean_killed`` (WRITE-ATOMIC-2, as the session's profile says): under the
    directory lock, write through the one temporary name and remove what a
    killed writer left there; else a random name, and nothing is removed.

    A symlink is followed: its target is replaced and the link stays. Returns
    the ``stat`` of the file as written. FILE-OPEN-1: the target's directory
    is opened once, the guard checks its real path joined with the name, and
    the temporary file, the mode and the rename all go through that
    directory's descriptor, so a link changed meanwhile cannot move the write.
    """
    target = os.path.realpath(path)
    directory, name = os.path.split(target)
    dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        checked = os.path.join(fd_path(dir_fd, directory), name)
        guard = _GUARD.get()
        if guard is not None:
            guard.write(checked)  # FILE-OPEN-1
        try:
            current = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            mode = (
                statmod.S_IMODE(current.st_mode)
                if statmod.S_ISREG(current.st_mode)
                else _default_mode()
            )
        except FileNotFoundError:
            mode = _default_mode()
        if clean_killed and _LOCKED_DIR.get() == directory:
            # WRITE-ATOMIC-2: under the lock no other writer of this directory
            # is running, so a file at the temporary name is a killed writer's
            tmp = temp_name(name)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=dir_fd)
        else:
            tmp = f".{name}.{os.urandom(4).hex()}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(tmp, flags, 0o600, dir_fd=dir_fd)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fchmod(handle.fileno(), mode)
                os.fsync(handle.fileno())
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise
        os.fsync(dir_fd)
        return _stat_result(os.stat(name, dir_fd=dir_fd), checked)
    finally:
        os.close(dir_fd)
