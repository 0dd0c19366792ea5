"""Baselines: how every scenario ended in an earlier run, to report changes.

The file is JSON (``{"format": 2, "implementation": ..., "outcomes": {id:
outcome}, "signatures": {id: [[step, level, path], ...]}}``, one id per line,
sorted) so that diffs of it review well. It records raw outcomes, before
expected failures are applied, so editing the expected-failures file never
shows up as a change. A failing scenario's signature is the set of its
mismatches' ``(step, level, path)``: a change from one failure to another
(another step, level or field fails) is a change too. A format-1 file (outcomes
only) still loads; its failures have no signature, so only outcomes compare.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.errors import ConformanceError
from conformance.run.results import ScenarioResult

__all__ = [
    "Baseline",
    "OutcomeChange",
    "Signature",
    "diff_baseline",
    "load_baseline",
    "merge_baseline",
    "save_baseline",
]

_FORMAT = 2
_READABLE = (1, 2)

Signature = frozenset[tuple[int | None, str, str]]
"""``(step, level, path)`` of each mismatch of a result (``ScenarioResult.signature``)."""


@dataclass(frozen=True, slots=True)
class Baseline:
    """Outcome of each scenario id, and the signature of each that failed with mismatches.

    ``signatures`` lacks an id whose result had no mismatches.
    """

    outcomes: Mapping[str, str] = field(default_factory=dict)
    signatures: Mapping[str, Signature] = field(default_factory=dict)
    compares_signatures: bool = True
    """False for a format-1 file, which recorded no signature."""


@dataclass(frozen=True, slots=True)
class OutcomeChange:
    """One scenario whose outcome, or failure, differs from the baseline (``before`` None: new).

    ``detail`` says how a failure changed when the outcome did not.
    """

    id: str
    before: str | None
    after: str
    spec: tuple[str, ...]
    detail: str = ""

    def __str__(self) -> str:
        spec = f"  [{', '.join(self.spec)}]" if self.spec else ""
        detail = f" ({self.detail})" if self.detail else ""
        return f"{self.id}: {self.before or 'new'} -> {self.after}{detail}{spec}"


def _decode(raw: Any) -> Signature:
    return frozenset((None if s is None else int(s), str(lv), str(p)) for s, lv, p in raw)


def _encode(signature: Signature) -> list[list[Any]]:
    return [list(t) for t in sorted(signature, key=lambda t: (t[0] or 0, t[1], t[2]))]


def load_baseline(path: Path) -> Baseline:
    """The recorded outcome and failure signature of each scenario id.

    Raises:
        ConformanceError: the file is not a baseline.
    """
    try:
        data = json.loads(path.read_text("utf-8"))
        outcomes = data["outcomes"]
        signatures = data.get("signatures", {})
        if data.get("format") not in _READABLE or not isinstance(outcomes, dict):
            raise ValueError("not a format-1 or format-2 baseline")
        if not isinstance(signatures, dict):
            raise ValueError("signatures is not a mapping")
        decoded = {str(k): _decode(v) for k, v in signatures.items()}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConformanceError(f"{path}: cannot read the baseline: {exc}") from exc
    outcomes = {str(k): str(v) for k, v in outcomes.items()}
    return Baseline(outcomes, decoded, compares_signatures=data["format"] >= _FORMAT)


def save_baseline(path: Path, baseline: Baseline, implementation: Mapping[str, Any]) -> None:
    """Write a baseline file (format 2)."""
    data = {
        "format": _FORMAT,
        "implementation": dict(implementation),
        "outcomes": dict(sorted(baseline.outcomes.items())),
        "signatures": {k: _encode(v) for k, v in sorted(baseline.signatures.items()) if v},
    }
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")


def _describe(before: Signature, after: Signature) -> str:
    def show(t: tuple[int | None, str, str]) -> str:
        step = "final" if t[0] is None else f"step {t[0]}"
        return f"{step} {t[1]} {t[2]}"

    parts = []
    if gone := sorted(before - after, key=show):
        parts.append("no longer failing: " + "; ".join(map(show, gone)))
    if new := sorted(after - before, key=show):
        parts.append("newly failing: " + "; ".join(map(show, new)))
    return ", ".join(parts)


def diff_baseline(baseline: Baseline, results: Iterable[ScenarioResult]) -> list[OutcomeChange]:
    """Scenarios of this run whose raw outcome or failure signature is not the one recorded.

    New scenarios are changes too; signatures compare when the baseline
    records them (format 2).
    """
    changes = []
    for result in results:
        now = str(result.base_outcome)
        before = baseline.outcomes.get(result.id)
        if before != now:
            changes.append(OutcomeChange(result.id, before, now, result.spec))
        elif baseline.compares_signatures:
            recorded = baseline.signatures.get(result.id, frozenset())
            if recorded != result.signature:
                detail = _describe(recorded, result.signature)
                changes.append(OutcomeChange(result.id, before, now, result.spec, detail))
    return sorted(changes, key=lambda c: c.id)


def merge_baseline(baseline: Baseline, results: Iterable[ScenarioResult]) -> Baseline:
    """The baseline updated with this run; scenarios not run keep what they had."""
    outcomes = dict(baseline.outcomes)
    signatures = dict(baseline.signatures)
    for result in results:
        outcomes[result.id] = str(result.base_outcome)
        if result.signature:
            signatures[result.id] = result.signature
        else:
            signatures.pop(result.id, None)
    return Baseline(outcomes, signatures, compares_signatures=True)
