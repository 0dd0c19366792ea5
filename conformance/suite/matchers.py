"""Expectation matching: literals, matcher mappings, and event-order checks.

A literal expects exact JSON equality (``1`` is not ``true``, ``1`` is
``1.0``). A mapping with exactly one key that names a matcher is that matcher:

- ``{contains: s}``, ``{not_contains: s}``: substring tests on a string;
- ``{regex: r}``: ``re.search`` on a string;
- ``{json_subset: v}``: mappings recursively a subset, lists of equal length
  compared item by item, scalars equal; inside it a one-key matcher mapping is
  again a matcher, so ``{json_subset: {file: {content: {contains: x}}}}`` works;
- ``{equals: v}``: exact equality, also for mappings (the escape hatch when a
  literal mapping would look like a matcher);
- ``{shows: s}``: here, exact equality like the literal ``s``; it says the text
  is what a model is shown, which ``conformance.suite.levels`` also judges on
  the shown view (PROTO-LEVEL-1);
- ``{max_bytes: n}``: a string of at most n bytes in UTF-8;
- ``{absent: true}``: missing or null (``false``: present and not null);
- ``{any_of: [m, ...]}``, ``{all_of: [m, ...]}``.

Every check returns a list of ``Mismatch`` values, empty when it holds, so a
report can say where (``path``), what was expected and what was there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "MATCHERS",
    "MISSING",
    "Mismatch",
    "is_matcher",
    "match",
    "match_events",
]


class _Missing:
    """The value of a field that is not there at all (as opposed to null)."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<missing>"


MISSING: Final = _Missing()


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One failed expectation: where, what was expected, what was found.

    ``level`` is the level of the assertion it failed (``conformance.suite.checks``
    sets it: ``behaviour``, ``identity`` or ``rendering``), ``step`` the 1-based
    step it was found in (None: the final checks, or not known yet).
    """

    path: str
    expected: Any
    actual: Any
    message: str = ""
    level: str = ""
    step: int | None = None

    def __str__(self) -> str:
        detail = self.message or f"expected {_show(self.expected)}, got {_show(self.actual)}"
        return f"{self.path}: {detail}" if self.path else detail


def _show(value: Any, limit: int = 300) -> str:
    if value is MISSING:
        return "<missing>"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=repr)
    text = repr(text) if isinstance(value, str) else text
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _needs_string(name: str, expected: Any, actual: Any, path: str) -> list[Mismatch]:
    return [
        Mismatch(path, {name: expected}, actual, f"{name}: expected a string, got {_show(actual)}")
    ]


def _contains(expected: str, actual: Any, path: str) -> list[Mismatch]:
    if not isinstance(actual, str):
        return _needs_string("contains", expected, actual, path)
    if expected in actual:
        return []
    return [
        Mismatch(
            path, {"contains": expected}, actual, f"{_show(expected)} not found in {_show(actual)}"
        )
    ]


def _not_contains(expected: str, actual: Any, path: str) -> list[Mismatch]:
    if not isinstance(actual, str):
        return _needs_string("not_contains", expected, actual, path)
    if expected not in actual:
        return []
    message = f"{_show(expected)} found in {_show(actual)}"
    return [Mismatch(path, {"not_contains": expected}, actual, message)]


def _regex(expected: str, actual: Any, path: str) -> list[Mismatch]:
    if not isinstance(actual, str):
        return _needs_string("regex", expected, actual, path)
    if re.search(expected, actual):
        return []
    return [
        Mismatch(path, {"regex": expected}, actual, f"/{expected}/ does not match {_show(actual)}")
    ]


def _max_bytes(expected: int, actual: Any, path: str) -> list[Mismatch]:
    if not isinstance(actual, str):
        return _needs_string("max_bytes", expected, actual, path)
    size = len(actual.encode("utf-8", "surrogatepass"))
    if size <= expected:
        return []
    return [
        Mismatch(path, {"max_bytes": expected}, size, f"{size} bytes, at most {expected} expected")
    ]


def _absent(expected: bool, actual: Any, path: str) -> list[Mismatch]:
    gone = actual is MISSING or actual is None
    if gone == expected:
        return []
    message = (
        f"expected no value, got {_show(actual)}" if expected else "expected a value, got none"
    )
    return [Mismatch(path, {"absent": expected}, actual, message)]


def _any_of(expected: list[Any], actual: Any, path: str) -> list[Mismatch]:
    failures = [match(option, actual, path) for option in expected]
    if any(not f for f in failures):
        return []
    reasons = "; ".join(str(f[0]) for f in failures)
    return [Mismatch(path, {"any_of": expected}, actual, f"no alternative matched ({reasons})")]


def _all_of(expected: list[Any], actual: Any, path: str) -> list[Mismatch]:
    return [m for option in expected for m in match(option, actual, path)]


def _equals(expected: Any, actual: Any, path: str) -> list[Mismatch]:
    return _literal(expected, actual, path, subset=False)


def _json_subset(expected: Any, actual: Any, path: str) -> list[Mismatch]:
    return _literal(expected, actual, path, subset=True)


def _shows(expected: str, actual: Any, path: str) -> list[Mismatch]:
    return _literal(expected, actual, path, subset=False)


MATCHERS: Final[Mapping[str, Callable[[Any, Any, str], list[Mismatch]]]] = {
    "contains": _contains,
    "not_contains": _not_contains,
    "regex": _regex,
    "json_subset": _json_subset,
    "equals": _equals,
    "shows": _shows,
    "max_bytes": _max_bytes,
    "absent": _absent,
    "any_of": _any_of,
    "all_of": _all_of,
}
"""Matcher name -> check(expected operand, actual, path)."""


def is_matcher(value: Any) -> bool:
    """True for a mapping with exactly one key, and that key a matcher name."""
    return isinstance(value, Mapping) and len(value) == 1 and next(iter(value)) in MATCHERS


def match(expected: Any, actual: Any, path: str = "") -> list[Mismatch]:
    """Check ``actual`` against a literal or a matcher; ``MISSING`` stands for an absent field."""
    if is_matcher(expected):
        ((name, operand),) = expected.items()
        return MATCHERS[name](operand, actual, path)
    return _literal(expected, actual, path, subset=False)


def _literal(expected: Any, actual: Any, path: str, *, subset: bool) -> list[Mismatch]:
    if subset and is_matcher(expected):
        return match(expected, actual, path)
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            return [Mismatch(path, expected, actual, f"expected a mapping, got {_show(actual)}")]
        out: list[Mismatch] = []
        for key, want in expected.items():
            sub = f"{path}.{key}" if path else str(key)
            got = actual.get(key, MISSING)
            if got is MISSING and not (subset and is_matcher(want)):
                out.append(Mismatch(sub, want, MISSING, f"missing, expected {_show(want)}"))
            else:
                out.extend(_literal(want, got, sub, subset=subset))
        if not subset:
            for key in actual:
                if key not in expected:
                    sub = f"{path}.{key}" if path else str(key)
                    out.append(
                        Mismatch(sub, MISSING, actual[key], f"unexpected {_show(actual[key])}")
                    )
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return [Mismatch(path, expected, actual, f"expected a list, got {_show(actual)}")]
        if len(expected) != len(actual):
            message = f"expected {len(expected)} items, got {len(actual)}: {_show(actual)}"
            return [Mismatch(path, expected, actual, message)]
        return [
            m
            for i, (want, got) in enumerate(zip(expected, actual, strict=True))
            for m in _literal(want, got, f"{path}[{i}]", subset=subset)
        ]
    if _scalar_equal(expected, actual):
        return []
    return [Mismatch(path, expected, actual)]


def _scalar_equal(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return expected == actual
    return type(expected) is type(actual) and bool(expected == actual)


# -- events -----------------------------------------------------------------


def match_events(
    expect: Mapping[str, Any], events: Sequence[Mapping[str, Any]], path: str = "events"
) -> list[Mismatch]:
    """Check event-order expectations (``before``, ``overlap``, ``max_concurrent``,
    ``contains``, ``not_contains``, ``sequence``) against events in the order they happened.

    Only the order of events counts, never timestamps: ``before [a, b]`` means
    a's ``tool_end`` comes before b's ``tool_start``; ``overlap [a, b]`` means
    the two [tool_start, tool_end] spans intersect; ``max_concurrent n`` means
    at no point more than n tools are between start and end.
    """
    out: list[Mismatch] = []
    for i, (a, b) in enumerate(expect.get("before", ())):
        out.extend(_before(events, a, b, f"{path}.before[{i}]"))
    for i, (a, b) in enumerate(expect.get("overlap", ())):
        out.extend(_overlap(events, a, b, f"{path}.overlap[{i}]"))
    if "max_concurrent" in expect:
        limit = expect["max_concurrent"]
        peak = _peak(events)
        if peak > limit:
            message = (
                f"{peak} tools ran at once, at most {limit} expected; events: {_timeline(events)}"
            )
            out.append(Mismatch(f"{path}.max_concurrent", limit, peak, message))
    for i, pattern in enumerate(expect.get("contains", ())):
        if not any(not _json_subset(pattern, e, "") for e in events):
            message = f"no event matches {_show(pattern)}; events: {_timeline(events)}"
            out.append(Mismatch(f"{path}.contains[{i}]", pattern, list(events), message))
    for i, pattern in enumerate(expect.get("not_contains", ())):
        hits = [e for e in events if not _json_subset(pattern, e, "")]
        if hits:
            message = f"unexpected event {_show(hits[0])} matches {_show(pattern)}"
            out.append(Mismatch(f"{path}.not_contains[{i}]", pattern, hits, message))
    out.extend(_sequence(events, expect.get("sequence", ()), f"{path}.sequence"))
    return out


def _index(events: Sequence[Mapping[str, Any]], kind: str, tool_id: str) -> int | None:
    for i, event in enumerate(events):
        if event.get("type") == kind and event.get("id") == tool_id:
            return i
    return None


def _span(
    events: Sequence[Mapping[str, Any]], tool_id: str, path: str
) -> tuple[int, int] | Mismatch:
    start = _index(events, "tool_start", tool_id)
    end = _index(events, "tool_end", tool_id)
    if start is None or end is None:
        kind = "tool_start" if start is None else "tool_end"
        message = f"no {kind} event for {tool_id!r}; events: {_timeline(events)}"
        return Mismatch(path, f"{kind} {tool_id}", MISSING, message)
    return start, end


def _before(events: Sequence[Mapping[str, Any]], a: str, b: str, path: str) -> list[Mismatch]:
    span_a, span_b = _span(events, a, path), _span(events, b, path)
    if isinstance(span_a, Mismatch) or isinstance(span_b, Mismatch):
        return [s for s in (span_a, span_b) if isinstance(s, Mismatch)]
    if span_a[1] < span_b[0]:
        return []
    message = f"{a!r} must end before {b!r} starts; events: {_timeline(events)}"
    return [Mismatch(path, [a, b], _timeline(events), message)]


def _overlap(events: Sequence[Mapping[str, Any]], a: str, b: str, path: str) -> list[Mismatch]:
    span_a, span_b = _span(events, a, path), _span(events, b, path)
    if isinstance(span_a, Mismatch) or isinstance(span_b, Mismatch):
        return [s for s in (span_a, span_b) if isinstance(s, Mismatch)]
    if span_a[0] < span_b[1] and span_b[0] < span_a[1]:
        return []
    message = f"{a!r} and {b!r} never ran at the same time; events: {_timeline(events)}"
    return [Mismatch(path, [a, b], _timeline(events), message)]


def _peak(events: Sequence[Mapping[str, Any]]) -> int:
    running: set[Any] = set()
    peak = 0
    for event in events:
        if event.get("type") == "tool_start":
            running.add(event.get("id"))
            peak = max(peak, len(running))
        elif event.get("type") == "tool_end":
            running.discard(event.get("id"))
    return peak


def _sequence(
    events: Sequence[Mapping[str, Any]], patterns: Sequence[Any], path: str
) -> list[Mismatch]:
    position = 0
    for i, pattern in enumerate(patterns):
        while position < len(events) and _json_subset(pattern, events[position], ""):
            position += 1
        if position == len(events):
            message = (
                f"no event matching {_show(pattern)} after the ones matched before it; "
                f"events: {_timeline(events)}"
            )
            return [Mismatch(f"{path}[{i}]", pattern, list(events), message)]
        position += 1
    return []


def _timeline(events: Sequence[Mapping[str, Any]]) -> str:
    """A compact, readable rendering of an event list for failure messages."""
    parts = []
    for event in events:
        extra = {k: v for k, v in event.items() if k not in ("type", "id")}
        text = (
            f"{event.get('type')}({event.get('id')})" if "id" in event else str(event.get("type"))
        )
        if extra:
            text += json.dumps(extra, ensure_ascii=False, separators=(",", ":"))
        parts.append(text)
    return "[" + ", ".join(parts) + "]"
