"""Bash commands read with a real shell grammar (tree-sitter-bash).

SPEC.md PERM-BASH-4 (deny and ask rules reach every simple command the shell
would run: inside ``( )``, ``{ ;}``, loops, ``if``, function bodies, ``!``,
``time`` and other wrappers, pipelines, lists and substitutions) and
BASH-PERM-2 (what a read-only command may read while a ``Read`` deny rule is
in force: only words whose value is known without expansion). Nothing here
runs a shell or touches the file system.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass
from typing import Final

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

_LANGUAGE: Final = Language(tree_sitter_bash.language())
_LOCAL = threading.local()  # a Parser is not shared between threads
# PERM-BASH-4: programs that run the rest of their words as a command.
WRAPPERS: Final = frozenset(
    {"time", "nohup", "command", "builtin", "exec", "env", "nice", "timeout", "xargs"}
    | {"sudo", "doas", "stdbuf", "ionice", "setsid", "chrt", "taskset", "watch", "strace"}
)
# PERM-BASH-4: programs that run an argument as shell code.
SHELLS: Final = frozenset({"sh", "bash", "dash", "zsh", "ksh", "busybox"})
_EXPANDING: Final = frozenset("*?[{~")  # BASH-PERM-2: globs, braces, tilde (unquoted)
_MAX_NESTING: Final = 4  # eval / sh -c inside eval / sh -c ...


@dataclass(frozen=True, slots=True)
class Arg:
    """A shell word: its text as written and its value, None when the shell would expand it."""

    raw: str
    value: str | None


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One simple command: its words (the program first, assignments left out)."""

    words: tuple[Arg, ...]

    @property
    def dynamic_name(self) -> bool:
        """PERM-BASH-4: the program is computed by the shell (an expansion)."""
        return bool(self.words) and self.words[0].value is None

    def texts(self) -> tuple[str, ...]:
        """PERM-BASH-4: the forms a Bash specifier is matched against.

        The words as written and their values joined by spaces, and for a
        wrapper (``time``, ``env``, ``xargs``, ...) the same for every tail
        that starts at a word that is neither an option nor an assignment.
        """
        found: list[str] = []
        starts = [0]
        if self.words and self.words[0].value in WRAPPERS:
            starts += [
                k
                for k, word in enumerate(self.words)
                if k and not word.raw.startswith("-") and "=" not in word.raw
            ]
        for start in starts:
            tail = self.words[start:]
            found.append(" ".join(w.raw for w in tail))
            found.append(" ".join(w.raw if w.value is None else w.value for w in tail))
        return tuple(dict.fromkeys(found))


@dataclass(frozen=True, slots=True)
class Parsed:
    """A command's simple commands and redirection targets, every nesting level included."""

    complete: bool  # no syntax error and no missing token anywhere
    commands: tuple[SimpleCommand, ...]
    redirect_targets: tuple[Arg, ...]


def _parser() -> Parser:
    parser: Parser | None = getattr(_LOCAL, "parser", None)
    if parser is None:
        parser = Parser(_LANGUAGE)
        _LOCAL.parser = parser
    return parser


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogateescape")


def _word_value(text: str) -> str | None:
    """An unquoted word: backslash escapes removed; None if it has a glob, brace or ``~``."""
    value: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\":
            if i + 1 < len(text) and text[i + 1] != "\n":
                value.append(text[i + 1])
            i += 2
            continue
        if char in _EXPANDING:
            return None  # BASH-PERM-2: the shell would expand it
        value.append(char)
        i += 1
    return "".join(value)


def _string_value(node: Node) -> str | None:
    """A double-quoted string: its value when it holds no expansion."""
    if any(child.type not in ('"', "string_content") for child in node.children):
        return None
    inner = _text(node)[1:-1]
    value: list[str] = []
    i = 0
    while i < len(inner):
        if inner[i] == "\\" and i + 1 < len(inner) and inner[i + 1] in '$`"\\\n':
            if inner[i + 1] != "\n":
                value.append(inner[i + 1])
            i += 2
        else:
            value.append(inner[i])
            i += 1
    return "".join(value)


def arg_value(node: Node) -> str | None:
    """BASH-PERM-2: a word's value, or None when anything in it would be expanded."""
    kind = node.type
    if kind in ("word", "number"):
        return _word_value(_text(node))
    if kind == "raw_string":
        return _text(node)[1:-1]
    if kind == "string":
        return _string_value(node)
    if kind == "concatenation":
        parts = [arg_value(child) for child in node.children]
        if any(part is None for part in parts):
            return None
        return "".join(part for part in parts if part is not None)
    return None  # $VAR, ${..}, $(..), `..`, <(..), $'..', $"..", $((..)), ...


def _has_error(root: Node) -> bool:
    return root.has_error


def _walk(root: Node) -> list[Node]:
    """Every node under ``root``, in document order, without recursion."""
    found: list[Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(reversed(node.children))
    return found


def _command(node: Node) -> SimpleCommand:
    words: list[Arg] = []
    name = node.child_by_field_name("name")
    if name is not None:
        target = name.children[0] if name.children else name
        words.append(Arg(_text(target), arg_value(target)))
    for child in node.children_by_field_name("argument"):
        words.append(Arg(_text(child), arg_value(child)))
    return SimpleCommand(tuple(words))


@functools.lru_cache(maxsize=1024)
def parse(command: str, depth: int = 0) -> Parsed:
    """PERM-BASH-4: every simple command of ``command``, at every nesting level.

    ``eval WORDS`` and ``sh -c STRING`` (any of SHELLS) with literal words are
    parsed in turn, up to a fixed depth; a deeper one makes the parse
    incomplete and counts as a computed program (``dynamic_name``). A command
    with a syntax error is parsed as far as the grammar recovers and reported
    incomplete.
    """
    tree = _parser().parse(command.encode("utf-8", "surrogatepass"))
    complete = not _has_error(tree.root_node)
    commands: list[SimpleCommand] = []
    targets: list[Arg] = []
    for node in _walk(tree.root_node):
        if node.type == "command":
            simple = _command(node)
            commands.append(simple)
            inner = _inner_code(simple)
            if inner is None and _runs_code(simple):
                # PERM-BASH-4: code the shell computes counts as a computed program
                commands.append(SimpleCommand((Arg(simple.words[0].raw, None),)))
            elif inner is not None:
                if depth >= _MAX_NESTING:  # too deep to follow: a computed program
                    complete = False
                    commands.append(SimpleCommand((Arg(simple.words[0].raw, None),)))
                else:
                    nested = parse(inner, depth + 1)
                    commands.extend(nested.commands)
                    targets.extend(nested.redirect_targets)
                    complete = complete and nested.complete
        elif node.type in ("file_redirect", "herestring_redirect"):
            destination = node.child_by_field_name("destination")
            if destination is None and node.type == "herestring_redirect":
                destination = node.children[-1] if node.children else None
            if destination is not None:
                targets.append(Arg(_text(destination), arg_value(destination)))
    return Parsed(complete, tuple(commands), tuple(targets))


def _runs_code(simple: SimpleCommand) -> bool:
    """An ``eval`` or ``sh -c`` whose code is not literal."""
    program = simple.words[0].value if simple.words else None
    values = [w.value for w in simple.words[1:]]
    return program == "eval" or (program in SHELLS and "-c" in [*values, None])


def _inner_code(simple: SimpleCommand) -> str | None:
    """The shell code an ``eval`` or ``sh -c`` runs, when its words are literal."""
    if not simple.words:
        return None
    program = simple.words[0].value
    values = [w.value for w in simple.words[1:]]
    if program == "eval" and values and all(v is not None for v in values):
        return " ".join(v for v in values if v is not None)
    if program in SHELLS and "-c" in values:
        index = values.index("-c") + 1
        if index < len(values):
            return values[index]
    return None
