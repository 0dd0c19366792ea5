"""ToolSearch: query syntax, ranking, result text and discovery (REG-SEARCH-1, REG-SEARCH-2)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from refsupport import Begin

from reference.dispatch import CallOutcome, dispatch
from reference.export import api_tool, is_deferred
from reference.registry import build_pool
from reference.session import Session
from reference.tool import Tool, ToolResult, ToolUseContext, build_tool
from reference.tools.common import StrictInput
from reference.tools.read.tool import READ_TOOL
from reference.tools.tool_search import NO_MATCH, TOOL_SEARCH_TOOL, ToolSearchInput, search


class NoInput(StrictInput):
    pass


def _ok(_inp: NoInput, _ctx: ToolUseContext) -> ToolResult:
    return ToolResult({})


def deferred(name: str, description: str = "") -> Tool:
    return build_tool(
        name=name, input_model=NoInput, call=_ok, description=description, should_defer=True
    )


POOL = [
    READ_TOOL,
    TOOL_SEARCH_TOOL,
    deferred("mcp__db__query", "Run a SQL query against the database."),
    deferred("mcp__db__schema", "Show the database schema."),
    deferred("mcp__slack__post", "Post a message to a Slack channel."),
    deferred("mcp__web__fetch", "Fetch a URL."),
]


def found(query: str, max_results: int = 5, pool: list[Tool] = POOL) -> list[str]:
    return [t.name for t in search(pool, query, max_results)]


def test_select_returns_exact_names_in_the_order_given() -> None:
    """SPEC: REG-SEARCH-1"""
    assert found("select:mcp__web__fetch,mcp__db__query") == ["mcp__web__fetch", "mcp__db__query"]


def test_select_trims_names_and_skips_unknown_ones() -> None:
    """SPEC: REG-SEARCH-1"""
    assert found("select: mcp__db__schema , nope,,mcp__DB__query") == ["mcp__db__schema"]


def test_select_can_return_any_pool_tool_and_ignores_max_results() -> None:
    """SPEC: REG-SEARCH-1"""
    query = "select:Read,mcp__db__query,mcp__db__schema"
    assert found(query, max_results=1) == ["Read", "mcp__db__query", "mcp__db__schema"]


def test_select_names_a_tool_once() -> None:
    """Reference-defined: a name repeated in select: returns the tool once."""
    assert found("select:mcp__web__fetch,mcp__web__fetch") == ["mcp__web__fetch"]


def test_keywords_match_deferred_names_or_descriptions_case_insensitively() -> None:
    """SPEC: REG-SEARCH-1"""
    assert found("SLACK") == ["mcp__slack__post"]
    assert found("url") == ["mcp__web__fetch"]
    assert found("read") == []  # Read is not deferred
    assert found("tool") == []  # nor is ToolSearch


def test_terms_are_substrings() -> None:
    """SPEC: REG-SEARCH-1"""
    assert found("datab") == ["mcp__db__query", "mcp__db__schema"]


def test_more_terms_matched_rank_first_ties_in_pool_order() -> None:
    """SPEC: REG-SEARCH-1"""
    assert found("database schema") == ["mcp__db__schema", "mcp__db__query"]
    assert found("message fetch") == ["mcp__slack__post", "mcp__web__fetch"]


def test_max_results_keeps_the_best() -> None:
    """SPEC: REG-SEARCH-1"""
    assert found("a", max_results=2) == ["mcp__db__query", "mcp__db__schema"]
    assert len(found("mcp")) == 4
    assert found("schema query", max_results=1) == ["mcp__db__query"]


def test_an_empty_query_finds_nothing() -> None:
    """SPEC: REG-SEARCH-1"""
    assert found("   ") == []
    assert found("") == []


def test_discovered_tools_can_be_found_again() -> None:
    """SPEC: REG-SEARCH-1"""
    assert found("fetch") == found("fetch") == ["mcp__web__fetch"]


def test_input_is_strict_with_max_results_at_least_1() -> None:
    """SPEC: REG-SEARCH-1, TOOL-SCHEMA-1"""
    assert ToolSearchInput.model_validate({"query": "x"}).max_results == 5
    assert ToolSearchInput.model_validate({"query": "x", "max_results": 2.0}).max_results == 2
    for bad in (
        {},
        {"query": 1},
        {"query": "x", "max_results": 0},
        {"query": "x", "max_results": "3"},
        {"query": "x", "other": 1},
    ):
        with pytest.raises(ValueError, match="validation error"):
            ToolSearchInput.model_validate(bad)


# -- through the pipeline -----------------------------------------------------


def run(ctx: ToolUseContext, **tool_input: Any) -> CallOutcome:
    return dispatch(POOL, {"id": "toolu_s", "name": "ToolSearch", "input": tool_input}, ctx)


def test_result_text_lists_the_export_objects(ctx: ToolUseContext) -> None:
    """SPEC: REG-SEARCH-2, REG-EXPORT-1"""
    outcome = run(ctx, query="database")
    lines = str(outcome.content).split("\n")
    assert (lines[0], lines[-1]) == ("<functions>", "</functions>")
    functions = [
        json.loads(line.removeprefix("<function>").removesuffix("</function>"))
        for line in lines[1:-1]
    ]
    assert functions == [api_tool(POOL[2]), api_tool(POOL[3])]
    assert all(line.startswith("<function>{") for line in lines[1:-1])


def test_no_match_text(ctx: ToolUseContext) -> None:
    """SPEC: REG-SEARCH-2"""
    outcome = run(ctx, query="nothing-like-this")
    assert (outcome.stage, outcome.is_error, outcome.content) == ("done", False, NO_MATCH)
    assert NO_MATCH == "No matching deferred tools found"
    assert ctx.session.discovered_tools == set()


def test_returned_tools_are_discovered(ctx: ToolUseContext) -> None:
    """SPEC: REG-SEARCH-2, REG-DEFER-1"""
    run(ctx, query="select:mcp__web__fetch,nope")
    run(ctx, query="slack")
    assert ctx.session.discovered_tools == {"mcp__web__fetch", "mcp__slack__post"}


def test_structured_output(ctx: ToolUseContext) -> None:
    """Reference-defined: the output names the matches, the query and the deferred count."""
    outcome = run(ctx, query="fetch")
    assert outcome.output is not None
    assert outcome.output["matches"] == ["mcp__web__fetch"]
    assert (outcome.output["query"], outcome.output["total_deferred_tools"]) == ("fetch", 4)


def test_tool_search_properties(ctx: ToolUseContext) -> None:
    """SPEC: TOOL-PROPS-1, REG-DEFER-1"""
    inp = ToolSearchInput(query="q")
    tool = TOOL_SEARCH_TOOL
    assert (tool.is_read_only(inp), tool.is_concurrency_safe(inp), tool.is_destructive(inp)) == (
        True,
        True,
        False,
    )
    assert tool.check_permissions(inp, ctx).behavior == "allow"
    assert tool.classifier_input(inp) == "q"
    assert (tool.always_load, tool.max_result_size_chars, tool.interrupt_behavior) == (
        True,
        100_000,
        "block",
    )
    assert not is_deferred(replace(tool, should_defer=True))  # always_load wins


def test_tool_search_searches_the_pool_of_the_call(tmp_path: Path) -> None:
    """SPEC: TOOL-CONTEXT-1, REG-SEARCH-1"""
    session = Session.create(root=str(tmp_path), test_tools=True)
    pool = build_pool(session)
    ctx = ToolUseContext(session=session, tool_use_id="t", cwd=str(tmp_path))
    tool_use = {"id": "t", "name": "ToolSearch", "input": {"query": "echo"}}
    assert "mcp__test__echo" in str(dispatch(pool, tool_use, ctx).content)


def test_needs_no_permission_rule(begin: Begin) -> None:
    """SPEC: TOOL-PROPS-1, PERM-ORDER-1"""
    engine = begin(test_tools=True, prompt="deny")
    tool_use = {"id": "t", "name": "ToolSearch", "input": {"query": "echo"}}
    answer = engine.handle({"seq": 1, "cmd": "call", "tool_use": tool_use})
    assert answer["outcome"]["stage"] == "done"
    assert answer["outcome"]["permission"]["reason"] == "tool"
    assert engine.handle({"seq": 2, "cmd": "tools"})["deferred"] == []
