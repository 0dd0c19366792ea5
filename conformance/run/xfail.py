"""Expected failures: a YAML file ``{scenario-id: reason}`` kept by an implementation.

Strict, like pytest's ``xfail_strict``: a listed scenario that does not pass
becomes ``xfail`` and does not fail the run; one that passes becomes
``xpass`` and does, so fixed bugs cannot hide behind stale entries. An entry
naming no known scenario is reported as stale too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from conformance.errors import ConformanceError
from conformance.run.results import Outcome, ScenarioResult
from conformance.suite.registry import load_reasons

__all__ = ["apply_expected_failures", "load_expected_failures", "unknown_entries"]


def load_expected_failures(path: Path) -> dict[str, str]:
    """Read an expected-failures file.

    Raises:
        ConformanceError: unreadable, not a mapping, or an entry without a reason.
    """
    entries, _, problems = load_reasons(path, "expected failures")
    if problems:
        raise ConformanceError("\n".join(str(p) for p in problems))
    return entries


def apply_expected_failures(result: ScenarioResult, expected: Mapping[str, str]) -> ScenarioResult:
    """The result as the expected-failures file sees it (unchanged if not listed)."""
    reason = expected.get(result.id)
    if reason is None or result.outcome is Outcome.NOT_APPLICABLE:
        return result
    if result.outcome is Outcome.PASS:
        return result.with_outcome(Outcome.XPASS, f"expected to fail ({reason}) but passed")
    return result.with_outcome(Outcome.XFAIL, reason)


def unknown_entries(expected: Mapping[str, str], known_ids: Iterable[str]) -> list[str]:
    """Entries that name no scenario of the suite (renamed or deleted): stale."""
    known = set(known_ids)
    return sorted(key for key in expected if key not in known)
