"""A reproducible corpus of realistic text files for the token gate benchmarks.

The token gate (SPEC.md section 10) estimates first, as UTF-16 units / 4, and
counts exactly with ``cl100k_base`` only when needed. How good that estimate is,
and how much the exact count costs, depend on what the text is made of, so the
corpus has one kind per family of files whose tokens-per-character differ:

``source``
    Python-like modules: indented blocks, snake_case identifiers, type hints,
    string literals, comments and docstrings.
``prose``
    English paragraphs wrapped at 78 columns, with an occasional Markdown
    heading.
``json``
    A pretty-printed (``indent=2``) object holding an array of nested records.
``minified_js``
    A bundle on very few huge lines: a licence comment, then the code with no
    indentation, broken only past 32,000 characters (UglifyJS's default
    ``max_line_len``).
``cjk``
    Chinese text with CJK punctuation: paragraphs indented by two ideographic
    spaces, hard-wrapped into short lines, with a chapter heading now and then.
``long_lines``
    Lines of 3,000 to 20,000 characters: wide CSV rows, base64 data URIs and
    key=value log records.

Reproducibility: every draw comes from ``random.Random(seed).random()``, the
one method whose sequence the ``random`` module promises to keep across Python
versions for the same seed; integers and choices are derived from it here
rather than through ``randrange``, ``choice`` or ``shuffle``, whose algorithms
may change. Vocabularies are fixed tuples and nothing depends on ``hash()`` or
set order. Each kind is an endless stream that does not depend on the requested
size and is cut at it, so a shorter text of the same kind and seed is a prefix
of a longer one.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator, Sequence
from typing import Final, TypeVar

__all__ = ["KINDS", "generate"]

KINDS: Final[tuple[str, ...]] = ("source", "prose", "json", "minified_js", "cjk", "long_lines")

_T = TypeVar("_T")


class _Draw:
    """Integers, choices and coin flips derived from ``Random.random()`` alone."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)

    def unit(self) -> float:
        """A float in [0, 1)."""
        return self._rng.random()

    def below(self, n: int) -> int:
        """An integer in [0, n)."""
        return min(int(self._rng.random() * n), n - 1)

    def between(self, low: int, high: int) -> int:
        """An integer in [low, high], both ends included."""
        return low + self.below(high - low + 1)

    def pick(self, items: Sequence[_T]) -> _T:
        return items[self.below(len(items))]

    def chance(self, probability: float) -> bool:
        return self._rng.random() < probability


# --- shared English vocabulary (prose, comments, docstrings, messages) -------

_FUNCTION_WORDS: Final = (
    "the", "the", "the", "of", "of", "and", "and", "to", "to", "a", "a", "in", "in",
    "is", "that", "for", "it", "as", "with", "was", "on", "be", "by", "this", "are",
    "from", "or", "at", "which", "not", "but", "have", "an", "they", "can", "when",
    "more", "their", "has", "we", "its", "all", "into", "than", "most", "only",
)  # fmt: skip
_CONTENT_WORDS: Final = (
    "time", "people", "year", "way", "work", "system", "world", "life", "city",
    "number", "part", "place", "case", "group", "problem", "fact", "hand", "week",
    "company", "question", "government", "program", "water", "money", "story",
    "morning", "river", "history", "market", "library", "village", "engine",
    "window", "letter", "season", "garden", "journey", "evidence", "result",
    "reason", "method", "language", "pattern", "surface", "distance", "memory",
    "make", "take", "see", "know", "find", "give", "tell", "become", "leave",
    "feel", "bring", "begin", "keep", "hold", "write", "stand", "hear", "allow",
    "meet", "include", "continue", "change", "lead", "understand", "follow",
    "remember", "consider", "appear", "suggest", "describe", "explain", "carry",
    "produce", "measure", "reach", "return", "open", "close", "build", "remain",
    "good", "new", "first", "last", "long", "great", "little", "old", "right",
    "large", "small", "different", "important", "early", "public", "possible",
    "certain", "quiet", "careful", "simple", "narrow", "ordinary", "recent",
    "difficult", "familiar", "available", "particular", "general", "entire",
    "often", "still", "never", "always", "however", "perhaps", "already",
    "slowly", "rather", "almost", "together", "usually", "finally", "again",
    "between", "through", "during", "without", "against", "under", "around",
    "after", "before", "across", "toward", "because", "although", "while",
)  # fmt: skip
_RARE_WORDS: Final = (
    "archaeologists", "photosynthesis", "unremarkable", "counterintuitive",
    "overestimated", "ferrymen", "quayside", "bookbinding", "cartographers",
    "handwritten", "misremembered", "semi-permanent", "well-known", "re-examined",
    "company's", "didn't", "it's", "wasn't", "they'd", "nineteenth-century",
    "watermills", "shipwrights", "sandbanks", "pre-war", "long-term", "outlived",
)  # fmt: skip
_PROPER_NOUNS: Final = (
    "London", "Maria", "the Council", "Lisbon", "Professor Hale", "the Board",
    "Kyoto", "Daniel", "the Institute", "Oslo", "Amara", "the Ministry",
)  # fmt: skip


def _sentence(draw: _Draw, low: int, high: int, *, rich: bool = True) -> str:
    """An English-looking sentence of ``low`` to ``high`` words, capitalized, with its stop."""
    words: list[str] = []
    count = draw.between(low, high)
    for index in range(count):
        if rich and draw.chance(0.03):
            word = draw.pick(_PROPER_NOUNS)
        elif rich and draw.chance(0.02):
            word = str(draw.between(2, 1999))
        elif rich and draw.chance(0.2):
            word = draw.pick(_RARE_WORDS)
        elif draw.chance(0.42):
            word = draw.pick(_FUNCTION_WORDS)
        else:
            word = draw.pick(_CONTENT_WORDS)
        if 2 < index < count - 2 and draw.chance(0.07):
            word += ","
        words.append(word)
    if rich and count > 6 and draw.chance(0.1):
        start = draw.between(2, count - 3)
        words[start] = "(" + words[start]
        words[start + 1] = words[start + 1].rstrip(",") + ")"
    if rich and count > 5 and draw.chance(0.06):
        at = draw.between(1, count - 2)
        words[at] = '"' + words[at].rstrip(",") + '"'
    words[0] = words[0][:1].upper() + words[0][1:]
    words[-1] = words[-1].rstrip(",")
    return " ".join(words) + ("." if draw.chance(0.9) else draw.pick(("?", "!")))


def _wrap(text: str, width: int) -> list[str]:
    """Greedy word wrap (kept here so no library's wrapping rules can change the corpus)."""
    lines: list[str] = []
    current = ""
    for word in text.split(" "):
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        lines.append(current)
    return lines


# --- source ------------------------------------------------------------------

_NOUNS: Final = (
    "user", "account", "cache", "request", "response", "item", "record", "buffer",
    "path", "config", "token", "session", "batch", "event", "handler", "queue",
    "index", "value", "result", "payload", "entry", "node", "limit", "offset",
    "count", "name", "key", "timeout", "state", "message", "schema", "column",
    "row", "file", "line", "chunk", "worker", "task", "job", "client", "header",
)  # fmt: skip
_VERBS: Final = (
    "get", "load", "parse", "build", "update", "fetch", "resolve", "validate",
    "render", "flush", "merge", "apply", "compute", "encode", "decode", "scan",
    "emit", "collect", "register", "normalize", "split", "format", "check",
    "read", "write", "reset", "find", "iter",
)  # fmt: skip
_CLASS_SUFFIXES: Final = (
    "Manager", "Store", "Client", "Parser", "Builder", "Handler", "Registry",
    "Index", "Service", "Buffer", "Config", "Cache", "Reader", "Writer",
)  # fmt: skip
_TYPES: Final = (
    "str", "int", "bool", "bytes", "float", "list[str]", "dict[str, Any]",
    "Path", "int | None", "str | None", "Sequence[int]", "Mapping[str, str]",
)  # fmt: skip
_IMPORTS: Final = (
    "import json",
    "import logging",
    "import os",
    "import re",
    "import time",
    "from collections.abc import Iterator, Mapping, Sequence",
    "from dataclasses import dataclass, field",
    "from pathlib import Path",
    "from typing import Any",
)
_EXCEPTIONS: Final = ("ValueError", "KeyError", "TypeError", "RuntimeError", "OSError")
_LOG_LEVELS: Final = ("debug", "info", "warning")
_LIBRARY_CALLS: Final = (
    "os.path.join({a}, {b})",
    "json.dumps({a}, sort_keys=True)",
    're.sub(r"\\s+", " ", {a})',
    "time.monotonic() - {a}",
    'Path({a}).with_suffix(".json")',
    "sorted({a}, key=lambda entry: entry.{n})",
    "min({a}, {b})",
    "isinstance({a}, (list, tuple))",
    "{a}.strip().lower()",
    '{a}.encode("utf-8")',
    "dict.fromkeys({a}, 0)",
    "sum(1 for _ in {a})",
)


def _snake(draw: _Draw, parts: int) -> str:
    return "_".join(draw.pick(_NOUNS) for _ in range(parts))


def _var(draw: _Draw, names: list[str]) -> str:
    if names and draw.chance(0.75):
        return draw.pick(names)
    return _snake(draw, draw.between(1, 2))


def _literal(draw: _Draw) -> str:
    roll = draw.below(4)
    if roll == 0:
        return f'"{draw.pick(_NOUNS)}"'
    if roll == 1:
        return f'"{draw.pick(_NOUNS)}-{draw.pick(_VERBS)}"'
    if roll == 2:
        return f'"{_sentence(draw, 2, 5, rich=False)[:-1].lower()}"'
    return f'"{draw.pick(_NOUNS)}.{draw.pick(("json", "txt", "log", "csv"))}"'


def _expr(draw: _Draw, names: list[str]) -> str:
    a = _var(draw, names)
    roll = draw.below(19)
    if roll == 16:
        return f"{{k: v for k, v in {a}.items() if v is not None}}"
    if roll == 17:
        return f'f"{{{a}:>{draw.between(2, 12)}}} {{{_var(draw, names)}!s}}"'
    if roll == 18:
        return f"{draw.pick(_VERBS)}_{draw.pick(_NOUNS)}(*{a}, **{_var(draw, names)})"
    if roll == 11:
        return f"{a}[{draw.pick(('0', '-1', '1:', ':limit', 'key', 'index + 1'))}]"
    if roll == 12:
        keyword = draw.pick(_NOUNS)
        return f"self.{draw.pick(_VERBS)}({a}, {keyword}={_var(draw, names)})"
    if roll == 13:
        return f"({a}, {_var(draw, names)})"
    if roll == 14:
        return f"{a} == {_var(draw, names)} and {_var(draw, names)} is not None"
    if roll == 15:
        return f"{a}.{draw.pick(_NOUNS)}.{draw.pick(_VERBS)}()"
    if roll == 0:
        return f"self._{draw.pick(_NOUNS)}"
    if roll == 1:
        return f"{a} + {draw.between(1, 64)}"
    if roll == 2:
        return f"len({a})"
    if roll == 3:
        return f"{draw.pick(_VERBS)}_{draw.pick(_NOUNS)}({a}, {_var(draw, names)})"
    if roll == 4:
        return _literal(draw)
    if roll == 5:
        return f'{a}.get("{draw.pick(_NOUNS)}", {draw.pick(("None", "0", "{}", "[]"))})'
    if roll == 6:
        return f"[item.{draw.pick(_NOUNS)} for item in {a} if item]"
    if roll == 7:
        return str(draw.pick((0, 1, 2, 8, 16, 100, 256, 1024, 4096, 65536)))
    if roll == 8:
        template = draw.pick(_LIBRARY_CALLS)
        return template.format(a=a, b=_var(draw, names), n=draw.pick(_NOUNS))
    if roll == 9:
        return f'{{"{draw.pick(_NOUNS)}": {a}, "{draw.pick(_NOUNS)}": {_var(draw, names)}}}'
    return f'f"{draw.pick(_NOUNS)}={{{a}!r}}"'


def _condition(draw: _Draw, names: list[str]) -> str:
    a = _var(draw, names)
    roll = draw.below(6)
    if roll == 0:
        return f"{a} is None"
    if roll == 1:
        return f"not {a}"
    if roll == 2:
        return f"{a} > {draw.pick((0, 1, 10, 100, 1000))}"
    if roll == 3:
        return f"isinstance({a}, {draw.pick(('str', 'int', 'dict', 'bytes'))})"
    if roll == 4:
        return f"{a} in self._{draw.pick(_NOUNS)}s"
    return f'{a}.startswith("{draw.pick(_NOUNS)}")'


def _indent(lines: list[str]) -> list[str]:
    return [f"    {line}" if line else line for line in lines]


def _statement(draw: _Draw, names: list[str], depth: int) -> list[str]:
    roll = draw.below(12 if depth < 2 else 6)
    if roll in (0, 1):
        target = _snake(draw, draw.between(1, 2))
        names.append(target)
        return [f"{target} = {_expr(draw, names)}"]
    if roll == 2:  # a comment always comes before a statement, so no block is only comments
        return [f"# {_sentence(draw, 3, 9, rich=False)}", *_statement(draw, names, depth)]
    if roll == 3:
        level = draw.pick(_LOG_LEVELS)
        words = _sentence(draw, 2, 6, rich=False)[:-1].lower()
        return [f'logger.{level}("{words}: %s", {_var(draw, names)})']
    if roll == 4:
        if draw.chance(0.5):
            return [f"self._{draw.pick(_NOUNS)}s[{_var(draw, names)}] = {_expr(draw, names)}"]
        return [f"self._{draw.pick(_NOUNS)} = {_expr(draw, names)}"]
    if roll == 5:
        if draw.chance(0.5):
            target = _snake(draw, 1)
            names.append(target)
            return [f"{target}: {draw.pick(_TYPES)} = {_expr(draw, names)}"]
        if draw.chance(0.5):
            return [f"assert {_condition(draw, names)}, {_var(draw, names)}"]
        return [f"{_var(draw, names)} += {draw.between(1, 9)}"]
    if roll in (6, 7):
        lines = [f"if {_condition(draw, names)}:", *_indent(_block(draw, names, depth + 1))]
        if draw.chance(0.3):
            lines += ["else:", *_indent(_block(draw, names, depth + 1))]
        return lines
    if roll == 8:
        item = draw.pick(_NOUNS)
        names.append(item)
        header = f"for {item} in {_var(draw, names)}:"
        return [header, *_indent(_block(draw, names, depth + 1))]
    if roll == 9:
        body = ["data = handle.read()", *_block(draw, [*names, "data"], depth + 1)]
        return [f'with open({_var(draw, names)}, encoding="utf-8") as handle:', *_indent(body)]
    if roll == 10:
        error = draw.pick(_EXCEPTIONS)
        lines = ["try:", *_indent(_block(draw, names, depth + 1))]
        lines += [f"except {error} as exc:", *_indent(_raise(draw, names, "exc"))]
        return lines
    return _raise(draw, names, None)


def _raise(draw: _Draw, names: list[str], cause: str | None) -> list[str]:
    error = draw.pick(_EXCEPTIONS)
    words = _sentence(draw, 2, 6, rich=False)[:-1].lower()
    suffix = f" from {cause}" if cause else ""
    return [f'raise {error}(f"{words}: {{{_var(draw, names)}!r}}"){suffix}']


def _block(draw: _Draw, names: list[str], depth: int) -> list[str]:
    lines: list[str] = []
    for index in range(draw.between(1, 6) if depth < 2 else draw.between(1, 2)):
        if depth == 1 and index and draw.chance(0.25):
            lines.append("")  # a blank line between steps of a function body
        lines += _statement(draw, names, depth)
    return lines


def _function(draw: _Draw, *, method: bool) -> list[str]:
    name = f"{draw.pick(_VERBS)}_{_snake(draw, draw.between(1, 2))}"
    decorator = ""
    if draw.chance(0.15):
        decorator = draw.pick(("@property", "@staticmethod")) if method else "@functools.cache"
    count = 0 if decorator == "@property" else draw.between(0, 3)
    params = list(dict.fromkeys(_snake(draw, 1) for _ in range(count)))  # no repeated names
    typed = [f"{param}: {draw.pick(_TYPES)}" for param in params]
    if typed and draw.chance(0.3):  # only the last parameter gets a default
        typed[-1] += f" = {draw.pick(('None', '0', 'False', repr(draw.pick(_NOUNS))))}"
    receiver = ["self"] if method and decorator != "@staticmethod" else []
    lines = [decorator] if decorator else []
    lines.append(f"def {name}({', '.join(receiver + typed)}) -> {draw.pick(_TYPES)}:")
    body = [f'"""{_sentence(draw, 3, 10, rich=False)}"""'] if draw.chance(0.7) else []
    names = list(params)
    body += _block(draw, names, 1)
    body.append(f"return {_expr(draw, names)}")
    return lines + _indent(body)


def _class(draw: _Draw) -> list[str]:
    name = draw.pick(_NOUNS).capitalize() + draw.pick(_CLASS_SUFFIXES)
    lines = [f"class {name}:", f'    """{_sentence(draw, 6, 16, rich=False)}"""', ""]
    fields = list(dict.fromkeys(_snake(draw, 1) for _ in range(draw.between(1, 4))))
    params = ", ".join(f"{field}: {draw.pick(_TYPES)}" for field in fields)
    init = [f"def __init__(self, {params}) -> None:"]
    init += [f"    self._{f} = {f}" for f in fields]
    lines += _indent(init)
    for _ in range(draw.between(2, 5)):
        lines += ["", *_indent(_function(draw, method=True))]
    return lines


def _source(draw: _Draw) -> Iterator[str]:
    header = [
        f'"""{_sentence(draw, 6, 14, rich=False)}"""',
        "",
        "from __future__ import annotations",
    ]
    header += ["", "import functools", *_IMPORTS, "", "logger = logging.getLogger(__name__)"]
    yield "\n".join(header) + "\n"
    while True:
        roll = draw.below(10)
        if roll < 3:
            lines = _class(draw)
        elif roll < 9:
            lines = _function(draw, method=False)
        else:
            constant = f"{draw.pick(_NOUNS)}_{draw.pick(_NOUNS)}".upper()
            lines = [f"DEFAULT_{constant} = {_expr(draw, [])}"]
        yield "\n\n" + "\n".join(lines) + "\n"


# --- prose -------------------------------------------------------------------


def _prose(draw: _Draw) -> Iterator[str]:
    paragraphs_since_heading = 0
    first = True
    while True:
        if paragraphs_since_heading >= draw.between(4, 9):
            title = _sentence(draw, 2, 5, rich=False)[:-1]
            yield ("" if first else "\n") + f"## {title}\n"
            paragraphs_since_heading = 0
        sentences = [_sentence(draw, 6, 28) for _ in range(draw.between(2, 7))]
        yield ("" if first else "\n") + "\n".join(_wrap(" ".join(sentences), 78)) + "\n"
        paragraphs_since_heading += 1
        first = False


# --- json --------------------------------------------------------------------

_FIRST_NAMES: Final = (
    "Ada", "Bruno", "Chen", "Dalia", "Emeka", "Farah", "Goran", "Hana", "Ivo",
    "Jasmin", "Kofi", "Lena", "Mateo", "Nadia", "Omar", "Priya", "Quinn", "Rosa",
)  # fmt: skip
_LAST_NAMES: Final = (
    "Alvarez", "Becker", "Costa", "Dubois", "Eriksen", "Fischer", "Garcia",
    "Haddad", "Ito", "Jensen", "Kowalski", "Larsen", "Moreau", "Nakamura",
)  # fmt: skip
_CITIES: Final = (
    ("Lisbon", "PT"), ("Lyon", "FR"), ("Osaka", "JP"), ("Porto Alegre", "BR"),
    ("Leeds", "GB"), ("Graz", "AT"), ("Austin", "US"), ("Pune", "IN"),
)  # fmt: skip
_STREETS: Final = ("Oak", "Harbor", "Mill", "Station", "Church", "Maple", "River")
_ROLES: Final = ("admin", "editor", "viewer", "owner", "billing", "support")
_DOMAINS: Final = ("example.com", "example.org", "mail.example.net")


def _hex(draw: _Draw, digits: int) -> str:
    return "".join(draw.pick("0123456789abcdef") for _ in range(digits))


def _timestamp(draw: _Draw) -> str:
    return (
        f"20{draw.between(19, 24)}-{draw.between(1, 12):02d}-{draw.between(1, 28):02d}"
        f"T{draw.between(0, 23):02d}:{draw.between(0, 59):02d}:{draw.between(0, 59):02d}Z"
    )


def _record(draw: _Draw, record_id: int) -> dict[str, object]:
    first, last = draw.pick(_FIRST_NAMES), draw.pick(_LAST_NAMES)
    city, country = draw.pick(_CITIES)
    orders = [
        {
            "order_id": f"ORD-{draw.between(10_000, 99_999)}",
            "placed_at": _timestamp(draw),
            "total": round(draw.unit() * 500, 2),
            "currency": draw.pick(("EUR", "USD", "JPY", "GBP")),
            "items": [
                {"sku": f"SKU-{_hex(draw, 6).upper()}", "quantity": draw.between(1, 5)}
                for _ in range(draw.between(1, 3))
            ],
        }
        for _ in range(draw.between(0, 2))
    ]
    return {
        "id": record_id,
        "uuid": "-".join(_hex(draw, n) for n in (8, 4, 4, 4, 12)),
        "name": f"{first} {last}",
        "email": f"{first.lower()}.{last.lower()}@{draw.pick(_DOMAINS)}",
        "active": draw.chance(0.8),
        "role": draw.pick(_ROLES),
        "score": round(draw.unit() * 100, 2),
        "created_at": _timestamp(draw),
        "tags": [draw.pick(_NOUNS) for _ in range(draw.between(0, 4))],
        "address": {
            "street": f"{draw.between(1, 400)} {draw.pick(_STREETS)} Street",
            "city": city,
            "postal_code": str(draw.between(10_000, 99_999)),
            "country": country,
        },
        "preferences": {
            "theme": draw.pick(("light", "dark", "system")),
            "language": draw.pick(("en-GB", "pt-PT", "fr-FR", "ja-JP")),
            "notifications": {"email": draw.chance(0.5), "sms": draw.chance(0.2)},
        },
        "orders": orders,
        "notes": _sentence(draw, 4, 14, rich=False) if draw.chance(0.3) else None,
    }


def _json(draw: _Draw) -> Iterator[str]:
    yield '{\n  "version": 2,\n  "generated_at": "2024-05-01T00:00:00Z",\n  "records": [\n'
    record_id = 1000
    separator = ""
    while True:
        record_id += draw.between(1, 5)
        pretty = json.dumps(_record(draw, record_id), indent=2)
        yield separator + "\n".join(f"    {line}" for line in pretty.split("\n"))
        separator = ",\n"


# --- minified_js -------------------------------------------------------------

_JS_MAX_LINE: Final = 32_000  # UglifyJS's default max_line_len
_JS_NAMES: Final = tuple("etnroiasuclfdphmgvyb_$")  # the single letters minifiers hand out
_JS_PROPS: Final = (
    "length", "prototype", "push", "call", "apply", "forEach", "map", "filter",
    "reduce", "indexOf", "slice", "concat", "toString", "hasOwnProperty", "then",
    "createElement", "querySelector", "setAttribute", "className", "innerHTML",
    "value", "target", "nodeType", "parentNode", "children", "dataset", "exports",
)  # fmt: skip
_JS_METHODS: Final = (
    "render", "update", "mount", "destroy", "emit", "on", "off", "setState",
    "getItem", "resolve", "dispatch", "subscribe", "init", "bind", "toJSON",
)  # fmt: skip
_JS_STRINGS: Final = (
    "click", "div", "span", "data-id", "none", "block", "hidden", "active",
    "[object Array]", "function", "object", "undefined", "change", "keydown",
    "aria-expanded", "application/json", "Content-Type", "GET", "POST",
)  # fmt: skip
_JS_MESSAGES: Final = (
    "Cannot call a class as a function",
    "Invalid attempt to spread non-iterable instance",
    "Expected a function",
    "Super expression must either be null or a function",
    "Unexpected token",
    "Request failed with status code",
)
_JS_EVENTS: Final = ("click", "keydown", "input", "submit", "resize", "scroll", "load")
_JS_CSS: Final = (
    ("display", "none"), ("opacity", "0"), ("width", "100%"), ("height", "auto"),
    ("transform", "translateX(-50%)"), ("zIndex", "1000"), ("position", "absolute"),
)  # fmt: skip


def _js_statement(draw: _Draw) -> str:
    a, b, c = draw.pick(_JS_NAMES), draw.pick(_JS_NAMES), draw.pick(_JS_NAMES)
    roll = draw.below(14)
    if roll == 0:
        return f"var {a}={b}.{draw.pick(_JS_PROPS)}({c})"
    if roll == 1:
        return f'if(!{a})throw new TypeError("{draw.pick(_JS_MESSAGES)}")'
    if roll == 2:
        return f"for(var {a}=0,{b}={c}.length;{a}<{b};{a}++)r.push({c}[{a}])"
    if roll == 3:
        event = draw.pick(_JS_EVENTS)
        method = draw.pick(_JS_METHODS)
        handler = f"function(e){{e.preventDefault(),{b}.{method}(e.target)}}"
        return f'{a}.addEventListener("{event}",{handler},!1)'
    if roll == 4:
        method, prop = draw.pick(_JS_METHODS), draw.pick(_JS_PROPS)
        return f"{a}.prototype.{method}=function({b}){{return this.{prop}={b},this}}"
    if roll == 5:
        getter = f"{{enumerable:!0,get:function(){{return {a}}}}}"
        return f'Object.defineProperty(t,"{draw.pick(_JS_METHODS)}",{getter})'
    if roll == 6:
        return f"{a}={a}||{{}}"
    if roll == 7:
        return f'{a}.{draw.pick(_JS_PROPS)}="{draw.pick(_JS_STRINGS)}"'
    if roll == 8:
        return f"{a}=({b}&{draw.between(1, 65535)})>>>{draw.between(1, 24)}"
    if roll == 9:
        numbers = ",".join(str(draw.between(0, 4095)) for _ in range(draw.between(3, 12)))
        return f"{a}=[{numbers}]"
    if roll == 10:
        prop, value = draw.pick(_JS_CSS)
        return f'{a}.style.{prop}="{value}"'
    if roll == 11:
        return f'{a}="function"==typeof {b}?{b}({c}):{c}'
    if roll == 12:
        return f"{a}=new Promise(function(r,j){{setTimeout(r,{draw.between(1, 5000)})}})"
    return f'{a}[{b}]={c}.{draw.pick(_JS_PROPS)}?"{draw.pick(_JS_STRINGS)}":{draw.between(0, 9)}'


def _js_module(draw: _Draw, module_id: int) -> str:
    statements = ";".join(_js_statement(draw) for _ in range(draw.between(4, 24)))
    result = draw.pick(("e.exports=r", "t.default=o", f"return {draw.pick(_JS_NAMES)}"))
    return f'{module_id}:function(e,t,n){{"use strict";{statements};{result}}}'


def _minified_js(draw: _Draw) -> Iterator[str]:
    yield "/*! bench-bundle v4.2.1 | (c) 2024 The Bench Authors | MIT License */\n"
    line = (  # a webpack 4 style runtime, then the module table it is called with
        "!function(e){var t={};function n(r){if(t[r])return t[r].exports;"
        "var o=t[r]={i:r,l:!1,exports:{}};return e[r].call(o.exports,o,o.exports,n),"
        "o.l=!0,o.exports}n.m=e,n.c=t,n(n.s=0)}({"
    )
    yield line
    width = len(line)
    module_id = 0
    while True:
        piece = ("," if module_id else "") + _js_module(draw, module_id)
        module_id += draw.between(1, 3)
        if width + len(piece) > _JS_MAX_LINE:
            yield "\n"
            width = 0
        yield piece
        width += len(piece)


# --- cjk ---------------------------------------------------------------------

_ZH_NOUNS: Final = (
    "时间", "问题", "工作", "系统", "数据", "文件", "方法", "世界", "国家", "社会",
    "经济", "技术", "历史", "文化", "城市", "学生", "老师", "朋友", "家庭", "孩子",
    "生活", "环境", "市场", "公司", "研究", "科学", "语言", "文字", "信息", "网络",
    "程序", "代码", "用户", "服务", "产品", "结果", "过程", "原因", "条件", "关系",
    "方面", "能力", "水平", "标准", "目标", "计划", "方向", "山水", "天空", "河流",
    "春天", "秋天", "月亮", "太阳", "早上", "晚上", "故事", "音乐", "道路", "窗户",
)  # fmt: skip
_ZH_VERBS: Final = (
    "认为", "进行", "发现", "需要", "开始", "知道", "希望", "觉得", "表示", "提出",
    "解决", "完成", "建立", "提高", "增加", "改变", "保持", "学习", "讨论", "分析",
    "理解", "使用", "处理", "记录", "检查", "读取", "写入", "运行", "等待", "继续",
    "出现", "离开", "回来", "看到", "听到", "告诉", "走过", "想起",
)  # fmt: skip
_ZH_MODIFIERS: Final = (
    "重要的", "主要的", "基本的", "简单的", "复杂的", "明显的", "新的", "旧的",
    "美丽的", "安静的", "已经", "正在", "非常", "特别", "一直", "终于", "仍然",
    "其实", "慢慢地", "很快",
)  # fmt: skip
_ZH_LINKS: Final = (
    "的", "了", "在", "是", "和", "也", "就", "都", "不", "有", "这个", "那些",
    "我们", "他们", "她", "一个", "之后", "之前", "中", "上", "里", "对", "把",
    "被", "从", "向", "给", "为了",
)  # fmt: skip
_ZH_OPENERS: Final = (
    "但是", "而且", "如果", "虽然", "所以", "然后", "同时", "因此", "后来", "其实",
)  # fmt: skip
_ZH_DIGITS: Final = "零一二三四五六七八九"
_ZH_NO_LINE_START: Final = "，。！？、；：」』”》）"


def _zh_number(value: int) -> str:
    """1 to 99 in Chinese numerals (十, 十二, 二十, 二十三)."""
    tens, ones = divmod(value, 10)
    head = "" if tens == 0 else ("十" if tens == 1 else _ZH_DIGITS[tens] + "十")
    return head + (_ZH_DIGITS[ones] if ones else "")


def _zh_clause(draw: _Draw) -> str:
    parts: list[str] = []
    if draw.chance(0.3):
        parts.append(draw.pick(_ZH_OPENERS))
    for _ in range(draw.between(2, 5)):
        roll = draw.below(10)
        if roll < 3:
            parts.append(draw.pick(_ZH_NOUNS))
        elif roll < 5:
            parts.append(draw.pick(_ZH_VERBS))
        elif roll < 6:
            parts.append(draw.pick(_ZH_MODIFIERS))
        elif roll < 9:
            parts.append(draw.pick(_ZH_LINKS))
        else:
            parts.append(draw.pick(("“", "「", "《")))
            parts.append(draw.pick(_ZH_NOUNS) + draw.pick(_ZH_NOUNS))
            parts.append({"“": "”", "「": "」", "《": "》"}[parts[-2]])
    if draw.chance(0.08):
        parts.append(f"{draw.between(1990, 2024)}年")
    if draw.chance(0.15):
        parts.append(draw.pick(_ZH_NOUNS) + "、" + draw.pick(_ZH_NOUNS))
    return "".join(parts)


def _zh_sentence(draw: _Draw) -> str:
    clauses = [_zh_clause(draw) for _ in range(draw.between(1, 4))]
    return "，".join(clauses) + draw.pick(("。", "。", "。", "。", "。", "！", "？", "；"))


def _zh_wrap(text: str, width: int) -> list[str]:
    """Cut every ``width`` characters, keeping closing punctuation off a line's start."""
    lines: list[str] = []
    start = 0
    while start < len(text):
        end = min(start + width, len(text))
        while end < len(text) and text[end] in _ZH_NO_LINE_START:
            end += 1
        lines.append(text[start:end])
        start = end
    return lines


def _cjk(draw: _Draw) -> Iterator[str]:
    chapter = 1
    until_heading = 0
    while True:
        if until_heading == 0:
            title = draw.pick(_ZH_NOUNS) + draw.pick(_ZH_LINKS) + draw.pick(_ZH_NOUNS)
            lead = "\n" if chapter > 1 else ""
            yield f"{lead}第{_zh_number(chapter)}章\u3000{title}\n\n"
            chapter = chapter % 99 + 1
            until_heading = draw.between(8, 20)
        sentences = "".join(_zh_sentence(draw) for _ in range(draw.between(2, 6)))
        lines = _zh_wrap("\u3000\u3000" + sentences, draw.between(18, 32))
        yield "\n".join(lines) + "\n"
        until_heading -= 1


# --- long_lines --------------------------------------------------------------

_LONG_MIN: Final = 3_000
_LONG_MAX: Final = 20_000
_BASE64: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_LOG_KEYS: Final = (
    "request_id", "user", "status", "latency_ms", "bytes", "route", "region",
    "shard", "attempt", "cache", "trace", "span",
)  # fmt: skip


def _csv_field(draw: _Draw) -> str:
    roll = draw.below(6)
    if roll == 0:
        return str(draw.between(0, 1_000_000))
    if roll == 1:
        return f"{draw.unit() * 1000 - 500:.4f}"
    if roll == 2:
        return draw.pick(_CONTENT_WORDS)
    if roll == 3:
        return _timestamp(draw)[:10]
    if roll == 4:
        return f'"{draw.pick(_FIRST_NAMES)} {draw.pick(_LAST_NAMES)}"'
    return draw.pick(("", "NA", "true", "false", "0"))


def _fill(draw: _Draw, start: str, target: int, field: Callable[[_Draw], str], sep: str) -> str:
    """``start`` then fields of at most 40 characters until ``target`` is reached."""
    parts = [start]
    width = len(start)
    while width < target:
        value = field(draw)
        parts.append(value)
        width += len(value) + len(sep)
    return sep.join(parts)


def _log_pair(draw: _Draw) -> str:
    key = draw.pick(_LOG_KEYS)
    return f"{key}={draw.pick((str(draw.between(0, 99_999)), _hex(draw, 16), draw.pick(_NOUNS)))}"


def _long_lines(draw: _Draw) -> Iterator[str]:
    while True:
        target = draw.between(_LONG_MIN, _LONG_MAX - 100)  # a last field may overshoot by 41
        roll = draw.below(3)
        if roll == 0:
            line = _fill(draw, _csv_field(draw), target, _csv_field, ",")
        elif roll == 1:
            mime = draw.pick(("image/png", "font/woff2", "application/octet-stream"))
            head = f'"asset-{_hex(draw, 8)}","data:{mime};base64,'
            body = "".join(draw.pick(_BASE64) for _ in range(target - len(head) - 1))
            line = head + body + '"'
        else:
            head = f"{_timestamp(draw)} INFO gateway: batch"
            line = _fill(draw, head, target, _log_pair, " ")
        yield line + "\n"


_STREAMS: Final[dict[str, Callable[[_Draw], Iterator[str]]]] = {
    "source": _source,
    "prose": _prose,
    "json": _json,
    "minified_js": _minified_js,
    "cjk": _cjk,
    "long_lines": _long_lines,
}


def generate(kind: str, size: int, seed: int = 0) -> str:
    """The text of one corpus file of ``kind``, about ``size`` bytes in UTF-8.

    Its UTF-8 encoding is between ``size - 4`` and ``size`` bytes long: the
    stream is cut at ``size`` bytes, backed off to the start of a character
    when the cut falls inside one (at most 3 bytes for a CJK character). The
    cut may fall anywhere, so the last line is usually incomplete and a
    ``json`` text is a valid document only up to its last complete record.
    The same arguments give the same text on every machine and Python
    version, and a smaller ``size`` gives a prefix of a larger one.

    Raises ``ValueError`` for a kind not in :data:`KINDS` or a negative size.
    """
    stream = _STREAMS.get(kind)
    if stream is None:
        raise ValueError(f"unknown corpus kind {kind!r}; expected one of {', '.join(KINDS)}")
    if size < 0:
        raise ValueError(f"size must be at least 0, not {size}")
    pieces = stream(_Draw(seed))
    encoded: list[bytes] = []
    total = 0
    while total < size:
        chunk = next(pieces).encode("utf-8")
        encoded.append(chunk)
        total += len(chunk)
    data = b"".join(encoded)
    cut = min(size, len(data))
    while cut < len(data) and data[cut] & 0xC0 == 0x80:  # inside a multi-byte character
        cut -= 1
    return data[:cut].decode("utf-8")
