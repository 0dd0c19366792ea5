"""Checking an answer against a step's ``expect``, one assertion at a time, each with a level.

The fields a scenario can name, what each one reads from the answer, and the
level of the assertion it makes (SPEC.md PROTO-LEVEL-1); where a field says
"by part", ``conformance.suite.levels`` gives each part of the expectation
its level:

================  ==========================================  ==========================
field             reads                                       level
================  ==========================================  ==========================
``is_error``      ``tool_result.is_error`` (absent: false)    behaviour
``content``       the text of ``tool_result.content``: the    by part: behaviour on the
                  string, or its text blocks joined with      shown view, rendering on
                  ``"\\n"``                                    the raw text
``blocks``        ``tool_result.content`` as blocks           rendering
``stage``         ``outcome.stage``                           identity
``error_code``    ``outcome.error_code`` (absent: null)       identity
``error_name``    ``outcome.error_name`` (absent: null)       identity
``dedup``         ``outcome.dedup`` (absent: false)           behaviour
``output``        the answer's ``output``, else               rendering
                  ``outcome.output``
``outcome``       the whole ``outcome``, one assertion per    ``dedup``: behaviour (and
                  top-level key of the expectation            identity on whether it is
                                                              written out), ``output``:
                                                              rendering, every other
                                                              key: identity
``tool_result``   the whole ``tool_result``                   rendering
``events``        event checks (``matchers.match_events``),   by part: behaviour, or
                  one assertion per check                     identity for calls that
                                                              never started
``batches``       the message's partition                     behaviour
(echoed id)       every result echoes its tool_use id         behaviour
``tools`` step    the ``tools`` answer                        rendering
``raw`` step      the whole answer                            rendering
final files       bytes, mode, absence on disk                behaviour
================  ==========================================  ==========================

Whether a result is a success is decided by the expectation (``is_error:
true``, or a ``stage`` other than ``done``, means an error result), else by the
actual ``is_error``.

An assertion on a field the implementation declared in hello's ``unreported``
(PROTO-UNREPORTED-1) is *not observed*: counted, never run, never a failure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Final

from conformance.suite.levels import (
    BEHAVIOUR,
    IDENTITY,
    LEVELS,
    OUTCOME_DEFAULTS,
    RENDERING,
    content_behaviour,
    content_rendering,
    event_item_level,
    expected_stage,
    sequence_behaviour,
    shown_view,
    unstarted_calls,
)
from conformance.suite.matchers import MISSING, Mismatch, is_matcher, match, match_events

__all__ = [
    "BEHAVIOUR",
    "FIELDS",
    "IDENTITY",
    "LEVELS",
    "RENDERING",
    "Tally",
    "blocks_view",
    "check_call",
    "check_message",
    "check_tools",
    "shown_view",
    "text_view",
]


def text_view(content: Any) -> Any:
    """The text the model reads: a string as is, text blocks joined with newlines."""
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, Mapping) and b.get("type") == "text"
        )
    return content


def blocks_view(content: Any) -> Any:
    """Content as a list of blocks; a plain string is one text block."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content


@dataclass(slots=True)
class Tally:
    """The assertions of one step (or of a whole scenario): counts per level, and mismatches.

    Each mismatch carries the level of its assertion; one failed assertion may
    give several mismatches, and ``failed`` counts assertions.
    """

    unreported: frozenset[str] = frozenset()
    cwd: str | None = None
    """The session's cwd, for the shown view of paths (``shown_view``)."""
    mismatches: list[Mismatch] = field(default_factory=list)
    passed: Counter[str] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)
    not_observed: Counter[str] = field(default_factory=Counter)

    def observed(self, fields: Iterable[str]) -> bool:
        """False when the implementation said it cannot report one of ``fields``."""
        return not any(f in self.unreported for f in fields)

    def check(
        self, level: str, fields: Iterable[str], run: Callable[[], Sequence[Mismatch]]
    ) -> None:
        """One assertion of ``level`` reading ``fields``: run it, unless one is unreported."""
        if not self.observed(fields):
            self.not_observed[level] += 1
            return
        found = run()
        if not found:
            self.passed[level] += 1
            return
        self.failed[level] += 1
        self.mismatches.extend(replace(m, level=level) for m in found)

    def add(self, other: Tally, step: int | None = None) -> None:
        """Count ``other``'s assertions as this tally's too, its mismatches found in ``step``."""
        self.mismatches.extend(replace(m, step=step) for m in other.mismatches)
        self.passed.update(other.passed)
        self.failed.update(other.failed)
        self.not_observed.update(other.not_observed)


def _result(answer: Mapping[str, Any]) -> Mapping[str, Any]:
    result: Mapping[str, Any] = answer.get("tool_result", {})
    return result


def _outcome(answer: Mapping[str, Any]) -> Mapping[str, Any]:
    outcome: Mapping[str, Any] = answer.get("outcome", {})
    return outcome


FIELDS: Mapping[str, Callable[[Mapping[str, Any]], Any]] = {
    "is_error": lambda a: _result(a).get("is_error", False),
    "content": lambda a: text_view(_result(a).get("content", MISSING)),
    "blocks": lambda a: blocks_view(_result(a).get("content", MISSING)),
    "stage": lambda a: _outcome(a).get("stage", MISSING),
    "error_code": lambda a: _outcome(a).get("error_code"),
    "error_name": lambda a: _outcome(a).get("error_name"),
    "dedup": lambda a: _outcome(a).get("dedup", False),
    "output": lambda a: a.get("output", _outcome(a).get("output", MISSING)),
    "outcome": lambda a: a.get("outcome", MISSING),
    "tool_result": lambda a: a.get("tool_result", MISSING),
}
"""Expectation field -> how to read it from one result (``tool_result`` + ``outcome``)."""

_FIELD_LEVELS: Final[Mapping[str, str]] = {
    "is_error": BEHAVIOUR,
    "content": RENDERING,
    "blocks": RENDERING,
    "stage": IDENTITY,
    "error_code": IDENTITY,
    "error_name": IDENTITY,
    "dedup": BEHAVIOUR,
    "output": RENDERING,
    "tool_result": RENDERING,
}
"""The level of an assertion on a field, where one field makes one assertion."""

_OUTCOME_FIELDS: Final = frozenset({"stage", "error_code", "error_name", "dedup", "output"})
"""Outcome keys that hello's ``unreported`` names bare; the others as ``outcome.KEY``."""


def _outcome_key(key: str) -> tuple[str, tuple[str, ...]]:
    """Level and unreported names of the assertion on outcome key ``key``."""
    names = (key, f"outcome.{key}") if key in _OUTCOME_FIELDS else (f"outcome.{key}",)
    return _FIELD_LEVELS.get(key, IDENTITY), names


def _is_success(expect: Mapping[str, Any], answer: Mapping[str, Any]) -> bool:
    """Whether the result counts as a success: the expectation says so, else the answer."""
    if expect.get("is_error") is True:
        return False
    stage = expected_stage(expect)
    if stage is not None:
        return stage == "done"
    if expect.get("is_error") is False:
        return True
    return FIELDS["is_error"](answer) is not True


def _check_outcome(tally: Tally, want: Any, answer: Mapping[str, Any], path: str) -> None:
    """An ``outcome`` expectation, one assertion per top-level key (PROTO-LEVEL-1).

    A key of ``OUTCOME_DEFAULTS`` is judged at its level with its default
    filled in, and as written at identity.
    """
    actual = FIELDS["outcome"](answer)
    subset = is_matcher(want) and next(iter(want)) == "json_subset"
    keys = want["json_subset"] if subset else want
    if not isinstance(keys, Mapping) or is_matcher(keys):
        tally.check(IDENTITY, ("outcome",), lambda: match(want, actual, path))
        return
    for key, value in keys.items():
        level, names = _outcome_key(str(key))
        written = _outcome_assertion(key, value, actual, path, subset=subset)
        if key in OUTCOME_DEFAULTS and isinstance(actual, Mapping):
            filled = {key: OUTCOME_DEFAULTS[key], **actual}
            tally.check(level, names, _outcome_assertion(key, value, filled, path, subset=subset))
            tally.check(IDENTITY, names, written)
        else:
            tally.check(level, names, written)
    if not subset:
        extra = (
            {k: v for k, v in actual.items() if k not in keys}
            if isinstance(actual, Mapping)
            else {}
        )
        tally.check(IDENTITY, ("outcome",), lambda: match({}, extra, path))


def _outcome_assertion(
    key: str, value: Any, actual: Any, path: str, *, subset: bool
) -> Callable[[], list[Mismatch]]:
    """The assertion on one key of an ``outcome`` expectation (``subset``: a json_subset's)."""
    if subset:
        return partial(match, {"json_subset": {key: value}}, actual, path)
    one = {key: actual[key]} if isinstance(actual, Mapping) and key in actual else {}
    return partial(match, {key: value}, one, path)


def _event_types(check: str, operand: Any) -> set[str]:
    """The event types one event check reads (for ``events.TYPE`` in ``unreported``)."""
    if check in ("before", "overlap", "max_concurrent"):
        return {"tool_start", "tool_end"}
    patterns = operand if check == "sequence" else [operand]
    types = set()
    for pattern in patterns:
        if isinstance(pattern, Mapping) and isinstance(pattern.get("type"), str):
            types.add(pattern["type"])
    return types


def _without_unreported_keys(item: Any, unreported: frozenset[str]) -> Any:
    """An event pattern (or list of them) without the keys named ``events.TYPE.KEY`` unreported."""
    if isinstance(item, list):
        return [_without_unreported_keys(x, unreported) for x in item]
    if isinstance(item, Mapping) and isinstance(item.get("type"), str):
        prefix = f"events.{item['type']}."
        return {k: v for k, v in item.items() if prefix + k not in unreported}
    return item


def _event_check(
    check: str, operand: Any, index: int, events: Sequence[Mapping[str, Any]], path: str
) -> list[Mismatch]:
    """One event check: ``operand`` is item ``index`` of a list check, or the whole value."""
    if check in ("max_concurrent", "sequence"):
        return match_events({check: operand}, events, path)
    # match_events numbers the one item 0: give it back its place in the list
    head = f"{path}.{check}[0]"
    return [
        replace(m, path=f"{path}.{check}[{index}]" + m.path[len(head) :])
        if m.path.startswith(head)
        else m
        for m in match_events({check: [operand]}, events, path)
    ]


def _check_events(
    tally: Tally,
    expect: Mapping[str, Any],
    events: Sequence[Mapping[str, Any]],
    path: str,
    unstarted: frozenset[str] = frozenset(),
) -> None:
    """Event expectations, one assertion per check (pair, pattern, limit, sequence).

    A check about a call in ``unstarted`` is identity, and a ``sequence``
    naming one is judged without it at behaviour, whole at identity
    (``conformance.suite.levels``).
    """
    for check, operand in expect.items():
        whole = check in ("max_concurrent", "sequence")
        items = [operand] if whole else list(operand)
        for i, written in enumerate(items):
            item = _without_unreported_keys(written, tally.unreported)
            names = ("events", *(f"events.{t}" for t in sorted(_event_types(check, item))))
            if check == "sequence":
                kept = sequence_behaviour(item, unstarted)
                if kept:
                    behaviour = _without_unreported_keys(kept, tally.unreported)
                    tally.check(
                        BEHAVIOUR, names, partial(_event_check, check, behaviour, i, events, path)
                    )
                if len(kept) < len(item):
                    tally.check(
                        IDENTITY, names, partial(_event_check, check, item, i, events, path)
                    )
                continue
            level = BEHAVIOUR if whole else event_item_level(written, unstarted)
            tally.check(level, names, partial(_event_check, check, item, i, events, path))


def _check_result(
    tally: Tally,
    expect: Mapping[str, Any],
    answer: Mapping[str, Any],
    tool_use_id: str,
    prefix: str,
) -> None:
    """One result's assertions; the events of a call's own expectation too."""
    echoed = _result(answer).get("tool_use_id", MISSING)
    tally.check(
        BEHAVIOUR,
        (),
        lambda: (
            [Mismatch(f"{prefix}tool_result.tool_use_id", tool_use_id, echoed)]
            if echoed != tool_use_id
            else []
        ),
    )
    for name, want in expect.items():
        path = f"{prefix}{name}"
        if name == "events":
            unstarted = unstarted_calls({tool_use_id: expected_stage(expect)}, want)
            _check_events(tally, want, answer.get("events", []), path, unstarted)
        elif name == "outcome":
            _check_outcome(tally, want, answer, path)
        elif name == "content":
            actual = FIELDS["content"](answer)
            success = _is_success(expect, answer)
            behaviour = content_behaviour(want, success=success, cwd=tally.cwd)
            if behaviour is not None:
                tally.check(BEHAVIOUR, (), partial(behaviour, actual, path))
            rendering = content_rendering(want, success=success)
            if rendering is not None:
                tally.check(RENDERING, (), partial(match, rendering, actual, path))
        else:
            got = FIELDS[name](answer)
            names = _outcome_key(name)[1] if name in _OUTCOME_FIELDS else (name,)
            tally.check(_FIELD_LEVELS[name], names, partial(match, want, got, path))


def check_call(
    expect: Mapping[str, Any],
    answer: Mapping[str, Any],
    tool_use_id: str,
    *,
    unreported: frozenset[str] = frozenset(),
    cwd: str | None = None,
) -> Tally:
    """Check one call result against its expectation (placeholders already expanded)."""
    tally = Tally(unreported=unreported, cwd=cwd)
    _check_result(tally, expect, answer, tool_use_id, "")
    return tally


def check_tools(
    expect: Mapping[str, Any],
    answer: Mapping[str, Any],
    *,
    unreported: frozenset[str] = frozenset(),
) -> Tally:
    """Check a ``tools`` answer: the exported ``tools`` and the ``deferred`` names (rendering)."""
    tally = Tally(unreported=unreported)
    for key in ("tools", "deferred"):
        if key in expect:
            tally.check(RENDERING, (), partial(match, expect[key], answer[key], key))
    return tally


def check_message(
    expect: Mapping[str, Any],
    answer: Mapping[str, Any],
    tool_use_ids: Sequence[str],
    *,
    unreported: frozenset[str] = frozenset(),
    cwd: str | None = None,
) -> Tally:
    """Check a message answer: each result in order, the batch plan, and events."""
    tally = Tally(unreported=unreported, cwd=cwd)
    results: list[Mapping[str, Any]] = answer["results"]
    wanted: list[Any] = expect.get("results") or [None] * len(results)
    for i, (result, want, tool_use_id) in enumerate(
        zip(results, wanted, tool_use_ids, strict=True)
    ):
        _check_result(tally, want or {}, result, tool_use_id, f"results[{i}].")
    if "batches" in expect:
        tally.check(
            BEHAVIOUR,
            ("batches",),
            lambda: match(expect["batches"], answer.get("batches", MISSING), "batches"),
        )
    if "events" in expect:
        stages = {
            use: expected_stage(want or {}) for use, want in zip(tool_use_ids, wanted, strict=False)
        }
        unstarted = unstarted_calls(stages, expect["events"])
        _check_events(tally, expect["events"], answer.get("events", []), "events", unstarted)
    return tally
