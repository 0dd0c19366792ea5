"""The behaviour table: for each implementation, whether it keeps each behaviour.

A behaviour (``conformance.suite.behaviours``) is a named set of scenarios.
For one implementation its cell is judged from those scenarios at the
behaviour level only (what happened to the files, what was refused or
allowed); whether the implementation named the error as the SPEC does
(identity) or worded it the same (rendering) never changes the cell:

- ``kept``: every scenario whose behaviour was observed held;
- ``partly``: some held, some did not;
- ``not kept``: none held;
- ``n/a``: none was observed (not applicable, not reported, or not run);
- ``differs``: partly or not kept, but every scenario that did not hold
  rests only on rules this project measured on Claude Code or decided
  itself (``measured`` or ``decided`` provenance in ``spec/evidence/``),
  none on a documented one: the implementation made its own choice where
  the contract is this project's reading, so it is not shown as breaking it.

A scenario "rests on" the behaviour's SPEC IDs that it cites (each listed
scenario cites at least one, as the lint checks). A row also states its
provenance (the behaviour's IDs grouped by where their rule comes from) and,
when the engine keeps it and a release of the original does not, that the
engine goes beyond the original there.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from conformance.analysis.fidelity import Report
from conformance.analysis.matrix import Column, Entry, LevelTally, entry_of, tally
from conformance.suite.behaviours import Behaviour, provenance_of
from conformance.suite.evidence import Provenance
from conformance.suite.spec import Spec

__all__ = [
    "DIFFERS",
    "ENGINE",
    "KEPT",
    "NOT_APPLICABLE",
    "NOT_KEPT",
    "ORIGINAL",
    "PARTLY",
    "STATES",
    "BehaviourCell",
    "BehaviourRow",
    "BehaviourTable",
    "build_behaviour_table",
]

KEPT: Final = "kept"
DIFFERS: Final = "differs"
PARTLY: Final = "partly"
NOT_KEPT: Final = "not kept"
NOT_APPLICABLE: Final = "n/a"
STATES: Final = (KEPT, DIFFERS, PARTLY, NOT_KEPT, NOT_APPLICABLE)
"""In the order the pages count them."""

ENGINE: Final = "reference"
"""The implementation name this project's own engine reports in hello."""
ORIGINAL: Final = "claude-code"
"""The implementation name the original (Claude Code through its CLI) reports."""

NOT_RUN: Final = "not run"
"""The verdict of a listed scenario the report has no result for (an older suite)."""


@dataclass(frozen=True, slots=True)
class Judged:
    """One scenario of a behaviour, for one implementation."""

    entry: Entry
    verdict: str
    """The behaviour-level verdict: ``pass``, ``fail``, ``unobserved`` or ``not run``."""
    documented: bool
    """Whether it rests on a documented rule of the behaviour (see the module docstring)."""

    @property
    def rank(self) -> int:
        """Where it sorts in a drill-down: failures first, then unobserved, passes, not run."""
        return {"fail": 0, "unobserved": 1, "pass": 2}.get(self.verdict, 3)


@dataclass(slots=True)
class BehaviourCell:
    """One implementation's scenarios of one behaviour, and the state they decide."""

    judged: list[Judged] = field(default_factory=list)

    @property
    def held(self) -> int:
        """Scenarios whose behaviour was observed and held."""
        return sum(j.verdict == "pass" for j in self.judged)

    @property
    def observed(self) -> int:
        """Scenarios whose behaviour was observed."""
        return sum(j.verdict in ("pass", "fail") for j in self.judged)

    @property
    def share(self) -> float | None:
        """The behaviour-level pass share, or None when nothing was observed."""
        return self.held / self.observed if self.observed else None

    @property
    def state(self) -> str:
        """One of ``STATES``."""
        if not self.observed:
            return NOT_APPLICABLE
        if self.held == self.observed:
            return KEPT
        failing = [j for j in self.judged if j.verdict == "fail"]
        if not any(j.documented for j in failing):
            return DIFFERS
        return NOT_KEPT if not self.held else PARTLY

    @property
    def levels(self) -> dict[str, LevelTally]:
        """Each assertion level's tally over the scenarios that ran (figures, not the state)."""
        return tally(j.entry for j in self.judged if j.verdict != NOT_RUN)

    def ordered(self) -> list[Judged]:
        """Its scenarios as a drill-down lists them: failures first, then by id."""
        return sorted(self.judged, key=lambda j: (j.rank, j.entry.id))


@dataclass(slots=True)
class BehaviourRow:
    """One behaviour: its provenance, a cell per implementation, where the engine goes beyond."""

    behaviour: Behaviour
    provenance: Mapping[Provenance, tuple[str, ...]]
    """Its SPEC IDs grouped by provenance."""
    cells: list[BehaviourCell]
    beyond: tuple[int, ...] = ()
    """The columns of the original whose cell is not kept while the engine's is."""

    @property
    def documented(self) -> bool:
        """Whether any of its IDs is documented."""
        return "documented" in self.provenance


@dataclass(slots=True)
class BehaviourTable:
    """Behaviours over implementations."""

    columns: list[Column]
    rows: list[BehaviourRow]

    def counts(self, column: int) -> Counter[str]:
        """State -> how many behaviours are in it, for one column."""
        return Counter(row.cells[column].state for row in self.rows)

    def groups(self) -> list[tuple[str, list[BehaviourRow]]]:
        """The rows under their group headings, in file order."""
        out: dict[str, list[BehaviourRow]] = {}
        for row in self.rows:
            out.setdefault(row.behaviour.group, []).append(row)
        return list(out.items())


def _judge(
    behaviour: Behaviour, results: Mapping[str, Entry], documented: frozenset[str]
) -> BehaviourCell:
    cell = BehaviourCell()
    for scenario in behaviour.scenarios:
        entry = results.get(scenario)
        if entry is None:
            entry = Entry(id=scenario, status=NOT_RUN, outcome=NOT_RUN, spec=())
            cell.judged.append(Judged(entry, NOT_RUN, documented=False))
            continue
        rests_on = set(entry.spec) & set(behaviour.spec)
        cell.judged.append(Judged(entry, entry.behaviour, documented=bool(rests_on & documented)))
    return cell


def build_behaviour_table(
    reports: Sequence[Report], behaviours: Sequence[Behaviour], spec: Spec
) -> BehaviourTable:
    """The table of ``behaviours`` over ``reports`` (one column each, merged as the matrix
    merges them); provenance from ``spec``'s evidence."""
    provenances = spec.provenances()
    documented = frozenset(i for i, p in provenances.items() if p == "documented")
    columns = [Column.of(report) for report in reports]
    results = [{str(r.get("id")): entry_of(r) for r in report.results} for report in reports]
    engine = next((i for i, c in enumerate(columns) if c.name == ENGINE), None)
    originals = [i for i, c in enumerate(columns) if c.name == ORIGINAL]
    rows: list[BehaviourRow] = []
    for behaviour in behaviours:
        cells = [_judge(behaviour, found, documented) for found in results]
        beyond: tuple[int, ...] = ()
        if engine is not None and cells[engine].state == KEPT:
            beyond = tuple(i for i in originals if cells[i].state in (PARTLY, NOT_KEPT, DIFFERS))
        rows.append(
            BehaviourRow(
                behaviour=behaviour,
                provenance=provenance_of(behaviour.spec, provenances),
                cells=cells,
                beyond=beyond,
            )
        )
    return BehaviourTable(columns=columns, rows=rows)
