"""The schema phase's error text (DISP-SCHEMA-1, DISP-SCHEMA-2).

The documented lines are written here; where a profile's release words a line
otherwise the line comes from ``Profile.text`` (``reference.texts``), and
where it leaves constraint breaches out (``Profile.schema_constraints``) their
issues are shown, when nothing else is, as the release's issue list.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from reference.profiles import DOCUMENTED, Profile
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


def _allowed(issue: Mapping[str, Any]) -> list[str]:
    """The values a ``Literal`` field takes, from pydantic's ``expected`` text."""
    ctx = issue.get("ctx") or {}
    return re.findall(r"'((?:[^'\\]|\\.)*)'", str(ctx.get("expected", "")))


def _constraint(issue: Mapping[str, Any]) -> str:
    """DISP-SCHEMA-2's REASON: ``must be >= N``, ``must be <= N``, ``must be one of "a", "b"``."""
    ctx = issue.get("ctx") or {}
    if "ge" in ctx:
        return f"must be >= {ctx['ge']}"
    if "le" in ctx:
        return f"must be <= {ctx['le']}"
    if issue["type"] == "literal_error":
        return "must be one of " + ", ".join(json.dumps(value) for value in _allowed(issue))
    return str(issue["msg"])


def _expected(kind: str, given: object, profile: Profile) -> str:
    """DISP-SCHEMA-2's T; an integer field's name for it is the profile's text, which a
    release words by what was given (no number, or a number with a fraction)."""
    if kind != "int_type":
        return _EXPECTED_TYPE[kind]
    key = "schema_integer_fraction" if json_type(given) == "number" else "schema_integer_type"
    return profile.text(key)


def _issue_object(issue: Mapping[str, Any]) -> dict[str, Any]:
    """DISP-SCHEMA-2 where constraints are issues: one breached constraint as the release
    lists it (its kind, bound, path and message)."""
    ctx = issue.get("ctx") or {}
    path = list(issue["loc"])
    if "ge" in ctx:
        bound = ctx["ge"]
        if bound == 1:  # a whole number of at least 1: the release's "more than 0"
            return {
                "origin": "number",
                "code": "too_small",
                "minimum": 0,
                "inclusive": False,
                "path": path,
                "message": "Too small: expected number to be >0",
            }
        return {
            "origin": "number",
            "code": "too_small",
            "minimum": bound,
            "inclusive": True,
            "path": path,
            "message": f"Too small: expected number to be >={bound}",
        }
    if "le" in ctx:
        bound = ctx["le"]
        return {
            "origin": "number",
            "code": "too_big",
            "maximum": bound,
            "inclusive": True,
            "path": path,
            "message": f"Too big: expected number to be <={bound}",
        }
    if issue["type"] == "literal_error":
        allowed = _allowed(issue)
        return {
            "code": "invalid_value",
            "values": allowed,
            "path": path,
            "message": "Invalid option: expected one of "
            + "|".join(json.dumps(value) for value in allowed),
        }
    return {"code": "custom", "path": path, "message": str(issue["msg"])}


def format_schema_error(
    tool: Tool,
    raw_input: Mapping[str, Any],
    exc: ValidationError,
    profile: Profile = DOCUMENTED,
) -> str:
    """DISP-SCHEMA-1, DISP-SCHEMA-2: missing, then unexpected, then mistyped or invalid fields.

    Under a profile without constraint lines (``schema_constraints == "issues"``) a
    breached constraint gets no line; when no other line is left, the text is the
    breached constraints' issue list.
    """
    order = {name: index for index, name in enumerate(tool.input_model.model_fields)}
    keys = {name: index for index, name in enumerate(raw_input)}
    missing: list[tuple[int, str]] = []
    extra: list[tuple[int, str]] = []
    invalid: list[tuple[int, str]] = []
    breached: list[dict[str, Any]] = []
    lines_for_constraints = profile.schema_constraints == "lines"
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
                    f"The parameter `{name}` type is expected as "
                    f"`{_expected(kind, issue['input'], profile)}` "
                    f"but provided as `{json_type(issue['input'])}`",
                )
            )
        elif lines_for_constraints:
            invalid.append(
                (order.get(top, 0), f"The parameter `{name}` is invalid: {_constraint(issue)}")
            )
        else:
            breached.append(_issue_object(issue))
    lines = [line for _, line in sorted(missing) + sorted(extra) + sorted(invalid)]
    if not lines and breached:
        return issue_list_text(breached)
    return schema_error_text(tool.name, lines)


def issue_list_text(issues: list[dict[str, Any]]) -> str:
    """DISP-SCHEMA-2 under a profile whose release shows a schema refusal it has no line
    for as its issue list: ``InputValidationError:`` and the list as indented JSON."""
    return "InputValidationError: " + json.dumps(issues, indent=2, ensure_ascii=False)


def schema_error_text(tool_name: str, lines: list[str]) -> str:
    plural = "s" if len(lines) > 1 else ""
    header = f"InputValidationError: {tool_name} failed due to the following issue{plural}:"
    return "\n".join([header, *lines])


def as_object(raw_input: object, profile: Profile) -> object:
    """DISP-SCHEMA-2: what a non-object input is checked as under ``profile``.

    ``refused``: itself (refused with the non-object line); ``null-empty``: ``null`` is an
    empty object, anything else refused; ``spread``: an object with the input's own
    entries, as a script spreads it into one (an array's and a string's by index, nothing
    for ``null``, a number or a boolean).
    """
    if isinstance(raw_input, Mapping):
        return raw_input
    mode = profile.non_object_input
    if mode == "null-empty" and raw_input is None:
        return {}
    if mode == "spread":
        if isinstance(raw_input, list | tuple | str):
            return {str(index): item for index, item in enumerate(raw_input)}
        return {}
    return raw_input
