"""The one interface every tool implements, and ``build_tool`` (SPEC.md section 1).

A tool is a value, not a subclass: ``build_tool`` fills in fail-closed defaults
(not concurrency-safe, not read-only, not destructive, permissions decided by
the general rule engine) for whatever the tool does not declare.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel

from reference.abort import AbortSignal
from reference.errors import Refusal
from reference.events import EventLog
from reference.paths import expand_path
from reference.session import Session

ContentBlock = dict[str, Any]
ResultContent = str | list[ContentBlock]
InterruptBehavior = Literal["cancel", "block"]
PathRules = Literal["read", "edit"]


class PermissionCheck(NamedTuple):
    """A tool's own opinion on a call (PERM-ORDER-1 steps 3 and 8).

    ``passthrough`` leaves the decision to rules, mode and the user.
    """

    behavior: Literal["allow", "deny", "ask", "passthrough"]
    message: str | None = None


PASSTHROUGH = PermissionCheck("passthrough")


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolUseContext:
    """What a tool's call sees: the session, where it runs, how to report."""

    session: Session
    tool_use_id: str
    cwd: str
    abort: AbortSignal = field(default_factory=AbortSignal)
    events: EventLog = field(default_factory=EventLog)
    probe_trail: tuple[str, ...] = ()  # PROTO-PROBE-3: labels of honoured Probe modifiers
    tools: Sequence[Tool] = ()  # TOOL-CONTEXT-1: the pool (ToolSearch searches it)

    def expand(self, path: str) -> str:
        """FILE-PATH-1 against this context's cwd and the session's home."""
        return expand_path(path, cwd=self.cwd, home=self.session.home)

    def progress(self, data: Mapping[str, Any]) -> None:
        self.events.emit("progress", id=self.tool_use_id, data=dict(data))

    def with_cwd(self, cwd: str) -> ToolUseContext:
        return replace(self, cwd=cwd)

    def with_trail(self, label: str) -> ToolUseContext:
        return replace(self, probe_trail=(*self.probe_trail, label))


ContextModifier = Callable[[ToolUseContext], ToolUseContext]


class ToolResult(NamedTuple):
    """What ``call()`` returns. ``data`` is the tool's structured output.

    A named tuple rather than a dataclass: it is built on every call, the dedup
    hit included, where a frozen dataclass's constructor is measurable.
    """

    data: Mapping[str, Any]
    new_messages: tuple[Mapping[str, Any], ...] = ()
    context_modifier: ContextModifier | None = None
    outcome: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True, kw_only=True)
class McpInfo:
    server_name: str
    tool_name: str


def _never(_input: Any) -> bool:
    return False


def _enabled() -> bool:
    return True


def _passthrough(_input: Any, _ctx: ToolUseContext) -> PermissionCheck:
    """TOOL-DEFAULT-1: the general permission flow decides."""
    return PASSTHROUGH


def _no_classifier_input(_input: Any) -> str:
    return ""


def _json_content(data: Mapping[str, Any]) -> ResultContent:
    return json.dumps(data, ensure_ascii=False, sort_keys=True)


CallFn = Callable[[Any, ToolUseContext], ToolResult]
ValidateFn = Callable[[Any, ToolUseContext], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class Tool:
    """A tool. Build one with :func:`build_tool`; the defaults fail closed."""

    name: str
    input_model: type[BaseModel]
    call: CallFn
    description: str = ""
    aliases: tuple[str, ...] = ()
    validate_input: ValidateFn | None = None
    error_codes: Mapping[type[Refusal], int] = field(default_factory=dict)
    is_enabled: Callable[[], bool] = _enabled
    is_concurrency_safe: Callable[[Any], bool] = _never
    is_read_only: Callable[[Any], bool] = _never
    is_destructive: Callable[[Any], bool] = _never
    map_result: Callable[[Mapping[str, Any]], ResultContent] = _json_content
    max_result_size_chars: float = 100_000
    path_fields: tuple[str, ...] = ()
    check_permissions: Callable[[Any, ToolUseContext], PermissionCheck] = _passthrough
    get_path: Callable[[Any, ToolUseContext], str | None] | None = None
    path_rules: PathRules | None = None  # which path rules apply (PERM-RULE-2)
    classifier_input: Callable[[Any], str] = _no_classifier_input
    interrupt_behavior: InterruptBehavior = "block"
    inputs_equivalent: Callable[[Any, Any, ToolUseContext], bool] | None = None
    should_defer: bool = False
    always_load: bool = False
    mcp_info: McpInfo | None = None

    def matches_name(self, name: str) -> bool:
        """A tool answers to its name and to every alias (REG-LOOKUP-1)."""
        return name == self.name or name in self.aliases

    def error_code(self, refusal: Refusal) -> int:
        """The code the tool's SPEC table gives this refusal.

        Raises:
            KeyError: the tool raised a refusal its table does not list (a bug).
        """
        return self.error_codes[type(refusal)]

    def backfill_observable_input(
        self, raw: Mapping[str, Any], cwd: str, home: str
    ) -> dict[str, Any]:
        """A copy of the model input with path fields expanded (DISP-BACKFILL-1)."""
        observable = dict(raw)
        for name in self.path_fields:
            value = observable.get(name)
            if isinstance(value, str) and "\x00" not in value and not value.startswith("\\\\"):
                observable[name] = expand_path(value, cwd=cwd, home=home)
        return observable


def build_tool(**definition: Any) -> Tool:
    """Make a tool; whatever it does not declare takes the fail-closed default."""
    tool = Tool(**definition)
    if not tool.name:
        raise ValueError("a tool needs a name")
    return tool


UNBOUNDED = math.inf
