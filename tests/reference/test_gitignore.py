"""Ignore files with gitignore semantics (reference/gitignore.py), used by Glob and Grep."""

from __future__ import annotations

from pathlib import Path

import pytest

from reference.deadline import Deadline
from reference.errors import GlobSyntaxError, SearchTimeoutError
from reference.gitignore import (
    GREP_IGNORE_FILES,
    IgnoreFiles,
    compile_line,
    glob_regex,
    last_match,
    parse_ignore_text,
)


@pytest.mark.parametrize(
    ("line", "path", "is_dir", "matches"),
    [
        ("*.log", "a.log", False, True),
        ("*.log", "d/e/a.log", False, True),
        ("/a.log", "d/a.log", False, False),
        ("/a.log", "a.log", False, True),
        ("d/*.py", "d/x.py", False, True),
        ("d/*.py", "e/d/x.py", False, False),
        ("**/d/*.py", "e/d/x.py", False, True),
        ("d/**", "d/x/y", False, True),
        ("d/**", "d", True, False),
        ("a/**/b", "a/b", False, True),
        ("a/**/b", "a/x/y/b", False, True),
        ("build/", "build", True, True),
        ("build/", "build", False, False),
        ("[!a]*.txt", "b.txt", False, True),
        ("[!a]*.txt", "a.txt", False, False),
        ("*.{py,md}", "x.md", False, True),
        ("\\#x", "#x", False, True),
        ("trailing  ", "trailing", False, True),
        ("escaped\\ ", "escaped ", False, True),
        ("a?c", "a/c", False, False),
    ],
)
def test_patterns(line: str, path: str, is_dir: bool, matches: bool) -> None:
    """SPEC: GLOB-IGNORE-1, GREP-FILES-1"""
    pattern = compile_line(line)
    assert pattern is not None
    assert pattern.matches(path, is_dir) is matches


@pytest.mark.parametrize(
    ("line", "timed"),
    [
        ("*.log", False),
        ("build/", False),
        ("/dist", False),
        ("**/tmp/*", False),
        ("cache*", False),
        ("*a*", True),
        ("src/*a*b*", True),
        ("{*a,a*,?}{*a,a*,?}", True),
        ("{*.c,*.h}", True),  # every alternative's repeats count
        ("{a,b}.c", False),
    ],
)
def test_only_patterns_that_can_backtrack_far_are_matched_with_a_timeout(
    line: str, timed: bool
) -> None:
    """SPEC: GREP-TIMEOUT-2, GLOB-TIMEOUT-2

    More than two unbounded repeats (the any-depth prefix of a name counts)
    and the match gets a timeout; within a deadline every match is checked
    against it, whether timed or not.
    """
    pattern = compile_line(line)
    assert pattern is not None
    assert pattern.timed is timed
    expired = Deadline("Grep", 0.0)
    with pytest.raises(SearchTimeoutError):
        last_match([pattern], "src/a/b.log", False, expired)


def test_comments_blanks_and_negation() -> None:
    """SPEC: GREP-FILES-1"""
    assert compile_line("# comment") is None
    assert compile_line("") is None
    assert compile_line("/") is None
    negated = compile_line("!keep.log")
    assert negated is not None
    assert negated.negated


def test_malformed_lines_are_skipped_but_strict_globs_raise() -> None:
    """Reference-defined: an ignore file's bad line is skipped; a bad --glob is an error."""
    assert len(parse_ignore_text("[a\n{b\nok\n")) == 1
    for glob in ("[a", "{a", "[z-a]", "{a,{b}}", "a\\"):
        with pytest.raises(GlobSyntaxError):
            glob_regex(glob)


def test_deeper_files_and_earlier_kinds_take_precedence(tmp_path: Path) -> None:
    """SPEC: GREP-FILES-1"""
    (tmp_path / "sub").mkdir()
    (tmp_path / ".gitignore").write_text("*.txt\n", encoding="utf-8")
    (tmp_path / "sub/.gitignore").write_text("!keep.txt\n", encoding="utf-8")
    (tmp_path / ".ignore").write_text("!top.txt\n", encoding="utf-8")
    ignores = IgnoreFiles(GREP_IGNORE_FILES, top=str(tmp_path))
    root = str(tmp_path)
    assert ignores.is_ignored_below(root, f"{root}/sub/other.txt")
    assert not ignores.is_ignored_below(root, f"{root}/sub/keep.txt")
    assert not ignores.is_ignored_below(root, f"{root}/top.txt")
    assert ignores.is_ignored_below(root, f"{root}/other.txt")


def test_an_ignored_directory_hides_everything_below(tmp_path: Path) -> None:
    """SPEC: GLOB-IGNORE-1, GREP-FILES-1"""
    (tmp_path / ".gitignore").write_text("build/\n!build/keep.txt\n", encoding="utf-8")
    ignores = IgnoreFiles(GREP_IGNORE_FILES, top=str(tmp_path))
    assert ignores.is_ignored_below(str(tmp_path), f"{tmp_path}/build/keep.txt")


def test_parents_are_read_up_to_top_only(tmp_path: Path) -> None:
    """SPEC: GLOB-IGNORE-1, GREP-FILES-1"""
    top = tmp_path / "top"
    (top / "a/b").mkdir(parents=True)
    (tmp_path / ".gitignore").write_text("*.x\n", encoding="utf-8")
    (top / ".gitignore").write_text("*.y\n", encoding="utf-8")
    ignores = IgnoreFiles((".gitignore",), top=str(top))
    search = str(top / "a/b")
    assert not ignores.is_ignored_below(search, f"{search}/f.x")
    assert ignores.is_ignored_below(search, f"{search}/f.y")
