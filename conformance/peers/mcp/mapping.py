"""A peer's mapping file: how protocol v1 is played by one MCP server's tools.

A mapping is a YAML file (``conformance/peers/mcp/mappings/NAME.yaml`` ships one per
peer) saying:

- ``implementation``: the name, version and language the hello reports;
- ``install``: how the peer gets onto the machine (``npm`` package and pinned
  ``version``, or a ``claude_code`` release), into the cache, never the project;
- ``command``: the server's argv, ``env`` its extra environment, with
  placeholders ``{python}``, ``{root}``, ``{cwd}``, ``{home}``, ``{work}`` (a
  directory of the connector's own, outside the sandbox), ``{package}`` (the
  installed npm package) and, as a whole item, ``{claude}`` (a Claude Code
  release's argv);
- ``session``: which parts of ``begin`` the server can be given and how:
  ``settings: files`` (each source as a file, passed with ``--settings-source
  NAME=FILE``) or ``none``, and argv added for ``prompt``, ``session_dir`` and
  ``test_tools``;
- ``features``, ``unreported`` and ``inferences``: what the hello says
  (PROTO-FEATURES-1, PROTO-UNREPORTED-1, PROTO-INFER-1);
- ``tools``: for each protocol tool the peer plays, the server tool, how the
  input maps (``same``, or a template whose ``"$key"`` strings take the
  input's values) and ``fixed`` input values the peer can only behave as;
  ``passthrough`` sends any other tool name as it is;
- ``results``: how a result is read back: ``content`` (``blocks``, the MCP
  content as the tool_result content), ``output`` (``json_text``: the text is
  the structured output as JSON; ``none``), ``meta`` (the ``_meta`` keys
  holding the protocol outcome and events, and the request ``_meta`` key for
  the tool_use id);
- ``transport``: ``stdio`` (the default) or ``http``: the command then
  serves streamable HTTP and prints its endpoint's URL, on the loopback
  address, as its first line on stdout (``reference.mcp_server --http``);
- ``task_ids``: how the peer names its background tasks, ``counted``
  (``bash_1``, BASH-BG-1, the default) or ``random``: then a task tool
  naming a counted id has no counterpart (``conformance.peers.peer_rules``).

Honesty (PROTO-MCP-APPLICABLE-1): a mapping only renames and moves what the
peer does. An input the mapping cannot carry (a key it does not map, a
``fixed`` key with another value, a non-object input, a path in the session
directory's own files when the peer is given no ``session_dir``, a counted
task id when it names tasks at random) makes the request ``unsupported``, so
the scenario is not applicable; nothing the peer lacks (line numbers, a
read-before-write check, a dedup stub) is ever added.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from conformance.errors import ConformanceError
from conformance.peers.peer_rules import Unmappable

__all__ = [
    "MAPPINGS_DIR",
    "McpMapping",
    "ResultRules",
    "ToolMap",
    "expand",
    "load_mapping",
    "map_input",
    "shipped_mappings",
]

MAPPINGS_DIR: Final = Path(__file__).resolve().parent / "mappings"
"""Where the shipped mappings live; ``mcp:NAME`` loads ``NAME.yaml`` from here."""

_PLACEHOLDER: Final = re.compile(r"\{(\w+)\}")
_REFERENCE: Final = re.compile(r"^\$(\w+)$")
_CONTENT_RULES: Final = frozenset({"blocks"})
_OUTPUT_RULES: Final = frozenset({"none", "json_text"})


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolMap:
    """How one protocol tool is played by one server tool."""

    tool: str
    """The server tool's name."""
    template: Mapping[str, Any] | None = None
    """The arguments template, or None for ``same`` (the input as it is)."""
    fixed: Mapping[str, Any] = field(default_factory=dict)
    """Input keys the peer can only behave as: allowed absent or with this value."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ResultRules:
    """How a server result is read back as a protocol v1 answer."""

    content: str = "blocks"
    output: str = "none"
    outcome_meta: str | None = None
    events_meta: str | None = None
    tool_use_id_meta: str | None = None
    validate_output: bool = True
    """Check structured content against output schemas, as the SDK does by default."""
    dedup_output_type: str | None = None
    """Infer ``dedup`` as ``output.type`` equal to this (named in the hello's inferences)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class McpMapping:
    """One peer's mapping file, validated."""

    name: str
    path: Path
    implementation: Mapping[str, Any]
    command: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    install: Mapping[str, str] = field(default_factory=dict)
    settings: str = "none"
    session_args: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    features: tuple[str, ...] = ()
    unreported: tuple[str, ...] = ()
    inferences: tuple[Mapping[str, Any], ...] = ()
    tools: Mapping[str, ToolMap] = field(default_factory=dict)
    passthrough: bool = False
    results: ResultRules = field(default_factory=ResultRules)
    start_timeout: float = 60.0
    mode: str = "legacy"
    """The SDK client's negotiation: ``legacy`` (initialize handshake) or ``auto``."""
    task_ids: str = "counted"
    """How the peer names background tasks: ``counted`` (BASH-BG-1) or ``random``."""
    transport: str = "stdio"
    """How the client reaches the server: ``stdio``, or ``http`` at the URL it prints first."""

    def tool_for(self, name: str) -> ToolMap:
        """The server tool playing ``name``.

        Raises:
            Unmappable: the peer plays no such tool and does not pass names through.
        """
        found = self.tools.get(name)
        if found is not None:
            return found
        if self.passthrough:
            return ToolMap(tool=name)
        raise Unmappable(f"{self.name} has no tool playing {name}")


def _problem(path: Path, message: str) -> ConformanceError:
    return ConformanceError(f"MCP mapping {path}: {message}")


def _strings(value: object, path: Path, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _problem(path, f"{what} must be a list of strings")
    return tuple(value)


def _tool_map(name: str, value: object, path: Path) -> ToolMap:
    if isinstance(value, str):
        return ToolMap(tool=value)
    if not isinstance(value, Mapping) or not isinstance(value.get("tool"), str):
        raise _problem(path, f"tools.{name} needs a tool name")
    template = value.get("input", "same")
    if template != "same" and not isinstance(template, Mapping):
        raise _problem(path, f"tools.{name}.input must be 'same' or a mapping")
    fixed = value.get("fixed") or {}
    if not isinstance(fixed, Mapping):
        raise _problem(path, f"tools.{name}.fixed must be a mapping")
    return ToolMap(
        tool=str(value["tool"]),
        template=None if template == "same" else dict(template),
        fixed=dict(fixed),
    )


def load_mapping(spec: str) -> McpMapping:
    """The mapping ``spec`` names: a shipped mapping's name, or a path to a YAML file.

    Raises:
        ConformanceError: no such mapping, or the file is malformed.
    """
    candidate = Path(spec)
    path = candidate if candidate.suffix in {".yaml", ".yml"} else MAPPINGS_DIR / f"{spec}.yaml"
    if not path.is_file():
        names = ", ".join(shipped_mappings())
        raise ConformanceError(f"mcp:{spec}: no such mapping file or shipped mapping ({names})")
    try:
        data = yaml.safe_load(path.read_text("utf-8"))
    except yaml.YAMLError as exc:
        raise _problem(path, str(exc)) from exc
    if not isinstance(data, Mapping):
        raise _problem(path, "not a mapping")
    implementation = data.get("implementation")
    if not isinstance(implementation, Mapping) or not {"name", "version", "language"} <= set(
        implementation
    ):
        raise _problem(path, "implementation needs a name, a version and a language")
    command = _strings(data.get("command"), path, "command")
    if not command:
        raise _problem(path, "command is required")
    session = data.get("session") or {}
    settings = str(session.get("settings", "none"))
    if settings not in {"none", "files", "allow_only"}:
        raise _problem(path, "session.settings must be none, files or allow_only")
    session_args = {
        key: _strings(session.get(key), path, f"session.{key}")
        for key in ("prompt", "session_dir", "test_tools")
        if key in session
    }
    results = data.get("results") or {}
    meta = results.get("meta") or {}
    rules = ResultRules(
        content=str(results.get("content", "blocks")),
        output=str(results.get("output", "none")),
        outcome_meta=meta.get("outcome"),
        events_meta=meta.get("events"),
        tool_use_id_meta=meta.get("tool_use_id"),
        dedup_output_type=(results.get("infer") or {}).get("dedup_output_type"),
        validate_output=bool(results.get("validate_output", True)),
    )
    if rules.content not in _CONTENT_RULES or rules.output not in _OUTPUT_RULES:
        raise _problem(path, f"results: content one of {_CONTENT_RULES}, output of {_OUTPUT_RULES}")
    tools = data.get("tools") or {}
    if not isinstance(tools, Mapping):
        raise _problem(path, "tools must be a mapping")
    env = data.get("env") or {}
    install = data.get("install") or {}
    inferences = tuple(dict(i) for i in data.get("inferences") or ())
    mode = str(data.get("mode", "legacy"))
    if mode not in {"legacy", "auto"}:
        raise _problem(path, "mode must be legacy or auto")
    transport = str(data.get("transport", "stdio"))
    if transport not in {"stdio", "http"}:
        raise _problem(path, "transport must be stdio or http")
    task_ids = str(data.get("task_ids", "counted"))
    if task_ids not in {"counted", "random"}:
        raise _problem(path, "task_ids must be counted or random")
    return McpMapping(
        name=str(data.get("name") or path.stem),
        path=path,
        implementation=dict(implementation),
        command=command,
        env={str(k): str(v) for k, v in env.items()},
        install={str(k): str(v) for k, v in install.items()},
        settings=settings,
        session_args=session_args,
        features=_strings(data.get("features"), path, "features"),
        unreported=_strings(data.get("unreported"), path, "unreported"),
        inferences=inferences,
        tools={str(k): _tool_map(str(k), v, path) for k, v in tools.items()},
        passthrough=bool(data.get("passthrough", False)),
        results=rules,
        start_timeout=float(data.get("start_timeout", 60.0)),
        mode=mode,
        task_ids=task_ids,
        transport=transport,
    )


def shipped_mappings() -> list[str]:
    """The names of the mappings shipped with the suite."""
    return sorted(p.stem for p in MAPPINGS_DIR.glob("*.yaml"))


def expand(text: str, values: Mapping[str, str]) -> str:
    """``text`` with each ``{name}`` replaced; an unknown name is a mapping error.

    Raises:
        ConformanceError: a placeholder this connector does not know.
    """

    def one(match: re.Match[str]) -> str:
        key = match[1]
        if key not in values:
            raise ConformanceError(f"unknown placeholder {{{key}}} in an MCP mapping")
        return values[key]

    return _PLACEHOLDER.sub(one, text)


def map_input(tool: str, tool_map: ToolMap, tool_input: object) -> dict[str, Any]:
    """The server tool's arguments for a protocol tool_use input (PROTO-MCP-APPLICABLE-1).

    Raises:
        Unmappable: the input is not an object, holds a key the mapping does
            not carry, or a ``fixed`` key with another value.
    """
    if not isinstance(tool_input, Mapping):
        raise Unmappable(f"an MCP tool takes an object; {tool}'s input here is not one")
    for key, value in tool_map.fixed.items():
        if key in tool_input and tool_input[key] != value:
            raise Unmappable(f"the peer's {tool_map.tool} behaves as {key}={value!r} only")
    if tool_map.template is None:
        return {k: v for k, v in tool_input.items() if k not in tool_map.fixed}
    used: set[str] = set()
    arguments = _fill(tool_map.template, tool_input, used)
    extra = sorted(set(tool_input) - used - set(tool_map.fixed))
    if extra:
        raise Unmappable(f"the peer's {tool_map.tool} has no counterpart for {tool}'s {extra}")
    if not isinstance(arguments, dict):
        raise Unmappable(f"the mapping of {tool} does not make an object")
    return arguments


_ABSENT: Final = object()


def _fill(template: object, tool_input: Mapping[str, Any], used: set[str]) -> Any:
    """The template with ``"$key"`` strings replaced; a dict entry of an absent key is left out."""
    if isinstance(template, str):
        match = _REFERENCE.match(template)
        if match is None:
            return template
        used.add(match[1])
        return tool_input.get(match[1], _ABSENT)
    if isinstance(template, Mapping):
        out = {}
        for key, value in template.items():
            filled = _fill(value, tool_input, used)
            if filled is not _ABSENT:
                out[str(key)] = filled
        return out
    if isinstance(template, Sequence):
        items = [_fill(v, tool_input, used) for v in template]
        if any(item is _ABSENT for item in items):
            raise Unmappable("a list item of the mapping names an input key that is absent")
        return items
    return template
