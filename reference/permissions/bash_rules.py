"""Bash command rules and read-only commands: pure functions over a command string.

SPEC.md PERM-BASH-1 (how a ``Bash(specifier)`` matches one command part),
PERM-BASH-2 (splitting a command into parts; deny and ask on any part, allow
only when every part is covered), PERM-BASH-3 (substitutions and output
redirections an allow rule never covers) and BASH-READONLY-1 (which parts are
read-only). Nothing here runs a shell; the one hook into the session is the
optional ``ReadGuard`` of BASH-PERM-1 and BASH-PERM-2, which the caller
supplies (and whose check, ``bash_reach``, lists directories).

The lexer understands only what these rules need: single and double quotes,
backslash escapes, the separators of PERM-BASH-2 and the redirection
operators. It never expands anything.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from reference.permissions import bash_parse
from reference.permissions.bash_reach import ReadGuard, part_allowed

# BASH-READONLY-1: programs that are read-only with any arguments.
READ_ONLY_PROGRAMS: Final = frozenset(
    {
        *("ls", "cat", "head", "tail", "wc", "pwd", "echo", "grep", "egrep", "fgrep", "stat"),
        *("which", "diff", "cmp", "du", "file", "date", "whoami", "id", "uname", "hostname"),
        *("basename", "dirname", "realpath", "cut", "nl", "od", "md5sum", "sha256sum", "jq"),
        *("true", "test", "type"),
    }
)
# BASH-READONLY-1: read-only unless an argument names an output file.
OUTPUT_OPTION_PROGRAMS: Final = {"sort": ("-o", "--output"), "tree": ("-o",)}
FIND_FORBIDDEN: Final = frozenset(
    {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
)
GIT_READ_ONLY: Final = frozenset({"status", "log", "diff", "show"})
DEV_NULL: Final = "/dev/null"
# PERM-BASH-1 where a profile's allow specifiers do not cover file commands: the
# filesystem commands the documentation names for acceptEdits.
FILE_COMMANDS: Final = frozenset({"mkdir", "touch", "rm", "rmdir", "mv", "cp"})

# Longest first: the regex alternation takes the first operator that matches.
_REDIRECT = re.compile(r"(\d*)(&>>|&>|>>|>\||>&|<<<|<<-|<<|<>|<&|>|<)")
_OUTPUT_OPS: Final = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<>"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_FD_TARGET = re.compile(r"\d+|-")


@dataclass(frozen=True, slots=True)
class Word:
    """A shell word: its offset in the part and its value with quotes removed."""

    start: int
    raw: str
    value: str


@dataclass(frozen=True, slots=True)
class Redirect:
    """A redirection: ``fd`` as written (may be empty), the operator, the target's value."""

    start: int
    fd: str
    op: str
    target: str

    @property
    def is_output(self) -> bool:
        return self.op in _OUTPUT_OPS

    @property
    def is_fd_duplication(self) -> bool:
        """``>&N`` / ``>&-`` (as in ``2>&1``): no file is written."""
        return self.op == ">&" and _FD_TARGET.fullmatch(self.target) is not None

    @property
    def writes_file(self) -> bool:
        """PERM-BASH-3: an output redirection to anything other than ``/dev/null``."""
        return self.is_output and not self.is_fd_duplication and self.target != DEV_NULL


Token = Word | Redirect


def split_command(command: str) -> tuple[str, ...] | None:
    """PERM-BASH-2: the parts of ``command``, or None when its quotes are unbalanced.

    Splits at ``&&``, ``||``, ``;``, ``|``, ``|&``, ``&`` and newline outside
    quotes; an ``&`` that belongs to a redirection (``2>&1``, ``&>``, ``<&``)
    and the ``|`` of ``>|`` are not separators, and neither is an escaped
    character (a backslash-newline continues the line). Each part has its
    surrounding whitespace removed; empty parts are dropped. Substitutions are
    not parsed: a separator inside ``$(...)`` splits too (such parts are never
    allowed by a rule, PERM-BASH-3).
    """
    parts: list[str] = []
    start = i = 0
    n = len(command)
    quote: str | None = None
    after_redirect = False  # the previous character was an unquoted, unescaped < or >
    while i < n:
        char = command[i]
        if quote == "'":
            quote = None if char == "'" else quote
            i += 1
            continue
        if quote == '"':
            if char == "\\":
                i += 2
                continue
            quote = None if char == '"' else quote
            i += 1
            continue
        if char == "\\":
            i += 2
            after_redirect = False
            continue
        width = 0
        if char in "'\"":
            quote = char
        elif char in ";\n":
            width = 1
        elif char == "&":
            if command.startswith("&&", i):
                width = 2
            elif not after_redirect and not command.startswith("&>", i):
                width = 1  # background operator; >& <& &> are redirections
        elif char == "|":
            if command.startswith(("||", "|&"), i):
                width = 2
            elif not after_redirect:
                width = 1  # a pipe; >| is a redirection
        after_redirect = char in "<>"
        if width:
            parts.append(command[start:i])
            i += width
            start = i
        else:
            i += 1
    if quote is not None:
        return None  # PERM-BASH-2: a command that cannot be split
    parts.append(command[start:])
    return tuple(stripped for part in parts if (stripped := part.strip()))


def _read_word(part: str, i: int) -> tuple[int, str]:
    """The word starting at ``i``: its end and its value with quotes and escapes removed."""
    n = len(part)
    value: list[str] = []
    while i < n:
        char = part[i]
        if char in " \t\n":
            break
        if char in "<>" and not part.startswith("(", i + 1):
            break  # a redirection starts (but <( and >( are process substitutions)
        if char == "&" and part.startswith(">", i + 1):
            break  # &>
        if char == "\\":
            if i + 1 < n and part[i + 1] != "\n":
                value.append(part[i + 1])
            i += 2
        elif char == "'":
            end = part.find("'", i + 1)
            end = n if end < 0 else end
            value.append(part[i + 1 : end])
            i = end + 1
        elif char == '"':
            i += 1
            while i < n and part[i] != '"':
                if part[i] == "\\" and i + 1 < n and part[i + 1] in '$`"\\\n':
                    if part[i + 1] != "\n":
                        value.append(part[i + 1])
                    i += 2
                else:
                    value.append(part[i])
                    i += 1
            i += 1
        else:
            value.append(char)
            i += 1
    return i, "".join(value)


@functools.lru_cache(maxsize=1024)
def tokens(part: str) -> tuple[Token, ...]:
    """The words and redirections of one part, in order."""
    found: list[Token] = []
    i = 0
    n = len(part)
    while i < n:
        if part[i] in " \t\n":
            i += 1
            continue
        match = _REDIRECT.match(part, i)
        if match is not None and not (
            match.group(2) in ("<", ">") and part.startswith("(", match.end())
        ):
            j = match.end()
            while j < n and part[j] in " \t":
                j += 1
            end, target = _read_word(part, j)
            found.append(Redirect(i, match.group(1), match.group(2), target))
            i = max(end, j)
            continue
        end, value = _read_word(part, i)
        if end == i:  # a lone character no rule above consumes; keep it as a word
            end, value = i + 1, part[i]
        found.append(Word(i, part[i:end], value))
        i = end
    return tuple(found)


def _is_assignment(token: Token) -> bool:
    return isinstance(token, Word) and _ASSIGNMENT.match(token.raw) is not None


def strip_assignments(part: str) -> str:
    """PERM-BASH-2: ``part`` without its leading ``NAME=value`` assignments."""
    for token in tokens(part):
        if not _is_assignment(token):
            return part[token.start :].strip()
    return ""


def has_substitution(part: str) -> bool:
    """PERM-BASH-3: ``$(``, a backquote, ``<(`` or ``>(`` outside single quotes."""
    quote: str | None = None
    i = 0
    n = len(part)
    while i < n:
        char = part[i]
        if quote == "'":
            quote = None if char == "'" else quote
        elif char == "\\":
            i += 1  # the next character is escaped
        elif char == "'" and quote is None:
            quote = "'"
        elif char == '"':
            quote = None if quote == '"' else '"'
        elif char == "`" or (char in "$<>" and part.startswith("(", i + 1)):
            return True
        i += 1
    return False


def writes_file(part: str) -> bool:
    """PERM-BASH-3: the part redirects output to something other than ``/dev/null``."""
    return any(isinstance(t, Redirect) and t.writes_file for t in tokens(part))


@functools.lru_cache(maxsize=1024)
def _wildcard(specifier: str) -> re.Pattern[str]:
    trailing = specifier.endswith(" *")
    body = specifier[:-2] if trailing else specifier
    pattern = ".*".join(re.escape(piece) for piece in body.split("*"))
    if trailing:
        pattern += "(?: .*)?"  # PERM-BASH-1: a trailing " *" also matches nothing
    return re.compile(pattern, re.DOTALL)


def specifier_matches(specifier: str, part: str) -> bool:
    """PERM-BASH-1: whether a ``Bash`` specifier matches one (stripped) part.

    ``prefix:*`` matches the part equal to ``prefix`` or starting with
    ``prefix`` and a space; a specifier with ``*`` elsewhere is a whole-part
    wildcard pattern (``*`` matches anything, spaces included; a trailing
    `` *`` also matches nothing); any other specifier matches exactly. The
    specifier's own surrounding whitespace is ignored.
    """
    specifier = specifier.strip()
    part = part.strip()
    if specifier.endswith(":*"):
        prefix = specifier[:-2]
        return part == prefix or part.startswith(prefix + " ")
    if "*" in specifier:
        return _wildcard(specifier).fullmatch(part) is not None
    return part == specifier


def deny_rule_matches(specifier: str, command: str) -> bool:
    """PERM-BASH-2 and PERM-BASH-4: a deny or ask specifier applies to ``command``.

    It applies when it matches the whole command, any part with its leading
    assignments removed (a command that cannot be split is matched whole
    only), or any simple command the shell grammar finds at any nesting level
    (``texts`` of ``bash_parse.SimpleCommand``); and whenever a simple
    command's program is computed by the shell (PERM-BASH-4).
    """
    if specifier_matches(specifier, command):
        return True
    parts = split_command(command)
    if parts is not None and any(
        specifier_matches(specifier, strip_assignments(part)) for part in parts
    ):
        return True
    for simple in bash_parse.parse(command).commands:  # PERM-BASH-4
        if simple.dynamic_name:
            return True
        if any(specifier_matches(specifier, text) for text in simple.texts()):
            return True
    return False


def edits_files(part: str) -> bool:
    """PERM-BASH-1's file commands: the part's first word (a leading assignment is that
    word) is one of FILE_COMMANDS, or ``sed`` in place (``-i``, ``-iSUFFIX``,
    ``--in-place``), or the part redirects output to a file."""
    words = [t.value for t in tokens(part) if isinstance(t, Word)]
    if words and words[0] in FILE_COMMANDS:
        return True
    if (
        words
        and words[0] == "sed"
        and any(
            w.startswith("--in-place") or (w.startswith("-i") and not w.startswith("--"))
            for w in words[1:]
        )
    ):
        return True
    return writes_file(part)


def allow_rule_matches(
    specifier: str, part: str, *, covers_file_commands: bool = True, literal_only: bool = False
) -> bool:
    """PERM-BASH-3 over PERM-BASH-1: an allow specifier covers one part (assignments kept).

    Never a part with a command or process substitution; a part that writes a
    file by redirection only when the specifier is exactly that part. Without
    ``covers_file_commands`` (a profile's PERM-BASH-1), never a part that
    :func:`edits_files`. With ``literal_only`` (the session's profile), never a part
    that writes a file by redirection, nor one whose text holds ``$(`` anywhere,
    quoted or not.
    """
    if has_substitution(part) or (literal_only and "$(" in part):
        return False  # PERM-BASH-3
    if not covers_file_commands and edits_files(part):
        return False  # PERM-BASH-1 under the session's profile
    if writes_file(part):
        return not literal_only and specifier.strip() == part.strip()  # PERM-BASH-3
    return specifier_matches(specifier, part)


def first_allowing(
    command: str,
    specifiers: Sequence[str],
    *,
    read_only_part: Callable[[str], bool],
    covers_file_commands: bool = True,
    unsplittable_whole: bool = True,
    literal_only: bool = False,
) -> int | None:
    """PERM-BASH-2: the index of the first specifier that allows ``command``, or None.

    The command is allowed when every part is covered by an allow specifier or
    is read-only (``read_only_part``) and at least one specifier covers a part;
    the index returned is the lowest of the specifiers that cover a part (the
    rule reported). A command that cannot be split is matched whole, as
    Claude Code 2.1.88 does, or, without ``unsplittable_whole`` (the session's
    profile), never allowed by a rule; one with no part is never allowed by a rule.
    ``literal_only`` is :func:`allow_rule_matches`'s.
    """
    parts = split_command(command)
    if parts is None and not unsplittable_whole:
        return None  # PERM-BASH-2 under a profile whose release asks for it
    if parts is None:  # unbalanced quotes: the whole command, as one part
        parts = (command,)
    if not parts:
        return None
    best: int | None = None
    for part in parts:
        index = next(
            (
                k
                for k, spec in enumerate(specifiers)
                if allow_rule_matches(
                    spec,
                    part,
                    covers_file_commands=covers_file_commands,
                    literal_only=literal_only,
                )
            ),
            None,
        )
        if index is None:
            if read_only_part(part):
                continue
            return None
        best = index if best is None else min(best, index)
    return best


def is_read_only_part(part: str, guard: ReadGuard | None = None, *, wider: bool = False) -> bool:
    """BASH-READONLY-1 for one part; with ``guard``, BASH-PERM-1's and BASH-PERM-2's stricter test.

    The part has no substitution, no input redirection, no output redirection
    except to ``/dev/null`` or ``2>&1``, no leading assignment, and is one of the
    read-only program forms. With ``guard``, a part one of whose arguments
    not starting with ``-`` is a denied path is not read-only, and while a
    ``Read`` deny rule is in force neither is a part that BASH-PERM-2
    (``bash_reach.part_allowed``) refuses. With ``wider`` (the session's profile), an
    input redirection from a file does not disqualify the part, and the programs of
    :func:`_wider_read_only_program` count too.
    """
    if has_substitution(part):
        return False
    found = tokens(part)
    words = [t for t in found if isinstance(t, Word)]
    redirects = [t for t in found if isinstance(t, Redirect)]
    if not words or _is_assignment(words[0]):
        return False  # BASH-READONLY-1: no leading NAME=value assignment
    for redirect in redirects:
        if redirect.op == "<" and not wider:
            return False  # BASH-READONLY-1: 2.1.88 asks for `wc -l < a.txt`
        if redirect.is_output and not (
            redirect.target == DEV_NULL
            or (redirect.fd == "2" and redirect.op == ">&" and redirect.target == "1")
        ):
            return False
    program, args = words[0].value, [w.value for w in words[1:]]
    if not (
        _read_only_program(program, args) or (wider and _wider_read_only_program(program, args))
    ):
        return False
    if guard is not None:  # BASH-PERM-1
        if any(guard.denied(path) for path in _literal_paths(args, redirects)):
            return False
        if not part_allowed(part, guard):
            return False  # BASH-PERM-2
    return True


def _literal_paths(args: list[str], redirects: list[Redirect]) -> list[str]:
    """BASH-PERM-1: the words naming files: arguments not starting with ``-``, ``<`` files."""
    paths = [arg for arg in args if arg and not arg.startswith("-")]
    paths += [r.target for r in redirects if r.op == "<" and r.target]
    return paths


def names_denied_path(part: str, guard: ReadGuard) -> bool:
    """BASH-PERM-1: ``part`` is read-only and one of its literal paths is ``Read``-denied.

    Such a command is denied outright (2.1.88 refuses ``cat secret.txt`` under
    ``Read(./secret.txt)`` without asking); what BASH-PERM-2 cannot see through
    (expansions, recursive readers) only asks.
    """
    if not is_read_only_part(part):
        return False
    found = tokens(part)
    words = [t.value for t in found if isinstance(t, Word)]
    redirects = [t for t in found if isinstance(t, Redirect)]
    return any(guard.denied(path) for path in _literal_paths(words[1:], redirects))


def _read_only_program(program: str, args: list[str]) -> bool:
    """BASH-READONLY-1's list of programs and the arguments that disqualify them."""
    if program in READ_ONLY_PROGRAMS:
        return True
    if program in OUTPUT_OPTION_PROGRAMS:
        return not any(arg.startswith(OUTPUT_OPTION_PROGRAMS[program]) for arg in args)
    if program == "rg":
        return not any(arg.startswith("--pre") for arg in args)
    if program == "find":
        return not any(arg in FIND_FORBIDDEN for arg in args)
    if program == "git":
        return (
            bool(args)
            and args[0] in GIT_READ_ONLY
            and not any(arg.startswith(("--output", "--ext-diff")) for arg in args[1:])
        )
    return False


def _wider_read_only_program(program: str, args: list[str]) -> bool:
    """BASH-READONLY-1 where the session's profile's release runs more without a prompt:
    ``printf`` and ``tr``, and ``uniq`` with options only (a second operand would be its
    output file)."""
    if program in ("printf", "tr"):
        return True
    return program == "uniq" and all(arg.startswith("-") for arg in args)


def cd_target(part: str) -> str | None:
    """BASH-PERM-1: the directory of a plain ``cd DIR`` part, None for any other part.

    A plain ``cd`` has exactly one argument, no substitution, redirection or
    leading assignment.
    """
    if has_substitution(part):
        return None
    found = tokens(part)
    words = [t.value for t in found if isinstance(t, Word)]
    if len(words) != 2 or len(found) != 2 or words[0] != "cd" or not words[1]:
        return None
    return words[1]


def moves(part: str) -> bool:
    """BASH-PERM-2: the part changes the shell's directory (``cd``, ``pushd``, ``popd``)."""
    words = [t.value for t in tokens(strip_assignments(part)) if isinstance(t, Word)]
    return bool(words) and words[0] in ("cd", "pushd", "popd")


def is_read_only_command(command: str, guard: ReadGuard | None = None) -> bool:
    """BASH-READONLY-1 (and BASH-PERM-1 with ``guard``) for a whole command.

    A command that cannot be split, or has no part, is not read-only.
    """
    parts = split_command(command)
    if not parts:
        return False
    return all(is_read_only_part(part, guard) for part in parts)
