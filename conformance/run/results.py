"""What running a scenario produces: an outcome and the evidence behind it."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from conformance.suite.checks import LEVELS, Tally
from conformance.suite.matchers import Mismatch

__all__ = [
    "BAD_OUTCOMES",
    "LevelCount",
    "LevelVerdict",
    "Outcome",
    "ScenarioResult",
    "count_outcomes",
    "level_counts",
]


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


class LevelVerdict(enum.StrEnum):
    """What one level of a scenario's assertions came to (PROTO-LEVEL-1)."""

    PASS = "pass"
    FAIL = "fail"
    NOT_OBSERVED = "not_observed"
    """Every assertion of the level was on a field the implementation cannot report."""
    NONE = "none"
    """The scenario made no assertion of the level."""


@dataclass(frozen=True, slots=True)
class LevelCount:
    """Assertions of one level in one scenario: passed, failed, not observed."""

    passed: int = 0
    failed: int = 0
    not_observed: int = 0

    @property
    def verdict(self) -> LevelVerdict:
        """``fail`` if any failed, else ``pass`` if any held, else ``not_observed`` or ``none``."""
        if self.failed:
            return LevelVerdict.FAIL
        if self.passed:
            return LevelVerdict.PASS
        return LevelVerdict.NOT_OBSERVED if self.not_observed else LevelVerdict.NONE

    def to_json(self) -> dict[str, Any]:
        """The verdict and the three counts."""
        return {
            "verdict": str(self.verdict),
            "passed": self.passed,
            "failed": self.failed,
            "not_observed": self.not_observed,
        }


def level_counts(tally: Tally) -> dict[str, LevelCount]:
    """Level -> its counts, for every level of ``checks.LEVELS``."""
    return {
        level: LevelCount(tally.passed[level], tally.failed[level], tally.not_observed[level])
        for level in LEVELS
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class ScenarioResult:
    """One scenario's outcome and where it went wrong.

    ``step`` is the 1-based index of the failing step (None for setup, the
    final checks, or no failure); ``where`` says the same in words, such as
    ``step 3 (call Edit, line 14)`` or ``final``. ``kind`` refines an
    ``error`` (``scenario``, ``harness``, ``protocol``, ``adapter_error``,
    ``version_mismatch``). ``raw_outcome`` is the outcome before any expected
    failure was applied.

    Every assertion is evaluated (PROTO-LEVEL-1): ``mismatches`` holds each
    failed one's mismatches, with its level and step, and ``levels`` the
    counts per level (empty when no assertion ran). ``step`` and ``where``
    locate the first mismatch.
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
    levels: Mapping[str, LevelCount] = field(default_factory=dict)
    stderr: str = ""
    duration: float = 0.0
    raw_outcome: Outcome | None = None
    reason: str = ""
    requires: tuple[str, ...] = ()
    """The scenario's required features: reports group results by them."""
    kept: str | None = None
    """The sandbox directory left on disk (``--keep``), else None."""
    connection_broken: bool = field(default=False, compare=False)

    @property
    def bad(self) -> bool:
        """True when this outcome fails the run."""
        return self.outcome in BAD_OUTCOMES

    def verdict(self, level: str) -> LevelVerdict:
        """The verdict of ``level``'s assertions (``none`` when none ran)."""
        count = self.levels.get(level)
        return count.verdict if count else LevelVerdict.NONE

    @property
    def signature(self) -> frozenset[tuple[int | None, str, str]]:
        """``(step, level, path)`` of every mismatch: which failure this is, for baselines."""
        return frozenset((m.step, m.level, m.path) for m in self.mismatches)

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
            "levels": {level: count.to_json() for level, count in self.levels.items()},
            "mismatches": [
                {
                    "level": m.level,
                    "step": m.step,
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
            "requires": list(self.requires),
            "kept": self.kept,
        }

    @classmethod
    def from_json(cls, record: Mapping[str, Any]) -> ScenarioResult:
        """A result read back from a JSON-lines report record.

        ``to_json`` of it gives the record back: the mismatches are rebuilt
        with their values as the record holds them (made JSON-ready when
        written), each saying what it said then; so a report merged from saved
        ones is the report those runs wrote.
        """
        raw = record.get("raw_outcome")
        return cls(
            id=str(record.get("id", "")),
            outcome=Outcome(record.get("outcome", "error")),
            title=str(record.get("title", "")),
            spec=tuple(record.get("spec", ())),
            level=str(record.get("level", "")),
            area=str(record.get("area", "")),
            path=record.get("path"),
            message=str(record.get("message", "")),
            kind=str(record.get("kind", "")),
            step=record.get("step") if isinstance(record.get("step"), int) else None,
            where=str(record.get("where", "")),
            levels={
                level: LevelCount(
                    int(c.get("passed", 0)), int(c.get("failed", 0)), int(c.get("not_observed", 0))
                )
                for level, c in dict(record.get("levels", {})).items()
            },
            mismatches=tuple(_mismatch(m) for m in record.get("mismatches", ())),
            stderr=str(record.get("stderr", "")),
            duration=float(record.get("duration", 0.0)),
            raw_outcome=Outcome(raw) if raw and raw != record.get("outcome") else None,
            reason=str(record.get("reason", "")),
            requires=tuple(record.get("requires", ())),
            kept=record.get("kept") if isinstance(record.get("kept"), str) else None,
        )


def _mismatch(record: Mapping[str, Any]) -> Mismatch:
    """A mismatch of a report record, whose ``str`` is the ``message`` it was saved with."""
    path = str(record.get("path", ""))
    said = str(record.get("message", ""))
    prefix = f"{path}: "
    detail = said[len(prefix) :] if path and said.startswith(prefix) else said
    step = record.get("step")
    return Mismatch(
        path,
        record.get("expected"),
        record.get("actual"),
        detail,
        level=str(record.get("level", "")),
        step=step if isinstance(step, int) else None,
    )


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
