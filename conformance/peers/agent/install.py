"""Where an agent CLI is installed: ``agents/NAME/VERSION`` of the cache, by the npm installer.

An agent is installed on first use with one ``npm install`` of its pinned
release (``conformance.peers.npm.ensure_package``) into its own directory,
``$TOOLCONF_CACHE/agents/NAME/VERSION`` (default ``~/.cache/toolconf``),
never into the project; later runs reuse it. The files a definition names
under ``install.executable`` get their exec bit (npm leaves some bundled
programs without it), and the program must exist: otherwise one
``PeerUnavailable`` says what is missing and how to fix it, as for every
other npm peer.
"""

from __future__ import annotations

import stat
from dataclasses import dataclass
from pathlib import Path

from conformance.peers.agent.definition import AgentDefinition
from conformance.peers.npm import PeerUnavailable, cache_root, ensure_package

__all__ = ["InstalledAgent", "agents_root", "ensure_installed", "installed"]


@dataclass(frozen=True, slots=True)
class InstalledAgent:
    """An installed agent: where it is and the program that runs it."""

    directory: Path
    program: Path
    package: Path


def agents_root() -> Path:
    """Where agents are installed: ``agents`` under the cache root."""
    return cache_root() / "agents"


def installed(definition: AgentDefinition) -> InstalledAgent:
    """Where ``definition``'s agent is (or would be) installed; nothing is checked."""
    directory = agents_root() / definition.name / definition.install.version
    modules = directory / "node_modules"
    return InstalledAgent(
        directory=directory,
        program=modules / definition.install.program,
        package=modules / definition.install.npm,
    )


def ensure_installed(definition: AgentDefinition) -> InstalledAgent:
    """The installed agent of ``definition``, installing it first if it is not.

    Raises:
        PeerUnavailable: node or npm is missing, the install failed (no
            registry, a release or platform package npm does not have), or
            the install holds no program where the definition says.
    """
    agent = installed(definition)
    ensure_package(definition.install.npm, definition.install.version, agent.directory)
    for pattern in definition.install.executable:
        for target in (agent.directory / "node_modules").glob(pattern):
            if target.is_file():
                mode = target.stat().st_mode
                target.chmod(mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    if not agent.program.exists():
        raise PeerUnavailable(
            f"{definition.install.npm}@{definition.install.version} is installed in "
            f"{agent.directory} but has no {definition.install.program} (a platform package "
            "npm skipped?): remove that directory and run again"
        )
    return agent
