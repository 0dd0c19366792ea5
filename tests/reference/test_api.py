"""The library face (``reference.api``): sessions, tool definitions, tool_result blocks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import reference
from reference import BadRequest, open_session


class SdkBlock:
    """Stands for an Anthropic SDK content block: a pydantic model with ``model_dump``."""

    def __init__(self, **fields: Any) -> None:
        self.fields = fields

    def model_dump(self) -> dict[str, Any]:
        return dict(self.fields)


def test_a_prompt_is_answered_by_ask(tmp_path: Path) -> None:
    """Reference-defined: the library has no user, so ``ask`` answers permission prompts."""
    use = {"type": "tool_use", "id": "w", "name": "Write"}
    use["input"] = {"file_path": str(tmp_path / "a.txt"), "content": "x\n"}
    with open_session(tmp_path) as session:
        [denied] = session.run([use])
    assert denied["is_error"] is True
    assert not (tmp_path / "a.txt").exists()
    with open_session(tmp_path, ask="allow") as session:
        [written] = session.run([use])
    assert written["is_error"] is False
    assert (tmp_path / "a.txt").read_text() == "x\n"


def test_sdk_blocks_are_taken_and_other_blocks_skipped(tmp_path: Path) -> None:
    """SPEC: DISP-EXTRACT-1"""
    (tmp_path / "f.txt").write_text("one\n")
    message = {
        "role": "assistant",
        "content": [
            SdkBlock(type="text", text="Reading."),
            SdkBlock(type="tool_use", id="r", name="Read", input={"file_path": "f.txt"}),
        ],
    }
    with open_session(tmp_path, settings_by_source={"userSettings": {}}) as session:
        [result] = session.run(message)
    assert result["tool_use_id"] == "r"
    assert result["is_error"] is False
    assert "1\tone" in str(result["content"])  # FILE-PATH-1: relative to the session's cwd


def test_malformed_blocks_and_roots_raise_bad_request(tmp_path: Path) -> None:
    """Reference-defined: what protocol v1 answers with bad_request, the library raises."""
    with open_session(tmp_path) as session:
        with pytest.raises(BadRequest, match="unique"):
            session.run([{"type": "tool_use", "id": "a", "name": "Read", "input": {}}] * 2)
        with pytest.raises(BadRequest, match="input"):
            session.run([{"type": "tool_use", "id": "a", "name": "Read"}])
    with pytest.raises(BadRequest, match="root"):
        open_session(tmp_path / "missing")


def test_the_package_exports_the_api_lazily() -> None:
    """Reference-defined: ``reference`` exports the library face, imported on first use."""
    assert reference.open_session is open_session
    assert set(reference.__all__) >= {"open_session", "ToolSession", "ToolResultBlock"}
    with pytest.raises(AttributeError):
        _ = reference.nothing_here  # type: ignore[attr-defined]
