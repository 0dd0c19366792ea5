"""AgentSession end to end, with a small agent of its own speaking Chat Completions.

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

from conformance.peers.agent.definition import AgentDefinition
from conformance.peers.agent.install import InstalledAgent
from conformance.peers.agent.loopback import loopback_available
from conformance.peers.agent.mapping import map_call
from conformance.peers.agent.readback import read_back
from conformance.peers.agent.session import AgentCrash, AgentSession, AgentTimeout

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
