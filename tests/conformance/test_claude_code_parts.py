"""The claude-code connector's own parts, without Claude Code: settings map, inference,
the MCP server it hands the CLI, and the scripted Messages API.

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

from conformance.peers.claude_code.adapter import ClaudeCodeAdapter, _result
from conformance.peers.claude_code.conversation import TurnResult
from conformance.peers.claude_code.inference import is_dedup_stub
from conformance.peers.claude_code.install import Release
from conformance.peers.claude_code.mcp_server import PROBE_TOOLS
from conformance.peers.claude_code.messages_api import ScriptedModel, Turn, answer
from conformance.peers.claude_code.settings_map import plan
from conformance.peers.peer_rules import Unmappable

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
    assert is_dedup_stub(block) is expected


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


# -- the scripted Messages API ---------------------------------------------------


def _post(url: str, body: dict[str, Any]) -> bytes:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        data: bytes = response.read()
        return data


def test_main_loop_requests_wait_for_their_turn_and_stream_it() -> None:
    model = ScriptedModel().start()
    got: list[bytes] = []
    body = {
        "stream": True,
        "tools": [{"name": "Read"}],
        "messages": [{"role": "user", "content": "go"}],
    }
    client = threading.Thread(
        target=lambda: got.append(_post(model.base_url + "/v1/messages", body))
    )
    client.start()
    request = model.next_turn(10)
    assert request is not None
    assert request.last_user_content == [{"type": "text", "text": "go"}]
    use = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/a"}}
    answer(request, Turn([use]))
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
    model = ScriptedModel().start()
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
    assert model.next_turn(0.05) is None
    model.close()
    assert side["stop_reason"] == "end_turn"
    assert side["content"] == [{"type": "text", "text": "ok"}]
    assert counted == {"input_tokens": 2}
    assert len(model.side_requests) == 1
    assert time.monotonic() - started < 5


# -- adapter: what cannot be given faithfully (PROTO-UNSUPPORTED-1) ------------------


def _adapter(*, test_tools: bool = False, session_dir: str | None = None) -> Any:
    adapter = ClaudeCodeAdapter(Release("0", ("claude",), Path("/nowhere")), turn_timeout=1.0)
    adapter._test_tools = test_tools
    adapter._session_dir = session_dir
    return adapter


def _use(name: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"t{name}", "name": name, "input": tool_input}


@pytest.mark.parametrize("tool", ["TaskOutput", "BashOutput", "TaskStop", "KillShell"])
def test_a_counted_task_id_has_no_counterpart(tool: str) -> None:
    """SPEC: PROTO-UNSUPPORTED-1, BASH-BG-1"""
    with pytest.raises(Unmappable, match="random ids"):
        _adapter()._check_faithful([_use(tool, task_id="bash_1")])
    _adapter()._check_faithful([_use(tool, task_id="b2h1c0rk9")])  # the CLI's own id goes


def test_paths_in_the_session_directorys_own_files_have_no_counterpart() -> None:
    """SPEC: PROTO-UNSUPPORTED-1, HIST-1, RES-PERSIST-1"""
    adapter = _adapter(session_dir="/s/session-1")
    for path in ("/s/session-1/file-history/ab", "/s/session-1/tool-results/x.txt"):
        with pytest.raises(Unmappable, match="own config directory"):
            adapter._check_faithful([_use("Read", file_path=path)])
    adapter._check_faithful([_use("Read", file_path="/s/session-1/notes.txt")])
    adapter._check_faithful([_use("Glob", pattern="/s/session-1/*.txt")])


def test_tool_search_without_a_cli_tool_search_has_no_counterpart() -> None:
    """SPEC: PROTO-UNSUPPORTED-1, REG-SEARCH-1"""
    with pytest.raises(Unmappable, match="no ToolSearch"):
        _adapter(test_tools=True)._check_faithful([_use("ToolSearch", query="echo")])
    _adapter()._check_faithful([_use("ToolSearch", query="echo")])  # no test tools: unknown


def test_a_probe_that_would_see_a_trail_has_no_counterpart() -> None:
    """SPEC: PROTO-UNSUPPORTED-1, PROTO-PROBE-3, SCHED-CONTEXT-1"""
    safe = {"concurrency_safe": True}
    adapter = _adapter(test_tools=True)
    adapter._check_faithful([_use("Probe", label="A", **safe), _use("Read", file_path="/x")])
    batch = [_use("Probe", label="A", **safe), _use("Probe", label="B", **safe)]
    adapter._check_faithful(batch)  # one safe batch: neither sees the other
    with pytest.raises(Unmappable, match="context modifier"):
        adapter._check_faithful([_use("Probe", label="U"), _use("Probe", label="A", **safe)])
    adapter._probes_done = 1  # an earlier call's Probe succeeded
    with pytest.raises(Unmappable, match="context modifier"):
        adapter._check_faithful([_use("Probe", label="C")])
    assert adapter._to_cli(_use("Probe", label="C", **safe))["name"] == PROBE_TOOLS[1]
    assert _adapter()._to_cli(_use("Probe", label="C"))["name"] == "Probe"  # no test tools


def test_a_main_loop_request_is_one_that_offers_tools() -> None:
    """A pool without Read (a deny rule removed it) is still the main loop's."""
    model = ScriptedModel().start()
    body = {"messages": [{"role": "user", "content": "go"}], "tools": [{"name": "Bash"}]}
    done: list[bytes] = []
    thread = threading.Thread(
        target=lambda: done.append(_post(model.base_url + "/v1/messages", body))
    )
    thread.start()
    request = model.next_turn(5.0)
    assert request is not None
    assert request.tools == [{"name": "Bash"}]
    answer(request, Turn([{"type": "text", "text": "Done."}], "end_turn"))
    thread.join(5.0)
    model.close()
    assert done
    assert not model.side_requests


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
    use = {"id": "t1", "name": "ToolSearch"}
    shown = {"tool_use_id": "t1", "content": [{"type": "text", "text": "ok"}]}
    assert _result(TurnResult({"t1": shown}, {}, []), use)["tool_result"] is shown
    odd = {"tool_use_id": "t1", "content": [{"type": "tool_reference", "tool_name": "Probe"}]}
    with pytest.raises(Unmappable, match="tool_reference"):
        _result(TurnResult({"t1": odd}, {}, []), use)
