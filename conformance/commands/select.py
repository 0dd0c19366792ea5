"""Which scenarios a command is about: its paths, its selection options, and saved failures.

Ids equal file stems, so ``-k``, ``--area``, ``--last-failed`` and
``--from-report`` pick files before any is parsed; ``--spec``, ``--level``
and ``--feature`` pick them after parsing, before validation (which costs
the most). ``--last-failed`` and ``--from-report`` narrow the other choices,
as pytest's ``--lf`` does. ``--shard K/N`` comes last: it takes its share
of what the rest chose, files that did not load included.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

from conformance.analysis.fidelity import load_report
from conformance.commands.options import selection_of
from conformance.errors import ConformanceError, ScenarioLoadError
from conformance.run.last_failed import last_failed
from conformance.run.results import BAD_OUTCOMES, Outcome
from conformance.suite.provenance import PROVENANCES, provenance_filter
from conformance.suite.registry import DEFAULT_SCENARIOS, DEFAULT_SPEC
from conformance.suite.scenario import RawFilter, Scenario, discover, load_scenarios
from conformance.suite.selection import Selection
from conformance.suite.shard import Shard
from conformance.suite.spec import Spec

__all__ = [
    "Selected",
    "failed_in_report",
    "known_ids",
    "roots_of",
    "select",
    "spec_provenances",
    "spec_sections",
]


@dataclass(frozen=True, slots=True)
class Selected:
    """The scenarios chosen, the files that did not load, and why the choice may be empty."""

    scenarios: list[Scenario]
    errors: list[ScenarioLoadError]
    selection: Selection
    note: str = ""
    """Why nothing may be chosen although the options are right (no failures to rerun)."""
    provenances: tuple[str, ...] = ()
    """The provenances ``--provenance`` chose, strongest first; empty: every scenario."""
    shard: Shard | None = None
    """The ``--shard`` this run is; ``scenarios`` and ``errors`` are then its share."""
    order: tuple[str, ...] = ()
    """With ``shard``: the id of every file the whole run chose, in the run's order
    (those that did not load first), for ``toolconf merge``."""

    def nothing_selected(self) -> str:
        """The message for an empty choice: what was asked, and the note."""
        chosen = [f"--provenance {p}" for p in self.provenances]
        asked = " ".join(filter(None, [_describe(self.selection), *chosen]))
        return (
            "no scenarios selected"
            + (f" by {asked}" if asked else "")
            + (f": {self.note}" if self.note else "")
        )


def roots_of(paths: list[Path]) -> list[Path]:
    """The scenario paths a command reads: those given, or the shipped suite.

    Raises:
        ConformanceError: a given path does not exist.
    """
    for path in paths:
        if not path.exists():
            raise ConformanceError(f"no such file or directory: {path}")
    return paths or [DEFAULT_SCENARIOS]


def spec_provenances() -> dict[str, str]:
    """SPEC ID -> its provenance, from the shipped SPEC.md's evidence (none without it)."""
    return dict(Spec.load(DEFAULT_SPEC).provenances()) if DEFAULT_SPEC.is_file() else {}


def spec_sections() -> dict[str, str]:
    """SPEC ID -> its section label, from the shipped SPEC.md (none without it)."""
    return Spec.load(DEFAULT_SPEC).section_labels() if DEFAULT_SPEC.is_file() else {}


def select(args: argparse.Namespace) -> Selected:
    """Load the scenarios ``args`` choose (``add_selection``'s arguments).

    Raises:
        ConformanceError: a path or report that does not exist or does not read, or
            ``--provenance`` without provenances in SPEC.md's evidence.
    """
    paths = roots_of(list(args.paths))
    root = paths[0] if len(paths) == 1 and paths[0].is_dir() else DEFAULT_SCENARIOS
    ids, note = _rerun_ids(args)
    selection = selection_of(args, ids)
    chosen = tuple(p for p in PROVENANCES if p in getattr(args, "provenances", ()))
    filters = [f for f in (selection.raw_filter(), _provenance_filter(chosen)) if f]

    def every(data: object) -> bool:
        return all(f(data) for f in filters)

    files = [p for p in discover(paths) if selection.wants_file(p, _area(p, root))]
    scenarios, errors = load_scenarios(files, root=root, keep=every if filters else None)
    kept = [s for s in scenarios if selection.wants(s)]
    shard: Shard | None = getattr(args, "shard", None)
    if shard is None:
        return Selected(kept, errors, selection, note, chosen)
    order = [Path(e.path).stem for e in errors] + [s.id for s in kept]
    taken = set(shard.positions(order))
    return Selected(
        [s for i, s in enumerate(kept, start=len(errors)) if i in taken],
        [e for i, e in enumerate(errors) if i in taken],
        selection,
        note,
        chosen,
        shard,
        tuple(order),
    )


def _provenance_filter(chosen: tuple[str, ...]) -> RawFilter | None:
    """PROTO-PROVENANCE-1: the scenarios whose every SPEC ID is of a chosen provenance."""
    if not chosen:
        return None
    provenances = spec_provenances()
    if not provenances:
        raise ConformanceError("--provenance: SPEC.md's evidence gives no provenances")
    return provenance_filter(chosen, provenances)


def known_ids(paths: list[Path]) -> list[str]:
    """Every scenario id under the shipped suite and ``paths``, without loading a file."""
    roots = [p for p in [DEFAULT_SCENARIOS, *paths] if p.exists()]
    return [p.stem for p in discover(roots)]


def failed_in_report(path: Path) -> frozenset[str]:
    """The ids of the scenarios that did not pass in a saved JSON-lines report.

    Raises:
        ConformanceError: no such file, or not a JSON-lines report.
    """
    if not path.is_file():
        raise ConformanceError(f"no such report: {path}")
    try:
        report = load_report(path)
    except (ValueError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConformanceError(f"{path}: not a JSON-lines report: {exc}") from exc
    bad = {str(o) for o in BAD_OUTCOMES}
    return frozenset(
        str(r.get("id")) for r in report.results if str(r.get("outcome", Outcome.PASS)) in bad
    )


def _rerun_ids(args: argparse.Namespace) -> tuple[frozenset[str] | None, str]:
    ids: frozenset[str] | None = None
    note = ""
    if getattr(args, "from_report", None) is not None:
        ids = failed_in_report(args.from_report)
        if not ids:
            note = f"{args.from_report} has no failures to rerun"
    if getattr(args, "last_failed", False):
        recorded = last_failed(args.impl)
        if recorded is None:
            raise ConformanceError(
                f"--last-failed: no run of {args.impl} is recorded yet; run it without "
                "--last-failed first"
            )
        if not recorded:
            note = f"the last runs of {args.impl} left no failures"
        ids = frozenset(recorded) if ids is None else ids & frozenset(recorded)
    return ids, note


def _area(path: Path, root: Path) -> str:
    try:
        parts = path.resolve().relative_to(root.resolve()).parts
    except ValueError:
        parts = ()
    return parts[0] if len(parts) > 1 else path.parent.name


def _describe(selection: Selection) -> str:
    parts = [
        *(f"-k {p}" for p in selection.patterns),
        *(f"--spec {s}" for s in selection.spec),
        *(f"--area {a}" for a in selection.areas),
        *(f"--level {level}" for level in selection.levels),
        *(f"--feature {f}" for f in selection.features),
    ]
    if selection.ids is not None:
        parts.append(f"{len(selection.ids)} ids to rerun")
    return " ".join(parts)
