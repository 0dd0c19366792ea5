"""Which agent definition ``claude-code:VERSION`` names, and a release installed by it.

Claude Code is two peer definitions of the ``agent:`` connector
(``conformance/peers/agent/definitions/claude-code-N.yaml``, one per measured
release); ``claude-code:VERSION`` is a name for them:

- ``claude-code:N`` for a measured release is its definition, with the
  profile measured on it (PROTO-HELLO-2);
- ``claude-code:latest`` is the newest release the registry has, resolved to
  its number first (``npm view``), so results always name the release they
  measured. It plays ``claude-code-latest``, the profile of the newest
  release measured, whatever its number;
- another ``claude-code:N`` is the definition of the nearest measured release
  below it (the smallest, if none is below), for version N, playing no
  profile: nobody measured it.

A release is installed like every agent (``conformance.peers.agent.install``):
one pinned ``npm install`` into the cache, on first use.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

from conformance.errors import ConformanceError
from conformance.peers import npm
from conformance.peers.agent.definition import AgentDefinition, load_definition, shipped_definitions
from conformance.peers.agent.install import ensure_installed

__all__ = [
    "LATEST_PROFILE",
    "PACKAGE",
    "Release",
    "definition_for",
    "ensure_release",
    "measured_releases",
    "release_definition",
    "resolve_version",
]

PACKAGE: Final = "@anthropic-ai/claude-code"
"""The npm package of the Claude Code CLI."""
LATEST_PROFILE: Final = "claude-code-latest"
"""The profile ``claude-code:latest`` plays (SPEC.md PROFILE-SET-1)."""


@dataclass(frozen=True, slots=True)
class Release:
    """An installed release: its version, the argv prefix that runs its CLI, its directory."""

    version: str
    argv: tuple[str, ...]
    directory: Path


def _number(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def measured_releases() -> dict[str, AgentDefinition]:
    """The shipped Claude Code definitions, by release number, oldest first."""
    found = [load_definition(name) for name in shipped_definitions()]
    releases = {d.install.version: d for d in found if d.install.npm == PACKAGE}
    return {version: releases[version] for version in sorted(releases, key=_number)}


def resolve_version(version: str) -> str:
    """A release number: ``latest`` asks the registry, a number is checked and returned.

    Raises:
        PeerUnavailable: npm is missing or the registry cannot be reached.
        ConformanceError: ``version`` is neither ``latest`` nor ``N.N.N``.
    """
    return npm.resolve_version(PACKAGE, version)


def release_definition(requested: str, number: str) -> AgentDefinition:
    """The definition playing release ``number``, asked for as ``requested`` (``latest`` or
    the number itself).

    Raises:
        ConformanceError: ``number`` is not ``N.N.N``.
    """
    if not all(part.isdigit() for part in number.split(".")) or number.count(".") != 2:
        raise ConformanceError(f"claude-code:{number}: give a release such as 2.1.88, or latest")
    measured = measured_releases()
    if requested == "latest":
        profiles: tuple[str, ...] = (LATEST_PROFILE,)
    else:
        known = measured.get(number)
        if known is not None:
            return known
        profiles = ()
    if number in measured and measured[number].profiles == profiles:
        return measured[number]
    below = [v for v in measured if _number(v) <= _number(number)]
    base = measured[below[-1] if below else next(iter(measured))]
    return _for_release(base, number, profiles)


def _for_release(base: AgentDefinition, number: str, profiles: tuple[str, ...]) -> AgentDefinition:
    """``base`` for release ``number``, playing ``profiles`` (the feature claimed with them)."""
    features = [f for f in base.features if f != "profiles"] + (["profiles"] if profiles else [])
    data = base.model_dump(by_alias=True)
    data["name"] = f"claude-code-{number}"
    data["implementation"]["version"] = number
    data["install"]["version"] = number
    data["features"] = features
    data["profiles"] = list(profiles)
    return AgentDefinition.model_validate(data)


def definition_for(version: str) -> AgentDefinition:
    """The definition ``claude-code:VERSION`` names (``latest`` resolved first).

    Raises:
        PeerUnavailable: ``latest`` cannot be resolved (no npm, no registry).
        ConformanceError: ``version`` is neither ``latest`` nor ``N.N.N``.
    """
    return release_definition(version, resolve_version(version))


def ensure_release(version: str) -> Release:
    """The installed release ``version`` (``N.N.N`` or ``latest``), installing it if needed.

    Raises:
        PeerUnavailable: node or npm is missing, or the install failed.
    """
    definition = definition_for(version)
    agent = ensure_installed(definition)
    argv = definition.launch.argv
    runner = argv[: argv.index("{program}") + 1] if "{program}" in argv else argv[:1]
    return Release(
        version=definition.install.version,
        argv=tuple(str(agent.program) if a == "{program}" else a for a in runner),
        directory=agent.directory,
    )
