"""The dispatch pipeline: one tool_use block through every phase (SPEC.md DISP-*).

Phases, in order: find the tool (name or alias); abort check; strict schema;
observable-input backfill; validateInput; call() with the model's original
input; result mapping. Every phase that refuses returns a coded outcome and
nothing after it runs.
"""

from __future__ import annotations

import errno
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


def wrap_error(message: str) -> str:
    """ERR-CODE-1/2: what the model sees of an error."""
    return f"<tool_use_error>{message}</tool_use_error>"


_JSON_TYPE = {
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
    dict: "object",
    list: "array",
    type(None): "null",
}
_EXPECTED_TYPE = {
    "string_type": "string",
    "int_type": "integer",
    "bool_type": "boolean",
    "float_type": "number",
    "dict_type": "object",
    "list_type": "array",
    "model_type": "object",
}


def format_schema_error(tool_name: str, exc: ValidationError) -> str:
    """DISP schema phase: missing, unexpected and mistyped fields, one per line."""
    lines: list[str] = []
    for issue in exc.errors():
        name = ".".join(str(part) for part in issue["loc"]) or "input"
        kind = issue["type"]
        if kind == "missing":
            lines.append(f"The required parameter `{name}` is missing")
        elif kind == "extra_forbidden":
            lines.append(f"An unexpected parameter `{name}` was provided")
        elif kind in _EXPECTED_TYPE:
            provided = _JSON_TYPE.get(type(issue["input"]), type(issue["input"]).__name__)
            lines.append(
                f"The parameter `{name}` type is expected as `{_EXPECTED_TYPE[kind]}` "
                f"but provided as `{provided}`"
            )
        else:
            lines.append(f"The parameter `{name}` is invalid: {issue['msg']}")
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


def _model_message(exc: BaseException) -> str:
    if isinstance(exc, errors.ToolSystemError):
        return exc.message
    if isinstance(exc, OSError) and exc.strerror:
        return f"Error: {exc.strerror}"
    return f"Error: the tool failed ({classify_error(exc)})"


def dispatch(
    tools: Sequence[Tool], tool_use: Mapping[str, Any], ctx: ToolUseContext
) -> CallOutcome:
    """Run one tool_use block through the pipeline; never raises for tool outcomes."""
    tool_use_id = str(tool_use.get("id", ""))
    name = tool_use.get("name")
    raw_input = tool_use.get("input")
    ctx.events.emit("tool_start", id=tool_use_id)
    try:
        return _run(tools, tool_use_id, name, raw_input, ctx)
    finally:
        ctx.events.emit("tool_end", id=tool_use_id)


def _refused(tool_use_id: str, stage: str, message: str, **fields: Any) -> CallOutcome:
    return CallOutcome(
        tool_use_id=tool_use_id, content=wrap_error(message), is_error=True, stage=stage, **fields
    )


def _run(
    tools: Sequence[Tool], tool_use_id: str, name: object, raw_input: object, ctx: ToolUseContext
) -> CallOutcome:
    tool = find_tool(tools, name) if isinstance(name, str) else None
    if tool is None:
        return _refused(tool_use_id, "unknown_tool", f"Error: No such tool available: {name}")
    if ctx.abort.is_set():
        return _refused(tool_use_id, "aborted", "Interrupted by user")
    if not isinstance(raw_input, Mapping):
        return _refused(
            tool_use_id,
            "input_schema",
            f"InputValidationError: {tool.name} failed due to the following issue:\n"
            "The tool input must be an object",
        )
    try:
        parsed = tool.input_model.model_validate(dict(raw_input))
    except ValidationError as exc:
        return _refused(tool_use_id, "input_schema", format_schema_error(tool.name, exc))
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
    try:
        result = tool.call(parsed, ctx)
    except Exception as exc:  # ERR-CODE-2 / ERR-CODE-3: every failure becomes a coded result
        return _refused(tool_use_id, "call", _model_message(exc), error_name=classify_error(exc))
    return CallOutcome(
        tool_use_id=tool_use_id,
        content=tool.map_result(result.data),
        is_error=False,
        stage="done",
        dedup=bool(result.outcome.get("dedup", False)),
        output=result.data,
        context_modifier=result.context_modifier,
    )
