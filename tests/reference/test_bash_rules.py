"""Bash command rules as pure functions over a command string (PERM-BASH-*, BASH-READONLY-1)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reference.permissions import bash_reach
from reference.permissions.bash_reach import ReadGuard
from reference.permissions.bash_rules import (
    Redirect,
    Word,
    allow_rule_matches,
    deny_rule_matches,
    edits_files,
    first_allowing,
    has_substitution,
    is_read_only_command,
    is_read_only_part,
    names_denied_path,
    specifier_matches,
    split_command,
    strip_assignments,
    tokens,
    writes_file,
)
from reference.permissions.session_rules import read_guard
from reference.session import Session
from reference.settings import Settings
from reference.tool import ToolUseContext


def never(_part: str) -> bool:
    return False


@pytest.mark.parametrize(
    ("command", "parts"),
    [
        ("ls", ("ls",)),
        ("  ls -la  ", ("ls -la",)),
        ("a && b", ("a", "b")),
        ("a || b", ("a", "b")),
        ("a; b;c", ("a", "b", "c")),
        ("a | b", ("a", "b")),
        ("a |& b", ("a", "b")),
        ("a & b", ("a", "b")),
        ("a\nb", ("a", "b")),
        ("a&&b||c|d;e&f", ("a", "b", "c", "d", "e", "f")),
        ("a ;; ; b", ("a", "b")),
        ("", ()),
        (" ; && ", ()),
    ],
)
def test_commands_split_at_every_operator(command: str, parts: tuple[str, ...]) -> None:
    """SPEC: PERM-BASH-2"""
    assert split_command(command) == parts


@pytest.mark.parametrize(
    ("command", "parts"),
    [
        ("make 2>&1 | tee log", ("make 2>&1", "tee log")),
        ("make &>/dev/null && ls", ("make &>/dev/null", "ls")),
        ("make &>> log", ("make &>> log",)),
        ("make >&2", ("make >&2",)),
        ("read x <&3", ("read x <&3",)),
        ("echo x >| f", ("echo x >| f",)),
    ],
)
def test_ampersand_and_bar_of_a_redirection_do_not_split(
    command: str, parts: tuple[str, ...]
) -> None:
    """SPEC: PERM-BASH-2"""
    assert split_command(command) == parts


@pytest.mark.parametrize(
    ("command", "parts"),
    [
        ("echo 'a && b'", ("echo 'a && b'",)),
        ('echo "a; b | c"', ('echo "a; b | c"',)),
        ('echo "it\'s" ; x', ('echo "it\'s"', "x")),
        ("echo 'say \"hi\"; x'", ("echo 'say \"hi\"; x'",)),
        ('echo "a \\" ; b"', ('echo "a \\" ; b"',)),
        ("echo a\\;b", ("echo a\\;b",)),
        ("echo a\\&b", ("echo a\\&b",)),
        ("make \\\n  all", ("make \\\n  all",)),
        ("echo \\>& rm x", ("echo \\>", "rm x")),
        ("echo '\n' ; b", ("echo '\n'", "b")),
    ],
)
def test_operators_inside_quotes_or_escaped_do_not_split(
    command: str, parts: tuple[str, ...]
) -> None:
    """SPEC: PERM-BASH-2"""
    assert split_command(command) == parts


@pytest.mark.parametrize("command", ["echo 'x", 'echo "x', "a && 'b", 'echo "a\\"'])
def test_unbalanced_quotes_cannot_be_split(command: str) -> None:
    """SPEC: PERM-BASH-2"""
    assert split_command(command) is None


@pytest.mark.parametrize(
    ("part", "stripped"),
    [
        ("FOO=1 rm x", "rm x"),
        ("FOO=1 BAR=two rm x", "rm x"),
        ('FOO="a b" rm x', "rm x"),
        ("FOO='a;b' rm x", "rm x"),
        ("PATH+=:/x rm", "rm"),
        ("rm FOO=1", "rm FOO=1"),
        ("FOO=1", ""),
        ('"FOO"=1 rm', '"FOO"=1 rm'),
        ("1X=2 rm", "1X=2 rm"),
    ],
)
def test_leading_assignments_are_stripped(part: str, stripped: str) -> None:
    """SPEC: PERM-BASH-2"""
    assert strip_assignments(part) == stripped


def test_tokens_separate_words_and_redirections() -> None:
    """Reference-defined: the lexer behind PERM-BASH-3 and BASH-READONLY-1."""
    assert tokens("git diff 2>&1 >/dev/null <in 'a b'") == (
        Word(0, "git", "git"),
        Word(4, "diff", "diff"),
        Redirect(9, "2", ">&", "1"),
        Redirect(14, "", ">", "/dev/null"),
        Redirect(25, "", "<", "in"),
        Word(29, "'a b'", "a b"),
    )
    assert tokens("a2>x") == (Word(0, "a2", "a2"), Redirect(2, "", ">", "x"))
    assert tokens('echo "x\\"y"\\ z') == (Word(0, "echo", "echo"), Word(5, '"x\\"y"\\ z', 'x"y z'))


@pytest.mark.parametrize(
    ("specifier", "part", "matches"),
    [
        ("npm run test", "npm run test", True),
        ("npm run test", "npm run test --watch", False),
        ("npm run test", "npm run", False),
        ("npm run:*", "npm run", True),
        ("npm run:*", "npm run build", True),
        ("npm run:*", "npm runner", False),
        ("npm run:*", "xnpm run build", False),
        ("ls *", "ls", True),
        ("ls *", "ls -la", True),
        ("ls *", "lsof", False),
        ("git * main", "git push origin main", True),
        ("git * main", "git push origin main2", False),
        ("git * main", "git main", False),
        ("*.sh", "./deploy.sh", True),
        ("*.sh", "./deploy.sh --force", False),
        ("echo *", "echo a b c", True),
        (" ls ", "ls", True),
        ("ls", "  ls  ", True),
        ("LS", "ls", False),
    ],
)
def test_specifier_matching(specifier: str, part: str, matches: bool) -> None:
    """SPEC: PERM-BASH-1"""
    assert specifier_matches(specifier, part) is matches


@pytest.mark.parametrize(
    ("specifier", "command", "matches"),
    [
        ("rm:*", "rm -rf /", True),
        ("rm:*", "ls && rm -rf x", True),
        ("rm:*", "ls; rm x", True),
        ("rm:*", "cat x | rm y", True),
        ("rm:*", "true || rm y", True),
        ("rm:*", "sleep 1 & rm y", True),
        ("rm:*", "ls\nrm y", True),
        ("rm:*", "FOO=1 rm x", True),
        ("rm:*", "A=1 B=2 rm x", True),
        ("rm:*", "ls && FOO=1 rm x", True),
        ("rm:*", "echo rm x", False),
        ("rm:*", "echo 'a; rm x'", False),
        ("ls && rm x", "ls && rm x", True),  # the whole command
        ("rm:*", "rm 'unbalanced", True),  # unsplittable: matched whole
        ("rm:*", "ls && rm 'unbalanced", True),  # PERM-BASH-4: the grammar still finds rm
        ("ls && rm:*", "ls && rm 'unbalanced", True),
    ],
)
def test_deny_and_ask_specifiers_match_any_part_or_the_whole(
    specifier: str, command: str, matches: bool
) -> None:
    """SPEC: PERM-BASH-2"""
    assert deny_rule_matches(specifier, command) is matches


@pytest.mark.parametrize(
    ("command", "specifiers", "index"),
    [
        ("npm test", ["npm test"], 0),
        ("npm test && npm run build", ["npm run:*", "npm test"], 0),
        ("npm test && make", ["npm test"], None),
        ("npm test && ls -la", ["npm test"], 0),  # ls is read-only
        ("ls -la", ["npm test"], None),  # read-only alone is not allowed by a rule
        ("npm test 'x", ["npm test:*"], 0),  # unsplittable: matched whole (as 2.1.88)
        ("", ["npm test"], None),
        ("FOO=1 make", ["make"], None),  # assignments are kept for allow rules
        ("FOO=1 make", ["FOO=1 make"], 0),
        ("a && b", ["x", "b", "a"], 1),
    ],
)
def test_allow_needs_every_part_covered(
    command: str, specifiers: list[str], index: int | None
) -> None:
    """SPEC: PERM-BASH-2, BASH-READONLY-1"""
    assert first_allowing(command, specifiers, read_only_part=is_read_only_part) == index


def test_read_only_parts_are_judged_by_the_caller() -> None:
    """SPEC: PERM-BASH-2"""
    assert first_allowing("npm test && ls", ["npm test"], read_only_part=never) is None


@pytest.mark.parametrize(
    ("part", "substitution"),
    [
        ("echo $(whoami)", True),
        ("echo `whoami`", True),
        ('echo "$(whoami)"', True),
        ('echo "`whoami`"', True),
        ("diff <(ls a) <(ls b)", True),
        ("tee >(cat)", True),
        ("echo '$(whoami)'", False),
        ("echo '`x`'", False),
        ("echo \\$(whoami)", False),
        ("echo ${HOME}", False),
        ("echo $HOME", False),
        ("echo a < b", False),
    ],
)
def test_substitutions_outside_single_quotes(part: str, substitution: bool) -> None:
    """SPEC: PERM-BASH-3"""
    assert has_substitution(part) is substitution


@pytest.mark.parametrize(
    ("part", "writes"),
    [
        ("echo x > out", True),
        ("echo x >> out", True),
        ("echo x>out", True),
        ("echo x 2> err", True),
        ("echo x &> out", True),
        ("echo x >| out", True),
        ("echo x >&out", True),
        ("echo x > /dev/null", False),
        ("echo x 2>/dev/null", False),
        ("echo x &>/dev/null", False),
        ("echo x 2>&1", False),
        ("echo x >&2", False),
        ("cat < in", False),
        ("cat <<EOF", False),
        ("echo 'a > b'", False),
        ('echo "a > b"', False),
        ("echo a\\>b", False),
    ],
)
def test_output_redirections(part: str, writes: bool) -> None:
    """SPEC: PERM-BASH-3"""
    assert writes_file(part) is writes


@pytest.mark.parametrize(
    ("specifier", "part", "matches"),
    [
        ("echo:*", "echo $(rm -rf x)", False),
        ("echo:*", "echo `id`", False),
        ("diff:*", "diff <(a) <(b)", False),
        ("echo:*", "echo '$(literal)'", True),
        ("echo $(date)", "echo $(date)", False),  # not even exactly
        ("echo:*", "echo x > out.txt", False),
        ("echo *", "echo x > out.txt", False),
        ("echo x > out.txt", "echo x > out.txt", True),  # exactly that part
        ("echo:*", "echo x > /dev/null", True),
        ("make:*", "make 2>&1", True),
        ("echo:*", "echo x", True),
    ],
)
def test_allow_never_covers_substitutions_and_only_exactly_covers_writes(
    specifier: str, part: str, matches: bool
) -> None:
    """SPEC: PERM-BASH-3"""
    assert allow_rule_matches(specifier, part) is matches


@pytest.mark.parametrize(
    "command",
    [
        "ls",
        "ls -la /tmp",
        "cat a b",
        "head -n 5 x",
        "tail -f x",
        "wc -l x",
        "pwd",
        "echo hello",
        "grep -r foo .",
        "egrep a b",
        "fgrep a b",
        "stat x",
        "which python",
        "rg foo",
        "rg --files",
        "find . -name '*.py'",
        "git status",
        "git log --oneline",
        "git diff HEAD",
        "git show abc",
        "ls 2>/dev/null",
        "ls > /dev/null 2>&1",
        "ls &>/dev/null",
        "ls | grep x && pwd; echo done",
        "ls &",
    ],
)
def test_read_only_commands(command: str) -> None:
    """SPEC: BASH-READONLY-1"""
    assert is_read_only_command(command) is True


@pytest.mark.parametrize(
    "command",
    [
        "rm x",
        "cd /tmp",
        "cat < in.txt",  # an input redirection: 2.1.88 asks
        "ls && rm x",
        "ls > out",
        "ls 2> err",
        "ls >&2",
        "echo $(rm x)",
        "cat `x`",
        "FOO=1 ls",
        "rg --pre cat foo",
        "rg --pre=cat foo",
        "find . -delete",
        "find . -exec rm {} ;",
        "find . -execdir rm {} +",
        "find . -ok rm {} +",
        "find . -okdir rm {} +",
        "find . -fprint out",
        "find . -fprint0 out",
        "find . -fprintf out %p",
        "find . -fls out",
        "git push",
        "git",
        "git -C x status",
        "git diff --output=x",
        "git diff --ext-diff",
        "git log --output x",
        "/bin/ls",
        "ls 'unbalanced",
        "",
        "  ",
        "> /dev/null",
    ],
)
def test_commands_that_are_not_read_only(command: str) -> None:
    """SPEC: BASH-READONLY-1"""
    assert is_read_only_command(command) is False


def test_read_only_part_with_a_denied_path_argument_is_not_read_only() -> None:
    """SPEC: BASH-PERM-1"""
    seen: list[str] = []

    def denied(path: str) -> bool:
        seen.append(path)
        return path.endswith(".env")

    guard = ReadGuard(active=False, denied=denied, cwd="/")
    assert is_read_only_part("cat .env", guard) is False
    assert is_read_only_part("cat < prod.env", guard) is False
    assert is_read_only_part("grep -e secret notes.txt", guard) is True
    assert is_read_only_part("grep .env notes.txt", guard) is False  # any argument is a path
    assert is_read_only_part("ls --color=.env", guard) is True  # options are not paths
    assert is_read_only_command("ls && cat x.env", guard) is False
    assert "notes.txt" in seen
    assert "--color=.env" not in seen


def _tree(tmp_path: Path) -> ReadGuard:
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "k").write_text("MARK\n")
    (tmp_path / "open").mkdir()
    (tmp_path / "open" / "a.txt").write_text("a\n")
    secret = str(tmp_path / "secret") + "/"

    def denied(path: str) -> bool:
        full = os.path.realpath(os.path.join(str(tmp_path), path))
        return full.startswith(secret)

    return ReadGuard(active=True, denied=denied, cwd=str(tmp_path))


@pytest.mark.parametrize(
    "command",
    [
        "cat sec*/k",
        "cat sec[r]et/k",
        "cat {secret,x}/k",
        "cat $PWD/secret/k",
        'cat "$HOME"/k',
        "cat $'secret/k'",
        "cat ~/k",
        "grep -r MARK secret",
        "grep -r MARK .",
        "grep -rn MARK",
        "rg MARK",
        "find secret",
        "find .",
        "ls -R",
        "ls -laR .",
        "ls secret",
        "du -a",
        "tree",
        "diff -r open secret",
        "git show HEAD:secret/k",
        "git log -p",
        "git diff --no-index open/a.txt secret/k",
        "grep --file=secret/k open/a.txt",
        "cat 'unbalanced",
        "cat < $F",
    ],
)
def test_what_the_shell_expands_or_a_reader_reaches_is_not_read_only(
    tmp_path: Path, command: str
) -> None:
    """SPEC: BASH-PERM-2"""
    assert is_read_only_command(command, _tree(tmp_path)) is False


@pytest.mark.parametrize(
    "command",
    [
        "cat open/a.txt",
        "ls",
        "ls open",
        "grep -r a open",
        "find open",
        "ls -R open",
        "wc -l open/a.txt",
    ],
)
def test_literal_reads_that_reach_no_denied_path_stay_read_only(
    tmp_path: Path, command: str
) -> None:
    """SPEC: BASH-PERM-2"""
    assert is_read_only_command(command, _tree(tmp_path)) is True


def test_a_link_inside_a_walked_tree_counts_as_its_target(tmp_path: Path) -> None:
    """SPEC: BASH-PERM-2"""
    guard = _tree(tmp_path)
    (tmp_path / "open" / "link").symlink_to(tmp_path / "secret")
    assert is_read_only_command("grep -R MARK open", guard) is False
    assert is_read_only_command("cat open/a.txt", guard) is True


def test_a_command_holding_a_lone_surrogate_is_judged_by_the_real_read_deny_rules(
    tmp_path: Path,
) -> None:
    """SPEC: PERM-PATH-5, BASH-PERM-1, BASH-PERM-2

    The guard of a session with ``Read(/secret/**)`` denied: a path naming no
    file (a lone surrogate) is matched as a missing one, so a ``..`` past it
    into a link to the denied directory is still denied, and no check fails.
    """
    lone = "\ud800"
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "k").write_text("s3cret\n")
    (tmp_path / "link").symlink_to(tmp_path / "secret")
    deny = {"userSettings": {"permissions": {"deny": ["Read(/secret/**)"]}}}
    session = Session.create(root=str(tmp_path), settings=Settings(by_source=deny))
    guard = read_guard(ToolUseContext(session=session, tool_use_id="t", cwd=str(tmp_path)))
    assert names_denied_path(f"cat link/{lone}/../k", guard) is True
    assert names_denied_path(f"cat secret/{lone}", guard) is True
    assert names_denied_path(f"cat {lone}/x", guard) is False
    assert names_denied_path(f"cat < open/{lone}", guard) is False
    assert is_read_only_command(f"ls -R {lone} && grep -r a {lone}/..", guard) is True


def test_a_tree_too_large_to_check_fails_closed(tmp_path: Path) -> None:
    """SPEC: BASH-PERM-2"""
    guard = _tree(tmp_path)
    big = tmp_path / "open" / "big"
    big.mkdir()
    for i in range(bash_reach.WALK_LIMIT + 1):
        (big / f"f{i}").touch()
    assert is_read_only_command("find open", guard) is False


@pytest.mark.parametrize(
    "command",
    [
        "(rm -rf x)",
        "{ rm -rf x; }",
        "for f in a; do rm $f; done",
        "if true; then rm x; fi",
        "until rm x; do :; done",
        "f(){ rm x; }; f",
        "! rm x",
        "time rm x",
        "time -p rm x",
        "nice -n 5 rm x",
        "ls | (cat; rm x)",
        "echo `rm x`",
        "cat <(rm x)",
        "eval rm x",
        "sh -c 'ls; rm x'",
        "bash -c \"eval 'rm x'\"",
        "\\rm x",
        "'rm' x",
        '"r"m x',
        "$CMD x",
        "${CMD} x",
        'eval "$code"',
        "case a in a) rm x;; esac",
        "x=$(rm y)",
        "eval " * 20 + "rm x",
    ],
)
def test_deny_specifiers_reach_every_simple_command(command: str) -> None:
    """SPEC: PERM-BASH-4"""
    assert deny_rule_matches("rm:*", command) is True


@pytest.mark.parametrize("command", ["echo rm x", "ls rm", "rmdir x", "grep 'rm x' f", "time ls"])
def test_deny_specifiers_do_not_match_arguments(command: str) -> None:
    """SPEC: PERM-BASH-4"""
    assert deny_rule_matches("rm:*", command) is False


@pytest.mark.parametrize(
    ("part", "edits"),
    [
        ("mkdir d1", True),
        ("touch a.txt", True),
        ("rm -f a.txt", True),
        ("rmdir d", True),
        ("mv a b", True),
        ("cp a b", True),
        ("sed -i s/x/y/ a.txt", True),
        ("sed -i.bak s/x/y/ a.txt", True),
        ("sed --in-place s/x/y/ a.txt", True),
        ("echo hi > e.txt", True),
        ("sed -n 1p a.txt", False),
        ("uniq a.txt u.txt", False),
        ("echo hi > /dev/null", False),
        ("FOO=1 touch b.txt", False),
        ("touchy a", False),
        ("ls", False),
    ],
)
def test_edits_files_names_the_file_commands_by_first_word(part: str, edits: bool) -> None:
    """SPEC: PERM-BASH-1

    Under claude-code-2.1.88: the parts its allow specifiers do not cover."""
    assert edits_files(part) is edits


def test_an_allow_specifier_leaves_a_file_command_when_told() -> None:
    """SPEC: PERM-BASH-1

    ``covers_file_commands=False`` leaves touch to the bare rule alone."""
    specs = ["touch:*"]
    assert first_allowing("touch a", specs, read_only_part=lambda _: False) == 0
    assert (
        first_allowing("touch a", specs, read_only_part=lambda _: False, covers_file_commands=False)
        is None
    )
