"""Running an implementation under test where it cannot harm its host.

A conformance suite is pointed at unknown, possibly broken code. Three
safeguards, used by ``StdioConnector`` for every adapter process:

- **Isolation** (PROTO-ISOLATE-1): on Linux, with util-linux's ``unshare``,
  the adapter runs in its own mount and PID namespaces. Inside, ``/dev`` is a
  private tmpfs holding bind mounts of the few host devices a tool may open
  (``null``, ``zero``, ``full``, ``random``, ``urandom``, ``tty``), ``/proc``
  is the new PID namespace's own, and the whole file system is read-only
  but for the system temporary directory, where the sandboxes are; the
  runner's real home directory is read-only wherever it lives, under the
  temporary directory too (only a home that is the temporary directory
  itself stays writable, since the sandboxes must). A broken Write of
  ``/dev/null`` then replaces at most a node of the private tmpfs (a rename
  onto a bind mount fails with EBUSY), and nothing is written in the real
  home. ``wrap`` builds the command line; the
  second stage, ``python -m conformance.peers.isolation``, runs inside the
  namespaces, makes the mounts and executes the adapter.
- **Process groups** (PROTO-KILL-1): the adapter is started in a session of
  its own, and stopping it kills its whole process group, then any
  descendant that left the group; in a PID namespace the kernel kills every
  process of the namespace with its first one.
- **A scrubbed environment** (PROTO-ENV-1): ``scrubbed_env`` keeps only an
  allowlist of the runner's variables and points ``HOME`` and ``TMPDIR`` at
  the connector's private directory.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Final

__all__ = [
    "DEVICES",
    "ENV_ALLOWED",
    "descendants",
    "isolation_available",
    "kill_tree",
    "main",
    "real_home",
    "scrubbed_env",
    "wait_gone",
    "wrap",
]

DEVICES: Final = ("null", "zero", "full", "random", "urandom", "tty")
"""The host devices bound into the private ``/dev`` (those that exist)."""

ENV_ALLOWED: Final = re.compile(r"^(PATH|LANG|LANGUAGE|LC_[A-Z_]+|TZ|TERM|PYTHONPATH|TOOLSYS_\w+)$")
"""PROTO-ENV-1: the runner's variables an implementation inherits; every other is dropped.

``PYTHONPATH`` and the project's own ``TOOLSYS_*`` knobs (GREP-ENGINE-1) only
say where code is and which engine to use; nothing secret or home-bound.
"""

_DEV_LINKS: Final = {
    "fd": "/proc/self/fd",
    "stdin": "/proc/self/fd/0",
    "stdout": "/proc/self/fd/1",
    "stderr": "/proc/self/fd/2",
}


def real_home() -> Path | None:
    """The runner's own home directory (``$HOME``, else the password database's)."""
    home = os.environ.get("HOME")
    if not home:
        with contextlib.suppress(KeyError):
            home = pwd.getpwuid(os.getuid()).pw_dir
    return Path(os.path.realpath(home)) if home else None


def scrubbed_env(
    private: Path, *, extra: Mapping[str, str] | None = None, passed: Iterable[str] = ()
) -> dict[str, str]:
    """PROTO-ENV-1: the environment an implementation starts with.

    The runner's variables matching ``ENV_ALLOWED`` or named in ``passed``
    (what the connector declares), ``HOME`` at ``private/home`` and
    ``TMPDIR`` at ``private/tmp`` (both created), then ``extra`` on top.
    """
    names = set(passed)
    env = {k: v for k, v in os.environ.items() if ENV_ALLOWED.match(k) or k in names}
    env.setdefault("PATH", os.defpath)
    for name, sub in (("HOME", "home"), ("TMPDIR", "tmp")):
        where = private / sub
        where.mkdir(parents=True, exist_ok=True)
        env[name] = str(where)
    env.update(extra or {})
    return env


def _unshare_argv() -> list[str]:
    argv = ["unshare", "--mount", "--pid", "--fork", "--mount-proc", "--propagation", "private"]
    argv.append("--kill-child")
    if os.geteuid() != 0:
        argv.insert(1, "--map-root-user")
    return argv


@functools.cache
def isolation_available() -> bool:
    """Whether ``wrap`` works here: Linux, ``unshare`` on PATH, namespaces permitted.

    Tried once per process by running the second stage's own checks on
    ``true`` in a scratch directory.
    """
    if not sys.platform.startswith("linux") or shutil.which("unshare") is None:
        return False
    with tempfile.TemporaryDirectory(prefix="toolconf-isolate-") as scratch:
        argv = wrap(["true"], Path(scratch))
        try:
            done = subprocess.run(argv, capture_output=True, timeout=20, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return False
    return done.returncode == 0


def wrap(argv: Sequence[str], private: Path, *, readonly: Iterable[Path] = ()) -> list[str]:
    """PROTO-ISOLATE-1: ``argv`` run in fresh mount and PID namespaces.

    ``private`` is the connector's own directory (the staging of the private
    ``/dev`` goes there). The whole file system (``/``), the real home and
    every path in ``readonly`` are read-only inside, except the system
    temporary directory (where the runner's sandboxes are) and ``private``.
    """
    # Run as a file, not ``-m``: the second stage needs the standard library only.
    stage = [
        os.path.abspath(sys.executable),
        "-I",
        os.path.abspath(__file__),
        "--private",
        str(private),
    ]
    home = real_home()
    for path in [Path("/"), *([home] if home else []), *readonly]:
        stage += ["--readonly", str(path)]
    for path in (Path(tempfile.gettempdir()).resolve(), private.resolve()):
        stage += ["--writable", str(path)]
    return [*_unshare_argv(), *stage, "--", *argv]


def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True)


def _private_dev(private: Path) -> None:
    """A tmpfs with bind mounts of ``DEVICES``, moved over ``/dev``."""
    staging = private / "dev"
    staging.mkdir(exist_ok=True)
    _mount("-t", "tmpfs", "-o", "mode=0755,nosuid", "toolconf-dev", str(staging))
    for name in DEVICES:
        host = Path("/dev", name)
        if not host.exists():
            continue
        (staging / name).touch()
        _mount("--bind", str(host), str(staging / name))
    for name, target in _DEV_LINKS.items():
        os.symlink(target, staging / name)
    for name in ("shm", "pts"):
        (staging / name).mkdir()
    _mount("-t", "tmpfs", "-o", "mode=1777,nosuid,nodev", "toolconf-shm", str(staging / "shm"))
    _mount("--move", str(staging), "/dev")


def mount_plan(readonly: Iterable[Path], writable: Iterable[Path]) -> list[tuple[Path, bool]]:
    """PROTO-ISOLATE-1: the bind mounts to make, as (path, writable), in order.

    Shallowest first, so that a deeper path overrides what a parent gave it
    whichever list it is in: the real home under the writable temporary
    directory is read-only, a temporary directory under a read-only home is
    writable. A path in both lists is writable (the sandboxes need it). A
    path that already has the mode its nearest planned parent gives it (the
    host's own, writable, without one) is left out; so is one that is not a
    directory.
    """
    modes = {path: False for path in readonly if path.is_dir()}
    modes.update({path: True for path in writable if path.is_dir()})
    plan: list[tuple[Path, bool]] = []
    for path in sorted(modes, key=lambda p: (len(p.parts), str(p))):
        inherited = next((mode for parent, mode in reversed(plan) if parent in path.parents), True)
        if modes[path] != inherited:
            plan.append((path, modes[path]))
    return plan


def _stage_two(private: Path, readonly: list[Path], writable: list[Path], argv: list[str]) -> int:
    """Inside the namespaces: the private /dev, the mounts of ``mount_plan``, exec ``argv``.

    ``/`` is made read-only by remounting this namespace's copy of the root
    mount; any other path gets a bind mount of its own, read-only or writable.
    """
    _private_dev(private)
    for path, rw in mount_plan(readonly, writable):
        if path != Path("/"):
            _mount("--bind", str(path), str(path))
        _mount("-o", f"remount,bind,{'rw' if rw else 'ro'}", str(path))
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        print(f"toolconf isolation: cannot run {argv[0]}: {exc}", file=sys.stderr)
    return 127


def kill_tree(pid: int) -> None:
    """PROTO-KILL-1: SIGKILL the process group ``pid`` leads and every descendant of ``pid``.

    Descendants are found through ``/proc`` (Linux) before anything is
    killed, so one that started a session of its own is killed too.
    """
    family = descendants(pid)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    for child in family:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(child, signal.SIGKILL)


def descendants(pid: int) -> list[int]:
    parents: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            stat = Path("/proc", entry, "stat").read_text()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()
        if len(fields) > 1:
            parents.setdefault(int(fields[1]), []).append(int(entry))
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            if child not in found:
                found.append(child)
                todo.append(child)
    return found


def wait_gone(pids: Iterable[int], timeout: float) -> list[int]:
    """The processes of ``pids`` still alive (not zombies) after up to ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    alive = list(pids)
    while alive:
        alive = [p for p in alive if _alive(p)]
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    return alive


def _alive(pid: int) -> bool:
    try:
        stat = Path("/proc", str(pid), "stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def main(argv: Sequence[str] | None = None) -> int:
    """The second stage of ``wrap`` (run by ``unshare``, never by hand)."""
    parser = argparse.ArgumentParser(prog="python -m conformance.peers.isolation")
    parser.add_argument("--private", type=Path, required=True)
    parser.add_argument("--readonly", type=Path, action="append", default=[])
    parser.add_argument("--writable", type=Path, action="append", default=[])
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command")
    return _stage_two(args.private, args.readonly, args.writable, command)


if __name__ == "__main__":
    sys.exit(main())
