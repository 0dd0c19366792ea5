"""RES-PERSIST-3: a tool_use id never names the path of a persisted result."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reference.results import persist, result_file_name

HOSTILE_IDS = [
    "/abs/secret/pwned",
    "../../escape",
    "..",
    ".",
    "a/b",
    "nul\x00id",
    "x" * 300,
    "lone\ud800surrogate",
    "\udc80\udcff",
    "",
    "sha256." + "0" * 64,
]


@pytest.mark.parametrize("tool_use_id", HOSTILE_IDS)
def test_hostile_id_is_hashed_inside_tool_results(tmp_path: Path, tool_use_id: str) -> None:
    """SPEC: RES-PERSIST-3"""
    session = tmp_path / "session"
    session.mkdir()
    _, path = persist("x" * 10, session_dir=str(session), tool_use_id=tool_use_id)
    assert os.path.dirname(path) == str(session / "tool-results")
    assert os.path.basename(path).startswith("sha256.")
    assert len(os.path.basename(path)) == len("sha256.") + 64 + len(".txt")
    assert Path(path).read_text() == "x" * 10
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session"]


def test_plain_ids_keep_their_name_and_forms_never_collide() -> None:
    """SPEC: RES-PERSIST-3"""
    assert result_file_name("toolu_01AbC-9") == "toolu_01AbC-9.txt"
    names = {result_file_name(i) for i in [*HOSTILE_IDS, "toolu_1", "a" * 64, "a" * 65]}
    assert len(names) == len(HOSTILE_IDS) + 3
    assert result_file_name("a" * 65).startswith("sha256.")


def test_a_link_at_the_name_is_replaced_not_followed(tmp_path: Path) -> None:
    """SPEC: RES-PERSIST-3"""
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"keep\n")
    results = tmp_path / "session" / "tool-results"
    results.mkdir(parents=True)
    (results / "big.txt").symlink_to(outside)
    _, path = persist("new", session_dir=str(tmp_path / "session"), tool_use_id="big")
    assert outside.read_bytes() == b"keep\n"
    assert not os.path.islink(path)
    assert Path(path).read_text() == "new"
