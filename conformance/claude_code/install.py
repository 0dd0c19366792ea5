"""Getting a pinned Claude Code release onto this machine, never into the project.

A release is installed on first use with one ``npm install`` into its own
directory of the cache (``$TOOLCONF_CACHE`` or ``~/.cache/toolconf``), under
``claude-code/<version>``; later runs reuse it. ``latest`` is resolved to a
real version number with ``npm view`` first, so results always name the
release they measured.

Two shapes of package exist: 2.1.88 and its neighbours ship a plain
``cli.js`` run by Node; the newest releases ship a native binary in the
platform package ``@anthropic-ai/claude-code-linux-x64``, run directly. npm
skips install scripts here, so the bundled ripgrep of a ``cli.js`` release
has no exec bit; ``ensure_release`` sets it, so Glob and Grep can spawn it.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from conformance.errors import ConformanceError

__all__ = [
    "PACKAGE",
    "ClaudeCodeUnavailable",
    "Release",
    "cache_root",
    "ensure_release",
    "resolve_version",
]

PACKAGE = "@anthropic-ai/claude-code"
"""The npm package of the Claude Code CLI."""

_VERSION = re.compile(r"^\d+\.\d+\.\d+$")
_NPM_TIMEOUT = 600.0


class ClaudeCodeUnavailable(ConformanceError):
    """Claude Code cannot be installed or started here (no node, no npm, no registry)."""


@dataclass(frozen=True, slots=True)
class Release:
    """An installed release: its version and the argv prefix that runs its CLI."""

    version: str
    argv: tuple[str, ...]
    directory: Path


def cache_root() -> Path:
    """Where releases are installed: ``$TOOLCONF_CACHE`` or ``~/.cache/toolconf``."""
    configured = os.environ.get("TOOLCONF_CACHE")
    base = Path(configured) if configured else Path.home() / ".cache" / "toolconf"
    return base / "claude-code"


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise ClaudeCodeUnavailable(
            f"{name} is not on PATH; the claude-code connector needs Node.js and npm "
            "(Debian: apt-get install nodejs npm)"
        )
    return found


def _npm(args: list[str], cwd: Path | None = None) -> str:
    try:
        done = subprocess.run(
            [_tool("npm"), *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=_NPM_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise ClaudeCodeUnavailable(f"npm {' '.join(args)} took over {_NPM_TIMEOUT:g} s") from exc
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip()[-2000:]
        raise ClaudeCodeUnavailable(f"npm {' '.join(args)} failed ({done.returncode}): {detail}")
    return done.stdout


def resolve_version(version: str) -> str:
    """A release number: ``latest`` asks the registry, a number is checked and returned.

    Raises:
        ClaudeCodeUnavailable: npm is missing or the registry cannot be reached.
        ConformanceError: ``version`` is neither ``latest`` nor ``N.N.N``.
    """
    if version == "latest":
        answer = json.loads(_npm(["view", f"{PACKAGE}@latest", "version", "--json"]))
        return str(answer[-1] if isinstance(answer, list) else answer)
    if not _VERSION.match(version):
        raise ConformanceError(f"claude-code:{version}: give a release such as 2.1.88, or latest")
    return version


def ensure_release(version: str) -> Release:
    """The installed release ``version`` (``N.N.N`` or ``latest``), installing it first if needed.

    Raises:
        ClaudeCodeUnavailable: node or npm is missing, or the install failed.
    """
    number = resolve_version(version)
    directory = cache_root() / number
    package = directory / "node_modules" / PACKAGE
    if not (package / "package.json").exists():
        directory.mkdir(parents=True, exist_ok=True)
        _npm(
            ["install", "--no-audit", "--no-fund", "--no-save", f"{PACKAGE}@{number}"],
            cwd=directory,
        )
    return Release(version=number, argv=_entry(package), directory=directory)


def _entry(package: Path) -> tuple[str, ...]:
    cli = package / "cli.js"
    if cli.exists():
        _make_executable(package / "vendor" / "ripgrep")
        return (_tool("node"), str(cli))
    machine = {"x86_64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine())
    native = package.parent / f"claude-code-linux-{machine}" / "claude"
    if machine is None or not native.exists():
        raise ClaudeCodeUnavailable(
            f"{package} has neither cli.js nor a native binary for {platform.machine()}"
        )
    _make_executable(native)
    return (str(native),)


def _make_executable(path: Path) -> None:
    targets = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    for target in targets:
        if target.name in {"rg", "claude"}:
            mode = target.stat().st_mode
            target.chmod(mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
