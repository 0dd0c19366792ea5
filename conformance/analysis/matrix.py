"""``toolconf matrix``: several implementations side by side, per SPEC section.

From JSON-lines reports (``toolconf run --report jsonl``), one column per
implementation and one row per top-level section of SPEC.md. Each scenario
counts in every section whose requirements it cites, as one of:

- ``pass``: it passed and at least one of its assertions was observed;
- ``fail``: it failed, or the implementation crashed, hung or erred on it
  (an expected failure, ``xfail``, is still a failure here: the matrix shows
  behaviour, not what is tolerated);
- ``n/a``: not applicable (a feature the implementation does not list, or a
  setup it cannot be given, PROTO-UNSUPPORTED-1);
- ``not observed``: it passed, but every assertion read a field the
  implementation does not report (PROTO-UNREPORTED-1).

Besides that status, each scenario carries its verdict per assertion level
(``conformance.analysis.fidelity.level_verdicts``). A cell's shade is its
behaviour-level pass share: of its scenarios whose behaviour was observed,
how many held; identity and rendering are figures beside it, never the shade.

Reports of one implementation (the same ``impl`` and version) are merged,
the last result of a scenario winning, so a run made in parts is one column.
The pages are ``matrix_markdown`` and ``matrix_html``; the behaviour table
beside this one is ``behaviour_table``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from conformance.analysis.fidelity import LEVELS, Report, level_verdicts, load_report, merge_reports
from conformance.suite.spec import Spec

__all__ = [
    "STATUSES",
    "Cell",
    "Column",
    "Entry",
    "LevelTally",
    "Matrix",
    "build_matrix",
    "entry_of",
    "load_reports",
    "scenario_status",
]

STATUSES: Final = ("pass", "fail", "n/a", "not observed")
_FAILED: Final = frozenset({"fail", "error", "crash", "timeout", "xpass", "xfail"})
_MESSAGE: Final = 400
"""Characters of a failure's message a page carries."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One scenario's result for one implementation."""

    id: str
    status: str
    """One of ``STATUSES``."""
    outcome: str
    """The raw outcome (``fail`` for an expected failure)."""
    spec: tuple[str, ...]
    message: str = ""
    title: str = ""
    area: str = ""
    levels: Mapping[str, str] = field(default_factory=dict)
    """Assertion level -> ``pass``, ``fail`` or ``unobserved``."""

    @property
    def behaviour(self) -> str:
        """The behaviour-level verdict: ``pass``, ``fail`` or ``unobserved``."""
        return self.levels.get("behaviour", "unobserved")


def entry_of(result: Mapping[str, Any]) -> Entry:
    """A report's result record as an ``Entry``; a message only where it did not pass."""
    status = scenario_status(result)
    message = str(result.get("message") or result.get("reason") or "")
    return Entry(
        id=str(result.get("id")),
        status=status,
        outcome=str(result.get("raw_outcome") or result.get("outcome")),
        spec=tuple(str(s) for s in result.get("spec") or ()),
        message=message[:_MESSAGE] if status != "pass" else "",
        title=str(result.get("title") or ""),
        area=str(result.get("area") or ""),
        levels=level_verdicts(result),
    )


@dataclass(frozen=True, slots=True)
class LevelTally:
    """One assertion level over some scenarios: how many held among those it observed."""

    held: int = 0
    observed: int = 0

    @property
    def share(self) -> float | None:
        """``held / observed``, or None when nothing was observed."""
        return self.held / self.observed if self.observed else None

    def __str__(self) -> str:
        return f"{self.held}/{self.observed}" if self.observed else "-"


def tally(entries: Iterable[Entry]) -> dict[str, LevelTally]:
    """Level -> its tally over ``entries``."""
    counts = {level: [0, 0] for level in LEVELS}
    for entry in entries:
        for level in LEVELS:
            verdict = entry.levels.get(level)
            counts[level][0] += verdict == "pass"
            counts[level][1] += verdict in ("pass", "fail")
    return {level: LevelTally(*c) for level, c in counts.items()}


@dataclass(slots=True)
class Cell:
    """One implementation's scenarios citing one section."""

    entries: list[Entry] = field(default_factory=list)

    def count(self, status: str) -> int:
        """How many of its scenarios have ``status``."""
        return sum(e.status == status for e in self.entries)

    @property
    def verdict(self) -> str:
        """``fail`` if any failed, else ``pass`` if any passed, else ``not observed`` or ``n/a``."""
        for status in ("fail", "pass", "not observed"):
            if self.count(status):
                return status
        return "n/a" if self.entries else "none"

    @property
    def levels(self) -> dict[str, LevelTally]:
        """Each assertion level's tally over the cell's scenarios."""
        return tally(self.entries)


@dataclass(frozen=True, slots=True)
class Column:
    """One implementation: what it said of itself and how it was reached."""

    name: str
    version: str
    impl: str
    started: str
    profile: str
    implementation: Mapping[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """``claude-code 2.1.88 (claude-code:2.1.88)``."""
        return f"{self.name} {self.version}".strip() + f" ({self.impl})"

    @classmethod
    def of(cls, report: Report) -> Column:
        """The column of a (merged) report, from its header."""
        header = report.header
        implementation = dict(header.get("implementation") or {})
        return cls(
            name=str(implementation.get("name", "?")),
            version=str(implementation.get("version", "")),
            impl=str(header.get("impl", "?")),
            started=str(header.get("started", "")),
            profile=str(header.get("profile") or "documented"),
            implementation=implementation,
        )


@dataclass(slots=True)
class Row:
    """One implementation's run: its column, duration and a cell per section."""

    column: Column
    duration: float
    cells: dict[str, Cell] = field(default_factory=dict)
    entries: dict[str, Entry] = field(default_factory=dict)
    """Every scenario of the run, by id."""

    @property
    def label(self) -> str:
        """The column's label."""
        return self.column.label

    @property
    def impl(self) -> str:
        """The connector the run went through."""
        return self.column.impl

    def total(self, status: str) -> int:
        """Scenarios of the whole run with ``status`` (each counted once)."""
        return sum(e.status == status for e in self.entries.values())


@dataclass(slots=True)
class Matrix:
    """Implementations over the sections of SPEC.md."""

    sections: list[str]
    rows: list[Row]


def scenario_status(result: Mapping[str, Any]) -> str:
    """One of ``STATUSES`` for a report's result record."""
    outcome = str(result.get("raw_outcome") or result.get("outcome"))
    if outcome == "not_applicable":
        return "n/a"
    if outcome in _FAILED:
        return "fail"
    levels = result.get("levels")
    if isinstance(levels, Mapping):
        verdicts = {
            str((v or {}).get("verdict")) for v in levels.values() if isinstance(v, Mapping)
        }
        if "pass" not in verdicts:
            return "not observed"
    return "pass"


def load_reports(paths: Sequence[Path]) -> list[Report]:
    """The reports, those of one implementation (impl and version) merged, in first-seen order."""
    groups: dict[tuple[str, str], list[Report]] = {}
    for path in paths:
        report = load_report(path)
        implementation = report.header.get("implementation") or {}
        key = (str(report.header.get("impl")), str(implementation.get("version")))
        groups.setdefault(key, []).append(report)
    return [merge_reports(group) for group in groups.values()]


def build_matrix(reports: Sequence[Report], spec: Spec) -> Matrix:
    """The matrix of ``reports`` (one column each) over SPEC.md's top-level sections that
    hold requirements, headed as written (``12. Read``)."""
    sections = [s.heading for s in spec.top_sections() if spec.in_section(s.number)]
    by_id = {r.id: r.top.heading for r in spec if r.top is not None}
    rows: list[Row] = []
    for report in reports:
        row = Row(
            column=Column.of(report),
            duration=sum(float(r.get("duration") or 0.0) for r in report.results),
            cells={s: Cell() for s in sections},
        )
        for result in report.results:
            entry = entry_of(result)
            row.entries[entry.id] = entry
            for section in dict.fromkeys(by_id[s] for s in entry.spec if s in by_id):
                row.cells[section].entries.append(entry)
        rows.append(row)
    return Matrix(sections=sections, rows=rows)
