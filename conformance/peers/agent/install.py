"""Where an agent CLI is installed: ``agents/NAME/VERSION`` of the cache, by the npm installer.

An agent is installed on first use with one ``npm install`` of its pinned
release (``conformance.peers.npm.ensure_package``) into its own directory,
``$TOOLCONF_CACHE/agents/NAME/VERSION`` (default ``~/.cache/toolconf``),
never into the project; later runs reuse it. The files a definition names
under ``install.executable`` get their exec bit (npm leaves some bundled
programs without it), and the program must exist: otherwise one
``PeerUnavailable`` says what is missing and how to fix it, as for every
other npm peer.

``check_runnable`` says the same of what running the agent needs beyond its
install: the program its command line starts (``node``), the programs it
needs on PATH, and the loopback-only namespace when isolation is required.
The connector checks both before any scenario, so a machine that cannot run
the agent ends the run with one line rather than failing every scenario.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

from conformance.peers.agent.definition import AgentDefinition
from conformance.peers.agent.loopback import loopback_available
from conformance.peers.npm import PeerUnavailable, cache_root, ensure_package, tool

__all__ = [
    "InstalledAgent",
    "agents_root",
    "check_runnable",
    "ensure_installed",
    "find_path_tool",
    "installed",
]


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


def find_path_tool(name: str) -> str | None:
    """Where the program ``name`` is: on PATH, else beside the running Python (a venv's
    ``bin``, where the ``ripgrep`` extra puts ``rg``); None when it is in neither."""
    found = shutil.which(name)
    if found is not None:
        return found
    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.is_file() and os.access(candidate, os.X_OK) else None


def check_runnable(definition: AgentDefinition, *, isolate: bool | None) -> None:
    """Whether this machine can run ``definition``'s agent, beyond its install.

    Raises:
        PeerUnavailable: the program its command line starts is not on PATH, a
            program it needs on PATH is nowhere, or isolation is required
            (``isolate``) and unavailable; the message says how to fix it.
    """
    first = definition.launch.argv[0]
    if first in {"node", "npm"}:
        tool(first)
    elif "{" not in first and os.sep not in first and shutil.which(first) is None:
        raise PeerUnavailable(f"{definition.name} is started by {first}, which is not on PATH")
    for name in definition.launch.path_tools:
        if find_path_tool(name) is None:
            raise PeerUnavailable(
                f"{definition.name} needs {name} on PATH and none was found "
                "(for ripgrep: pip install ripgrep, or apt-get install ripgrep)"
            )
    if isolate and not loopback_available():
        raise PeerUnavailable(
            "a loopback-only network namespace is required (--isolation on) but unavailable "
            "here: it needs Linux, util-linux's unshare and user or root namespaces "
            "(or run with --isolation off)"
        )
