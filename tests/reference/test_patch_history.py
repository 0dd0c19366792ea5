"""Structured patches and the file history (SPEC.md section 15)."""

from __future__ import annotations

import hashlib
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from refsupport import Call

from reference import history, patch
from reference.patch import Hunk, structured_patch

TEXTS = st.builds(
    lambda lines, final: "\n".join(lines) + final,
    st.lists(st.sampled_from(["a", "b", "c", "", "  x", "def f():"]), max_size=30),
    st.sampled_from(["", "\n"]),
)


def lines_of(text: str) -> list[str]:
    """A text's lines, a final newline ending the last line rather than starting one."""
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n") if text else []


def numbered(n: int) -> list[str]:
    return [f"line {i}" for i in range(1, n + 1)]


def apply_hunks(old_lines: list[str], hunks: list[Hunk]) -> list[str]:
    """Rebuild the new lines from the old ones and the hunks, checking every count."""
    out: list[str] = []
    cursor = 0
    for hunk in hunks:
        start = hunk["oldStart"] - 1 if hunk["oldLines"] else hunk["oldStart"]
        out.extend(old_lines[cursor:start])
        cursor = start
        assert sum(1 for line in hunk["lines"] if line[0] in " -") == hunk["oldLines"]
        assert sum(1 for line in hunk["lines"] if line[0] in " +") == hunk["newLines"]
        for line in hunk["lines"]:
            marker, body = line[0], line[1:]
            if marker in " -":
                assert old_lines[cursor] == body
                cursor += 1
            if marker in " +":
                out.append(body)
    return [*out, *old_lines[cursor:]]


def test_one_changed_line_gives_one_hunk_with_its_context() -> None:
    """SPEC: PATCH-1"""
    assert structured_patch("a\nb\nc", "a\nB\nc") == [
        {
            "oldStart": 1,
            "oldLines": 3,
            "newStart": 1,
            "newLines": 3,
            "lines": [" a", "-b", "+B", " c"],
        }
    ]


def test_context_is_three_lines() -> None:
    """SPEC: PATCH-1"""
    old = numbered(20)
    new = [*old[:9], "changed", *old[10:]]
    assert structured_patch("\n".join(old), "\n".join(new)) == [
        {
            "oldStart": 7,
            "oldLines": 7,
            "newStart": 7,
            "newLines": 7,
            "lines": [
                " line 7",
                " line 8",
                " line 9",
                "-line 10",
                "+changed",
                " line 11",
                " line 12",
                " line 13",
            ],
        }
    ]


def test_distant_changes_give_separate_hunks_and_close_ones_merge() -> None:
    """SPEC: PATCH-1"""
    old = numbered(30)
    far = [*old[:2], "x", *old[3:25], "y", *old[26:]]
    near = [*old[:2], "x", *old[3:8], "y", *old[9:]]
    assert len(structured_patch("\n".join(old), "\n".join(far))) == 2
    assert len(structured_patch("\n".join(old), "\n".join(near))) == 1


def test_crlf_is_read_as_lf() -> None:
    """SPEC: PATCH-1"""
    assert structured_patch("a\r\nb\r\nc", "a\nb\nc") == []
    hunks = structured_patch("a\r\nb\r\nc", "a\r\nB\r\nc")
    assert hunks[0]["lines"] == [" a", "-b", "+B", " c"]


def test_identical_texts_have_no_hunks() -> None:
    """SPEC: PATCH-1"""
    assert structured_patch("same\ntext", "same\ntext") == []


def test_text_ending_in_a_newline_has_no_phantom_empty_line() -> None:
    """SPEC: PATCH-1"""
    assert structured_patch("a\nb\nc\n", "a\nB\nc\n") == [
        {
            "oldStart": 1,
            "oldLines": 3,
            "newStart": 1,
            "newLines": 3,
            "lines": [" a", "-b", "+B", " c"],
        }
    ]


def test_patch_from_an_empty_text_only_adds_lines() -> None:
    """SPEC: PATCH-1, WRITE-RESULT-1"""
    assert structured_patch("", "x\ny") == [
        {"oldStart": 0, "oldLines": 0, "newStart": 1, "newLines": 2, "lines": ["+x", "+y"]}
    ]


@settings(max_examples=150, derandomize=True, database=None, deadline=None)
@given(old=TEXTS, new=TEXTS)
def test_hunks_rebuild_the_new_lines_from_the_old(old: str, new: str) -> None:
    """SPEC: PATCH-1"""
    hunks = structured_patch(old, new)
    for hunk in hunks:
        assert all(line[:1] in {" ", "-", "+"} for line in hunk["lines"])
    assert apply_hunks(lines_of(old), hunks) == lines_of(new)


def test_backup_is_keyed_by_the_sha256_of_the_bytes(tmp_path: Path) -> None:
    """SPEC: HIST-1"""
    data = b"version 1\r\n\x00\xff"
    backup = history.backup(str(tmp_path), data)
    assert backup == str(tmp_path / "file-history" / hashlib.sha256(data).hexdigest())
    assert Path(backup).read_bytes() == data


def test_saving_the_same_bytes_twice_writes_one_file(tmp_path: Path) -> None:
    """SPEC: HIST-1"""
    first = history.backup(str(tmp_path), b"same")
    os.utime(first, ns=(1_000_000_000, 1_000_000_000))  # a mark a rewrite would erase
    second = history.backup(str(tmp_path), b"same")
    assert second == first
    assert os.listdir(tmp_path / "file-history") == [os.path.basename(first)]
    assert os.stat(first).st_mtime_ns == 1_000_000_000


def test_different_bytes_get_different_backups(tmp_path: Path) -> None:
    """SPEC: HIST-1"""
    history.backup(str(tmp_path), b"one")
    history.backup(str(tmp_path), b"two")
    assert len(os.listdir(tmp_path / "file-history")) == 2


def test_engine_backups_are_idempotent_across_writes(
    tmp_path: Path, session_dir: Path, call: Call
) -> None:
    """SPEC: HIST-1"""
    path = tmp_path / "a.txt"
    path.write_bytes(b"v1")
    call("Read", file_path=str(path))
    for content in ("v2", "v1", "v2"):  # backs up v1, v2, then v1 again
        assert call("Write", file_path=str(path), content=content)["outcome"]["stage"] == "done"
    names = sorted(os.listdir(session_dir / "file-history"))
    assert names == sorted(hashlib.sha256(b).hexdigest() for b in (b"v1", b"v2"))


def _apply(old: str, hunks: list[patch.Hunk]) -> list[str]:
    """The old text's lines with the hunks applied, checking every context and removed line."""
    old_lines = patch._lines(old)
    out: list[str] = []
    position = 0
    for hunk in hunks:
        start = hunk["oldStart"] - 1 if hunk["oldLines"] else hunk["oldStart"]
        out += old_lines[position:start]
        position = start
        for line in hunk["lines"]:
            if line[0] in " -":
                assert old_lines[position] == line[1:]
                position += 1
            if line[0] in " +":
                out.append(line[1:])
    return out + old_lines[position:]


def test_every_patch_turns_the_old_text_into_the_new() -> None:
    """SPEC: PATCH-1, PATCH-2"""
    rng = random.Random(12)
    for _ in range(2_000):
        alphabet = rng.choice(["ab", "abc", "abcdefgh"])
        old = [rng.choice(alphabet) for _ in range(rng.randint(0, 40))]
        new = list(old)
        for _ in range(rng.randint(0, 6)):
            where = rng.randint(0, len(new))
            if rng.random() < 0.5:
                new.insert(where, rng.choice(alphabet))
            elif new:
                del new[min(where, len(new) - 1)]
        old_text, new_text = "".join(f"{x}\n" for x in old), "".join(f"{x}\n" for x in new)
        hunks = patch.structured_patch(old_text, new_text)
        assert _apply(old_text, hunks) == new


def test_a_patch_over_the_budget_is_one_change_and_still_correct() -> None:
    """SPEC: PATCH-2"""
    old, new = "ab\n" * 2_000, "ab\ncd\n" * 1_000
    hunks = patch.structured_patch(old, new)  # once minutes of difflib: 249 s
    assert _apply(old, hunks) == new.splitlines()
    assert len(hunks) == 1
    assert (hunks[0]["oldLines"], hunks[0]["newLines"]) == (2_000, 2_000)


@pytest.mark.subprocess
def test_repetitive_patches_answer_in_bounded_time() -> None:
    """SPEC: PATCH-2"""
    # a hang check: the bound is generous, the first case took 249 s before
    script = (
        "from reference.patch import structured_patch\n"
        "structured_patch('ab\\n' * 2000, 'ab\\ncd\\n' * 1000)\n"
        "structured_patch('', 'abc\\n' * 1_000_000)\n"
        "structured_patch('a\\nb\\n' * 3000, 'b\\na\\n' * 3000)\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
