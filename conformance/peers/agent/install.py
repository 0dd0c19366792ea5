"""Getting a pinned agent CLI onto this machine: one ``npm install`` into the cache.

An agent is installed on first use into its own directory of the cache,
``$TOOLCONF_CACHE/agents/NAME/VERSION`` (default ``~/.cache/toolconf``), never
into the project; later runs reuse it. npm is asked for nothing else. The
files a definition names under ``install.executable`` get their exec bit
(npm leaves some bundled programs without it), and the program is checked
to exist. Every failure is one ``AgentUnavailable`` line saying what is
missing and how to fix it.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from conformance.errors import ConformanceError
from conformance.peers.agent.definition import AgentDefinition

__all__ = ["AgentUnavailable", "InstalledAgent", "agents_root", "ensure_installed", "installed"]

_NPM_TIMEOUT: Final = 900.0
_REGISTRY_SIGNS: Final = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ENETUNREACH")


class AgentUnavailable(ConformanceError):
    """The agent cannot be installed or started here; the message says which and how to fix it."""


@dataclass(frozen=True, slots=True)
class InstalledAgent:
    """An installed agent: where it is and the program that runs it."""

    directory: Path
    program: Path
    package: Path


def agents_root() -> Path:
    """Where agents are installed: ``$TOOLCONF_CACHE/agents`` or ``~/.cache/toolconf/agents``."""
    configured = os.environ.get("TOOLCONF_CACHE")
    base = Path(configured) if configured else Path.home() / ".cache" / "toolconf"
    return base / "agents"


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
        AgentUnavailable: node or npm is missing, the registry cannot be
            reached, the release or a platform package of it does not exist,
            or the install does not hold the definition's program.
    """
    agent = installed(definition)
    spec = f"{definition.install.npm}@{definition.install.version}"
    if not (agent.package / "package.json").is_file():
        _require("node")
        npm = _require("npm")
        agent.directory.mkdir(parents=True, exist_ok=True)
        _npm_install(npm, spec, agent.directory)
    for pattern in definition.install.executable:
        for target in (agent.directory / "node_modules").glob(pattern):
            if target.is_file():
                mode = target.stat().st_mode
                target.chmod(mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    if not agent.program.exists():
        raise AgentUnavailable(
            f"{spec} is installed in {agent.directory} but has no {definition.install.program}: "
            f"remove that directory and run again, or fix install.program in the definition"
        )
    return agent


def _require(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise AgentUnavailable(
            f"{name} is not on PATH; the agent: connector installs agents with npm and needs "
            "Node.js and npm (Debian: apt-get install nodejs npm)"
        )
    return found


def _npm_install(npm: str, spec: str, directory: Path) -> None:
    argv = [npm, "install", "--no-audit", "--no-fund", "--no-save", spec]
    try:
        done = subprocess.run(
            argv,
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=_NPM_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise AgentUnavailable(
            f"npm install {spec} took over {_NPM_TIMEOUT:g} s; check the network and run again"
        ) from exc
    if done.returncode == 0:
        return
    detail = (done.stderr or done.stdout).strip()
    last = detail.splitlines()[-1] if detail else "(no output)"
    if "ETARGET" in detail or "E404" in detail:
        raise AgentUnavailable(
            f"npm has no {spec} or one of its platform packages (ETARGET/E404): pin another "
            f"release in the definition ({last})"
        )
    if any(sign in detail for sign in _REGISTRY_SIGNS):
        raise AgentUnavailable(
            f"the npm registry cannot be reached to install {spec}: check the network or "
            f"npm's registry setting ({last})"
        )
    raise AgentUnavailable(f"npm install {spec} failed with status {done.returncode}: {last}")
