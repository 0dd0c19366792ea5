"""A peer agent's definition: one YAML data file per coding-agent CLI, validated here.

A definition (``definitions/NAME.yaml``) says everything the ``agent:NAME``
connector knows of one agent, and nothing is known elsewhere:

- ``implementation``: the name, version and language the hello reports;
- ``install``: the npm package and its pinned version, the program to run
  (relative to the install's ``node_modules``) and any bundled program npm
  left without its exec bit;
- ``launch``: the command line, environment, configuration files and setup
  commands that keep the agent unattended, quiet and offline (no telemetry,
  update checks or plugin fetches), with the placeholders of ``PLACEHOLDERS``;
  the programs it needs on PATH; its timeouts;
- ``model_api``: the dialect it speaks, the model name it is given, and what
  tells its main-loop requests from side requests;
- ``tools``: for each protocol v1 tool the agent plays (Read, Write, Edit,
  Glob, Grep, Bash), its own tool, how the input maps (a template, see
  ``mapping``), the keys it can only behave as, and how the result is read
  back. A protocol tool the agent lacks is absent: it is never played
  through another tool;
- ``inferences``: the explicit table that infers a refusal (``error``) or an
  unchanged-file stub (``dedup``) from a result's text, each row saying why;
- ``features``, ``unreported``, ``profiles``: what the hello claims
  (PROTO-FEATURES-1, PROTO-UNREPORTED-1, PROTO-HELLO-2);
- ``env_knobs``: which of the engine's knobs (``CLAUDE_*`` and the like, a
  session's ``env``) the agent reads; a session setting another has no
  counterpart in it;
- ``escapes``: connection attempts beyond the loopback the agent was measured
  to make whatever its settings, each with why (the run still records them);
- ``limits``: what the definition cannot express, in words, for the notes.

An agent whose tool system is the one this suite models (Claude Code) can do
more than the six tools with every call allowed. Its definition says so with
capabilities, each naming the piece that provides it (``pieces``):

- ``tool_pool: own``: the agent's tool pool is this tool system's own, so a
  protocol tool the definition does not map goes under its own name with
  its input as it is (the agent's own "no such tool" included), and
  ``tools`` answers the tools it offered its model;
- ``results: blocks``: a result goes back as the content blocks the model
  saw (text, image, document), not as text alone;
- ``permissions``: a settings mapper (``"module:attr"``, a
  ``pieces.SettingsMapper``) gives the agent a session's settings sources,
  rules, modes and hooks as its own files and flags; with ``prompt``, the
  agent asks its questions through a prompt tool that answers as the
  session's ``prompt`` says (``{prompt_answer}``) and logs every question
  (``{prompt_log}``), each reported as a ``permission_request`` event;
- ``mcp_servers``: MCP servers the runner's own Python serves the agent, in
  an MCP configuration file (``{mcp_config}``) its command line names; some
  only in sessions with test tools;
- ``test_tools``: the MCP tools that play the Probe test tool
  (PROTO-PROBE-1), one for each concurrency safety;
- ``transcript``: a reader of the agent's stdout (``"module:attr"``, a
  ``pieces.Transcript`` factory) for each call's structured result, the
  results of a turn after which the agent ended the conversation, and its
  last words.

A new agent is still one data file, plus a dialect if it speaks a new API;
an agent with such capabilities is a data file naming its pieces.

The schema is pydantic's, strict and closed: an unknown key, a wrong type or
a feature without its tool (or its capability) is an error naming the file
and the place.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from conformance.errors import ConformanceError

__all__ = [
    "DEFINITIONS_DIR",
    "PLACEHOLDERS",
    "PROTOCOL_TOOLS",
    "AgentDefinition",
    "FileSpec",
    "Inference",
    "McpServer",
    "Permissions",
    "ProbeTools",
    "ResultRule",
    "ToolMap",
    "load_definition",
    "shipped_definitions",
]

DEFINITIONS_DIR: Final = Path(__file__).resolve().parent / "definitions"
"""Where the shipped definitions live; ``agent:NAME`` loads ``NAME.yaml`` from here."""

PROTOCOL_TOOLS: Final = ("Read", "Write", "Edit", "Glob", "Grep", "Bash")
"""The protocol v1 tools an agent's own tools may play."""

PLACEHOLDERS: Final = frozenset(
    {
        "program",
        "package",
        "prompt",
        "base_url",
        "port",
        "model",
        "root",
        "cwd",
        "home",
        "work",
        "mcp_config",
        "prompt_answer",
        "prompt_log",
    }
)
"""What ``{name}`` may stand for in a launch string or a configuration file:
the installed program and package directory, the prompt, the scripted model's
``http://127.0.0.1:PORT`` and port, the model name, the session's root and
cwd, the agent's own home, a working directory of the connector's own, the
MCP configuration file (``mcp_servers``), and the prompt tool's answer and
log (``permissions.prompt``)."""

_FEATURE_TOOL: Final = {
    "read": "Read",
    "write": "Write",
    "edit": "Edit",
    "glob": "Glob",
    "grep": "Grep",
    "bash": "Bash",
}
ProtocolTool = Literal["Read", "Write", "Edit", "Glob", "Grep", "Bash"]
_OWN_POOL_FEATURES: Final = frozenset(
    {
        "token_gate",
        "images",
        "pdf",
        "notebooks",
        "notebook_edit",
        "scheduler",
        "streaming",
        "result_persistence",
        "registry",
    }
)
"""Features only an agent whose tool pool is this tool system's own can show."""
_KNOWN_FEATURES: Final = frozenset(
    {*_FEATURE_TOOL, "dedup", "profiles", "permissions", "hooks", "test_tools"} | _OWN_POOL_FEATURES
)
_VERSION: Final = re.compile(r"^\d+\.\d+\.\d+$")
_PLACEHOLDER: Final = re.compile(r"\{(\w+)\}")
_PIECE: Final = r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Implementation(_Strict):
    """What the hello reports of the agent."""

    name: str = Field(min_length=1)
    version: str
    language: str


class Install(_Strict):
    """How the agent gets into the cache: one pinned ``npm install``."""

    npm: str = Field(min_length=1, description="The npm package.")
    version: str = Field(description="The pinned release, N.N.N.")
    program: str = Field(description="The program to run, relative to the install's node_modules.")
    executable: tuple[str, ...] = Field(
        default=(),
        description="Files under node_modules npm left without the exec bit (globs).",
    )

    @field_validator("version")
    @classmethod
    def _pinned(cls, value: str) -> str:
        if not _VERSION.match(value):
            raise ValueError("a pinned release N.N.N")
        return value


class FileSpec(_Strict):
    """A configuration file written before the agent starts (placeholders expanded)."""

    path: str
    json_: Mapping[str, Any] | None = Field(default=None, alias="json")
    text: str | None = None

    @model_validator(mode="after")
    def _one_body(self) -> FileSpec:
        if (self.json_ is None) == (self.text is None):
            raise ValueError("a file has exactly one of json and text")
        return self


class Launch(_Strict):
    """The command line and surroundings that keep the agent unattended, quiet and offline."""

    argv: tuple[str, ...] = Field(min_length=1)
    env: Mapping[str, str] = Field(default_factory=dict)
    env_json: Mapping[str, Mapping[str, Any]] = Field(
        default_factory=dict, description="Variables holding a JSON document (a config's content)."
    )
    files: tuple[FileSpec, ...] = ()
    setup: tuple[tuple[str, ...], ...] = Field(
        default=(), description="Commands run first, in the same isolation (a CLI's own config)."
    )
    path_tools: tuple[str, ...] = Field(
        default=(), description="Programs the agent needs on PATH, taken from the runner's."
    )
    prompt: str = "Run the tool calls you are given."
    start_timeout: float = Field(default=90.0, gt=0)
    turn_timeout: float = Field(default=60.0, gt=0)
    exit_grace: float = Field(default=10.0, gt=0)


class ModelApi(_Strict):
    """The model API the agent calls and how its requests are told apart."""

    dialect: Literal["anthropic_messages", "openai_chat", "openai_responses", "gemini"]
    model: str = Field(min_length=1)
    main_requires: tuple[str, ...] = Field(
        default=(), description="Tools a request must offer to be a main-loop request."
    )
    side_text: str = "ok"


class ResultRule(_Strict):
    """How a tool result is read back: as text, or from a JSON record the agent wraps it in."""

    format: Literal["text", "json_record"] = "text"
    text_key: str | None = Field(default=None, description="json_record: the result's text.")
    error_key: str | None = Field(default=None, description="json_record: the error's text.")
    ok_key: str | None = Field(default=None, description="json_record: true when it succeeded.")

    @model_validator(mode="after")
    def _keys(self) -> ResultRule:
        if self.format == "json_record" and not self.text_key:
            raise ValueError("a json_record result names its text_key")
        return self


class ToolMap(_Strict):
    """How one protocol tool is played by one of the agent's tools."""

    tool: str = Field(min_length=1, description="The agent's tool.")
    kind: Literal["function", "custom"] = "function"
    input: Any = Field(
        default="same",
        description="'same', or a template (see conformance.peers.agent.mapping).",
    )
    fixed: Mapping[str, Any] = Field(
        default_factory=dict, description="Protocol keys it only behaves as: absent or this value."
    )
    requires: Mapping[str, tuple[str, ...]] = Field(
        default_factory=dict, description="A protocol key the agent takes only with these others."
    )
    path: Literal["any", "absent"] = Field(
        default="any", description="absent: it plays the tool only for a file_path not on disk."
    )
    result: ResultRule = Field(default_factory=ResultRule)


class Inference(_Strict):
    """One row of the table that infers a field from a result's text (PROTO-INFER-1)."""

    means: Literal["error", "dedup"]
    tools: tuple[ProtocolTool, ...] = Field(min_length=1)
    pattern: str = Field(min_length=1, description="A Python regex searched in the result text.")
    why: str = Field(min_length=1, description="What the agent's text says, as measured.")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        re.compile(value)
        return value

    def matches(self, tool: str, text: str) -> bool:
        """Whether this row applies to a ``tool`` result reading ``text``."""
        return tool in self.tools and _compiled(self.pattern).search(text) is not None


class Permissions(_Strict):
    """How the agent is given a session's permission settings, and how it asks."""

    settings: str = Field(
        pattern=_PIECE,
        description="module:attr of a pieces.SettingsMapper: settings to files and flags.",
    )
    prompt: bool = Field(
        default=False,
        description="The agent asks through a prompt tool given {prompt_answer}, logging "
        "each question to {prompt_log}.",
    )


class McpServer(_Strict):
    """An MCP server the runner's own Python serves the agent (``python -m MODULE ARGS``)."""

    name: str = Field(pattern=r"^[A-Za-z0-9_-]+$")
    module: str = Field(pattern=r"^[A-Za-z_][\w.]*$")
    args: tuple[str, ...] = ()
    when: Literal["always", "test_tools"] = Field(
        default="always", description="test_tools: only in a session with test tools."
    )


class ProbeTools(_Strict):
    """The agent's tools that play the Probe test tool (PROTO-PROBE-1), by concurrency safety."""

    probe: str = Field(min_length=1, description="Plays a Probe that is not concurrency-safe.")
    probe_safe: str = Field(min_length=1, description="Plays a concurrency-safe Probe.")


class Escape(_Strict):
    """A connection attempt beyond the loopback the agent makes whatever its settings."""

    target: str = Field(description="As the record names it, e.g. 'dns registry.npmjs.org'.")
    why: str


class AgentDefinition(_Strict):
    """One agent's definition file, validated."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9.-]*$")
    implementation: Implementation
    install: Install
    launch: Launch
    model_api: ModelApi
    tools: Mapping[ProtocolTool, ToolMap]
    inferences: tuple[Inference, ...] = ()
    features: tuple[str, ...]
    unreported: tuple[str, ...] = ()
    profiles: tuple[str, ...] = Field(
        default=(), description="The profiles it plays (PROTO-HELLO-2); none is documented only."
    )
    env_knobs: tuple[str, ...] = Field(
        default=(),
        description="Regexes of the engine knobs (session env variables) the agent reads.",
    )
    escapes: tuple[Escape, ...] = ()
    limits: tuple[str, ...] = Field(default=(), description="What the definition cannot express.")
    tool_pool: Literal["mapped", "own"] = Field(
        default="mapped",
        description="own: the agent's tools are this tool system's; unmapped ones go as they are.",
    )
    results: Literal["text", "blocks"] = Field(
        default="text", description="blocks: results go back as the content blocks the model saw."
    )
    permissions: Permissions | None = None
    mcp_servers: tuple[McpServer, ...] = ()
    test_tools: ProbeTools | None = None
    transcript: str | None = Field(
        default=None,
        pattern=_PIECE,
        description="module:attr of a pieces.Transcript factory reading the agent's stdout.",
    )

    @model_validator(mode="after")
    def _consistent(self) -> AgentDefinition:
        unknown = sorted(set(self.features) - _KNOWN_FEATURES)
        if unknown:
            raise ValueError(f"features {unknown} are not ones an agent definition can claim")
        for feature, tool in _FEATURE_TOOL.items():
            if (feature in self.features) != (tool in self.tools):
                raise ValueError(f"feature {feature} is claimed exactly when {tool} is played")
        self._check_capabilities()
        if ("profiles" in self.features) != bool(self.profiles):
            raise ValueError("the profiles feature is claimed exactly when profiles are named")
        for pattern in self.env_knobs:
            re.compile(pattern)
        dedup_rows = any(row.means == "dedup" for row in self.inferences)
        if ("dedup" in self.features) != dedup_rows:
            raise ValueError("dedup is claimed exactly when an inference row infers it")
        for where, text in self._strings():
            for name in _PLACEHOLDER.findall(text):
                if name not in PLACEHOLDERS:
                    raise ValueError(f"{where}: unknown placeholder {{{name}}}")
        return self

    def _check_capabilities(self) -> None:
        """Each feature beyond the six tools is claimed only with what provides it."""
        features = set(self.features)
        own = sorted(features & _OWN_POOL_FEATURES)
        if own and self.tool_pool != "own":
            raise ValueError(f"features {own} need tool_pool: own")
        if {"images", "pdf"} & features and self.results != "blocks":
            raise ValueError("images and pdf need results: blocks (an image is no text)")
        if self.results == "blocks" and self.model_api.dialect != "anthropic_messages":
            raise ValueError("results: blocks needs a dialect whose results are content blocks")
        if {"permissions", "hooks"} & features and self.permissions is None:
            raise ValueError("permissions and hooks need permissions.settings (a settings mapper)")
        if ("test_tools" in features) != (self.test_tools is not None):
            raise ValueError("test_tools is claimed exactly when test_tools names the Probe tools")
        launched = " ".join(text for _, text in self._launch_strings())
        if self.mcp_servers and "{mcp_config}" not in launched:
            raise ValueError("mcp_servers are given only where the launch names {mcp_config}")
        served = " ".join(a for server in self.mcp_servers for a in server.args)
        if self.permissions is not None and self.permissions.prompt:
            for name in ("{prompt_answer}", "{prompt_log}"):
                if name not in served:
                    raise ValueError(f"permissions.prompt needs an MCP server given {name}")
        names = [server.name for server in self.mcp_servers]
        if len(set(names)) != len(names):
            raise ValueError(f"mcp_servers names repeat: {names}")

    def _strings(self) -> list[tuple[str, str]]:
        found = self._launch_strings()
        found += [
            (f"mcp_servers.{server.name}", a) for server in self.mcp_servers for a in server.args
        ]
        return found

    def _launch_strings(self) -> list[tuple[str, str]]:
        found = [("launch.argv", a) for a in self.launch.argv]
        found += [(f"launch.env.{k}", v) for k, v in self.launch.env.items()]
        found += [(f"launch.env_json.{k}", json.dumps(v)) for k, v in self.launch.env_json.items()]
        found += [("launch.setup", a) for command in self.launch.setup for a in command]
        for spec in self.launch.files:
            found.append(("launch.files.path", spec.path))
            body = spec.text if spec.text is not None else json.dumps(spec.json_)
            found.append((f"launch.files[{spec.path}]", body))
        return found

    def played(self, name: str) -> ToolMap | None:
        """The agent's tool playing the protocol tool ``name``, or None when it has none."""
        for protocol_tool, tool_map in self.tools.items():
            if protocol_tool == name:
                return tool_map
        return None

    @property
    def inference_tools(self) -> frozenset[str]:
        """The protocol tools some inference row reads."""
        return frozenset(tool for row in self.inferences for tool in row.tools)


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def shipped_definitions() -> list[str]:
    """The names of the definitions shipped with the suite."""
    return sorted(p.stem for p in DEFINITIONS_DIR.glob("*.yaml"))


def load_definition(spec: str) -> AgentDefinition:
    """The definition ``spec`` names: a shipped definition's name, or a path to a YAML file.

    Raises:
        ConformanceError: no such definition, or the file is not a valid one.
    """
    candidate = Path(spec)
    path = candidate if candidate.suffix in {".yaml", ".yml"} else DEFINITIONS_DIR / f"{spec}.yaml"
    if not path.is_file():
        names = ", ".join(shipped_definitions())
        raise ConformanceError(f"agent:{spec}: no such definition file or shipped one ({names})")
    try:
        data = yaml.safe_load(path.read_text("utf-8"))
    except yaml.YAMLError as exc:
        raise ConformanceError(f"agent definition {path}: {exc}") from exc
    try:
        return AgentDefinition.model_validate(data)
    except ValidationError as exc:
        raise ConformanceError(f"agent definition {path}: {_explain(exc)}") from exc


def _explain(exc: ValidationError) -> str:
    problems = [
        f"{'.'.join(str(p) for p in error['loc']) or '(top)'}: {error['msg']}"
        for error in exc.errors()
    ]
    return "; ".join(problems[:8])
