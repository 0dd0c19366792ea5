"""The citations of SPEC IDs in the engine's code (SPEC-ID-1), for ``lint``.

The rules are stated in ``conformance.analysis.lint``'s docstring; this module finds, in
one Python source tree, the three things they need:

- every ID-shaped token on any line (code, comments, docstrings, strings);
- the IDs cited where a citation counts: comments, and the docstrings of
  functions and classes (a module docstring is an overview, not a citation);
- the informal citations in comments and docstrings (module docstrings too),
  outside backquoted code spans.

What is ID-shaped and what is a family depend on SPEC.md, so a ``Vocabulary``
is built from its requirement IDs and text first.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from conformance.errors import Problem

__all__ = ["Citations", "Vocabulary", "scan_tree"]

# Words of upper-case letters and digits, the first starting with a letter, the
# others too: "ISO-8859-1" has a digit word and is not ID-shaped.
_WORDS = r"[A-Z][A-Z0-9]*(?:-[A-Z][A-Z0-9]*)*"
_EDGE = r"(?<![\w-])"
_TOKEN = re.compile(_EDGE + r"(?P<id>" + _WORDS + r"-[0-9]+)(?![\w])")
_WILDCARD = re.compile(_EDGE + r"(?P<words>" + _WORDS + r")-\*")
_BARE = re.compile(_EDGE + r"(?P<words>" + _WORDS + r")(?![\w*]|-[\w*]|\.\w)")
_SHORTHAND = re.compile(_EDGE + r"(?P<id>" + _WORDS + r"-[0-9]+)(?:/|\.\.|–|-)[0-9]+")
_CODE = re.compile(r"(?<!exit )(?<!status )\bcodes? [0-9]+")
_CODE_SPAN = re.compile(r"``.*?``|`[^`]*`")


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """What SPEC.md makes of an upper-case token.

    ``ids``: the requirement IDs. ``families``: their first words (``DISP``).
    ``topics``: each ID's proper prefixes of two words or more (``PERM-ORDER``
    of ``PERM-ORDER-1``). ``tails``: each ID's last word with its number
    (``INSERT-1`` of ``NBEDIT-INSERT-1``), to name the ID an abbreviation
    stands for. ``words``: families SPEC.md's own prose uses as plain words
    (``PDF``, ``TOOL``), plus the document's name (``SPEC`` of ``SPEC.md``).
    """

    ids: frozenset[str]
    families: frozenset[str]
    topics: frozenset[str]
    tails: dict[str, tuple[str, ...]]
    words: frozenset[str]

    @classmethod
    def of(cls, ids: Iterable[str], spec_text: str, spec_name: str) -> Vocabulary:
        """The vocabulary of SPEC.md, given its requirement IDs, its text and its file name."""
        known = frozenset(ids)
        families = frozenset(i.split("-", 1)[0] for i in known)
        topics: set[str] = set()
        tails: dict[str, list[str]] = {}
        for spec_id in known:
            parts = spec_id.split("-")
            topics.update("-".join(parts[:n]) for n in range(2, len(parts)))
            if len(parts) > 2:
                tails.setdefault("-".join(parts[-2:]), []).append(spec_id)
        prose = _TOKEN.sub(" ", spec_text)
        words = {m["words"] for m in _BARE.finditer(prose) if m["words"] in families}
        stem = Path(spec_name).stem
        if stem in families:
            words.add(stem)
        return cls(
            ids=known,
            families=families,
            topics=frozenset(topics),
            tails={tail: tuple(sorted(found)) for tail, found in tails.items()},
            words=frozenset(words),
        )

    def is_id_shaped(self, token: str) -> bool:
        """Two words or more and a number, or one word that is a family or an ID's tail."""
        return (
            "-" in token.rsplit("-", 1)[0]
            or token.split("-", maxsplit=1)[0] in self.families
            or (token in self.tails)
        )


@dataclass(slots=True)
class Citations:
    """What ``scan_tree`` found: the IDs cited (with their places), and problems."""

    cited: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)


def scan_tree(root: Path, vocabulary: Vocabulary, shown_as: Path | None = None) -> Citations:
    """Scan every ``*.py`` file under ``root``; files are named relative to ``shown_as``."""
    found = Citations()
    if not root.is_dir():
        found.problems.append(Problem(str(root), None, "", "the code directory does not exist"))
        return found
    for path in sorted(root.rglob("*.py")):
        name = str(path.relative_to(shown_as)) if shown_as else str(path)
        try:
            source = path.read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            found.problems.append(Problem(name, None, "", f"cannot read: {exc}"))
            continue
        _scan_file(name, source, vocabulary, found)
    return found


def _scan_file(name: str, source: str, vocabulary: Vocabulary, found: Citations) -> None:
    lines = source.splitlines()
    for number, line in enumerate(lines, 1):
        for m in _TOKEN.finditer(line):
            token = m["id"]
            if token in vocabulary.ids or not vocabulary.is_id_shaped(token):
                continue
            if token in vocabulary.tails:
                meant = " or ".join(vocabulary.tails[token])
                message = f"{token} is an abbreviated ID: write {meant}"
            else:
                message = f"{token} is not a requirement ID of SPEC.md"
            found.problems.append(Problem(name, number, token, message))
    try:
        citing, overview = _prose(source, lines)
    except (SyntaxError, tokenize.TokenError) as exc:
        found.problems.append(Problem(name, None, "", f"cannot parse: {exc}"))
        return
    for number, prose in sorted({**overview, **citing}.items()):
        text = _CODE_SPAN.sub(" ", prose)
        for message in _informal(text, vocabulary):
            found.problems.append(Problem(name, number, "", message))
        if number in citing:
            for m in _TOKEN.finditer(text):
                if m["id"] in vocabulary.ids:
                    found.cited.setdefault(m["id"], []).append((name, number))


def _prose(source: str, lines: list[str]) -> tuple[dict[int, str], dict[int, str]]:
    """The text of comments and of functions' and classes' docstrings, by line;
    then the module docstring's lines (read for informal citations, not counted
    as citing). A comment after code is the comment alone.
    """
    citing: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            citing[token.start[0]] = token.string
    tree = ast.parse(source)
    overview = {n: lines[n - 1] for n in _docstring_lines(tree)}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            citing.update((n, lines[n - 1]) for n in _docstring_lines(node))
    return citing, overview


def _docstring_lines(
    node: ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef,
) -> Iterator[int]:
    if not node.body:
        return
    first = node.body[0]
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        yield from range(first.lineno, (first.end_lineno or first.lineno) + 1)


def _informal(text: str, vocabulary: Vocabulary) -> Iterator[str]:
    for m in _WILDCARD.finditer(text):
        if m["words"].split("-")[0] in vocabulary.families:
            yield f"informal citation {m.group()!r}: a wildcard names no requirement"
    for m in _BARE.finditer(text):
        words = m["words"]
        if words in vocabulary.topics:
            yield f"informal citation {words!r}: an ID without its number"
        elif (
            words in vocabulary.families
            and words not in vocabulary.words
            and re.match(r" [a-z]|\)", text[m.end() :])
        ):
            yield f"informal citation {words!r}: a family prefix used as a section name"
    for m in _SHORTHAND.finditer(text):
        if vocabulary.is_id_shaped(m["id"]):
            yield f"informal citation {m.group()!r}: write each ID in full"
    code = _CODE.search(text)
    if code and not any(t["id"] in vocabulary.ids for t in _TOKEN.finditer(text)):
        what = "an error code without the ID whose table gives it"
        yield f"informal citation {code.group()!r}: {what}"
