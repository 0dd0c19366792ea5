"""The engine as an MCP server and the ``mcp:`` connector (SPEC.md section 18.7).

The server is started for real (``python -m reference.mcp_server`` over
stdio, through the official SDK's client); the hanging peer is a tiny SDK
server written by the test.
"""

from __future__ import annotations

import base64
import json
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from conformance.errors import AdapterTimeout
from conformance.peers.mcp.adapter import McpAdapter, to_protocol_content
from conformance.peers.mcp.client import ServerProcess
from conformance.peers.mcp.mapping import load_mapping, map_input
from conformance.peers.peer_rules import Unmappable
from conformance.peers.registry import connect
from conformance.run.results import Outcome
from conformance.run.runner import Runner
from conformance.suite.scenario import parse_scenario
from conformance.wire.connector import ConnectorOptions
from reference.engine import Engine
from reference.mcp_server import OUTCOME_META, TOOL_USE_ID_META, to_mcp_content

SERVER = [sys.executable, "-m", "reference.mcp_server", "--no-settings-files"]
PDF = "application/pdf"
HEAD = "id: sample\ntitle: t\nspec: [PROTO-MCP-APPLICABLE-1]\nlevel: MUST\nrequires: [read]\n"


def _server(root: Path, *extra: str) -> ServerProcess:
    return ServerProcess(
        [*SERVER, "--root", str(root), *extra],
        cwd=str(root),
        env={"HOME": str(root), "PATH": "/usr/bin:/bin"},
        stderr=root.parent / f"{root.name}.stderr",
        start_timeout=60.0,
    )


def _outcome(result: dict[str, Any]) -> dict[str, Any]:
    outcome: dict[str, Any] = result["_meta"][OUTCOME_META]
    return outcome


@pytest.mark.slow
@pytest.mark.subprocess
def test_one_connection_is_one_session(tmp_path: Path) -> None:
    """PROTO-MCP-SESSION-1: read state spans a connection's calls, never the next connection."""
    root = tmp_path / "root"
    root.mkdir()
    target = root / "a.txt"
    target.write_text("one\n")
    allow = tmp_path / "allow.json"
    allow.write_text(json.dumps({"permissions": {"allow": ["Write"]}}))
    write = {"file_path": str(target), "content": "two\n"}
    first = _server(root, "--settings", str(allow))
    try:
        refused = first.call_tool("Write", write, timeout=30.0)
        assert refused["isError"] is True
        assert _outcome(refused)["error_name"] == "FileNotReadError"
        read = first.call_tool("Read", {"file_path": str(target)}, timeout=30.0)
        assert read["isError"] is False
        written = first.call_tool("Write", write, timeout=30.0)
        assert written["isError"] is False, written
        assert target.read_text() == "two\n"
    finally:
        first.close()
    second = _server(root, "--settings", str(allow))
    try:
        again = second.call_tool("Write", {**write, "content": "three\n"}, timeout=30.0)
        assert _outcome(again)["error_name"] == "FileNotReadError"
        assert target.read_text() == "two\n"
    finally:
        second.close()


@pytest.mark.subprocess
def test_tools_list_is_the_api_export(tmp_path: Path) -> None:
    """PROTO-MCP-TOOLS-1: the listing is the tools command's export, schemas included."""
    engine = Engine()
    session = {"root": str(tmp_path), "env": {"HOME": str(tmp_path)}}
    assert engine.handle({"seq": 1, "cmd": "begin", "session": session})["ok"] is True
    exported = engine.handle({"seq": 2, "cmd": "tools"})["tools"]
    server = _server(tmp_path)
    try:
        listed = server.list_tools(timeout=30.0)
    finally:
        server.close()
    assert [t["name"] for t in listed] == [t["name"] for t in exported]
    assert [t["inputSchema"] for t in listed] == [t["input_schema"] for t in exported]
    assert [t.get("description") for t in listed] == [t["description"] for t in exported]


@pytest.mark.subprocess
def test_results_are_content_blocks_with_the_outcome_in_meta(tmp_path: Path) -> None:
    """PROTO-MCP-RESULT-1: text, image and PDF blocks; isError; outcome, events and the id."""
    png = base64.b64encode(b"\x89PNG fake").decode()
    pdf = base64.b64encode(b"%PDF-1.4").decode()
    content = [
        {"type": "text", "text": "a"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}},
        {"type": "document", "source": {"type": "base64", "media_type": PDF, "data": pdf}},
    ]
    blocks = to_mcp_content(content)
    assert [b["type"] for b in blocks] == ["text", "image", "resource"]
    assert blocks[1] == {"type": "image", "data": png, "mimeType": "image/png"}
    assert blocks[2]["resource"]["blob"] == pdf
    assert to_mcp_content("plain") == [{"type": "text", "text": "plain"}]
    assert to_protocol_content(blocks) == content  # the connector reads them back as they were
    (tmp_path / "a.txt").write_text("hello\n")
    server = _server(tmp_path)
    try:
        meta = {TOOL_USE_ID_META: "toolu_given"}
        ok = server.call_tool("Read", {"file_path": str(tmp_path / "a.txt")}, timeout=30, meta=meta)
        missing = server.call_tool("Read", {"file_path": str(tmp_path / "no")}, timeout=30)
    finally:
        server.close()
    assert ok["isError"] is False
    assert ok["content"][0]["text"].startswith("1\thello")
    assert _outcome(ok)["stage"] == "done"
    assert [e["id"] for e in ok["_meta"]["toolconf/events"]] == ["toolu_given", "toolu_given"]
    assert missing["isError"] is True
    assert _outcome(missing)["stage"] == "validate"


def test_inputs_the_mapping_cannot_carry_are_unmappable() -> None:
    """PROTO-MCP-APPLICABLE-1: an unmapped key, another fixed value, a non-object input."""
    tool = load_mapping("filesystem").tool_for("Edit")
    edit = {"file_path": "/r/a", "old_string": "x", "new_string": "y"}
    assert map_input("Edit", tool, edit) == {
        "path": "/r/a",
        "edits": [{"oldText": "x", "newText": "y"}],
    }
    assert map_input("Edit", tool, {**edit, "replace_all": False})["path"] == "/r/a"
    with pytest.raises(Unmappable, match="replace_all"):
        map_input("Edit", tool, {**edit, "replace_all": True})
    read = load_mapping("filesystem").tool_for("Read")
    with pytest.raises(Unmappable, match="offset"):
        map_input("Read", read, {"file_path": "/r/a", "offset": 2})
    with pytest.raises(Unmappable, match="object"):
        map_input("Read", read, ["/r/a"])
    with pytest.raises(Unmappable, match="Glob"):
        load_mapping("filesystem").tool_for("Glob")


@pytest.mark.slow
@pytest.mark.subprocess
def test_what_a_peer_cannot_show_is_not_applicable(tmp_path: Path) -> None:
    """PROTO-MCP-APPLICABLE-1: unsupported setups and inputs are n/a; raw text is not numbered."""
    mapping = tmp_path / "plain.yaml"
    mapping.write_text(
        textwrap.dedent(
            """\
            name: plain
            implementation: {name: plain, version: "1", language: python}
            command: ["{python}", "-m", "reference.mcp_server", "--root", "{root}",
                      "--no-settings-files"]
            session: {settings: allow_only}
            features: [read]
            unreported: [stage, error_code, error_name, dedup, output, events]
            tools:
              Read: {tool: Read, input: {file_path: $file_path}}
            """
        )
    )
    offset = HEAD + (
        'setup: {files: {a.txt: {text: "x\\n"}}}\n'
        "steps:\n  - call: {name: Read, input: {file_path: '{root}/a.txt', offset: 1}}\n"
        "    expect: {is_error: false}\n"
    )
    denied = HEAD + (
        "setup:\n  settings: {session: {permissions: {deny: [Read]}}}\n"
        "steps:\n  - call: {name: Read, input: {file_path: '{root}/a.txt'}}\n"
        "    expect: {is_error: true}\n"
    )
    needs_edit = HEAD.replace("[read]", "[read, edit]") + (
        "steps:\n  - call: {name: Edit, input: {file_path: '{root}/a', old_string: a, "
        "new_string: b}}\n    expect: {is_error: true}\n"
    )
    numbered = HEAD + (
        'setup: {files: {a.txt: {text: "x\\n"}}}\n'
        "steps:\n  - call: {name: Read, input: {file_path: '{root}/a.txt'}}\n"
        '    expect: {is_error: false, content: {contains: "1\\tx"}}\n'
    )
    connector = connect(f"mcp:{mapping}", ConnectorOptions(timeout=30.0))
    with Runner(connector) as runner:
        results = [runner.run(parse_scenario(text)) for text in (offset, denied, needs_edit)]
        shown = runner.run(parse_scenario(numbered))
    assert [r.outcome for r in results] == [Outcome.NOT_APPLICABLE] * 3
    assert "offset" in results[0].message
    assert "deny" in results[1].message
    assert results[2].reason == "requires edit"
    # the server numbers lines, and the connector passes the text on unchanged
    assert shown.outcome is Outcome.PASS, shown.message


HANGING = """
import sys, anyio
from mcp import types
from mcp.server import Server
from mcp.server.stdio import stdio_server

async def list_tools(ctx, params):
    schema = {"type": "object", "properties": {"file_path": {"type": "string"}}}
    return types.ListToolsResult(tools=[types.Tool(name="read", input_schema=schema)])

async def call_tool(ctx, params):
    if params.arguments.get("file_path", "").endswith("hang"):
        await anyio.sleep(3600)
    return types.CallToolResult(content=[types.TextContent(text="fine")])

async def main():
    server = Server("hang", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (r, w):
        await server.run(r, w, server.create_initialization_options())

anyio.run(main)
"""


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_hanging_server_is_timed_out_and_replaced(tmp_path: Path) -> None:
    """PROTO-MCP-HANG-1: a call past the timeout is a timeout; the next session works."""
    script = tmp_path / "hang.py"
    script.write_text(HANGING)
    mapping = tmp_path / "hang.yaml"
    mapping.write_text(
        "name: hang\nimplementation: {name: hang, version: '1', language: python}\n"
        f"command: ['{{python}}', '{script}']\nfeatures: [read]\n"
        "unreported: [stage, error_code, error_name, dedup, output, events]\n"
        "tools: {Read: {tool: read}}\n"
    )
    connector = connect(f"mcp:{mapping}", ConnectorOptions(timeout=2.0))
    connector.start()
    session = {"root": str(tmp_path), "cwd": str(tmp_path)}

    def call(path: str) -> dict[str, Any]:
        use = {"type": "tool_use", "id": "t", "name": "Read", "input": {"file_path": path}}
        return connector.request({"cmd": "call", "tool_use": use})

    try:
        connector.request({"cmd": "begin", "session": session})
        started = time.monotonic()
        with pytest.raises(AdapterTimeout):
            call("hang")
        connector.restart()
        assert time.monotonic() - started < 30.0
        connector.request({"cmd": "begin", "session": session})
        assert call("ok")["tool_result"]["content"] == "fine"
    finally:
        connector.close()


@pytest.mark.slow
@pytest.mark.subprocess
def test_adapter_refuses_message_and_tools_as_unsupported(tmp_path: Path) -> None:
    """PROTO-MCP-APPLICABLE-1: MCP shows no scheduler and no pool rules."""
    adapter = McpAdapter(load_mapping("toolconf"), {}, call_timeout=30.0)
    try:
        begin = {"seq": 1, "cmd": "begin", "session": {"root": str(tmp_path)}}
        assert adapter.handle(begin) == {"seq": 1, "ok": True}
        use = {"type": "tool_use", "id": "a", "name": "Glob", "input": {"pattern": "*"}}
        answer = adapter.handle({"seq": 2, "cmd": "message", "content": [use]})
        assert answer["error"]["kind"] == "unsupported"
        assert adapter.handle({"seq": 3, "cmd": "tools"})["error"]["kind"] == "unsupported"
    finally:
        adapter.close()


@pytest.mark.slow
@pytest.mark.subprocess
def test_what_the_peer_keeps_or_names_otherwise_is_unsupported(tmp_path: Path) -> None:
    """PROTO-MCP-APPLICABLE-1: own files of an ungiven session directory; random task ids."""
    mapping = tmp_path / "elsewhere.yaml"
    mapping.write_text(
        textwrap.dedent(
            """\
            name: elsewhere
            implementation: {name: elsewhere, version: "1", language: python}
            command: ["{python}", "-m", "reference.mcp_server", "--root", "{root}",
                      "--no-settings-files"]
            features: [read, bash]
            task_ids: random
            passthrough: true
            """
        )
    )
    session_dir = tmp_path / "session"
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("x\n")
    adapter = McpAdapter(load_mapping(str(mapping)), {}, call_timeout=30.0)

    def call(seq: int, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
        use = {"type": "tool_use", "id": f"t{seq}", "name": name, "input": tool_input}
        return adapter.handle({"seq": seq, "cmd": "call", "tool_use": use})

    try:
        session = {"root": str(root), "session_dir": str(session_dir)}
        assert adapter.handle({"seq": 1, "cmd": "begin", "session": session})["ok"] is True
        history = call(2, "Read", {"file_path": f"{session_dir}/file-history/abc"})
        assert history["error"]["kind"] == "unsupported"
        assert "session directory" in history["error"]["message"]
        counted = call(3, "TaskOutput", {"task_id": "bash_1"})
        assert counted["error"]["kind"] == "unsupported"
        assert "bash_1" in counted["error"]["message"]
        # the peer's own task ids, and paths elsewhere, go through as they are
        other = call(4, "TaskOutput", {"task_id": "b7rp2ic6p"})
        assert other["tool_result"]["is_error"] is True
        read = call(5, "Read", {"file_path": str(root / "a.txt")})
        assert read["tool_result"]["is_error"] is False
        assert "1\tx" in str(read["tool_result"]["content"])
    finally:
        adapter.close()
    # a peer given the session directory keeps its own files there: nothing refused
    given = load_mapping("toolconf")
    assert "session_dir" in given.session_args
    assert given.task_ids == "counted"
    assert load_mapping("claude-code-2.1.332").task_ids == "random"
