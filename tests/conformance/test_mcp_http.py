"""The engine over MCP's streamable HTTP and the connector's ``transport: http`` (PROTO-MCP-HTTP-1).

The server is started for real (``python -m reference.mcp_server --http
127.0.0.1:0``); two SDK clients talk to one process, so the sessions of one
server are seen apart.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from conformance.peers.mcp.client import ServerCrash, ServerProcess
from conformance.peers.registry import connect
from conformance.run.results import Outcome
from conformance.run.runner import Runner
from conformance.suite.scenario import parse_scenario
from conformance.wire.connector import ConnectorOptions
from reference.mcp_server import OUTCOME_META, SetupError, http_address, main

SERVER = [sys.executable, "-m", "reference.mcp_server", "--no-settings-files"]


def test_http_binds_the_loopback_address_only() -> None:
    """PROTO-MCP-HTTP-1: 127.0.0.1 and a port; any other host is a bad setup."""
    assert http_address("127.0.0.1:0") == ("127.0.0.1", 0)
    assert http_address("127.0.0.1:8765") == ("127.0.0.1", 8765)
    for bad in ("0.0.0.0:8765", "localhost:1", "10.0.0.1:80", "127.0.0.1", "127.0.0.1:x"):
        with pytest.raises(SetupError, match="loopback"):
            http_address(bad)
    assert main(["--no-settings-files", "--http", "0.0.0.0:0"]) == 2


async def _two_sessions(url: str, target: Path) -> list[list[dict[str, Any]]]:
    write = {"file_path": str(target), "content": "two\n"}
    seen: list[list[dict[str, Any]]] = []
    with anyio.fail_after(60):
        await _calls(url, write, seen)
    return seen


async def _calls(url: str, write: dict[str, str], seen: list[list[dict[str, Any]]]) -> None:
    async with Client(streamable_http_client(url), mode="legacy") as first:
        await first.call_tool("Read", {"file_path": write["file_path"]})
        async with Client(streamable_http_client(url), mode="legacy") as second:
            # the second session has read nothing, even while the first is open
            refused = await second.call_tool("Write", write)
            written = await first.call_tool("Write", write)
            seen.append([r.model_dump(by_alias=True, mode="json") for r in (refused, written)])
    async with Client(streamable_http_client(url), mode="legacy") as third:
        again = await third.call_tool("Write", {**write, "content": "three\n"})
        seen.append([again.model_dump(by_alias=True, mode="json")])


@pytest.mark.slow
@pytest.mark.subprocess
def test_each_mcp_session_of_one_http_server_is_a_session(tmp_path: Path) -> None:
    """PROTO-MCP-HTTP-1: read state spans one MCP session's calls, never another's."""
    root = tmp_path / "root"
    root.mkdir()
    target = root / "a.txt"
    target.write_text("one\n")
    allow = tmp_path / "allow.json"
    allow.write_text(json.dumps({"permissions": {"allow": ["Write"]}}))
    argv = [*SERVER, "--root", str(root), "--settings", str(allow), "--http", "127.0.0.1:0"]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, cwd=root)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        assert url.endswith("/mcp")
        (refused, written), (again,) = anyio.run(_two_sessions, url, target)
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()
    assert refused["isError"] is True
    assert refused["_meta"][OUTCOME_META]["error_name"] == "FileNotReadError"
    assert written["isError"] is False, written
    assert again["_meta"][OUTCOME_META]["error_name"] == "FileNotReadError"
    assert target.read_text() == "two\n"


@pytest.mark.slow
@pytest.mark.subprocess
def test_connector_reaches_an_http_server_at_the_url_it_prints(tmp_path: Path) -> None:
    """PROTO-MCP-HTTP-1: ``transport: http``; a first line that is no loopback URL is a crash."""
    scenario = parse_scenario(
        "id: sample\ntitle: t\nspec: [PROTO-MCP-APPLICABLE-1]\nlevel: MUST\n"
        "requires: [read, write]\n"
        'setup: {files: {a.txt: {text: "x\\n"}}}\n'
        "steps:\n"
        "  - call: {name: Write, input: {file_path: '{root}/a.txt', content: y}}\n"
        "    expect: {is_error: true, error_name: FileNotReadError}\n"
        "  - call: {name: Read, input: {file_path: '{root}/a.txt'}}\n"
        '    expect: {is_error: false, content: {contains: "1\\tx"}}\n'
    )
    connector = connect("mcp:toolconf-http", ConnectorOptions(timeout=30.0))
    with Runner(connector) as runner:
        result = runner.run(scenario)
    assert result.outcome is Outcome.PASS, result.message
    liar = [sys.executable, "-c", "print('http://192.0.2.1:80/mcp', flush=True)"]
    with pytest.raises(ServerCrash, match="not an http://127"):
        ServerProcess(
            liar,
            cwd=str(tmp_path),
            env={"PATH": "/usr/bin:/bin"},
            stderr=tmp_path / "liar.stderr",
            start_timeout=30.0,
            transport="http",
        )
