"""The level of each part of an expectation, and the view a behaviour part reads (PROTO-LEVEL-1).

One rule, applied to the parts of an expectation rather than to the field
that holds them:

**Content.** A ``content`` expectation makes at most two assertions: its
behaviour parts together, read on the *shown view* (``shown_view``), and its
rendering parts together, read on the raw text:

==================  ==============================  ====================  ===========
part                states                          behaviour             rendering
==================  ==============================  ====================  ===========
literal             the exact text                  -                     yes
``shows``           what the model is shown         on a success: shown   yes (exact)
                                                    views equal (JSON
                                                    texts: their values)
``contains``        a text the model is shown       on a success          on an error
``not_contains``    a text the model is not shown   yes                   -
``all_of``          every part                      the parts that have   likewise
                                                    one
``any_of``          one alternative                 if every alternative  likewise,
                                                    has one               else whole
any other matcher   a format                        -                     yes
==================  ==============================  ====================  ===========

An error's text is its wording: what it says is rendering, only what it
leaves out (``not_contains``, such as a denied file's content) is behaviour.
``contains`` and ``not_contains`` search the shown view untrimmed and with
what reminders say kept (only their tags go), their operand normalized the
same way; an operand that starts or ends with a newline names whole lines:
the text searched has one before its first line and after its last.

**Events.** A check on the ``tool_start`` or ``tool_end`` event of a call
that never reached ``call()`` is identity: whether such a call has lifecycle
events is a reporting convention. A call never started when its expected
stage is one before ``call`` (``PRE_CALL_STAGES``), or when the step expects
no ``tool_start`` for it. In a ``sequence`` those patterns are left out of
the behaviour assertion, and the whole sequence is one identity assertion
more. Every other event check is behaviour.

**Defaults.** An ``outcome`` key the protocol reads with a default when
absent (``OUTCOME_DEFAULTS``) is judged at its level with that default, and
whether it was written out at all is one identity assertion more.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from conformance.suite.matchers import Mismatch, is_matcher

__all__ = [
    "BEHAVIOUR",
    "IDENTITY",
    "LEVELS",
    "OUTCOME_DEFAULTS",
    "PRE_CALL_STAGES",
    "RENDERING",
    "TextCheck",
    "content_behaviour",
    "content_rendering",
    "event_item_level",
    "expected_stage",
    "sequence_behaviour",
    "shown_view",
    "unstarted_calls",
]

BEHAVIOUR: Final = "behaviour"
IDENTITY: Final = "identity"
RENDERING: Final = "rendering"
LEVELS: Final = (BEHAVIOUR, IDENTITY, RENDERING)
"""The assertion levels, in the order reports give them."""

PRE_CALL_STAGES: Final = frozenset(
    {"unknown_tool", "input_schema", "validate", "pre_hook", "permission"}
)
"""The stages a call ends at without ever reaching ``call()``."""

OUTCOME_DEFAULTS: Final[Mapping[str, Any]] = {"dedup": False}
"""Behaviour keys of ``outcome`` and the value their absence means (PROTO-OUTCOME-1)."""

_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
_REMINDER_TAG = re.compile(r"</?system-reminder>")
_LINE_NUMBER = re.compile(r"^[^\S\n]*(\d+)(?:\t|→)", re.MULTILINE)
_NUMBERED_EMPTY = re.compile(r"\d+\t[^\S\n]*")


def shown_view(
    text: Any, *, reminders: bool = False, cwd: str | None = None, trim: bool = True
) -> Any:
    """What a model is shown of ``text``, rendering aside (PROTO-LEVEL-1); non-strings as is.

    Reminder blocks go (with ``reminders``, only their tags: what they say
    stays), ``     1\\tx`` and ``1→x`` both become ``1\\tx``, and (with
    ``trim``) numbered empty lines and whitespace at the end go. With ``cwd``,
    a line that starts with a path under it starts with that path relative to
    it: an absolute and a cwd-relative path name the same file (Glob's and
    Grep's lines).
    """
    if not isinstance(text, str):
        return text
    text = (_REMINDER_TAG if reminders else _REMINDER).sub("", text)
    if cwd:
        text = re.sub("^" + re.escape(cwd.rstrip("/") + "/"), "", text, flags=re.MULTILINE)
    text = _LINE_NUMBER.sub(lambda m: f"{m.group(1)}\t", text)
    if not trim:
        return text
    lines = text.split("\n")
    while lines and (not lines[-1].strip() or _NUMBERED_EMPTY.fullmatch(lines[-1])):
        lines.pop()
    return "\n".join(lines).rstrip()


TextCheck = Callable[[Any, str], list[Mismatch]]
"""A behaviour part of a content expectation: (the raw text, its path) -> mismatches."""


def _json_value(text: str) -> Any:
    """The value of a JSON object or array text, else None."""
    if not text.startswith(("{", "[")):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _shows(want: Any, cwd: str | None) -> TextCheck:
    expected = shown_view(want, cwd=cwd)

    def check(actual: Any, path: str) -> list[Mismatch]:
        seen = shown_view(actual, cwd=cwd)
        if isinstance(expected, str) and isinstance(seen, str):
            value = _json_value(expected)
            if value is not None and _json_value(seen) == value:
                return []
        if seen == expected:
            return []
        return [Mismatch(path, {"shows": expected}, seen, f"shown {seen!r}, expected {expected!r}")]

    return check


def _substring(name: str, operand: str, cwd: str | None) -> TextCheck:
    expected = shown_view(operand, reminders=True, cwd=cwd, trim=False)
    present = name == "contains"

    def check(actual: Any, path: str) -> list[Mismatch]:
        seen = shown_view(actual, reminders=True, cwd=cwd, trim=False)
        if not isinstance(seen, str):
            return [Mismatch(path, {name: expected}, seen, f"{name}: expected a string")]
        if (expected in f"\n{seen}\n") == present:
            return []
        verb = "not found" if present else "found"
        return [Mismatch(path, {name: expected}, seen, f"{expected!r} {verb} in {seen!r}")]

    return check


def _all(parts: Sequence[TextCheck]) -> TextCheck:
    return lambda actual, path: [m for part in parts for m in part(actual, path)]


def _any(parts: Sequence[TextCheck], want: Any) -> TextCheck:
    def check(actual: Any, path: str) -> list[Mismatch]:
        failures = [part(actual, path) for part in parts]
        if any(not f for f in failures):
            return []
        reasons = "; ".join(str(f[0]) for f in failures)
        return [Mismatch(path, want, actual, f"no alternative shown ({reasons})")]

    return check


def content_behaviour(want: Any, *, success: bool, cwd: str | None = None) -> TextCheck | None:
    """The behaviour part of content expectation ``want``, or None when it has none.

    ``success``: whether the result counts as a success (an error's text
    has only ``not_contains`` parts at behaviour).
    """
    if not is_matcher(want):
        return None
    ((name, operand),) = want.items()
    if name == "shows" and success:
        return _shows(operand, cwd)
    if name in ("contains", "not_contains") and isinstance(operand, str):
        return _substring(name, operand, cwd) if success or name == "not_contains" else None
    if name in ("all_of", "any_of") and isinstance(operand, list):
        parts = [content_behaviour(item, success=success, cwd=cwd) for item in operand]
        kept = [p for p in parts if p is not None]
        if name == "all_of":
            return _all(kept) if kept else None
        return _any(kept, want) if kept and len(kept) == len(parts) else None
    return None


def content_rendering(want: Any, *, success: bool) -> Any:
    """The rendering part of content expectation ``want`` (matched on the raw text), or None."""
    if want is None:
        return {"equals": None}
    if not is_matcher(want):
        return want
    ((name, operand),) = want.items()
    if name == "not_contains" or (name == "contains" and success):
        return None
    if name in ("all_of", "any_of") and isinstance(operand, list):
        parts = [content_rendering(item, success=success) for item in operand]
        kept = [p for p in parts if p is not None]
        if name == "all_of":
            return None if not kept else kept[0] if len(kept) == 1 else {name: kept}
        if len(kept) == len(parts):
            return {name: kept}
        # alternatives of both levels: the whole disjunction, unless behaviour judges it
        return None if content_behaviour(want, success=success) is not None else want
    return want


def expected_stage(expect: Mapping[str, Any]) -> str | None:
    """The stage a result's expectation names, in ``stage`` or in ``outcome``; else None."""
    stage = expect.get("stage")
    if isinstance(stage, str):
        return stage
    outcome: Any = expect.get("outcome")
    if is_matcher(outcome) and "json_subset" in outcome:
        outcome = outcome["json_subset"]
    if isinstance(outcome, Mapping) and isinstance(outcome.get("stage"), str):
        return str(outcome["stage"])
    return None


def unstarted_calls(
    stages: Mapping[str, str | None], events: Mapping[str, Any] | None
) -> frozenset[str]:
    """The tool_use ids of a step whose calls its expectation says never reached ``call()``.

    ``stages``: tool_use id -> expected stage (None: not said); ``events``:
    the step's event expectation, whose ``not_contains`` may deny a call its
    ``tool_start``.
    """
    denied = {
        p.get("id")
        for p in (events or {}).get("not_contains", ())
        if isinstance(p, Mapping) and p.get("type") == "tool_start"
    }
    return frozenset(
        use for use, stage in stages.items() if stage in PRE_CALL_STAGES or use in denied
    )


def _about_unstarted(item: Any, unstarted: frozenset[str]) -> bool:
    if isinstance(item, list):
        return any(isinstance(use, str) and use in unstarted for use in item)
    if not isinstance(item, Mapping) or item.get("type") not in ("tool_start", "tool_end"):
        return False
    if "id" in item:
        return item["id"] in unstarted
    return item.get("stage") in PRE_CALL_STAGES


def event_item_level(item: Any, unstarted: frozenset[str]) -> str:
    """The level of one item of ``contains``, ``not_contains``, ``before`` or ``overlap``."""
    return IDENTITY if _about_unstarted(item, unstarted) else BEHAVIOUR


def sequence_behaviour(patterns: Sequence[Any], unstarted: frozenset[str]) -> list[Any]:
    """A ``sequence`` without its patterns about calls that never started."""
    return [p for p in patterns if not _about_unstarted(p, unstarted)]
