"""``toolconf summary REPORT...``: each saved JSON-lines report on its own, then side by side.

Per report: the outcomes by area, the level figures, the scenarios that did
not pass grouped by the SPEC section of each ID they cite, and the verdict.
Several reports are put side by side, one column each; their counts are
never added together, since two runs of one suite would count each
scenario twice.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from conformance.analysis.console import COLUMNS, format_table, level_lines, summarize
from conformance.analysis.fidelity import load_report
from conformance.analysis.verdict import verdict_line
from conformance.errors import ConformanceError
from conformance.run.results import ScenarioResult, count_outcomes
from conformance.suite.spec import Spec

__all__ = ["failures_by_section", "summary_command"]

_SHOWN_IDS: Final = 8
"""Scenario ids named per SPEC section; the rest are counted."""


def summary_command(args: argparse.Namespace) -> int:
    """``toolconf summary``; 1 when any report has a scenario that did not pass."""
    spec = _spec(args.spec_file)
    sections, provenances = spec.section_labels(), dict(spec.provenances())
    runs: list[tuple[str, list[ScenarioResult]]] = []
    for path in args.reports:
        header, results = _read(path)
        implementation = header.get("implementation", {})
        name = f"{implementation.get('name', '?')} {implementation.get('version', '')}".strip()
        print(f"== {path}: {name} via {header.get('impl', '?')}, {header.get('started', '')}")
        print(format_table("area", summarize(results, lambda r: r.area)))
        print("\n".join(level_lines(results, provenances)))
        lines = failures_by_section(results, sections)
        if lines:
            print("not passing, by SPEC section:")
            print("\n".join(lines))
        print(f"{verdict_line(results)}\n")
        runs.append((_label(path, [p for p, _ in runs]), results))
    if len(runs) > 1:
        print("== side by side (each report counted on its own, never added together)")
        print(_side_by_side(runs))
    return 1 if any(r.bad for _, results in runs for r in results) else 0


def _read(path: Path) -> tuple[Mapping[str, Any], list[ScenarioResult]]:
    if not path.is_file():
        raise ConformanceError(f"no such report: {path}")
    try:
        report = load_report(path)
        results = [ScenarioResult.from_json(r) for r in report.results]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConformanceError(f"{path}: not a JSON-lines report: {exc}") from exc
    return report.header, results


def _spec(path: Path) -> Spec:
    try:
        spec = Spec.load(path)
    except OSError as exc:
        raise ConformanceError(f"cannot read {path}: {exc}") from exc
    return spec


def failures_by_section(
    results: Sequence[ScenarioResult], sections: Mapping[str, str]
) -> list[str]:
    """One line per SPEC section with scenarios that did not pass: ``  SECTION: N: ids``.

    A scenario counts under the section of each ID it cites, once per section.
    """
    grouped: dict[str, list[str]] = {}
    for result in results:
        if not result.bad:
            continue
        cited = {sections.get(spec_id, "(no SPEC section)") for spec_id in result.spec}
        for section in cited or {"(no SPEC ID)"}:
            grouped.setdefault(section, []).append(f"{result.id} ({result.outcome})")
    lines = []
    for section in sorted(grouped, key=_section_order):
        ids = grouped[section]
        more = f" and {len(ids) - _SHOWN_IDS} more" if len(ids) > _SHOWN_IDS else ""
        lines.append(f"  {section}: {len(ids)}: {', '.join(ids[:_SHOWN_IDS])}{more}")
    return lines


def _section_order(name: str) -> tuple[tuple[int, ...], str]:
    number = re.match(r"[\d.]+", name)
    digits = tuple(int(n) for n in number[0].split(".") if n) if number else (10_000,)
    return digits, name


def _label(path: Path, taken: Sequence[str]) -> str:
    label = path.name
    return label if label not in taken else f"{label}#{len(taken) + 1}"


def _side_by_side(runs: Sequence[tuple[str, list[ScenarioResult]]]) -> str:
    counts = [count_outcomes(results) for _, results in runs]
    shown = [(o, name) for o, name in COLUMNS if any(c[o] for c in counts)]
    rows = [["outcome", *(label for label, _ in runs)]]
    rows += [[name, *(str(c[o]) for c in counts)] for o, name in shown]
    rows.append(["total", *(str(len(results)) for _, results in runs)])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(
            cell.ljust(widths[0]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row)
        )
        for row in rows
    )
