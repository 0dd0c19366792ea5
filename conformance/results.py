"""What running a scenario produces: an outcome and the evidence behind it."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from conformance.matchers import Mismatch

__all__ = ["BAD_OUTCOMES", "Outcome", "ScenarioResult", "count_outcomes"]


class Outcome(enum.StrEnum):
    """How a scenario ended.

    ``xfail`` and ``xpass`` only appear once an expected-failures file is
    applied: a listed scenario that did not pass is ``xfail`` (fine), one that
    passed is ``xpass`` (the entry is stale, which fails the run).
    """

    PASS = "pass"
    FAIL = "fail"
    NOT_APPLICABLE = "not_applicable"
    ERROR = "error"
    CRASH = "crash"
    TIMEOUT = "timeout"
    XFAIL = "xfail"
    XPASS = "xpass"


BAD_OUTCOMES = frozenset(
    {Outcome.FAIL, Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT, Outcome.XPASS}
)
"""Outcomes that make a run fail."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ScenarioResult:
    """One scenario's outcome and where it went wrong.

    ``step`` is the 1-based index of the failing step (None for setup, the
    final checks, or no failure); ``where`` says the same in words, such as
    ``step 3 (call Edit, line 14)`` or ``final``. ``kind`` refines an
    ``error`` (``scenario``, ``harness``, ``protocol``, ``adapter_error``,
    ``version_mismatch``). ``raw_outcome`` is the outcome before any expected
    failure was applied.
    """

    id: str
    outcome: Outcome
    title: str = ""
    spec: tuple[str, ...] = ()
    level: str = ""
    area: str = ""
    path: str | None = None
    message: str = ""
    kind: str = ""
    step: int | None = None
    where: str = ""
    mismatches: tuple[Mismatch, ...] = ()
    stderr: str = ""
    duration: float = 0.0
    raw_outcome: Outcome | None = None
    reason: str = ""
    connection_broken: bool = field(default=False, compare=False)

    @property
    def bad(self) -> bool:
        """True when this outcome fails the run."""
        return self.outcome in BAD_OUTCOMES

    @property
    def base_outcome(self) -> Outcome:
        """The outcome before expected failures were applied."""
        return self.raw_outcome or self.outcome

    def with_outcome(self, outcome: Outcome, reason: str = "") -> ScenarioResult:
        """A copy with a new outcome, remembering the original one."""
        return replace(
            self, outcome=outcome, raw_outcome=self.base_outcome, reason=reason or self.reason
        )

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready record, as written to JSON-lines reports."""
        return {
            "id": self.id,
            "outcome": str(self.outcome),
            "raw_outcome": str(self.base_outcome),
            "title": self.title,
            "spec": list(self.spec),
            "level": self.level,
            "area": self.area,
            "path": self.path,
            "message": self.message,
            "kind": self.kind,
            "step": self.step,
            "where": self.where,
            "mismatches": [
                {
                    "path": m.path,
                    "expected": _jsonable(m.expected),
                    "actual": _jsonable(m.actual),
                    "message": str(m),
                }
                for m in self.mismatches
            ],
            "stderr": self.stderr,
            "duration": round(self.duration, 6),
            "reason": self.reason,
        }


def _jsonable(value: Any) -> Any:
    if isinstance(value, str | int | float | bool | type(None)):
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return repr(value)


def count_outcomes(results: Iterable[ScenarioResult]) -> dict[Outcome, int]:
    """Outcome -> number of results, with every outcome present."""
    counts = dict.fromkeys(Outcome, 0)
    for result in results:
        counts[result.outcome] += 1
    return counts
