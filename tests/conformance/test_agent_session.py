"""AgentSession and AgentAdapter end to end, with a small agent speaking Chat Completions.

The agent below is a test double written here (not any real CLI): it asks
the model with one tool, ``read_file``, runs each call it gets, sends the
results back as ``tool`` messages, and exits on a final text. Through it the
session's whole path is exercised: files and environment from the
definition, the loopback-only namespace where the host has one, held
requests, turns, results read back, the exit, and the escape record.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from conformance.errors import AdapterTimeout
from conformance.peers.agent.adapter import AgentAdapter
from conformance.peers.agent.connector import FAILURES
from conformance.peers.agent.definition import AgentDefinition
from conformance.peers.agent.install import InstalledAgent
from conformance.peers.agent.loopback import loopback_available
from conformance.peers.agent.mapping import map_call
from conformance.peers.agent.readback import read_back
from conformance.peers.agent.session import AgentCrash, AgentSession, AgentTimeout
from conformance.peers.inprocess import InProcessConnector
from conformance.wire.connector import ConnectorOptions

pytestmark = pytest.mark.subprocess

AGENT = textwrap.dedent(
    """
    import json, os, sys, urllib.request
    base, mode = sys.argv[1], sys.argv[2]
    settings = json.load(open(os.path.join(os.environ["HOME"], "settings.json")))
    if mode == "crash":
        sys.exit(7)
    if mode == "escape":
        import socket
        try:
            socket.create_connection(("192.0.2.7", 443), timeout=2)
        except OSError:
            pass
    tools = [{"type": "function", "function": {"name": "read_file", "parameters": {
        "type": "object", "properties": {"path": {"type": "string"}}}}}]
    messages = [{"role": "user", "content": settings["greeting"]}]
    while True:
        body = json.dumps({"model": "m", "messages": messages, "tools": tools}).encode()
        request = urllib.request.Request(base + "/v1/chat/completions", data=body,
                                         headers={"Content-Type": "application/json"})
        message = json.loads(urllib.request.urlopen(request, timeout=60).read())
        message = message["choices"][0]["message"]
        if mode == "hang":
            import time; time.sleep(60)
        messages.append(message)
        if not message.get("tool_calls"):
            break
        for call in message["tool_calls"]:
            path = json.loads(call["function"]["arguments"])["path"]
            try:
                text = open(path).read()
            except OSError as exc:
                text = "Error: " + exc.strerror
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": text})
    """
)


def definition(mode: str) -> AgentDefinition:
    return AgentDefinition.model_validate(
        {
            "name": "double",
            "implementation": {"name": "double", "version": "1.0.0", "language": "python"},
            "install": {"npm": "double", "version": "1.0.0", "program": "double.py"},
            "launch": {
                "argv": [sys.executable, "-I", "{program}", "{base_url}", mode],
                "files": [{"path": "{home}/settings.json", "json": {"greeting": "{prompt}"}}],
                "start_timeout": 30,
                "turn_timeout": 3,
                "exit_grace": 5,
            },
            "model_api": {"dialect": "openai_chat", "model": "m"},
            "tools": {"Read": {"tool": "read_file", "input": {"path": "$file_path"}}},
            "inferences": [
                {"means": "error", "tools": ["Read"], "pattern": r"\AError: ", "why": "its errors"}
            ],
            "features": ["read"],
        }
    )


@pytest.fixture
def agent(tmp_path: Path) -> InstalledAgent:
    program = tmp_path / "double.py"
    program.write_text(AGENT)
    return InstalledAgent(directory=tmp_path, program=program, package=tmp_path)


def test_a_conversation_runs_turns_and_reads_results_back(
    agent: InstalledAgent, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    double = definition("normal")
    session = AgentSession(double, agent, root=root).start()
    try:
        assert [tool.name for tool in session.tools] == ["read_file"]
        assert session.request is not None
        assert session.request.body["messages"][0]["content"] == double.launch.prompt
        tool_map = double.tools["Read"]
        calls = [
            ("t1", map_call("Read", tool_map, {"file_path": str(root / "a.txt")}, lambda _: None)),
            ("t2", map_call("Read", tool_map, {"file_path": str(root / "no")}, lambda _: None)),
        ]
        found = session.take_turn(calls)
        first = read_back(double, "Read", tool_map, found["t1"])
        second = read_back(double, "Read", tool_map, found["t2"])
        assert (first.text, first.is_error) == ("alpha\n", False)
        assert (second.is_error, second.error_source) == (True, "inference")
    finally:
        session.close()
    assert session.process is not None
    assert session.process.returncode == 0
    assert session.escapes() == []
    assert not session.work.exists()
    assert session.times.turns is not None
    assert len(session.times.turns) == 1


def test_a_crash_at_start_is_reported_with_its_status(
    agent: InstalledAgent, tmp_path: Path
) -> None:
    with pytest.raises(AgentCrash, match="status 7"):
        AgentSession(definition("crash"), agent, root=tmp_path).start()


def test_a_hanging_agent_is_timed_out_and_killed(agent: InstalledAgent, tmp_path: Path) -> None:
    session = AgentSession(definition("hang"), agent, root=tmp_path).start()
    call = map_call("Read", definition("hang").tools["Read"], {"file_path": "/x"}, lambda _: None)
    with pytest.raises(AgentTimeout, match="within 3 s"):
        session.take_turn([("t1", call)])
    assert session.process is not None
    assert session.process.poll() is not None
    session.kill()  # a second end changes nothing
    assert session.escapes() == []


@pytest.mark.skipif(not loopback_available(), reason="no network namespaces here")
def test_an_escape_is_recorded(agent: InstalledAgent, tmp_path: Path) -> None:
    session = AgentSession(definition("escape"), agent, root=tmp_path, isolate=True).start()
    session.close()
    assert [str(e) for e in session.escapes()] == ["tcp 192.0.2.7:443"]


# -- the adapter: protocol v1 in, turns out ---------------------------------------


def served(adapter: AgentAdapter, cmd: str, seq: int, **fields: object) -> dict[str, object]:
    return adapter.handle({"seq": seq, "cmd": cmd, **fields})


def test_the_adapter_serves_a_session_of_calls_and_messages(
    agent: InstalledAgent, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    adapter = AgentAdapter(definition("normal"), agent, turn_timeout=5)
    try:
        hello = served(adapter, "hello", 1, protocol=1)
        assert hello["features"] == ["read"]
        assert hello["inferences"] == [
            {
                "field": "is_error",
                "from": "tool_result text",
                "table": "conformance/peers/agent/definitions/double.yaml: inferences",
            }
        ]
        assert served(adapter, "begin", 2, session={"root": str(root)}) == {"seq": 2, "ok": True}
        read = {"type": "tool_use", "id": "r1", "name": "Read"}
        answer = served(
            adapter, "call", 3, tool_use={**read, "input": {"file_path": str(root / "a.txt")}}
        )
        assert answer["tool_result"] == {
            "type": "tool_result",
            "tool_use_id": "r1",
            "content": "alpha\n",
            "is_error": False,
        }
        both = served(
            adapter,
            "message",
            4,
            content=[
                {**read, "id": "r2", "input": {"file_path": str(root / "no")}},
                {"type": "text", "text": "and"},
                {**read, "id": "r3", "input": {"file_path": str(root / "a.txt")}},
            ],
        )
        results = both["results"]
        assert isinstance(results, list)
        assert [r["tool_result"]["tool_use_id"] for r in results] == ["r2", "r3"]
        assert [r["tool_result"]["is_error"] for r in results] == [True, False]
        assert served(adapter, "end", 5) == {"seq": 5, "ok": True}
    finally:
        adapter.close()


@pytest.mark.parametrize(
    ("cmd", "fields", "why"),
    [
        ("begin", {"session": {"root": "/", "test_tools": True}}, "no test tools"),
        ("begin", {"session": {"root": "/", "profile": "claude-code-latest"}}, "documented only"),
        (
            "begin",
            {"session": {"root": "/", "env": {"CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY": "1"}}},
            "reads no CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY",
        ),
        (
            "begin",
            {"session": {"root": "/", "settings": {"userSettings": {"permissions": {"deny": []}}}}},
            "no counterpart for userSettings settings ['deny']",
        ),
    ],
)
def test_what_a_session_cannot_give_the_agent_is_unsupported(
    agent: InstalledAgent, cmd: str, fields: dict[str, object], why: str
) -> None:
    adapter = AgentAdapter(definition("normal"), agent, turn_timeout=5)
    answer = served(adapter, cmd, 1, **fields)
    error = answer["error"]
    assert isinstance(error, dict)
    assert error["kind"] == "unsupported"
    assert why in error["message"]
    adapter.close()


def test_calls_the_agent_cannot_take_are_unsupported_before_it_starts(
    agent: InstalledAgent, tmp_path: Path
) -> None:
    adapter = AgentAdapter(definition("normal"), agent, turn_timeout=5)
    allow = {"userSettings": {"permissions": {"allow": ["Read"]}}}
    try:
        served(adapter, "begin", 1, session={"root": str(tmp_path), "settings": allow})
        for seq, tool_use in enumerate(
            [
                {"type": "tool_use", "id": "w", "name": "Write", "input": {"file_path": "/a"}},
                {
                    "type": "tool_use",
                    "id": "r",
                    "name": "Read",
                    "input": {"file_path": "/a", "offset": 2},
                },
                {"type": "tool_use", "id": "t", "name": "TaskStop", "input": {"task_id": "bash_1"}},
            ],
            2,
        ):
            answer = served(adapter, "call", seq, tool_use=tool_use)
            assert answer["error"]["kind"] == "unsupported"  # type: ignore[index]
        assert served(adapter, "tools", 9)["error"]["kind"] == "unsupported"  # type: ignore[index]
        assert adapter._running is None  # nothing was started for calls it cannot take
    finally:
        adapter.close()


def test_a_hanging_agent_is_a_timeout_of_the_connector(
    agent: InstalledAgent, tmp_path: Path
) -> None:
    double = definition("hang")
    connector = InProcessConnector(
        "agent:double",
        ConnectorOptions(timeout=1),
        lambda: AgentAdapter(double, agent, turn_timeout=1),
        FAILURES,
        label="double",
    )
    connector.start()
    try:
        connector.request({"cmd": "begin", "session": {"root": str(tmp_path)}})
        tool_use = {"type": "tool_use", "id": "r", "name": "Read", "input": {"file_path": "/x"}}
        with pytest.raises(AdapterTimeout, match="double: double did not come back"):
            connector.request({"cmd": "call", "tool_use": tool_use})
    finally:
        connector.close()
