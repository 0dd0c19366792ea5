"""The tool registry: the built-in tools, the pool, lookup by name or alias."""

from __future__ import annotations

from reference.dispatch import dispatch
from reference.registry import all_base_tools, assemble_pool, find_tool
from reference.tool import Tool, ToolResult, ToolUseContext, build_tool
from reference.tools._common import StrictInput


class NoInput(StrictInput):
    pass


def tool(name: str, *aliases: str, marker: str = "") -> Tool:
    def call(_inp: NoInput, _ctx: ToolUseContext) -> ToolResult:
        return ToolResult({"from": marker or name})

    return build_tool(name=name, input_model=NoInput, call=call, aliases=aliases)


def test_base_tools_are_read_write_and_edit() -> None:
    """Reference-defined: the file tools of SPEC sections 12-14 are among the built-ins."""
    assert {"Edit", "Read", "Write"} <= {t.name for t in all_base_tools()}


def test_pool_lists_built_ins_first_each_part_sorted_by_name() -> None:
    """SPEC: REG-ASSEMBLE-1"""
    pool = assemble_pool([tool("Zeta"), tool("Alpha")], [tool("mcp__b"), tool("mcp__a")])
    assert [t.name for t in pool] == ["Alpha", "Zeta", "mcp__a", "mcp__b"]


def test_first_tool_of_a_name_wins_and_built_ins_win_over_external() -> None:
    """SPEC: REG-ASSEMBLE-1"""
    built_in = tool("Read", marker="built-in")
    pool = assemble_pool([built_in, tool("Read", marker="second")], [tool("Read", marker="mcp")])
    assert pool == [built_in]


def test_find_tool_answers_to_the_name_and_every_alias() -> None:
    """SPEC: REG-LOOKUP-1"""
    renamed = tool("Task", "Agent", "LegacyTask")
    pool = [tool("Other"), renamed]
    assert find_tool(pool, "Task") is renamed
    assert find_tool(pool, "Agent") is renamed
    assert find_tool(pool, "LegacyTask") is renamed
    assert find_tool(pool, "task") is None


def test_a_call_by_alias_reaches_the_tool(ctx: ToolUseContext) -> None:
    """SPEC: REG-LOOKUP-1"""
    renamed = tool("Task", "Agent")
    outcome = dispatch([tool("Other"), renamed], {"id": "t", "name": "Agent", "input": {}}, ctx)
    assert (outcome.stage, outcome.output) == ("done", {"from": "Task"})
