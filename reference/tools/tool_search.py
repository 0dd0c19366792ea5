"""ToolSearch: how the model finds deferred tools (SPEC.md REG-SEARCH-1, REG-SEARCH-2).

The pool offers deferred tools (every MCP tool) by name only; ToolSearch
returns their full definitions and marks them discovered for the session, so
the API export includes them from then on (REG-DEFER-1, REG-EXPORT-1). It is
in the pool only when the pool holds a deferred tool (REG-GATE-1).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

from pydantic import Field, ModelWrapValidatorHandler, ValidationInfo, model_validator

from reference.export import api_tool, is_deferred
from reference.profiles import Profile, profile_of
from reference.tool import (
    PermissionCheck,
    ResultContent,
    Tool,
    ToolResult,
    ToolUseContext,
    build_tool,
)
from reference.tools.common import SearchJsonInt, StrictInput

NAME: Final = "ToolSearch"
SELECT_PREFIX: Final = "select:"
NO_MATCH: Final = "No matching deferred tools found"  # REG-SEARCH-2
DEFAULT_MAX_RESULTS: Final = 5
DESCRIPTION: Final = (
    "Fetches the full definitions of deferred tools so that they can be called. "
    'Use "select:Name1,Name2" to fetch tools by exact name, or keywords to search '
    "the deferred tools' names and descriptions (best matches first)."
)
ALLOW: Final = PermissionCheck("allow")


class ToolSearchInput(StrictInput):
    query: str = Field(
        description='"select:Name1,Name2" for exact names, or keywords to search for'
    )
    max_results: SearchJsonInt = Field(
        default=DEFAULT_MAX_RESULTS, ge=1, description="Most keyword matches to return"
    )

    @model_validator(mode="wrap")
    @classmethod
    def _any_number(
        cls, data: Any, handler: ModelWrapValidatorHandler[ToolSearchInput], info: ValidationInfo
    ) -> ToolSearchInput:
        """REG-SEARCH-1 where the session's profile takes any number as ``max_results``:
        checked as 1, then kept as the number truncated to an integer (0 returns nothing, a
        negative one drops that many from the end); the exported schema is unchanged."""
        given = data.get("max_results") if isinstance(data, Mapping) else None
        if isinstance(given, bool) or not isinstance(given, int | float):
            return handler(data)
        if math.isfinite(given) and profile_of(info).search_numeric_strings:
            checked = handler({**data, "max_results": 1})
            return checked.model_copy(update={"max_results": math.trunc(given)})
        return handler(data)


def search(tools: Sequence[Tool], query: str, max_results: int) -> list[Tool]:
    """REG-SEARCH-1: the tools a query returns, in the order returned."""
    if query.startswith(SELECT_PREFIX):
        found: dict[str, Tool] = {}
        for wanted in query[len(SELECT_PREFIX) :].split(","):
            name = wanted.strip()
            tool = next((t for t in tools if t.name == name), None)
            if tool is not None:
                found.setdefault(name, tool)
        return list(found.values())
    terms = query.lower().split()
    scored: list[tuple[int, Tool]] = []
    for tool in tools:
        if not is_deferred(tool):
            continue
        name, description = tool.name.lower(), tool.description.lower()
        hits = sum(1 for term in terms if term in name or term in description)
        if hits:
            scored.append((hits, tool))
    scored.sort(key=lambda pair: -pair[0])  # stable: ties keep pool order
    return [tool for _hits, tool in scored[:max_results]]


def call(inp: ToolSearchInput, ctx: ToolUseContext) -> ToolResult:
    found = search(ctx.tools, inp.query, inp.max_results)
    # REG-SEARCH-2: discovered for the rest of the session (set.update is atomic)
    ctx.session.discovered_tools.update(tool.name for tool in found)
    return ToolResult(
        {
            "matches": [tool.name for tool in found],
            "query": inp.query,
            "total_deferred_tools": sum(1 for t in ctx.tools if is_deferred(t)),
            "functions": [api_tool(tool) for tool in found],
        }
    )


def map_result(data: Mapping[str, Any], profile: Profile) -> ResultContent:
    """REG-SEARCH-2: ``<functions>`` lines, or the no-match text."""
    functions: list[Mapping[str, Any]] = list(data["functions"])
    if not functions:
        return NO_MATCH
    lines = [
        f"<function>{json.dumps(function, ensure_ascii=False)}</function>" for function in functions
    ]
    return "\n".join(["<functions>", *lines, "</functions>"])


TOOL_SEARCH_TOOL: Final[Tool[ToolSearchInput]] = build_tool(
    name=NAME,
    input_model=ToolSearchInput,
    call=call,
    description=DESCRIPTION,
    is_concurrency_safe=lambda _inp: True,
    is_read_only=lambda _inp: True,
    check_permissions=lambda _inp, _ctx: ALLOW,
    classifier_input=lambda inp: inp.query,
    map_result=map_result,
    always_load=True,  # REG-DEFER-1: never deferred
)
