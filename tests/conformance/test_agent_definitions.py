"""Agent definitions: the shipped files validate, and mapping and readback are honest."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from conformance.errors import ConformanceError
from conformance.peers.agent import apply_patch
from conformance.peers.agent.definition import (
    AgentDefinition,
    ResultRule,
    ToolMap,
    load_definition,
    shipped_definitions,
)
from conformance.peers.agent.mapping import file_on_disk, map_call
from conformance.peers.agent.model_api import ToolResult
from conformance.peers.agent.readback import read_back
from conformance.peers.peer_rules import Unmappable

SHIPPED = ["cline", "codex", "gemini-cli", "kilocode", "opencode", "qwen-code"]


def nothing(_path: str) -> bytes | None:
    return None


def test_the_six_definitions_ship_and_validate() -> None:
    assert set(SHIPPED) <= set(shipped_definitions())
    for name in SHIPPED:
        definition = load_definition(name)
        assert definition.name == name
        assert definition.install.version == definition.implementation.version


def test_codex_plays_no_read_and_claims_none() -> None:
    codex = load_definition("codex")
    assert "Read" not in codex.tools
    assert set(codex.features) == {"write", "edit", "bash"}


def minimal(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "tiny",
        "implementation": {"name": "tiny", "version": "1.0.0", "language": "python"},
        "install": {"npm": "tiny", "version": "1.0.0", "program": ".bin/tiny"},
        "launch": {"argv": ["{program}", "{prompt}"]},
        "model_api": {"dialect": "openai_chat", "model": "m"},
        "tools": {"Read": {"tool": "read_file", "input": {"path": "$file_path"}}},
        "features": ["read"],
    }
    data.update(changes)
    return data


@pytest.mark.parametrize(
    ("changes", "complaint"),
    [
        ({"features": ["read", "glob"]}, "glob is claimed exactly when Glob"),
        ({"features": ["read", "dedup"]}, "dedup is claimed exactly when"),
        ({"launch": {"argv": ["{nowhere}"]}}, "unknown placeholder"),
        ({"install": {"npm": "t", "version": "latest", "program": "x"}}, "pinned release"),
        ({"surprise": 1}, "Extra inputs"),
        ({"model_api": {"dialect": "soap", "model": "m"}}, "dialect"),
    ],
)
def test_a_bad_definition_is_refused_with_the_place(
    tmp_path: Path, changes: dict[str, Any], complaint: str
) -> None:
    import yaml  # noqa: PLC0415

    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(minimal(**changes)))
    with pytest.raises(ConformanceError, match=complaint):
        load_definition(str(path))


def test_an_unknown_name_lists_the_shipped_ones() -> None:
    with pytest.raises(ConformanceError, match="qwen-code"):
        load_definition("nobody")


# -- mapping --------------------------------------------------------------------


def tool(**fields: Any) -> ToolMap:
    return ToolMap.model_validate(fields)


def test_offset_bases_and_inclusive_ends() -> None:
    qwen = load_definition("qwen-code").tools["Read"]
    call = map_call("Read", qwen, {"file_path": "/a", "offset": 3, "limit": 2}, nothing)
    assert call.arguments == {"file_path": "/a", "offset": 2, "limit": 2}
    gemini = load_definition("gemini-cli").tools["Read"]
    call = map_call("Read", gemini, {"file_path": "/a", "offset": 3, "limit": 2}, nothing)
    assert call.arguments == {"file_path": "/a", "start_line": 3, "end_line": 4}
    call = map_call("Read", gemini, {"file_path": "/a", "limit": 2}, nothing)
    assert call.arguments == {"file_path": "/a", "end_line": 2}
    call = map_call("Read", gemini, {"file_path": "/a"}, nothing)
    assert call.arguments == {"file_path": "/a"}


def test_renames_and_constants() -> None:
    replace = load_definition("gemini-cli").tools["Edit"]
    call = map_call(
        "Edit", replace, {"file_path": "/a", "old_string": "x", "new_string": "y"}, nothing
    )
    assert call.name == "replace"
    assert call.arguments == {
        "file_path": "/a",
        "instruction": "Apply this exact replacement.",
        "old_string": "x",
        "new_string": "y",
    }
    cline = load_definition("cline").tools["Read"]
    call = map_call("Read", cline, {"file_path": "/a", "offset": 2, "limit": 1}, nothing)
    assert call.arguments == {"files": [{"path": "/a", "start_line": 2, "end_line": 2}]}


@pytest.mark.parametrize(
    ("tool_input", "why"),
    [
        ("not an object", "takes an object"),
        ({"file_path": "/a", "offset": 2}, "only together with limit"),
    ],
)
def test_what_the_agent_cannot_be_given_is_unmappable(tool_input: Any, why: str) -> None:
    qwen = load_definition("qwen-code").tools["Read"]
    with pytest.raises(Unmappable, match=why):
        map_call("Read", qwen, tool_input, nothing)


def test_a_protocol_key_without_counterpart_is_unmappable_a_stray_one_passes() -> None:
    grep = load_definition("qwen-code").tools["Grep"]
    with pytest.raises(Unmappable, match=r"no counterpart for Grep's \['-i'\]"):
        map_call("Grep", grep, {"pattern": "x", "-i": True}, nothing)
    gemini = load_definition("gemini-cli").tools["Read"]
    call = map_call("Read", gemini, {"file_path": "/a", "zeta": 1}, nothing)
    assert call.arguments == {"file_path": "/a", "zeta": 1}


def test_fixed_keys_pass_only_with_their_value() -> None:
    edit = load_definition("cline").tools["Edit"]
    base = {"file_path": "/a", "old_string": "x", "new_string": "y"}
    assert map_call("Edit", edit, {**base, "replace_all": False}, nothing).arguments == {
        "path": "/a",
        "old_text": "x",
        "new_text": "y",
    }
    with pytest.raises(Unmappable, match="replace_all=False only"):
        map_call("Edit", edit, {**base, "replace_all": True}, nothing)


def test_a_create_only_write_refuses_an_existing_file() -> None:
    write = load_definition("cline").tools["Write"]
    tool_input = {"file_path": "/a", "content": "x\n"}
    assert map_call("Write", write, tool_input, nothing).arguments == {
        "path": "/a",
        "new_text": "x\n",
    }
    with pytest.raises(Unmappable, match="cannot overwrite"):
        map_call("Write", write, tool_input, lambda _p: b"old\n")


def test_sum_takes_integers_only() -> None:
    read = tool(tool="r", input={"o": {"$sum": ["$offset", -1]}})
    with pytest.raises(Unmappable, match="integers"):
        map_call("Read", read, {"offset": "2"}, nothing)


# -- apply_patch ------------------------------------------------------------------


def test_a_write_becomes_an_add_file_patch() -> None:
    write = load_definition("codex").tools["Write"]
    call = map_call("Write", write, {"file_path": "/s/a.txt", "content": "x\ny\n"}, nothing)
    assert call.kind == "custom"
    assert call.arguments == "*** Begin Patch\n*** Add File: /s/a.txt\n+x\n+y\n*** End Patch\n"


@pytest.mark.parametrize("content", ["", "no final line feed", "crlf\r\n"])
def test_a_write_a_patch_cannot_say_is_unmappable(content: str) -> None:
    write = load_definition("codex").tools["Write"]
    with pytest.raises(Unmappable):
        map_call("Write", write, {"file_path": "/s/a.txt", "content": content}, nothing)


def test_an_edit_becomes_an_update_patch_of_whole_lines() -> None:
    assert apply_patch.update_file("/a", "beta", "BETA", b"alpha\nbeta\n") == (
        "*** Begin Patch\n*** Update File: /a\n@@\n-beta\n+BETA\n*** End Patch\n"
    )
    assert apply_patch.update_file("/a", "b\nc\n", "", b"a\nb\nc\n") == (
        "*** Begin Patch\n*** Update File: /a\n@@\n-b\n-c\n*** End Patch\n"
    )
    assert apply_patch.update_file("/a", "two", "TWO", b"one\r\ntwo\r\n").count("-two") == 1
    assert "-absent" in apply_patch.update_file("/a", "absent", "x", b"alpha\n")
    assert "-x" in apply_patch.update_file("/a", "x", "y", None)


@pytest.mark.parametrize(
    ("old", "new", "current"),
    [
        ("lph", "LPH", b"alpha\n"),
        ("", "x", b"alpha\n"),
        ("alpha\n", "x", b"alpha\n"),
        ("alpha", "", b"alpha\n"),
        ("a\r", "b", b"a\r\n"),
    ],
)
def test_an_edit_a_patch_cannot_say_is_inexpressible(old: str, new: str, current: bytes) -> None:
    with pytest.raises(apply_patch.Inexpressible):
        apply_patch.update_file("/a", old, new, current)


# -- readback ---------------------------------------------------------------------


def result(text: str, is_error: bool | None = None) -> ToolResult:
    return ToolResult(call_id="c", name=None, text=text, is_error=is_error, group=1)


def test_the_table_infers_refusals_and_the_stub_per_tool() -> None:
    qwen = load_definition("qwen-code")
    edit, read, bash = qwen.tools["Edit"], qwen.tools["Read"], qwen.tools["Bash"]
    refused = read_back(qwen, "Edit", edit, result("File /a has not been read in this session."))
    assert (refused.is_error, refused.error_source) == (True, "inference")
    stub = read_back(
        qwen, "Read", read, result("[File a unchanged since last read in this session")
    )
    assert (stub.is_error, stub.dedup) == (False, True)
    content = read_back(qwen, "Read", read, result("File /a has not been read in this session."))
    assert content.is_error is False  # a file's text is not a refusal of Read
    failed = read_back(qwen, "Bash", bash, result("Output: hi\nExit Code: 3\nSignal: (none)"))
    assert failed.is_error is True
    passed = read_back(qwen, "Bash", bash, result("Output: Exit Code: 3\nExit Code: 0"))
    assert passed.is_error is False


def test_the_dialect_flag_comes_first() -> None:
    gemini = load_definition("gemini-cli")
    flagged = read_back(gemini, "Read", gemini.tools["Read"], result("File not found: /a", True))
    assert (flagged.is_error, flagged.error_source) == (True, "dialect")


def test_a_json_record_is_read_back_by_its_keys() -> None:
    rule = ResultRule(format="json_record", text_key="result", error_key="error", ok_key="success")
    definition = AgentDefinition.model_validate(minimal())
    read = tool(tool="read_files", result=rule.model_dump())
    ok = read_back(definition, "Read", read, result('[{"result": "1 | a", "success": true}]'))
    assert (ok.text, ok.is_error) == ("1 | a", False)
    failed = read_back(
        definition, "Read", read, result('{"result": "", "error": "ENOENT", "success": false}')
    )
    assert (failed.text, failed.is_error, failed.error_source) == ("ENOENT", True, "result")
    bash = read_back(
        definition,
        "Read",
        read,
        result('[{"result": "[exit 3]\\nhi", "error": "exit 3", "success": false}]'),
    )
    assert (bash.text, bash.is_error) == ("[exit 3]\nhi", True)
    plain = read_back(definition, "Read", read, result("not json"))
    assert (plain.text, plain.is_error) == ("not json", False)


# -- the definition against the offered schemas -------------------------------------


def test_offered_tools_are_checked_against_the_definition() -> None:
    from conformance.peers.agent.model_api import OfferedTool  # noqa: PLC0415
    from conformance.peers.agent.offered import mismatches  # noqa: PLC0415

    opencode = load_definition("opencode")
    schema: dict[str, Any] = {"properties": {"filePath": {}, "offset": {}, "limit": {}}}
    offered = [
        OfferedTool("read", "function", schema),
        OfferedTool("write", "function", {"properties": {"filePath": {}}}),
        OfferedTool("edit", "custom"),
    ]
    problems = mismatches(opencode, offered)
    assert "Write: write has no argument 'content' (it takes filePath)" in problems
    assert "Edit: edit is offered as a custom tool, the definition says function" in problems
    assert "Bash: opencode offers no bash" in problems
    assert not any(p.startswith("Read:") for p in problems)


# -- what a mapping reads from disk --------------------------------------------------


def test_a_mapping_reads_a_regular_file_and_never_blocks_on_a_fifo(tmp_path: Path) -> None:
    text = tmp_path / "a.txt"
    text.write_bytes(b"alpha\r\n")
    assert file_on_disk(str(text)) == b"alpha\r\n"
    assert file_on_disk(str(tmp_path / "missing.txt")) is None
    assert file_on_disk(str(text / "below")) is None  # a file as a directory: nothing there
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    answered: list[BaseException] = []

    def read_fifo() -> None:
        try:
            file_on_disk(str(fifo))
        except Unmappable as exc:
            answered.append(exc)

    reader = threading.Thread(target=read_fifo, daemon=True)
    reader.start()
    reader.join(timeout=5)
    assert not reader.is_alive(), "opening a FIFO with no writer blocked the mapping"
    assert answered
    assert "not a regular file" in str(answered[0])
    with pytest.raises(Unmappable, match="not a regular file"):
        file_on_disk(str(tmp_path))
    with pytest.raises(Unmappable):
        file_on_disk(str(tmp_path / "nul\0name"))


def test_codex_editing_a_fifo_is_not_applicable(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    codex = load_definition("codex")
    tool_map = codex.played("Edit")
    assert tool_map is not None
    edit = {"file_path": str(fifo), "old_string": "a\n", "new_string": "b\n"}
    with pytest.raises(Unmappable, match="not a regular file"):
        map_call("Edit", tool_map, edit, file_on_disk)
