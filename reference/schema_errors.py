"""The schema phase's error text (DISP-SCHEMA-1, DISP-SCHEMA-2)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from reference.tool import Tool

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
    """DISP-SCHEMA-1, DISP-SCHEMA-2: missing, then unexpected, then mistyped or invalid fields."""
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
