"""Permission rules and path-rule matching, as far as the file tools' deny checks use them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from refsupport import Begin, Call, Unchanged, assert_done, assert_refused

from reference.permissions import rules
from reference.permissions.directories import is_inside_working_directories
from reference.permissions.rules import (
    PathForms,
    Rule,
    anchored_pattern,
    glob_to_regex,
    parse_rule,
    path_candidates,
    path_matches,
    path_rule_matches,
    resolve_path,
)
from reference.session import Session

ROOT, CWD, HOME = "/repo", "/repo/pkg", "/home/u"


@pytest.mark.parametrize(
    ("text", "tool", "specifier"),
    [
        ("Read", "Read", None),
        ("  Read  ", "Read", None),
        ("Read(*)", "Read", None),
        ("Edit(src/**)", "Edit", "src/**"),
        ("Bash(npm run *)", "Bash", "npm run *"),
        ("mcp__srv__tool", "mcp__srv__tool", None),
    ],
)
def test_rule_text_is_a_tool_with_an_optional_specifier(
    text: str, tool: str, specifier: str | None
) -> None:
    """SPEC: PERM-RULE-1"""
    rule = parse_rule(text, behavior="deny", source="userSettings")
    assert rule == Rule(tool=tool, specifier=specifier, behavior="deny", source="userSettings")


@pytest.mark.parametrize("text", ["", "Read(", "Re ad", "(x)", "Read(x", "Read()", "Read(a))"])
def test_text_that_is_not_a_rule_is_ignored(text: str) -> None:
    """SPEC: PERM-RULE-1"""
    assert parse_rule(text, behavior="deny", source="s") is None


def test_rule_text_round_trips() -> None:
    """SPEC: PERM-RULE-1"""
    assert Rule(tool="Read", specifier=None, behavior="deny", source="s").text == "Read"
    assert Rule(tool="Read", specifier="*.env", behavior="deny", source="s").text == "Read(*.env)"


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("/a/*.py", "/a/x.py", True),
        ("/a/*.py", "/a/b/x.py", False),
        ("/a/**/x.py", "/a/x.py", True),
        ("/a/**/x.py", "/a/b/c/x.py", True),
        ("/a/**", "/a/b/c", True),
        ("/a/?.txt", "/a/b.txt", True),
        ("/a/?.txt", "/a/bc.txt", False),
        ("/a/[!b].txt", "/a/c.txt", True),
        ("/a/[!b].txt", "/a/b.txt", False),
        ("/a/[bc].txt", "/a/c.txt", True),
        ("/a/x.py", "/a/x.pyc", False),
        ("/a/x.py", "/A/x.py", False),
    ],
)
def test_glob_syntax_is_gitignore_style(pattern: str, path: str, matches: bool) -> None:
    """SPEC: PERM-PATH-2"""
    assert (glob_to_regex(pattern).match(path) is not None) is matches


@pytest.mark.parametrize(
    ("specifier", "pattern"),
    [
        ("//etc/passwd", "/etc/passwd"),
        ("~/.ssh/id_rsa", f"{HOME}/.ssh/id_rsa"),
        ("/src/*.py", f"{ROOT}/src/*.py"),
        ("./local.txt", f"{CWD}/local.txt"),
        ("dir/x.txt", f"{CWD}/dir/x.txt"),
        ("secret.txt", f"{CWD}/**/secret.txt"),
        ("*.env", f"{CWD}/**/*.env"),
    ],
)
def test_specifier_anchors(specifier: str, pattern: str) -> None:
    """SPEC: PERM-PATH-1, PERM-PATH-2"""
    assert anchored_pattern(specifier, root=ROOT, cwd=CWD, home=HOME) == pattern


@pytest.mark.parametrize(
    ("specifier", "path", "matches"),
    [
        ("secret.txt", f"{CWD}/secret.txt", True),
        ("secret.txt", f"{CWD}/a/b/secret.txt", True),
        ("secret.txt", f"{ROOT}/secret.txt", False),  # bare names match below cwd only
        ("./secret.txt", f"{CWD}/a/secret.txt", False),
        ("/build", f"{ROOT}/build/out/x.o", True),  # a matching directory covers its contents
        ("/build/", f"{ROOT}/build/out/x.o", True),
        ("build", f"{CWD}/sub/build/x.o", True),
        ("/src/*.py", f"{ROOT}/src/a.py", True),
        ("/src/*.py", f"{ROOT}/src/sub/a.py", False),
        ("//etc/**", "/etc/ssl/cert.pem", True),
        ("~/.aws/**", f"{HOME}/.aws/credentials", True),
        ("~/.aws/**", "/other/.aws/credentials", False),
        ("*.env", f"{CWD}/deep/er/.prod.env", True),
    ],
)
def test_path_matches_the_specifier_or_a_directory_above_it(
    specifier: str, path: str, matches: bool
) -> None:
    """SPEC: PERM-PATH-1, PERM-PATH-2"""
    assert path_matches(specifier, path, root=ROOT, cwd=CWD, home=HOME) is matches


def test_path_candidates_add_the_symlink_target(tmp_path: Path) -> None:
    """SPEC: PERM-PATH-3"""
    (tmp_path / "real.txt").write_text("x")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    assert path_candidates(str(tmp_path / "real.txt")) == (str(tmp_path / "real.txt"),)
    assert path_candidates(str(tmp_path / "link.txt")) == (
        str(tmp_path / "link.txt"),
        str(tmp_path / "real.txt"),
    )


# --- the rules as the file tools' validate_input applies them ---------------------------


def deny(begin: Begin, *rules: str, source: str = "userSettings") -> None:
    begin(settings={source: {"permissions": {"deny": list(rules)}}})


def test_rule_with_empty_parentheses_is_ignored(tmp_path: Path, begin: Begin, call: Call) -> None:
    """SPEC: PERM-RULE-1, READ-VALIDATE-1"""
    deny(begin, "Read()")
    (tmp_path / "a.txt").write_text("x\n")
    assert_done(call("Read", file_path=str(tmp_path / "a.txt")))


def test_deny_name_slash_double_star_matches_that_directory_at_any_depth(
    tmp_path: Path, begin: Begin, call: Call
) -> None:
    """SPEC: PERM-PATH-2, READ-VALIDATE-1"""
    deny(begin, "Read(secrets/**)")
    (tmp_path / "app" / "secrets").mkdir(parents=True)
    (tmp_path / "app" / "secrets" / "key.txt").write_text("k\n")
    response = call("Read", file_path=str(tmp_path / "app" / "secrets" / "key.txt"))
    assert_refused(response, stage="validate", code=3, name="ReadDeniedError")


def test_new_file_is_matched_through_its_resolved_parent(
    tmp_path: Path, begin: Begin, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: PERM-PATH-3, WRITE-VALIDATE-1"""
    deny(begin, "Edit(/private/**)")
    (tmp_path / "private").mkdir()
    (tmp_path / "door").symlink_to(tmp_path / "private")
    with unchanged():
        response = call("Write", file_path=str(tmp_path / "door" / "new.txt"), content="x")
    assert_refused(response, stage="validate", code=1, name="WriteDeniedError")


def test_edit_deny_rule_does_not_stop_a_read(tmp_path: Path, begin: Begin, call: Call) -> None:
    """SPEC: PERM-RULE-2, READ-VALIDATE-1"""
    deny(begin, "Edit(a.txt)")
    (tmp_path / "a.txt").write_text("x\n")
    assert_done(call("Read", file_path=str(tmp_path / "a.txt")))


def test_rule_with_a_specifier_on_write_never_matches(
    tmp_path: Path, begin: Begin, call: Call
) -> None:
    """SPEC: PERM-RULE-2, WRITE-VALIDATE-1"""
    deny(begin, "Write(a.txt)", "Write(*)x")
    assert_done(call("Write", file_path=str(tmp_path / "a.txt"), content="x"))
    assert (tmp_path / "a.txt").read_bytes() == b"x"


def test_deny_rules_of_every_source_are_combined(tmp_path: Path, begin: Begin, call: Call) -> None:
    """SPEC: PERM-SOURCE-1, READ-VALIDATE-1"""
    begin(
        settings={
            "policySettings": {"permissions": {"deny": ["Read(a.txt)"]}},
            "session": {"permissions": {"deny": ["Read(b.txt)"]}},
        }
    )
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text("x\n")
        response = call("Read", file_path=str(tmp_path / name))
        assert_refused(response, stage="validate", code=3, name="ReadDeniedError")


def test_path_rules_ignore_case(tmp_path: Path, begin: Begin, call: Call) -> None:
    """SPEC: PERM-PATH-2"""
    deny(begin, "Read(SECRET.txt)")
    (tmp_path / "secret.txt").write_text("x\n")
    response = call("Read", file_path=str(tmp_path / "secret.txt"))
    assert_refused(response, stage="validate", code=3, name="ReadDeniedError")


def _link_tree(tmp_path: Path) -> dict[str, str]:
    """Paths of every kind resolve_path meets: links, chains, dangling, missing, odd files."""
    real = tmp_path / "real"
    (real / "sub").mkdir(parents=True)
    (real / "sub" / "f.txt").write_text("x")
    (tmp_path / "link").symlink_to(real)
    (tmp_path / "chain").symlink_to(tmp_path / "link")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere" / "t.txt")
    (tmp_path / "relative").symlink_to("real/sub")
    os.mkfifo(tmp_path / "fifo")
    return {
        "plain file": str(real / "sub" / "f.txt"),
        "through a link": str(tmp_path / "link" / "sub" / "f.txt"),
        "through a chain": str(tmp_path / "chain" / "sub" / "f.txt"),
        "relative link": str(tmp_path / "relative" / "f.txt"),
        "dot-dot after a link": str(tmp_path / "relative" / ".." / "sub" / "f.txt"),
        "a directory": str(tmp_path / "link" / "sub"),
        "dangling link": str(tmp_path / "dangling"),
        "missing under a link": str(tmp_path / "link" / "new" / "n.txt"),
        "a file as a directory": str(real / "sub" / "f.txt" / "x"),
        "a FIFO (never opened for reading)": str(tmp_path / "fifo"),
        "a device": "/dev/null",
        "the root": "/",
    }


def test_resolve_path_gives_exactly_what_realpath_gives(tmp_path: Path) -> None:
    """SPEC: PERM-PATH-3"""
    for what, path in _link_tree(tmp_path).items():
        assert resolve_path(path) == os.path.realpath(path), what


def test_resolve_path_falls_back_for_a_name_with_a_nul() -> None:
    """SPEC: PERM-PATH-3"""
    with pytest.raises(ValueError, match="null"):
        os.path.realpath("/tmp/a\x00b")
    with pytest.raises(ValueError, match="null"):
        resolve_path("/tmp/a\x00b")


LONE = "\ud800"
"""A lone surrogate: no file system name can hold it (surrogateescape maps only U+DC80-U+DCFF)."""


@pytest.mark.parametrize(
    "written",
    [
        "{t}/real/" + LONE,
        "{t}/link/" + LONE + "/../sub/f.txt",
        "{t}/link/a" + LONE + "b/c/../../../chain/sub",
        "{t}/dangling/" + LONE,
        "{t}/chain/sub/f.txt/" + LONE + "/.",
        "//" + LONE + "//x/",
        LONE + "/../link/sub",
    ],
)
def test_an_unnameable_path_resolves_as_a_missing_one_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, written: str
) -> None:
    """SPEC: PERM-PATH-5, PERM-PATH-3

    The oracle: ``realpath`` of the same path with the surrogate replaced by
    a name that exists nowhere.
    """
    _link_tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    path = written.replace("{t}", str(tmp_path))
    with pytest.raises(UnicodeEncodeError):
        os.path.realpath(path)
    expected = os.path.realpath(path.replace(LONE, "\x01")).replace("\x01", LONE)
    assert resolve_path(path) == expected


def test_a_read_deny_rule_judges_a_bash_command_with_a_lone_surrogate(
    tmp_path: Path, begin: Begin, call: Call
) -> None:
    """SPEC: PERM-PATH-5, BASH-PERM-1

    Each call is answered by the pipeline (no engine fault); a path that
    reaches the denied directory through a link and a ``..`` past the
    unnameable name is still denied.
    """
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "k").write_text("s3cret\n")
    (tmp_path / "link").symlink_to(tmp_path / "secret")
    begin(settings={"userSettings": {"permissions": {"deny": ["Read(/secret/**)"]}}}, prompt="deny")
    denied = call("Bash", command=f"cat link/{LONE}/../k")
    assert denied["outcome"]["stage"] == "permission", denied
    assert denied["outcome"]["error_name"] == "PermissionDeniedError"
    for command in (
        f"cat /secret/{LONE}x",
        f"ls -R {LONE}",
        f"grep -r a {LONE}/..",
        f"cat < {LONE}",
    ):
        answer = call("Bash", command=command)
        assert answer["outcome"]["stage"] in ("permission", "call", "done"), answer
        assert "s3cret" not in str(answer["tool_result"]["content"])


def test_path_forms_resolve_once_and_only_when_needed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: PERM-PATH-3"""
    calls: list[str] = []

    def counting(path: str) -> str:
        calls.append(path)
        return os.path.realpath(path)

    monkeypatch.setattr(rules, "resolve_path", counting)
    target = str(tmp_path / "link" / "sub" / "f.txt")
    _link_tree(tmp_path)
    forms = PathForms(target, str(tmp_path), str(tmp_path), str(tmp_path))
    # a deny matching as written needs no resolution at all
    assert path_rule_matches("**/f.txt", forms, behavior="deny")
    assert calls == []
    # rules that need the resolved form share one resolution of the four paths
    assert path_rule_matches("real/**", forms, behavior="deny")
    assert not path_rule_matches("other/**", forms, behavior="deny")
    assert not path_rule_matches("*.md", forms, behavior="ask")
    assert len(calls) == 4


def test_a_working_directory_is_resolved_when_it_is_a_link(tmp_path: Path) -> None:
    """SPEC: PERM-DIRS-1"""
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "f.txt").write_text("x")
    (tmp_path / "wd").symlink_to(tmp_path / "real")
    (tmp_path / "elsewhere").mkdir()
    session = Session(
        root=str(tmp_path / "wd"),
        cwd=str(tmp_path / "wd"),
        home=str(tmp_path),
        session_dir=str(tmp_path / "session"),
    )
    inside = str(tmp_path / "wd" / "f.txt")
    assert is_inside_working_directories(inside, session)
    (tmp_path / "wd").unlink()  # relinked mid-session: counts as it is now
    (tmp_path / "wd").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "elsewhere" / "f.txt").symlink_to(tmp_path / "real" / "f.txt")
    assert not is_inside_working_directories(inside, session)
