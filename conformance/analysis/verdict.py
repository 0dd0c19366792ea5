"""The closing lines of a run, in plain words: why scenarios were not applicable, the verdict.

``not_applicable_lines`` groups the ``not_applicable`` results by why, one
line each, saying what would change it where the user can: another profile
(``--profile``), host paths on an unisolated implementation
(``--host-paths``; the line names the scenarios, PROTO-ISOLATE-2), features
the implementation does not declare, a profile it does not play, an
``unsupported`` answer. ``verdict_line`` says whether the run passed, with
the counts behind it and no double negative.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from conformance.run.results import BAD_OUTCOMES, Outcome, ScenarioResult, count_outcomes
from conformance.run.runner import (
    HOST_PATHS_REASON,
    NOT_PLAYED_REASON,
    OTHER_PROFILE_REASON,
    REQUIRES_REASON,
)

__all__ = ["not_applicable_lines", "verdict_line"]

_SHOWN_FEATURES = 8
"""Features named on the missing-features line; the rest are counted."""


@dataclass(slots=True)
class _Group:
    """The not-applicable results that share one why."""

    results: list[ScenarioResult] = field(default_factory=list)
    tally: Counter[str] = field(default_factory=Counter)
    """Per profile, feature or path, as the group counts them."""


def _why(result: ScenarioResult) -> tuple[str, list[str]]:
    """The group of a not-applicable result, and what it adds to the group's tally."""
    reason = result.reason
    if reason.startswith(HOST_PATHS_REASON):
        inside = reason[len(HOST_PATHS_REASON) :].strip().strip("()")
        return "host", [p.strip() for p in inside.split(",") if p.strip()]
    if reason.startswith(OTHER_PROFILE_REASON):
        named = reason[len(OTHER_PROFILE_REASON) :].rsplit(", not ", 1)[0]
        return "profile", [p.strip() for p in named.split(",") if p.strip()]
    if reason.startswith(REQUIRES_REASON):
        return "features", [f.strip() for f in reason[len(REQUIRES_REASON) :].split(",")]
    if reason.startswith(NOT_PLAYED_REASON):
        return "not-played", [reason[len(NOT_PLAYED_REASON) :]]
    if result.kind == "unsupported":
        return "unsupported", []
    return f"other:{reason or result.message or 'no reason given'}", []


def _counted(tally: Counter[str], limit: int | None = None) -> str:
    ordered = sorted(tally.items(), key=lambda item: (-item[1], item[0]))
    shown = ordered if limit is None else ordered[:limit]
    text = ", ".join(f"{name} {count}" for name, count in shown)
    if len(ordered) > len(shown):
        text += f" and {len(ordered) - len(shown)} more"
    return text


def _ids(group: _Group) -> str:
    return ", ".join(r.id for r in group.results)


def _say(group: _Group, one: str, many: str) -> str:
    return one if len(group.results) == 1 else many


_WORDS: dict[str, Callable[[_Group, str], str]] = {
    "profile": lambda g, impl: (
        f"{_say(g, 'holds', 'hold')} only under other profiles ({_counted(g.tally)}): "
        "--profile NAME judges them"
    ),
    "host": lambda g, impl: (
        f"{_say(g, 'aims', 'aim')} at real host paths ({', '.join(sorted(g.tally))}) and "
        f"{impl} is not isolated: --host-paths runs {_say(g, 'it', 'them')}, at this host's "
        f"risk ({_ids(g)})"
    ),
    "features": lambda g, impl: (
        f"{_say(g, 'needs', 'need')} a feature the implementation does not declare in hello "
        f"({_counted(g.tally, _SHOWN_FEATURES)}): toolconf list --feature NAME shows them"
    ),
    "not-played": lambda g, impl: (
        f"{_say(g, 'is', 'are')} not judged: the implementation does not play profile "
        f"{next(iter(g.tally))}"
    ),
    "unsupported": lambda g, impl: (
        f"{_say(g, 'was', 'were')} answered `unsupported` by the implementation "
        f"(PROTO-UNSUPPORTED-1): {_ids(g)}"
    ),
}


def not_applicable_lines(results: Sequence[ScenarioResult], impl: str) -> list[str]:
    """``not applicable: N of M``, then one line per why, the largest group first."""
    groups: dict[str, _Group] = {}
    for result in results:
        if result.outcome is not Outcome.NOT_APPLICABLE:
            continue
        key, counted = _why(result)
        group = groups.setdefault(key, _Group())
        group.results.append(result)
        group.tally.update(counted)
    if not groups:
        return []
    total = sum(len(g.results) for g in groups.values())
    lines = [f"not applicable: {total} of {len(results)}"]
    for key, group in sorted(groups.items(), key=lambda kv: (-len(kv[1].results), kv[0])):
        words = _WORDS.get(key)
        text = words(group, impl) if words else f"{key.removeprefix('other:')} ({_ids(group)})"
        lines.append(f"  {len(group.results)} {text}")
    return lines


def verdict_line(results: Sequence[ScenarioResult]) -> str:
    """``PASSED: ...`` or ``FAILED: ...``: what passed, what did not and what did not apply."""
    counts = count_outcomes(results)
    total = len(results)
    passed, na = counts[Outcome.PASS], counts[Outcome.NOT_APPLICABLE]
    xfail = counts[Outcome.XFAIL]
    bad = {o: n for o, n in counts.items() if n and o in BAD_OUTCOMES}
    if bad:
        kinds = ", ".join(f"{n} {o}" for o, n in bad.items())
        extra = "".join(
            f", {n} {what}"
            for n, what in ((xfail, "failed as expected (xfail)"), (na, "not applicable"))
            if n
        )
        return (
            f"FAILED: {sum(bad.values())} of {total} scenarios did not pass ({kinds}); "
            f"{passed} passed{extra}."
        )
    if not passed and not xfail:
        return f"PASSED, vacuously: none of the {total} {_noun(total)} applies (why above)."
    applicable = "" if not na else f" ({na} of {total} not applicable)"
    if xfail:
        return (
            f"PASSED: {passed} {_noun(passed)} passed and {xfail} failed as expected (xfail)"
            f"{applicable}."
        )
    if not na:
        return f"PASSED: {_all(total)} passed."
    return f"PASSED: {_all(passed, 'applicable ')} passed{applicable}."


def _noun(count: int) -> str:
    return "scenario" if count == 1 else "scenarios"


def _all(count: int, kind: str = "") -> str:
    """``all 12 scenarios``, or ``the 1 scenario``, with ``kind`` before the noun."""
    if count == 1:
        return f"the 1 {kind}scenario"
    return f"all {count} {kind}scenarios"
