"""Protocol v1 as one artifact: ``conformance/schema/protocol-v1.json`` (PROTO-SCHEMA-1).

Both ways: every request the runner sends and every answer the reference
engine gives, through ``direct`` and ``stdio``, over a representative set of
scenarios, is valid under the schema; malformed requests and answers are
rejected with the JSON path named. The compiled predicate the runner uses and
``jsonschema`` (the draft 2020-12 authority) agree on all of it. And an engine
exception is the same ``internal`` answer through both connectors
(PROTO-INTERNAL-1).
"""

from __future__ import annotations

import copy
import functools
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import referencing
from referencing.jsonschema import DRAFT202012

from conformance.errors import SchemaViolation
from conformance.peers.direct import DirectConnector
from conformance.peers.registry import connect
from conformance.peers.stdio import StdioConnector
from conformance.run.results import Outcome
from conformance.run.runner import Runner
from conformance.suite.scenario import load_scenario, parse_scenario
from conformance.wire.connector import Connector
from conformance.wire.protocol import (
    COMMANDS,
    check_answer,
    check_call_response,
    check_message_response,
    check_request,
    check_response,
    protocol_schema,
)
from reference.engine import Engine
from reference.protocol.schemacheck import UnsupportedSchema, compile_predicate

SCENARIOS = Path(__file__).resolve().parents[2] / "conformance" / "scenarios"
# Every protocol, interrupt and streaming scenario (the rarer commands and
# events), and the first few of every area.
CHOSEN = sorted(
    path
    for area in sorted(SCENARIOS.iterdir())
    for i, path in enumerate(sorted(area.glob("*.yaml")))
    if area.name == "protocol"
    or "interrupt" in path.stem
    or "stream" in path.stem
    or i < (6 if area.name in ("scheduler", "hooks") else 2)
)

Exchange = tuple[dict[str, Any], dict[str, Any], bool]
"""(request, answer, sent as a raw step)."""


@functools.cache
def authority(pointer: str) -> jsonschema.Draft202012Validator:
    schema = protocol_schema()
    registry: referencing.Registry[Any] = referencing.Registry().with_resource(
        str(schema["$id"]), DRAFT202012.create_resource(schema)
    )
    return jsonschema.Draft202012Validator({"$ref": schema["$id"] + pointer}, registry=registry)


def answer_pointer(command: object, answer: dict[str, Any]) -> str:
    if "error" in answer:
        return "#/$defs/error"
    return f"#/$defs/{command}/$defs/response"


def both_agree(pointer: str, instance: Any) -> bool:
    """The compiled predicate and jsonschema give the same verdict; return it."""
    fast = compile_predicate(protocol_schema(), pointer)(instance)
    slow = authority(pointer).is_valid(instance)
    assert fast == slow, f"{pointer}: predicate says {fast}, jsonschema {slow} on {instance!r:.300}"
    return fast


def record(connector: Connector) -> list[Exchange]:
    """Every request and answer the connector moves from now on."""
    log: list[Exchange] = []
    raw = [False]
    transmit = connector._transmit  # type: ignore[attr-defined]
    request_raw = connector.request_raw

    def recording_transmit(request: dict[str, Any], timeout: float) -> dict[str, Any]:
        answer: dict[str, Any] = transmit(request, timeout)
        log.append((copy.deepcopy(request), copy.deepcopy(answer), raw[0]))
        return answer

    def recording_raw(body: Any) -> dict[str, Any]:
        raw[0] = True
        try:
            return request_raw(body)
        finally:
            raw[0] = False

    connector._transmit = recording_transmit  # type: ignore[attr-defined]
    connector.request_raw = recording_raw  # type: ignore[method-assign]
    return log


@functools.cache
def traffic(spec: str) -> tuple[Exchange, ...]:
    connector = connect(spec)
    log = record(connector)
    with Runner(connector) as runner:
        for path in CHOSEN:
            result = runner.run(load_scenario(path))
            assert result.outcome in (Outcome.PASS, Outcome.NOT_APPLICABLE), result.message
    return tuple(log)


@pytest.fixture(
    params=[  # each runs the chosen scenarios once, Bash ones among them: seconds, and shells
        pytest.param("direct", marks=[pytest.mark.slow, pytest.mark.subprocess]),
        pytest.param(
            f"stdio:{sys.executable} -m reference.adapter",
            marks=[pytest.mark.slow, pytest.mark.subprocess],
        ),
    ]
)
def exchanges(request: pytest.FixtureRequest) -> tuple[Exchange, ...]:
    return traffic(request.param)


def test_the_runner_sends_only_valid_requests(exchanges: tuple[Exchange, ...]) -> None:
    sent = [request for request, _answer, raw in exchanges if not raw]
    assert {request["cmd"] for request in sent} == set(COMMANDS)
    for request in sent:
        assert both_agree("#/$defs/request", request), request
        check_request(request)


def test_the_engine_gives_only_valid_answers(exchanges: tuple[Exchange, ...]) -> None:
    events: set[str] = set()
    for request, answer, _raw in exchanges:
        assert both_agree(answer_pointer(request.get("cmd"), answer), answer), (request, answer)
        check_answer(request.get("cmd"), answer)
        events.update(event["type"] for event in answer.get("events", []))
    kinds = {answer["error"]["kind"] for _request, answer, _raw in exchanges if "error" in answer}
    # unsupported: a begin asking for a profile the engine does not play (PROTO-BEGIN-3)
    assert kinds == {"bad_request", "unsupported"}
    assert events >= {"tool_start", "tool_end", "hook", "permission_request", "interrupt", "block"}


@pytest.mark.slow
def test_the_predicate_agrees_with_jsonschema_on_broken_answers() -> None:
    """Every answer of the direct run, broken one value at a time in several ways."""
    checked = 0
    for request, answer, _raw in traffic("direct")[:30]:
        pointer = answer_pointer(request.get("cmd"), answer)
        for broken in _breakages(answer):
            both_agree(pointer, broken)
            checked += 1
    assert checked > 300


def _breakages(value: Any) -> Iterator[Any]:
    """Copies of ``value`` with one leaf or key replaced, deleted or retyped."""
    replacements: tuple[Any, ...] = (None, 7, 1.5, True, "x", [], {})
    for path in _paths(value):
        for replacement in replacements:
            yield _replace(value, path, replacement)
        if path:
            yield _replace(value, path, _DELETE)


_DELETE = object()


def _paths(value: Any, prefix: tuple[Any, ...] = (), depth: int = 0) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if depth >= 4:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key), depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value[:2]):
            yield from _paths(item, (*prefix, index), depth + 1)


def _replace(value: Any, path: tuple[Any, ...], replacement: Any) -> Any:
    if not path:
        return replacement
    out = copy.deepcopy(value)
    node = out
    for key in path[:-1]:
        node = node[key]
    if replacement is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = replacement
    return out


# -- malformed answers and requests are rejected, naming the path -------------

CALL_ANSWER: dict[str, Any] = {
    "seq": 3,
    "tool_result": {"type": "tool_result", "tool_use_id": "t1", "content": "hi", "is_error": False},
    "outcome": {"stage": "done", "error_code": None, "error_name": None, "dedup": False},
    "events": [
        {"type": "tool_start", "id": "t1", "name": "Read"},
        {"type": "tool_end", "id": "t1", "stage": "done"},
    ],
}


def _with(base: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    out: dict[str, Any] = _replace(base, path, value)
    return out


BAD_ANSWERS = [
    ("call", _with(CALL_ANSWER, ("outcome", "stage"), "weird"), "$.outcome.stage"),
    ("call", _with(CALL_ANSWER, ("outcome", "error_code"), 3), "$.outcome.error_code"),
    ("call", _with(CALL_ANSWER, ("tool_result", "content"), 5), "$.tool_result.content"),
    (
        "call",
        _with(CALL_ANSWER, ("tool_result", "content"), [{"type": "text"}]),
        "$.tool_result.content[0]",
    ),
    ("call", _with(CALL_ANSWER, ("tool_result", "type"), "result"), "$.tool_result.type"),
    ("call", _with(CALL_ANSWER, ("events", 0, "name"), _DELETE), "$.events[0]"),
    ("call", _with(CALL_ANSWER, ("events", 1, "stage"), "finished"), "$.events[1].stage"),
    ("call", _with(CALL_ANSWER, ("seq",), "3"), "$.seq"),
    ("message", {"seq": 1, "results": [], "batches": [["a"], "b"]}, "$.batches[1]"),
    ("message", {"seq": 1, "results": [{"outcome": {}}], "batches": []}, "$.results[0]"),
    ("tools", {"seq": 1, "tools": [{"name": "Read"}], "deferred": []}, "$.tools[0]"),
    ("begin", {"seq": 1, "ok": False}, "$.ok"),
    ("end", {"seq": 1}, "$"),
    (
        "hello",
        {"seq": 1, "protocol": 1, "implementation": {"name": "x"}, "features": []},
        "$.implementation",
    ),
    (
        "hello",
        {
            "seq": 1,
            "protocol": 1,
            "implementation": {"name": "x", "version": "1", "language": "c"},
            "features": ["a", "a"],
        },
        "$.features",
    ),
]


def test_outcome_fields_are_required_unless_hello_lists_them_unreported() -> None:
    """PROTO-UNREPORTED-1: the schema leaves them optional; the runner checks them per hello."""
    answer = _with(CALL_ANSWER, ("outcome", "error_name"), _DELETE)
    assert both_agree("#/$defs/call/$defs/response", answer)
    with pytest.raises(SchemaViolation) as info:
        check_call_response(answer)
    assert info.value.path == "$.outcome"
    check_call_response(answer, frozenset({"error_name"}))
    asked = _with(
        CALL_ANSWER,
        ("events",),
        [{"type": "permission_request", "id": "t1", "tool": "Read", "answer": "deny"}],
    )
    with pytest.raises(SchemaViolation) as info:
        check_call_response(asked)
    assert info.value.path == "$.events[0]"
    check_call_response(asked, frozenset({"events.permission_request.reason"}))
    plan_missing = {"seq": 1, "results": [dict(CALL_ANSWER, seq=None)]}
    plan_missing["results"][0].pop("seq")
    with pytest.raises(SchemaViolation):
        check_message_response(plan_missing, 1)
    check_message_response(plan_missing, 1, frozenset({"batches"}))


@pytest.mark.parametrize(("command", "answer", "path"), BAD_ANSWERS)
def test_malformed_answers_are_schema_violations_at_their_path(
    command: str, answer: dict[str, Any], path: str
) -> None:
    assert not both_agree(f"#/$defs/{command}/$defs/response", answer)
    with pytest.raises(SchemaViolation) as info:
        check_response(command, answer)
    assert (info.value.kind, info.value.path) == ("schema_violation", path)


@pytest.mark.parametrize(
    ("answer", "path"),
    [
        ({"seq": 1, "error": {"kind": "oops", "message": "m"}}, "$.error.kind"),
        ({"seq": "1", "error": {"kind": "bad_request", "message": "m"}}, "$.seq"),
        ({"seq": 1, "error": {"kind": "internal"}}, "$.error"),
    ],
)
def test_malformed_error_answers_are_rejected(answer: dict[str, Any], path: str) -> None:
    assert not both_agree("#/$defs/error", answer)
    with pytest.raises(SchemaViolation) as info:
        check_answer("call", answer)
    assert info.value.path == path


def test_an_unknown_command_must_be_refused_and_counts_are_checked() -> None:
    with pytest.raises(SchemaViolation, match="unknown command"):
        check_answer("dance", {"seq": 1, "ok": True})
    with pytest.raises(SchemaViolation) as info:
        check_message_response({"seq": 1, "results": [], "batches": []}, 1)
    assert info.value.path == "$.results"


TOOL_USE = {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}
BAD_REQUESTS = [
    ({"cmd": "hello", "protocol": 1}, "$"),
    ({"seq": 1, "cmd": "dance"}, "$.cmd"),
    ({"seq": 1, "cmd": "hello"}, "$"),
    ({"seq": 1, "cmd": "call", "tool_use": {**TOOL_USE, "id": ""}}, "$.tool_use.id"),
    ({"seq": 1, "cmd": "call", "tool_use": {"id": "t", "name": "Read"}}, "$.tool_use"),
    ({"seq": 1, "cmd": "message", "content": [TOOL_USE], "block_delay_ms": -1}, "$.block_delay_ms"),
    ({"seq": 1, "cmd": "message", "content": [{"type": "tool_use", "id": "t"}]}, "$.content[0]"),
    ({"seq": 1, "cmd": "begin", "session": {"root": "/r", "prompt": "maybe"}}, "$.session.prompt"),
    ({"seq": 1, "cmd": "begin", "session": {"root": "/r", "env": {"A": 1}}}, "$.session.env.A"),
    ({"seq": 1, "cmd": "begin", "session": {"cwd": "/r"}}, "$.session"),
]


@pytest.mark.parametrize(("request_", "path"), BAD_REQUESTS)
def test_malformed_requests_are_rejected(request_: dict[str, Any], path: str) -> None:
    assert not both_agree("#/$defs/request", request_)
    with pytest.raises(SchemaViolation) as info:
        check_request(request_)
    assert info.value.path == path


def test_valid_requests_of_every_shape_pass() -> None:
    text_block = {"type": "text", "text": "thinking"}
    for request in (
        {"seq": 1, "cmd": "hello", "protocol": 1},
        {"seq": 2, "cmd": "message", "content": [text_block, {"id": "a", "name": "X", "input": 3}]},
        {"seq": 3, "cmd": "message", "content": [], "streaming": True, "interrupt": {}},
        {"seq": 4, "cmd": "begin", "session": {"root": "/r", "settings": {"other": 5}}},
    ):
        assert both_agree("#/$defs/request", request), request


def test_the_compiler_refuses_what_it_does_not_know() -> None:
    with pytest.raises(UnsupportedSchema, match="format"):
        compile_predicate({"type": "string", "format": "date"})
    with pytest.raises(UnsupportedSchema, match="local JSON pointers"):
        compile_predicate({"$ref": "https://elsewhere.invalid/schema"})


# -- PROTO-INTERNAL-1: an engine exception is one answer through both doors --

FAULT = "injected fault"
STDIO_WITH_FAULT = (
    "import sys, reference.engine as e\n"
    "def boom(*a, **k): raise RuntimeError('injected fault')\n"
    "e.EventLog = boom\n"
    "from reference.adapter import main\n"
    "sys.exit(main())\n"
)
CALL_SCENARIO = parse_scenario(
    "id: fault\ntitle: t\nspec: [PROTO-INTERNAL-1]\nlevel: MUST\n"
    "setup: {files: {a.txt: {text: hi}}}\n"
    "steps:\n  - call: {name: Read, input: {file_path: '{root}/a.txt'}}\n"
    "    expect: {stage: done}\n"
)
CLEAN_SCENARIO = parse_scenario(
    "id: clean\ntitle: t\nspec: [PROTO-INTERNAL-1]\nlevel: MUST\nsteps:\n  - session: restart\n"
)


def _raise_fault(*_args: Any, **_kwargs: Any) -> Any:
    raise RuntimeError(FAULT)


def _faulty_connectors(monkeypatch: pytest.MonkeyPatch) -> dict[str, Connector]:
    monkeypatch.setattr("reference.engine.EventLog", _raise_fault)
    return {
        "direct": DirectConnector(Engine),
        "stdio": StdioConnector([sys.executable, "-c", STDIO_WITH_FAULT]),
    }


@pytest.mark.subprocess
def test_an_engine_exception_is_the_same_internal_answer_through_both_connectors(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    answers = {}
    for name, connector in _faulty_connectors(monkeypatch).items():
        connector.start()
        try:
            connector.request({"cmd": "begin", "session": {"root": str(tmp_path)}})
            use = {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}
            answer = connector.request_raw({"cmd": "call", "tool_use": use})
            assert connector.request({"cmd": "end"}) == {"seq": 4, "ok": True}  # still serving
        finally:
            connector.close()
        error = answer["error"]
        assert error["traceback"].rstrip().endswith(f"RuntimeError: {FAULT}")
        answers[name] = {**answer, "error": {k: v for k, v in error.items() if k != "traceback"}}
    expected = {"seq": 3, "error": {"kind": "internal", "message": f"RuntimeError: {FAULT}"}}
    assert answers == {"direct": expected, "stdio": expected}


@pytest.mark.subprocess
def test_the_runner_reports_an_internal_error_as_a_coded_outcome_then_recovers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, connector in _faulty_connectors(monkeypatch).items():
        with Runner(connector) as runner:
            result = runner.run(CALL_SCENARIO)
            assert (result.outcome, result.kind, result.step) == (Outcome.ERROR, "internal", 1), (
                name
            )
            assert FAULT in result.message
            assert runner.run(CLEAN_SCENARIO).outcome is Outcome.PASS, name
