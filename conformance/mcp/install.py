"""Getting a mapping's peer onto this machine, into the cache, never into the project.

An npm peer is installed the way the Claude Code connector installs a
release (``conformance.claude_code.install``): one ``npm install`` of the
pinned version into its own directory of the cache (``$TOOLCONF_CACHE`` or
``~/.cache/toolconf``), here ``npm/<package>/<version>``; later runs reuse
it. A ``claude_code`` peer is a Claude Code release, installed by that
module. ``python -m conformance.mcp install NAME`` does it ahead of a run.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Final

from conformance.claude_code.install import ClaudeCodeUnavailable, cache_root, ensure_release
from conformance.mcp.mapping import McpMapping

__all__ = ["PeerUnavailable", "ensure_peer", "npm_directory"]

_NPM_TIMEOUT: Final = 600.0


class PeerUnavailable(ClaudeCodeUnavailable):
    """The peer cannot be installed here (no node or npm, no registry)."""


def npm_directory(package: str, version: str) -> Path:
    """The cache directory of one pinned npm package."""
    return cache_root().parent / "npm" / package.replace("/", "+") / version


def _install_npm(package: str, version: str) -> Path:
    directory = npm_directory(package, version)
    installed = directory / "node_modules" / package
    if (installed / "package.json").exists():
        return installed
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise PeerUnavailable(
            f"{package} needs Node.js and npm (Debian: apt-get install nodejs npm)"
        )
    directory.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--no-save", f"{package}@{version}"],
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=_NPM_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise PeerUnavailable(
            f"npm install {package}@{version} took over {_NPM_TIMEOUT:g} s"
        ) from exc
    if done.returncode != 0 or not (installed / "package.json").exists():
        detail = (done.stderr or done.stdout).strip()[-2000:]
        raise PeerUnavailable(f"npm install {package}@{version} failed: {detail}")
    return installed


def ensure_peer(mapping: McpMapping) -> dict[str, str | tuple[str, ...]]:
    """Install the mapping's peer if needed; the placeholders its command may use.

    ``package`` is the installed npm package's directory; ``claude`` the
    argv that runs a Claude Code release.

    Raises:
        PeerUnavailable: the install failed.
    """
    values: dict[str, str | tuple[str, ...]] = {}
    install = mapping.install
    if "npm" in install:
        values["package"] = str(_install_npm(install["npm"], install["version"]))
    if "claude_code" in install:
        try:
            release = ensure_release(install["claude_code"])
        except ClaudeCodeUnavailable as exc:
            raise PeerUnavailable(str(exc)) from exc
        values["claude"] = release.argv
        values["claude_version"] = release.version
    return values
