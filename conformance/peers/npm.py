"""npm packages in the cache, never in the project: the one installer of every npm peer.

A peer (a Claude Code release, an MCP server, a coding-agent CLI) is installed
on first use with one ``npm install`` of its pinned version into a directory
of its own under the cache root (``$TOOLCONF_CACHE`` or ``~/.cache/toolconf``);
later runs reuse it. A first install says so on stderr and shows npm's own
progress, since it can take minutes. A machine that cannot install (no node,
no npm, no registry, a missing platform package) gets one ``PeerUnavailable``
naming what is missing and how to fix it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Final

from conformance.errors import ConformanceError
from conformance.run.file_lock import held

__all__ = [
    "PeerUnavailable",
    "cache_root",
    "ensure_package",
    "npm_directory",
    "resolve_version",
    "run_npm",
]

_VERSION: Final = re.compile(r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$")
NPM_TIMEOUT: Final = 900.0
"""Seconds one npm command may take (a native agent package is hundreds of MB)."""
_DETAIL: Final = 2000


class PeerUnavailable(ConformanceError):
    """A peer cannot be installed or started here (no node, no npm, no registry)."""


def cache_root() -> Path:
    """The cache every peer is installed under: ``$TOOLCONF_CACHE`` or ``~/.cache/toolconf``."""
    configured = os.environ.get("TOOLCONF_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "toolconf"


def npm_directory(package: str, version: str) -> Path:
    """The cache directory of one pinned npm package that has no directory of its own."""
    return cache_root() / "npm" / package.replace("/", "+") / version


def tool(name: str) -> str:
    """The path of ``node`` or ``npm``.

    Raises:
        PeerUnavailable: it is not on PATH.
    """
    found = shutil.which(name)
    if found is None:
        raise PeerUnavailable(
            f"{name} is not on PATH; npm peers need Node.js and npm "
            "(Debian: apt-get install nodejs npm)"
        )
    return found


def run_npm(args: list[str], cwd: Path | None = None, *, show: bool = False) -> str:
    """Run ``npm ARGS`` and return its stdout.

    ``show`` sends everything npm prints (its progress and its closing
    ``added N packages`` line) to this process's stderr, and returns "": the
    user sees a long install happen, and stdout stays free for a report.

    Raises:
        PeerUnavailable: npm is missing, failed, or took over ``NPM_TIMEOUT``.
    """
    shown = _stderr_fd() if show else None
    try:
        done = subprocess.run(
            [tool("npm"), *args],
            cwd=cwd,
            stdout=subprocess.PIPE if shown is None else shown,
            stderr=subprocess.PIPE if shown is None else shown,
            text=True,
            timeout=NPM_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise PeerUnavailable(f"npm {' '.join(args)} took over {NPM_TIMEOUT:g} s") from exc
    if done.returncode != 0:
        detail = (done.stderr or done.stdout or "").strip()[-_DETAIL:]
        if shown is not None:
            detail = "its output is above"
        hint = " (is the npm registry reachable? npm config get registry)" if not detail else ""
        raise PeerUnavailable(f"npm {' '.join(args)} failed ({done.returncode}){hint}: {detail}")
    return done.stdout or ""


def _stderr_fd() -> int:
    """The descriptor of this process's stderr (pytest's capture may replace the object)."""
    sys.stderr.flush()
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return 2


def resolve_version(package: str, version: str) -> str:
    """A release number: ``latest`` asks the registry; a number is checked and returned.

    Raises:
        PeerUnavailable: npm is missing or the registry cannot be reached.
        ConformanceError: ``version`` is neither ``latest`` nor ``N.N.N``.
    """
    if version == "latest":
        answer = json.loads(run_npm(["view", f"{package}@latest", "version", "--json"]))
        return str(answer[-1] if isinstance(answer, list) else answer)
    if not _VERSION.match(version):
        raise ConformanceError(f"{package}@{version}: give a release such as 1.2.3, or latest")
    return version


def ensure_package(package: str, version: str, directory: Path | None = None) -> Path:
    """The installed ``package@version`` (its directory under ``node_modules``).

    Installs it into ``directory`` (default ``npm_directory``) first if it is
    not there, announcing the first install on stderr.

    Raises:
        PeerUnavailable: node or npm is missing, or the install failed.
    """
    where = directory if directory is not None else npm_directory(package, version)
    installed = where / "node_modules" / package
    try:
        # Runs at once (pytest-xdist workers, shards, --jobs) install one after the other:
        # the first installs, the others find it installed once the lock is theirs.
        with held(where.parent / f".{where.name}.lock", timeout=NPM_TIMEOUT):
            if (installed / "package.json").exists():
                return installed
            _install(package, version, where)
    except TimeoutError as exc:
        raise PeerUnavailable(f"{package}@{version}: {exc}") from exc
    except OSError as exc:
        raise PeerUnavailable(f"{package}@{version}: cannot use the cache: {exc}") from exc
    if not (installed / "package.json").exists():
        raise PeerUnavailable(f"npm install {package}@{version} left no {installed}")
    return installed


def _install(package: str, version: str, where: Path) -> None:
    tool("node")
    where.mkdir(parents=True, exist_ok=True)
    print(
        f"toolconf: installing {package}@{version} into {where} (first use; npm's progress "
        "follows)",
        file=sys.stderr,
        flush=True,
    )
    run_npm(
        ["install", "--no-audit", "--no-fund", "--no-save", f"{package}@{version}"],
        cwd=where,
        show=True,
    )
