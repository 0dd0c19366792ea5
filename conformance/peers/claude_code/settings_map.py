"""Where each settings source of protocol v1 goes for the Claude Code CLI.

=================  =============================================================
source             what the connector writes or passes
=================  =============================================================
``userSettings``   ``$CLAUDE_CONFIG_DIR/settings.json``: the CLI's config
                   directory, which the connector keeps outside the sandbox
                   (the CLI writes its own state there, and under the
                   session's home it would show up in Glob and Grep)
``projectSettings`` ``<cwd>/.claude/settings.json``
``localSettings``  ``<cwd>/.claude/settings.local.json``
``flagSettings``   a file outside the sandbox, passed as ``--settings FILE``
``cliArg``         flags: ``permissions.allow`` → ``--allowedTools``,
                   ``permissions.deny`` → ``--disallowedTools``,
                   ``permissions.defaultMode`` → ``--permission-mode``,
                   ``permissions.additionalDirectories`` → ``--add-dir``
``session``        its allow and deny rules only, as ``--allowedTools`` and
                   ``--disallowedTools`` (the rules a user grants in a
                   session; no public interface sets them otherwise, and
                   the flag differs only in the source a record would name,
                   which Claude Code does not report)
=================  =============================================================

Anything else cannot be given to the CLI without changing the machine or
guessing, so ``plan`` refuses it with ``Unmappable`` and the scenario is not
applicable: ``policySettings`` (a managed file under ``/etc``), ``command``
(a source only a running interactive session has), a ``session`` mode, ask
rule or hooks, in ``cliArg`` an ``ask`` list or hooks (no flag carries
them), and the keys Claude Code reads from GrowthBook flags rather than
settings files (``fileReadMaxOutputTokens``, ``readDedupKillswitch``: 2.1.88
ignored them in settings.json).

The Probe test tool is served as two MCP tools (``mcp_server``), so a rule or
hook matcher naming ``Probe`` is written for both of their names.

Protocol v1 anchors a path rule written ``Tool(/x)`` at the sandbox root for
every source (PERM-PATH-1); Claude Code anchors ``/x`` at the settings file's
own source (the project for project files, elsewhere for the others, and
the project is the CLI's cwd, not always the root). So the connector writes
every such rule as ``Tool(//<root>/x)``, the CLI's absolute form, and the rule
means what the scenario says whatever the source.

``session_settings`` is the settings mapper the Claude Code definitions name
(``permissions.settings``, a ``conformance.peers.agent.pieces.SettingsMapper``):
``plan`` for the session, with the config directory the definition gives
``CLAUDE_CONFIG_DIR``, the flag file in the connector's own directory, and
the session's root as a working directory when the CLI starts elsewhere.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.errors import ConformanceError
from conformance.peers.agent.pieces import SettingsContext, SettingsPlan
from conformance.peers.claude_code.mcp_server import PROBE_TOOLS
from conformance.peers.peer_rules import Unmappable

__all__ = ["CliSettings", "plan", "session_settings"]

_ANCHORED = re.compile(r"^(?P<tool>[A-Za-z_][\w-]*)\(/(?!/)(?P<rest>.*)\)$")
_FILES = {
    "userSettings": ("config", "settings.json"),
    "projectSettings": ("cwd", ".claude/settings.json"),
    "localSettings": ("cwd", ".claude/settings.local.json"),
}
_UNMAPPABLE = {
    "policySettings": "managed policy settings live in a system file under /etc",
    "command": "command settings exist only inside an interactive session",
}
_FLAG_KEYS = frozenset({"fileReadMaxOutputTokens", "readDedupKillswitch"})
"""Settings keys of protocol v1 that Claude Code takes from its feature flags, not from files."""
_PROBE_RULE = re.compile(r"^Probe(?=$|\()")


@dataclass(slots=True)
class CliSettings:
    """Files to write (absolute path → JSON value) and flags to pass."""

    files: dict[Path, Any] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)


def _anchor(rules: Any, root: str) -> Any:
    if not isinstance(rules, list):
        return rules
    out: list[Any] = []
    for written in rules:
        match = _ANCHORED.match(written) if isinstance(written, str) else None
        rule = f"{match['tool']}(/{root.rstrip('/')}/{match['rest']})" if match else written
        if isinstance(rule, str) and _PROBE_RULE.match(rule):
            out += [_PROBE_RULE.sub(name, rule) for name in PROBE_TOOLS]
        else:
            out.append(rule)
    return out


def _probe_matchers(hooks: Any) -> Any:
    if not isinstance(hooks, dict):
        return hooks
    for groups in hooks.values():
        for group in groups if isinstance(groups, list) else []:
            matcher = group.get("matcher") if isinstance(group, dict) else None
            if isinstance(matcher, str) and re.search(r"\bProbe\b", matcher):
                group["matcher"] = re.sub(r"\bProbe\b", "|".join(PROBE_TOOLS), matcher)
    return hooks


def _anchored(value: Mapping[str, Any], root: str) -> dict[str, Any]:
    copy = json.loads(json.dumps(value))
    if "hooks" in copy:
        copy["hooks"] = _probe_matchers(copy["hooks"])
    permissions = copy.get("permissions")
    if isinstance(permissions, dict):
        for key in ("allow", "deny", "ask"):
            if key in permissions:
                permissions[key] = _anchor(permissions[key], root)
    return dict(copy)


def plan(
    settings: Mapping[str, Any], *, root: str, cwd: str, config: str, flag_file: Path
) -> CliSettings:
    """The files and flags that give the CLI ``settings`` (protocol v1's per-source mapping).

    Raises:
        Unmappable: a source (or part of one) the CLI cannot be given.
    """
    out = CliSettings()
    for source, value in settings.items():
        if not value:
            continue
        _refuse_what_has_no_counterpart(source, value)
        if source in _UNMAPPABLE:
            raise Unmappable(f"settings source {source}: {_UNMAPPABLE[source]}")
        flags = sorted(set(value) & _FLAG_KEYS)
        if flags:
            raise Unmappable(
                f"settings source {source}: {', '.join(flags)} is a GrowthBook flag in Claude "
                "Code (seed 000), which no settings file sets"
            )
        if source in _FILES:
            base, relative = _FILES[source]
            directory = {"config": config, "cwd": cwd}[base]
            out.files[Path(directory) / relative] = _anchored(value, root)
        elif source == "flagSettings":
            out.files[flag_file] = _anchored(value, root)
            out.flags += ["--settings", str(flag_file)]
        elif source == "cliArg":
            out.flags += _cli_flags(_anchored(value, root), source)
        elif source == "session":
            permissions = value.get("permissions") or {}
            if value.get("hooks") or permissions.get("defaultMode"):
                raise Unmappable("settings source session: only its allow and deny rules map")
            out.flags += _cli_flags(_anchored(value, root), source)
        # unknown sources are ignored, as PROTO-BEGIN-1 says
    return out


def _refuse_what_has_no_counterpart(source: str, value: Any) -> None:
    """Settings the CLI would run on, but not as the protocol means them.

    - ``auto`` mode: its classifier (PERM-CLASSIFIER-1) is a model call, which
      the connector's scripted model would answer itself;
    - a Probe rule with a specifier: Probe is an MCP tool in the CLI, and MCP
      tool rules there do not take the built-in tools' specifiers.
    """
    if not isinstance(value, Mapping):
        return
    permissions = value.get("permissions")
    if not isinstance(permissions, Mapping):
        return
    if permissions.get("defaultMode") == "auto":
        raise Unmappable(
            f"settings source {source}: auto mode's classifier is a model call, which the "
            "scripted model cannot answer for"
        )
    for key in ("allow", "deny", "ask"):
        for rule in permissions.get(key) or []:
            if isinstance(rule, str) and rule.startswith("Probe("):
                raise Unmappable(
                    f"settings source {source}: the rule {rule!r} gives the MCP Probe a specifier"
                )


def _cli_flags(value: Mapping[str, Any], source: str) -> list[str]:
    if value.get("hooks"):
        raise Unmappable(f"settings source {source}: no CLI flag carries hooks")
    permissions: Mapping[str, Any] = value.get("permissions") or {}
    if permissions.get("ask"):
        raise Unmappable(f"settings source {source}: no CLI flag carries ask rules")
    flags: list[str] = []
    for key, flag in (("allow", "--allowedTools"), ("deny", "--disallowedTools")):
        rules = permissions.get(key) or []
        if rules:
            flags += [flag, *rules]
    if permissions.get("defaultMode"):
        flags += ["--permission-mode", str(permissions["defaultMode"])]
    for directory in permissions.get("additionalDirectories") or []:
        flags += ["--add-dir", str(directory)]
    unknown = set(value) - {"permissions"} | set(permissions) - {
        "allow",
        "deny",
        "ask",
        "defaultMode",
        "additionalDirectories",
    }
    if unknown:
        raise Unmappable(f"settings source {source}: no CLI flag for {', '.join(sorted(unknown))}")
    return flags


def session_settings(settings: Mapping[str, Any], context: SettingsContext) -> SettingsPlan:
    """The files and flags that give one session's ``settings`` to the CLI.

    Raises:
        Unmappable: what ``plan`` refuses, and a hook reading ``CLAUDE_PROJECT_DIR`` in a
            session whose cwd is not its root (the CLI's project directory is where it starts).
        ConformanceError: the definition gives ``CLAUDE_CONFIG_DIR`` no value.
    """
    root, cwd = context.root, context.cwd
    if Path(cwd) != Path(root) and _hooks_read_project_dir(settings):
        # PROTO-UNSUPPORTED-1: hooks would see CLAUDE_PROJECT_DIR = cwd
        raise Unmappable(
            "a hook reading CLAUDE_PROJECT_DIR in a session whose cwd is not its "
            "root: the CLI's project directory is the directory it starts in"
        )
    config = context.env.get("CLAUDE_CONFIG_DIR")
    if not config:
        raise ConformanceError("a Claude Code definition sets CLAUDE_CONFIG_DIR in launch.env")
    cli = plan(
        settings, root=root, cwd=cwd, config=config, flag_file=Path("{work}/flag-settings.json")
    )
    # PERM-DIRS-1: root is a working directory; the CLI's own is where it starts (cwd)
    extra = ["--add-dir", root] if Path(cwd) != Path(root) else []
    return SettingsPlan(
        files={str(path): value for path, value in cli.files.items()}, argv=[*cli.flags, *extra]
    )


def _hooks_read_project_dir(settings: Mapping[str, Any]) -> bool:
    """Whether a hook command of a session's settings names ``CLAUDE_PROJECT_DIR``.

    Such a hook's result depends on the project directory; hooks that do not
    name it see the same input and cwd as they would with the root as project.
    """
    return "CLAUDE_PROJECT_DIR" in json.dumps(
        [source.get("hooks") for source in settings.values() if isinstance(source, Mapping)]
    )
