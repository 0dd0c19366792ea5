"""Baselines: the outcome of every scenario in an earlier run, to report changes.

The file is JSON (``{"format": 1, "implementation": ..., "outcomes": {id:
outcome}}``, one id per line, sorted) so that diffs of it review well. It
records raw outcomes, before expected failures are applied, so editing the
expected-failures file never shows up as a change.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.errors import ConformanceError
from conformance.results import ScenarioResult

__all__ = ["Change", "diff_baseline", "load_baseline", "merge_baseline", "save_baseline"]

_FORMAT = 1


@dataclass(frozen=True, slots=True)
class Change:
    """One scenario whose outcome differs from the baseline (``before`` None: new)."""

    id: str
    before: str | None
    after: str
    spec: tuple[str, ...]

    def __str__(self) -> str:
        spec = f"  [{', '.join(self.spec)}]" if self.spec else ""
        return f"{self.id}: {self.before or 'new'} -> {self.after}{spec}"


def load_baseline(path: Path) -> dict[str, str]:
    """The recorded outcome of each scenario id.

    Raises:
        ConformanceError: the file is not a baseline.
    """
    try:
        data = json.loads(path.read_text("utf-8"))
        outcomes = data["outcomes"]
        if data.get("format") != _FORMAT or not isinstance(outcomes, dict):
            raise ValueError("not a format-1 baseline")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConformanceError(f"{path}: cannot read the baseline: {exc}") from exc
    return {str(k): str(v) for k, v in outcomes.items()}


def save_baseline(
    path: Path, outcomes: Mapping[str, str], implementation: Mapping[str, Any]
) -> None:
    """Write a baseline file."""
    data = {
        "format": _FORMAT,
        "implementation": dict(implementation),
        "outcomes": dict(sorted(outcomes.items())),
    }
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")


def diff_baseline(baseline: Mapping[str, str], results: Iterable[ScenarioResult]) -> list[Change]:
    """Scenarios of this run whose raw outcome is not the one recorded (or that are new)."""
    changes = []
    for result in results:
        now = str(result.base_outcome)
        before = baseline.get(result.id)
        if before != now:
            changes.append(Change(result.id, before, now, result.spec))
    return sorted(changes, key=lambda c: c.id)


def merge_baseline(
    baseline: Mapping[str, str], results: Iterable[ScenarioResult]
) -> dict[str, str]:
    """The baseline updated with this run's outcomes; scenarios not run keep theirs."""
    merged = dict(baseline)
    merged.update({r.id: str(r.base_outcome) for r in results})
    return merged
