"""Getting a pinned Claude Code release onto this machine, never into the project.

A release is installed on first use by ``conformance.peers.npm`` into its own
directory of the cache, ``claude-code/<version>``; later runs reuse it. ``latest`` is resolved to a
real version number with ``npm view`` first, so results always name the
release they measured.

Two shapes of package exist: 2.1.88 and its neighbours ship a plain
``cli.js`` run by Node; the newest releases ship a native binary in the
platform package ``@anthropic-ai/claude-code-linux-x64``, run directly. npm
skips install scripts here, so the bundled ripgrep of a ``cli.js`` release
has no exec bit; ``ensure_release`` sets it, so Glob and Grep can spawn it.
"""

from __future__ import annotations

import platform
import stat
from dataclasses import dataclass
from pathlib import Path

from conformance.peers import npm
from conformance.peers.npm import PeerUnavailable

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


class ClaudeCodeUnavailable(PeerUnavailable):
    """Claude Code cannot be installed or started here (no node, no npm, no registry)."""


@dataclass(frozen=True, slots=True)
class Release:
    """An installed release: its version and the argv prefix that runs its CLI."""

    version: str
    argv: tuple[str, ...]
    directory: Path


def cache_root() -> Path:
    """Where releases are installed: ``claude-code`` under the peers' cache root."""
    return npm.cache_root() / "claude-code"


def resolve_version(version: str) -> str:
    """A release number: ``latest`` asks the registry, a number is checked and returned.

    Raises:
        ClaudeCodeUnavailable: npm is missing or the registry cannot be reached.
        ConformanceError: ``version`` is neither ``latest`` nor ``N.N.N``.
    """
    try:
        return npm.resolve_version(PACKAGE, version)
    except PeerUnavailable as exc:
        raise ClaudeCodeUnavailable(str(exc)) from exc


def ensure_release(version: str) -> Release:
    """The installed release ``version`` (``N.N.N`` or ``latest``), installing it first if needed.

    Raises:
        ClaudeCodeUnavailable: node or npm is missing, or the install failed.
    """
    number = resolve_version(version)
    directory = cache_root() / number
    try:
        package = npm.ensure_package(PACKAGE, number, directory)
    except PeerUnavailable as exc:
        raise ClaudeCodeUnavailable(str(exc)) from exc
    return Release(version=number, argv=_entry(package), directory=directory)


def _entry(package: Path) -> tuple[str, ...]:
    cli = package / "cli.js"
    if cli.exists():
        _make_executable(package / "vendor" / "ripgrep")
        return (npm.tool("node"), str(cli))
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
