"""PROTO-UNSUPPORTED-1: an ``unsupported`` answer makes the scenario not applicable."""

from __future__ import annotations

from typing import Any, ClassVar

from conformance.peers.direct import DirectConnector
from conformance.peers.fake_adapter import FakeEngine
from conformance.run.results import Outcome
from conformance.run.runner import Runner
from conformance.suite.scenario import parse_scenario
from conformance.wire.connector import ConnectorOptions

HEAD = "id: sample\ntitle: t\nspec: [A-1]\nlevel: MUST\n"


class Refusing(FakeEngine):
    """The fake, answering ``unsupported`` to the command named in ``refuse``."""

    refuse: ClassVar[str] = "begin"
    seen: ClassVar[list[str]] = []

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        self.seen.append(str(request.get("cmd")))
        if request.get("cmd") == self.refuse:
            error = {"kind": "unsupported", "message": "no counterpart for policySettings"}
            return {"seq": request["seq"], "error": error}
        return super().handle(request)


def _run(refuse: str) -> tuple[Outcome, str, str, list[str]]:
    Refusing.refuse = refuse
    Refusing.seen = []
    scenario = parse_scenario(
        HEAD + "steps:\n  - call: {name: Read, input: {file_path: '{root}/a'}}\n"
        "  - call: {name: Read, input: {file_path: '{root}/b'}}\n"
    )
    with Runner(DirectConnector(Refusing, options=ConnectorOptions(timeout=5.0))) as runner:
        result = runner.run(scenario)
        after = runner.run(scenario)  # the adapter goes on serving
    return result.outcome, result.message, after.outcome, list(Refusing.seen)


def test_an_unsupported_begin_is_not_applicable_and_the_adapter_goes_on() -> None:
    outcome, message, after, seen = _run("begin")
    assert outcome is Outcome.NOT_APPLICABLE
    assert "no counterpart for policySettings" in message
    assert after is Outcome.NOT_APPLICABLE
    assert seen.count("hello") == 1  # no restart: it keeps serving
    assert "call" not in seen


def test_an_unsupported_call_stops_the_scenario_as_not_applicable() -> None:
    outcome, message, _after, seen = _run("call")
    assert outcome is Outcome.NOT_APPLICABLE
    assert "call not supported" in message
    assert seen.count("call") == 2  # one per scenario: the second step never ran


def test_an_unsupported_answer_to_a_raw_step_is_not_applicable() -> None:
    Refusing.refuse = "call"
    Refusing.seen = []
    scenario = parse_scenario(
        HEAD + "steps:\n  - raw: {cmd: call, tool_use: {type: tool_use, id: x, name: Read, "
        "input: oops}}\n    expect: {response: {json_subset: {error: {absent: true}}}}\n"
    )
    with Runner(DirectConnector(Refusing, options=ConnectorOptions(timeout=5.0))) as runner:
        result = runner.run(scenario)
    assert result.outcome is Outcome.NOT_APPLICABLE
    assert "raw call not supported: no counterpart" in result.message
    assert result.mismatches == ()
