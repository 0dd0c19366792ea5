"""Choosing scenarios: by id, by the SPEC IDs they cite, by area, level and feature.

One meaning per option, wherever it is given (``toolconf run``, ``list``,
``mutants``, the pytest plugin):

- an id pattern (``-k``) matches a scenario id it is part of, or as a glob
  when it holds ``*``, ``?`` or ``[``;
- a SPEC pattern (``--spec``) is an ID (``READ-DEDUP-1``), a prefix that
  ends at a dash (``READ-DEDUP`` or ``READ-DEDUP-``: every ``READ-DEDUP-*``
  ID, never ``READ-DEDUPX-1``) or a glob (``PERM-*-2``); case does not
  matter, and a scenario is chosen when any ID it cites matches;
- an area is the scenario's directory under the scenarios root (``read``);
- a level is a requirement level (MUST, SHOULD, MAY), never an assertion
  level (those are ``--levels``, which decide, not select);
- a feature chooses the scenarios that require it (``requires``).

Several values of one option are alternatives; different options must all
hold. Validating a scenario file against the schema costs about twice as
much as parsing it, so :meth:`Selection.raw_filter` judges a file by its
parsed YAML and lets the loader skip the files it refuses unvalidated.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from conformance.suite.scenario import RawFilter, Scenario

__all__ = ["Selection", "cites", "citing_filter", "id_matches", "spec_matches"]

_GLOB = frozenset("*?[")


def spec_matches(spec_id: str, wanted: str) -> bool:
    """Whether ``spec_id`` is ``wanted``: the ID, a dash-ended prefix of it, or a glob."""
    pattern = wanted.strip().upper()
    if _GLOB & set(pattern):
        return fnmatch.fnmatchcase(spec_id, pattern)
    if not pattern:
        return False
    return spec_id == pattern or spec_id.startswith(
        pattern if pattern.endswith("-") else pattern + "-"
    )


def id_matches(scenario_id: str, pattern: str) -> bool:
    """Whether a scenario id holds ``pattern``, or matches it as a glob."""
    if _GLOB & set(pattern):
        return fnmatch.fnmatchcase(scenario_id, pattern)
    return pattern in scenario_id


def cites(spec: Iterable[str], wanted: Collection[str]) -> bool:
    """Whether a scenario citing ``spec`` cites one of ``wanted`` (SPEC patterns)."""
    return any(spec_matches(spec_id, w) for spec_id in spec for w in wanted)


def citing_filter(wanted: Collection[str]) -> RawFilter:
    """A loader filter keeping the files that cite one of ``wanted``."""
    return Selection(spec=tuple(wanted)).fields_filter()


@dataclass(frozen=True, slots=True)
class Selection:
    """What a run or a listing is about; empty fields choose everything."""

    patterns: tuple[str, ...] = ()
    """Id patterns (``-k``)."""
    spec: tuple[str, ...] = ()
    """SPEC patterns (``--spec``)."""
    areas: tuple[str, ...] = ()
    levels: tuple[str, ...] = ()
    """Requirement levels: MUST, SHOULD, MAY."""
    features: tuple[str, ...] = ()
    """Features a chosen scenario requires (one of them)."""
    ids: frozenset[str] | None = None
    """Exactly these scenario ids (``--last-failed``, ``--from-report``), when given."""

    @property
    def empty(self) -> bool:
        """Whether it chooses every scenario."""
        return not (self.patterns or self.spec or self.areas or self.levels or self.features) and (
            self.ids is None
        )

    def wants_file(self, path: Path, area: str) -> bool:
        """Whether a file may hold a chosen scenario, judged by its name (the id) and area."""
        stem = path.stem
        if self.ids is not None and stem not in self.ids:
            return False
        if self.areas and area not in self.areas:
            return False
        return not self.patterns or any(id_matches(stem, p) for p in self.patterns)

    def raw_filter(self) -> RawFilter | None:
        """``fields_filter``, or None when there is no spec, level or feature choice."""
        return self.fields_filter() if self.spec or self.levels or self.features else None

    def fields_filter(self) -> RawFilter:
        """A loader filter for the spec, level and feature choices.

        A file whose fields have the wrong shape is kept: only validation can
        say what is wrong with it, and a broken file must not vanish.
        """

        def keep(data: object) -> bool:
            if not isinstance(data, Mapping):
                return True
            return self._wants_fields(data.get("spec"), data.get("level"), data.get("requires"))

        return keep

    def wants(self, scenario: Scenario) -> bool:
        """Whether a loaded scenario is chosen."""
        return self.wants_file(Path(f"{scenario.id}.yaml"), scenario.area) and self._wants_fields(
            list(scenario.spec), scenario.level, list(scenario.requires)
        )

    def _wants_fields(self, spec: object, level: object, requires: object) -> bool:
        if self.spec:
            if not _strings(spec):
                return True
            if not cites(spec, self.spec):
                return False
        if self.levels and isinstance(level, str) and level not in self.levels:
            return False
        if self.features:
            needed = requires if requires is not None else []
            if _strings(needed) and not set(self.features) & set(needed):
                return False
        return True


def _strings(value: object) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(s, str) for s in value)
