"""The tool registry: gates, deny removal, the pool, lookup, deferral and the API export."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pydantic import Field
from refsupport import Begin

from reference.dispatch import dispatch
from reference.engine import FEATURES, Engine
from reference.mcp import mcp_tools
from reference.mcp_test_server import TEST_SERVER
from reference.registry import (
    GATES,
    all_base_tools,
    api_export,
    api_tool,
    assemble_pool,
    build_pool,
    deferred_names,
    find_tool,
    get_tools,
    is_deferred,
    strict_schema,
)
from reference.session import Session
from reference.settings import Settings
from reference.tool import Tool, ToolResult, ToolUseContext, build_tool
from reference.tools.common import JsonInt, StrictInput
from reference.tools.read.tool import READ_TOOL


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


# -- gates, deny removal and the assembled pool (section 2) -----------------


def session(tmp_path: Path, **fields: Any) -> Session:
    deny = fields.pop("deny", None)
    settings = Settings(by_source={"userSettings": {"permissions": {"deny": deny}}} if deny else {})
    return Session.create(root=str(tmp_path), settings=settings, **fields)


def names(tools: Sequence[Tool]) -> list[str]:
    return [t.name for t in tools]


def test_read_edit_and_write_are_always_there_by_default(tmp_path: Path) -> None:
    """SPEC: REG-GATE-1"""
    assert names(build_pool(session(tmp_path))) == [
        "Bash",
        "Edit",
        "Glob",
        "Grep",
        "NotebookEdit",
        "Read",
        "TaskOutput",
        "TaskStop",
        "Write",
    ]


@pytest.mark.parametrize("value", ["1"])
def test_simple_mode_removes_write_and_its_gate_group(tmp_path: Path, value: str) -> None:
    """SPEC: REG-GATE-1"""
    pool = build_pool(session(tmp_path, env={"CLAUDE_CODE_SIMPLE": value}))
    assert names(pool) == ["Bash", "Edit", "Read"]


@pytest.mark.parametrize("value", ["0", "", "true", "yes"])
def test_simple_mode_needs_the_value_1(tmp_path: Path, value: str) -> None:
    """SPEC: REG-GATE-1"""
    pool = build_pool(session(tmp_path, env={"CLAUDE_CODE_SIMPLE": value}))
    assert "Write" in names(pool)


def test_gates_read_the_session_environment_never_the_process_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: REG-GATE-1"""
    monkeypatch.setenv("CLAUDE_CODE_SIMPLE", "1")
    assert "Write" in names(build_pool(session(tmp_path)))
    monkeypatch.delenv("CLAUDE_CODE_SIMPLE")
    assert "Write" not in names(build_pool(session(tmp_path, env={"CLAUDE_CODE_SIMPLE": "1"})))


def test_gate_table_matches_the_spec(tmp_path: Path) -> None:
    """SPEC: REG-GATE-1"""
    plain = session(tmp_path)
    simple = session(tmp_path, env={"CLAUDE_CODE_SIMPLE": "1"})
    no_tasks = session(tmp_path, env={"CLAUDE_CODE_DISABLE_BACKGROUND_TASKS": "1"})
    tests = session(tmp_path, test_tools=True)
    assert set(GATES) == {
        "Write",
        "NotebookEdit",
        "Glob",
        "Grep",
        "Bash",
        "TaskOutput",
        "TaskStop",
        "Probe",
    }
    for name in ("Write", "NotebookEdit", "Glob", "Grep"):
        gate = GATES[name]
        assert (gate(plain), gate(simple), gate(no_tasks)) == (True, False, True)
    for name in ("TaskOutput", "TaskStop"):
        gate = GATES[name]
        assert (gate(plain), gate(simple), gate(no_tasks)) == (True, False, False)
    assert GATES["Bash"](plain) is os.path.exists("/bin/sh")
    assert (GATES["Probe"](plain), GATES["Probe"](tests)) == (False, True)


def test_probe_test_server_and_tool_search_come_with_test_tools(tmp_path: Path) -> None:
    """SPEC: REG-GATE-1, PROTO-TESTMCP-1, REG-ASSEMBLE-1"""
    pool = build_pool(session(tmp_path, test_tools=True))
    assert names(pool) == [
        "Bash",
        "Edit",
        "Glob",
        "Grep",
        "NotebookEdit",
        "Probe",
        "Read",
        "TaskOutput",
        "TaskStop",
        "ToolSearch",
        "Write",
        "mcp__test__echo",
    ]
    assert find_tool(pool, "Read") is READ_TOOL  # the test server's unprefixed Read lost


def test_a_disabled_tool_is_not_in_the_pool() -> None:
    """SPEC: REG-GATE-1"""
    off = replace(tool("Off"), is_enabled=lambda: False)
    assert names(get_tools([tool("On"), off], frozenset())) == ["On"]


@pytest.mark.parametrize("rule", ["Write", "Write(*)", "Write( * )"])
def test_whole_tool_deny_removes_the_tool(tmp_path: Path, rule: str) -> None:
    """SPEC: REG-DENY-1, PERM-RULE-1"""
    assert names(build_pool(session(tmp_path, deny=[rule]))) == [
        "Bash",
        "Edit",
        "Glob",
        "Grep",
        "NotebookEdit",
        "Read",
        "TaskOutput",
        "TaskStop",
    ]


@pytest.mark.parametrize("rule", ["Write(a.txt)", "Write(**)", "write", "Writ"])
def test_other_deny_rules_keep_the_tool(tmp_path: Path, rule: str) -> None:
    """SPEC: REG-DENY-1"""
    assert "Write" in names(build_pool(session(tmp_path, deny=[rule])))


def test_deny_by_alias_removes_the_tool() -> None:
    """SPEC: REG-DENY-1"""
    renamed = tool("TaskOutput", "BashOutput")
    assert names(get_tools([renamed, tool("Other")], frozenset({"BashOutput"}))) == ["Other"]
    assert names(get_tools([renamed], frozenset({"TaskOutput"}))) == []


@pytest.mark.parametrize(
    ("rule", "left"),
    [
        ("mcp__test", []),
        ("mcp__test__*", []),
        ("mcp__test(*)", []),
        ("mcp__test__echo", []),
        ("mcp__test__other", ["mcp__test__echo"]),
        ("mcp__tes", ["mcp__test__echo"]),
        ("mcp__test__echo(x)", ["mcp__test__echo"]),
        ("mcp__*", ["mcp__test__echo"]),
    ],
)
def test_mcp_deny_rules_remove_a_server_or_one_tool(
    tmp_path: Path, rule: str, left: list[str]
) -> None:
    """SPEC: REG-DENY-1, REG-MCP-1"""
    pool = build_pool(session(tmp_path, test_tools=True, deny=[rule]))
    assert [n for n in names(pool) if n.startswith("mcp__")] == left
    assert ("ToolSearch" in names(pool)) is bool(left)  # no deferred tool, no ToolSearch


def test_server_deny_also_removes_its_unprefixed_tools() -> None:
    """SPEC: REG-DENY-1, REG-MCP-1"""
    tools = mcp_tools(TEST_SERVER)
    assert get_tools(tools, frozenset({"mcp__test"})) == []
    assert names(get_tools(tools, frozenset({"Read"}))) == ["mcp__test__echo"]


def test_deny_read_removes_the_built_in_and_the_shadowing_mcp_read(tmp_path: Path) -> None:
    """SPEC: REG-DENY-1, REG-ASSEMBLE-1"""
    pool = build_pool(session(tmp_path, test_tools=True, deny=["Read"]))
    assert "Read" not in names(pool)


def test_tool_search_is_there_only_when_the_assembled_pool_holds_a_deferred_tool(
    tmp_path: Path,
) -> None:
    """SPEC: REG-GATE-1, REG-DEFER-1, REG-ASSEMBLE-1"""
    shadow_only = session(tmp_path, test_tools=True, deny=["mcp__test__echo"])
    assert "ToolSearch" not in names(build_pool(shadow_only))  # the deferred Read lost its name
    assert "ToolSearch" not in names(build_pool(session(tmp_path)))
    denied = session(tmp_path, test_tools=True, deny=["ToolSearch"])
    assert names(build_pool(denied)) == [
        "Bash",
        "Edit",
        "Glob",
        "Grep",
        "NotebookEdit",
        "Probe",
        "Read",
        "TaskOutput",
        "TaskStop",
        "Write",
        "mcp__test__echo",
    ]


def test_mcp_tools_sort_after_every_built_in_by_code_point(tmp_path: Path) -> None:
    """SPEC: REG-ASSEMBLE-1"""
    pool = assemble_pool([tool("b"), tool("Z")], [tool("mcp__B"), tool("A"), tool("mcp__a")])
    assert names(pool) == ["Z", "b", "A", "mcp__B", "mcp__a"]


# -- deferral and the export (REG-DEFER-1, REG-EXPORT-1) -------------------


def test_only_mcp_tools_are_deferred(tmp_path: Path) -> None:
    """SPEC: REG-DEFER-1, TOOL-PROPS-1"""
    pool = build_pool(session(tmp_path, test_tools=True))
    assert [t.name for t in pool if is_deferred(t)] == ["mcp__test__echo"]
    assert all(is_deferred(t) for t in mcp_tools(TEST_SERVER))


def test_always_load_wins_over_should_defer() -> None:
    """SPEC: REG-DEFER-1"""
    assert is_deferred(replace(tool("X"), should_defer=True))
    assert not is_deferred(replace(tool("X"), should_defer=True, always_load=True))
    assert not is_deferred(replace(tool("X"), always_load=True))


def test_export_leaves_out_undiscovered_deferred_tools_and_lists_them_apart() -> None:
    """SPEC: REG-EXPORT-1, REG-DEFER-1"""
    deferred = replace(tool("mcp__s__t"), should_defer=True, description="d")
    pool = [tool("A"), deferred, tool("B")]
    assert names_of(api_export(pool, set())) == ["A", "B"]
    assert deferred_names(pool, set()) == ["mcp__s__t"]
    assert names_of(api_export(pool, {"mcp__s__t"})) == ["A", "mcp__s__t", "B"]
    assert deferred_names(pool, {"mcp__s__t"}) == []


def names_of(export: list[dict[str, Any]]) -> list[str]:
    return [entry["name"] for entry in export]


def test_export_entry_is_name_description_and_strict_schema() -> None:
    """SPEC: REG-EXPORT-1, TOOL-SCHEMA-1"""
    entry = api_tool(READ_TOOL)
    assert list(entry) == ["name", "description", "input_schema"]
    assert (entry["name"], entry["description"]) == ("Read", READ_TOOL.description)
    schema = entry["input_schema"]
    assert (schema["type"], schema["additionalProperties"]) == ("object", False)
    assert schema["required"] == ["file_path"]
    assert schema["properties"]["offset"] == {
        "type": "integer",
        "minimum": 1,
        "description": "1-based line to start at",
    }


class Inner(StrictInput):
    flag: bool


class Outer(StrictInput):
    inner: Inner
    items: list[Inner] = Field(default_factory=list)
    maybe: Inner | None = None
    count: JsonInt = Field(default=1, ge=0, le=9)


def every_object(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        if node.get("type") == "object":
            yield node
        for value in node.values():
            yield from every_object(value)
    elif isinstance(node, list):
        for item in node:
            yield from every_object(item)


def test_strict_schema_closes_every_object_level_and_inlines_references() -> None:
    """SPEC: REG-EXPORT-1, TOOL-SCHEMA-1"""
    schema = strict_schema(Outer)
    text = json.dumps(schema)
    assert "$ref" not in text
    assert "$defs" not in text
    assert '"title"' not in text
    objects = list(every_object(schema))
    assert len(objects) == 4  # Outer, inner, items' element, maybe
    for node in objects:
        assert node["additionalProperties"] is False
        assert isinstance(node["properties"], dict)
        assert isinstance(node["required"], list)
    count = {"default": 1, "maximum": 9, "minimum": 0, "type": "integer"}
    assert schema["properties"]["count"] == count
    assert schema["properties"]["maybe"]["required"] == ["flag"]
    assert "default" not in schema["properties"]["maybe"]


def test_strict_schema_is_a_fresh_copy() -> None:
    """Reference-defined: the cached schema cannot be changed through a result."""
    strict_schema(Outer)["properties"].clear()
    assert strict_schema(Outer)["properties"]


def test_every_pool_tool_exports_a_strict_schema(tmp_path: Path) -> None:
    """SPEC: REG-EXPORT-1, TOOL-SCHEMA-1"""
    for entry in api_export(build_pool(session(tmp_path, test_tools=True)), {"mcp__test__echo"}):
        assert isinstance(entry["description"], str)
        assert entry["description"]
        for node in every_object(entry["input_schema"]):
            assert node["additionalProperties"] is False


# -- the tools command (PROTO-TOOLS-1) ---------------------------------------


def test_tools_command_answers_export_and_deferred_names(begin: Begin) -> None:
    """SPEC: PROTO-TOOLS-1, REG-EXPORT-1"""
    engine = begin(test_tools=True)
    answer = engine.handle({"seq": 7, "cmd": "tools"})
    assert answer["seq"] == 7
    assert names_of(answer["tools"]) == [
        "Bash",
        "Edit",
        "Glob",
        "Grep",
        "NotebookEdit",
        "Probe",
        "Read",
        "TaskOutput",
        "TaskStop",
        "ToolSearch",
        "Write",
    ]
    assert answer["deferred"] == ["mcp__test__echo"]
    assert json.loads(json.dumps(answer)) == answer


def test_tools_without_a_session_is_a_bad_request() -> None:
    """SPEC: PROTO-BAD-1, PROTO-TOOLS-1"""
    answer = Engine().handle({"seq": 1, "cmd": "tools"})
    assert answer["seq"] == 1
    assert answer["error"]["kind"] == "bad_request"


def test_hello_lists_the_registry_feature() -> None:
    """SPEC: PROTO-FEATURES-1"""
    answer = Engine().handle({"seq": 1, "cmd": "hello", "protocol": 1})
    assert "registry" in answer["features"]
    assert "registry" in FEATURES


def test_discoveries_last_for_the_session_and_end_with_it(begin: Begin) -> None:
    """SPEC: REG-SEARCH-2, REG-EXPORT-1, PROTO-BEGIN-1"""
    engine = begin(test_tools=True)
    search = {"id": "s", "name": "ToolSearch", "input": {"query": "select:mcp__test__echo"}}
    answer = engine.handle({"seq": 1, "cmd": "call", "tool_use": search})
    assert answer["outcome"]["stage"] == "done"
    assert engine.handle({"seq": 2, "cmd": "tools"})["deferred"] == []
    engine = begin(test_tools=True)
    assert engine.handle({"seq": 3, "cmd": "tools"})["deferred"] == ["mcp__test__echo"]
