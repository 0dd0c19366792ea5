"""Grep (SPEC.md section 17.3) through the protocol engine, with both engines.

Every behaviour test runs once with the pure-Python engine and once with
``rg`` (GREP-ENGINE-1), selected by ``TOOLSYS_GREP_ENGINE``; the ``rg`` runs
are skipped, with the reason, only where ``rg`` is not installed.
"""

from __future__ import annotations

import json
import os
import random
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from refsupport import Begin, Call, Unchanged, assert_done, assert_refused, content, error_text

from reference import deadline, errors
from reference.abort import AbortSignal
from reference.engine import Engine
from reference.errors import RegexError, SearchTimeoutError
from reference.tool import ToolUseContext
from reference.tools.grep import python_engine, rg_engine
from reference.tools.grep.pattern import compile_pattern
from reference.tools.grep.search import SearchRequest
from reference.tools.grep.tool import ENGINE_ENV, GREP_TOOL, GrepInput, engine_name

HAS_RG = rg_engine.executable() is not None
NO_RG = "no rg beside this Python or on PATH: pip install -e '.[test]' installs ripgrep 14"
needs_rg = pytest.mark.skipif(not HAS_RG, reason=NO_RG)
ENGINES = ["python", pytest.param("rg", marks=[needs_rg, pytest.mark.subprocess])]


@pytest.fixture(params=ENGINES)
def grep_engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test with one Grep engine (GREP-ENGINE-1)."""
    name: str = request.param
    monkeypatch.setenv(ENGINE_ENV, name)
    return name


NO_COUNTS = "No matches found\n\nFound 0 total occurrences across 0 files."  # GREP-COUNT-1


def make(root: Path, files: dict[str, str | bytes], age: int = 1000) -> None:
    """Create files with distinct mtimes in the order given (the last is the newest)."""
    for index, (name, data) in enumerate(files.items()):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data, encoding="utf-8", newline="")
        stamp = 1_700_000_000 - age + index
        os.utime(path, (stamp, stamp))


def grep(call: Call, pattern: str, **options: Any) -> dict[str, Any]:
    """A Grep call; ``i``, ``n``, ``A``, ``B``, ``C`` stand for ``-i`` ... ``-C``."""
    renamed = {(f"-{k}" if k in ("i", "n", "A", "B", "C") else k): v for k, v in options.items()}
    return call("Grep", pattern=pattern, **renamed)


def text(call: Call, pattern: str, **options: Any) -> str:
    response = grep(call, pattern, **options)
    assert_done(response)
    return content(response)


def files_of(call: Call, root: Path, pattern: str, **options: Any) -> list[str]:
    output = assert_done(grep(call, pattern, **options))
    return [os.path.relpath(p, root) for p in output["filenames"]]


def handle(engine: Engine, **tool_input: Any) -> dict[str, Any]:
    response = engine.handle(
        {"seq": 1, "cmd": "call", "tool_use": {"id": "g", "name": "Grep", "input": tool_input}}
    )
    assert "error" not in response, response
    return response


# --- GREP-VALIDATE-1 ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("inp", "code", "name"),
    [
        ({"pattern": "a\x00"}, 1, "InvalidPathError"),
        ({"pattern": "a", "path": "x\x00"}, 1, "InvalidPathError"),
        ({"pattern": "a", "glob": "*\x00"}, 1, "InvalidPathError"),
        ({"pattern": "a\x00", "path": "missing"}, 1, "InvalidPathError"),
        ({"pattern": "a", "path": "\\\\server\\share"}, 2, "UncPathError"),
        ({"pattern": "a", "path": "missing"}, 3, "PathDoesNotExistError"),
    ],
)
def test_checks_run_in_table_order(
    call: Call, unchanged: Unchanged, inp: dict[str, Any], code: int, name: str
) -> None:
    """SPEC: GREP-VALIDATE-1, FILE-PATH-2, FILE-PATH-3, ERR-CODE-1"""
    with unchanged():
        assert_refused(call("Grep", **inp), stage="validate", code=code, name=name)


def test_validation_messages(tmp_path: Path, call: Call) -> None:
    """SPEC: GREP-VALIDATE-1"""
    assert error_text(call("Grep", pattern="\x00")) == (
        "Pattern, path and glob must not contain NUL characters."
    )
    assert error_text(call("Grep", pattern="a", path="nope")) == (
        f"Path does not exist: {tmp_path}/nope. Note: your current working directory is {tmp_path}."
    )


# --- GREP-ENGINE-1 -----------------------------------------------------------------------


def test_engine_selection(monkeypatch: pytest.MonkeyPatch) -> None:
    """SPEC: GREP-ENGINE-1"""
    monkeypatch.setenv(ENGINE_ENV, "python")
    assert engine_name() == "python"
    monkeypatch.setenv(ENGINE_ENV, "bogus")
    with pytest.raises(errors.EngineError):
        engine_name()
    monkeypatch.setattr(rg_engine, "executable", lambda: None)
    for value in ("", "auto"):
        monkeypatch.setenv(ENGINE_ENV, value)
        assert engine_name() == "python"  # no rg on PATH: the Python engine
    monkeypatch.setenv(ENGINE_ENV, "rg")
    with pytest.raises(errors.EngineError):
        engine_name()  # asked for rg, none there: never silently the other engine
    monkeypatch.setattr(rg_engine, "executable", lambda: "/usr/bin/rg")
    for value in ("", "auto", "rg", "RG"):
        monkeypatch.setenv(ENGINE_ENV, value)
        assert engine_name() == "rg"


@pytest.mark.subprocess
def test_rg_is_there_and_is_the_pinned_ripgrep_14() -> None:
    """SPEC: GREP-ENGINE-1, GREP-FILES-1

    Loud, not 71 silent skips: the test extras install ripgrep 14, whose
    --type-list ``grep.file_types`` is generated from.
    """
    rg = rg_engine.executable()
    assert rg is not None, NO_RG
    version = subprocess.run([rg, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.startswith("ripgrep 14."), version.stdout


def test_rg_is_looked_up_beside_the_interpreter_then_on_the_engines_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: GREP-ENGINE-1"""
    monkeypatch.setattr(rg_engine, "_beside_interpreter", lambda: "/venv/bin/rg")
    assert rg_engine.executable() == "/venv/bin/rg"
    monkeypatch.setattr(rg_engine, "_beside_interpreter", lambda: None)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert rg_engine.executable() is None
    fake = tmp_path / "rg"
    fake.write_text("#!/bin/sh\n", encoding="utf-8")
    fake.chmod(0o755)
    assert rg_engine.executable() == str(fake)


CORPUS_WORDS = [
    "foo",
    "Foo",
    "BAR",
    "bar",
    "x1",
    "42",
    "tab\tstop",
    "naïve",
    "ÉCOLE",
    "é",
    "_id",
    "end.",
    "(x)",
    "[y]",
    "a+b",
    "",
    "Straße",
]
DIFFERENTIAL_PATTERNS = [
    "foo",
    "fo+",
    "f.o",
    "^foo",
    "bar$",
    r"\bfoo\b",
    r"\d+",
    r"\w+\s\w+",
    "[A-Z]+",
    "[^a-z ]",
    "(foo|bar)",
    "(?i)foo",
    "ba?r",
    "o{1,2}?",
    r"\s$",
    "^$",
    ".*",
    "a*",
    "(?i)école",
    "[[:upper:]]",
    r"\(x\)",
    "x(?i)F|B",
    "foo.*?bar",
    r"\Bo",
    "(?:ab|cd)*e",
    "a**",
    "(?U)o+",
    "(",
    "a{",
    r"\/",
    "(?=a)",
    r"(a)\1",
    "[z-a]",
]


def run_engine(request: SearchRequest, rg: str | None) -> list[tuple[str, Any]]:
    """One engine's hits, comparable (or the error's name)."""
    try:
        if rg is None:
            hits = python_engine.search(request, AbortSignal())
        else:
            hits = rg_engine.search(request, AbortSignal(), rg)
    except errors.ToolSystemError as exc:
        return [("error", exc.error_name)]
    if request.wants == "lines":
        return sorted((h.path, tuple(h.lines)) for h in hits)
    return sorted((h.path, h.matching_lines if request.wants == "counts" else 0) for h in hits)


@pytest.mark.subprocess
@needs_rg
def test_both_engines_agree_on_a_generated_corpus(tmp_path: Path) -> None:
    """SPEC: GREP-ENGINE-1, GREP-FILES-1, GREP-MATCH-1"""
    rnd = random.Random(20240611)
    rg = rg_engine.executable()
    assert rg is not None
    names = ["a.txt", "b.py", "c.md", ".h.txt", "d/e.py", "d/f.txt", "d/g/h.js", "k.json"]
    for name in names:
        lines = [" ".join(rnd.choices(CORPUS_WORDS, k=rnd.randint(0, 4))) for _ in range(6)]
        newline = rnd.choice(["\n", "\r\n"])
        make(tmp_path, {name: newline.join(lines) + rnd.choice(["", newline])})
    make(tmp_path, {".gitignore": "*.md\n", "d/.ignore": "g/\n", "bin.txt": b"foo\x00"})
    make(tmp_path, {".git/HEAD": "ref: refs/heads/main\n"})  # a repository: .gitignore applies
    disagreements = []
    for pattern in DIFFERENTIAL_PATTERNS:
        for trial in range(4):
            request = SearchRequest(
                pattern=pattern,
                target=str(tmp_path),
                target_is_dir=True,
                top=str(tmp_path),
                globs=(("*.py", "!d"), (), ("d/**",), ())[trial],
                file_type=(None, None, None, "py")[trial],
                ignore_case=trial == 1,
                multiline=trial >= 2,
                before=trial % 2,
                after=trial // 2,
                wants=("lines", "counts", "files", "counts")[trial],
            )
            outcomes = [run_engine(request, None), run_engine(request, rg)]
            if outcomes[0] != outcomes[1]:
                disagreements.append((pattern, trial, outcomes))
    assert disagreements == []


# --- GREP-FILES-1 ------------------------------------------------------------------------


def test_hidden_files_are_searched_and_vcs_directories_never(
    tmp_path: Path, call: Call, grep_engine: str
) -> None:
    """SPEC: GREP-FILES-1"""
    make(
        tmp_path,
        {
            ".env": "hit\n",
            ".hidden/a.txt": "hit\n",
            "b.txt": "hit\n",
            **{f"{vcs}/c.txt": "hit\n" for vcs in (".git", ".svn", ".hg", ".bzr", ".jj", ".sl")},
            "sub/.git/d.txt": "hit\n",
        },
    )
    assert sorted(files_of(call, tmp_path, "hit")) == [".env", ".hidden/a.txt", "b.txt"]


def test_gitignore_applies_inside_a_repository_only(
    tmp_path: Path, call: Call, grep_engine: str
) -> None:
    """SPEC: GREP-FILES-1"""
    make(
        tmp_path,
        {
            ".gitignore": "*.log\nbuild/\n!keep.log\n",
            ".ignore": "ign.txt\n",
            ".rgignore": "rg.txt\n",
            "a.log": "hit\n",
            "keep.log": "hit\n",
            "build/x.txt": "hit\n",
            "ign.txt": "hit\n",
            "rg.txt": "hit\n",
            "sub/.gitignore": "local.txt\n",
            "sub/local.txt": "hit\n",
            "sub/other.txt": "hit\n",
            "top.txt": "hit\n",
        },
    )
    everything = ["a.log", "build/x.txt", "keep.log", "sub/local.txt", "sub/other.txt", "top.txt"]
    assert sorted(files_of(call, tmp_path, "hit")) == everything  # .ignore, .rgignore still apply
    make(tmp_path, {".git/HEAD": "ref: refs/heads/main\n"})
    assert sorted(files_of(call, tmp_path, "hit")) == ["keep.log", "sub/other.txt", "top.txt"]


def test_ignore_file_precedence(tmp_path: Path, call: Call, grep_engine: str) -> None:
    """SPEC: GREP-FILES-1"""
    make(
        tmp_path,
        {
            ".git/HEAD": "ref: refs/heads/main\n",
            ".gitignore": "*.txt\n",
            ".ignore": "!a.txt\n",  # .ignore over .gitignore
            ".rgignore": "b.*\n",
            "sub/.gitignore": "!c.txt\n",  # deeper over shallower
            "a.txt": "hit\n",
            "b.md": "hit\n",
            "sub/c.txt": "hit\n",
            "sub/d.txt": "hit\n",
        },
    )
    assert sorted(files_of(call, tmp_path, "hit")) == ["a.txt", "sub/c.txt"]


def test_ignore_files_of_parents_up_to_root(tmp_path: Path, call: Call, grep_engine: str) -> None:
    """SPEC: GREP-FILES-1"""
    make(tmp_path, {".gitignore": "*.log\n/sub/gen/\n", "sub/a.log": "hit\n", "sub/b.txt": "hit\n"})
    make(tmp_path, {"sub/gen/c.txt": "hit\n", ".git/HEAD": "ref: refs/heads/main\n"})
    response = grep(call, "hit", path="sub")
    assert sorted(os.path.basename(p) for p in assert_done(response)["filenames"]) == ["b.txt"]


def test_symlinks_are_not_followed_but_a_linked_path_is_searched(
    tmp_path: Path, call: Call, grep_engine: str
) -> None:
    """SPEC: GREP-FILES-1"""
    make(tmp_path, {"real/a.txt": "hit\n", "other/b.txt": "hit\n"})
    (tmp_path / "real/link.txt").symlink_to(tmp_path / "real/a.txt")
    (tmp_path / "real/linkdir").symlink_to(tmp_path / "other")
    assert files_of(call, tmp_path, "hit", path="real") == ["real/a.txt"]
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    assert files_of(call, tmp_path, "hit", path="alias") == ["alias/a.txt"]


def test_files_holding_nul_are_skipped(tmp_path: Path, call: Call, grep_engine: str) -> None:
    """SPEC: GREP-FILES-1"""
    late = b"hit\n" * 10 + b"a" * 100_000 + b"\x00\n"
    make(tmp_path, {"early.bin": b"hit\x00\n", "late.txt": late, "text.txt": "hit\n"})
    assert files_of(call, tmp_path, "hit") == ["text.txt"]
    assert text(call, "hit", path="early.bin") == "No files found"
    assert text(call, "hit", path="late.txt", output_mode="count") == NO_COUNTS


def test_a_fifo_is_never_opened(tmp_path: Path, call: Call, grep_engine: str) -> None:
    """SPEC: GREP-FILES-1, FILE-PATH-4"""
    os.mkfifo(tmp_path / "pipe")
    make(tmp_path, {"a.txt": "hit\n"})
    assert files_of(call, tmp_path, "hit") == ["a.txt"]
    assert text(call, "hit", path="pipe") == "No files found"


def test_a_file_path_is_searched_alone_whatever_the_filters(
    tmp_path: Path, call: Call, grep_engine: str
) -> None:
    """SPEC: GREP-FILES-1"""
    make(tmp_path, {".gitignore": "*.txt\n", "a.txt": "hit\n", "b.txt": "hit\n"})
    assert files_of(call, tmp_path, "hit", path="a.txt") == ["a.txt"]
    assert files_of(call, tmp_path, "hit", path="a.txt", glob="*.py", type="py") == ["a.txt"]


@pytest.mark.parametrize(
    ("glob", "expected"),
    [
        ("*.py", ["d/e.py", "x.py"]),
        ("*.py *.md", ["d/e.py", "r.md", "x.py"]),
        ("*.{py,md}", ["d/e.py", "r.md", "x.py"]),
        ("!*.py", ["d/f.txt", "r.md", "y.txt"]),
        ("*.py !d", ["x.py"]),
        ("d/*", ["d/e.py", "d/f.txt"]),
        ("/d/*.py", ["d/e.py"]),
        ("e/*.py", []),
        ("**/e.py", ["d/e.py"]),
        ("[xy].*", ["x.py", "y.txt"]),
        ("*.PY", []),
    ],
)
def test_glob_filter(
    tmp_path: Path, call: Call, grep_engine: str, glob: str, expected: list[str]
) -> None:
    """SPEC: GREP-FILES-1"""
    make(tmp_path, {"x.py": "hit\n", "y.txt": "hit\n", "r.md": "hit\n"})
    make(tmp_path, {"d/e.py": "hit\n", "d/f.txt": "hit\n"})
    assert sorted(files_of(call, tmp_path, "hit", glob=glob)) == expected


def test_a_glob_never_brings_back_an_ignored_file(
    tmp_path: Path, call: Call, grep_engine: str
) -> None:
    """SPEC: GREP-FILES-1"""
    make(
        tmp_path,
        {
            ".git/HEAD": "ref: refs/heads/main\n",
            ".gitignore": "gen.py\nbuild/\n",
            "gen.py": "hit\n",
            "build/b.py": "hit\n",
            "ok.py": "hit\n",
        },
    )
    # the glob decides alone for the paths it matches: gen.py comes back, build/ stays out
    assert sorted(files_of(call, tmp_path, "hit", glob="*.py")) == ["gen.py", "ok.py"]
    assert sorted(files_of(call, tmp_path, "hit", glob="build *.py")) == [
        "build/b.py",
        "gen.py",
        "ok.py",
    ]


def test_an_invalid_glob_is_an_error(call: Call, grep_engine: str) -> None:
    """Reference-defined: SPEC.md names no error for a glob rg refuses (InvalidGlobError)."""
    for glob in ("{a", "[a", "[z-a]", "{a,{b}}"):
        assert_refused(grep(call, "x", glob=glob), stage="call", name="InvalidGlobError")


@pytest.mark.parametrize(
    ("file_type", "expected"),
    [
        ("py", ["a.py"]),
        ("js", ["c.js", "d.jsx"]),
        ("ts", ["e.ts"]),
        ("md", ["f.md"]),
        ("json", ["g.json"]),
        ("yaml", ["h.yml"]),
        ("rust", ["i.rs"]),
        ("go", ["j.go"]),
        ("java", ["k.java"]),
        ("c", ["l.c", "l.h"]),
        ("cpp", ["l.h", "m.cpp"]),
        ("sh", ["n.sh"]),
        ("html", ["o.html"]),
        ("css", ["p.css"]),
    ],
)
def test_type_filter(
    tmp_path: Path, call: Call, grep_engine: str, file_type: str, expected: list[str]
) -> None:
    """SPEC: GREP-FILES-1"""
    names = "a.py b.txt c.js d.jsx e.ts f.md g.json h.yml i.rs j.go k.java l.c l.h m.cpp"
    make(tmp_path, dict.fromkeys([*names.split(), "n.sh", "o.html", "p.css"], "hit\n"))
    assert sorted(files_of(call, tmp_path, "hit", type=file_type)) == expected


def test_a_glob_wins_over_the_type(tmp_path: Path, call: Call, grep_engine: str) -> None:
    """SPEC: GREP-FILES-1"""
    make(tmp_path, {"a.py": "hit\n", "b.md": "hit\n", "c.py": "hit\n"})
    assert files_of(call, tmp_path, "hit", type="py", glob="a*") == ["a.py"]
    assert files_of(call, tmp_path, "hit", type="py", glob="*.md") == ["b.md"]


def test_a_glob_brings_back_a_vcs_directory(tmp_path: Path, call: Call, grep_engine: str) -> None:
    """SPEC: GREP-FILES-1"""
    make(tmp_path, {".git/HEAD": "hit\n", ".svn/a": "hit\n", "ok.txt": "hit\n"})
    assert files_of(call, tmp_path, "hit") == ["ok.txt"]
    assert sorted(files_of(call, tmp_path, "hit", glob="*")) == [".git/HEAD", ".svn/a", "ok.txt"]


def test_an_unknown_type_finds_nothing(tmp_path: Path, call: Call, grep_engine: str) -> None:
    """SPEC: GREP-FILES-1"""
    make(tmp_path, {"a.txt": "x\n"})
    assert text(call, "x", type="nosuchtype") == "No files found"
    assert text(call, "x", type="nosuchtype", output_mode="content") == "No matches found"


# --- GREP-MATCH-1 ------------------------------------------------------------------------


def test_case_and_lines(tmp_path: Path, call: Call, grep_engine: str) -> None:
    """SPEC: GREP-MATCH-1"""
    make(tmp_path, {"a.txt": "Hello\nworld\n"})
    assert text(call, "hello", output_mode="count") == NO_COUNTS
    assert text(call, "hello", output_mode="count", i=True).startswith(f"{tmp_path}/a.txt:1")
    assert text(call, "Hello.world", output_mode="count") == NO_COUNTS
    assert text(call, r"o\s", output_mode="count") == NO_COUNTS  # never the newline


def test_multiline_spans_lines_and_dot_matches_newline(
    tmp_path: Path, call: Call, grep_engine: str
) -> None:
    """SPEC: GREP-MATCH-1, GREP-CONTENT-1, GREP-COUNT-1"""
    make(tmp_path, {"a.txt": "start\nmid\nend\nother\nstart end\n"})
    out = text(call, "start.*?end", output_mode="content", multiline=True)
    path = f"{tmp_path}/a.txt"
    assert out == f"{path}:1:start\n{path}:2:mid\n{path}:3:end\n{path}:5:start end"
    out = text(call, r"mid\nend", output_mode="content", multiline=True)
    assert out == f"{path}:2:mid\n{path}:3:end"
    count = text(call, "start.*?end", output_mode="count", multiline=True)
    assert count.split("\n")[0] == f"{path}:2"  # the lines a match starts on


def test_a_newline_in_a_line_pattern_is_refused(call: Call, grep_engine: str) -> None:
    """SPEC: GREP-MATCH-1, GREP-ERROR-1"""
    assert_refused(grep(call, r"a\nb"), stage="call", name="InvalidPatternError")


# --- output modes ------------------------------------------------------------------------


def test_files_mode_newest_first_ties_by_path(tmp_path: Path, call: Call, grep_engine: str) -> None:
    """SPEC: GREP-FILESMODE-1"""
    make(tmp_path, {"old.txt": "hit\n", "tie_b.txt": "hit\n", "new.txt": "hit\n", "no.txt": "x\n"})
    make(tmp_path, {"tie_a.txt": "hit\n"})
    for name in ("tie_a.txt", "tie_b.txt"):
        os.utime(tmp_path / name, (1_600_000_000, 1_600_000_000))
    os.utime(tmp_path / "old.txt", (1_500_000_000, 1_500_000_000))
    response = grep(call, "hit")
    paths = [f"{tmp_path}/{n}" for n in ("new.txt", "tie_a.txt", "tie_b.txt", "old.txt")]
    assert content(response) == "Found 4 files\n" + "\n".join(paths)
    assert text(call, "hit", path="old.txt") == f"Found 1 file\n{tmp_path}/old.txt"
    assert text(call, "nomatch") == "No files found"


def test_content_mode_format(tmp_path: Path, call: Call, grep_engine: str) -> None:
    """SPEC: GREP-CONTENT-1"""
    make(tmp_path, {"b.txt": "x\nhit two\n", "a.txt": "hit one\ny\nhit again\n"})
    a, b = f"{tmp_path}/a.txt", f"{tmp_path}/b.txt"
    assert text(call, "hit", output_mode="content") == (
        f"{a}:1:hit one\n{a}:3:hit again\n{b}:2:hit two"  # path order, no "--" without context
    )
    assert text(call, "hit", output_mode="content", n=False) == (
        f"{a}:hit one\n{a}:hit again\n{b}:hit two"
    )
    assert text(call, "nomatch", output_mode="content") == "No matches found"


def test_context_lines_and_separators(tmp_path: Path, call: Call, grep_engine: str) -> None:
    """SPEC: GREP-CONTENT-1"""
    make(tmp_path, {"a.txt": "1\nhit\n3\n4\n5\n6\nhit\n8\n", "b.txt": "hit\nz\n"})
    a, b = f"{tmp_path}/a.txt", f"{tmp_path}/b.txt"
    first = [f"{a}-1-1", f"{a}:2:hit", f"{a}-3-3", "--", f"{a}-6-6", f"{a}:7:hit", f"{a}-8-8"]
    assert text(call, "hit", output_mode="content", C=1) == "\n".join(
        [*first, "--", f"{b}:1:hit", f"{b}-2-z"]
    )
    # a file searched alone is shown without its path
    assert text(call, "hit", output_mode="content", path="a.txt", A=1) == "\n".join(
        ["2:hit", "3-3", "--", "7:hit", "8-8"]
    )
    assert text(call, "hit", output_mode="content", path="a.txt", B=2, n=False) == "\n".join(
        ["1", "hit", "--", "5", "6", "hit"]
    )
    # -C, when given (even 0), gives both sides and -A and -B are ignored
    assert text(call, "hit", output_mode="content", path="a.txt", C=1, A=2) == "\n".join(
        ["1-1", "2:hit", "3-3", "--", "6-6", "7:hit", "8-8"]
    )
    assert text(call, "hit", output_mode="content", path="a.txt", C=0, A=1) == "2:hit\n7:hit"
    assert text(call, "hit", output_mode="content", path="a.txt", C=4) == "\n".join(
        ["1-1", "2:hit", *(f"{n}-{n}" for n in (3, 4, 5, 6)), "7:hit", "8-8"]
    )


def test_context_applies_only_in_content_mode(tmp_path: Path, call: Call, grep_engine: str) -> None:
    """SPEC: GREP-CONTENT-1, GREP-COUNT-1"""
    make(tmp_path, {"a.txt": "x\nhit\ny\n"})
    assert text(call, "hit", output_mode="count", C=2) == (
        f"{tmp_path}/a.txt:1\n\nFound 1 total occurrence across 1 file."
    )


def test_count_mode(tmp_path: Path, call: Call, grep_engine: str) -> None:
    """SPEC: GREP-COUNT-1"""
    make(tmp_path, {"b.txt": "hit hit\nhit\n", "a.txt": "hit\n", "c.txt": "none\n"})
    assert text(call, "hit", output_mode="count") == (
        f"{tmp_path}/a.txt:1\n{tmp_path}/b.txt:2\n\nFound 3 total occurrences across 2 files."
    )
    assert text(call, "nothing", output_mode="count") == NO_COUNTS
    assert text(call, "hit", output_mode="count", path="b.txt") == (
        "2\n\nFound 2 total occurrences across 1 file."  # a file alone: N without its path
    )


# --- GREP-PAGE-1 -------------------------------------------------------------------------


def test_pagination_in_files_mode(tmp_path: Path, call: Call, grep_engine: str) -> None:
    """SPEC: GREP-PAGE-1, GREP-FILESMODE-1, GREP-OUTPUT-1"""
    make(tmp_path, {f"f{i}.txt": "hit\n" for i in range(5)})  # f4 is the newest
    paths = [f"{tmp_path}/f{i}.txt" for i in (4, 3, 2, 1, 0)]
    response = grep(call, "hit", head_limit=2, offset=1)
    assert content(response) == f"Found 2 files limit: 2, offset: 1\n{paths[1]}\n{paths[2]}"
    output = assert_done(response)
    assert (output["numFiles"], output["appliedLimit"], output["appliedOffset"]) == (2, 2, 1)
    assert text(call, "hit", head_limit=0) == "Found 5 files\n" + "\n".join(paths)
    assert text(call, "hit", offset=3, head_limit=0) == (
        f"Found 2 files offset: 3\n{paths[3]}\n{paths[4]}"
    )
    assert text(call, "hit", head_limit=5) == "Found 5 files\n" + "\n".join(paths)
    output = assert_done(grep(call, "hit", head_limit=5))
    assert (output["appliedLimit"], output["appliedOffset"]) == (None, None)


def test_the_default_limit_is_250(begin: Begin, call: Call, grep_engine: str) -> None:
    """SPEC: GREP-PAGE-1

    The root is a short directory of its own: 250 lines that each name ``tmp_path``
    would pass the size past which a result is persisted wherever pytest's is long
    (under xdist, say).
    """
    with tempfile.TemporaryDirectory(prefix="g") as short:
        root = Path(os.path.realpath(short))
        make(root, {"a.txt": "hit\n" * 300})
        begin(root=str(root))
        out = text(call, "hit", output_mode="content")
    lines = out.split("\n")
    assert len(lines) == 252
    assert lines[249] == f"{root}/a.txt:250:hit"
    assert lines[-1] == "[Showing results with pagination = limit: 250]"


def test_pagination_of_content_lines_counts_separators(
    tmp_path: Path, call: Call, grep_engine: str
) -> None:
    """SPEC: GREP-PAGE-1, GREP-CONTENT-1"""
    make(tmp_path, {"a.txt": "hit\nx\ny\nhit\n"})
    a = f"{tmp_path}/a.txt"
    response = grep(call, "hit", output_mode="content", A=1, head_limit=2, offset=1)
    assert content(response) == (
        f"{a}-2-x\n--\n\n[Showing results with pagination = limit: 2, offset: 1]"
    )
    assert assert_done(response)["numLines"] == 2


def test_pagination_in_count_mode(tmp_path: Path, call: Call, grep_engine: str) -> None:
    """SPEC: GREP-PAGE-1, GREP-COUNT-1"""
    make(tmp_path, {"a.txt": "hit\n", "b.txt": "hit\nhit\n", "c.txt": "hit\nhit\nhit\n"})
    assert text(call, "hit", output_mode="count", offset=1, head_limit=1) == (
        f"{tmp_path}/b.txt:2\n\nFound 2 total occurrences across 1 file."
        " with pagination = limit: 1, offset: 1"
    )


@pytest.mark.parametrize("mode", ["files_with_matches", "content", "count"])
def test_an_offset_past_the_end(tmp_path: Path, call: Call, grep_engine: str, mode: str) -> None:
    """SPEC: GREP-PAGE-1"""
    make(tmp_path, {"a.txt": "hit\n"})
    response = grep(call, "hit", output_mode=mode, offset=1)
    assert_done(response)
    assert content(response) == "No entries at this offset"
    empty = {"files_with_matches": "No files found", "content": "No matches found"}
    assert text(call, "nothing", output_mode=mode, offset=5) == empty.get(mode, NO_COUNTS)


# --- GREP-ERROR-1 ------------------------------------------------------------------------


@pytest.mark.parametrize("pattern", ["(", "[a", "a{", "{a}", "*a", r"\q", "(?=x)", r"(a)\1", "x)"])
def test_an_invalid_pattern_is_an_error_never_no_files(
    tmp_path: Path, call: Call, grep_engine: str, pattern: str
) -> None:
    """SPEC: GREP-ERROR-1, ERR-CODE-2"""
    make(tmp_path, {"a.txt": "(a[{\n"})
    for mode in ("files_with_matches", "content", "count"):
        response = grep(call, pattern, output_mode=mode)
        assert_refused(response, stage="call", name="InvalidPatternError")
        assert error_text(response).startswith("Invalid regex pattern: ")
        assert len(error_text(response)) > len("Invalid regex pattern: ")


@pytest.mark.parametrize("pattern", ["a**", "a*+", "[[:alpha:]]", "[a[bc]]", r"\x41", "(?x) a"])
def test_what_rust_accepts_python_engine_accepts(
    tmp_path: Path, call: Call, grep_engine: str, pattern: str
) -> None:
    """SPEC: GREP-ENGINE-1"""
    make(tmp_path, {"a.txt": "aAb\n"})
    assert text(call, pattern) == f"Found 1 file\n{tmp_path}/a.txt"


# --- GREP-OUTPUT-1, permissions, persistence ---------------------------------------------


def test_structured_output(tmp_path: Path, call: Call, grep_engine: str) -> None:
    """SPEC: GREP-OUTPUT-1"""
    make(tmp_path, {"a.txt": "hit\n"})
    keys = {"mode", "numFiles", "filenames", "content", "numLines", "numMatches"}
    keys |= {"appliedLimit", "appliedOffset"}
    path = f"{tmp_path}/a.txt"
    assert assert_done(grep(call, "hit")) == {
        **dict.fromkeys(keys),
        "mode": "files_with_matches",
        "numFiles": 1,
        "filenames": [path],
    }
    assert assert_done(grep(call, "hit", output_mode="content")) == {
        **dict.fromkeys(keys),
        "mode": "content",
        "content": f"{path}:1:hit",
        "numLines": 1,
    }
    assert assert_done(grep(call, "hit", output_mode="count")) == {
        **dict.fromkeys(keys),
        "mode": "count",
        "numFiles": 1,
        "content": f"{path}:1",
        "numMatches": 1,
    }


def test_read_deny_rules_filter_every_mode(tmp_path: Path, begin: Begin, grep_engine: str) -> None:
    """SPEC: PERM-FILTER-1"""
    make(tmp_path, {"a.txt": "hit\n", "secret/b.txt": "hit\n", "c.env": "hit\nhit\n"})
    deny = ["Read(./secret/**)", "Read(*.env)"]
    engine = begin(settings={"userSettings": {"permissions": {"deny": deny}}})
    a = f"{tmp_path}/a.txt"
    assert content(handle(engine, pattern="hit")) == f"Found 1 file\n{a}"
    assert content(handle(engine, pattern="hit", output_mode="content")) == f"{a}:1:hit"
    assert content(handle(engine, pattern="hit", output_mode="count")) == (
        f"{a}:1\n\nFound 1 total occurrence across 1 file."
    )
    response = handle(engine, pattern="hit", path="secret/b.txt")
    assert response["outcome"]["stage"] == "permission"  # the path itself: denied outright


@pytest.mark.subprocess
def test_outside_the_working_directories_the_user_is_asked(tmp_path: Path, begin: Begin) -> None:
    """SPEC: PERM-READ-1, TOOL-PATH-1"""
    root, outside = tmp_path / "root", tmp_path / "outside"
    make(outside, {"a.txt": "hit\n"})
    root.mkdir()
    engine = begin(root=str(root), prompt="deny")
    response = handle(engine, pattern="hit", path=str(outside))
    assert response["outcome"]["stage"] == "permission"
    assert response["outcome"]["permission"]["reason"] == "prompt"
    response = handle(engine, pattern="hit")
    assert response["outcome"]["stage"] == "done"
    assert response["outcome"]["permission"]["reason"] == "tool"


def test_a_large_result_is_persisted_above_20000_characters(
    tmp_path: Path, call: Call, session_dir: Path, grep_engine: str
) -> None:
    """SPEC: RES-PERSIST-1, TOOL-PROPS-1"""
    make(tmp_path, {"a.txt": ("hit " + "x" * 96 + "\n") * 240})
    response = grep(call, "hit", output_mode="content")
    assert response["outcome"]["persisted_path"] == f"{session_dir}/tool-results/toolu_0001.txt"
    assert content(response).startswith("<persisted-output>")
    small = grep(call, "hit", output_mode="content", head_limit=10)
    assert small["outcome"]["persisted_path"] is None


def test_tool_properties(ctx: ToolUseContext) -> None:
    """SPEC: TOOL-PROPS-1, TOOL-PATH-1, PERM-RULE-2, PERM-READ-1"""
    inp = GrepInput.model_validate({"pattern": "fo+", "path": "sub"})
    assert GREP_TOOL.is_read_only(inp) is True
    assert GREP_TOOL.is_concurrency_safe(inp) is True
    assert GREP_TOOL.is_destructive(inp) is False
    assert GREP_TOOL.classifier_input(inp) == "fo+"
    assert GREP_TOOL.max_result_size_chars == 20_000
    assert GREP_TOOL.path_rules == "read"
    assert GREP_TOOL.get_path is not None
    assert GREP_TOOL.get_path(inp, ctx) == f"{ctx.cwd}/sub"
    assert GREP_TOOL.get_path(GrepInput(pattern="x"), ctx) == ctx.cwd
    assert GREP_TOOL.check_permissions(inp, ctx).behavior == "allow"


@pytest.mark.subprocess
def test_input_schema_uses_the_dash_names(call: Call) -> None:
    """SPEC: TOOL-SCHEMA-1"""
    assert_refused(
        call("Grep", pattern="x", ignore_case=True),
        stage="input_schema",
        name="InputValidationError",
    )
    assert_refused(
        call("Grep", pattern="x", **{"-A": -1}), stage="input_schema", name="InputValidationError"
    )
    assert_refused(
        call("Grep", pattern="x", output_mode="lines"),
        stage="input_schema",
        name="InputValidationError",
    )
    assert_done(call("Grep", pattern="x", **{"-A": 2.0, "-i": True, "-n": False}))


# --- the rg runner -----------------------------------------------------------------------


def fake_rg(directory: Path, body: str) -> str:
    script = directory / "rg"
    script.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body), encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


@pytest.mark.subprocess
def test_a_slow_rg_is_killed_at_the_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reference-defined: rg runs with a bounded time, then is killed."""
    rg = fake_rg(tmp_path, "import time\ntime.sleep(30)\n")
    monkeypatch.setattr(rg_engine, "TIMEOUT_S", 0.3)
    request = SearchRequest(pattern="x", target=str(tmp_path), target_is_dir=True, top="/")
    with pytest.raises(SearchTimeoutError):  # GREP-TIMEOUT-1
        rg_engine.search(request, AbortSignal(), rg)


def test_the_python_engine_stops_a_backtracking_search_at_its_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: GREP-TIMEOUT-1"""
    make(tmp_path, {"a.txt": "a" * 5_000 + "!\n"})
    monkeypatch.setattr(deadline, "SEARCH_TIMEOUT_S", 0.5)
    request = SearchRequest(pattern="(a|aa)+$", target=str(tmp_path), target_is_dir=True, top="/")
    raised: list[BaseException] = []

    def run() -> None:
        try:
            python_engine.search(request, AbortSignal())
        except BaseException as exc:
            raised.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(30)  # only to detect a hang: re never came back from this one
    assert raised, "the search never ended"
    assert isinstance(raised[0], SearchTimeoutError)


def test_a_grep_past_its_limit_is_a_coded_failure(
    tmp_path: Path, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: GREP-TIMEOUT-1"""
    make(tmp_path, {"a.txt": "x\n"})
    monkeypatch.setenv(ENGINE_ENV, "python")
    monkeypatch.setattr(deadline, "SEARCH_TIMEOUT_S", 0.0)
    answer = call("Grep", pattern="x")
    assert answer["outcome"]["stage"] == "call"
    assert answer["outcome"]["error_name"] == "SearchTimeoutError"


@pytest.mark.subprocess
def test_an_abort_kills_rg(tmp_path: Path) -> None:
    """Reference-defined: an aborted Grep stops rg at once (SCHED-ABORT-1)."""
    rg = fake_rg(tmp_path, "import time\ntime.sleep(30)\n")
    abort = AbortSignal()
    abort.abort("user_interrupt")
    request = SearchRequest(pattern="x", target=str(tmp_path), target_is_dir=True, top="/")
    with pytest.raises(errors.CallAbortedError):
        rg_engine.search(request, abort, rg)


def test_an_aborted_python_search_stops(tmp_path: Path) -> None:
    """Reference-defined: the Python engine checks the abort signal as it walks."""
    make(tmp_path, {"a.txt": "x\n"})
    abort = AbortSignal()
    abort.abort("user_interrupt")
    request = SearchRequest(pattern="x", target=str(tmp_path), target_is_dir=True, top="/")
    with pytest.raises(errors.CallAbortedError):
        python_engine.search(request, abort)


@pytest.mark.subprocess
def test_rg_per_file_errors_are_not_failures(tmp_path: Path) -> None:
    """Reference-defined: rg's status 2 for an unreadable file keeps the other results."""
    rg = fake_rg(
        tmp_path,
        """\
        import json, sys
        print(json.dumps({"type": "match", "data": {"path": {"text": "./a.txt"},
              "lines": {"text": "hit\\n"}, "line_number": 1}}))
        print(json.dumps({"type": "end", "data": {"path": {"text": "./a.txt"},
              "binary_offset": None}}))
        sys.stderr.write("rg: ./b.txt: Permission denied (os error 13)\\n")
        sys.exit(2)
        """,
    )
    request = SearchRequest(pattern="hit", target=str(tmp_path), target_is_dir=True, top="/")
    hits = rg_engine.search(request, AbortSignal(), rg)
    assert [(h.path, h.lines) for h in hits] == [(f"{tmp_path}/a.txt", [(1, "hit", True)])]


def test_rg_json_bytes_fields_are_decoded(tmp_path: Path) -> None:
    """Reference-defined: rg reports non-UTF-8 lines and paths as base64 bytes."""
    stdout = (
        b'{"type":"match","data":{"path":{"bytes":"Li9h/w=="},"lines":{"bytes":"Y2Fm6SBoaXQK"},'
        b'"line_number":3}}\n'
    )
    hits = rg_engine.parse(stdout, "/r")
    assert [(h.path, h.lines) for h in hits] == [("/r/a\udcff", [(3, "caf\ufffd hit", True)])]


# --- the regex translation ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "subject", "matches"),
    [
        ("x(?i)S|E", "e", True),
        ("x(?i)S|E", "xs", True),
        ("x(?i)S|E", "Xs", False),
        ("(?i:a)b", "AB", False),
        ("a(?-i)b", "Ab", False),
        ("[[:digit:]]+", "42", True),
        ("[^[:alpha:]]", "a", False),
        (r"\x{263A}", "\u263a", True),
        (r"\u263A", "\u263a", True),
        (r"\pL+", "é", True),
        (r"\z", "", True),
        ("(?U)a+", "aaa", True),
        ("[]]", "]", True),
        ("[a-]", "-", True),
        (r"[\[\]]", "[", True),
        ("(?x) a b # comment", "ab", True),
        (r"(?x)a\ b", "a b", True),
        ("(?P<name>a)", "a", True),
    ],
)
def test_rust_syntax_translated(pattern: str, subject: str, matches: bool) -> None:
    """SPEC: GREP-ENGINE-1"""
    regex = compile_pattern(pattern, ignore_case=False, multiline=False)
    assert (regex.search(subject) is not None) is matches


def test_ignore_case_scopes_and_lazy_swap() -> None:
    """SPEC: GREP-ENGINE-1, GREP-MATCH-1"""
    regex = compile_pattern("a(?-i:b)c", ignore_case=True, multiline=False)
    assert regex.search("AbC")
    assert not regex.search("ABC")
    match = compile_pattern("(?U)a+", ignore_case=False, multiline=False).search("aaa")
    assert match is not None
    assert match.group() == "a"
    match = compile_pattern("(?U)a+?", ignore_case=False, multiline=False).search("aaa")
    assert match is not None
    assert match.group() == "aaa"


@pytest.mark.parametrize(
    "pattern",
    ["(?<n>a)", "(?P=n)", "a{,3}", "a{2,1}", "(?", "(?z)", r"\p{Greek}", "[a&&b]", "\\"],
)
def test_rust_refusals(pattern: str) -> None:
    """SPEC: GREP-ERROR-1, GREP-ENGINE-1"""
    with pytest.raises(RegexError):
        compile_pattern(pattern, ignore_case=False, multiline=False)


def test_newlines_only_in_multiline_mode() -> None:
    """SPEC: GREP-MATCH-1"""
    for pattern in (r"a\nb", "[\\n]", r"\x0A", "a\nb"):
        with pytest.raises(RegexError, match="not allowed"):
            compile_pattern(pattern, ignore_case=False, multiline=False)
        compile_pattern(pattern, ignore_case=False, multiline=True)
    compile_pattern(r"[^a]\s", ignore_case=False, multiline=False)


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("pattern", "matches", "misses"),
    [
        (r"a\/b", "a/b", "ab"),
        (r"a\ b\!", "a b!", "ab!"),
        (r"\<ab", "x ab", "cab"),
        (r"ab\>", "ab c", "abc"),
        (r"[\/\%]x", "%x", "ax"),
    ],
)
def test_ripgrep_14_escapes_punctuation_and_marks_word_edges(
    pattern: str, matches: str, misses: str
) -> None:
    """SPEC: GREP-ENGINE-1

    As ripgrep 14's regex crate: any escaped ASCII punctuation is itself,
    \\< and \\> are the start and the end of a word.
    """
    compiled = compile_pattern(pattern, ignore_case=False, multiline=False)
    assert compiled.search(matches)
    assert not compiled.search(misses)
    rg = rg_engine.executable()
    if rg is not None:
        for text, found in ((matches, True), (misses, False)):
            done = subprocess.run([rg, "-q", "--", pattern], input=text, text=True, check=False)
            assert (done.returncode == 0) is found, (pattern, text)


def test_a_binary_file_searched_alone_gives_ripgreps_notice(
    tmp_path: Path, call: Call, grep_engine: str
) -> None:
    """SPEC: GREP-FILES-1"""
    make(tmp_path, {"blob.bin": b"hit\x00\n"})
    notice = 'binary file matches (found "\\0" byte around offset 3)'
    assert text(call, "hit", path="blob.bin", output_mode="content") == notice
    assert text(call, "absent", path="blob.bin", output_mode="content") == "No matches found"


# --- the limit on the wall clock (GREP-TIMEOUT-2) ----------------------------------------

CATASTROPHIC_GLOB = "{*a,a*,?}" * 16 + "[!a]"
"""A glob that backtracks for minutes against a name of 40 ``a``, on ``re`` and ``regex`` alike."""

_SEARCH_UNDER_LOAD = """
import json, os, sys, time
args = json.loads(sys.argv[1])
os.sched_setaffinity(0, {args["cpu"]})
from reference.abort import AbortSignal
from reference.deadline import Deadline
from reference.tools.grep import python_engine
from reference.tools.grep.search import SearchRequest
request = SearchRequest(pattern=args["pattern"], target=args["root"], target_is_dir=True,
                        top=args["root"], globs=tuple(args["globs"]))
started = time.monotonic()
try:
    python_engine.search(request, AbortSignal(), Deadline("Grep", args["limit"]))
    error = None
except Exception as exc:
    error = type(exc).__name__
print(json.dumps({"seconds": time.monotonic() - started, "error": error}))
"""


def _search_on_a_busy_cpu(root: Path, pattern: str, globs: list[str], limit: float) -> Any:
    """The Python engine's search in a process sharing one CPU with two busy ones."""
    cpu = min(os.sched_getaffinity(0))
    spin = f"import os\nos.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass\n"
    hogs = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(2)]
    try:
        args = {"cpu": cpu, "root": str(root), "pattern": pattern, "globs": globs, "limit": limit}
        done = subprocess.run(
            [sys.executable, "-c", _SEARCH_UNDER_LOAD, json.dumps(args)],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    return json.loads(done.stdout)


@pytest.mark.subprocess
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity (Linux)")
@pytest.mark.parametrize("case", ["pattern", "glob", "ignore file"])
def test_the_python_engine_answers_at_its_limit_on_the_wall_clock_under_load(
    tmp_path: Path, case: str
) -> None:
    """SPEC: GREP-TIMEOUT-2, GREP-TIMEOUT-1

    ``regex``'s own timeout counts processor time: with a third of a CPU a
    match given 1 s ran 3 s. A backtracking pattern, ``glob`` or ignore-file
    line is answered with SearchTimeoutError within a second of the limit.
    """
    make(tmp_path, {"a" * 40: "a" * 5_000 + "!\n"})
    pattern, globs = ("(a|aa)+$", []) if case == "pattern" else ("x", [])
    if case == "glob":
        globs = [CATASTROPHIC_GLOB]
    if case == "ignore file":
        (tmp_path / ".ignore").write_text(CATASTROPHIC_GLOB + "\n")
    limit = 1.0
    answer = _search_on_a_busy_cpu(tmp_path, pattern, globs, limit)
    assert answer["error"] == "SearchTimeoutError", answer
    assert limit <= answer["seconds"] < limit + 1.0, answer


@pytest.mark.parametrize("where", ["glob", "ignore file"])
def test_a_backtracking_glob_is_stopped_at_the_limit(
    tmp_path: Path, call: Call, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """SPEC: GREP-TIMEOUT-2, GREP-FILES-1

    A glob is matched within the search's limit too.
    """
    make(tmp_path, {"a" * 40: "x\n"})
    monkeypatch.setenv(ENGINE_ENV, "python")
    monkeypatch.setattr(deadline, "SEARCH_TIMEOUT_S", 0.5)
    options: dict[str, Any] = {"glob": CATASTROPHIC_GLOB} if where == "glob" else {}
    if where == "ignore file":
        (tmp_path / ".ignore").write_text(CATASTROPHIC_GLOB + "\n")
    started = time.monotonic()
    answer = grep(call, "x", **options)
    assert answer["outcome"]["error_name"] == "SearchTimeoutError", answer
    assert time.monotonic() - started < 1.5
