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
from typing import Any, Generic, Literal, NamedTuple

from pydantic import BaseModel
from typing_extensions import TypeVar

from reference.abort import AbortSignal
from reference.errors import Refusal
from reference.events import EventLog
from reference.paths import expand_path
from reference.profiles import Profile
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
    expanded: dict[tuple[str, str], str] = field(default_factory=dict, compare=False, repr=False)
    """The call's expanded paths by (cwd, path): each is computed once, at the
    backfill, and carried through validation, permissions and ``call()``."""

    def expand(self, path: str) -> str:
        """FILE-PATH-1 against this context's cwd and the session's home, once per call."""
        key = (self.cwd, path)
        found = self.expanded.get(key)
        if found is None:
            found = self.expanded[key] = expand_path(path, cwd=self.cwd, home=self.session.home)
        return found

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
    input_schema: str = field(default="", compare=False)
    """The server's input schema as compact JSON in the server's key order (what a
    release shows of a deferred tool's schema, REG-DEFER-1)."""


InputT = TypeVar("InputT", bound=BaseModel, default=Any)
"""The tool's input model. A bare ``Tool`` is ``Tool[Any]``: a tool of the pool,
whose input the pipeline only knows as what ``input_model`` parsed."""


def _never(_input: object) -> bool:
    return False


def _enabled() -> bool:
    return True


def _passthrough(_input: object, _ctx: ToolUseContext) -> PermissionCheck:
    """TOOL-DEFAULT-1: the general permission flow decides."""
    return PASSTHROUGH


def _no_classifier_input(_input: object) -> str:
    return ""


def _no_cascade(_input: object, _exc: BaseException) -> str | None:
    """SCHED-CASCADE-3: a tool's failure leaves its siblings running unless it says otherwise.

    This is the fail-closed default. A cascade is an act: it aborts other calls
    and throws their work away. A tool that forgot to declare one, with this
    default, lets its concurrency-safe (read-only, TOOL-PROPS-1) siblings run
    to their end, which can change no file; the opposite default would make
    every new tool's failure cancel unrelated calls, which SCHED-CASCADE-3
    forbids. Only Bash (SCHED-CASCADE-1) and Probe with ``bash_error``
    (PROTO-PROBE-2) override it.
    """
    return None


_NO_ERROR_CODES: Mapping[type[Refusal], int] = MappingProxyType({})


def _json_content(data: Mapping[str, Any], _profile: Profile) -> ResultContent:
    return json.dumps(data, ensure_ascii=False, sort_keys=True)


CallFn = Callable[[InputT, ToolUseContext], ToolResult]
ValidateFn = Callable[[InputT, ToolUseContext], None]
CascadeFn = Callable[[InputT, BaseException], str | None]


@dataclass(frozen=True, slots=True, kw_only=True)
class Tool(Generic[InputT]):
    """A tool over its input model ``InputT`` (SPEC section 1).

    Build one with :func:`build_tool`, which holds the fail-closed defaults;
    every member that takes an input takes the parsed ``InputT``.
    """

    name: str
    input_model: type[InputT]
    call: CallFn[InputT]
    description: str
    aliases: tuple[str, ...]
    validate_input: ValidateFn[InputT] | None
    error_codes: Mapping[type[Refusal], int]
    is_enabled: Callable[[], bool]
    is_concurrency_safe: Callable[[InputT], bool]
    is_read_only: Callable[[InputT], bool]
    is_destructive: Callable[[InputT], bool]
    map_result: Callable[[Mapping[str, Any], Profile], ResultContent]
    """TOOL-MAP-1: the model's text of a result, as the session's profile renders it."""
    max_result_size_chars: float
    path_fields: tuple[str, ...]
    check_permissions: Callable[[InputT, ToolUseContext], PermissionCheck]
    get_path: Callable[[InputT, ToolUseContext], str | None] | None
    path_rules: PathRules | None  # which path rules apply (PERM-RULE-2)
    classifier_input: Callable[[InputT], str]
    interrupt_behavior: InterruptBehavior
    inputs_equivalent: Callable[[InputT, InputT, ToolUseContext], bool] | None
    cascade_description: CascadeFn[InputT]
    should_defer: bool
    always_load: bool
    mcp_info: McpInfo | None

    def matches_name(self, name: str) -> bool:
        """REG-LOOKUP-1: a tool answers to its name and to every alias."""
        return name == self.name or name in self.aliases

    def error_code(self, refusal: Refusal) -> int:
        """The code the tool's SPEC table gives this refusal.

        Raises:
            KeyError: the tool raised a refusal its table does not list (a bug).
        """
        return self.error_codes[type(refusal)]

    def backfill_observable_input(
        self, raw: Mapping[str, Any], expand: Callable[[str], str]
    ) -> dict[str, Any]:
        """DISP-BACKFILL-1: a copy of the model input with path fields expanded by ``expand``."""
        observable = dict(raw)
        for name in self.path_fields:
            value = observable.get(name)
            if isinstance(value, str) and "\x00" not in value and not value.startswith("\\\\"):
                observable[name] = expand(value)
        return observable


def build_tool(
    *,
    name: str,
    input_model: type[InputT],
    call: CallFn[InputT],
    description: str = "",
    aliases: tuple[str, ...] = (),
    validate_input: ValidateFn[InputT] | None = None,
    error_codes: Mapping[type[Refusal], int] = _NO_ERROR_CODES,
    is_enabled: Callable[[], bool] = _enabled,
    is_concurrency_safe: Callable[[InputT], bool] = _never,
    is_read_only: Callable[[InputT], bool] = _never,
    is_destructive: Callable[[InputT], bool] = _never,
    map_result: Callable[[Mapping[str, Any], Profile], ResultContent] = _json_content,
    max_result_size_chars: float = 100_000,
    path_fields: tuple[str, ...] = (),
    check_permissions: Callable[[InputT, ToolUseContext], PermissionCheck] = _passthrough,
    get_path: Callable[[InputT, ToolUseContext], str | None] | None = None,
    path_rules: PathRules | None = None,
    classifier_input: Callable[[InputT], str] = _no_classifier_input,
    interrupt_behavior: InterruptBehavior = "block",
    inputs_equivalent: Callable[[InputT, InputT, ToolUseContext], bool] | None = None,
    cascade_description: CascadeFn[InputT] = _no_cascade,
    should_defer: bool = False,
    always_load: bool = False,
    mcp_info: McpInfo | None = None,
) -> Tool[InputT]:
    """TOOL-DEFAULT-1: make a tool; whatever it does not declare takes the fail-closed default.

    Every member is a keyword of its own, typed against ``input_model``, so a
    misspelled member or a function written for another model is a type error.

    Raises:
        ValueError: ``name`` is empty.
    """
    if not name:
        raise ValueError("a tool needs a name")
    return Tool(
        name=name,
        input_model=input_model,
        call=call,
        description=description,
        aliases=aliases,
        validate_input=validate_input,
        error_codes=error_codes,
        is_enabled=is_enabled,
        is_concurrency_safe=is_concurrency_safe,
        is_read_only=is_read_only,
        is_destructive=is_destructive,
        map_result=map_result,
        max_result_size_chars=max_result_size_chars,
        path_fields=path_fields,
        check_permissions=check_permissions,
        get_path=get_path,
        path_rules=path_rules,
        classifier_input=classifier_input,
        interrupt_behavior=interrupt_behavior,
        inputs_equivalent=inputs_equivalent,
        cascade_description=cascade_description,
        should_defer=should_defer,
        always_load=always_load,
        mcp_info=mcp_info,
    )


def find_tool(tools: Sequence[Tool], name: str) -> Tool | None:
    """REG-LOOKUP-1: the first tool answering to ``name`` or having it as an alias."""
    return next((tool for tool in tools if tool.matches_name(name)), None)


UNBOUNDED = math.inf
