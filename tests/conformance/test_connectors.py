"""Connectors and the runner against a misbehaving implementation.

The fake adapter is run as a subprocess in each of its modes; every wait is
bounded by a short connector timeout, and no test asserts on elapsed time.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import DATA, fake_command

from conformance.errors import AdapterCrash, ConformanceError, VersionMismatch
from conformance.peers.direct import DirectConnector
from conformance.peers.fake_adapter import FakeEngine
from conformance.peers.registry import _REGISTRY, connect, register_connector
from conformance.peers.stdio import StdioConnector
from conformance.run.results import Outcome
from conformance.run.runner import Runner
from conformance.suite.scenario import load_scenario, parse_scenario
from conformance.wire.connector import ConnectorOptions

FAST = ConnectorOptions(timeout=1.0, hello_timeout=30.0)
CALLS = load_scenario(DATA / "suite" / "basic" / "call-ok.yaml")
MESSAGE = load_scenario(DATA / "suite" / "extra" / "message-ok.yaml")
NO_CALLS = parse_scenario(
    "id: no-calls\ntitle: t\nspec: [A-1]\nlevel: MUST\n"
    "steps:\n  - session: restart\n  - fs: {mkdir: d}\n"
)


@pytest.fixture
def stdio_runner(request: pytest.FixtureRequest) -> Iterator[Runner]:
    """A runner on the fake adapter in the mode given by indirect parametrization."""
    runner = Runner(connect(fake_command(request.param), FAST))
    runner.start()
    try:
        yield runner
    finally:
        runner.close()


@pytest.mark.subprocess
@pytest.mark.parametrize("stdio_runner", ["ok", "split"], indirect=True)
def test_a_well_behaved_adapter_passes_even_when_answers_come_in_pieces(
    stdio_runner: Runner,
) -> None:
    assert stdio_runner.run(CALLS).outcome is Outcome.PASS
    assert stdio_runner.run(MESSAGE).outcome is Outcome.PASS


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("stdio_runner", "outcome", "kind", "says"),
    [
        ("crash", Outcome.CRASH, "crash", "exited with status 3"),
        pytest.param(
            "hang",
            Outcome.TIMEOUT,
            "timeout",
            "no answer to 'call' within 1 s",
            marks=pytest.mark.slow,  # the connector's timeout, then a restart
        ),
        ("garbage", Outcome.ERROR, "protocol", "not JSON"),
        ("wrong_seq", Outcome.ERROR, "protocol", "has seq 4, expected 3"),
    ],
    indirect=["stdio_runner"],
)
def test_a_broken_adapter_is_reported_then_restarted(
    stdio_runner: Runner, outcome: Outcome, kind: str, says: str
) -> None:
    broken = stdio_runner.run(CALLS)
    assert (broken.outcome, broken.kind, broken.step) == (outcome, kind, 1)
    assert says in broken.message
    # The next scenario gets a fresh adapter (hello replayed): it never calls, so it passes.
    assert stdio_runner.run(NO_CALLS).outcome is Outcome.PASS
    assert stdio_runner.run(CALLS).outcome is outcome


@pytest.mark.subprocess
@pytest.mark.parametrize("stdio_runner", ["stderr"], indirect=True)
def test_adapter_stderr_is_captured_per_scenario(stdio_runner: Runner) -> None:
    result = stdio_runner.run(CALLS)
    assert result.outcome is Outcome.PASS
    assert "fake: handling call" in result.stderr
    assert "fake: handling call" not in stdio_runner.run(NO_CALLS).stderr


@pytest.mark.subprocess
def test_another_protocol_version_is_a_version_mismatch() -> None:
    connector = connect(fake_command("bad_protocol"), FAST)
    with pytest.raises(VersionMismatch) as info:
        connector.start()
    assert (info.value.expected, info.value.got) == (1, 2)
    connector.close()


@pytest.mark.subprocess
def test_a_runner_that_cannot_start_reports_each_scenario() -> None:
    runner = Runner(connect(fake_command("bad_protocol"), FAST))
    result = runner.run(CALLS)
    runner.close()
    assert (result.outcome, result.kind, result.where) == (
        Outcome.ERROR,
        "version_mismatch",
        "start",
    )


@pytest.mark.subprocess
def test_a_missing_command_is_a_crash_at_start() -> None:
    connector = StdioConnector(["/nonexistent/adapter"], options=FAST)
    with pytest.raises(AdapterCrash, match="cannot start"):
        connector.start()
    connector.close()


@pytest.mark.subprocess
def test_hello_reports_the_implementation_and_features() -> None:
    connector = connect(fake_command("ok", "--features", "read,bash"), FAST)
    hello = connector.start()
    connector.close()
    assert hello.name == "fake 0"
    assert hello.features == {"read", "bash"}


@pytest.mark.subprocess
def test_features_missing_from_hello_make_a_scenario_not_applicable() -> None:
    runner = Runner(connect(fake_command("ok", "--features", "bash"), FAST))
    with runner:
        result = runner.run(CALLS)
    assert (result.outcome, result.reason) == (Outcome.NOT_APPLICABLE, "requires read")


# -- direct -------------------------------------------------------------------


class RaisingEngine(FakeEngine):
    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        if request["cmd"] == "call":
            raise RuntimeError("boom")
        return super().handle(request)


class NotJsonEngine(FakeEngine):
    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        response = super().handle(request)
        if request["cmd"] == "call":
            response["tool_result"]["content"] = {1, 2}
        return response


class HangingEngine(FakeEngine):
    release = threading.Event()

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        if request["cmd"] == "call":
            self.release.wait(timeout=30)
        return super().handle(request)


def test_direct_engine_exceptions_are_crashes_with_the_traceback_as_stderr() -> None:
    with Runner(DirectConnector(RaisingEngine, options=FAST)) as runner:
        result = runner.run(CALLS)
        assert (result.outcome, result.kind) == (Outcome.CRASH, "crash")
        assert "RuntimeError: boom" in result.stderr
        assert runner.run(NO_CALLS).outcome is Outcome.PASS


def test_a_direct_answer_that_is_not_json_is_an_internal_error() -> None:
    # PROTO-INTERNAL-1: what the stdio adapter answers when it cannot encode an answer
    with Runner(DirectConnector(NotJsonEngine, options=FAST)) as runner:
        result = runner.run(CALLS)
        assert (result.outcome, result.kind) == (Outcome.ERROR, "internal")
        assert runner.run(NO_CALLS).outcome is Outcome.PASS


def test_a_hanging_direct_engine_times_out_and_is_replaced() -> None:
    options = ConnectorOptions(timeout=0.2, hello_timeout=30.0)
    try:
        with Runner(DirectConnector(HangingEngine, options=options)) as runner:
            assert runner.run(CALLS).outcome is Outcome.TIMEOUT
            assert runner.run(NO_CALLS).outcome is Outcome.PASS
    finally:
        HangingEngine.release.set()


# -- registry -----------------------------------------------------------------


def test_unknown_and_reserved_schemes_fail_clearly() -> None:
    with pytest.raises(
        ConformanceError, match="schemes: agent, claude-code, direct, mcp, mutant, stdio"
    ):
        connect("carrier-pigeon:x")
    with pytest.raises(ConformanceError, match="unknown mutant 'no-staleness'"):
        connect("mutant:no-staleness")
    with pytest.raises(ConformanceError, match="needs a command"):
        connect("stdio:")


def test_direct_can_name_another_in_process_engine() -> None:
    connector = connect("direct:conformance.peers.fake_adapter:FakeEngine")
    assert connector.start().name == "fake 0"
    connector.close()


def test_new_schemes_plug_into_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []

    def factory(rest: str, options: ConnectorOptions) -> DirectConnector:
        seen.append(rest)
        return DirectConnector(FakeEngine, description=f"test:{rest}", options=options)

    monkeypatch.setitem(_REGISTRY, "test-scheme", factory)
    with pytest.raises(ValueError, match="already registered"):
        register_connector("test-scheme", factory)
    connector = connect("test-scheme:variant-a")
    assert (seen, connector.description) == (["variant-a"], "test:variant-a")
