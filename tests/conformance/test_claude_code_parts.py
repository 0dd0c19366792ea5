"""Claude Code's own pieces and its definitions, without Claude Code: the settings map, the
dedup inference, the MCP server handed to the CLI, the stream-json transcript, the
scripted Messages API (the agent model API's Anthropic dialect) and what the agent adapter
refuses to give it.

The CLI itself is exercised by ``.ci/run``'s Claude Code stage and the fidelity runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from conformance.errors import ConformanceError
from conformance.peers.agent.adapter import AgentAdapter
from conformance.peers.agent.definition import ToolMap, load_definition
from conformance.peers.agent.install import InstalledAgent
from conformance.peers.agent.model_api import ScriptedModel, ToolCall, ToolResult, Turn, dialect
from conformance.peers.agent.pieces import SettingsContext
from conformance.peers.agent.probe import probe_call, sees_trail
from conformance.peers.agent.readback import read_back
from conformance.peers.claude_code.mcp_server import PROBE_TOOLS
from conformance.peers.claude_code.settings_map import plan, session_settings
from conformance.peers.claude_code.transcript import StreamJson
from conformance.peers.peer_rules import Unmappable

CLAUDE_CODE = load_definition("claude-code-2.1.88")

ROOT = "/abs/root"


def _plan(settings: dict[str, Any], tmp_path: Path) -> Any:
    return plan(
        settings, root=ROOT, cwd=ROOT + "/sub", config="/abs/config", flag_file=tmp_path / "f.json"
    )


# -- settings_map --------------------------------------------------------------


def test_file_sources_go_to_their_files_with_root_anchored_rules(tmp_path: Path) -> None:
    cli = _plan(
        {
            "userSettings": {"permissions": {"deny": ["Read(/secret/**)", "Read(//etc/x)"]}},
            "projectSettings": {"permissions": {"allow": ["Edit(/src/**)"]}},
            "localSettings": {"permissions": {"ask": ["Write"]}},
        },
        tmp_path,
    )
    assert cli.files[Path("/abs/config/settings.json")] == {
        "permissions": {"deny": ["Read(//abs/root/secret/**)", "Read(//etc/x)"]}
    }
    assert cli.files[Path(ROOT + "/sub/.claude/settings.json")] == {
        "permissions": {"allow": ["Edit(//abs/root/src/**)"]}
    }
    assert cli.files[Path(ROOT + "/sub/.claude/settings.local.json")] == {
        "permissions": {"ask": ["Write"]}
    }
    assert cli.flags == []


def test_flag_and_cli_sources_become_flags(tmp_path: Path) -> None:
    cli = _plan(
        {
            "flagSettings": {"permissions": {"deny": ["Bash"]}},
            "cliArg": {
                "permissions": {"allow": ["Read", "Bash(git log:*)"], "defaultMode": "plan"}
            },
            "session": {"permissions": {"deny": ["Write"]}},
        },
        tmp_path,
    )
    assert cli.files[tmp_path / "f.json"] == {"permissions": {"deny": ["Bash"]}}
    assert cli.flags == [
        "--settings",
        str(tmp_path / "f.json"),
        "--allowedTools",
        "Read",
        "Bash(git log:*)",
        "--permission-mode",
        "plan",
        "--disallowedTools",
        "Write",
    ]


@pytest.mark.parametrize(
    "settings",
    [
        {"policySettings": {"permissions": {"deny": ["Read"]}}},
        {"command": {"permissions": {"allow": ["Read"]}}},
        {"session": {"permissions": {"defaultMode": "plan"}}},
        {"session": {"permissions": {"ask": ["Read"]}}},
        {"cliArg": {"hooks": {"PreToolUse": []}, "permissions": {}}},
        {"cliArg": {"permissions": {"ask": ["Read"]}}},
        {"cliArg": {"env": {"A": "1"}}},
        {"userSettings": {"fileReadMaxOutputTokens": 100}},
        {"projectSettings": {"readDedupKillswitch": True}},
    ],
)
def test_what_has_no_counterpart_is_unmappable(settings: dict[str, Any], tmp_path: Path) -> None:
    with pytest.raises(Unmappable):
        _plan(settings, tmp_path)


def test_empty_sources_and_unknown_ones_change_nothing(tmp_path: Path) -> None:
    cli = _plan(
        {"policySettings": {}, "somethingNew": {"permissions": {"deny": ["Read"]}}}, tmp_path
    )
    assert (cli.files, cli.flags) == ({}, [])


def test_probe_rules_and_matchers_name_both_mcp_tools(tmp_path: Path) -> None:
    hooks = {"PreToolUse": [{"matcher": "Probe", "hooks": [{"type": "command", "command": "x"}]}]}
    cli = _plan(
        {"userSettings": {"permissions": {"allow": ["Probe", "Probes", "Read"]}, "hooks": hooks}},
        tmp_path,
    )
    written = cli.files[Path("/abs/config/settings.json")]
    assert written["permissions"]["allow"] == [*PROBE_TOOLS, "Probes", "Read"]
    assert written["hooks"]["PreToolUse"][0]["matcher"] == "|".join(PROBE_TOOLS)
    assert hooks["PreToolUse"][0]["matcher"] == "Probe"  # the scenario's value is not changed


def test_the_definitions_mapper_writes_to_its_config_dir_and_adds_the_root() -> None:
    """SPEC: PERM-DIRS-1, PERM-SOURCE-1"""
    context = SettingsContext(ROOT, ROOT + "/sub", CLAUDE_CODE.launch.env)
    mapped = session_settings(
        {
            "userSettings": {"permissions": {"allow": ["Read"]}},
            "flagSettings": {"permissions": {"deny": ["Bash"]}},
        },
        context,
    )
    assert mapped.files == {
        "{work}/config/settings.json": {"permissions": {"allow": ["Read"]}},
        "{work}/flag-settings.json": {"permissions": {"deny": ["Bash"]}},
    }
    assert mapped.argv == ["--settings", "{work}/flag-settings.json", "--add-dir", ROOT]
    same = session_settings({}, SettingsContext(ROOT, ROOT, CLAUDE_CODE.launch.env))
    assert (same.files, same.argv) == ({}, [])


def test_a_hook_reading_the_project_dir_needs_the_root_as_cwd() -> None:
    """SPEC: PROTO-UNSUPPORTED-1, HOOK-ENV-1"""
    hook = {"type": "command", "command": "echo $CLAUDE_PROJECT_DIR"}
    settings = {"userSettings": {"hooks": {"PreToolUse": [{"matcher": "", "hooks": [hook]}]}}}
    env = CLAUDE_CODE.launch.env
    with pytest.raises(Unmappable, match="CLAUDE_PROJECT_DIR"):
        session_settings(settings, SettingsContext(ROOT, ROOT + "/sub", env))
    assert session_settings(settings, SettingsContext(ROOT, ROOT, env)).files
    with pytest.raises(ConformanceError, match="CLAUDE_CONFIG_DIR"):
        session_settings({}, SettingsContext(ROOT, ROOT, {}))


# -- inference -------------------------------------------------------------------

STUB = "File unchanged since last read. The content from the earlier Read tool_result ..."


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ({"content": STUB, "is_error": False}, True),
        ({"content": [{"type": "text", "text": STUB}]}, True),
        ({"content": STUB, "is_error": True}, False),
        ({"content": "1\tFile unchanged since last read."}, False),
        ({"content": [{"type": "image", "source": {}}]}, False),
    ],
)
def test_only_the_stub_text_of_a_success_is_a_dedup(block: dict[str, Any], expected: bool) -> None:
    """SPEC: READ-DEDUP-1, PROTO-INFER-1"""
    model = dialect("anthropic_messages")
    message = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "r", **block}]}
    (result,) = model.tool_results({"messages": [message]})
    reading = read_back(CLAUDE_CODE, "Read", ToolMap(tool="Read"), result)
    assert reading.dedup is expected
    assert reading.content == block["content"]  # the blocks as the model saw them


# -- the MCP server --------------------------------------------------------------


class _Mcp:
    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "conformance.peers.claude_code.mcp_server", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.ids = 0

    def send(self, method: str, params: dict[str, Any] | None = None) -> int:
        assert self.process.stdin is not None
        self.ids += 1
        message = {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params or {}}
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        return self.ids

    def replies(self, count: int) -> dict[int, dict[str, Any]]:
        assert self.process.stdout is not None
        out: dict[int, dict[str, Any]] = {}
        while len(out) < count:
            reply = json.loads(self.process.stdout.readline())
            out[reply["id"]] = reply
        return out

    def close(self) -> None:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.close()
        self.process.wait(timeout=10)
        self.process.stdout.close()


@pytest.mark.subprocess
def test_the_emulated_user_answers_and_logs_every_question(tmp_path: Path) -> None:
    log = tmp_path / "prompts.jsonl"
    server = _Mcp("--answer", "allow", "--log", str(log))
    server.send("initialize", {"protocolVersion": "2025-06-18"})
    server.send("tools/list")
    arguments = {"tool_name": "Write", "input": {"file_path": "/x"}, "tool_use_id": "t1"}
    server.send("tools/call", {"name": "prompt", "arguments": arguments})
    replies = server.replies(3)
    server.close()
    assert replies[1]["result"]["protocolVersion"] == "2025-06-18"
    names = [t["name"] for t in replies[2]["result"]["tools"]]
    assert names == ["prompt", "probe", "probe_safe"]
    decision = json.loads(replies[3]["result"]["content"][0]["text"])
    assert decision == {"behavior": "allow", "updatedInput": {"file_path": "/x"}}
    assert [json.loads(line) for line in log.read_text().splitlines()] == [
        {
            "tool_use_id": "t1",
            "tool_name": "Write",
            "input": {"file_path": "/x"},
            "answer": "allow",
            "asked": {},
        }
    ]


@pytest.mark.subprocess
def test_probes_overlap_wait_for_each_other_and_time_out() -> None:
    server = _Mcp()
    first = server.send(
        "tools/call", {"name": "probe_safe", "arguments": {"label": "A", "await_started": ["B"]}}
    )
    second = server.send(
        "tools/call", {"name": "probe_safe", "arguments": {"label": "B", "await_started": ["A"]}}
    )
    lonely = server.send(
        "tools/call",
        {"name": "probe", "arguments": {"label": "C", "await_started": ["Z"], "timeout_ms": 50}},
    )
    replies = server.replies(3)
    server.close()
    texts = {i: replies[i]["result"]["content"][0]["text"] for i in (first, second, lonely)}
    assert json.loads(texts[first])["label"] == "A"
    assert json.loads(texts[first])["max_concurrent"] >= 2  # B ran beside it
    assert json.loads(texts[first])["trail"] == []
    assert json.loads(texts[second])["label"] == "B"
    assert texts[lonely] == "Probe C timed out waiting for: Z"
    assert replies[lonely]["result"]["isError"] is True


@pytest.mark.subprocess
def test_the_test_server_echoes_and_shadows_read() -> None:
    server = _Mcp("--role", "test")
    server.send("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    server.send("tools/call", {"name": "echo", "arguments": {"text": "fail"}})
    server.send("tools/call", {"name": "Read", "arguments": {"file_path": "/x"}})
    replies = server.replies(3)
    server.close()
    assert [replies[i]["result"]["content"][0]["text"] for i in (1, 2, 3)] == [
        "hi",
        "echo failed",
        "shadowed",
    ]
    assert replies[2]["result"]["isError"] is True


# -- the scripted Messages API (the agent model API's Anthropic dialect) ------------


def _post(url: str, body: dict[str, Any]) -> bytes:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        data: bytes = response.read()
        return data


def _messages_api() -> ScriptedModel:
    return ScriptedModel(dialect("anthropic_messages"), model="claude-sonnet-4-5").start()


def test_main_loop_requests_wait_for_their_turn_and_stream_it() -> None:
    model = _messages_api()
    got: list[bytes] = []
    body = {
        "stream": True,
        "tools": [{"name": "Read", "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": "go"}],
    }
    client = threading.Thread(
        target=lambda: got.append(_post(model.base_url + "/v1/messages", body))
    )
    client.start()
    request = model.next_request(10)
    assert request is not None
    assert request.body["messages"] == [{"role": "user", "content": "go"}]
    assert request.answer(Turn(calls=[ToolCall("t1", "Read", {"file_path": "/a"})]))
    client.join(10)
    model.close()
    events = [line[7:] for line in got[0].decode().splitlines() if line.startswith("event: ")]
    assert events == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert '"partial_json": "{\\"file_path\\": \\"/a\\"}"' in got[0].decode()


def test_side_requests_and_token_counts_are_answered_at_once() -> None:
    model = _messages_api()
    side = json.loads(
        _post(
            model.base_url + "/v1/messages", {"messages": [{"role": "user", "content": "title?"}]}
        )
    )
    counted = json.loads(
        _post(
            model.base_url + "/v1/messages/count_tokens",
            {"messages": [{"role": "user", "content": "hello world"}]},
        )
    )
    started = time.monotonic()
    assert model.next_request(0.05) is None
    model.close()
    assert side["stop_reason"] == "end_turn"
    assert side["content"] == [{"type": "text", "text": "ok"}]
    assert counted == {"input_tokens": 2}
    assert len(model.side_requests) == 1
    assert time.monotonic() - started < 5


def test_a_main_loop_request_is_one_that_offers_tools() -> None:
    """A pool without Read (a deny rule removed it) is still the main loop's."""
    model = _messages_api()
    bash = {"name": "Bash", "input_schema": {"type": "object"}}
    body = {"messages": [{"role": "user", "content": "go"}], "tools": [bash]}
    done: list[bytes] = []
    thread = threading.Thread(
        target=lambda: done.append(_post(model.base_url + "/v1/messages", body))
    )
    thread.start()
    request = model.next_request(5.0)
    assert request is not None
    assert [tool.name for tool in request.tools] == ["Bash"]
    assert request.answer(Turn(text="Done."))
    thread.join(5.0)
    model.close()
    assert json.loads(done[0])["stop_reason"] == "end_turn"
    assert not model.side_requests


# -- the stream-json transcript --------------------------------------------------


def test_the_transcript_keeps_results_structured_output_and_last_words() -> None:
    transcript = StreamJson()
    assert transcript.last_words() is None
    shown = {"type": "tool_result", "tool_use_id": "t1", "content": "ok", "cache_control": {}}
    record = {"type": "user", "message": {"content": [shown]}, "tool_use_result": {"n": 1}}
    transcript.feed(json.dumps(record) + "\n")
    transcript.feed("not json\n")
    transcript.feed(json.dumps({"type": "result", "result": "stopped by a hook"}) + "\n")
    started = time.monotonic()
    assert transcript.results(["t1", "t2"], 0.05) == {
        "t1": {"type": "tool_result", "tool_use_id": "t1", "content": "ok", "is_error": False}
    }
    assert time.monotonic() - started < 5
    assert transcript.structured(["t1", "t2"]) == {"t1": {"n": 1}}
    assert transcript.last_words() == "its result was 'stopped by a hook'"


# -- adapter: what cannot be given faithfully (PROTO-UNSUPPORTED-1) ------------------


def _adapter(*, test_tools: bool = False, session_dir: str | None = None) -> AgentAdapter:
    nowhere = Path("/nowhere")
    adapter = AgentAdapter(
        CLAUDE_CODE, InstalledAgent(nowhere, nowhere / "cli.js", nowhere), turn_timeout=1.0
    )
    session = {"root": "/s", "test_tools": test_tools}
    adapter._session = {**session, "session_dir": session_dir} if session_dir else session
    return adapter


def _use(name: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"t{name}", "name": name, "input": tool_input}


@pytest.mark.parametrize("tool", ["TaskOutput", "BashOutput", "TaskStop", "KillShell"])
def test_a_counted_task_id_has_no_counterpart(tool: str) -> None:
    """SPEC: PROTO-UNSUPPORTED-1, BASH-BG-1"""
    with pytest.raises(Unmappable, match="counted task id"):
        _adapter()._check_addressable(tool, {"task_id": "bash_1"})
    _adapter()._check_addressable(tool, {"task_id": "b2h1c0rk9"})  # the CLI's own id goes
    _, call = _adapter()._map(tool, {"task_id": "b2h1c0rk9"}, False)
    assert (call.name, call.arguments) == (tool, {"task_id": "b2h1c0rk9"})  # its own tool


def test_paths_in_the_session_directorys_own_files_have_no_counterpart() -> None:
    """SPEC: PROTO-UNSUPPORTED-1, HIST-1, RES-PERSIST-1"""
    adapter = _adapter(session_dir="/s/session-1")
    for path in ("/s/session-1/file-history/ab", "/s/session-1/tool-results/x.txt"):
        with pytest.raises(Unmappable, match="keeps elsewhere"):
            adapter._check_addressable("Read", {"file_path": path})
    adapter._check_addressable("Read", {"file_path": "/s/session-1/notes.txt"})
    adapter._check_addressable("Glob", {"pattern": "/s/session-1/*.txt"})


def test_tool_search_without_a_cli_tool_search_has_no_counterpart() -> None:
    """SPEC: PROTO-UNSUPPORTED-1, REG-SEARCH-1"""
    search = [_use("ToolSearch", query="echo")]
    why = _adapter(test_tools=True)._unoffered_search(search, {"Read"}, True)
    assert why is not None
    assert "no ToolSearch" in why
    assert _adapter(test_tools=True)._unoffered_search(search, {"ToolSearch"}, True) is None
    assert _adapter()._unoffered_search(search, set(), False) is None  # no test tools: unknown


def test_a_probe_that_would_see_a_trail_has_no_counterpart() -> None:
    """SPEC: PROTO-UNSUPPORTED-1, PROTO-PROBE-3, SCHED-CONTEXT-1"""
    safe = {"concurrency_safe": True}
    assert not sees_trail([_use("Probe", label="A", **safe), _use("Read")], earlier=0)
    batch = [_use("Probe", label="A", **safe), _use("Probe", label="B", **safe)]
    assert not sees_trail(batch, earlier=0)  # one safe batch: neither sees the other
    assert sees_trail([_use("Probe", label="U"), _use("Probe", label="A", **safe)], earlier=0)
    assert sees_trail([_use("Probe", label="C")], earlier=1)  # an earlier call's Probe succeeded
    assert CLAUDE_CODE.test_tools is not None
    assert probe_call(CLAUDE_CODE.test_tools, {"label": "C", **safe}).name == PROBE_TOOLS[1]
    assert probe_call(CLAUDE_CODE.test_tools, {"label": "C"}).name == PROBE_TOOLS[0]
    with pytest.raises(Unmappable, match="bash_error"):
        probe_call(CLAUDE_CODE.test_tools, {"label": "C", "bash_error": True})
    _, call = _adapter()._map("Probe", {"label": "C"}, False)
    assert call.name == "Probe"  # no test tools: the CLI's unknown tool


@pytest.mark.parametrize(
    "permissions",
    [{"defaultMode": "auto"}, {"allow": ["Probe()"]}, {"deny": ["Probe(*)"]}],
)
def test_auto_mode_and_probe_specifiers_are_unmappable(
    permissions: dict[str, Any], tmp_path: Path
) -> None:
    """SPEC: PROTO-UNSUPPORTED-1, PERM-CLASSIFIER-1, PERM-RULE-1"""
    with pytest.raises(Unmappable):
        _plan({"userSettings": {"permissions": permissions}}, tmp_path)


def test_a_result_block_protocol_v1_cannot_carry_is_unsupported_not_passed_on() -> None:
    search = ToolMap(tool="ToolSearch")
    shown = [{"type": "text", "text": "ok"}]
    result = ToolResult("t1", None, "ok", False, 0, {"tool_use_id": "t1", "content": shown})
    assert read_back(CLAUDE_CODE, "ToolSearch", search, result).content == shown
    odd = [{"type": "tool_reference", "tool_name": "Probe"}]
    result = ToolResult("t1", None, "", False, 0, {"tool_use_id": "t1", "content": odd})
    with pytest.raises(Unmappable, match="tool_reference"):
        read_back(CLAUDE_CODE, "ToolSearch", search, result)
