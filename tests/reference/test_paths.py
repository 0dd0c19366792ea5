"""Path expansion and the shared path checks (SPEC.md section 8, READ-* helpers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reference import paths

CWD = "/work/proj"
HOME = "/home/user"


@pytest.mark.parametrize(
    ("raw", "expanded"),
    [
        ("~", HOME),
        ("~/", HOME),
        ("~/notes/a.txt", f"{HOME}/notes/a.txt"),
        ("a.txt", f"{CWD}/a.txt"),
        ("src/../lib/./x.py", f"{CWD}/lib/x.py"),
        ("../up.txt", "/work/up.txt"),
        ("../../../../x", "/x"),
        ("/abs/path.txt", "/abs/path.txt"),
        ("/a//b///c", "/a/b/c"),
        ("//a/b", "/a/b"),
        ("///a", "/a"),
        ("/a/b/", "/a/b"),
        ("/a/./b/../c", "/a/c"),
        (".", CWD),
        ("dir/", f"{CWD}/dir"),
    ],
)
def test_path_is_expanded_joined_and_normalized_lexically(raw: str, expanded: str) -> None:
    """SPEC: FILE-PATH-1"""
    assert paths.expand_path(raw, cwd=CWD, home=HOME) == expanded


def test_symlinks_are_not_resolved(tmp_path: Path) -> None:
    """SPEC: FILE-PATH-1"""
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    expanded = paths.expand_path("link/../link/x.txt", cwd=str(tmp_path), home=HOME)
    assert expanded == f"{tmp_path}/link/x.txt"


@pytest.mark.parametrize(
    ("raw", "nul"), [("a\x00b", True), ("\x00", True), ("a/b", False), ("", False)]
)
def test_nul_is_detected_anywhere_in_the_path(raw: str, nul: bool) -> None:
    """SPEC: FILE-PATH-2"""
    assert paths.has_nul(raw) is nul


@pytest.mark.parametrize(
    ("raw", "unc"),
    [
        ("\\\\server\\share\\f.txt", True),
        ("\\\\?\\C:\\x", True),
        ("\\single\\backslash", False),
        ("//server/share", False),
        ("a\\\\b", False),
    ],
)
def test_unc_path_starts_with_two_backslashes(raw: str, unc: bool) -> None:
    """SPEC: FILE-PATH-3"""
    assert paths.is_unc(raw) is unc


def test_blocked_device_paths_are_the_spec_list() -> None:
    """SPEC: READ-DEVICE-1"""
    assert {
        "/dev/zero",
        "/dev/random",
        "/dev/urandom",
        "/dev/full",
        "/dev/stdin",
        "/dev/tty",
        "/dev/console",
        "/dev/fd/0",
        "/dev/fd/1",
        "/dev/fd/2",
    } == paths.BLOCKED_DEVICE_PATHS
    assert "/dev/null" not in paths.BLOCKED_DEVICE_PATHS


@pytest.mark.parametrize(
    ("raw", "twin"),
    [
        ("/s/Shot 10.00.00 AM.png", "/s/Shot 10.00.00\u202fAM.png"),
        ("/s/Shot 10.00.00\u202fPM.png", "/s/Shot 10.00.00 PM.png"),
        ("/s/Shot 9.41.07 PM.txt", "/s/Shot 9.41.07\u202fPM.txt"),
        ("/s/plain name.txt", None),
        ("/s/10.00.00AM.png", None),
        ("/s/am pm lower.png", None),
    ],
)
def test_thin_space_twin_swaps_the_space_before_am_or_pm(raw: str, twin: str | None) -> None:
    """SPEC: READ-THINSPACE-1"""
    assert paths.thin_space_alternative(raw) == twin


def test_similar_name_prefers_a_case_variant_over_another_extension(tmp_path: Path) -> None:
    """SPEC: READ-SUGGEST-1"""
    for name in ("Report.a", "report.md"):  # "Report.a" sorts first but is only a stem match
        (tmp_path / name).write_text("x")
    assert paths.similar_name(str(tmp_path / "Report.md")) == str(tmp_path / "report.md")


def test_similar_name_takes_the_first_case_variant_in_sorted_order(tmp_path: Path) -> None:
    """SPEC: READ-SUGGEST-1"""
    for name in ("nOTES.txt", "NOTES.txt", "Notes.txt"):
        (tmp_path / name).write_text("x")
    assert paths.similar_name(str(tmp_path / "notes.txt")) == str(tmp_path / "NOTES.txt")


def test_similar_name_takes_the_first_other_extension_in_sorted_order(tmp_path: Path) -> None:
    """SPEC: READ-SUGGEST-1"""
    for name in ("config.yml", "config.json", "other.yaml"):
        (tmp_path / name).write_text("x")
    assert paths.similar_name(str(tmp_path / "config.yaml")) == str(tmp_path / "config.json")


def test_similar_name_is_none_without_a_candidate_or_a_directory(tmp_path: Path) -> None:
    """SPEC: READ-SUGGEST-1"""
    (tmp_path / "unrelated.txt").write_text("x")
    assert paths.similar_name(str(tmp_path / "notes.txt")) is None
    assert paths.similar_name(str(tmp_path / "no-dir" / "notes.txt")) is None


def test_missing_file_message_names_the_cwd_and_the_suggestion(tmp_path: Path) -> None:
    """SPEC: READ-MISSING-1, EDIT-SIMILAR-1"""
    (tmp_path / "Notes.txt").write_text("x")
    assert paths.file_does_not_exist_message(str(tmp_path / "gone.txt"), "/cwd") == (
        "File does not exist. Note: your current working directory is /cwd."
    )
    message = paths.file_does_not_exist_message(str(tmp_path / "notes.txt"), "/cwd")
    assert message.startswith(
        "File does not exist. Note: your current working directory is /cwd. Did you mean "
    )
    assert message.endswith("Notes.txt?")
