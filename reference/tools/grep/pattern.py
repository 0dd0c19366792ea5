"""ripgrep's regex syntax (Rust's ``regex`` crate) as a Python ``re`` pattern.

GREP-ENGINE-1: the pure-Python engine must accept and refuse what ``rg``
does and match the same text, at least for the common subset (literals,
``.``, classes, ``\\d \\w \\s \\b``, anchors, greedy and lazy quantifiers,
groups, alternation, inline flags). Python's ``re`` differs from Rust's
syntax in ways that matter even there: Rust scopes an inline ``(?i)`` to the
rest of its group, refuses look-around and backreferences, treats every
``{`` as a counted repetition and an escaped letter or digit it does not know
as an error (ripgrep 14's crate takes any other escaped ASCII character as
itself, and ``\\<`` ``\\>`` as the start and end of a word), accepts
``a**`` and nested classes, and has no possessive quantifiers. So the
pattern is parsed here with Rust's rules and written out for ``re``: every
atom whose flags differ from the pattern's base flags is wrapped in a scoped
flag group, literal characters are escaped, and what Rust refuses raises
:class:`RegexError` with a message in the words of Rust's parser.

Line mode (no ``multiline``) also refuses a literal newline, as ``rg`` does
(GREP-MATCH-1 matches line by line).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Final, NoReturn

import regex

from reference import errors

META: Final = frozenset("\\.+*?()|[]{}^$#&-~")
SIMPLE_ESCAPES: Final = {"a": "\x07", "f": "\x0c", "n": "\n", "r": "\r", "t": "\t", "v": "\x0b"}
POSIX_CLASSES: Final = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7f",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\x0b\\x0c\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}
LETTER_CLASSES: Final = frozenset({"L", "Letter"})
NEWLINE_BANNED: Final = (
    "the literal '\"\\n\"' is not allowed in a regex\n\n"
    "Consider enabling multiline mode with the --multiline flag (or -U for short).\n"
    "When multiline mode is enabled, new line characters can be matched."
)


@dataclass(frozen=True, slots=True)
class _Flags:
    i: bool  # case-insensitive
    m: bool  # ^ and $ at line boundaries
    s: bool  # . matches a newline
    x: bool  # verbose: whitespace and # comments ignored
    swap_greed: bool  # U
    unicode: bool  # u


def compile_pattern(pattern: str, *, ignore_case: bool, multiline: bool) -> Any:
    """The Python regex for an ``rg`` pattern (``-i``; ``-U --multiline-dotall``).

    Compiled by the ``regex`` engine (in its ``re``-compatible mode), whose
    calls take a ``timeout`` (GREP-TIMEOUT-1).

    Raises:
        errors.RegexError: ``rg`` would refuse the pattern, or Python cannot express it.
    """
    base = _Flags(
        i=ignore_case, m=True, s=multiline, x=False, swap_greed=False, unicode=True
    )  # rg builds its regex with multi_line on
    source = _Parser(pattern, base, line_mode=not multiline).parse()
    flags = (
        regex.MULTILINE
        | (regex.IGNORECASE if ignore_case else 0)
        | (regex.DOTALL if multiline else 0)
        | regex.VERSION0
    )
    try:
        return regex.compile(source, flags)
    except (re.error, regex.error) as exc:  # a limit of Python's engine (e.g. too many groups)
        raise errors.RegexError(str(exc)) from exc
    except (OverflowError, RecursionError) as exc:
        raise errors.RegexError("the pattern is too large") from exc


class _Parser:
    def __init__(self, pattern: str, base: _Flags, *, line_mode: bool) -> None:
        self.p = pattern
        self.i = 0
        self.base = base
        self.line_mode = line_mode

    # -- errors ---------------------------------------------------------------------------

    def fail(self, message: str, at: int | None = None) -> NoReturn:
        position = self.i if at is None else at
        raise errors.RegexError(
            f"regex parse error:\n    {self.p}\n    {' ' * position}^\nerror: {message}"
        )

    # -- structure ------------------------------------------------------------------------

    def parse(self) -> str:
        source = self._alternation(self.base, depth=0)
        if self.i < len(self.p):  # a ")" with no "("
            self.fail("unopened group")
        return source

    def _alternation(self, flags: _Flags, depth: int) -> str:
        """Branches up to the closing ``)`` of this group (not consumed) or the end."""
        branches: list[str] = []
        pieces: list[str] = []
        last_kind = ""  # "", "atom", "assert" or "repeat": what a quantifier would apply to
        p = self.p
        while self.i < len(p):
            c = p[self.i]
            if flags.x and c.isspace():
                self.i += 1
                continue
            if flags.x and c == "#":
                while self.i < len(p) and p[self.i] != "\n":
                    self.i += 1
                continue
            if c == "|":
                branches.append("".join(pieces))
                pieces, last_kind = [], ""
                self.i += 1
                continue
            if c == ")":
                if depth == 0:
                    self.fail("unopened group")
                break
            if c in "*+?{":
                if last_kind == "":
                    self.fail("repetition operator missing expression")
                quantifier = self._quantifier(flags)
                previous = pieces.pop()
                if last_kind in ("repeat", "assert"):
                    previous = f"(?:{previous})"
                pieces.append(previous + quantifier)
                last_kind = "repeat"
                continue
            if c == "(":
                piece, flags_after = self._group(flags, depth)
                if flags_after is not None:  # (?flags): the rest of this group
                    flags = flags_after
                    last_kind = ""
                    continue
                pieces.append(piece)
                last_kind = "atom"
                continue
            piece, last_kind = self._atom(flags)
            pieces.append(piece)
        branches.append("".join(pieces))
        return "|".join(branches)

    def _group(self, flags: _Flags, depth: int) -> tuple[str, _Flags | None]:
        """A group at ``(``; for a bare ``(?flags)`` the new flags instead."""
        p, start = self.p, self.i
        self.i += 1
        opener = "("
        inner_flags = flags
        if p.startswith("?", self.i):
            self.i += 1
            if p.startswith(("=", "!", "<=", "<!"), self.i):
                self.fail(
                    "look-around, including look-ahead and look-behind, is not supported",
                    start,
                )
            if p.startswith(":", self.i):
                self.i += 1
                opener = "(?:"
            elif p.startswith("P<", self.i):
                end = p.find(">", self.i + 2)
                name = p[self.i + 2 : end] if end != -1 else ""
                if end == -1 or not name.isidentifier():
                    self.fail("invalid capture group name", self.i)
                opener = f"(?P<{name}>"
                self.i = end + 1
            else:
                inner_flags, closed = self._flags(flags)
                if closed:  # (?flags)
                    return "", inner_flags
                opener = "(?:"
        body = self._alternation(inner_flags, depth + 1)
        if self.i >= len(p) or p[self.i] != ")":
            self.fail("unclosed group", start)
        self.i += 1
        return f"{opener}{body})", None

    def _flags(self, flags: _Flags) -> tuple[_Flags, bool]:
        """Flags after ``(?``, up to ``)`` (True: a bare flag group) or ``:`` (False)."""
        p, start = self.p, self.i
        negate, seen = False, False
        changes: dict[str, bool] = {}
        names = {"i": "i", "m": "m", "s": "s", "x": "x", "U": "swap_greed", "u": "unicode"}
        while self.i < len(p) and p[self.i] not in ":)":
            c = p[self.i]
            if c == "-":
                if negate:
                    self.fail("duplicate negation in flag group")
                negate = True
            elif c in names:
                changes[names[c]] = not negate
                seen = True
            else:
                self.fail("unrecognized flag")
            self.i += 1
        if self.i >= len(p):
            self.fail("expected flag but got end of regex", start)
        if not seen:
            self.fail("empty flag group" if not negate else "dangling flag negation")
        closed = p[self.i] == ")"
        self.i += 1
        return replace(flags, **changes), closed

    def _quantifier(self, flags: _Flags) -> str:
        p = self.p
        c = p[self.i]
        if c == "{":
            start = self.i
            end = p.find("}", self.i)
            if end == -1:
                self.fail("unclosed counted repetition", start)
            body = p[self.i + 1 : end]
            match = re.fullmatch(r"(\d+)(,(\d*))?", body)
            if match is None:
                self.fail("repetition quantifier expects a valid decimal", start + 1)
            low = int(match.group(1))
            high = match.group(3)
            if high and low > int(high):
                self.fail("invalid repetition count range, the start must be <= the end", start)
            quantifier = "{" + body + "}"
            self.i = end + 1
        else:
            quantifier = c
            self.i += 1
        lazy = self.i < len(p) and p[self.i] == "?"
        if lazy:
            self.i += 1
        if lazy != flags.swap_greed:
            quantifier += "?"
        return quantifier

    # -- atoms ----------------------------------------------------------------------------

    def _atom(self, flags: _Flags) -> tuple[str, str]:
        """One atom and its kind ("atom" or "assert")."""
        p = self.p
        c = p[self.i]
        if c == "[":
            body = self._class(flags)
            return self._case_scoped(body, flags), "atom"
        self.i += 1
        if c == ".":
            if flags.s == self.base.s:
                return ".", "atom"
            return ("(?s:.)" if flags.s else "(?-s:.)"), "atom"
        if c == "^":
            return ("^" if flags.m else r"\A"), "assert"
        if c == "$":
            return ("$" if flags.m else r"\Z"), "assert"
        if c == "\\":
            return self._escape(flags)
        return self._literal(c, flags), "atom"

    def _literal(self, char: str, flags: _Flags) -> str:
        if char == "\n" and self.line_mode:
            raise errors.RegexError(NEWLINE_BANNED)
        escaped = re.escape(char)
        if flags.i != self.base.i and char.lower() != char.upper():
            return self._case_scoped(escaped, flags)
        return escaped

    def _case_scoped(self, source: str, flags: _Flags) -> str:
        if flags.i == self.base.i:
            return source
        return f"(?i:{source})" if flags.i else f"(?-i:{source})"

    def _escape(self, flags: _Flags) -> tuple[str, str]:
        """After a backslash outside a class."""
        p, start = self.p, self.i - 1
        if self.i >= len(p):
            self.fail("incomplete escape sequence, reached end of pattern prematurely", start)
        c = p[self.i]
        self.i += 1
        if c in "bB":
            source = "\\" + c
            return (source if flags.unicode else f"(?a:{source})"), "assert"
        if c == "<":  # ripgrep 14: the start of a word
            return (r"\b(?=\w)" if flags.unicode else r"(?a:\b(?=\w))"), "assert"
        if c == ">":  # ripgrep 14: the end of a word
            return (r"\b(?<=\w)" if flags.unicode else r"(?a:\b(?<=\w))"), "assert"
        if c == "A":
            return r"\A", "assert"
        if c == "z":
            return r"\Z", "assert"
        if c in "dswDSW":
            source = "\\" + c
            return (source if flags.unicode else f"(?a:{source})"), "atom"
        if c in "pP":
            return self._unicode_class(c == "P", start), "atom"
        char = self._escaped_char(c, flags, start)
        return self._literal(char, flags), "atom"

    def _escaped_char(self, c: str, flags: _Flags, start: int) -> str:
        """The character an escape other than a class or an assertion stands for."""
        if c in META:
            return c
        if c in SIMPLE_ESCAPES:
            return SIMPLE_ESCAPES[c]
        if c in "xuU":
            return self._hex(c, start)
        if c.isdigit():
            self.fail("backreferences are not supported", start)
        if c.isascii() and not c.isalnum():  # ripgrep 14: any other ASCII punctuation or space
            return c
        if not (flags.x and c in " #"):
            self.fail("unrecognized escape sequence", start)
        return c

    def _hex(self, kind: str, start: int) -> str:
        p = self.p
        if p.startswith("{", self.i):
            end = p.find("}", self.i)
            digits = p[self.i + 1 : end] if end != -1 else ""
            self.i = end + 1 if end != -1 else len(p)
        else:
            width = {"x": 2, "u": 4, "U": 8}[kind]
            digits = p[self.i : self.i + width]
            if len(digits) < width:
                self.fail("hexadecimal literal is not a Unicode scalar value", start)
            self.i += width
        if not digits or not all(d in "0123456789abcdefABCDEF" for d in digits):
            self.fail("invalid hexadecimal digit", start)
        value = int(digits, 16)
        if value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
            self.fail("hexadecimal literal is not a Unicode scalar value", start)
        return chr(value)

    def _unicode_class(self, negated: bool, start: int) -> str:
        p = self.p
        if p.startswith("{", self.i):
            end = p.find("}", self.i)
            if end == -1:
                self.fail("unclosed Unicode class", start)
            name = p[self.i + 1 : end]
            self.i = end + 1
        elif self.i < len(p):
            name = p[self.i]
            self.i += 1
        else:
            self.fail("incomplete escape sequence, reached end of pattern prematurely", start)
        if name not in LETTER_CLASSES:
            self.fail("Unicode classes other than \\pL are not supported by the Python engine")
        return r"[\W\d_]" if negated else r"[^\W\d_]"

    # -- classes --------------------------------------------------------------------------

    def _class(self, flags: _Flags) -> str:
        """A bracketed class at ``[``, as a Python class."""
        body, negated, only_newlines = self._class_body(flags)
        if self.line_mode and not negated and only_newlines:
            raise errors.RegexError(NEWLINE_BANNED)
        return f"[{'^' if negated else ''}{body}]"

    def _class_body(self, flags: _Flags) -> tuple[str, bool, bool]:
        p, start = self.p, self.i
        self.i += 1
        negated = p.startswith("^", self.i)
        if negated:
            self.i += 1
        items: list[str] = []
        only_newlines = True
        first = True
        while True:
            if self.i >= len(p):
                self.fail("unclosed character class", start)
            c = p[self.i]
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            if c == "[" and p.startswith("[:", self.i):
                items.append(self._posix_class())
                only_newlines = False
                continue
            if c == "[":
                nested, nested_negated, nested_newlines = self._class_body(flags)
                if nested_negated:
                    self.fail("negated nested classes are not supported by the Python engine")
                items.append(nested)
                only_newlines = only_newlines and nested_newlines
                continue
            if p.startswith(("&&", "--", "~~"), self.i):
                self.fail("class set operations are not supported by the Python engine")
            low = self._class_item(flags)
            if len(low) > 1:  # a class escape such as \d
                items.append(low)
                only_newlines = False
                continue
            if p.startswith("-", self.i) and self.i + 1 < len(p) and p[self.i + 1] != "]":
                self.i += 1
                high = self._class_item(flags)
                if len(high) > 1:
                    self.fail("invalid character class range")
                if low > high:
                    self.fail("invalid character class range, the start must be <= the end")
                items.append(f"{_class_char(low)}-{_class_char(high)}")
                only_newlines = only_newlines and low == high == "\n"
                continue
            items.append(_class_char(low))
            only_newlines = only_newlines and low == "\n"
        return "".join(items), negated, only_newlines

    def _class_item(self, flags: _Flags) -> str:
        """One character of a class, or a class escape (longer than one character)."""
        p = self.p
        c = p[self.i]
        self.i += 1
        if c != "\\":
            return c
        start = self.i - 1
        if self.i >= len(p):
            self.fail("incomplete escape sequence, reached end of pattern prematurely", start)
        e = p[self.i]
        self.i += 1
        if e in "dswDSW":
            return "\\" + e
        if e in "pP":
            self.fail(
                "Unicode classes inside a class are not supported by the Python engine", start
            )
        return self._escaped_char(e, flags, start)

    def _posix_class(self) -> str:
        p, start = self.p, self.i
        end = p.find(":]", self.i + 2)
        if end == -1:
            self.fail("unclosed character class", start)
        name = p[self.i + 2 : end]
        self.i = end + 2
        if name.startswith("^"):
            self.fail("negated POSIX classes are not supported by the Python engine", start)
        if name not in POSIX_CLASSES:
            self.fail("invalid ASCII character class", start)
        return POSIX_CLASSES[name]


def _class_char(char: str) -> str:
    """A class member Python reads literally, whatever its neighbours."""
    return char if char.isalnum() and char.isascii() else f"\\U{ord(char):08x}"
