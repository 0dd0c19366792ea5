"""Getting a mapping's peer onto this machine, into the cache, never into the project.

An npm peer is installed by ``conformance.peers.npm``, into
``npm/<package>/<version>`` of the cache; later runs reuse it. A
``claude_code`` peer is a Claude Code release, installed through its agent
definition (``conformance.peers.claude_code.releases``). ``python -m conformance.mcp install
NAME`` does it ahead of a run.
"""

from __future__ import annotations

from conformance.peers import npm
from conformance.peers.claude_code.releases import ensure_release
from conformance.peers.mcp.mapping import McpMapping
from conformance.peers.npm import PeerUnavailable

__all__ = ["PeerUnavailable", "ensure_peer"]


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
        values["package"] = str(npm.ensure_package(install["npm"], install["version"]))
    if "claude_code" in install:
        release = ensure_release(install["claude_code"])
        values["claude"] = release.argv
        values["claude_version"] = release.version
    return values
