"""The dispatch pipeline: one tool_use block through every phase (SPEC.md DISP-*).

Phases, in order: find the tool (name or alias); abort check; strict schema;
observable-input backfill; validateInput; call() with the model's original
input; result mapping. Every phase that refuses returns a coded outcome and
nothing after it runs.
"""

from __future__ import annotations

import errno
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from reference import errors
from reference.registry import find_tool
from reference.tool import ContextModifier, ResultContent, Tool, ToolUseContext


@dataclass(frozen=True, slots=True, kw_only=True)
class CallOutcome:
    """Everything the protocol reports about one call."""

    tool_use_id: str
    content: ResultContent
    is_error: bool
    stage: str
    error_code: int | None = None
    error_name: str | None = None
    dedup: bool = False
    output: Mapping[str, Any] | None = None
    persisted_path: str | None = None
    context_modifier: ContextModifier | None = field(default=None, repr=False)
    cascades: str | None = None  # SCHED-CASCADE-2's DESC when this failure cancels siblings

    def to_protocol(self) -> dict[str, Any]:
        return {
            "tool_result": {
                "type": "tool_result",
                "tool_use_id": self.tool_use_id,
                "content": self.content,
                "is_error": self.is_error,
            },
            "outcome": {
                "stage": self.stage,
                "error_code": self.error_code,
                "error_name": self.error_name,
                "dedup": self.dedup,
                "output": dict(self.output) if self.output is not None else None,
                "persisted_path": self.persisted_path,
            },
        }


def aborted_outcome(tool_use_id: str, reason: str | None, detail: str = "") -> CallOutcome:
    """DISP-ABORT-1: the result of a call cancelled for ``reason``.

    ``sibling_error``: SCHED-CASCADE-2; ``user_interrupt`` (and any other
    reason): SCHED-INTERRUPT-2, unwrapped because it reports the user's act.
    """
    if reason == "sibling_error":
        return CallOutcome(
            tool_use_id=tool_use_id,
            content=wrap_error(f"Cancelled: parallel tool call {detail} errored"),
            is_error=True,
            stage="aborted",
            error_name="SiblingErrorAbort",
        )
    return CallOutcome(
        tool_use_id=tool_use_id,
        content="[Request interrupted by user for tool use]",
        is_error=True,
        stage="aborted",
        error_name="UserInterruptAbort",
    )


def cascade_description(tool: Tool, raw_input: Mapping[str, Any], exc: BaseException) -> str | None:
    """SCHED-CASCADE-1/2: DESC when this failure cancels its batch, else None."""
    if tool.name == "Bash":
        command = str(raw_input.get("command", ""))
        return f"Bash({command[:40]}…)" if len(command) > 40 else f"Bash({command})"
    if getattr(exc, "cascades", False) is True:  # a Probe with fail and bash_error
        return f"Probe({raw_input.get('label', '')})"
    return None


def wrap_error(message: str) -> str:
    """ERR-CODE-1/2: what the model sees of an error."""
    return f"<tool_use_error>{message}</tool_use_error>"


_EXPECTED_TYPE = {
    "string_type": "string",
    "int_type": "integer",
    "bool_type": "boolean",
    "float_type": "number",
    "dict_type": "object",
    "list_type": "array",
    "model_type": "object",
    "none_required": "null",
}


def json_type(value: object) -> str:
    """DISP-SCHEMA-2: the JSON type of a value, ``number`` for any number."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    return "object"


def _constraint(issue: Mapping[str, Any]) -> str:
    """DISP-SCHEMA-2's REASON: ``must be >= N``, ``must be <= N``, ``must be one of "a", "b"``."""
    ctx = issue.get("ctx") or {}
    if "ge" in ctx:
        return f"must be >= {ctx['ge']}"
    if "le" in ctx:
        return f"must be <= {ctx['le']}"
    if issue["type"] == "literal_error":
        allowed = re.findall(r"'((?:[^'\\]|\\.)*)'", str(ctx.get("expected", "")))
        return "must be one of " + ", ".join(json.dumps(value) for value in allowed)
    return str(issue["msg"])


def format_schema_error(tool: Tool, raw_input: Mapping[str, Any], exc: ValidationError) -> str:
    """DISP-SCHEMA-1/2: missing, then unexpected, then mistyped or invalid fields."""
    order = {name: index for index, name in enumerate(tool.input_model.model_fields)}
    keys = {name: index for index, name in enumerate(raw_input)}
    missing: list[tuple[int, str]] = []
    extra: list[tuple[int, str]] = []
    invalid: list[tuple[int, str]] = []
    for issue in exc.errors():
        name = ".".join(str(part) for part in issue["loc"])
        top = str(issue["loc"][0]) if issue["loc"] else ""
        kind = issue["type"]
        if kind == "missing":
            missing.append((order.get(top, 0), f"The required parameter `{name}` is missing"))
        elif kind == "extra_forbidden":
            extra.append((keys.get(top, 0), f"An unexpected parameter `{name}` was provided"))
        elif kind in _EXPECTED_TYPE:
            invalid.append(
                (
                    order.get(top, 0),
                    f"The parameter `{name}` type is expected as `{_EXPECTED_TYPE[kind]}` "
                    f"but provided as `{json_type(issue['input'])}`",
                )
            )
        else:
            invalid.append(
                (order.get(top, 0), f"The parameter `{name}` is invalid: {_constraint(issue)}")
            )
    lines = [line for _, line in sorted(missing) + sorted(extra) + sorted(invalid)]
    return schema_error_text(tool.name, lines)


def schema_error_text(tool_name: str, lines: list[str]) -> str:
    plural = "s" if len(lines) > 1 else ""
    header = f"InputValidationError: {tool_name} failed due to the following issue{plural}:"
    return "\n".join([header, *lines])


def classify_error(exc: BaseException) -> str:
    """DISP-CLASSIFY-1: errno code, else a stable name, else ``Error``; never raw text."""
    if isinstance(exc, errors.ToolSystemError):
        return exc.error_name
    if isinstance(exc, OSError) and exc.errno is not None and exc.errno in errno.errorcode:
        return f"Error:{errno.errorcode[exc.errno]}"
    name = type(exc).__name__
    return name[:60] if name != "Exception" and len(name) > 3 else "Error"


def _model_message(tool: Tool, exc: BaseException) -> str:
    """ERR-CODE-2 for named errors; DISP-CLASSIFY-1's fixed text for anything else."""
    if isinstance(exc, errors.ToolSystemError):
        return exc.message
    message = f"Unexpected error in {tool.name}: {classify_error(exc)}"
    if isinstance(exc, OSError) and exc.errno is not None and exc.errno in errno.errorcode:
        message += f" ({os.strerror(exc.errno)})"
    return message


def dispatch(
    tools: Sequence[Tool], tool_use: Mapping[str, Any], ctx: ToolUseContext
) -> CallOutcome:
    """Run one tool_use block through the pipeline; never raises for tool outcomes."""
    tool_use_id = str(tool_use.get("id", ""))
    name = tool_use.get("name")
    raw_input = tool_use.get("input")
    ctx.events.emit("tool_start", id=tool_use_id, name=name)  # PROTO-EVENT-1
    outcome = _run(tools, tool_use_id, name, raw_input, ctx)
    ctx.events.emit("tool_end", id=tool_use_id, stage=outcome.stage)
    return outcome


def _refused(tool_use_id: str, stage: str, message: str, **fields: Any) -> CallOutcome:
    return CallOutcome(
        tool_use_id=tool_use_id, content=wrap_error(message), is_error=True, stage=stage, **fields
    )


def _run(
    tools: Sequence[Tool], tool_use_id: str, name: object, raw_input: object, ctx: ToolUseContext
) -> CallOutcome:
    tool = find_tool(tools, name) if isinstance(name, str) else None
    if tool is None:
        return _refused(  # DISP-FIND-1
            tool_use_id,
            "unknown_tool",
            f"Error: No such tool available: {name}",
            error_name="UnknownToolError",
        )
    if ctx.abort.is_set():  # DISP-ABORT-1
        return aborted_outcome(tool_use_id, ctx.abort.reason, ctx.abort.detail)
    if not isinstance(raw_input, Mapping):
        line = f"The input type is expected as `object` but provided as `{json_type(raw_input)}`"
        return _refused(
            tool_use_id,
            "input_schema",
            schema_error_text(tool.name, [line]),
            error_name="InputValidationError",
        )
    try:
        parsed = tool.input_model.model_validate(dict(raw_input))
    except ValidationError as exc:
        return _refused(  # DISP-SCHEMA-1
            tool_use_id,
            "input_schema",
            format_schema_error(tool, raw_input, exc),
            error_name="InputValidationError",
        )
    if tool.validate_input is not None:
        try:
            tool.validate_input(parsed, ctx)
        except errors.Refusal as refusal:
            return _refused(
                tool_use_id,
                "validate",
                refusal.message,
                error_code=tool.error_code(refusal),
                error_name=refusal.error_name,
            )
        except Exception as exc:  # ERR-CODE-3: e.g. ELOOP from stat; never escapes
            return _refused(
                tool_use_id, "call", _model_message(tool, exc), error_name=classify_error(exc)
            )
    try:
        result = tool.call(parsed, ctx)
    except Exception as exc:  # ERR-CODE-2 / ERR-CODE-3: every failure becomes a coded result
        if ctx.abort.is_set():  # SCHED-ABORT-1: the tool stopped because it was aborted
            return aborted_outcome(tool_use_id, ctx.abort.reason, ctx.abort.detail)
        return _refused(
            tool_use_id,
            "call",
            _model_message(tool, exc),
            error_name=classify_error(exc),
            cascades=cascade_description(tool, raw_input, exc),
        )
    if ctx.abort.reason == "sibling_error":  # SCHED-CASCADE-1: not ended when cancelled
        return aborted_outcome(tool_use_id, ctx.abort.reason, ctx.abort.detail)
    return CallOutcome(
        tool_use_id=tool_use_id,
        content=tool.map_result(result.data),
        is_error=False,
        stage="done",
        dedup=bool(result.outcome.get("dedup", False)),
        output=result.data,
        context_modifier=result.context_modifier,
    )
