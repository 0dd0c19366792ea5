"""Each step class on its own: the registry, ``describe``, ``run`` and the
loader checks it owns, against a scripted connector and a real sandbox."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from conformance.errors import ProtocolError
from conformance.run.sandbox import Sandbox
from conformance.suite.scenario import scenario_schema
from conformance.suite.steps import (
    STEPS,
    CallStep,
    FsStep,
    MessageStep,
    RawStep,
    SessionStep,
    ToolsStep,
    ToolUse,
    parse_step,
)


class ScriptedConnector:
    """Answers each request with the next scripted answer, and remembers it.

    Each answer carries the request's ``seq``, as a connector's does.
    """

    def __init__(self, *answers: dict[str, Any]) -> None:
        self.answers = list(answers)
        self.sent: list[tuple[str, Mapping[str, Any]]] = []

    def _answer(self) -> dict[str, Any]:
        return {"seq": len(self.sent), **self.answers.pop(0)}

    def request(self, body: Mapping[str, Any]) -> dict[str, Any]:
        self.sent.append(("request", body))
        return self._answer()

    def request_raw(self, body: Mapping[str, Any]) -> dict[str, Any]:
        self.sent.append(("raw", body))
        return self._answer()


class Context:
    """A ``StepContext`` for one step: no session, only what steps use."""

    def __init__(self, sandbox: Sandbox, connector: ScriptedConnector) -> None:
        self.sandbox = sandbox
        self.connector = connector
        self.restarts = 0
        self.unreported: frozenset[str] = frozenset()
        self.cwd = sandbox.root

    def tool_use(self, use: ToolUse) -> dict[str, Any]:
        return {
            "type": "tool_use",
            "id": use.id or "toolu_x",
            "name": use.name,
            "input": self.sandbox.expand(use.input),
        }

    def restart_session(self) -> None:
        self.restarts += 1


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    box = Sandbox(tmp_path / "fixtures")
    yield box
    box.cleanup()


def context(sandbox: Sandbox, *answers: dict[str, Any]) -> Context:
    return Context(sandbox, ScriptedConnector(*answers))


def result(tool_use_id: str, content: str = "ok", **outcome: Any) -> dict[str, Any]:
    return {
        "tool_result": {
            "type": "tool_result",
            "tool_use_id": tool_use_id,
            "content": content,
            "is_error": outcome.get("stage", "done") != "done",
        },
        "outcome": {"stage": "done", "error_code": None, "error_name": None, **outcome},
    }


def test_the_registry_has_the_step_kinds_of_the_schema() -> None:
    kinds = [alt["required"][0] for alt in scenario_schema()["$defs"]["step"]["oneOf"]]
    assert list(STEPS) == kinds
    assert all(cls.key == key for key, cls in STEPS.items())


@pytest.mark.parametrize(
    ("raw", "kind", "text"),
    [
        ({"call": {"name": "Read"}}, CallStep, "call Read"),
        ({"message": [{"name": "Read"}, {"name": "Glob"}]}, MessageStep, "message Read, Glob"),
        ({"fs": {"write": "a.txt", "text": "x"}}, FsStep, "fs write a.txt"),
        ({"session": "restart"}, SessionStep, "session restart"),
        ({"tools": {}}, ToolsStep, "tools"),
        ({"raw": {"cmd": "begin"}}, RawStep, "raw begin"),
        ({"raw": {"seq": 1}}, RawStep, "raw ?"),
    ],
)
def test_each_kind_parses_from_its_key_and_describes_itself(
    raw: dict[str, Any], kind: type[object], text: str
) -> None:
    step = parse_step(raw, 7)
    assert type(step) is kind
    assert (step.describe(), step.line) == (text, 7)


def test_a_call_step_sends_its_expanded_tool_use_and_checks_the_result(sandbox: Sandbox) -> None:
    step = parse_step(
        {
            "call": {"name": "Read", "id": "r1", "input": {"file_path": "{root}/a"}},
            "expect": {"content": {"contains": "{root}"}, "stage": "validate"},
        },
        None,
    )
    ctx = context(sandbox, result("r1", content=f"at {sandbox.root}/a"))
    mismatches = step.run(ctx).mismatches
    assert ctx.connector.sent == [
        (
            "request",
            {
                "cmd": "call",
                "tool_use": {
                    "type": "tool_use",
                    "id": "r1",
                    "name": "Read",
                    "input": {"file_path": f"{sandbox.root}/a"},
                },
            },
        )
    ]
    assert [(m.path, m.expected, m.actual) for m in mismatches] == [("stage", "validate", "done")]


def test_a_call_step_passes_with_no_mismatches(sandbox: Sandbox) -> None:
    step = parse_step({"call": {"name": "Read", "id": "r1"}, "expect": {"is_error": False}}, None)
    assert step.run(context(sandbox, result("r1"))).mismatches == []


def test_a_call_answer_that_breaks_the_protocol_raises(sandbox: Sandbox) -> None:
    step = parse_step({"call": {"name": "Read"}}, None)
    with pytest.raises(ProtocolError):
        step.run(context(sandbox, {"outcome": {"stage": "done"}}))


def test_a_message_step_sends_its_options_and_checks_every_result(sandbox: Sandbox) -> None:
    step = parse_step(
        {
            "message": [{"name": "Read", "id": "a"}, {"name": "Read", "id": "b"}],
            "streaming": True,
            "block_delay_ms": 5,
            "interrupt": {"after_started": ["a"]},
            "expect": {"results": [None, {"is_error": True}], "batches": [["a", "b"]]},
        },
        None,
    )
    answer = {"results": [result("a"), result("b")], "batches": [["a"], ["b"]]}
    ctx = context(sandbox, answer)
    mismatches = step.run(ctx).mismatches
    ((how, request),) = ctx.connector.sent
    assert how == "request"
    assert [u["id"] for u in request["content"]] == ["a", "b"]
    assert (request["streaming"], request["block_delay_ms"], request["interrupt"]) == (
        True,
        5,
        {"after_started": ["a"]},
    )
    assert [m.path for m in mismatches] == ["results[1].is_error", "batches"]


def test_a_message_answer_with_too_few_results_raises(sandbox: Sandbox) -> None:
    step = parse_step({"message": [{"name": "Read"}, {"name": "Read"}]}, None)
    with pytest.raises(ProtocolError):
        step.run(context(sandbox, {"results": [result("toolu_x")], "batches": []}))


def test_an_fs_step_changes_the_sandbox_and_checks_nothing(sandbox: Sandbox) -> None:
    step = parse_step({"fs": {"write": "d/a.txt", "text": "{root}"}}, None)
    ctx = context(sandbox)
    assert step.run(ctx).mismatches == []
    assert (sandbox.root / "d" / "a.txt").read_text() == str(sandbox.root)
    assert ctx.connector.sent == []


def test_a_session_step_restarts_the_session(sandbox: Sandbox) -> None:
    ctx = context(sandbox)
    assert parse_step({"session": "restart"}, None).run(ctx).mismatches == []
    assert (ctx.restarts, ctx.connector.sent) == (1, [])


def test_a_tools_step_checks_the_pool(sandbox: Sandbox) -> None:
    step = parse_step({"tools": {}, "expect": {"deferred": ["Glob"]}}, None)
    ctx = context(sandbox, {"tools": [], "deferred": []})
    mismatches = step.run(ctx).mismatches
    assert ctx.connector.sent == [("request", {"cmd": "tools"})]
    assert [(m.path, m.expected, m.actual) for m in mismatches] == [("deferred", ["Glob"], [])]


def test_a_tools_answer_without_lists_raises(sandbox: Sandbox) -> None:
    with pytest.raises(ProtocolError):
        parse_step({"tools": {}}, None).run(context(sandbox, {"tools": []}))


def test_a_raw_step_sends_as_written_and_takes_an_error_answer_as_data(
    sandbox: Sandbox,
) -> None:
    step = parse_step(
        {
            "raw": {"cmd": "call", "cwd": "{root}"},
            "expect": {"response": {"json_subset": {"error": {"code": "bad_request"}}}},
        },
        None,
    )
    ctx = context(sandbox, {"error": {"code": "bad_request", "message": "no tool_use"}})
    assert step.run(ctx).mismatches == []
    assert ctx.connector.sent == [("raw", {"cmd": "call", "cwd": str(sandbox.root)})]
    ctx = context(sandbox, {"ok": True})
    assert [m.path for m in step.run(ctx).mismatches] == ["response.error"]


def test_a_raw_step_without_a_response_expectation_checks_nothing(sandbox: Sandbox) -> None:
    assert (
        parse_step({"raw": {"cmd": "tools"}}, None).run(context(sandbox, {"x": 1})).mismatches == []
    )


def test_step_problems_are_relative_to_the_step() -> None:
    call = {"call": {"name": "Read", "id": "a"}, "expect": {"events": {"before": [["a", "b"]]}}}
    assert [p for p, _ in CallStep.problems(call)] == [("expect", "events", "before", 0)]
    message = {
        "message": [{"name": "Read", "id": "a"}, {"name": "Read", "id": "a"}],
        "expect": {"results": [None]},
        "interrupt": {"after_started": ["z"]},
    }
    assert [p for p, _ in MessageStep.problems(message)] == [
        ("message",),
        ("expect", "results"),
        ("interrupt", "after_started", 0),
    ]
    assert list(FsStep.problems({"fs": {"delete": "a"}})) == []
