"""MCP tools as tools of section 1, and the test MCP server (REG-MCP-1, PROTO-TESTMCP-1)."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import pytest
from pydantic import BaseModel, ValidationError
from refsupport import READ_REMINDER, Begin

from reference.dispatch import dispatch
from reference.engine import Engine
from reference.errors import McpToolError, UnsupportedSchemaError
from reference.export import strict_schema
from reference.mcp import (
    McpCallResult,
    McpToolDefinition,
    map_result,
    mcp_tool,
    mcp_tool_name,
    mcp_tools,
    model_from_schema,
    sanitize,
    text_result,
)
from reference.mcp_test_server import TEST_SERVER
from reference.profiles import DOCUMENTED
from reference.registry import build_pool, find_tool
from reference.session import Session
from reference.tool import McpInfo, ToolUseContext

FIXTURES: Final = Path(__file__).resolve().parents[2] / "fixtures" / "hooks"
ECHO: Final = "mcp__test__echo"
TEXT_SCHEMA: Final = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
}


class FakeServer:
    """A server whose tools and answers a test chooses; records the calls it gets."""

    def __init__(self, name: str, *tools: McpToolDefinition, answer: McpCallResult) -> None:
        self._name = name
        self.tools = tools
        self.answer = answer
        self.calls: list[tuple[str, dict[str, Any]]] = []

    @property
    def name(self) -> str:
        return self._name

    def list_tools(self) -> Sequence[McpToolDefinition]:
        return self.tools

    def call_tool(self, name: str, arguments: Mapping[str, Any]) -> McpCallResult:
        self.calls.append((name, dict(arguments)))
        return self.answer


def definition(name: str = "t", **fields: Any) -> McpToolDefinition:
    return McpToolDefinition(
        name=name,
        description=fields.pop("description", "a tool"),
        input_schema=fields.pop("input_schema", TEXT_SCHEMA),
        **fields,
    )


def run(ctx: ToolUseContext, tools: Sequence[Any], name: str, tool_input: object) -> Any:
    return dispatch(list(tools), {"id": "toolu_m", "name": name, "input": tool_input}, ctx)


# -- names ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("server", "tool", "expected"),
    [
        ("test", "echo", "mcp__test__echo"),
        ("my server", "do.it", "mcp__my_server__do_it"),
        ("a-b_c", "x-Y_9", "mcp__a-b_c__x-Y_9"),
        ("caf\u00e9", "t/o:o", "mcp__caf___t_o_o"),
    ],
)
def test_pool_name_is_prefixed_and_sanitized(server: str, tool: str, expected: str) -> None:
    """SPEC: REG-MCP-1"""
    assert mcp_tool_name(server, tool) == expected


def test_mcp_info_keeps_the_original_names() -> None:
    """SPEC: REG-MCP-1"""
    server = FakeServer("my server", definition("do.it"), answer=text_result("x"))
    (tool,) = mcp_tools(server)
    assert tool.name == "mcp__my_server__do_it"
    assert tool.mcp_info == McpInfo(server_name="my server", tool_name="do.it")


def test_sanitize_keeps_letters_digits_underscore_and_hyphen() -> None:
    """SPEC: REG-MCP-1"""
    assert sanitize("Az09_-") == "Az09_-"
    assert sanitize(" .\u00e9") == "___"


def test_an_unprefixed_tool_keeps_its_name() -> None:
    """SPEC: REG-MCP-1"""
    server = FakeServer("s", definition("Read", unprefixed=True), answer=text_result("x"))
    (tool,) = mcp_tools(server)
    assert tool.name == "Read"
    assert tool.mcp_info == McpInfo(server_name="s", tool_name="Read")


# -- properties (TOOL-PROPS-1) ----------------------------------------------


@pytest.mark.parametrize("hint", [True, False])
def test_read_only_hint_makes_the_tool_read_only_and_concurrency_safe(hint: bool) -> None:
    """SPEC: TOOL-PROPS-1, REG-MCP-1"""
    tool = mcp_tool(FakeServer("s", answer=text_result("")), definition(read_only_hint=hint))
    inp = tool.input_model.model_validate({"text": "x"})
    assert tool.is_read_only(inp) is hint
    assert tool.is_concurrency_safe(inp) is hint


def test_other_properties_of_mcp_tools(ctx: ToolUseContext) -> None:
    """SPEC: TOOL-PROPS-1, REG-DEFER-1"""
    tool = mcp_tool(FakeServer("s", answer=text_result("")), definition(read_only_hint=True))
    inp = tool.input_model.model_validate({"text": 'h\u00e9 "x"'})
    assert tool.is_destructive(inp) is False
    assert tool.max_result_size_chars == 100_000
    assert tool.check_permissions(inp, ctx).behavior == "passthrough"
    assert tool.classifier_input(inp) == '{"text":"h\u00e9 \\"x\\""}'
    assert tool.interrupt_behavior == "block"
    assert (tool.should_defer, tool.always_load) == (True, False)


def test_classifier_input_holds_only_the_fields_given() -> None:
    """SPEC: TOOL-PROPS-1"""
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "string", "default": "x"}},
        "required": ["a"],
    }
    tool = mcp_tool(FakeServer("s", answer=text_result("")), definition(input_schema=schema))
    assert tool.classifier_input(tool.input_model.model_validate({"a": 2})) == '{"a":2}'


# -- the input model (TOOL-SCHEMA-1) ------------------------------------------


def validate(model: type[BaseModel], value: dict[str, Any]) -> dict[str, Any]:
    return model.model_validate(value).model_dump(exclude_unset=True)


def test_model_from_schema_is_strict() -> None:
    """SPEC: TOOL-SCHEMA-1, REG-MCP-1"""
    schema = {
        "type": "object",
        "properties": {
            "s": {"type": "string", "minLength": 1},
            "i": {"type": "integer", "minimum": 0, "maximum": 5},
            "n": {"type": "number"},
            "b": {"type": "boolean"},
            "e": {"type": "string", "enum": ["a", "b"]},
            "arr": {"type": "array", "items": {"type": "integer"}},
            "obj": {"type": "object", "properties": {"k": {"type": "string"}}, "required": ["k"]},
        },
        "required": ["s"],
        "additionalProperties": True,  # ignored: every level is closed
    }
    model = model_from_schema("M", schema)
    good = {"s": "x", "i": 3.0, "n": 2, "b": True, "e": "a", "arr": [1], "obj": {"k": "v"}}
    assert validate(model, good) == {**good, "i": 3, "n": 2.0}
    for bad in (
        {},
        {"s": ""},
        {"s": "x", "i": 6},
        {"s": "x", "i": 1.5},
        {"s": "x", "i": True},
        {"s": "x", "n": "1"},
        {"s": "x", "b": "true"},
        {"s": "x", "e": "c"},
        {"s": "x", "arr": [1.5]},
        {"s": "x", "obj": {}},
        {"s": "x", "obj": {"k": "v", "extra": 1}},
        {"s": "x", "extra": 1},
    ):
        with pytest.raises(ValidationError):
            model.model_validate(bad)


def test_model_from_schema_exports_a_strict_schema() -> None:
    """SPEC: TOOL-SCHEMA-1, REG-EXPORT-1"""
    schema = {
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "what to say"},
            "opt": {"type": "integer", "default": 2},
            "nested": {"type": "object", "properties": {"k": {"type": "boolean"}}},
        },
        "required": ["text"],
    }
    exported = strict_schema(model_from_schema("M", schema))
    assert exported == {
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "what to say"},
            "opt": {"type": "integer", "default": 2},
            "nested": {
                "type": "object",
                "properties": {"k": {"type": "boolean"}},
                "required": [],
                "additionalProperties": False,
            },
        },
        "required": ["text"],
        "additionalProperties": False,
    }


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string"},
        {"type": "object", "properties": {"x": {"type": "date"}}},
        {"type": "object", "properties": {"x": {"oneOf": [{"type": "string"}]}}},
        {"type": "object", "properties": ["x"]},
    ],
)
def test_unsupported_schemas_are_refused(schema: dict[str, Any]) -> None:
    """Reference-defined: a schema the engine cannot check strictly is not guessed at."""
    with pytest.raises(UnsupportedSchemaError):
        model_from_schema("M", schema)


# -- calls through the pipeline ---------------------------------------------


def test_call_forwards_the_given_fields_to_the_server(ctx: ToolUseContext) -> None:
    """SPEC: REG-MCP-1, TOOL-CALL-1"""
    server = FakeServer("s", definition("t", read_only_hint=True), answer=text_result("ok"))
    outcome = run(ctx, [*mcp_tools(server)], "mcp__s__t", {"text": "hi"})
    assert server.calls == [("t", {"text": "hi"})]
    assert (outcome.stage, outcome.is_error, outcome.content) == ("done", False, "ok")
    assert outcome.output == {"content": [{"type": "text", "text": "ok"}]}


def test_an_error_result_ends_the_call_with_mcp_tool_error(ctx: ToolUseContext) -> None:
    """SPEC: REG-MCP-1, ERR-CODE-2"""
    answer = McpCallResult(({"type": "text", "text": "boom"},), is_error=True)
    server = FakeServer("s", definition("t", read_only_hint=True), answer=answer)
    outcome = run(ctx, mcp_tools(server), "mcp__s__t", {"text": "hi"})
    assert (outcome.stage, outcome.error_code, outcome.error_name) == ("call", None, "McpToolError")
    assert (outcome.is_error, outcome.content) == (True, "<tool_use_error>boom</tool_use_error>")
    assert McpToolError.error_name == "McpToolError"


def test_a_schema_mistake_is_reported_under_the_pool_name(ctx: ToolUseContext) -> None:
    """SPEC: REG-MCP-1, DISP-SCHEMA-1"""
    server = FakeServer("s", definition("t", read_only_hint=True), answer=text_result("x"))
    outcome = run(ctx, mcp_tools(server), "mcp__s__t", {"text": 1})
    assert (outcome.stage, outcome.error_name) == ("input_schema", "InputValidationError")
    assert outcome.content == (
        "<tool_use_error>InputValidationError: mcp__s__t failed due to the following issue:\n"
        "The parameter `text` type is expected as `string` but provided as `number`"
        "</tool_use_error>"
    )
    assert server.calls == []


def test_map_result_joins_text_and_keeps_other_blocks() -> None:
    """Reference-defined: text-only MCP content is one string, anything else stays blocks."""
    two = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    assert map_result({"content": two}, DOCUMENTED) == "a\nb"
    image = [{"type": "image", "data": "AA==", "mimeType": "image/png"}]
    assert map_result({"content": image}, DOCUMENTED) == image
    assert map_result({"content": []}, DOCUMENTED) == ""


# -- the test server (PROTO-TESTMCP-1) --------------------------------------


def test_test_server_offers_echo_and_an_unprefixed_read() -> None:
    """SPEC: PROTO-TESTMCP-1"""
    echo, read = mcp_tools(TEST_SERVER)
    assert (echo.name, echo.description) == (ECHO, "Echo the given text.")
    assert strict_schema(echo.input_model) == {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": False,
    }
    assert echo.mcp_info == McpInfo(server_name="test", tool_name="echo")
    assert read.name == "Read"
    assert list(strict_schema(read.input_model)["properties"]) == ["file_path"]


def test_echo_answers_its_text_or_an_error_for_fail(ctx: ToolUseContext) -> None:
    """SPEC: PROTO-TESTMCP-1, REG-MCP-1"""
    tools = mcp_tools(TEST_SERVER)
    assert run(ctx, tools, ECHO, {"text": "hi there"}).content == "hi there"
    failed = run(ctx, tools, ECHO, {"text": "fail"})
    assert (failed.stage, failed.error_name) == ("call", "McpToolError")
    assert failed.content == "<tool_use_error>echo failed</tool_use_error>"
    assert run(ctx, tools, "Read", {"file_path": "/x"}).content == "shadowed"


def test_the_built_in_read_wins_its_name(begin: Begin, tmp_path: Path) -> None:
    """SPEC: PROTO-TESTMCP-1, REG-ASSEMBLE-1"""
    (tmp_path / "a.txt").write_text("hello\n")
    engine = begin(test_tools=True)
    answer = request(engine, "call", tool_use=use("Read", file_path=str(tmp_path / "a.txt")))
    assert answer["tool_result"]["content"] == "1\thello\n2\t" + READ_REMINDER
    pool = build_pool(Session.create(root=str(tmp_path), test_tools=True))
    read = find_tool(pool, "Read")
    assert read is not None
    assert read.mcp_info is None


# -- rules, hooks and modes by the MCP name (through the engine) -------------


def use(name: str, *, tool_id: str = "toolu_1", **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def request(engine: Engine, cmd: str, **fields: Any) -> dict[str, Any]:
    answer = engine.handle({"seq": 1, "cmd": cmd, **fields})
    assert "error" not in answer, answer
    return answer


def echo(engine: Engine, text: str = "hi") -> dict[str, Any]:
    return request(engine, "call", tool_use=use(ECHO, text=text))


def permissions(**lists: Any) -> dict[str, Any]:
    return {"userSettings": {"permissions": lists}}


@pytest.mark.parametrize("rule", ["mcp__test", "mcp__test__*", "mcp__test__echo", "mcp__test(*)"])
def test_allow_rules_by_server_or_tool_name(begin: Begin, rule: str) -> None:
    """SPEC: PERM-RULE-2, REG-MCP-1"""
    engine = begin(test_tools=True, prompt="deny", settings=permissions(allow=[rule]))
    answer = echo(engine)
    assert answer["outcome"]["stage"] == "done"
    assert answer["outcome"]["permission"]["rule"] == rule.removesuffix("(*)")


@pytest.mark.parametrize(
    "rule", ["mcp__other", "mcp__tes", "mcp__test__ech", "mcp__test__echo(hi)", "echo", "mcp__*"]
)
def test_rules_for_other_names_do_not_apply(begin: Begin, rule: str) -> None:
    """SPEC: PERM-RULE-2, REG-MCP-1"""
    engine = begin(test_tools=True, prompt="deny", settings=permissions(allow=[rule]))
    answer = echo(engine)
    assert (answer["outcome"]["stage"], answer["outcome"]["permission"]["reason"]) == (
        "permission",
        "prompt",
    )


@pytest.mark.parametrize("rule", ["mcp__test", "mcp__test__*", "mcp__test__echo"])
def test_ask_rules_by_server_or_tool_name(begin: Begin, rule: str) -> None:
    """SPEC: PERM-RULE-2, PERM-ORDER-1"""
    settings = permissions(allow=["mcp__test__echo"], ask=[rule])
    answer = echo(begin(test_tools=True, prompt="deny", settings=settings))
    assert (answer["outcome"]["stage"], answer["outcome"]["permission"]["reason"]) == (
        "permission",
        "prompt",
    )
    asked = [e["reason"] for e in answer["events"] if e["type"] == "permission_request"]
    assert asked == ["rule"]


def test_without_a_rule_the_user_is_asked(begin: Begin) -> None:
    """SPEC: TOOL-PROPS-1, PERM-PROMPT-1"""
    answer = echo(begin(test_tools=True, prompt="deny"))
    assert answer["outcome"]["stage"] == "permission"
    assert [e["tool"] for e in answer["events"] if e["type"] == "permission_request"] == [ECHO]


def test_auto_mode_classifier_allows_the_read_only_echo(begin: Begin) -> None:
    """SPEC: TOOL-PROPS-1, PERM-CLASSIFIER-1"""
    settings = {"userSettings": {"permissions": {"defaultMode": "auto"}}}
    answer = echo(begin(test_tools=True, prompt="deny", settings=settings))
    assert answer["outcome"]["stage"] == "done"
    assert answer["outcome"]["permission"]["reason"] == "classifier"


def test_plan_mode_lets_the_read_only_echo_through(begin: Begin) -> None:
    """SPEC: TOOL-PROPS-1, PERM-MODE-3"""
    settings = permissions(allow=["mcp__test"], defaultMode="plan")
    assert echo(begin(test_tools=True, prompt="deny", settings=settings))["outcome"]["stage"] == (
        "done"
    )


def test_two_echo_calls_share_a_batch(begin: Begin) -> None:
    """SPEC: TOOL-PROPS-1, SCHED-PARTITION-1"""
    engine = begin(test_tools=True)
    content = [use(ECHO, tool_id="a", text="1"), use(ECHO, tool_id="b", text="2")]
    answer = request(engine, "message", content=content)
    assert answer["batches"] == [["a", "b"]]
    assert [r["tool_result"]["content"] for r in answer["results"]] == ["1", "2"]


def hooks(event: str, matcher: str, command: str) -> dict[str, Any]:
    group = {"matcher": matcher, "hooks": [{"type": "command", "command": command, "timeout": 30}]}
    return {"projectSettings": {"hooks": {event: [group]}}}


def script(name: str, *args: str) -> str:
    return " ".join([sys.executable, str(FIXTURES / name), *args])


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("matcher", "runs"),
    [
        ("mcp__test__.*", True),
        ("mcp__test__echo", True),
        ("mcp__.*__echo", True),
        ("^mcp__test$", False),
        ("mcp__test", False),  # a plain name: exact
        ("echo", False),
    ],
)
def test_hook_matchers_see_the_pool_name(begin: Begin, matcher: str, runs: bool) -> None:
    """SPEC: HOOK-MATCH-1, REG-MCP-1"""
    settings = hooks("PreToolUse", matcher, script("exit_code.py", "2", "no"))
    answer = echo(begin(test_tools=True, settings=settings))
    assert answer["outcome"]["stage"] == ("pre_hook" if runs else "done")


@pytest.mark.subprocess
def test_hook_input_names_the_mcp_tool(begin: Begin, tmp_path: Path) -> None:
    """SPEC: HOOK-INPUT-1, REG-MCP-1"""
    record = tmp_path / "input.json"
    settings = hooks("PreToolUse", "mcp__test__.*", script("record_input.py", str(record)))
    echo(begin(test_tools=True, settings=settings), "hey")
    seen = json.loads(record.read_text())
    assert (seen["tool_name"], seen["tool_input"]) == (ECHO, {"text": "hey"})


@pytest.mark.subprocess
def test_post_hook_replaces_mcp_output(begin: Begin) -> None:
    """SPEC: HOOK-POST-1, REG-MCP-1"""
    output = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedMCPToolOutput": "new"}}
    command = script("print_output.py", "'" + json.dumps(output) + "'")
    answer = echo(begin(test_tools=True, settings=hooks("PostToolUse", "", command)))
    assert (answer["outcome"]["stage"], answer["tool_result"]["content"]) == ("done", "new")
