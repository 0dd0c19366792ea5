"""Glob (SPEC.md section 17.2) through the protocol engine, on a real disk."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from refsupport import Begin, Call, Unchanged, assert_done, assert_refused, content, error_text

from reference import deadline
from reference.abort import AbortSignal
from reference.engine import Engine
from reference.session import Session
from reference.tool import ToolUseContext
from reference.tools.glob import GLOB_TOOL, GlobInput, expand_braces, find

NO_FILES = "No files found"
TRUNCATED = "(Results are truncated. Consider using a more specific path or pattern.)"


def make(root: Path, *names: str, age: int = 100) -> list[Path]:
    """Create files (parents too) with distinct mtimes: the first is the oldest."""
    made = []
    for index, name in enumerate(names):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{name}\n", encoding="utf-8")
        stamp = 1_700_000_000 - age + index
        os.utime(path, (stamp, stamp))
        made.append(path)
    return made


def found(response: dict[str, Any]) -> list[str]:
    output = assert_done(response)
    filenames: list[str] = output["filenames"]
    return filenames


def rel(root: Path, response: dict[str, Any]) -> list[str]:
    return [os.path.relpath(p, root) for p in found(response)]


# --- GLOB-VALIDATE-1 ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("inp", "code", "name"),
    [
        ({"pattern": "a\x00b"}, 1, "InvalidPathError"),
        ({"pattern": "*", "path": "x\x00"}, 1, "InvalidPathError"),
        ({"pattern": "x\x00", "path": "missing"}, 1, "InvalidPathError"),
        ({"pattern": "*", "path": "\\\\server\\share"}, 2, "UncPathError"),
        ({"pattern": "*", "path": "missing"}, 3, "PathDoesNotExistError"),
        ({"pattern": "*", "path": "file.txt"}, 4, "NotADirectoryError"),
    ],
)
def test_checks_run_in_table_order(
    tmp_path: Path, call: Call, unchanged: Unchanged, *, inp: dict[str, Any], code: int, name: str
) -> None:
    """SPEC: GLOB-VALIDATE-1, FILE-PATH-2, FILE-PATH-3, ERR-CODE-1"""
    make(tmp_path, "file.txt")
    with unchanged():
        assert_refused(call("Glob", **inp), stage="validate", code=code, name=name)


def test_validation_messages(tmp_path: Path, call: Call) -> None:
    """SPEC: GLOB-VALIDATE-1"""
    make(tmp_path, "file.txt")
    assert error_text(call("Glob", pattern="\x00")) == (
        "Pattern and path must not contain NUL characters."
    )
    assert error_text(call("Glob", pattern="*", path="nope")) == (
        f"Directory does not exist: {tmp_path}/nope. "
        f"Note: your current working directory is {tmp_path}."
    )
    assert error_text(call("Glob", pattern="*", path="file.txt")) == (
        f"Path is not a directory: {tmp_path}/file.txt"
    )


def test_a_dangling_symlink_path_exists_but_is_not_a_directory(tmp_path: Path, call: Call) -> None:
    """SPEC: GLOB-VALIDATE-1"""
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    assert_refused(
        call("Glob", pattern="*", path="dangling"),
        stage="validate",
        code=4,
        name="NotADirectoryError",
    )


# --- GLOB-BASE-1 -------------------------------------------------------------------------


def test_path_defaults_to_cwd_and_a_relative_path_is_expanded(tmp_path: Path, begin: Begin) -> None:
    """SPEC: GLOB-BASE-1, FILE-PATH-1"""
    make(tmp_path, "top.txt", "sub/in.txt", "sub/deeper/x.txt")
    engine = begin(cwd=str(tmp_path / "sub"))
    answer = handle(engine, pattern="*.txt")
    assert found(answer) == [f"{tmp_path}/sub/in.txt", f"{tmp_path}/sub/deeper/x.txt"]
    answer = handle(engine, pattern="*.txt", path="deeper")
    assert found(answer) == [f"{tmp_path}/sub/deeper/x.txt"]
    answer = handle(engine, pattern="*.txt", path="..")
    assert found(answer) == [
        f"{tmp_path}/top.txt",
        f"{tmp_path}/sub/in.txt",
        f"{tmp_path}/sub/deeper/x.txt",
    ]


def handle(engine: Engine, **tool_input: Any) -> dict[str, Any]:
    response = engine.handle(
        {"seq": 1, "cmd": "call", "tool_use": {"id": "g", "name": "Glob", "input": tool_input}}
    )
    assert "error" not in response, response
    return response


def test_patterns_with_a_slash_match_paths_relative_to_the_cwd(tmp_path: Path, call: Call) -> None:
    """SPEC: GLOB-BASE-1"""
    make(tmp_path, "src/a.py", "src/lib/b.py", "other/c.py")
    assert rel(tmp_path, call("Glob", pattern="src/*.py")) == ["src/a.py"]
    assert rel(tmp_path, call("Glob", pattern="lib/*.py", path="src")) == []
    assert rel(tmp_path, call("Glob", pattern="src/lib/*.py", path="src")) == ["src/lib/b.py"]
    assert rel(tmp_path, call("Glob", pattern="./src/*.py")) == ["src/a.py"]


def test_patterns_without_a_slash_match_names_at_any_depth(tmp_path: Path, call: Call) -> None:
    """SPEC: GLOB-BASE-1"""
    make(tmp_path, "a.py", "src/b.py", "src/lib/c.py")
    assert rel(tmp_path, call("Glob", pattern="*.py")) == ["a.py", "src/b.py", "src/lib/c.py"]
    assert rel(tmp_path, call("Glob", pattern="c.py", path="src")) == ["src/lib/c.py"]


def test_a_slash_pattern_never_matches_outside_the_cwd(tmp_path: Path, begin: Begin) -> None:
    """SPEC: GLOB-BASE-1"""
    make(tmp_path, "cwd/x.txt", "other/q/z.py")
    engine = begin(cwd=str(tmp_path / "cwd"))
    assert found(handle(engine, pattern="q/*.py", path=str(tmp_path / "other"))) == []
    assert found(handle(engine, pattern="*.py", path=str(tmp_path / "other"))) == [
        f"{tmp_path}/other/q/z.py"
    ]


def test_an_absolute_pattern_ignores_path(tmp_path: Path, call: Call) -> None:
    """SPEC: GLOB-BASE-1"""
    make(tmp_path, "a/x.py", "a/sub/y.py", "b/z.py")
    response = call("Glob", pattern=f"{tmp_path}/a/**/*.py", path=str(tmp_path / "b"))
    assert rel(tmp_path, response) == ["a/x.py", "a/sub/y.py"]
    response = call("Glob", pattern=f"{tmp_path}/{{a,b}}/*.py")
    assert rel(tmp_path, response) == ["a/x.py", "b/z.py"]
    assert rel(tmp_path, call("Glob", pattern=f"{tmp_path}/b/z.py")) == ["b/z.py"]


def test_the_base_of_an_absolute_pattern_is_what_permissions_check(
    tmp_path: Path, begin: Begin
) -> None:
    """SPEC: TOOL-PATH-1, GLOB-BASE-1, PERM-READ-1"""
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    make(outside, "x.txt")
    root.mkdir()
    engine = begin(root=str(root), prompt="deny")
    answer = handle(engine, pattern=f"{outside}/*.txt")
    assert answer["outcome"]["stage"] == "permission"
    assert [e["type"] for e in answer["events"]].count("permission_request") == 1
    answer = handle(engine, pattern="*.txt", path=str(root))
    assert answer["outcome"]["stage"] == "done"
    assert answer["outcome"]["permission"]["reason"] == "tool"  # PERM-READ-1: inside: allow


def test_get_path_is_the_search_directory(tmp_path: Path, ctx: ToolUseContext) -> None:
    """SPEC: TOOL-PATH-1"""
    assert GLOB_TOOL.get_path is not None
    assert GLOB_TOOL.get_path(GlobInput(pattern="*"), ctx) == str(tmp_path)
    assert GLOB_TOOL.get_path(GlobInput(pattern="*", path="sub/.."), ctx) == str(tmp_path)
    assert GLOB_TOOL.get_path(GlobInput(pattern="/etc/x*/y"), ctx) == "/etc"
    assert GLOB_TOOL.get_path(GlobInput(pattern="*", path="a\x00"), ctx) is None


# --- GLOB-SYNTAX-1 -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("*.py", ["a.py", "d/c.py", "d/e/f.py"]),
        ("*", ["a.py", "b.txt", ".env", "d/c.py", "d/e/f.py", "d/e/g.md"]),
        ("**/*.py", ["a.py", "d/c.py", "d/e/f.py"]),
        ("**", ["a.py", "b.txt", ".env", "d/c.py", "d/e/f.py", "d/e/g.md"]),
        ("d/**/*.py", ["d/c.py", "d/e/f.py"]),
        ("d/**", ["d/c.py", "d/e/f.py", "d/e/g.md"]),
        ("d/*/*", ["d/e/f.py", "d/e/g.md"]),
        ("?.py", ["a.py", "d/c.py", "d/e/f.py"]),
        ("??.py", []),
        ("[ab].*", ["a.py", "b.txt"]),
        ("[!a].*", ["b.txt", "d/c.py", "d/e/f.py", "d/e/g.md"]),
        ("[^a].*", ["b.txt", "d/c.py", "d/e/f.py", "d/e/g.md"]),
        ("[a-b].txt", ["b.txt"]),
        ("*.{py,txt}", ["a.py", "b.txt", "d/c.py", "d/e/f.py"]),
        ("{d/e/*.py,b.*}", ["b.txt", "d/e/f.py"]),
        ("{d/e/*.{py,md},b.*}", []),
        ("*.A", []),
        ("*.PY", []),
        (".e*", [".env"]),
        ("d*", []),
    ],
)
def test_pattern_syntax(tmp_path: Path, call: Call, pattern: str, expected: list[str]) -> None:
    """SPEC: GLOB-SYNTAX-1, GLOB-WALK-1"""
    make(tmp_path, "a.py", "b.txt", ".env", "d/c.py", "d/e/f.py", "d/e/g.md")
    assert sorted(rel(tmp_path, call("Glob", pattern=pattern))) == sorted(expected)


def test_literal_braces_and_brackets(tmp_path: Path, call: Call) -> None:
    """SPEC: GLOB-SYNTAX-1"""
    make(tmp_path, "{a}.txt", "{b.txt", "[c.txt", "star*.txt", "a.txt")
    assert rel(tmp_path, call("Glob", pattern="{a}.txt")) == ["a.txt"]
    assert rel(tmp_path, call("Glob", pattern="{b.txt")) == ["{b.txt"]
    assert rel(tmp_path, call("Glob", pattern="[c.txt")) == ["[c.txt"]
    assert rel(tmp_path, call("Glob", pattern="star\\*.txt")) == ["star*.txt"]


def test_star_never_crosses_a_separator_and_globstar_matches_zero_segments(
    tmp_path: Path, call: Call
) -> None:
    """SPEC: GLOB-SYNTAX-1"""
    make(tmp_path, "a/b/c.txt", "a/c.txt", "c.txt")
    assert rel(tmp_path, call("Glob", pattern="a*c.txt")) == []
    assert sorted(rel(tmp_path, call("Glob", pattern="a/**/c.txt"))) == ["a/b/c.txt", "a/c.txt"]
    assert sorted(rel(tmp_path, call("Glob", pattern="**/c.txt"))) == [
        "a/b/c.txt",
        "a/c.txt",
        "c.txt",
    ]


def test_brace_expansion() -> None:
    """SPEC: GLOB-SYNTAX-1"""
    assert expand_braces("a{b,c}d") == ["abd", "acd"]
    assert expand_braces("{a,{b,c}}") == []
    assert expand_braces("{a}") == ["a"]
    assert expand_braces("{a,b") == ["{a,b"]
    assert expand_braces("x{,y}") == ["x", "xy"]
    assert expand_braces("{a,b}{1,2}") == ["a1", "b1", "a2", "b2"]
    assert expand_braces("\\{a,b}") == ["\\{a,b}"]


# --- GLOB-WALK-1 -------------------------------------------------------------------------


def test_only_regular_files_never_links_or_directories(tmp_path: Path, call: Call) -> None:
    """SPEC: GLOB-WALK-1"""
    make(tmp_path, "real.txt", "dir.txt/inner.md", "target/t.txt")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    (tmp_path / "dangling.txt").symlink_to(tmp_path / "gone.txt")
    (tmp_path / "linkdir").symlink_to(tmp_path / "target")
    os.mkfifo(tmp_path / "fifo.txt")
    assert sorted(rel(tmp_path, call("Glob", pattern="*.txt"))) == ["real.txt", "target/t.txt"]
    assert rel(tmp_path, call("Glob", pattern="linkdir/*")) == []
    assert rel(tmp_path, call("Glob", pattern="**/t.txt")) == ["target/t.txt"]


def test_git_directories_are_entered(tmp_path: Path, call: Call) -> None:
    """SPEC: GLOB-WALK-1"""
    make(tmp_path, ".git/config", "sub/.git/HEAD", "a.txt", ".gitignore")
    assert sorted(rel(tmp_path, call("Glob", pattern="**"))) == [
        ".git/config",
        ".gitignore",
        "a.txt",
        "sub/.git/HEAD",
    ]
    assert rel(tmp_path, call("Glob", pattern=".git/*")) == [".git/config"]
    assert rel(tmp_path, call("Glob", pattern="*", path=str(tmp_path / ".git"))) == [".git/config"]


# --- GLOB-HIDDEN-1 and GLOB-IGNORE-1 ------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "hidden_shown"),
    [("false", False), ("0", False), ("FALSE", False), ("no", True), ("1", True), ("true", True)],
)
def test_hidden_switch(tmp_path: Path, begin: Begin, value: str, hidden_shown: bool) -> None:
    """SPEC: GLOB-HIDDEN-1"""
    make(tmp_path, ".env", "a.txt", ".dir/b.txt", "c/.d.txt")
    engine = begin(env={"CLAUDE_CODE_GLOB_HIDDEN": value})
    names = sorted(os.path.relpath(p, tmp_path) for p in found(handle(engine, pattern="**")))
    hidden = [".dir/b.txt", ".env", "c/.d.txt"]
    assert names == sorted(["a.txt", *(hidden if hidden_shown else [])])


def test_hidden_files_are_included_by_default(tmp_path: Path, call: Call) -> None:
    """SPEC: GLOB-HIDDEN-1"""
    make(tmp_path, ".env", ".dir/b.txt")
    assert sorted(rel(tmp_path, call("Glob", pattern="**"))) == [".dir/b.txt", ".env"]


def test_a_hidden_search_directory_is_searched(tmp_path: Path, begin: Begin) -> None:
    """SPEC: GLOB-HIDDEN-1"""
    make(tmp_path, ".config/a.txt")
    engine = begin(env={"CLAUDE_CODE_GLOB_HIDDEN": "false"})
    assert found(handle(engine, pattern="*", path=".config")) == [f"{tmp_path}/.config/a.txt"]
    assert found(handle(engine, pattern=".config/*")) == []


def test_gitignore_is_not_applied_by_default(tmp_path: Path, call: Call) -> None:
    """SPEC: GLOB-IGNORE-1"""
    make(tmp_path, ".gitignore", "ignored.log", "build/x.py")
    (tmp_path / ".gitignore").write_text("*.log\nbuild/\n", encoding="utf-8")
    assert sorted(rel(tmp_path, call("Glob", pattern="**/*.{log,py}"))) == [
        "build/x.py",
        "ignored.log",
    ]


@pytest.mark.parametrize("value", ["false", "0", "False"])
def test_gitignore_applies_when_switched_on(tmp_path: Path, begin: Begin, value: str) -> None:
    """SPEC: GLOB-IGNORE-1"""
    make(
        tmp_path,
        "a.log",
        "keep.log",
        "build/x.py",
        "src/gen/y.py",
        "src/z.py",
        "src/w.tmp",
        "src/.gitignore",
        ".ignore",
    )
    (tmp_path / ".gitignore").write_text("*.log\n!keep.log\nbuild/\n/src/gen\n", encoding="utf-8")
    (tmp_path / "src/.gitignore").write_text("*.tmp\n", encoding="utf-8")
    (tmp_path / ".ignore").write_text("src/z.py\n", encoding="utf-8")  # not Glob's file
    engine = begin(env={"CLAUDE_CODE_GLOB_NO_IGNORE": value})
    names = sorted(os.path.relpath(p, tmp_path) for p in found(handle(engine, pattern="**")))
    assert names == [".gitignore", ".ignore", "keep.log", "src/.gitignore", "src/z.py"]


def test_gitignore_of_parents_up_to_root(tmp_path: Path, begin: Begin) -> None:
    """SPEC: GLOB-IGNORE-1"""
    root = tmp_path / "root"
    make(root, "sub/a.log", "sub/b.txt", "sub/c.tmp")
    (tmp_path / ".gitignore").write_text("*.txt\n", encoding="utf-8")  # above root: not read
    (root / ".gitignore").write_text("*.log\n", encoding="utf-8")
    engine = begin(root=str(root), env={"CLAUDE_CODE_GLOB_NO_IGNORE": "0"})
    names = [os.path.basename(p) for p in found(handle(engine, pattern="*", path="sub"))]
    assert sorted(names) == ["b.txt", "c.tmp"]


# --- GLOB-SORT-1 and GLOB-OUTPUT-1 --------------------------------------------------------


def test_oldest_first_ties_by_path(tmp_path: Path, call: Call) -> None:
    """SPEC: GLOB-SORT-1"""
    old, new, mid = make(tmp_path, "old.txt", "new.txt", "mid.txt")
    os.utime(old, (1000, 1000))
    os.utime(new, (3000, 3000))
    os.utime(mid, (2000, 2000))
    make(tmp_path, "tie_b.txt", "tie_a.txt")
    for name in ("tie_b.txt", "tie_a.txt"):
        os.utime(tmp_path / name, (1500, 1500))
    assert rel(tmp_path, call("Glob", pattern="*.txt")) == [
        "old.txt",
        "tie_a.txt",
        "tie_b.txt",
        "mid.txt",
        "new.txt",
    ]


def test_the_first_100_are_returned_and_the_result_says_truncated(
    tmp_path: Path, call: Call
) -> None:
    """SPEC: GLOB-SORT-1, GLOB-OUTPUT-1"""
    make(tmp_path, *(f"f{i:03}.txt" for i in range(101)))
    response = call("Glob", pattern="*.txt")
    output = assert_done(response)
    assert output["numFiles"] == 100
    assert output["truncated"] is True
    assert output["filenames"][0] == f"{tmp_path}/f000.txt"  # the oldest
    assert f"{tmp_path}/f100.txt" not in output["filenames"]  # the newest fell out
    lines = content(response).split("\n")
    assert lines[:-1] == output["filenames"]
    assert lines[-1] == TRUNCATED
    (tmp_path / "f000.txt").unlink()
    output = assert_done(call("Glob", pattern="*.txt"))
    assert (output["numFiles"], output["truncated"]) == (100, False)
    assert TRUNCATED not in content(call("Glob", pattern="*.txt"))


def test_output_text_and_structure(tmp_path: Path, call: Call) -> None:
    """SPEC: GLOB-OUTPUT-1"""
    make(tmp_path, "a.txt", "b.txt")
    response = call("Glob", pattern="*.txt")
    output = assert_done(response)
    assert set(output) == {"durationMs", "numFiles", "filenames", "truncated"}
    assert isinstance(output["durationMs"], int)
    assert output["numFiles"] == 2
    assert output["truncated"] is False
    assert content(response) == f"{tmp_path}/a.txt\n{tmp_path}/b.txt"
    assert content(call("Glob", pattern="*.none")) == NO_FILES
    assert assert_done(call("Glob", pattern="*.none"))["filenames"] == []


# --- permissions, properties --------------------------------------------------------------


def test_read_deny_rules_filter_the_results_and_the_count(tmp_path: Path, begin: Begin) -> None:
    """SPEC: PERM-FILTER-1"""
    make(tmp_path, "a.txt", "secret/b.txt", "c.env", "d/c.env")
    settings = {"projectSettings": {"permissions": {"deny": ["Read(./secret/**)", "Read(*.env)"]}}}
    engine = begin(settings=settings)
    output = assert_done(handle(engine, pattern="**"))
    assert output["filenames"] == [f"{tmp_path}/a.txt"]
    assert output["numFiles"] == 1


def test_filtered_files_do_not_count_towards_the_cap(tmp_path: Path, begin: Begin) -> None:
    """SPEC: PERM-FILTER-1, GLOB-SORT-1"""
    make(tmp_path, *(f"ok{i:03}.txt" for i in range(100)))
    make(tmp_path, *(f"no{i:03}.txt" for i in range(20)), age=0)  # newer than all
    engine = begin(settings={"session": {"permissions": {"deny": ["Read(no*)"]}}})
    output = assert_done(handle(engine, pattern="*.txt"))
    assert (output["numFiles"], output["truncated"]) == (100, False)


def test_tool_properties(ctx: ToolUseContext) -> None:
    """SPEC: TOOL-PROPS-1, PERM-RULE-2"""
    inp = GlobInput(pattern="**/*.py")
    assert GLOB_TOOL.is_read_only(inp) is True
    assert GLOB_TOOL.is_concurrency_safe(inp) is True
    assert GLOB_TOOL.is_destructive(inp) is False
    assert GLOB_TOOL.classifier_input(inp) == "**/*.py"
    assert GLOB_TOOL.max_result_size_chars == 100_000
    assert GLOB_TOOL.path_rules == "read"
    assert GLOB_TOOL.interrupt_behavior == "block"
    assert GLOB_TOOL.check_permissions(inp, ctx).behavior == "allow"  # PERM-READ-1: inside


def test_an_aborted_walk_stops(tmp_path: Path) -> None:
    """Reference-defined: the walk checks the abort signal (SCHED-ABORT-1 for a long Glob)."""
    make(tmp_path, "a/b.txt")
    session = Session.create(root=str(tmp_path))
    abort = AbortSignal()
    abort.abort("user_interrupt")
    ctx = ToolUseContext(session=session, tool_use_id="t", cwd=str(tmp_path), abort=abort)
    with pytest.raises(Exception, match="aborted"):
        find(GlobInput(pattern="**"), ctx)


def test_a_glob_past_its_limit_is_a_coded_failure(
    tmp_path: Path, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: GLOB-TIMEOUT-1"""
    (tmp_path / "a.txt").write_text("x\n")
    monkeypatch.setattr(deadline, "SEARCH_TIMEOUT_S", 0.0)
    answer = call("Glob", pattern="*.txt")
    assert answer["outcome"]["stage"] == "call"
    assert answer["outcome"]["error_name"] == "SearchTimeoutError"


def test_a_backtracking_glob_answers(tmp_path: Path, call: Call) -> None:
    """SPEC: GLOB-TIMEOUT-1, GLOB-SYNTAX-1"""
    (tmp_path / ("a" * 40)).write_text("x\n")
    (tmp_path / "ab").write_text("x\n")
    answers: list[dict[str, Any]] = []
    worker = threading.Thread(
        target=lambda: answers.append(call("Glob", pattern="*a*a*a*a*a*a*a*a*a*a*b")),
        daemon=True,
    )
    worker.start()
    worker.join(30)  # only to detect a hang: a backtracking matcher never came back
    assert answers, "Glob never answered"
    assert content(answers[0]) == "No files found"


def test_a_backtracking_gitignore_line_is_stopped_at_the_limit(
    tmp_path: Path, begin: Begin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: GLOB-TIMEOUT-2, GLOB-IGNORE-1

    The ignore file's lines are matched within the limit: a line that
    backtracks for minutes against a name of 40 ``a`` gets the Glob
    answered SearchTimeoutError within a second of its limit.
    """
    (tmp_path / ("a" * 40)).write_text("x\n")
    (tmp_path / ".gitignore").write_text("{*a,a*,?}" * 16 + "[!a]\n", encoding="utf-8")
    monkeypatch.setattr(deadline, "SEARCH_TIMEOUT_S", 0.5)
    engine = begin(env={"CLAUDE_CODE_GLOB_NO_IGNORE": "false"})
    started = time.monotonic()
    answer = handle(engine, pattern="*")
    assert answer["outcome"]["error_name"] == "SearchTimeoutError", answer
    assert time.monotonic() - started < 1.5
