"""The dispatch pipeline as the file tools meet it: lookup, schema, validate, call, errors."""

from __future__ import annotations

import dataclasses
import errno
import os
from pathlib import Path
from typing import Any

import pytest
from pydantic import Field
from refsupport import Call, Use, assert_done, assert_refused, content

from reference import dispatch as dispatch_module
from reference import errors
from reference.dispatch import classify_error, dispatch
from reference.engine import Engine
from reference.tool import Tool, ToolResult, ToolUseContext, build_tool
from reference.tools.common import StrictInput
from reference.tools.edit import EDIT_TOOL
from reference.tools.read.tool import READ_TOOL
from reference.tools.write import WRITE_TOOL


class EchoInput(StrictInput):
    text: str = Field(description="anything")


def raising_tool(exc: BaseException) -> Tool:
    def call(_inp: EchoInput, _ctx: ToolUseContext) -> ToolResult:
        raise exc

    return build_tool(name="Boom", input_model=EchoInput, call=call)


def schema_refusal(response: dict[str, Any]) -> list[str]:
    """The message lines of an input_schema refusal (its name is checked on its own)."""
    got = response["outcome"]
    assert (got["stage"], got["error_code"]) == ("input_schema", None), response
    assert response["tool_result"]["is_error"] is True
    text = content(response)
    assert text.startswith("<tool_use_error>"), text
    assert text.endswith("</tool_use_error>"), text
    return text.removeprefix("<tool_use_error>").removesuffix("</tool_use_error>").split("\n")


def type_line(field: str, expected: str, provided: str) -> str:
    return f"The parameter `{field}` type is expected as `{expected}` but provided as `{provided}`"


def one_issue(tool: str, line: str) -> list[str]:
    return [f"InputValidationError: {tool} failed due to the following issue:", line]


def test_unknown_tool_ends_at_stage_unknown_tool(call: Call) -> None:
    """SPEC: DISP-FIND-1"""
    response = call("NoSuchTool", file_path="/x")
    assert_refused(response, stage="unknown_tool", name="UnknownToolError")
    assert content(response) == (
        "<tool_use_error>Error: No such tool available: NoSuchTool</tool_use_error>"
    )


def test_missing_then_unexpected_fields_are_listed_one_per_line(call: Call) -> None:
    """SPEC: DISP-SCHEMA-1, DISP-SCHEMA-2"""
    assert schema_refusal(call("Read", zeta="/x", alpha=1)) == [
        "InputValidationError: Read failed due to the following issues:",
        "The required parameter `file_path` is missing",
        "An unexpected parameter `zeta` was provided",
        "An unexpected parameter `alpha` was provided",
    ]


def test_schema_refusal_is_named_input_validation_error(call: Call) -> None:
    """SPEC: DISP-SCHEMA-1"""
    assert_refused(call("Read", file_path=7), stage="input_schema", name="InputValidationError")


@pytest.mark.parametrize(
    ("tool_input", "line"),
    [
        ({"file_path": 7}, type_line("file_path", "string", "number")),
        ({"file_path": "/x", "offset": "2"}, type_line("offset", "integer", "string")),
        ({"file_path": "/x", "limit": True}, type_line("limit", "integer", "boolean")),
        ({"file_path": None}, type_line("file_path", "string", "null")),
        ({"file_path": ["/x"]}, type_line("file_path", "string", "array")),
        ({"file_path": {"p": 1}}, type_line("file_path", "string", "object")),
        ({"file_path": "/x", "limit": 2.5}, type_line("limit", "integer", "number")),
        ({"file_path": "/x", "offset": 0}, "The parameter `offset` is invalid: must be >= 1"),
    ],
    ids=["number", "string", "boolean", "null", "array", "object", "fraction", "constraint"],
)
def test_a_bad_field_is_named_with_the_expected_and_provided_type_or_the_constraint(
    call: Call, tool_input: dict[str, Any], line: str
) -> None:
    """SPEC: DISP-SCHEMA-1, DISP-SCHEMA-2, TOOL-SCHEMA-1"""
    assert schema_refusal(call("Read", **tool_input)) == one_issue("Read", line)


def test_bad_values_are_listed_in_schema_property_order(call: Call) -> None:
    """SPEC: DISP-SCHEMA-2"""
    assert schema_refusal(call("Read", limit="x", offset=0, file_path=1)) == [
        "InputValidationError: Read failed due to the following issues:",
        type_line("file_path", "string", "number"),
        "The parameter `offset` is invalid: must be >= 1",
        type_line("limit", "integer", "string"),
    ]


def test_only_the_exact_strings_true_and_false_are_booleans(tmp_path: Path, call: Call) -> None:
    """SPEC: TOOL-SCHEMA-1, DISP-SCHEMA-2, EDIT-BOOL-1"""
    for value in ("True", "yes"):
        response = call(
            "Edit", file_path=str(tmp_path / "a"), old_string="a", new_string="b", replace_all=value
        )
        assert schema_refusal(response) == one_issue(
            "Edit", type_line("replace_all", "boolean", "string")
        )
    path = tmp_path / "b.txt"
    path.write_text("x x\n")
    call("Read", file_path=str(path))
    every = call("Edit", file_path=str(path), old_string="x", new_string="y", replace_all="true")
    assert_done(every)
    assert path.read_text() == "y y\n"


def test_an_integral_number_is_an_integer(tmp_path: Path, call: Call) -> None:
    """SPEC: TOOL-SCHEMA-1"""
    (tmp_path / "a.txt").write_text("1\n2\n3\n")
    response = call("Read", file_path=str(tmp_path / "a.txt"), offset=2.0, limit=1.0)
    assert assert_done(response)["file"]["content"] == "2"


def test_input_that_is_not_an_object_gives_the_single_object_line(ctx: ToolUseContext) -> None:
    """SPEC: DISP-SCHEMA-2"""
    outcome = dispatch([READ_TOOL], {"id": "t", "name": "Read", "input": ["/x"]}, ctx)
    assert (outcome.stage, outcome.error_code) == ("input_schema", None)
    assert outcome.content == (
        "<tool_use_error>InputValidationError: Read failed due to the following issue:\n"
        "The input type is expected as `object` but provided as `array`</tool_use_error>"
    )


@pytest.mark.parametrize("tool", [READ_TOOL, WRITE_TOOL, EDIT_TOOL], ids=lambda t: t.name)
def test_call_receives_the_model_input_with_the_relative_path_untouched(
    tmp_path: Path, use: Use, tool: Tool
) -> None:
    """SPEC: TOOL-CALL-1, DISP-BACKFILL-1"""
    (tmp_path / "a.txt").write_text("abc\n")
    seen: list[Any] = []

    def capture(inp: Any, _ctx: ToolUseContext) -> ToolResult:
        seen.append(inp)
        return ToolResult({"captured": True})

    spy = dataclasses.replace(
        tool, call=capture, validate_input=None, map_result=lambda _data, _profile: "captured"
    )
    tool_input: dict[str, Any] = {"file_path": "./sub/../a.txt"}
    if tool is WRITE_TOOL:
        tool_input["content"] = "x"
    if tool is EDIT_TOOL:
        tool_input.update(old_string="abc", new_string="x")
    assert use(spy, **tool_input).stage == "done"
    assert seen[0].file_path == "./sub/../a.txt"


def test_refusal_from_validate_carries_the_code_of_the_tool_table(use: Use) -> None:
    """SPEC: ERR-CODE-1, DISP-VALIDATE-1"""

    def validate(_inp: EchoInput, _ctx: ToolUseContext) -> None:
        raise errors.FileNotReadError("not read")

    def call(_inp: EchoInput, _ctx: ToolUseContext) -> ToolResult:
        raise AssertionError("call() after a refusal")

    tool = build_tool(
        name="T",
        input_model=EchoInput,
        call=call,
        validate_input=validate,
        error_codes={errors.FileNotReadError: 42},
    )
    outcome = use(tool, text="x")
    assert (outcome.stage, outcome.error_code, outcome.error_name) == (
        "validate",
        42,
        "FileNotReadError",
    )
    assert (outcome.is_error, outcome.content) == (
        True,
        "<tool_use_error>not read</tool_use_error>",
    )


def test_named_error_raised_in_call_ends_at_stage_call_with_its_name(use: Use) -> None:
    """SPEC: ERR-CODE-2, DISP-CALL-1"""
    outcome = use(raising_tool(errors.BinaryFileError("binary")), text="x")
    assert (outcome.stage, outcome.error_code, outcome.error_name) == (
        "call",
        None,
        "BinaryFileError",
    )
    assert (outcome.is_error, outcome.content) == (True, "<tool_use_error>binary</tool_use_error>")


@pytest.mark.parametrize(
    ("exc", "name", "shown"),
    [
        (RuntimeError("secret detail"), "RuntimeError", "RuntimeError"),
        (KeyError("secret detail"), "KeyError", "KeyError"),
        (Exception("secret detail"), "Error", "Error"),
        (
            OSError(errno.EACCES, os.strerror(errno.EACCES), "/secret detail"),
            "Error:EACCES",
            "Error:EACCES (Permission denied)",
        ),
        (
            FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), "/secret detail"),
            "Error:ENOENT",
            "Error:ENOENT (No such file or directory)",
        ),
    ],
    ids=["runtime", "key", "bare", "eacces", "enoent"],
)
def test_unnamed_exception_in_call_is_classified_and_its_message_never_shown(
    use: Use, exc: Exception, name: str, shown: str
) -> None:
    """SPEC: ERR-CODE-3, DISP-CLASSIFY-1"""
    outcome = use(raising_tool(exc), text="x")
    assert (outcome.stage, outcome.error_code, outcome.error_name) == ("call", None, name)
    assert outcome.is_error is True
    assert "secret detail" not in str(outcome.content)
    assert outcome.content == f"<tool_use_error>Unexpected error in Boom: {shown}</tool_use_error>"


class Foo(Exception):
    pass


class AVeryLongExceptionNameThatGoesOnAndOnWellPastTheSixtyCharacterCut(Exception):
    pass


@pytest.mark.parametrize(
    ("exc", "name"),
    [
        (OSError(errno.ENOENT, "x"), "Error:ENOENT"),
        (FileNotFoundError(errno.ENOENT, "x"), "Error:ENOENT"),
        (OSError(errno.ELOOP, "x"), "Error:ELOOP"),
        (errors.MaxFileReadTokenExceededError("x"), "MaxFileReadTokenExceededError"),
        (errors.FileUnexpectedlyModifiedError("x"), "FileUnexpectedlyModifiedError"),
        (ValueError("x"), "ValueError"),
        (Foo("x"), "Error"),  # a name of 3 characters or fewer
        (Exception("x"), "Error"),
        (
            AVeryLongExceptionNameThatGoesOnAndOnWellPastTheSixtyCharacterCut("x"),
            "AVeryLongExceptionNameThatGoesOnAndOnWellPastTheSixtyCharact",
        ),
    ],
)
def test_classify_error_uses_errno_then_the_name_then_error(exc: BaseException, name: str) -> None:
    """SPEC: DISP-CLASSIFY-1, ERR-CODE-3"""
    assert classify_error(exc) == name


@pytest.mark.parametrize("tool_name", ["Read", "Write", "Edit"])
def test_os_error_while_validating_a_path_does_not_escape_the_engine(
    tmp_path: Path, engine: Engine, tool_name: str
) -> None:
    """SPEC: ERR-CODE-3, DISP-CLASSIFY-1"""
    loop = tmp_path / "loop"
    loop.symlink_to(loop)  # stat() fails with ELOOP: no named error covers it
    tool_input = {"file_path": str(loop), "content": "x", "old_string": "a", "new_string": "b"}
    keep = {"Read": ("file_path",), "Write": ("file_path", "content")}.get(
        tool_name, ("file_path", "old_string", "new_string")
    )
    tool_use = {"id": "t", "name": tool_name, "input": {k: tool_input[k] for k in keep}}
    response = engine.handle({"seq": 1, "cmd": "call", "tool_use": tool_use})
    assert_refused(response, stage="call", name="Error:ELOOP")
    assert os.path.islink(loop)


def test_every_call_reports_tool_start_first_and_tool_end_last(tmp_path: Path, call: Call) -> None:
    """SPEC: PROTO-EVENT-2"""
    response = call("Write", file_path=str(tmp_path / "new.txt"), content="x")
    kinds = [(event["type"], event["id"]) for event in response["events"]]
    assert kinds == [  # default mode asks for a Write; the emulated user allows it
        ("tool_start", "toolu_0001"),
        ("permission_request", "toolu_0001"),
        ("file_changed", "toolu_0001"),
        ("tool_end", "toolu_0001"),
    ]


def test_tool_start_names_the_tool_and_tool_end_the_stage(tmp_path: Path, call: Call) -> None:
    """SPEC: PROTO-EVENT-1"""
    response = call("Read", file_path=str(tmp_path / "missing"))
    events = response["events"]
    assert events[0] == {"type": "tool_start", "id": "toolu_0001", "name": "Read"}
    assert events[-1] == {"type": "tool_end", "id": "toolu_0001", "stage": "validate"}


def test_aborted_context_runs_nothing(ctx: ToolUseContext, tmp_path: Path) -> None:
    """SPEC: DISP-ABORT-1"""
    ctx.abort.abort("user_interrupt")
    outcome = dispatch(
        [WRITE_TOOL],
        {"id": "t", "name": "Write", "input": {"file_path": str(tmp_path / "a"), "content": "x"}},
        ctx,
    )
    assert (outcome.stage, outcome.is_error) == ("aborted", True)
    assert not (tmp_path / "a").exists()


def test_a_message_finds_each_tool_and_checks_each_schema_once(
    tmp_path: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: SCHED-PARTITION-1, DISP-FIND-1, DISP-SCHEMA-1"""
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "b.txt").write_text("b\n")
    looked_up: list[str] = []
    parsed: list[str] = []
    real_find = dispatch_module.find_tool
    real_validate = READ_TOOL.input_model.model_validate

    def counting_find(tools: Any, name: str) -> Any:
        looked_up.append(name)
        return real_find(tools, name)

    def counting_validate(value: Any, **options: Any) -> Any:
        parsed.append(value["file_path"])
        return real_validate(value, **options)

    monkeypatch.setattr(dispatch_module, "find_tool", counting_find)
    monkeypatch.setattr(READ_TOOL.input_model, "model_validate", counting_validate)
    blocks = [
        {"type": "tool_use", "id": f"t{n}", "name": "Read", "input": {"file_path": str(path)}}
        for n, path in enumerate([tmp_path / "a.txt", tmp_path / "b.txt"])
    ]
    response = engine.handle({"seq": 2, "cmd": "message", "content": blocks})
    assert [r["outcome"]["stage"] for r in response["results"]] == ["done", "done"]
    assert response["batches"] == [["t0", "t1"]]  # both safe: one batch
    assert looked_up == ["Read", "Read"]
    assert parsed == [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]


def test_a_calls_path_is_expanded_once_and_carried_on_the_call(
    call: Call, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reference-defined (FILE-PATH-1, DISP-BACKFILL-1): validation, permissions and call()
    reuse the backfill's expansion instead of computing it again."""
    import reference.tool as tool_module  # noqa: PLC0415  (the module whose name is patched)

    seen: list[str] = []
    original = tool_module.expand_path

    def counting(path: str, *, cwd: str, home: str) -> str:
        seen.append(path)
        return original(path, cwd=cwd, home=home)

    monkeypatch.setattr(tool_module, "expand_path", counting)
    (tmp_path / "a.txt").write_text("one\n")
    assert_done(call("Read", file_path="a.txt"))
    assert seen == ["a.txt"]
